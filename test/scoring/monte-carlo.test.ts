/**
 * Tests of scoring/monte-carlo.ts (MC permutation sampling and TMC).
 *
 * Oracles: closed-form games (scoring/games.ts) and exact Shapley of a random 12-player game.
 * Tolerances: each walk gives player i one marginal in [lo_i, hi_i] (taken from the full table),
 * walks are i.i.d., so by Hoeffding |φ̂_i − φ_i| ≤ (hi_i − lo_i)·√(ln(2/δ')/(2K)) with probability
 * ≥ 1 − δ', K walks; δ' = δ/n (union bound over players), δ = 1e-6. Airport: Bernstein on each
 * group's mean with the exact per-permutation variance (see _oracles.ts).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { coalitionTable, gameFromTable, memoize } from '../../scoring/game.js';
import {
  AIRPORT_GROUPS,
  additiveGame,
  airportGame,
  gloveGame,
  type KnownGame,
  paper003Example2,
  symmetricVotingGame,
  unanimityGame,
} from '../../scoring/games.js';
import { monteCarloShapley, truncatedMonteCarloShapley } from '../../scoring/monte-carlo.js';
import { createRng } from '../../scoring/seeded-rng.js';
import { exactShapley } from '../../scoring/shapley.js';
import { afterSamples } from '../../scoring/stopping.js';
import {
  airportGroupMoments,
  bernstein,
  counting,
  DELTA,
  hoeffding,
  marginalRanges,
  syntheticTable,
} from './_oracles.js';

async function checkAgainst(
  known: { n: number; table: Float64Array; shapley: Float64Array },
  budget: number,
  seed: number,
) {
  const { n, table, shapley } = known;
  const est = await monteCarloShapley(gameFromTable(n, table), { budget, rng: createRng(seed) });
  const { lo, hi } = marginalRanges(n, table);
  expect(est.samples).toBeGreaterThan(10);
  for (let i = 0; i < n; i++) {
    const tol = hoeffding(hi[i]! - lo[i]!, est.samples, DELTA / n) + 1e-12;
    expect(Math.abs(est.values[i]! - shapley[i]!)).toBeLessThanOrEqual(tol);
  }
  return est;
}

async function tableOf(k: KnownGame) {
  return { n: k.game.n, table: await coalitionTable(k.game), shapley: k.shapley };
}

describe('monteCarloShapley: closed-form games (Hoeffding, δ = 1e-6)', () => {
  it.each([
    ['glove(3+3)', gloveGame(3)],
    ['voting(9)', symmetricVotingGame(9)],
    ['unanimity(8; 1,3,5)', unanimityGame(8, [1, 3, 5])],
    ['paper003 Example 2', paper003Example2()],
  ])('%s', async (_name, known) => {
    const t = await tableOf(known);
    // Budget 2^n covers every coalition; walks are capped by maxSamples (default 1000).
    const est = await checkAgainst(t, 2 ** t.n, 7);
    for (const i of known.nullPlayers) expect(est.values[i]).toBe(0); // null player: every marginal is 0
  });

  it('a random non-additive 12-player game, against exactShapley', async () => {
    const n = 12;
    const table = syntheticTable(n, 11);
    const est = await checkAgainst({ n, table, shapley: exactShapley(n, table) }, 6000, 3);
    expect(est.evaluations).toBeLessThanOrEqual(6000);
  });

  it('additive game: every walk gives each player its weight, so the estimate is exact', async () => {
    const k = additiveGame([0.5, -1, 2, 0, 3.25]);
    const est = await monteCarloShapley(k.game, { budget: 32, rng: createRng(1) });
    for (let i = 0; i < 5; i++) {
      expect(est.values[i]).toBeCloseTo(k.shapley[i]!, 12);
      expect(est.stderr[i]).toBeCloseTo(0, 12);
    }
  });

  it('airport (100 players): group means within Bernstein bounds from the exact variances', async () => {
    const known = airportGame();
    const est = await monteCarloShapley(known.game, { budget: 200_000, rng: createRng(5), maxSamples: 1000 });
    expect(est.samples).toBe(1000);
    const { mean, variance, bound } = airportGroupMoments();
    let start = 0;
    AIRPORT_GROUPS.forEach((g, j) => {
      let s = 0;
      for (let i = start; i < start + g; i++) s += est.values[i]!;
      start += g;
      expect(mean[j]).toBeCloseTo(known.shapley[start - 1]!, 12); // the oracle agrees with the closed form
      const tol = bernstein(variance[j]!, bound[j]!, est.samples, DELTA / AIRPORT_GROUPS.length);
      expect(Math.abs(s / g - mean[j]!)).toBeLessThanOrEqual(tol);
    });
    // Efficiency holds per walk: Σ φ̂ = v(N) − v(∅) = 10.
    expect(est.values.reduce((a, b) => a + b, 0)).toBeCloseTo(10, 9);
  });
});

describe('monteCarloShapley: axioms, seeds, budget', () => {
  it('efficiency: Σ φ̂ = v(N) − v(∅) for any random table game and seed (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.integer({ min: 8, max: 200 }),
        async (n, seed, budget) => {
          const rng = createRng(seed);
          const table = Float64Array.from({ length: 2 ** n }, () => rng.next() * 10 - 5);
          const est = await monteCarloShapley(gameFromTable(n, table), { budget, rng: createRng(seed + 1) });
          const sum = est.values.reduce((a, b) => a + b, 0);
          expect(sum).toBeCloseTo(table[2 ** n - 1]! - table[0]!, 9);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('efficiency on random additive games: φ̂ = w exactly (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.double({ min: -100, max: 100, noNaN: true }), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 0, max: 1000 }),
        async (w, seed) => {
          const k = additiveGame(w);
          const est = await monteCarloShapley(k.game, { budget: 4 * w.length + 2, rng: createRng(seed) });
          for (let i = 0; i < w.length; i++) expect(est.values[i]!).toBeCloseTo(w[i]!, 9);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('symmetry: symmetric players of the glove game get equal values within the bound', async () => {
    const t = await tableOf(gloveGame(4));
    const est = await monteCarloShapley(gameFromTable(8, t.table), { budget: 256, rng: createRng(9) });
    const tol = 2 * hoeffding(1, est.samples, DELTA / 8);
    for (let i = 1; i < 8; i++) expect(Math.abs(est.values[i]! - est.values[0]!)).toBeLessThanOrEqual(tol);
  });

  it('same seed → same output; other seed → other output', async () => {
    const g = gameFromTable(10, syntheticTable(10, 2));
    const a = await monteCarloShapley(g, { budget: 400, rng: createRng(42) });
    const b = await monteCarloShapley(g, { budget: 400, rng: createRng(42) });
    const c = await monteCarloShapley(g, { budget: 400, rng: createRng(43) });
    expect(b.values).toEqual(a.values);
    expect(b.evaluations).toBe(a.evaluations);
    expect(c.values).not.toEqual(a.values);
  });

  it('budget: a counting game sees at most `budget` coalitions, and the budget is nearly used', async () => {
    for (const budget of [2, 3, 57, 337, 1000]) {
      const g = counting(gameFromTable(10, syntheticTable(10, 4)));
      const est = await monteCarloShapley(g, { budget, rng: createRng(budget) });
      expect(g.calls).toBeLessThanOrEqual(budget);
      expect(est.evaluations).toBe(g.calls);
      // A walk costs at most n − 1 = 9 new coalitions (v(N) is known), so ≥ budget − 9 is spent.
      expect(g.calls).toBeGreaterThan(budget - 10);
    }
  });

  it('budget counts distinct evaluations of a game that is already memoized', async () => {
    const memo = memoize(gameFromTable(8, syntheticTable(8, 5)));
    const est = await monteCarloShapley(memo, { budget: 100, rng: createRng(1) });
    expect(memo.evaluations).toBe(est.evaluations);
    expect(est.evaluations).toBeLessThanOrEqual(100);
  });

  it('a stopping rule ends the run early', async () => {
    const g = gameFromTable(10, syntheticTable(10, 6));
    const est = await monteCarloShapley(g, { budget: 5000, rng: createRng(1), stop: afterSamples(7) });
    expect(est.samples).toBe(7);
  });

  it('input checks name the parameter', async () => {
    const g = gloveGame(2).game;
    await expect(monteCarloShapley(g, { budget: 0, rng: createRng(1) })).rejects.toThrow(/^budget/);
    await expect(monteCarloShapley(g, { budget: 10, rng: {} as never })).rejects.toThrow(TypeError);
    await expect(monteCarloShapley(g, { budget: 10, rng: createRng(1), tolerance: -1 })).rejects.toThrow(
      /^tolerance/,
    );
    await expect(monteCarloShapley({ n: 0 } as never, { budget: 10, rng: createRng(1) })).rejects.toThrow(
      /^game/,
    );
  });
});

describe('truncatedMonteCarloShapley', () => {
  it('voting(12): walks stop at the quota (later marginals are truly 0), saving evaluations, unbiased', async () => {
    const known = symmetricVotingGame(12);
    const t = await tableOf(known);
    const mc = await monteCarloShapley(gameFromTable(12, t.table), {
      budget: 100_000,
      rng: createRng(3),
      maxSamples: 300,
    });
    const tmc = await truncatedMonteCarloShapley(gameFromTable(12, t.table), {
      budget: 100_000,
      rng: createRng(3),
      maxSamples: 300,
      tolerance: 1e-9,
      chunkSize: 1,
    });
    expect(tmc.samples).toBe(300);
    expect(tmc.evaluations).toBeLessThan(mc.evaluations);
    const tol = hoeffding(1, tmc.samples, DELTA / 12);
    for (let i = 0; i < 12; i++) expect(Math.abs(tmc.values[i]! - 1 / 12)).toBeLessThanOrEqual(tol);
    expect(tmc.values.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 9);
  });

  it('monotone game: bias in (−ε, 0] per player, efficiency within ε (random 10-player game)', async () => {
    // v(S) = √(Σ w) is monotone: after truncation (v(N) − v(prefix) < ε) every skipped marginal
    // is in [0, ε), so E[φ̂_i] ∈ (φ_i − ε, φ_i]; tolerance = Hoeffding + ε.
    const n = 10;
    const w = Array.from({ length: n }, (_, i) => 1 + i);
    const table = Float64Array.from({ length: 2 ** n }, (_, m) => {
      let s = 0;
      for (let i = 0; i < n; i++) if ((m >>> i) & 1) s += w[i]!;
      return Math.sqrt(s);
    });
    const eps = 0.3;
    const est = await truncatedMonteCarloShapley(gameFromTable(n, table), {
      budget: 2 ** n,
      rng: createRng(8),
      tolerance: eps,
    });
    const exact = exactShapley(n, table);
    const { lo, hi } = marginalRanges(n, table);
    for (let i = 0; i < n; i++) {
      const tol = hoeffding(hi[i]! - lo[i]!, est.samples, DELTA / n) + eps;
      expect(Math.abs(est.values[i]! - exact[i]!)).toBeLessThanOrEqual(tol);
    }
    const gap = table[2 ** n - 1]! - table[0]! - est.values.reduce((a, b) => a + b, 0);
    expect(gap).toBeGreaterThanOrEqual(-1e-12);
    expect(gap).toBeLessThan(eps);
  });

  it('requires a tolerance', () => {
    expect(() =>
      truncatedMonteCarloShapley(gloveGame(2).game, { budget: 10, rng: createRng(1) } as never),
    ).toThrow(/^tolerance/);
  });
});
