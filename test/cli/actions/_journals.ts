/**
 * The silos' masking journals in the fault matrix (issue 34: "the silos' journals — the replay
 * defence — agree with the store"). Each test silo of ./_faults.ts keeps a real journal
 * (src/client/journal.ts) through the real guard (src/client/replay-guard.ts), called where
 * src/client/silo.ts calls it: `begin` before the round (on the digest of the base model the service
 * serves), `beforeSend` before every protocol message (a masked input and an Unmasking response are
 * on disk before they are sent), `accepted` (the digest of M_r = base + Σ w_iΔ_i / Σ w_i, from the
 * served aggregate with protocol/weighted.ts `stepModel`) before the report. The journal files
 * live in one folder per cell, so a child process that is SIGKILLed leaves them to its successor.
 *
 * A silo whose round state is rebuilt after the service crashed stands for a silo that *survived*
 * the crash (only the service's process died; ./_faults.ts runs both in one child for brevity): it
 * does not `begin` the round again, and a message it journaled whose acknowledgement the crash cut
 * off is sent again without a second entry — src/client/http.ts retries the same POST inside one
 * `beforeSend`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import { stepModel } from '../../../protocol/weighted.js';
import { type JournalEntry, journalPathOf, SiloJournal } from '../../../src/client/journal.js';
import { ReplayGuard, RoundGuard } from '../../../src/client/replay-guard.js';
import { paramsDigest } from '../../../src/ml/layers-model.js';
import { adminInject, type Harness, siloInject } from '../../server/_harness.js';
import { storedWrites } from './_faults.js';

/** What a silo needs of the harness: the service's app (or an HTTP stand-in), the clock, the keys. */
type SiloSide = Pick<Harness, 'app' | 'clock' | 'keys'>;

/** The consortium as the journals record it (an unpinned silo: src/client/silo.ts). */
export const JOURNAL_CONSORTIUM = 'unpinned:c1';
/** The kinds a message of the round leaves in the journal, by the fault stage that sends it. */
export const JOURNALED = { mask: 'masked', unmask: 'unmasked', reporting: 'accepted' } as const;
type Kind = (typeof JOURNALED)[keyof typeof JOURNALED];

/** The journals of silos 0–3 of one cell, in `dir` (a fresh temp folder unless given). */
export class SiloJournals {
  readonly dir: string;
  private readonly open = new Map<number, SiloJournal>();
  constructor(dir?: string) {
    this.dir = dir ?? mkdtempSync(join(tmpdir(), 'fedscore-journals-'));
  }

  /** Silo i's journal file: beside a key `silo-i.key`, as `fedscore client` keeps it. */
  path(i: number): string {
    return journalPathOf(join(this.dir, `silo-${i}.key`));
  }

  /** Silo i's guard (its journal opened once per process, as the silo's process does). */
  guard(i: number): ReplayGuard {
    let j = this.open.get(i);
    if (!j) {
      j = SiloJournal.open(this.path(i));
      this.open.set(i, j);
    }
    return new ReplayGuard(j, JOURNAL_CONSORTIUM);
  }

  /** Silo i's entries as its file holds them now (read afresh). */
  entries(i: number): readonly JournalEntry[] {
    const j = SiloJournal.open(this.path(i));
    try {
      return [...j.all()];
    } finally {
      j.close();
    }
  }

