/**
 * Tests of scoring/gtg.ts (GTG-Shapley, papers/000 Alg. 1, Eq. 11), with
 * scoring/permutation-sampler.ts and scoring/stopping.ts.
 *
 * Tolerances: over one block of n guided permutations player i leads once (predecessor set ∅)
 * and, in the other n − 1, stands at a uniform position 1..n−1 behind uniform others, so its
 * block-mean marginal is an unbiased estimate of φ_i lying in [lo_i, hi_i]. Blocks are i.i.d.:
 * Hoeffding over B whole blocks, |φ̂_i − φ_i| ≤ (hi_i − lo_i)·√(ln(2/δ')/(2B)), δ' = 1e-6/n.
 * Within-round truncation on a monotone game adds a bias in (−ε_i, 0].
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { coalitionTable, gameFromFunction, gameFromTable } from '../../scoring/game.js';
import {
  additiveGame,
  gloveGame,
  type KnownGame,
  paper003Example2,
  symmetricVotingGame,
  unanimityGame,
} from '../../scoring/games.js';
import { gtgShapley } from '../../scoring/gtg.js';
import { guidedPermutations, uniformPermutations } from '../../scoring/permutation-sampler.js';
import { createRng } from '../../scoring/seeded-rng.js';
import { exactShapley } from '../../scoring/shapley.js';
import { afterSamples, anyOf, gtgConvergence, never } from '../../scoring/stopping.js';
import { counting, DELTA, hoeffding, marginalRanges, syntheticTable } from './_oracles.js';

async function againstExact(
  n: number,
  table: Float64Array,
  shapley: Float64Array,
  blocks: number,
  seed: number,
) {
  const est = await gtgShapley(gameFromTable(n, table), {
    budget: 1_000_000,
    rng: createRng(seed),
    stop: afterSamples(blocks * n),
  });
  expect(est.samples).toBe(blocks * n);
  const { lo, hi } = marginalRanges(n, table);
  for (let i = 0; i < n; i++) {
    const tol = hoeffding(hi[i]! - lo[i]!, blocks, DELTA / n) + 1e-12;
    expect(Math.abs(est.values[i]! - shapley[i]!)).toBeLessThanOrEqual(tol);
  }
  return est;
}

describe('guidedPermutations', () => {
  it('each block of n: permutations of 0..n−1, player i leads the i-th', () => {
    const it = guidedPermutations(7, createRng(1));
    for (let block = 0; block < 5; block++)
      for (let lead = 0; lead < 7; lead++) {
        const p = it.next().value!;
        expect(p[0]).toBe(lead);
        expect([...p].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6]);
      }
  });

  it('uniformPermutations are permutations; samplers check their input', () => {
    const p = uniformPermutations(5, createRng(2)).next().value!;
    expect([...p].sort()).toEqual([0, 1, 2, 3, 4]);
    expect(() => guidedPermutations(0, createRng(1)).next()).toThrow(/^n/);
  });
});

describe('gtgConvergence (papers/000 Eq. 11)', () => {
  it('is not met while r ≤ m, then met on a constant estimate', () => {
    const check = gtgConvergence({ history: 3 }).start(2);
    const v = Float64Array.from([1, 2]);
    const seen = [1, 2, 3, 4].map((samples) => check({ samples, values: v, evaluations: 0 }));
    expect(seen).toEqual([false, false, false, true]);
  });

  it('computes the mean relative change over the last m estimates', () => {
    // m = 1, n = 2: (|1.1 − 1|/1.1 + |2 − 2|/2)/2 = 0.04545… < 0.05, but 1.2: 0.0833 > 0.05.
    const a = gtgConvergence({ history: 1 }).start(2);
    a({ samples: 1, values: Float64Array.from([1, 2]), evaluations: 0 });
    expect(a({ samples: 2, values: Float64Array.from([1.1, 2]), evaluations: 0 })).toBe(true);
    const b = gtgConvergence({ history: 1 }).start(2);
    b({ samples: 1, values: Float64Array.from([1, 2]), evaluations: 0 });
    expect(b({ samples: 2, values: Float64Array.from([1.2, 2]), evaluations: 0 })).toBe(false);
  });

  it('anyOf combines rules; option checks name the parameter', () => {
    const c = anyOf(never, afterSamples(2)).start(1);
    expect(c({ samples: 1, values: new Float64Array(1), evaluations: 0 })).toBe(false);
    expect(c({ samples: 2, values: new Float64Array(1), evaluations: 0 })).toBe(true);
    expect(() => gtgConvergence({ history: 0 })).toThrow(/^history/);
    expect(() => gtgConvergence({ tolerance: -1 })).toThrow(/^tolerance/);
    expect(() => anyOf()).toThrow(/^rules/);
  });
});

describe('gtgShapley: closed-form games (Hoeffding over whole blocks, δ = 1e-6)', () => {
  it.each<[string, KnownGame]>([
    ['glove(3+3)', gloveGame(3)],
    ['voting(9)', symmetricVotingGame(9)],
    ['unanimity(8; 0,2,4)', unanimityGame(8, [0, 2, 4])],
    ['paper003 Example 2', paper003Example2()],
  ])('%s', async (_name, known) => {
    const n = known.game.n;
    const est = await againstExact(n, await coalitionTable(known.game), known.shapley, 150, 4);
    for (const i of known.nullPlayers) expect(est.values[i]).toBe(0);
  });

  it('a random non-additive 12-player game, against exactShapley', async () => {
    const table = syntheticTable(12, 21);
    await againstExact(12, table, exactShapley(12, table), 60, 5);
  });
});

describe('gtgShapley: truncation, convergence, axioms, seeds, budget', () => {
  it('between-round truncation: |v(N) − v(∅)| ≤ ε_b values nothing, with 2 evaluations', async () => {
    const g = counting(gameFromFunction(6, (c) => 0.5 + 0.001 * (c[0]! % 3)));
    const est = await gtgShapley(g, { budget: 1000, rng: createRng(1), betweenRoundTolerance: 0.01 });
    expect(est.values).toEqual(new Float64Array(6));
    expect(est.evaluations).toBe(2);
    expect(g.calls).toBe(2);
  });

  it('within-round truncation on a monotone game: bias in (−ε_i, 0], efficiency within ε_i', async () => {
    const n = 10;
    const table = Float64Array.from({ length: 2 ** n }, (_, m) => {
      let s = 0;
      for (let i = 0; i < n; i++) if ((m >>> i) & 1) s += 1 + i;
      return Math.sqrt(s);
    });
    const eps = 0.3;
    const opts = { budget: 1_000_000, stop: afterSamples(100 * n), maxSamples: 100 * n };
    const plain = await gtgShapley(gameFromTable(n, table), { ...opts, rng: createRng(2) });
    const cut = await gtgShapley(gameFromTable(n, table), {
      ...opts,
      rng: createRng(2),
      withinRoundTolerance: eps,
      chunkSize: 1,
    });
    expect(plain.samples).toBe(cut.samples);
    const exact = exactShapley(n, table);
    const { lo, hi } = marginalRanges(n, table);
    for (let i = 0; i < n; i++) {
      const tol = hoeffding(hi[i]! - lo[i]!, 100, DELTA / n) + eps;
      expect(Math.abs(cut.values[i]! - exact[i]!)).toBeLessThanOrEqual(tol);
    }
    const gap = table[2 ** n - 1]! - table[0]! - cut.values.reduce((a, b) => a + b, 0);
    expect(gap).toBeGreaterThanOrEqual(-1e-12);
    expect(gap).toBeLessThan(eps);
  });

  it('within-round truncation saves evaluations where the game saturates, without bias there', async () => {
    // v(S) = min(1, Σ_{i∈S} (i+1)/20): once a prefix reaches 1 = v(N) every later marginal is
    // exactly 0, so truncation with a tiny ε_i skips those prefixes and changes no marginal.
    const n = 10;
    const table = Float64Array.from({ length: 2 ** n }, (_, m) => {
      let s = 0;
      for (let i = 0; i < n; i++) if ((m >>> i) & 1) s += (i + 1) / 20;
      return Math.min(1, s);
    });
    const few = { budget: 1_000_000, stop: afterSamples(3 * n), chunkSize: 1 };
    const plain = await gtgShapley(gameFromTable(n, table), { ...few, rng: createRng(2) });
    const cut = await gtgShapley(gameFromTable(n, table), {
      ...few,
      rng: createRng(2),
      withinRoundTolerance: 1e-9,
    });
    expect(cut.evaluations).toBeLessThan(0.7 * plain.evaluations);
    expect(cut.values).toEqual(plain.values); // same permutations, same marginals
  });

  it('Eq. 11 stops a converging run early, at a block boundary', async () => {
    const k = additiveGame([1, 2, 3, 4, 5]); // every walk gives the exact values: converged at once
    const est = await gtgShapley(k.game, { budget: 10_000, rng: createRng(3) });
    expect(est.samples % 5).toBe(0);
    expect(est.samples).toBe(10); // m = 5 estimates needed, tested at the end of block 2
    const long = await gtgShapley(gameFromTable(8, syntheticTable(8, 1)), {
      budget: 256,
      rng: createRng(3),
      stop: gtgConvergence({ tolerance: 0 }),
    });
    expect(long.samples).toBe(1000); // tolerance 0 is never met: maxSamples ends the run
  });

  it('efficiency without truncation: Σ φ̂ = v(N) − v(∅) (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 0, max: 1e6 }), async (n, seed) => {
        const rng = createRng(seed);
        const table = Float64Array.from({ length: 2 ** n }, () => rng.next() * 4 - 2);
        const est = await gtgShapley(gameFromTable(n, table), { budget: 64, rng: createRng(seed + 1) });
        expect(est.values.reduce((a, b) => a + b, 0)).toBeCloseTo(table[2 ** n - 1]! - table[0]!, 9);
      }),
      { numRuns: 40 },
    );
  });

  it('same seed → same output; other seed → other output', async () => {
    const g = gameFromTable(9, syntheticTable(9, 3));
    const run = (seed: number) => gtgShapley(g, { budget: 300, rng: createRng(seed), stop: never });
    const a = await run(1);
    expect((await run(1)).values).toEqual(a.values);
    expect((await run(2)).values).not.toEqual(a.values);
  });

  it('budget: a counting game sees at most `budget` coalitions, and the budget is nearly used', async () => {
    for (const budget of [2, 40, 333]) {
      for (const withinRoundTolerance of [0, 0.05]) {
        const g = counting(gameFromTable(10, syntheticTable(10, 9)));
        const est = await gtgShapley(g, {
          budget,
          rng: createRng(budget),
          stop: never,
          withinRoundTolerance,
        });
        expect(g.calls).toBeLessThanOrEqual(budget);
        expect(est.evaluations).toBe(g.calls);
        expect(g.calls).toBeGreaterThan(budget - 10);
      }
    }
  });

  it('input checks name the parameter', async () => {
    const g = gloveGame(2).game;
    await expect(gtgShapley(g, { budget: 10, rng: createRng(1), betweenRoundTolerance: -1 })).rejects.toThrow(
      /^betweenRoundTolerance/,
    );
    await expect(
      gtgShapley(g, { budget: 10, rng: createRng(1), withinRoundTolerance: Number.NaN }),
    ).rejects.toThrow(/^tolerance|^withinRoundTolerance/);
  });
});
