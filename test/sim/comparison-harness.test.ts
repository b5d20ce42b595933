/**
 * The comparison harness on games with known answers, without a learner: every estimator's scores
 * equal a direct call of its scoring/ function with the frozen seed stream (so results do not
 * change when the registry changes), budgets are respected (counting games), and a registered
 * estimator runs on its own stream.
 */
import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { msrBanzhaf } from '../../scoring/banzhaf-msr.js';
import { type Coalition, coalitionKey, size } from '../../scoring/coalition.js';
import { cosineScores } from '../../scoring/cosine.js';
import { coalitionTable, type Game, memoize, memoizeVector, type VectorGame } from '../../scoring/game.js';
import { gtgShapley } from '../../scoring/gtg.js';
import { accumulateClassShapley, maverickScores, maverickShapleyRound } from '../../scoring/maverick.js';
import { monteCarloShapley } from '../../scoring/monte-carlo.js';
import { msGtg } from '../../scoring/ms-gtg.js';
import { owenShapley } from '../../scoring/owen.js';
import { createRng } from '../../scoring/seeded-rng.js';
import { exactShapley } from '../../scoring/shapley.js';
import { accumulateTrajectory, trajectoryShapley, updateGeometry } from '../../scoring/trajectory.js';
import { deriveSeed } from '../../src/data/seed.js';
import { defineEstimator } from '../../src/estimators/estimator.js';
import { registerEstimator } from '../../src/estimators/registry.js';
import {
  defaultBudget,
  type HarnessRound,
  harnessRound,
  initialHarnessState,
  MAX_EXACT_PLAYERS,
} from '../../src/sim/comparison-harness.js';

const NUM_SILOS = 8;
const PARTICIPANTS = [0, 2, 3, 5, 6, 7];
const K = PARTICIPANTS.length;
const CLASSES = 3;
const SEED = 11;

/** A deterministic pseudo-random value in [0, 1) per (coalition mask, salt): no estimator converges early. */
const noise = (mask: number, salt: number) => {
  const x = Math.sin(mask * 12.9898 + salt * 78.233) * 43758.5453;
  return x - Math.floor(x);
};
const maskOf = (c: Uint32Array) => c[0]!;
const popcount = (m: number) => {
  let c = 0;
  for (let x = m; x; x &= x - 1) c++;
  return c;
};

/** v(S) = |S|/k + 0.2·noise(S): non-additive, every coalition distinct. Counts distinct coalitions asked. */
function countingGame(n: number): Game & { asked: Set<string> } {
  const asked = new Set<string>();
  return {
    n,
    asked,
    async values(cs) {
      return Float64Array.from(cs, (c) => {
        asked.add(coalitionKey(c));
        return popcount(maskOf(c)) / n + 0.2 * noise(maskOf(c), 0);
      });
    },
  };
}

/** Per-class accuracies with a class-dependent noise. Counts distinct coalitions asked. */
function countingVectorGame(n: number, dims: number): VectorGame & { asked: Set<string> } {
  const asked = new Set<string>();
  return {
    n,
    dims,
    asked,
    async values(cs) {
      const out = new Float64Array(cs.length * dims);
      cs.forEach((c, b) => {
        asked.add(coalitionKey(c));
        for (let d = 0; d < dims; d++)
          out[b * dims + d] = (popcount(maskOf(c)) / n) * (0.5 + 0.2 * d) + 0.3 * noise(maskOf(c), d + 1);
      });
      return out;
    },
  };
}

function vectors(count: number, dim: number, salt: number): Float32Array[] {
  return Array.from({ length: count }, (_, i) =>
    Float32Array.from({ length: dim }, (_, j) => noise(i * 31 + j, salt) - 0.4),
  );
}

function roundInput(round: number, over: Partial<HarnessRound> = {}): HarnessRound {
  const updates = vectors(K, 12, round);
  const aggregate = Float32Array.from({ length: 12 }, (_, j) => updates.reduce((s, u) => s + u[j]!, 0) / K);
  return {
    round,
    seed: SEED,
    numSilos: NUM_SILOS,
    numClasses: CLASSES,
    participants: PARTICIPANTS,
    game: countingGame(K),
    perClass: countingVectorGame(K, CLASSES),
    updates,
    aggregate,
    referenceUpdate: vectors(1, 12, 100 + round)[0]!,
    ...over,
  };
}

