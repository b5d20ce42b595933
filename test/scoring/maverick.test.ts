/**
 * Maverick-Shapley (papers/000 Eq. 7–10, 13; Alg. 1–4). Oracles: per-class additive games (class-wise
 * Shapley in closed form), a hand-built Maverick scenario, hand-computed accumulation (Eq. 8–9) and
 * softmax (Eq. 10), the coreset of an additive game in closed form, per-class efficiency, and a
 * Hoeffding bound when the class-wise values come from a sampled estimator.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type Coalition,
  coalitionKey,
  coalitionOf,
  emptyCoalition,
  has,
  maskToCoalition,
  members,
  withPlayer,
} from '../../scoring/coalition.js';
import type { Estimate } from '../../scoring/estimate.js';
import { type Game, gameFromFunction, memoize, type VectorGame } from '../../scoring/game.js';
import { gtgShapley } from '../../scoring/gtg.js';
import {
  accumulateClassShapley,
  type ClassEstimator,
  classDifficulty,
  coresetOf,
  foldMaverick,
  maverickScores,
  maverickShapleyRound,
} from '../../scoring/maverick.js';
import { monteCarloShapley } from '../../scoring/monte-carlo.js';
import { createRng, type Rng, randomPermutation } from '../../scoring/seeded-rng.js';
import { exactShapleyOfGame } from '../../scoring/shapley.js';

/** A vector game from a function, counting how often each coalition reaches it. */
function vectorGame(
  n: number,
  dims: number,
  value: (c: Coalition) => number[],
): VectorGame & { calls: Map<string, number>; total: () => number } {
  const calls = new Map<string, number>();
  return {
    n,
    dims,
    calls,
    total: () => [...calls.values()].reduce((s, x) => s + x, 0),
    async values(coalitions) {
      const out = new Float64Array(coalitions.length * dims);
      coalitions.forEach((c, b) => {
        const k = coalitionKey(c);
        calls.set(k, (calls.get(k) ?? 0) + 1);
        out.set(value(c), b * dims);
      });
      return out;
    },
  };
}

/** v^c(S) = base^c + Σ_{i∈S} a_i^c: class-wise Shapley φ_i^c = a_i^c (additivity per class). */
function additiveVectorGame(a: number[][], base: number[]) {
  const dims = base.length;
  return vectorGame(a.length, dims, (c) => {
    const row = base.slice();
    for (const i of members(c)) for (let d = 0; d < dims; d++) row[d]! += a[i]![d]!;
    return row;
  });
}

const exact: ClassEstimator = (game) => exactShapleyOfGame(game);

/** A plain permutation sampler of this test's own: `permutations` uniform walks, mean marginals. */
async function permutationShapley(game: Game, permutations: number, rng: Rng): Promise<Estimate> {
  const memo = memoize(game);
  const { n } = game;
  const total = new Float64Array(n);
  for (let m = 0; m < permutations; m++) {
    const perm = randomPermutation(rng, n);
    const prefixes: Coalition[] = [emptyCoalition(n)];
    for (const i of perm) prefixes.push(withPlayer(prefixes[prefixes.length - 1]!, i));
    const v = await memo.values(prefixes);
    for (let k = 0; k < n; k++) total[perm[k]!]! += v[k + 1]! - v[k]!;
  }
  return { values: total.map((x) => x / permutations), evaluations: memo.evaluations };
}

const row = (phi: Float64Array, classes: number, i: number) =>
  Array.from(phi.subarray(i * classes, (i + 1) * classes));
const sum = (a: ArrayLike<number>) => Array.from(a).reduce((s, x) => s + x, 0);

