/**
 * The store of a project (`<dir>/fedscore.db`) before `fedscore up` starts its service (issue 34:
 * every `up` used to move the store aside, failed starts included, and an interrupted run could not
 * be resumed):
 *
 * - it stays where it is: the service resumes the schedule from it (the last scored round);
 * - `--fresh` keeps it under a dated name (with its WAL files) and starts over;
 * - a round left running by an interrupted `up` in which no silo has sent its masked input
 *   (advertise or share: nothing that depends on a silo's update has left it) is withdrawn, so
 *   that it runs again under its own number — the silos' new processes cannot continue it (their
 *   round keys died with the old ones), and a resumed run then ends as an uninterrupted one would.
 *   The store as it was is copied first (`<db>.<date>.before-resume`): no acknowledged write is
 *   lost. A round past masking is not withdrawn (a silo never masks twice on one base): `up`
 *   closes its stages, and it ends with what was stored or aborts with its coded reason; the silos
 *   that had sent their Unmasking response in a round that aborted sit out the next rounds on its
 *   base (./up-replay.ts).
 *
 * `up` holds the folder's lock (./lock.ts) while it does this, so no service has the file open.
 */
import { copyFileSync, existsSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { isTerminal } from '../../consortium/schemas.js';
import { openStore } from '../../server/store/database.js';

/** What the store holds for the project's consortium when `up` starts. */
export interface StoreState {
  /** The consortium is registered in it: the schedule resumes, no `consortium create`. */
  registered: boolean;
  /** Rounds over (scored, closed or aborted), in order. */
  over: number;
  /** Of those, closed or aborted. */
  aborted: number;
  /** The consortium's schedule (`rounds`), when it has one. */
  total?: number;
  /** The round withdrawn to run again, if any. */
  withdrawn?: number;
  /** A round left running past masking (up closes its stages). */
  running?: { round: number; stage: string };
  /** The copy kept before withdrawing, or the dated name `--fresh` kept the old store under. */
  keptAs?: string;
}

const dated = () => new Date().toISOString().replace(/[:.]/g, '-');
const SIDE_FILES = ['', '-wal', '-shm'];

/** Moves the store and its WAL files aside under a dated name (`--fresh`); returns that name. */
export function keepStoreAside(dir: string, db: string): string | undefined {
  if (!existsSync(join(dir, db))) return undefined;
  const aside = `${db}.${dated()}`;
  for (const s of SIDE_FILES)
    if (existsSync(join(dir, db + s))) renameSync(join(dir, db + s), join(dir, aside + s));
  return aside;
}

/**
 * Reads the project's store (SQLite `<dir>/<db>`) for consortium `id`, withdrawing an interrupted
 * round that no silo masked in (see the module comment).
 */
export async function prepareStore(dir: string, db: string, id: string): Promise<StoreState> {
  const file = join(dir, db);
  if (!existsSync(file)) return { registered: false, over: 0, aborted: 0 };
  let store = await openStore({ sqlite: file });
  try {
    const c = await store.db.selectFrom('consortia').select('config').where('id', '=', id).executeTakeFirst();
    if (!c) return { registered: false, over: 0, aborted: 0 };
    const total = (JSON.parse(c.config) as { rounds?: number }).rounds;
    const rounds = await store.db
      .selectFrom('rounds')
      .select(['round', 'stage'])
      .where('consortium', '=', id)
      .orderBy('round')
      .execute();
    const last = rounds.at(-1);
    const ended = rounds.filter((r) => isTerminal(r.stage));
    const base = {
      registered: true,
      over: ended.length,
      aborted: ended.filter((r) => r.stage !== 'scored').length,
      ...(total !== undefined ? { total } : {}),
    };
    if (!last || isTerminal(last.stage)) return base;
    const masked = await store.db
      .selectFrom('messages')
      .select('silo')
      .where('consortium', '=', id)
      .where('round', '=', last.round)
      .where('stage', 'in', ['mask', 'consistency', 'unmask'])
      .executeTakeFirst();
    if (masked || !['advertise', 'share'].includes(last.stage))
      return { ...base, running: { round: last.round, stage: last.stage } };
    // Closing checkpoints the WAL into the file: the copy is the whole store.
    await store.close();
    const keptAs = `${db}.${dated()}.before-resume`;
    copyFileSync(file, join(dir, keptAs));
    store = await openStore({ sqlite: file });
    await store.db.transaction().execute(async (tx) => {
      for (const table of ['messages', 'outbox'] as const)
        await tx.deleteFrom(table).where('consortium', '=', id).where('round', '=', last.round).execute();
      await tx.deleteFrom('rounds').where('consortium', '=', id).where('round', '=', last.round).execute();
    });
    return { ...base, withdrawn: last.round, keptAs };
  } finally {
    await store.close();
  }
}
