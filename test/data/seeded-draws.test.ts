import { describe, expect, it } from 'vitest';
import { createRandom, mixSeed } from '../../src/data/seeded-draws.js';

/** Mean and variance of m draws. */
function moments(m: number, draw: () => number): { mean: number; variance: number } {
  let s = 0;
  let s2 = 0;
  for (let i = 0; i < m; i++) {
    const v = draw();
    s += v;
    s2 += v * v;
  }
  const mean = s / m;
  return { mean, variance: s2 / m - mean * mean };
}

describe('data/seeded-draws', () => {
  it('is deterministic per seed and differs across seeds', () => {
    const a = createRandom(42);
    const b = createRandom(42);
    const c = createRandom(43);
    const xa = Array.from({ length: 8 }, () => a.uint32());
    expect(Array.from({ length: 8 }, () => b.uint32())).toEqual(xa);
    expect(Array.from({ length: 8 }, () => c.uint32())).not.toEqual(xa);
    expect(mixSeed(1, 2)).not.toBe(mixSeed(2, 1));
    expect(() => createRandom(Number.NaN)).toThrow(/^seed: /);
  });

  // Tolerances: 6 standard errors of the sample mean (σ/√m); for the variance, 6 standard
  // errors with Var(s²) ≈ (μ4 − σ⁴)/m, μ4 taken from the named distribution.
  const m = 100_000;

  it('uniform has mean 1/2 and variance 1/12', () => {
    const r = createRandom(1);
    const { mean, variance } = moments(m, r.uniform);
    expect(Math.abs(mean - 0.5)).toBeLessThan(6 * Math.sqrt(1 / 12 / m));
    // μ4 = 1/80 for U(0,1).
    expect(Math.abs(variance - 1 / 12)).toBeLessThan(6 * Math.sqrt((1 / 80 - 1 / 144) / m));
  });

  it('normal has mean 0 and variance 1', () => {
    const r = createRandom(2);
    const { mean, variance } = moments(m, r.normal);
    expect(Math.abs(mean)).toBeLessThan(6 / Math.sqrt(m));
    expect(Math.abs(variance - 1)).toBeLessThan(6 * Math.sqrt(2 / m)); // μ4 = 3
  });

  it.each([0.1, 0.5, 1, 3.7])('gamma(%f) has mean and variance equal to its shape', (k) => {
    const r = createRandom(3);
    const { mean, variance } = moments(m, () => r.gamma(k));
    expect(Math.abs(mean - k)).toBeLessThan(6 * Math.sqrt(k / m));
    // Gamma(k): μ4 = 3k² + 6k, so Var(s²) ≈ (3k² + 6k − k²)/m.
    expect(Math.abs(variance - k)).toBeLessThan(6 * Math.sqrt((2 * k * k + 6 * k) / m));
  });

  it('dirichlet sums to 1 and has mean α_i/α_0, even for α = 0.01 (no 0/0)', () => {
    const r = createRandom(4);
    const alpha = [0.5, 1, 2.5];
    const a0 = 4;
    const sums = [0, 0, 0];
    const draws = 20_000;
    for (let t = 0; t < draws; t++) {
      const p = r.dirichlet(alpha);
      expect(Math.abs(p[0]! + p[1]! + p[2]! - 1)).toBeLessThan(1e-12);
      for (let i = 0; i < 3; i++) sums[i]! += p[i]!;
    }
    alpha.forEach((a, i) => {
      const mean = a / a0;
      const sd = Math.sqrt((mean * (1 - mean)) / (a0 + 1) / draws);
      expect(Math.abs(sums[i]! / draws - mean)).toBeLessThan(6 * sd);
    });
    const tiny = r.dirichlet(new Array(100).fill(0.01));
    expect(tiny.every((v) => Number.isFinite(v) && v >= 0)).toBe(true);
    expect(tiny.reduce((s, v) => s + v, 0)).toBeCloseTo(1, 12);
  });

  it('permutation is a permutation', () => {
    const p = createRandom(5).permutation(1000);
    expect(Array.from(p).sort((a, b) => a - b)).toEqual(Array.from({ length: 1000 }, (_, i) => i));
  });
});