describe('classDifficulty (Eq. 10)', () => {
  it('matches the softmax by hand', () => {
    const beta = classDifficulty([0.9, 0.5], 0.1);
    // exp(1)/(exp(1) + exp(5)) and exp(5)/(exp(1) + exp(5)).
    expect(beta[0]).toBeCloseTo(1 / (1 + Math.exp(4)), 15);
    expect(beta[1]).toBeCloseTo(1 / (1 + Math.exp(-4)), 15);
  });

  it('sums to 1 and orders classes by difficulty (lower accuracy, larger weight)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1, maxLength: 12 }),
        fc.double({ min: 1e-4, max: 100, noNaN: true }),
        (acc, T) => {
          const beta = classDifficulty(acc, T);
          expect(sum(beta)).toBeCloseTo(1, 12);
          for (let a = 0; a < acc.length; a++) {
            expect(Number.isFinite(beta[a])).toBe(true);
            for (let b = 0; b < acc.length; b++)
              if (acc[a]! < acc[b]!) expect(beta[a]).toBeGreaterThanOrEqual(beta[b]!);
          }
        },
      ),
      { numRuns: 300, seed: 7 },
    );
  });

  it('is uniform for equal accuracies and one-hot on the hardest class as T → 0, without overflow', () => {
    expect(Array.from(classDifficulty([0.7, 0.7, 0.7, 0.7], 0.01))).toEqual([0.25, 0.25, 0.25, 0.25]);
    const beta = classDifficulty([0.99, 0.2, 0.98], 1e-6);
    expect(Array.from(beta)).toEqual([0, 1, 0]);
    const flat = classDifficulty([0.9, 0.1], 1e6);
    expect(Math.abs(flat[0]! - 0.5)).toBeLessThan(1e-6);
  });

  it('rejects bad input naming the field', () => {
    expect(() => classDifficulty([], 1)).toThrow(/^accuracies/);
    expect(() => classDifficulty([0.5, Number.NaN], 1)).toThrow(/^accuracies/);
    expect(() => classDifficulty([0.5], 0)).toThrow(/^temperature/);
    expect(() => classDifficulty([0.5], Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });
});

describe('accumulation and scores (Eq. 8, 9)', () => {
  it('matches a two-round hand example; non-participants keep S', () => {
    // 3 clients, 2 classes, α = 0.5, S⁰ = 0.
    const S1 = accumulateClassShapley(new Float64Array(6), 2, [0, 2], [1, 2, 3, 4], 0.5);
    expect(Array.from(S1)).toEqual([0.5, 1, 0, 0, 1.5, 2]);
    expect(Array.from(maverickScores(S1, [0.25, 0.75]))).toEqual([0.875, 0, 1.875]);
    // Round 2: clients 2 and 1 (in that round-local order) with φ = (−1, 0) and (2, 2).
    const S2 = accumulateClassShapley(S1, 2, [2, 1], [-1, 0, 2, 2], 0.5);
    expect(Array.from(S2)).toEqual([0.5, 1, 1, 1, 0.25, 1]);
    expect(Array.from(S1)).toEqual([0.5, 1, 0, 0, 1.5, 2]); // pure
    expect(Array.from(maverickScores(S2, [0.5, 0.5]))).toEqual([0.75, 1, 0.625]);

    const fold = foldMaverick(
      3,
      2,
      [
        { participants: [0, 2], phi: [1, 2, 3, 4], beta: [0.25, 0.75] },
        { participants: [2, 1], phi: [-1, 0, 2, 2], beta: [0.5, 0.5] },
      ],
      { alpha: 0.5 },
    );
    expect(Array.from(fold.accumulated)).toEqual(Array.from(S2));
    expect(fold.scores.map((s) => Array.from(s))).toEqual([
      [0.875, 0, 1.875],
      [0.75, 1, 0.625],
    ]);
  });

  it('α = 0 keeps only the last round, α = 1 never moves, an initial S is honoured', () => {
    const S = Float64Array.of(1, 2, 3, 4);
    expect(Array.from(accumulateClassShapley(S, 2, [1], [9, 8], 0))).toEqual([1, 2, 9, 8]);
    expect(Array.from(accumulateClassShapley(S, 2, [1], [9, 8], 1))).toEqual([1, 2, 3, 4]);
    const fold = foldMaverick(2, 2, [{ participants: [0], phi: [0, 0], beta: [1, 0] }], {
      alpha: 0.5,
      initial: S,
    });
    expect(Array.from(fold.accumulated)).toEqual([0.5, 1, 3, 4]);
    expect(Array.from(fold.scores[0]!)).toEqual([0.5, 3]);
  });

  it('rejects bad input naming the field', () => {
    const S = new Float64Array(4);
    expect(() => accumulateClassShapley(S, 2, [0], [1, 1], 1.5)).toThrow(/^alpha/);
    expect(() => accumulateClassShapley(S, 2, [2], [1, 1], 0.5)).toThrow(/^participants/);
    expect(() => accumulateClassShapley(S, 2, [0, 0], [1, 1, 1, 1], 0.5)).toThrow(/^participants/);
    expect(() => accumulateClassShapley(S, 2, [0], [1], 0.5)).toThrow(/^phi/);
    expect(() => accumulateClassShapley(S, 3, [0], [1, 1, 1], 0.5)).toThrow(/^accumulated/);
    expect(() => accumulateClassShapley(S, 0, [0], [1], 0.5)).toThrow(/^classes/);
    expect(() => maverickScores(S, [0.5, 0.5, 0])).toThrow(/^accumulated/);
    expect(() => maverickScores(S, [])).toThrow(/^beta/);
    expect(() => foldMaverick(2, 2, [{ participants: [0], phi: [1, 1], beta: [1] }], { alpha: 0.5 })).toThrow(
      /^rounds/,
    );
    expect(() => foldMaverick(2, 2, [], { alpha: 0.5, initial: new Float64Array(6) })).toThrow(/^initial/);
  });
});

