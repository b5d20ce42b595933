/**
 * Synthetic classification data: a seeded Gaussian mixture, one component per class, for fast
 * tests and benchmarks that must not depend on files.
 *
 * Class means are μ_c = 0.5 + separation·(u_c − 0.5) with u_c uniform in [0, 1]^F; an example
 * of class c is μ_c + noise·z, z ~ N(0, I), clipped to [0, 1] so that the values match real
 * image data (clipping makes the tails non-Gaussian; the classes stay as separable as the
 * unclipped mixture up to the clipped mass). Labels are balanced: class counts differ by at
 * most one (or follow `classWeights` exactly up to rounding), in a seeded random order.
 */
import { checkInt, checkNumber, checkSeed } from './check.js';
import type { Dataset } from './dataset.js';
import { createRandom, mixSeed } from './seeded-draws.js';

/** Options for {@link gaussianMixture}. */
export interface GaussianMixtureOptions {
  /** Number of examples. */
  n: number;
  /** Number of classes (mixture components). Default 10. */
  numClasses?: number;
  /** Shape of one example [h, w, c]; default [1, features, 1]. */
  shape?: readonly [number, number, number];
  /** Feature count when `shape` is not given. Default 784. */
  features?: number;
  /**
   * Spread of the class means (≥ 0; 0: all means 0.5, the classes are indistinguishable; above 1
   * the means leave [0, 1] and the clipped examples saturate). Default 0.6.
   */
  separation?: number;
  /** Standard deviation of the per-feature noise (≥ 0). Default 0.3. */
  noise?: number;
  /** Relative class frequencies (length numClasses, non-negative, positive sum). Default uniform. */
  classWeights?: readonly number[];
  /**
   * Seed for the class means. Two calls with the same `meansSeed` draw from the same mixture,
   * e.g. a train and a test set with different `seed`s. Default: `seed`.
   */
  meansSeed?: number;
  /** Seed for labels and noise. */
  seed: number;
  name?: string;
}

/**
 * Draws a labelled Gaussian-mixture dataset (see the module comment). Throws RangeError naming
 * the option when an option is out of range.
 */
export function gaussianMixture(options: GaussianMixtureOptions): Dataset {
  const n = checkInt('n', options.n, 0);
  const numClasses = checkInt('numClasses', options.numClasses ?? 10, 1);
  const shape: readonly [number, number, number] = options.shape ?? [
    1,
    checkInt('features', options.features ?? 784, 1),
    1,
  ];
  if (shape.length !== 3) throw new RangeError(`shape: expected [h, w, c], got length ${shape.length}`);
  for (let i = 0; i < 3; i++) checkInt(`shape[${i}]`, shape[i], 1);
  const separation = checkNumber('separation', options.separation ?? 0.6, 0, Number.MAX_VALUE);
  const noise = checkNumber('noise', options.noise ?? 0.3, 0);
  const seed = checkSeed('seed', options.seed);
  const meansSeed = checkSeed('meansSeed', options.meansSeed ?? seed);
  const weights = options.classWeights ?? new Array<number>(numClasses).fill(1);
  if (weights.length !== numClasses)
    throw new RangeError(`classWeights: expected ${numClasses} weights, got ${weights.length}`);
  let wsum = 0;
  weights.forEach((w, i) => {
    wsum += checkNumber(`classWeights[${i}]`, w, 0);
  });
  if (!(wsum > 0)) throw new RangeError('classWeights: expected a positive sum');

  const f = shape[0] * shape[1] * shape[2];
  const meansRng = createRandom(mixSeed(meansSeed, 0x6d65616e));
  const means = new Float32Array(numClasses * f);
  for (let i = 0; i < means.length; i++) means[i] = 0.5 + separation * (meansRng.uniform() - 0.5);

  // Exact class counts by largest remainder, then a seeded order.
  const counts = new Int32Array(numClasses);
  const rem: { c: number; r: number }[] = [];
  let assigned = 0;
  weights.forEach((w, c) => {
    const q = (n * w) / wsum;
    counts[c] = Math.floor(q);
    assigned += counts[c]!;
    rem.push({ c, r: q - Math.floor(q) });
  });
  rem.sort((a, b) => b.r - a.r || a.c - b.c);
  for (let k = 0; assigned < n; k++, assigned++) counts[rem[k % numClasses]!.c]!++;
  const rng = createRandom(mixSeed(seed, 0x64617461));
  const y = new Int32Array(n);
  let p = 0;
  counts.forEach((cnt, c) => {
    for (let k = 0; k < cnt; k++) y[p++] = c;
  });
  rng.shuffle(y);

  const x = new Float32Array(n * f);
  for (let i = 0; i < n; i++) {
    const mo = y[i]! * f;
    const xo = i * f;
    for (let j = 0; j < f; j++) {
      const v = means[mo + j]! + noise * rng.normal();
      x[xo + j] = Math.min(1, Math.max(0, v));
    }
  }
  return {
    x,
    y,
    n,
    shape: [shape[0], shape[1], shape[2]],
    numClasses,
    name: options.name ?? 'gaussian-mixture',
    source: `synthetic:gaussian-mixture(seed=${seed}, meansSeed=${meansSeed}, separation=${separation}, noise=${noise})`,
  };
}
