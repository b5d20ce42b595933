/**
 * src/cli/actions/up-replay.ts (issue 34): an `up` killed mid-Unmasking with fewer than t Unmasking
 * responses stored. The round cannot be completed by restarted silos (their round secrets died with
 * their processes), so `up` closes it and it aborts with a coded reason; the silos that had
 * answered refuse every round on its base (FEDSCORE_ERR_BASE_ALREADY_UNMASKED — kept, that is the
 * replay defence), so they sit out until a round has a result, or `up` stops with one line when
 * the others are fewer than t.
 *
 * The end-to-end case — real `fedscore up` processes, SIGKILLed once one of three silos has sent
 * its Unmasking response — is in test/e2e/up-resume.slow.test.ts.
 */
import { rmSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, test } from 'vitest';
import {
  nextBase,
  nextRound,
  nextRoundLine,
  type RoundFacts,
  unmaskedRounds,
} from '../../../src/cli/actions/up-replay.js';
import { prepareStore } from '../../../src/cli/actions/up-store.js';
import { SiloJournal } from '../../../src/client/journal.js';
import { BASE_ALREADY_UNMASKED, ReplayRefusedError } from '../../../src/client/replay-guard.js';
import { adminInject, Clock, type Harness, harness, tempSqlite } from '../../server/_harness.js';
import {
  type Ack,
  consortiumOn,
  driveRound,
  openRound,
  published,
  roundView,
  SILOS,
  storedWrites,
} from './_faults.js';
import { beginRound, expectJournalsAgree, JOURNAL_CONSORTIUM, SiloJournals } from './_journals.js';

const round = (r: number, base: number, result: number | null, stage = 'scored'): RoundFacts => ({
  round: r,
  stage: stage as RoundFacts['stage'],
  baseModel: base,
  resultModel: result,
  error: result === null ? { code: 'FEDSCORE_ERR_SECAGG_ABORTED', detail: 'x' } : null,
});

describe('nextRound', () => {
  const aborted1 = [round(1, 0, null, 'aborted')];
  test('no Unmasking response on the next base: every silo', () => {
    expect(nextRound(aborted1, new Map(), 3, 2)).toEqual({ kind: 'all' });
    // Unmasked in a round that has a result: the base moved on.
    expect(nextRound([round(1, 0, 1)], new Map([[0, [1]]]), 3, 2)).toEqual({ kind: 'all' });
  });
  test('a silo that unmasked in an aborted attempt on the next base sits out', () => {
    expect(nextBase(aborted1)).toBe(0);
    expect(nextRound(aborted1, new Map([[2, [1]]]), 3, 2)).toEqual({
      kind: 'sit-out',
      silos: [2],
      base: 0,
      rounds: [1],
    });
    // Round 1 scored (version 1), round 2 aborted on it: only round 2's responders sit out.
    const rounds = [round(1, 0, 1), round(2, 1, null, 'aborted')];
    expect(nextBase(rounds)).toBe(1);
    expect(
      nextRound(
        rounds,
        new Map([
          [0, [1]],
          [1, [2]],
        ]),
        4,
        3,
      ),
    ).toEqual({ kind: 'sit-out', silos: [1], base: 1, rounds: [2] });
  });
  test('the others fewer than t: stop, with one line naming the round and the code', () => {
    const next = nextRound(
      aborted1,
      new Map([
        [2, [1]],
        [3, [1]],
      ]),
      4,
      3,
    );
    expect(next).toEqual({ kind: 'stop', silos: [2, 3], base: 0, rounds: [1] });
    if (next.kind === 'all') throw new Error('unreachable');
    const line = nextRoundLine(
      next,
      (ids) => ids.map((i) => `silo-${i}`).join(', '),
      (r) => `round ${r} aborted (FEDSCORE_ERR_SECAGG_ABORTED) without a result`,
      { threshold: 3, n: 4, dir: 'proj' },
    );
    expect(line).toBe(
      `cannot go on: round 1 aborted (FEDSCORE_ERR_SECAGG_ABORTED) without a result; silo-2, silo-3 had sent their Unmasking responses in it: ${BASE_ALREADY_UNMASKED}: they refuse every round on its base model (version 0), the next round's (docs/threat-model.md, "Round replay"), and the 2 other silos are fewer than t = 3; fedscore up proj --fresh starts over`,
    );
    expect(line).not.toContain('\n');
  });
});

describe('nextRound, property', () => {
  // The oracle is the silo's own rule (src/client/replay-guard.ts): it refuses a round on base B
  // iff its journal holds an Unmasking response for a round on B. A history: each round opens on the
  // latest result (src/client/model-chain.ts, b(r)) and has a result or not.
  test('the silos held back are exactly those that would refuse the next round; stop iff the others < t', () => {
    fc.assert(
      fc.property(
        fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 3, max: 7 }),
        fc.array(fc.array(fc.integer({ min: 1, max: 8 }), { maxLength: 3 }), { minLength: 7, maxLength: 7 }),
        fc.integer({ min: 2, max: 7 }),
        (results, n, picks, t) => {
          const rounds: RoundFacts[] = [];
          let base = 0;
          for (const [k, hasResult] of results.entries()) {
            rounds.push(round(k + 1, base, hasResult ? k + 1 : null, hasResult ? 'scored' : 'aborted'));
            if (hasResult) base = k + 1;
          }
          const unmasked = new Map<number, number[]>();
          for (let i = 0; i < n; i++) {
            const rs = picks[i]!.filter((r) => r <= rounds.length);
            if (rs.length > 0) unmasked.set(i, rs);
          }
          const refuses = [...unmasked.entries()]
            .filter(([, rs]) => rs.some((r) => rounds[r - 1]!.baseModel === base))
            .map(([i]) => i)
            .sort((a, b) => a - b);
          const next = nextRound(rounds, unmasked, n, t);
          expect(nextBase(rounds)).toBe(base);
          if (refuses.length === 0) expect(next).toEqual({ kind: 'all' });
          else {
            expect(next.kind).toBe(n - refuses.length < t ? 'stop' : 'sit-out');
            if (next.kind !== 'all') expect(next.silos).toEqual(refuses);
          }
        },
      ),
      { numRuns: 300, seed: 34 },
    );
  });
});