/** Local values → one per silo, NaN for silos not in the round (the harness's layout). */
const spread = (local: ArrayLike<number>) => {
  const out = new Float64Array(NUM_SILOS).fill(Number.NaN);
  PARTICIPANTS.forEach((p, b) => {
    out[p] = local[b]!;
  });
  return out;
};
const fresh = (g: Game) => memoize({ n: g.n, values: (cs) => g.values(cs) });
/** The random stream the harness used before the registry: deriveSeed(seed, round, name.length, first char). */
const oldRng = (round: number, name: string) =>
  createRng(deriveSeed(SEED, round, name.length, name.charCodeAt(0)));

describe('harnessRound', () => {
  it('every built-in gives what its scoring/ function gives on the historical seed streams, over two rounds', async () => {
    const all = {
      mrsv: {},
      tmr: {},
      gtg: { budget: 20 },
      mc: {},
      owen: { budget: 24 },
      banzhaf: { budget: 30 },
      cos: {},
      maverick: { temperature: 0.05, alpha: 0.5 },
      tsv: { budget: 15 },
    };
    let state = initialHarnessState();
    let maverickAcc: Float64Array = new Float64Array(NUM_SILOS * CLASSES);
    let tsvAcc: Float64Array = new Float64Array(NUM_SILOS);
    for (const round of [1, 2]) {
      const input = roundInput(round);
      const { state: next, output } = await harnessRound(state, input, all);
      state = next;
      const table = await coalitionTable(input.game);
      const expected: Record<string, Float64Array> = {
        mrsv: spread(exactShapley(K, table)),
        gtg: spread(
          (
            await gtgShapley(fresh(input.game), {
              budget: 20,
              rng: oldRng(round, 'gtg'),
              betweenRoundTolerance: 0.001, // papers/000 §5.1, the estimator's defaults
              withinRoundTolerance: 0.001,
            })
          ).values,
        ),
        mc: spread(
          (await monteCarloShapley(fresh(input.game), { budget: defaultBudget(K), rng: oldRng(round, 'mc') }))
            .values,
        ),
        owen: spread(
          (await owenShapley(fresh(input.game), { budget: 24, rng: oldRng(round, 'owen') })).values,
        ),
        banzhaf: spread(
          (await msrBanzhaf(fresh(input.game), { budget: 30, rng: oldRng(round, 'banzhaf') })).values,
        ),
        cos: spread(cosineScores(input.updates, input.aggregate)),
      };
      const mav = await maverickShapleyRound(
        memoizeVector(input.perClass),
        msGtg({ budget: defaultBudget(K), withinRoundTolerance: 0.001 }), // the joint sampler, ε_i of §5.1
        { temperature: 0.05, seed: deriveSeed(SEED, round, 7), betweenRoundEpsilon: 0.001 },
      );
      maverickAcc = accumulateClassShapley(maverickAcc, CLASSES, PARTICIPANTS, mav.phi, 0.5);
      expected.maverick = spread(mav.rewards);
      const tsv = trajectoryShapley(updateGeometry(input.updates, input.referenceUpdate!), {
        budget: 15,
        rng: oldRng(round, 'tsv'),
      });
      tsvAcc = accumulateTrajectory(tsvAcc, PARTICIPANTS, tsv.values);
      expected.tsv = spread(tsv.values);

      expect(Object.keys(output.scores)).toEqual([
        'mrsv',
        'gtg',
        'mc',
        'owen',
        'banzhaf',
        'cos',
        'maverick',
        'tsv',
      ]);
      expect(output.scores).toEqual(expected);
      expect(output.cumulative).toEqual({ maverick: maverickScores(maverickAcc, mav.beta), tsv: tsvAcc });
      expect(Object.keys(output.evaluations)).toEqual([
        'mrsv',
        'gtg',
        'mc',
        'owen',
        'banzhaf',
        'maverick',
        'tsv',
      ]);
      expect(output.evaluations.mrsv).toBe(2 ** K);
      expect(output.evaluations.gtg).toBeLessThanOrEqual(20);
      expect(output.evaluations.owen).toBeLessThanOrEqual(24);
      expect(output.evaluations.banzhaf).toBeLessThanOrEqual(30);
      expect(output.evaluations.mc).toBeLessThanOrEqual(defaultBudget(K));
      expect(Object.keys(output.timingsMs)).toEqual(Object.keys(output.scores));
      expect(state.tables).toHaveLength(round);
      expect(state.tables[round - 1]).toEqual({ players: PARTICIPANTS, table, round });
    }
  });

  it('Maverick-Shapley honours a configured budget (in total when joint, per class otherwise), and defaults to defaultBudget(k)', async () => {
    const budget = 9;
    const small = roundInput(1);
    const run = await harnessRound(initialHarnessState(), small, { maverick: { budget } });
    const asked = (small.perClass as ReturnType<typeof countingVectorGame>).asked.size;
    expect(asked).toBeGreaterThan(2);
    expect(asked).toBeLessThanOrEqual(budget);
    expect(run.output.evaluations.maverick).toBe(asked);
    const perClass = roundInput(1);
    const separate = await harnessRound(initialHarnessState(), perClass, {
      maverick: { budget, sampler: 'perClass' },
    });
    const askedPerClass = (perClass.perClass as ReturnType<typeof countingVectorGame>).asked.size;
    expect(askedPerClass).toBeLessThanOrEqual(CLASSES * budget);
    expect(separate.output.evaluations.maverick).toBe(askedPerClass);
    // Without a budget: defaultBudget(k), here more than the small budget allows.
    const large = roundInput(1);
    const byDefault = await harnessRound(initialHarnessState(), large, { maverick: {} });
    const askedByDefault = (large.perClass as ReturnType<typeof countingVectorGame>).asked.size;
    expect(defaultBudget(K)).toBeGreaterThan(2 ** K);
    expect(askedByDefault).toBeGreaterThan(budget);
    expect(byDefault.output.evaluations.maverick).toBe(askedByDefault);
  });

  it("GTG and Maverick-Shapley truncate with papers/000 §5.1's ε_b = ε_i = 0.001 unless configured", async () => {
    // Every player adds 0.0005/K: the grand coalition gains 0.0005 ≤ ε_b on every class.
    const tiny = (dims: number) => (cs: readonly Coalition[]) =>
      Promise.resolve(
        Float64Array.from(
          { length: cs.length * dims },
          (_, x) => 0.5 + (0.0005 * size(cs[Math.floor(x / dims)]!)) / K,
        ),
      );
    const still: Game = { n: K, values: tiny(1) };
    const r = await harnessRound(initialHarnessState(), { ...roundInput(1), game: still }, { gtg: {} });
    expect(Array.from(r.output.scores.gtg!).filter(Number.isFinite)).toEqual(new Array(K).fill(0));
    expect(r.output.evaluations.gtg).toBe(2); // v(∅) and v(N) only
    const off = await harnessRound(
      initialHarnessState(),
      { ...roundInput(1), game: still },
      {
        gtg: { epsilonB: 0, epsilonI: 0 },
      },
    );
    expect(off.output.evaluations.gtg).toBeGreaterThan(2);
    const classes: VectorGame = { n: K, dims: CLASSES, values: tiny(CLASSES) };
    const m = await harnessRound(
      initialHarnessState(),
      { ...roundInput(1), perClass: classes },
      { maverick: {} },
    );
    expect(Array.from(m.output.scores.maverick!).filter(Number.isFinite)).toEqual(new Array(K).fill(0));
    expect(m.output.evaluations.maverick).toBe(2);
    const mOff = await harnessRound(
      initialHarnessState(),
      { ...roundInput(1), perClass: classes },
      {
        maverick: { epsilonB: 0, epsilonI: 0 }, // with ε_i = 0.001 every walk would stop at once (gap 0.0005)
      },
    );
    expect(mOff.output.evaluations.maverick).toBeGreaterThan(2);
  });

  it('each sampled estimator stays within its budget on a counting game', async () => {
    for (const name of ['gtg', 'mc', 'owen', 'banzhaf'] as const) {
      const input = roundInput(1);
      const { output } = await harnessRound(initialHarnessState(), input, { [name]: { budget: 17 } });
      expect({ name, asked: (input.game as ReturnType<typeof countingGame>).asked.size <= 17 }).toEqual({
        name,
        asked: true,
      });
      expect(output.evaluations[name]).toBeLessThanOrEqual(17);
    }
  });

  it('MR-SV takes the whole table when the game offers one (Game.table), with the same scores', async () => {
    const plain = roundInput(1);
    const inner = countingGame(K);
    let tables = 0;
    const game: Game = {
      n: K,
      values: (cs) => inner.values(cs),
      async table() {
        tables++;
        return coalitionTable(inner);
      },
    };
    const want = await harnessRound(initialHarnessState(), plain, { mrsv: {}, gtg: { budget: 20 } });
    const got = await harnessRound(initialHarnessState(), roundInput(1, { game }), {
      mrsv: {},
      gtg: { budget: 20 },
    });
    expect(tables).toBe(1);
    expect(got.output.scores).toEqual(want.output.scores);
    expect(got.output.evaluations).toEqual(want.output.evaluations);
    expect(got.state.tables).toEqual(want.state.tables);
  });

  it('TMR alone runs the exact per-round tables it folds; estimators draw from their own streams', async () => {
    const { state, output } = await harnessRound(initialHarnessState(), roundInput(1), { tmr: {} });
    expect(Object.keys(output.scores)).toEqual(['mrsv']);
    expect(state.tables).toHaveLength(1);
    const a = await harnessRound(initialHarnessState(), roundInput(1), {
      gtg: { budget: 40 },
      mc: { budget: 40 },
    });
    const b = await harnessRound(initialHarnessState(), roundInput(2), { gtg: { budget: 40 } });
    expect(a.output.scores.gtg).not.toEqual(a.output.scores.mc);
    expect(a.output.scores.gtg).not.toEqual(b.output.scores.gtg); // another round, another seed
  });

  it('throws when an estimator needs the reference update and the round has none, or a round is too large', async () => {
    const { referenceUpdate: _, ...withoutReference } = roundInput(1);
    await expect(harnessRound(initialHarnessState(), withoutReference, { tsv: {} })).rejects.toThrow(
      /^referenceUpdate: Trajectory Shapley .* needs the validation reference update$/,
    );
    const n = MAX_EXACT_PLAYERS + 1;
    const big = roundInput(1, {
      numSilos: n,
      participants: Array.from({ length: n }, (_, i) => i),
      game: countingGame(n),
    });
    await expect(harnessRound(initialHarnessState(), big, { tmr: {} })).rejects.toThrow(
      `comparison.estimators.mrsv: exact per-round Shapley needs at most ${MAX_EXACT_PLAYERS} participants per round, round 1 has ${n}`,
    );
  });

  it('runs a registered estimator on its own stream, with its state carried between rounds', async () => {
    const stream = [0xe5, 0x51];
    registerEstimator(
      defineEstimator({
        name: 'userDraws',
        title: 'one random draw per participant, accumulated (test estimator)',
        schema: Type.Object(
          { budget: Type.Optional(Type.Integer({ minimum: 1 })) },
          { additionalProperties: false },
        ),
        stream,
        compare: 'cumulative',
        async run({ participants, rng, budget, state, game }) {
          await game.values([new Uint32Array(1)]);
          const values = participants.map(() => rng.next() * budget);
          const total = (state as number | undefined) ?? 0;
          return { values, evaluations: game.evaluations, state: total + values.length };
        },
      }),
    );
    const first = await harnessRound(initialHarnessState(), roundInput(1), {
      userDraws: { budget: 2 },
    } as never);
    const rng = createRng(deriveSeed(SEED, 1, ...stream));
    expect(first.output.scores.userDraws).toEqual(spread(PARTICIPANTS.map(() => rng.next() * 2)));
    expect(first.output.evaluations.userDraws).toBe(1);
    expect(first.state.carried.userDraws).toBe(K);
    const second = await harnessRound(first.state, roundInput(2), { userDraws: {} } as never);
    expect(second.state.carried.userDraws).toBe(2 * K);
    const rng2 = createRng(deriveSeed(SEED, 2, ...stream));
    expect(second.output.scores.userDraws).toEqual(
      spread(PARTICIPANTS.map(() => rng2.next() * defaultBudget(K))),
    );
  });
});
