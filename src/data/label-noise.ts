/**
 * Per-silo label noise with linearly increasing rates (papers/003 §5.4, "Performance Gain",
 * following [25]): silo i's labels are randomized with probability r_i, the rates rising
 * linearly from `min` to `max` across the silos.
 *
 * papers/003 writes "With 9 clients, the label-flipping rates are [0.00, 0.11, 0.22, ..., 0.89,
 * 1.00]" — that list has 10 entries (steps of 1/9). `linearNoiseRates(n)` gives
 * r_i = min + (max − min)·i/(n − 1), i.e. the list for n = 10; with n = 9 it gives steps of
 * 1/8. Pass `rates` explicitly to reproduce either reading.
 *
 * "Randomized" is read as: with probability r the label is replaced by a class drawn uniformly
 * from all K classes (mode 'uniform', the default), so it actually changes with probability
 * r·(K − 1)/K; mode 'other' draws from the K − 1 other classes, so it changes with probability r.
 */
import { checkInt, checkLabels, checkNumber, checkSeed } from './check.js';
import type { Labels } from './dataset.js';
import { createRandom, mixSeed } from './seeded-draws.js';

/**
 * Rates r_i = min + (max − min)·i/(n − 1) for i = 0..n−1 (n = 1: [min]).
 * Throws RangeError naming the parameter when n < 1 or min, max are outside [0, 1].
 */
export function linearNoiseRates(numSilos: number, min = 0, max = 1): Float64Array {
  checkInt('numSilos', numSilos, 1);
  checkNumber('min', min, 0, 1);
  checkNumber('max', max, 0, 1);
  const r = new Float64Array(numSilos);
  for (let i = 0; i < numSilos; i++) r[i] = numSilos === 1 ? min : min + ((max - min) * i) / (numSilos - 1);
  return r;
}

/** Options for {@link applyLabelNoise}. */
export interface LabelNoiseOptions {
  numClasses: number;
  /** rates[i]: probability that a label of silo i is randomized, in [0, 1]. */
  rates: ArrayLike<number>;
  seed: number;
  /** 'uniform' (default): redraw from all classes; 'other': redraw from the other classes. */
  mode?: 'uniform' | 'other';
}

/** The noisy labels and what happened per silo. */
export interface LabelNoiseResult {
  /** A copy of the labels with silo examples randomized; indices in no silo are unchanged. */
  labels: Int32Array;
  /** Per silo: how many labels were redrawn (Binomial(m_i, r_i)). */
  redrawn: Int32Array;
  /** Per silo: how many labels now differ from the original. */
  changed: Int32Array;
}

/**
 * Randomizes labels per silo (see the module comment). Each silo draws from its own stream
 * derived from `seed` and its id, so silo i's noise does not depend on other silos' sizes.
 * Throws RangeError naming the option on bad rates, a rate count that is not the silo count,
 * or an index held by two silos.
 */
export function applyLabelNoise(
  labels: Labels,
  silos: readonly Int32Array[],
  options: LabelNoiseOptions,
): LabelNoiseResult {
  const numClasses = checkInt('numClasses', options.numClasses, 2);
  checkLabels('labels', labels, numClasses);
  const seed = checkSeed('seed', options.seed);
  const mode = options.mode ?? 'uniform';
  if (mode !== 'uniform' && mode !== 'other')
    throw new RangeError(`mode: expected 'uniform' or 'other', got ${String(mode)}`);
  if (options.rates.length !== silos.length)
    throw new RangeError(`rates: expected ${silos.length} rates (one per silo), got ${options.rates.length}`);
  for (let i = 0; i < silos.length; i++) checkNumber(`rates[${i}]`, options.rates[i], 0, 1);
  const out = Int32Array.from(labels);
  const seen = new Uint8Array(labels.length);
  const redrawn = new Int32Array(silos.length);
  const changed = new Int32Array(silos.length);
  silos.forEach((silo, s) => {
    const rate = options.rates[s]!;
    const rng = createRandom(mixSeed(seed, s));
    for (const i of silo) {
      if (!(i >= 0 && i < labels.length))
        throw new RangeError(`silos: index ${i} of silo ${s} is outside [0, ${labels.length})`);
      if (seen[i]) throw new RangeError(`silos: index ${i} is held by two silos`);
      seen[i] = 1;
      if (rng.uniform() >= rate) continue;
      redrawn[s]!++;
      const old = labels[i]!;
      let c: number;
      if (mode === 'uniform') c = rng.int(numClasses);
      else {
        c = rng.int(numClasses - 1);
        if (c >= old) c++;
      }
      out[i] = c;
      if (c !== old) changed[s]!++;
    }
  });
  return { labels: out, redrawn, changed };
}
