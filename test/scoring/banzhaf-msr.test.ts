/**
 * Tests of scoring/banzhaf-msr.ts (Data Banzhaf by maximum sample reuse, Wang & Jia 2023).
 *
 * Tolerance: β̂_i = mean_in − mean_out, each a mean of i.i.d. values v(S) of uniform subsets
 * with (resp. without) i, all in [min v, max v] (range R). With K subsets, K_in, K_out ≥
 * K_min = K/2 − √(K·ln(4n/δ)/2) except with probability δ/2 (Hoeffding on the binomial counts,
 * union over players and both sides); then Hoeffding on each mean with δ/(4n):
 *   |β̂_i − β_i| ≤ 2R·√(ln(8n/δ)/(2·K_min)),  δ = 1e-6.
 */
import { describe, expect, it } from 'vitest';
import { msrBanzhaf } from '../../scoring/banzhaf-msr.js';
import { coalitionTable, gameFromTable } from '../../scoring/game.js';
import {
  additiveGame,
  gloveGame,
  type KnownGame,
  paper003Example2,
  symmetricVotingGame,
  unanimityGame,
} from '../../scoring/games.js';
import { createRng } from '../../scoring/seeded-rng.js';
import { exactBanzhaf } from '../../scoring/shapley.js';
import { counting, DELTA, syntheticTable } from './_oracles.js';

function tolerance(table: Float64Array, n: number, K: number): number {
  const R = Math.max(...table) - Math.min(...table);
  const kMin = K / 2 - Math.sqrt((K * Math.log((4 * n) / DELTA)) / 2);
  expect(kMin).toBeGreaterThan(0);
  return 2 * R * Math.sqrt(Math.log((8 * n) / DELTA) / (2 * kMin));
}

async function check(n: number, table: Float64Array, banzhaf: Float64Array, budget: number, seed: number) {
  const est = await msrBanzhaf(gameFromTable(n, table), { budget, rng: createRng(seed) });
  const tol = tolerance(table, n, est.samples);
  for (let i = 0; i < n; i++) expect(Math.abs(est.values[i]! - banzhaf[i]!)).toBeLessThanOrEqual(tol);
  return { est, tol };
}

describe('msrBanzhaf: closed-form Banzhaf values (Hoeffding, δ = 1e-6)', () => {
  it.each<[string, KnownGame]>([
    ['additive(5)', additiveGame([1, -2, 0, 3, 0.5])],
    ['voting(9)', symmetricVotingGame(9)],
    ['unanimity(8; 1,3,5)', unanimityGame(8, [1, 3, 5])],
    ['paper003 Example 2', paper003Example2()],
  ])('%s', async (_name, known) => {
    const n = known.game.n;
    const table = await coalitionTable(known.game);
    // Budget 2^n: every subset may be evaluated; samples are capped at 10·budget (≥ 1000).
    const { est, tol } = await check(n, table, known.banzhaf!, 2 ** n, 5);
    // Null player: β = 0, and the estimate is within the same bound (MSR keeps it only in mean).
    for (const i of known.nullPlayers) expect(Math.abs(est.values[i]!)).toBeLessThanOrEqual(tol);
  });

  it('glove(3+3) and a random 12-player game, against exactBanzhaf', async () => {
    const glove = await coalitionTable(gloveGame(3).game);
    await check(6, glove, exactBanzhaf(6, glove), 64, 2);
    const table = syntheticTable(12, 41);
    const { est } = await check(12, table, exactBanzhaf(12, table), 3000, 3);
    expect(est.samples).toBeGreaterThanOrEqual(3000);
  });
});

describe('msrBanzhaf: axioms, seeds, budget', () => {
  it('symmetry: voting players agree within twice the bound', async () => {
    const table = await coalitionTable(symmetricVotingGame(10).game);
    const est = await msrBanzhaf(gameFromTable(10, table), { budget: 1024, rng: createRng(7) });
    const tol = 2 * tolerance(table, 10, est.samples);
    for (let i = 1; i < 10; i++) expect(Math.abs(est.values[i]! - est.values[0]!)).toBeLessThanOrEqual(tol);
  });

  it('stderr is the standard error of the difference of the two means (order of magnitude)', async () => {
    const table = syntheticTable(10, 4);
    const est = await msrBanzhaf(gameFromTable(10, table), { budget: 800, rng: createRng(1) });
    const R = Math.max(...table) - Math.min(...table);
    for (const s of est.stderr) {
      expect(s).toBeGreaterThan(0);
      expect(s).toBeLessThanOrEqual(R * Math.sqrt(2 / (est.samples / 4))); // sd ≤ R/2 on each side
    }
  });

  it('same seed → same output; other seed → other output', async () => {
    const g = gameFromTable(9, syntheticTable(9, 3));
    const a = await msrBanzhaf(g, { budget: 200, rng: createRng(1) });
    expect((await msrBanzhaf(g, { budget: 200, rng: createRng(1) })).values).toEqual(a.values);
    expect((await msrBanzhaf(g, { budget: 200, rng: createRng(2) })).values).not.toEqual(a.values);
  });

  it('budget: a counting game sees at most `budget` coalitions; below 2^n it sees exactly that many', async () => {
    for (const budget of [1, 17, 500, 1023]) {
      const g = counting(gameFromTable(10, syntheticTable(10, 9)));
      const est = await msrBanzhaf(g, { budget, rng: createRng(budget), batchSize: 64 });
      expect(g.calls).toBe(budget);
      expect(est.evaluations).toBe(budget);
    }
    const small = counting(gameFromTable(3, syntheticTable(3, 1)));
    const est = await msrBanzhaf(small, { budget: 100, rng: createRng(1) });
    expect(small.calls).toBe(8); // all 2^3 subsets, then free samples up to maxSamples
    expect(est.samples).toBe(1000);
  });

  it('input checks name the parameter', async () => {
    const g = gloveGame(2).game;
    await expect(msrBanzhaf(g, { budget: 0, rng: createRng(1) })).rejects.toThrow(/^budget/);
    await expect(msrBanzhaf(g, { budget: 5, rng: createRng(1), batchSize: 0 })).rejects.toThrow(/^batchSize/);
    await expect(msrBanzhaf(g, { budget: 5, rng: null as never })).rejects.toThrow(TypeError);
  });
});
