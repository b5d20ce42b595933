/**
 * Seeded draws for src/data: the distributions a partition, a noise model or a synthetic data set
 * needs (normals, gamma and Dirichlet variates, permutations), each from a seed, so the same seed
 * gives the same split on every machine (docs/architecture.md, "Conventions": no hidden
 * randomness).
 *
 * The generator is not this file's: it is the one seeded PRNG of the project,
 * scoring/seeded-rng.ts (xoshiro128**, Blackman & Vigna 2018), under this room's own salt, and
 * shuffles are its Fisher–Yates. What is added here: normals by Box–Muller; gamma variates by Marsaglia & Tsang (2000), with the
 * boost G(a) = G(a+1)·U^(1/a) for a < 1, carried in log space so tiny Dirichlet concentrations
 * (papers/004 uses α = 0.01) do not underflow to 0/0.
 */
import { randomInt, randomPermutation, shuffleInPlace, xoshiro128ss } from '../../scoring/seeded-rng.js';

/** A seeded stream of random numbers. Not safe to share between independent consumers. */
export interface Random {
  /** Uniform 32-bit unsigned integer. */
  uint32(): number;
  /** Uniform in [0, 1) with 32 bits of resolution. */
  uniform(): number;
  /** Uniform integer in [0, n). */
  int(n: number): number;
  /** Standard normal N(0, 1). */
  normal(): number;
  /** log of a Gamma(shape, 1) variate; shape > 0. */
  logGamma(shape: number): number;
  /** Gamma(shape, 1) variate; shape > 0 (may underflow to 0 for shape ≪ 1: use logGamma). */
  gamma(shape: number): number;
  /** One draw from Dirichlet(alpha); every alpha_i > 0. */
  dirichlet(alpha: ArrayLike<number>): Float64Array;
  /** Fisher–Yates shuffle in place; returns its argument. */
  shuffle<T extends { length: number; [i: number]: number }>(a: T): T;
  /** A uniformly random permutation of 0..n−1. */
  permutation(n: number): Int32Array;
}

/** Mixes a list of 32-bit words into one seed (for independent sub-streams: seed, silo, …). */
export function mixSeed(...words: number[]): number {
  let h = 0x9e3779b9;
  for (const w of words) {
    h = Math.imul(h ^ (w >>> 0), 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
  }
  return h >>> 0;
}

/** A seeded xoshiro128** stream. Throws RangeError when seed is not a finite number. */
export function createRandom(seed: number): Random {
  const uint32 = xoshiro128ss(seed, 0x5bd1e995);
  let spare = Number.NaN;
  const uniform = (): number => uint32() / 4294967296;
  const normal = (): number => {
    if (!Number.isNaN(spare)) {
      const s = spare;
      spare = Number.NaN;
      return s;
    }
    // 1 − U ∈ (0, 1], so the logarithm is finite.
    const r = Math.sqrt(-2 * Math.log(1 - uniform()));
    const theta = 2 * Math.PI * uniform();
    spare = r * Math.sin(theta);
    return r * Math.cos(theta);
  };
  // Marsaglia & Tsang (2000), for shape ≥ 1: returns log G.
  const logGammaAtLeastOne = (shape: number): number => {
    const dd = shape - 1 / 3;
    const cc = 1 / Math.sqrt(9 * dd);
    for (;;) {
      let z: number;
      let v: number;
      do {
        z = normal();
        v = 1 + cc * z;
      } while (v <= 0);
      v = v * v * v;
      const u = 1 - uniform();
      if (u < 1 - 0.0331 * z ** 4 || Math.log(u) < 0.5 * z * z + dd * (1 - v + Math.log(v)))
        return Math.log(dd) + Math.log(v);
    }
  };
  const logGamma = (shape: number): number => {
    if (!(shape > 0) || !Number.isFinite(shape))
      throw new RangeError(`shape: expected a finite number > 0, got ${shape}`);
    if (shape >= 1) return logGammaAtLeastOne(shape);
    return logGammaAtLeastOne(shape + 1) + Math.log(1 - uniform()) / shape;
  };
  // scoring/seeded-rng.ts's Fisher–Yates over this stream's uniforms.
  const rng = { next: uniform };
  const shuffle = <T extends { length: number; [i: number]: number }>(arr: T): T => shuffleInPlace(rng, arr);
  return {
    uint32,
    uniform,
    int: (n: number) => randomInt(rng, n),
    normal,
    logGamma,
    gamma: (shape: number) => Math.exp(logGamma(shape)),
    dirichlet(alpha: ArrayLike<number>): Float64Array {
      const k = alpha.length;
      const out = new Float64Array(k);
      let max = Number.NEGATIVE_INFINITY;
      for (let i = 0; i < k; i++) {
        out[i] = logGamma(alpha[i]!);
        if (out[i]! > max) max = out[i]!;
      }
      let sum = 0;
      for (let i = 0; i < k; i++) {
        out[i] = Math.exp(out[i]! - max);
        sum += out[i]!;
      }
      for (let i = 0; i < k; i++) out[i]! /= sum;
      return out;
    },
    shuffle,
    permutation: (n: number) => randomPermutation(rng, n),
  };
}
