/**
 * papers/003's data split as the authors' published code draws it (`data_configuration.py` at commit
 * 428d561; docs/reproductions.md, "papers/003 as the authors' code runs it"): configuration
 * `data.split: 'paper003-code'`.
 *
 * Their `testing_training()` draws a fresh 80/20 `random_split` of the data set D on every call (torch's
 * global generator), and it is called three times:
 *
 * 1. `data_clients` (line 193): the first split; its 80 % part A1 is what the silos receive.
 * 2. `partition_data` (line 154): a second split; the partition (Dirichlet per class, lines 157–180)
 *    is computed on the labels of ITS 80 % part A2, as positions 0 … T−1.
 * 3. `commun_test` (line 228): a third split; its 20 % part, in split order, is the common test
 *    loader, of which the evaluation reads the first 384 images (`client_fed_local.py` 190–192).
 *
 * `data_clients` applies the positions computed on A2 to A1 (line 199): silo i holds A1[k] for the
 * positions k the partition gave it. Because A1 and A2 order different random images, each silo's
 * labels are close to IID while its size follows the partition's draw; and the test set is a random
 * sample of D, 80 % of it (in expectation) inside A1. Each silo then keeps a random 80 % of its
 * examples for training (lines 201–203, `train_size_client = int(0.8 * len)`; the other 20 % is its
 * local test loader, unused by the scores).
 *
 * fedscore's scale: T = `data.trainSize` is the 80 % part the silos share (their T is 80 % of the
 * whole training set), so D holds m = T + ⌈T/4⌉ examples (⌊0.8·m⌋ = T), drawn from the pool at
 * random; the test set is the first `testSize` of the third split's m − T, so testSize ≤ ⌈T/4⌉.
 * All randomness comes from `seed` through the `sub` seed streams below (src/data/seed.ts).
 */
import { checkIndices, checkInt, checkSeed } from './check.js';
import { type Labels, range } from './dataset.js';
import type { Partition } from './partition.js';
import { deriveSeed, SEED_STREAMS } from './seed.js';
import { createRandom } from './seeded-draws.js';

/** Size of the first part of an 80/20 `random_split` of n: torch's int(0.8 · n). */
export const firstPart = (n: number): number => Math.floor((n * 4) / 5);

/** m, the size of D whose first split's 80 % part holds exactly `trainSize` examples: T + ⌈T/4⌉. */
export const paper003DataSize = (trainSize: number): number => trainSize + Math.ceil(trainSize / 4);

/** Options of {@link paper003Splits}. */
export interface Paper003SplitOptions {
  /** T: examples the silos share (the first split's 80 % part). */
  trainSize: number;
  /** Images of the third split's 20 % part evaluated as the common test set (≤ ⌈T/4⌉). */
  testSize: number;
  /** The pool D is drawn from (default: all indices of `labels`). */
  indices?: Int32Array;
  seed: number;
}

/** The three splits of D, as dataset indices. */
export interface Paper003Splits {
  /** D, the authors' whole data set at this scale (increasing). */
  data: Int32Array;
  /** A1: the first split's 80 % part in split order; position k holds dataset index first[k]. */
  first: Int32Array;
  /** A2: the second split's 80 % part in split order (its labels drive the partition). */
  second: Int32Array;
  /** D minus A1, the first split's 20 % part (increasing): not shared out (fedscore draws its validation set here). */
  heldOut: Int32Array;
  /** The common test set: the first `testSize` of the third split's 20 % part (increasing). */
  test: Int32Array;
}

/**
 * Draws D and its three 80/20 splits (module comment). Throws RangeError naming `trainSize`
 * when the pool is smaller than D, and `testSize` when it exceeds the third split's ⌈T/4⌉.
 */
export function paper003Splits(labels: Labels, options: Paper003SplitOptions): Paper003Splits {
  const trainSize = checkInt('trainSize', options.trainSize, 1);
  const testSize = checkInt('testSize', options.testSize, 1);
  const seed = checkSeed('seed', options.seed);
  const pool =
    options.indices === undefined
      ? range(labels.length)
      : checkIndices('indices', options.indices, labels.length, true);
  const m = paper003DataSize(trainSize);
  if (m > pool.length)
    throw new RangeError(
      `trainSize: the authors' split of ${trainSize} training examples needs a data set of ${m} (T + ⌈T/4⌉), the pool has ${pool.length}`,
    );
  if (testSize > m - trainSize)
    throw new RangeError(
      `testSize: ${testSize} exceeds the ${m - trainSize} images of the authors' test split (⌈trainSize/4⌉, the 20 % part)`,
    );
  const sub = SEED_STREAMS.sub;
  const data = createRandom(deriveSeed(seed, sub.paper003Data)).shuffle(pool.slice()).subarray(0, m);
  data.sort();
  // One random_split: a uniform permutation of D, its first int(0.8·m) positions the 80 % part.
  const split = (stream: number) => {
    const perm = createRandom(deriveSeed(seed, stream)).permutation(m);
    return perm.map((k) => data[k]!);
  };
  const s1 = split(sub.paper003First);
  const s2 = split(sub.paper003Second);
  const s3 = split(sub.paper003Test);
  const first = s1.slice(0, trainSize);
  const heldOut = s1.slice(trainSize).sort();
  const test = s3.slice(trainSize, trainSize + testSize).sort();
  return { data, first, second: s2.slice(0, trainSize), heldOut, test };
}

/** The labels the partition sees: position k of A2 has the label of dataset index second[k]. */
export function secondSplitLabels(labels: Labels, splits: Pick<Paper003Splits, 'second'>): Int32Array {
  return Int32Array.from(splits.second, (i) => labels[i]!);
}

/** What a silo of `n` examples keeps for training: int(0.8 · n) (`data_configuration.py` 201). */
export const localTrainSize = firstPart;

/**
 * The silos' training data from a partition of A2's positions (0 … T−1): silo i gets A1 at its
 * positions (`data_configuration.py` 199), then a random int(0.8·n_i) of them (201–203). Each
 * silo's indices come back increasing; `params` records the split beside the partition's own.
 */
export function applyToFirstSplit(
  positions: Partition,
  splits: Pick<Paper003Splits, 'first'>,
  seed: number,
): Partition {
  const { first } = splits;
  const silos = positions.silos.map((pos, i) => {
    const mapped = Int32Array.from(pos, (k) => {
      const v = first[k];
      if (v === undefined)
        throw new RangeError(`positions: silo ${i} holds position ${k}, A1 has ${first.length}`);
      return v;
    });
    const kept = createRandom(deriveSeed(seed, SEED_STREAMS.sub.paper003Local, i)).shuffle(mapped);
    return kept.slice(0, localTrainSize(kept.length)).sort();
  });
  return {
    silos,
    kind: positions.kind,
    params: { ...positions.params, split: 'paper003-code', shared: first.length, seed },
  };
}
