/**
 * The label and data maths of the data-side misbehaviours (papers/000 §5 "Adversarial and
 * Free-riding Scenarios", papers/002 §5, papers/003 §5.4 "Misbehavior Detection"). The kinds
 * themselves, data- and update-side, are the registry's (./misbehaviors/registry.ts), one file each.
 * Flipping (papers/000 (i); the usual "flip" of e.g. Tolpegin et al. 2020), a fixed derangement
 * (papers/002: "a fixed label-shuffling mapping") and uniform noise data (papers/000 (ii)).
 */
import { checkInt, checkSeed } from './check.js';
import type { Dataset, Labels } from './dataset.js';
import { createRandom, mixSeed } from './seeded-draws.js';

/** The flip map c → K − 1 − c. */
export function flipMap(numClasses: number): Int32Array {
  checkInt('numClasses', numClasses, 2);
  return Int32Array.from({ length: numClasses }, (_, c) => numClasses - 1 - c);
}

/**
 * A fixed random permutation of 0..K−1 with no fixed point (every class is moved), drawn from
 * `seed` (uniform over derangements, by rejection). Throws RangeError when K < 2.
 */
export function labelShuffleMap(numClasses: number, seed: number): Int32Array {
  checkInt('numClasses', numClasses, 2);
  const rng = createRandom(mixSeed(checkSeed('seed', seed), 0x73687566));
  for (;;) {
    const p = rng.permutation(numClasses);
    if (p.every((v, i) => v !== i)) return p;
  }
}

/** Checks a class map: length K, entries in [0, K). */
function checkMap(name: string, map: ArrayLike<number>, numClasses: number): void {
  if (map.length !== numClasses)
    throw new RangeError(`${name}: expected ${numClasses} entries, got ${map.length}`);
  for (let c = 0; c < numClasses; c++) checkInt(`${name}[${c}]`, map[c], 0, numClasses - 1);
}

/** New labels map[y_i]. Throws RangeError when the map is not a K-entry class map. */
export function mapLabels(labels: Labels, map: ArrayLike<number>, numClasses: number): Int32Array {
  checkMap('map', map, numClasses);
  return Int32Array.from(labels, (c) => map[c]!);
}

/** Uniform-noise examples in [0, 1] with uniform random labels (papers/000 "random generated data"). */
export function randomData(
  n: number,
  shape: readonly [number, number, number],
  numClasses: number,
  seed: number,
  name = 'random-data',
): Dataset {
  checkInt('n', n, 0);
  checkInt('numClasses', numClasses, 1);
  for (let i = 0; i < 3; i++) checkInt(`shape[${i}]`, shape[i], 1);
  const rng = createRandom(mixSeed(checkSeed('seed', seed), 0x726e64));
  const f = shape[0] * shape[1] * shape[2];
  const x = new Float32Array(n * f);
  for (let i = 0; i < x.length; i++) x[i] = rng.uniform();
  const y = new Int32Array(n);
  for (let i = 0; i < n; i++) y[i] = rng.int(numClasses);
  return {
    x,
    y,
    n,
    shape: [shape[0], shape[1], shape[2]],
    numClasses,
    name,
    source: `synthetic:random-data(seed=${seed})`,
  };
}