describe('coresetOf (Alg. 1 line 24, Alg. 3 line 10)', () => {
  it('takes the argmax of summed accuracies; ties go to the larger coalition', () => {
    const cs = [coalitionOf(3, [0]), coalitionOf(3, [0, 1]), coalitionOf(3, [2]), coalitionOf(3, [])];
    const values = [0.5, 0.5, 0.6, 0.4, 0.3, 0.3, 0.9, 0.9];
    // Sums: 1.0, 1.0, 0.6, 1.8 (empty, excluded by default).
    expect(coresetOf(3, 2, cs, values).members).toEqual([0, 1]);
    expect(Array.from(coresetOf(3, 2, cs, values).accuracy)).toEqual([0.6, 0.4]);
    expect(coresetOf(3, 2, cs, values, { includeEmptyCoalition: true }).members).toEqual([]);
    // Same size and sum: the lexicographically smaller members win, whatever the order.
    const tie = [coalitionOf(3, [1, 2]), coalitionOf(3, [0, 2])];
    expect(coresetOf(3, 1, tie, [1, 1]).members).toEqual([0, 2]);
    expect(coresetOf(3, 1, [...tie].reverse(), [1, 1]).members).toEqual([0, 2]);
  });

  it('rejects bad input naming the field', () => {
    expect(() => coresetOf(3, 1, [coalitionOf(3, [])], [1])).toThrow(/^coalitions/);
    expect(() => coresetOf(3, 2, [coalitionOf(3, [1])], [1])).toThrow(/^values/);
    expect(() => coresetOf(2, 1, [coalitionOf(3, [2])], [1])).toThrow(/^coalitions/);
    expect(() => coresetOf(0, 1, [], [])).toThrow(/^n/);
  });
});

