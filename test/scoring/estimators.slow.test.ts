/**
 * Slow sweep over seeds for the sampled estimators (not in the default suite; run with
 * `npm run test:slow`).
 *
 * On a random 12-player game, over 200 seeds: no run may exceed its Hoeffding bound at δ = 1e-6
 * (expected failures 200·1e-6), and the reported stderr must be calibrated: |φ̂_i − φ_i| ≤ 3·stderr_i
 * for at least 97% of (seed, player) pairs (a normal approximation gives 99.7%; the slack covers
 * the non-normal tails at K ≈ 100 walks).
 */
import { describe, expect, it } from 'vitest';
import { msrBanzhaf } from '../../scoring/banzhaf-msr.js';
import { gameFromTable } from '../../scoring/game.js';
import { monteCarloShapley } from '../../scoring/monte-carlo.js';
import { owenShapley } from '../../scoring/owen.js';
import { createRng } from '../../scoring/seeded-rng.js';
import { exactBanzhaf, exactShapley } from '../../scoring/shapley.js';
import { DELTA, hoeffding, marginalRanges, quadratureTarget, syntheticTable } from './_oracles.js';

const n = 12;
const table = syntheticTable(n, 77);
const shapley = exactShapley(n, table);
const banzhaf = exactBanzhaf(n, table);
const { lo, hi } = marginalRanges(n, table);
const SEEDS = 200;

describe('seed sweeps (slow)', () => {
  it('MC: within Hoeffding for every seed; stderr calibrated', async () => {
    let covered = 0;
    for (let s = 0; s < SEEDS; s++) {
      const est = await monteCarloShapley(gameFromTable(n, table), { budget: 1200, rng: createRng(s) });
      for (let i = 0; i < n; i++) {
        const err = Math.abs(est.values[i]! - shapley[i]!);
        expect(err).toBeLessThanOrEqual(hoeffding(hi[i]! - lo[i]!, est.samples, DELTA / n));
        if (err <= 3 * est.stderr[i]!) covered++;
      }
    }
    expect(covered / (SEEDS * n)).toBeGreaterThanOrEqual(0.97);
  });

  it('Owen (Q = 8): stderr calibrated around its exact quadrature target', async () => {
    let covered = 0;
    let target: Float64Array | null = null;
    for (let s = 0; s < SEEDS; s++) {
      const est = await owenShapley(gameFromTable(n, table), { budget: 2400, rng: createRng(s), levels: 8 });
      target ??= quadratureTarget(n, table, est.levels);
      for (let i = 0; i < n; i++) if (Math.abs(est.values[i]! - target[i]!) <= 3 * est.stderr[i]!) covered++;
    }
    expect(covered / (SEEDS * n)).toBeGreaterThanOrEqual(0.97);
  });

  it('MSR Banzhaf: stderr calibrated', async () => {
    let covered = 0;
    for (let s = 0; s < SEEDS; s++) {
      const est = await msrBanzhaf(gameFromTable(n, table), { budget: 1000, rng: createRng(s) });
      for (let i = 0; i < n; i++) if (Math.abs(est.values[i]! - banzhaf[i]!) <= 3 * est.stderr[i]!) covered++;
    }
    expect(covered / (SEEDS * n)).toBeGreaterThanOrEqual(0.97);
  });
});