  /** Closes the journals and deletes the folder. */
  remove(): void {
    for (const j of this.open.values()) j.close();
    this.open.clear();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Model version `v` as the service serves it (Float32 LE). */
async function modelOf(h: Pick<Harness, 'app'>, v: number): Promise<Float32Array> {
  const res = await adminInject(h, 'GET', `/v1/consortia/c1/models/${v}`);
  if (res.statusCode !== 200) throw new Error(`model ${v}: ${res.statusCode} ${res.body}`);
  const b = res.rawPayload;
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}

/** Round r's base model as the service serves it (read as the admin: the same for every silo). */
async function baseOf(h: Pick<Harness, 'app'>, r: number): Promise<Float32Array> {
  const view = await adminInject(h, 'GET', `/v1/consortia/c1/rounds/${r}`);
  if (view.statusCode !== 200) throw new Error(`round ${r}: ${view.statusCode} ${view.body}`);
  return modelOf(h, (view.json() as { baseModel: number }).baseModel);
}

/** Silo i starts round r: the guard's `begin` on the served base model's digest (may refuse). */
export async function beginRound(
  h: SiloSide,
  journals: SiloJournals,
  r: number,
  i: number,
): Promise<RoundGuard> {
  return journals.guard(i).begin(r, paramsDigest(await baseOf(h, r)));
}

/**
 * Silo i's guard of round r rebuilt after the service crashed (the silo survived: no second
 * `begin`), the attempt as its journal recorded it.
 */
export async function rebuiltRound(
  h: SiloSide,
  journals: SiloJournals,
  r: number,
  i: number,
): Promise<RoundGuard> {
  const base = paramsDigest(await baseOf(h, r));
  const mine = journals.entries(i).filter((e) => e.consortium === JOURNAL_CONSORTIUM && e.round === r);
  const earlier = new Set(
    journals
      .entries(i)
      .filter((e) => e.base === base && !(e.consortium === JOURNAL_CONSORTIUM && e.round === r))
      .map((e) => `${e.consortium}/${e.round}`),
  );
  const rg = new RoundGuard(journals.guard(i), r, base, mine[0]?.attempt ?? earlier.size + 1);
  rg.unmasked = mine.some((e) => e.kind === 'unmasked');
  return rg;
}

/** Whether silo i's journal holds an entry of `kind` for round r (a write-ahead entry to re-send). */
export function journaled(journals: SiloJournals, i: number, r: number, kind: Kind): boolean {
  return journals
    .entries(i)
    .some((e) => e.consortium === JOURNAL_CONSORTIUM && e.round === r && e.kind === kind);
}

/**
 * Silo i accepts round r's result as src/client/silo.ts does: M_r from the served base, Σ w_iΔ_i
 * and Σ w_i (`stepModel`), its digest journaled before the report is sent.
 */
export async function acceptRound(h: SiloSide, rg: RoundGuard, r: number, i: number): Promise<void> {
  const model = await baseOf(h, r);
  const agg = await siloInject(h, i, 'GET', `/v1/consortia/c1/rounds/${r}/aggregate`);
  const sum = await siloInject(h, i, 'GET', `/v1/consortia/c1/rounds/${r}/aggregate/sum`);
  if (agg.statusCode !== 200 || sum.statusCode !== 200)
    throw new Error(`aggregate of round ${r}: ${agg.statusCode} ${sum.statusCode}`);
  const b = sum.rawPayload;
  const weightedSum = new Float64Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
  rg.accepted(
    paramsDigest(stepModel(model, weightedSum, (agg.json() as { totalWeight: number }).totalWeight)),
  );
}

/**
 * The check: for every silo i and round r in `rounds`, the kinds its journal holds for r are
 * exactly the kinds the store holds evidence of, plus the one write a silo killed between its
 * journal entry and its message made (`diedAfterJournal`, the case write-ahead exists for):
 *
 * - `masked` ⇔ its masked input is stored, or folded into the stored sum (i among the survivors);
 * - `unmasked` ⇔ its Unmasking response is stored;
 * - `accepted` ⇔ its report is stored, and the model digest it accepted is that of model version r
 *   as the store holds it;
 *
 * each kind at most once per round (a retry journals nothing new), every entry on the digest of the
 * store's base model of r, at most one `unmasked` per base model per silo over all rounds
 * (src/client/replay-guard.ts's rule), and no `server-fault`.
 */
export async function expectJournalsAgree(
  h: Harness,
  journals: SiloJournals,
  rounds: readonly number[],
  silos: readonly number[],
  diedAfterJournal?: { silo: number; round: number; kind: Kind },
): Promise<void> {
  for (const r of rounds) {
    const row = await h.store.db
      .selectFrom('rounds')
      .select(['survivors', 'weighted_sum', 'base_version'])
      .where('consortium', '=', 'c1')
      .where('round', '=', r)
      .executeTakeFirstOrThrow();
    const writes = await storedWrites(h, r);
    const summed = row.weighted_sum ? (JSON.parse(row.survivors ?? '[]') as number[]) : [];
    const base = paramsDigest(await modelOf(h, row.base_version));
    for (const i of silos) {
      const stored = new Set<Kind>();
      if (writes.some((m) => m.stage === 'mask' && m.silo === i) || summed.includes(i)) stored.add('masked');
      if (writes.some((m) => m.stage === 'unmask' && m.silo === i)) stored.add('unmasked');
      if (writes.some((m) => m.stage === 'reporting' && m.silo === i)) stored.add('accepted');
      const expected = new Set(stored);
      const died = diedAfterJournal?.silo === i && diedAfterJournal.round === r;
      if (died) {
        expect(
          stored.has(diedAfterJournal.kind),
          `silo ${i} round ${r}: its last write never reached the store`,
        ).toBe(false);
        expected.add(diedAfterJournal.kind);
      }
      const mine = journals.entries(i).filter((e) => e.consortium === JOURNAL_CONSORTIUM && e.round === r);
      const kinds = mine.filter((e) => e.kind !== 'trained').map((e) => e.kind);
      const where = `silo ${i} round ${r}: journal ${JSON.stringify(kinds)}, store ${JSON.stringify([...stored])}`;
      expect(kinds.includes('server-fault'), where).toBe(false);
      expect(kinds.length, `${where} (each kind once)`).toBe(new Set(kinds).size);
      expect(new Set(kinds), where).toEqual(expected);
      for (const e of mine) expect(e.base, `${where}: the base of its ${e.kind} entry`).toBe(base);
      const accepted = mine.find((e) => e.kind === 'accepted');
      if (accepted)
        expect(accepted.model, `${where}: the model it accepted`).toBe(paramsDigest(await modelOf(h, r)));
    }
  }
  for (const i of silos) {
    const bases = journals
      .entries(i)
      .filter((e) => e.kind === 'unmasked')
      .map((e) => e.base);
    expect(bases.length, `silo ${i}: one Unmasking response per base model`).toBe(new Set(bases).size);
  }
}