describe('maverickShapleyRound', () => {
  it('class-wise Shapley of a per-class additive game is a_i^c, with shared evaluations', async () => {
    const a = [
      [0.1, 0.0, 0.3],
      [0.2, -0.1, 0.0],
      [0.0, 0.4, 0.1],
      [-0.2, -0.2, -0.1],
      [0.05, 0.0, 0.0],
    ];
    const game = additiveVectorGame(a, [0.1, 0.2, 0.05]);
    const round = await maverickShapleyRound(game, exact, { temperature: 0.5 });
    expect(round.n).toBe(5);
    expect(round.classes).toBe(3);
    for (let i = 0; i < 5; i++)
      for (let c = 0; c < 3; c++) expect(round.phi[i * 3 + c]).toBeCloseTo(a[i]![c]!, 12);
    // The three classes share one memo: 2^5 coalitions evaluated once each, not 3·2^5.
    expect(round.evaluations).toBe(32);
    expect(game.calls.size).toBe(32);
    expect(game.total()).toBe(32);
    // Additive: the coreset holds exactly the players with Σ_c a_i^c > 0 (player 3 hurts every class).
    expect(round.coreset).toEqual([0, 1, 2, 4]);
    expect(Array.from(round.coresetAccuracy).map((x) => +x.toFixed(12))).toEqual([0.45, 0.5, 0.45]);
    // β from v̂ (Alg. 1 line 26), rewards R_i = Σ_c β^c φ_i^c (Eq. 13).
    const beta = classDifficulty(round.coresetAccuracy, 0.5);
    expect(Array.from(round.beta)).toEqual(Array.from(beta));
    for (let i = 0; i < 5; i++)
      expect(round.rewards[i]).toBeCloseTo(sum(a[i]!.map((x, c) => x * beta[c]!)), 12);
    expect(round.truncated).toBe(false);
    expect(round.stderr).toBeUndefined(); // the exact estimator reports none
  });

  it('a game that offers its whole table (VectorGame.table) gives the same round in one table call', async () => {
    // Ties in Σ_c: players 1 and 4 are interchangeable, so the tie rule picks the coreset.
    const a = [
      [0.1, 0.0, 0.3],
      [0.2, -0.1, 0.0],
      [0.0, 0.4, 0.1],
      [-0.2, -0.2, -0.1],
      [0.0, 0.1, 0.0],
      [0.05, -0.05, 0.0],
    ];
    const plain = additiveVectorGame(a, [0.1, 0.2, 0.05]);
    const inner = additiveVectorGame(a, [0.1, 0.2, 0.05]);
    let tables = 0;
    const withTable: VectorGame = {
      n: inner.n,
      dims: inner.dims,
      values: (cs) => inner.values(cs),
      async table() {
        tables++;
        return inner.values(Array.from({ length: 64 }, (_, m) => maskToCoalition(6, m)));
      },
    };
    const want = await maverickShapleyRound(plain, exact, { temperature: 0.5 });
    const got = await maverickShapleyRound(withTable, exact, { temperature: 0.5 });
    expect(tables).toBe(1);
    expect(got.evaluations).toBe(64);
    expect(Array.from(got.phi)).toEqual(Array.from(want.phi));
    expect(got.coreset).toEqual(want.coreset);
    expect(Array.from(got.coresetAccuracy)).toEqual(Array.from(want.coresetAccuracy));
    expect(Array.from(got.rewards)).toEqual(Array.from(want.rewards));
  });

  it('keeps per-class efficiency: Σ_i φ_i^c = v^c(N) − v^c(∅)', async () => {
    // A non-additive vector game: class c's accuracy saturates with the number of helpful members.
    const game = vectorGame(5, 2, (c) => {
      const k0 = [0, 1, 2].filter((i) => has(c, i)).length;
      const k1 = [2, 3].filter((i) => has(c, i)).length;
      return [1 - 0.5 ** (k0 + 0.5 * +has(c, 4)), has(c, 3) ? 0.3 + 0.2 * k1 : 0.1 * k1];
    });
    const round = await maverickShapleyRound(game, exact, { temperature: 0.1 });
    const [vEmpty, vFull] = [
      await game.values([emptyCoalition(5)]),
      await game.values([maskToCoalition(5, 31)]),
    ];
    for (let c = 0; c < 2; c++) {
      let s = 0;
      for (let i = 0; i < 5; i++) s += round.phi[i * 2 + c]!;
      expect(s).toBeCloseTo(vFull![c]! - vEmpty![c]!, 12);
    }
  });

  it('a Maverick alone owning a hard class ranks first, where plain Shapley of mean accuracy ranks it last', async () => {
    // 4 clients, 3 classes. Clients 0–2 each carry classes 0 and 1 (any one of them lifts their
    // accuracy from 0.1 to 0.9); client 3 alone owns class 2, which stays hard (0.3 with it, 0 without).
    const game = vectorGame(4, 3, (c) => {
      const common = [0, 1, 2].some((i) => has(c, i)) ? 0.9 : 0.1;
      return [common, common, has(c, 3) ? 0.3 : 0];
    });
    const T = 0.1;
    const round = await maverickShapleyRound(game, exact, { temperature: T });
    // Closed form: classes 0, 1 are "any of three" games (0.8/3 each to clients 0–2), class 2 is 0.3 to client 3.
    for (let i = 0; i < 3; i++)
      for (const [c, v] of [
        [0, 0.8 / 3],
        [1, 0.8 / 3],
        [2, 0],
      ] as const)
        expect(round.phi[i * 3 + c]).toBeCloseTo(v, 12);
    expect(row(round.phi, 3, 3).map((x) => +x.toFixed(12))).toEqual([0, 0, 0.3]);
    // Coreset = everybody (Σ = 2.1), so β = softmax((0.1, 0.1, 0.7)/T): class 2 dominates.
    expect(round.coreset).toEqual([0, 1, 2, 3]);
    const e = Math.exp(6);
    expect(round.beta[2]).toBeCloseTo(e / (2 + e), 12);

    const { accumulated } = foldMaverick(
      4,
      3,
      [{ participants: [0, 1, 2, 3], phi: round.phi, beta: round.beta }],
      { alpha: 0 },
    );
    const maverick = maverickScores(accumulated, round.beta);
    // Plain Shapley of the mean accuracy (the uniform per-class weighting the paper argues against).
    const meanGame: Game = gameFromFunction(4, (c) => {
      const common = [0, 1, 2].some((i) => has(c, i)) ? 0.9 : 0.1;
      return (2 * common + (has(c, 3) ? 0.3 : 0)) / 3;
    });
    const plain = (await exactShapleyOfGame(meanGame)).values;
    expect(plain[3]).toBeCloseTo(0.1, 12);
    expect(plain[0]).toBeCloseTo(1.6 / 9, 12);
    expect(plain[3]).toBe(Math.min(...plain));
    expect(maverick[3]).toBe(Math.max(...maverick));
    const share = (v: Float64Array) => v[3]! / sum(v);
    expect(share(maverick)).toBeGreaterThan(0.9);
    expect(share(plain)).toBeLessThan(0.2);
  });

  it('the coreset drops an adversary that lowers every class', async () => {
    const game = vectorGame(4, 2, (c) => {
      const good = [0, 1, 2].filter((i) => has(c, i)).length;
      const bad = has(c, 3) ? 0.35 : 0;
      return [Math.max(0, 0.2 * good - bad + 0.1), Math.max(0, 0.25 * good - bad)];
    });
    const round = await maverickShapleyRound(game, exact, { temperature: 0.05 });
    expect(round.coreset).toEqual([0, 1, 2]);
    for (let c = 0; c < 2; c++) expect(round.phi[3 * 2 + c]).toBeLessThan(0);
  });

  it('with a sampled estimator the coreset is the argmax over the coalitions actually evaluated (Alg. 1 line 24)', async () => {
    // Additive: the true argmax is {0, 2}; one walk of 4 players evaluates only 5 prefixes.
    const a = [[0.3], [-0.2], [0.4], [-0.1]];
    const game = additiveVectorGame(a, [0]);
    const seen: Coalition[] = [];
    const spy: VectorGame = {
      n: 4,
      dims: 1,
      async values(cs) {
        seen.push(...cs);
        return game.values(cs);
      },
    };
    const estimator: ClassEstimator = (g, { rng }) => permutationShapley(g, 1, rng);
    const coresets: string[] = [];
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      seen.length = 0;
      const round = await maverickShapleyRound(spy, estimator, { temperature: 1, seed });
      const values = seen.map((c) => members(c).reduce((s, i) => s + a[i]![0]!, 0));
      const best = coresetOf(4, 1, seen, values);
      expect(round.coreset).toEqual(best.members);
      expect(round.coresetAccuracy[0]).toBeCloseTo(best.accuracy[0]!, 15);
      expect(seen.some((c) => members(c).join() === round.coreset.join())).toBe(true);
      coresets.push(round.coreset.join());
    }
    // The walks miss the global argmax {0, 2} on some seeds, so this is not the full-table search.
    expect(coresets.some((c) => c !== '0,2')).toBe(true);
  });

  it('works with a sampled estimator (own permutation sampler): within the Hoeffding bound, evaluations shared', async () => {
    const a = [
      [0.3, 0.0],
      [0.1, 0.2],
      [0.0, 0.5],
      [-0.1, 0.1],
      [0.2, 0.2],
      [0.05, -0.05],
    ];
    // Interactions, so the sampler has variance: class 0 gets a bonus when 0 and 1 meet.
    const game = vectorGame(6, 2, (c) => {
      const r = [0, 0];
      for (const i of members(c)) for (let d = 0; d < 2; d++) r[d]! += a[i]![d]!;
      if (has(c, 0) && has(c, 1)) r[0]! += 0.4;
      return r;
    });
    const m = 3000;
    const estimator: ClassEstimator = (g, { rng }) => permutationShapley(g, m, rng);
    const sampled = await maverickShapleyRound(game, estimator, { temperature: 0.2, seed: 11 });
    const oracle = await maverickShapleyRound(game, exact, { temperature: 0.2 });
    // Marginals of class 0 lie in [a_i, a_i + 0.4] for players 0 and 1 (width 0.4), are constant otherwise;
    // class 1 is additive. Hoeffding + union over 12 (player, class) pairs at δ = 1e-6.
    const tol = 0.4 * Math.sqrt(Math.log((2 * 12) / 1e-6) / (2 * m));
    for (let k = 0; k < 12; k++) expect(Math.abs(sampled.phi[k]! - oracle.phi[k]!)).toBeLessThanOrEqual(tol);
    expect(Math.abs(sampled.phi[0]! - 0.5)).toBeLessThanOrEqual(tol); // φ_0^0 = 0.3 + 0.4/2
    // Same seed per class → the same permutations → class 1 asks for nothing new.
    const seen = new Set<string>();
    const rng = createRng(11);
    for (let p = 0; p < m; p++) {
      const perm = randomPermutation(rng, 6);
      let c = emptyCoalition(6);
      seen.add(coalitionKey(c));
      for (const i of perm) {
        c = withPlayer(c, i);
        seen.add(coalitionKey(c));
      }
    }
    expect(sampled.evaluations).toBe(seen.size);
    expect(game.total()).toBe(seen.size + 64); // + the exact run's 64, each coalition reaching the game once per run
  });

  it('works with the Monte Carlo estimator of scoring/monte-carlo.ts; same seed → same output', async () => {
    const game = additiveVectorGame(
      [
        [0.2, 0.1],
        [0.1, 0.3],
        [0.0, 0.05],
        [0.15, 0.0],
      ],
      [0.1, 0.1],
    );
    const estimator: ClassEstimator = (g, { rng }) => monteCarloShapley(g, { budget: 12, rng });
    const r1 = await maverickShapleyRound(game, estimator, { temperature: 0.1, seed: 3 });
    const r2 = await maverickShapleyRound(game, estimator, { temperature: 0.1, seed: 3 });
    expect(Array.from(r1.phi)).toEqual(Array.from(r2.phi));
    // Additive: every permutation gives each player exactly a_i^c, so even a tiny budget is exact.
    expect(r1.phi[1 * 2 + 1]).toBeCloseTo(0.3, 12);
    // Both classes run under budget 12 on the same permutations: the vector game sees ≤ 12 coalitions.
    expect(r1.evaluations).toBeLessThanOrEqual(12);
    expect(r1.stderr).toBeDefined();
  });

  it('MS-GTG: gtgShapley per class values the Maverick scenario exactly where every walk agrees', async () => {
    // Same scenario as above. In every permutation client 3's class-2 marginal is 0.3 and its
    // class-0/1 marginals are 0, and clients 0–2 never move class 2: those entries are exact for
    // any number of walks. Without within-round truncation each walk telescopes, so every class is
    // efficient. The class-0/1 split among clients 0–2 is sampled (only its sum is checked).
    const game = vectorGame(4, 3, (c) => {
      const common = [0, 1, 2].some((i) => has(c, i)) ? 0.9 : 0.1;
      return [common, common, has(c, 3) ? 0.3 : 0];
    });
    const estimator: ClassEstimator = (g, { rng }) => gtgShapley(g, { budget: 16, rng });
    const round = await maverickShapleyRound(game, estimator, { temperature: 0.1, seed: 5 });
    expect(row(round.phi, 3, 3).map((x) => +x.toFixed(12))).toEqual([0, 0, 0.3]);
    for (let i = 0; i < 3; i++) expect(round.phi[i * 3 + 2]).toBe(0);
    for (const c of [0, 1])
      expect(round.phi[c]! + round.phi[3 + c]! + round.phi[6 + c]!).toBeCloseTo(0.8, 12);
    expect(round.evaluations).toBeLessThanOrEqual(16);
    const scores = maverickScores(round.phi, round.beta); // one round with α = 0: S = φ
    expect(scores[3]).toBe(Math.max(...scores));
  });

  it('same seed → same output, other seed → other output (sampled estimator)', async () => {
    const game = vectorGame(5, 2, (c) => {
      const k = members(c).length;
      return [k >= 3 ? 1 : 0, has(c, 0) && has(c, 4) ? 1 : 0];
    });
    const estimator: ClassEstimator = (g, { rng }) => permutationShapley(g, 5, rng);
    const run = async (seed: number) =>
      Array.from((await maverickShapleyRound(game, estimator, { temperature: 1, seed })).phi);
    expect(await run(1)).toEqual(await run(1));
    expect(await run(1)).not.toEqual(await run(2));
  });

  it('the context carries the class, the seed and a fresh generator per class', async () => {
    const seen: { c: number; classes: number; seed: number; draw: number }[] = [];
    const game = additiveVectorGame([[1, 0, 0]], [0, 0, 0]);
    await maverickShapleyRound(
      game,
      async (g, ctx) => {
        seen.push({ c: ctx.classIndex, classes: ctx.classes, seed: ctx.seed, draw: ctx.rng.next() });
        return exactShapleyOfGame(g);
      },
      { temperature: 1, seed: 42 },
    );
    const first = createRng(42).next();
    expect(seen).toEqual([0, 1, 2].map((c) => ({ c, classes: 3, seed: 42, draw: first })));
  });

  it('between-round truncation: no estimator run and φ = 0 when no class moves more than ε_b', async () => {
    let runs = 0;
    const counting: ClassEstimator = (g) => {
      runs++;
      return exactShapleyOfGame(g);
    };
    const flat = vectorGame(3, 2, (c) => [0.5 + 0.001 * members(c).length, 0.4]);
    const r = await maverickShapleyRound(flat, counting, { temperature: 0.1, betweenRoundEpsilon: 0.01 });
    expect(r.truncated).toBe(true);
    expect(runs).toBe(0);
    expect(Array.from(r.phi)).toEqual([0, 0, 0, 0, 0, 0]);
    expect(r.evaluations).toBe(2); // v(∅), v(N)
    expect(r.coreset).toEqual([0, 1, 2]);
    // One class moving by more than ε_b (max norm) is enough to run.
    const oneClass = vectorGame(3, 2, (c) => [0.5, 0.4 + 0.01 * members(c).length]);
    const r2 = await maverickShapleyRound(oneClass, counting, {
      temperature: 0.1,
      betweenRoundEpsilon: 0.02,
    });
    expect(r2.truncated).toBe(false);
    expect(runs).toBe(2);
  });

  it('rejects bad games, estimates and options naming the field', async () => {
    const game = additiveVectorGame([[1], [2]], [0]);
    await expect(maverickShapleyRound(game, exact, { temperature: 0 })).rejects.toThrow(/^temperature/);
    await expect(maverickShapleyRound(game, exact, { temperature: 1, seed: Number.NaN })).rejects.toThrow(
      /^seed/,
    );
    await expect(
      maverickShapleyRound(game, exact, { temperature: 1, betweenRoundEpsilon: -1 }),
    ).rejects.toThrow(/^betweenRoundEpsilon/);
    await expect(maverickShapleyRound({ ...game, dims: 0 }, exact, { temperature: 1 })).rejects.toThrow(
      /^game\.dims/,
    );
    await expect(
      maverickShapleyRound(game, 'x' as unknown as ClassEstimator, { temperature: 1 }),
    ).rejects.toThrow(TypeError);
    const short: ClassEstimator = async () => ({ values: new Float64Array(1), evaluations: 0 });
    await expect(maverickShapleyRound(game, short, { temperature: 1 })).rejects.toThrow(/^estimator/);
    const nan: ClassEstimator = async () => ({ values: Float64Array.of(0, Number.NaN), evaluations: 0 });
    await expect(maverickShapleyRound(game, nan, { temperature: 1 })).rejects.toThrow(RangeError);
    const broken = vectorGame(2, 1, () => [Number.NaN]);
    await expect(maverickShapleyRound(broken, exact, { temperature: 1 })).rejects.toThrow(/^game/);
  });
});
