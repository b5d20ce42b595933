/**
 * The fault matrix (issue 34), a row per cell: store (SQLite, PostgreSQL on DATABASE_URL) × fault
 * (./_faults.ts: the service abandoned in process, the service SIGKILLed, a silo gone in process, a
 * silo's own process SIGKILLed) × stage of a round (advertise, share, mask, consistency, unmask,
 * reporting, scoring). After each:
 *
 * 1. every write the service acknowledged (stage messages, reports) is in the store;
 * 2. the round completes (scored) or aborts with a coded reason;
 * 3. the silos' journals (the replay defence, src/client/journal.ts) agree with the store, for
 *    every silo and every round played (./_journals.ts `expectJournalsAgree`): a silo journaled
 *    a masked input, an Unmasking response, an accepted model exactly when the store holds it (or
 *    its masked input is in the stored sum, or the model it accepted is the stored model), except
 *    the one write of a silo killed between its journal entry and its message, which is journaled
 *    and not stored; no kind twice in a round; every entry on the store's base model; one
 *    Unmasking response per base model;
 * 4. where the fault is the service's, the published scores and the leaderboard equal an
 *    uninterrupted run's; where a silo went away, the protocol's rule holds (a silo gone before
 *    its masked input is a dropout, not in the sum; after it, its input is in the sum and the next
 *    round equals the uninterrupted run's), and the silo, restarted, is scored in the next round.
 *
 * ./fault-matrix.test.ts runs the fast cells (CI), ./fault-matrix.slow.test.ts the rest.
 */
import { rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { afterAll, describe, expect, test } from 'vitest';
import { leaderboardOfPublished } from '../../../src/records/leaderboard.js';
import type { StoreLocation } from '../../../src/server/store/database.js';
import { Clock, type Harness, harness, tempSqlite } from '../../server/_harness.js';
import {
  type Ack,
  consortiumOn,
  crashChildAt,
  driveRound,
  FAULT_STAGES,
  type FaultKind,
  type FaultStage,
  openRound,
  postgresDatabases,
  published,
  resumeRound,
  roundView,
  SILOS,
  SiloProcess,
  storedWrites,
  VICTIM,
} from './_faults.js';
import { expectJournalsAgree, JOURNALED, SiloJournals } from './_journals.js';

export type StoreKind = 'sqlite' | 'postgres';
export interface Cell {
  store: StoreKind;
  fault: FaultKind;
  stage: FaultStage;
}

/** A fault of silo VICTIM's (in process, or its own process SIGKILLed). */
const isSiloFault = (f: FaultKind) => f === 'silo' || f === 'silo-sigkill';

/** Every cell of the matrix (a silo cannot be gone "at scoring": the service scores alone). */
export const CELLS: Cell[] = (['sqlite', 'postgres'] as const).flatMap((store) =>
  (['service', 'service-sigkill', 'silo', 'silo-sigkill'] as const).flatMap((fault) =>
    FAULT_STAGES.filter((stage) => !(isSiloFault(fault) && stage === 'scoring')).map((stage) => ({
      store,
      fault,
      stage,
    })),
  ),
);

/**
 * The cells ./fault-matrix.test.ts runs in CI (about 24 s of CPU): the service's process really
 * SIGKILLed at masking and at unmasking on SQLite and on PostgreSQL (the stages where a crash
 * leaves masked inputs or shares half-collected); the service lost in process at the other stages
 * the kills leave out (advertise, reporting, scoring) on SQLite; a silo killed between its journal
 * entry and its message, before its masked input is sent (a dropout) and before its Unmasking
 * response (its input in the sum), and the same silo's own process SIGKILLed before its Unmasking
 * response. test/server/durability.test.ts and postgres.test.ts add a
 * SIGKILL mid-ShareKeys on each store.
 */
export const ciCell = (c: Cell) =>
  (c.fault === 'service-sigkill' && (c.stage === 'mask' || c.stage === 'unmask')) ||
  (c.fault === 'service' &&
    c.store === 'sqlite' &&
    ['advertise', 'reporting', 'scoring'].includes(c.stage)) ||
  (c.fault === 'silo' && c.store === 'sqlite' && (c.stage === 'mask' || c.stage === 'unmask')) ||
  (c.fault === 'silo-sigkill' && c.store === 'sqlite' && c.stage === 'unmask');

const names = SILOS.map((i) => `silo-${i}`);
const leaderboard = (p: { rounds: Parameters<typeof leaderboardOfPublished>[1] }) =>
  leaderboardOfPublished(names, p.rounds);
/** A published round without what depends on the wall clock. */
const scoresOf = (p: { rounds: { round: number; silos: number[] }[] }, r: number) =>
  p.rounds.find((x) => x.round === r);

/** Registers the cells `pick` selects, in one describe per store. */
export function faultMatrix(pick: (c: Cell) => boolean): void {
  const url = process.env.DATABASE_URL;
  const pgdb = url ? postgresDatabases(url) : undefined;
  const open: Harness[] = [];
  const dirs: string[] = [];
  const journalSets: SiloJournals[] = [];
  afterAll(async () => {
    for (const h of open.splice(0)) await h.close().catch(() => {});
    await pgdb?.dropAll();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    for (const j of journalSets) j.remove();
  });
  const journalsOfCell = () => {
    const j = new SiloJournals();
    journalSets.push(j);
    return j;
  };
  const fresh = async (store: StoreKind): Promise<StoreLocation> => {
    if (store === 'postgres') return pgdb!.fresh();
    const t = tempSqlite();
    dirs.push(t.dir);
    return t.location;
  };
  const track = (h: Harness) => {
    open.push(h);
    return h;
  };

  /**
   * The uninterrupted run, rounds 1 and 2 with every silo, on SQLite: the cells of both stores are
   * compared with it (the published scores do not depend on the store).
   */
  let ref: Promise<{ one: unknown; two: unknown }> | undefined;
  const reference = () => {
    if (!ref) {
      ref = (async () => {
        const clock = new Clock();
        const h = track(await consortiumOn(await fresh('sqlite'), clock));
        const journals = journalsOfCell();
        await openRound(h, 1);
        await driveRound(() => h, 1, { acked: [], journals });
        const one = await published(h);
        await openRound(h, 2);
        await driveRound(() => h, 2, { acked: [], journals });
        return { one, two: await published(h) };
      })();
    }
    return ref;
  };

  /**
   * Every acknowledged write is in the store: as its message, or — a masked input, which the
   * service deletes once the sum is stored (src/server/service/messages.ts) — folded into the
   * round's stored sum (its silo among the survivors).
   */
  const expectAcknowledgedStored = async (h: Harness, acked: Ack[], r: number) => {
    const stored = await storedWrites(h, r);
    const row = await h.store.db
      .selectFrom('rounds')
      .select(['survivors', 'weighted_sum'])
      .where('consortium', '=', 'c1')
      .where('round', '=', r)
      .executeTakeFirstOrThrow();
    const summed = row.weighted_sum ? (JSON.parse(row.survivors ?? '[]') as number[]) : [];
    for (const a of acked)
      expect(
        stored.some((w) => w.stage === a.stage && w.silo === a.silo) ||
          (a.stage === 'mask' && summed.includes(a.silo)),
        `${a.stage} of silo ${a.silo}`,
      ).toBe(true);
  };

  for (const store of ['sqlite', 'postgres'] as const) {
    const cells = CELLS.filter((c) => c.store === store && pick(c));
    if (cells.length === 0) continue;
    describe.skipIf(store === 'postgres' && !url)(`fault matrix on ${store}`, () => {
      test.each(cells.map((c) => [`${c.fault} at ${c.stage}`, c] as const))('%s', async (_, cell) => {
        const ref = await reference();
        const location = await fresh(store);
        const clock = new Clock();
        const acked: Ack[] = [];
        const journals = journalsOfCell();
        let h: Harness;
        if (cell.fault === 'service-sigkill') {
          const printed = await crashChildAt(location, clock, cell.stage, journals);
          expect(printed.some((a) => a.stage === (cell.stage === 'scoring' ? 'reporting' : cell.stage))).toBe(
            true,
          );
          acked.push(...printed);
          h = track(await harness({ location, clock }));
          await expectAcknowledgedStored(h, acked, 1);
          await resumeRound(h, acked, journals);
        } else {
          h = track(await consortiumOn(location, clock));
          await openRound(h, 1);
          let remote: SiloProcess | undefined;
          if (cell.fault === 'silo-sigkill') {
            // The victim in its own process, over HTTP: the service listens.
            await h.app.listen({ port: 0, host: '127.0.0.1' });
            const { port } = h.app.server.address() as AddressInfo;
            remote = new SiloProcess(`http://127.0.0.1:${port}`, journals, 1, VICTIM);
          }
          await driveRound(() => h, 1, {
            acked,
            journals,
            ...(isSiloFault(cell.fault)
              ? { absentFrom: { silo: VICTIM, stage: cell.stage }, ...(remote ? { remote } : {}) }
              : {
                  // The service goes away after the stage's first acknowledgement; another app
                  // over the same store takes over (the first is never closed).
                  afterFirstAck: async (stage) => {
                    if (stage === cell.stage) h = track(await harness({ location, clock }));
                  },
                }),
          });
        }
        await expectAcknowledgedStored(h, acked, 1);
        const round = await roundView(h, 1);
        if (round.stage !== 'scored') {
          // Not completed: then aborted, with a coded reason.
          expect(round.stage).toBe('aborted');
          expect(round.error?.code).toMatch(/^FEDSCORE_ERR_[A-Z_]+$/);
          throw new Error(`round 1 aborted: ${round.error?.code}`); // no cell of this matrix should
        }
        // The victim of a silo fault at a journaled stage died between its entry and its message.
        const kind = isSiloFault(cell.fault) ? JOURNALED[cell.stage as keyof typeof JOURNALED] : undefined;
        const died = kind ? { silo: VICTIM, round: 1, kind } : undefined;
        await expectJournalsAgree(h, journals, [1], SILOS, died);
        const now = await published(h);
        if (!isSiloFault(cell.fault)) {
          // The same scores and leaderboard as the uninterrupted run.
          expect(scoresOf(now, 1)).toEqual(scoresOf(ref.one as never, 1));
          expect(leaderboard(now)).toEqual(leaderboard(ref.one as never));
          return;
        }
        // A silo gone before its masked input is a dropout, outside the sum; after it, in the sum.
        const inSum = FAULT_STAGES.indexOf(cell.stage) > FAULT_STAGES.indexOf('mask');
        expect(round.survivors).toEqual(inSum ? SILOS : SILOS.filter((i) => i !== VICTIM));
        const one = scoresOf(now, 1)!;
        expect(one.silos).not.toContain(VICTIM);
        // Restarted, it takes part in round 2 and is scored there.
        await openRound(h, 2);
        const acked2: Ack[] = [];
        await driveRound(() => h, 2, { acked: acked2, journals });
        await expectAcknowledgedStored(h, acked2, 2);
        await expectJournalsAgree(h, journals, [1, 2], SILOS, died);
        expect(await roundView(h, 2)).toMatchObject({ stage: 'scored', survivors: SILOS });
        const after = await published(h);
        expect(scoresOf(after, 2)!.silos).toEqual(SILOS);
        // Its input was in round 1's sum: the same model, so round 2 is the uninterrupted run's.
        if (inSum) expect(scoresOf(after, 2)).toEqual(scoresOf(ref.two as never, 2));
        else expect(scoresOf(after, 2)).not.toEqual(scoresOf(ref.two as never, 2));
      });
    });
  }
}