describe('an up killed mid-Unmasking, resumed', () => {
  const cleanup: (() => unknown)[] = [];
  afterAll(async () => {
    for (const c of cleanup.reverse()) await c();
  });

  test('the round aborts with its code; the silo that answered sits out round 2 and is back in round 3', async () => {
    const { location, dir } = tempSqlite();
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const journals = new SiloJournals();
    cleanup.push(() => journals.remove());
    const clock = new Clock();
    const first = await consortiumOn(location, clock);
    cleanup.push(() => first.close().catch(() => {}));
    await openRound(first, 1);
    // Every process dies right after the first Unmasking response is acknowledged (silo 0's):
    // 1 < t = 3 responses stored, the other silos' round secrets gone with them.
    const acked: Ack[] = [];
    const killed = new Error('killed');
    await expect(
      driveRound(() => first, 1, {
        acked,
        journals,
        afterFirstAck: async (stage) => {
          if (stage === 'unmask') throw killed;
        },
      }),
    ).rejects.toBe(killed);
    expect((await storedWrites(first, 1)).filter((w) => w.stage === 'unmask')).toEqual([
      { stage: 'unmask', silo: 0 },
    ]);

    // `up` again: the store has round 1 running past masking (it is not withdrawn) …
    const sqlite = (location as { sqlite: string }).sqlite;
    expect(await prepareStore(dirname(sqlite), basename(sqlite), 'c1')).toMatchObject({
      registered: true,
      over: 0,
      running: { round: 1, stage: 'unmask' },
    });
    // … and closes it (up.ts closeInterrupted): it aborts with a coded reason, no sum.
    const h: Harness = await harness({ location, clock });
    cleanup.push(() => h.close());
    const advanced = await adminInject(h, 'POST', '/v1/consortia/c1/rounds/1/advance', { stage: 'unmask' });
    expect(advanced.statusCode, advanced.body).toBe(200);
    const one = await roundView(h, 1);
    expect(one.stage).toBe('aborted');
    expect(one.error?.code).toMatch(/^[A-Z][A-Z_]+$/);
    await expectJournalsAgree(h, journals, [1], SILOS);

    // Silo 0's journal holds its Unmasking response on M0, the next round's base: it sits out.
    const rounds = (
      (await adminInject(h, 'GET', '/v1/consortia/c1/rounds')).json() as { rounds: RoundFacts[] }
    ).rounds;
    const keys = SILOS.map((i) => `silo-${i}.key`);
    const unmasked = unmaskedRounds(journals.dir, keys, JOURNAL_CONSORTIUM);
    expect([...unmasked]).toEqual([[0, [1]]]);
    expect(unmaskedRounds(journals.dir, keys, 'another consortium').size).toBe(0);
    expect(nextRound(rounds, unmasked, 4, 3)).toEqual({ kind: 'sit-out', silos: [0], base: 0, rounds: [1] });

    // The replay defence is untouched: silo 0 refuses round 2 (on M0 again) …
    await openRound(h, 2);
    await expect(beginRound(h, journals, 2, 0)).rejects.toThrow(ReplayRefusedError);
    await expect(beginRound(h, journals, 2, 0)).rejects.toThrow(
      new RegExp(`^${BASE_ALREADY_UNMASKED}: round 2: base model [0-9a-f]{64} is the base of round 1`),
    );
    // … so round 2 runs without it (its stages close at their deadline) and has a result …
    await driveRound(() => h, 2, { acked: [], journals, sitsOut: 0 });
    expect(await roundView(h, 2)).toMatchObject({ stage: 'scored', survivors: [1, 2, 3] });
    const after2 = (
      (await adminInject(h, 'GET', '/v1/consortia/c1/rounds')).json() as { rounds: RoundFacts[] }
    ).rounds;
    expect(nextRound(after2, unmaskedRounds(journals.dir, keys, JOURNAL_CONSORTIUM), 4, 3)).toEqual({
      kind: 'all',
    });
    // … and in round 3, on that result, silo 0 takes part again.
    await openRound(h, 3);
    await driveRound(() => h, 3, { acked: [], journals });
    expect(await roundView(h, 3)).toMatchObject({ stage: 'scored', survivors: SILOS });
    await expectJournalsAgree(h, journals, [1, 2, 3], SILOS);
    const scores = (await published(h)) as { rounds: { round: number; silos: number[] }[] };
    expect(scores.rounds.map((r) => [r.round, r.silos])).toEqual([
      [2, [1, 2, 3]],
      [3, SILOS],
    ]);
    // Silo 0's journal: one Unmasking response on M0 (round 1), none in round 2.
    const j = SiloJournal.open(journals.path(0));
    cleanup.push(() => j.close());
    expect(j.all().filter((e) => e.round === 2)).toEqual([]);
  });
});
