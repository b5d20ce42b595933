/**
 * Misbehaving silos (papers/000 §5 "Adversarial and Free-riding Scenarios", papers/002 §5,
 * papers/003 §5.4 "Misbehavior Detection"). A silo's behaviour is described by a plain descriptor
 * (`Misbehavior`), so experiments can record it. This module holds the descriptors and the
 * data-side transformations, which the round engine applies to a silo's dataset before local
 * training; the update-side attacks, which never touch data, act on the update Δ = M_local − M0
 * after training and live with the engine (src/engine/attacks.ts).
 *
 * Data side:
 * - 'label-flip': label c becomes K − 1 − c (papers/000 (i), papers/003's Byzantine client; the
 *   usual "flip" of e.g. Tolpegin et al. 2020), or a given class map.
 * - 'label-shuffle': a fixed random permutation of the classes without fixed points, drawn
 *   once from a seed and applied to every label (papers/002: "a fixed label-shuffling mapping").
 * - 'random-data': the silo's examples are replaced by uniform noise in [0, 1] with uniform
 *   random labels, same count and shape (papers/000 (ii): "random generated data").
 * Update side (src/engine/attacks.ts; on Float32Array updates, inputs never modified):
 * - 'random-update': Δ replaced by N(0, σ²) noise, σ given or matched to the honest update's
 *   root mean square so the norm is alike (papers/000 (iii): "random generated model updates").
 * - 'free-rider': sends back M0, so Δ = 0 (papers/000: "send the same model back").
 * - 'scale': Δ multiplied by a factor (model-replacement style boosting).
 */
import { checkInt, checkSeed } from './check.js';
import type { Dataset, Labels } from './dataset.js';
import { createRandom, mixSeed } from './random.js';

/** What a misbehaving silo does. */
export type Misbehavior =
  | { kind: 'label-flip'; map?: readonly number[] }
  | { kind: 'label-shuffle'; seed: number }
  | { kind: 'random-data'; seed: number }
  | { kind: 'random-update'; seed: number; std?: number }
  | { kind: 'free-rider' }
  | { kind: 'scale'; factor: number };

/** The misbehaviours that change a silo's data. */
export type DataMisbehavior = Extract<Misbehavior, { kind: 'label-flip' | 'label-shuffle' | 'random-data' }>;
/** The misbehaviours that change a silo's update. */
export type UpdateMisbehavior = Extract<Misbehavior, { kind: 'random-update' | 'free-rider' | 'scale' }>;

/** Whether m acts on data (before training) rather than on the update. */
export function isDataMisbehavior(m: Misbehavior): m is DataMisbehavior {
  return m.kind === 'label-flip' || m.kind === 'label-shuffle' || m.kind === 'random-data';
}

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

/**
 * A silo's dataset after a data-side misbehaviour (a new object; x is shared unless replaced).
 * Throws RangeError on a bad descriptor.
 */
export function applyDataMisbehavior(ds: Dataset, m: DataMisbehavior): Dataset {
  switch (m.kind) {
    case 'label-flip': {
      const map = m.map ?? flipMap(ds.numClasses);
      return { ...ds, y: mapLabels(ds.y, map, ds.numClasses), name: `${ds.name}+label-flip` };
    }
    case 'label-shuffle':
      return {
        ...ds,
        y: mapLabels(ds.y, labelShuffleMap(ds.numClasses, m.seed), ds.numClasses),
        name: `${ds.name}+label-shuffle`,
      };
    case 'random-data':
      return randomData(ds.n, ds.shape, ds.numClasses, m.seed, `${ds.name}+random-data`);
    default:
      throw new RangeError(`m: unknown data misbehaviour ${(m as { kind: string }).kind}`);
  }
}
