/**
 * The data splits of a configuration's `data.split` (docs/config.md), one entry each: how the loaded
 * pool becomes the common test set, the server's validation set, and the pool the partition shares
 * out among the silos (with the labels the partition reads and how its silos map back to examples).
 * The configuration check (src/records/config.ts) reads `problems`, the run's setup
 * (src/fl/consortium-data.ts) `plan`.
 */
import { type Dataset, type Labels, range, subset } from './dataset.js';
import { longTailed } from './long-tail.js';
import { applyToFirstSplit, firstPart, paper003Splits, secondSplitLabels } from './paper003-split.js';
import type { Partition } from './partition.js';
import { deriveSeed, SEED_STREAMS } from './seed.js';
import { balancedTestSplit } from './test-set.js';

/** What a split is given. */
export interface SplitInput {
  /** The data set's training pool (or its only pool). */
  readonly pool: Dataset;
  /** The data set's dedicated test split, when it has one. */
  readonly given?: Dataset | undefined;
  readonly numClasses: number;
  /** The run's seed (each split derives its own streams, src/data/seed.ts). */
  readonly seed: number;
  /** `data.testSize`. */
  readonly testSize: number;
  /** `data.trainSize` (undefined: all available). */
  readonly trainSize?: number | undefined;
  /** `data.longTail`. */
  readonly longTail?: { readonly imbalance: number; readonly order?: 'index' | 'random' } | undefined;
  /** Where the data came from and how to get all of it, for the trainSize error. */
  readonly source: string;
  readonly fullDataHint?: string | undefined;
}

/** What a split gives the setup. */
export interface SplitPlan {
  readonly test: Dataset;
  readonly validation: Dataset;
  /** The labels the partition reads, and the indices (into them) it shares out. */
  readonly partitionLabels: Labels;
  readonly partitionPool: Int32Array;
  /** The smallest share of the partition that leaves a silo a training example. */
  readonly minShare: number;
  /** The silos' dataset indices from the partition of `partitionPool`. */
  toSilos(p: Partition): Partition;
}

/** The configuration keys a split's checks read. */
export interface SplitConfig {
  readonly partitionKind: string;
  readonly testSize?: number | undefined;
  readonly trainSize?: number | undefined;
  readonly longTail?: unknown;
}

/** A problem of a configuration's split, with the path of the field. */
export interface SplitProblem {
  readonly path: string;
  readonly message: string;
}

/** One data split. */
export interface DataSplit {
  readonly name: string;
  /** One line for docs/config.md. */
  readonly description: string;
  problems?(c: SplitConfig): SplitProblem[];
  /** Throws RangeError naming `data.<key>` on sizes the pool cannot give. */
  plan(input: SplitInput): SplitPlan;
}

/** The server-held validation set's size (FedTSV's reference update, papers/002 §4) for a pool of n. */
const validationSizeOf = (n: number) => Math.min(500, Math.floor(n / 10));

const BALANCED: DataSplit = {
  name: 'balanced',
  description:
    'a class-balanced common test set drawn from the dedicated test split (or out of the pool), a validation set, and data.trainSize of the rest for the silos, disjoint (papers/003 §5)',
  plan({ pool, given, numClasses, seed, testSize, trainSize, longTail, source, fullDataHint }) {
    // The common test set is class-balanced (papers/003 §5); drawn from the dedicated test split when there is one.
    const testPool = given ?? pool;
    const perClass = Math.floor(testSize / numClasses);
    if (perClass < 1)
      throw new RangeError(`data.testSize: must be at least the number of classes (${numClasses})`);
    const testSplit = balancedTestSplit(testPool.y, {
      numClasses,
      perClass,
      seed: deriveSeed(seed, SEED_STREAMS.run.testSplit),
    });
    const test = subset(testPool, testSplit.test, 'test');
    let rest = given ? range(pool.n) : testSplit.rest;
    const validationSize = validationSizeOf(pool.n);
    const validation = subset(pool, rest.subarray(0, validationSize), 'validation');
    rest = rest.subarray(validationSize);
    const size = trainSize ?? rest.length;
    if (size > rest.length)
      throw new RangeError(
        `data.trainSize: ${size} exceeds the ${rest.length} training examples available (data: ${source})` +
          (fullDataHint ? `; ${fullDataHint}` : ''),
      );
    rest = rest.subarray(0, size);
    // papers/004 §4.1: the long-tailed transform is applied to the training pool, then the pool is
    // split among the silos (the common test set and the validation set stay balanced).
    if (longTail)
      rest = longTailed(pool.y, {
        numClasses,
        imbalance: longTail.imbalance,
        seed: deriveSeed(seed, SEED_STREAMS.run.longTail),
        indices: rest,
        ...(longTail.order !== undefined ? { order: longTail.order } : {}),
      }).indices;
    return { test, validation, partitionLabels: pool.y, partitionPool: rest, minShare: 1, toSilos: (p) => p };
  },
};

/** The partition kinds the authors' `partition_data` has: 'N-IID' (Dirichlet per class) and 'IID'. */
const PAPER003_KINDS = ['dirichlet', 'iid'];

const PAPER003_CODE: DataSplit = {
  name: 'paper003-code',
  description:
    "papers/003's split as the authors' data_configuration.py draws it (src/data/paper003-split.ts): the partition is computed on the labels of one random 80 % of the data set and applied to the positions of another, so silo sizes follow the draw while labels stay near-IID; each silo trains on a random 80 % of its share; the common test set is drawn from a third random split of the same data (not class-balanced, overlapping the training data). data.trainSize is the 80 % the silos share; data.testSize ≤ ⌈trainSize/4⌉ (their evaluation reads 384 images)",
  problems(c) {
    const out: SplitProblem[] = [];
    if (!PAPER003_KINDS.includes(c.partitionKind))
      out.push({
        path: 'partition.kind',
        message: `data.split 'paper003-code' takes kind ${PAPER003_KINDS.map((k) => `'${k}'`).join(' or ')} (the authors' partition_data), got '${c.partitionKind}'`,
      });
    if (c.longTail !== undefined)
      out.push({ path: 'data.longTail', message: "does not apply with data.split 'paper003-code'" });
    if (c.trainSize !== undefined && c.testSize !== undefined && c.testSize > Math.ceil(c.trainSize / 4))
      out.push({
        path: 'data.testSize',
        message: `with data.split 'paper003-code' at most ⌈trainSize/4⌉ = ${Math.ceil(c.trainSize / 4)} (the 20 % test part of the authors' split)`,
      });
    return out;
  },
  plan({ pool, seed, testSize, trainSize, source, fullDataHint }) {
    // Their data set is the training set alone (MNIST/CIFAR10 train=True): a dedicated test split is not used.
    const size = trainSize ?? firstPart(pool.n);
    const splitSeed = deriveSeed(seed, SEED_STREAMS.run.paper003Split);
    let splits: ReturnType<typeof paper003Splits>;
    try {
      splits = paper003Splits(pool.y, { trainSize: size, testSize, seed: splitSeed });
    } catch (e) {
      if (!(e instanceof RangeError)) throw e;
      const hint = e.message.startsWith('trainSize')
        ? ` (data: ${source})${fullDataHint ? `; ${fullDataHint}` : ''}`
        : '';
      throw new RangeError(`data.${e.message}${hint}`);
    }
    return {
      test: subset(pool, splits.test, 'test'),
      validation: subset(
        pool,
        splits.heldOut.subarray(0, validationSizeOf(splits.data.length)),
        'validation',
      ),
      partitionLabels: secondSplitLabels(pool.y, splits),
      partitionPool: range(size),
      // A silo of one example keeps int(0.8) = 0 of it for training.
      minShare: 2,
      toSilos: (p) => applyToFirstSplit(p, splits, splitSeed),
    };
  },
};

/** The data splits, the default first. */
export const DATA_SPLITS: readonly DataSplit[] = [BALANCED, PAPER003_CODE];

/** The split of a configuration without `data.split`. */
export const DEFAULT_SPLIT = BALANCED.name;

/** Every split's name, the default first. */
export const SPLIT_NAMES = DATA_SPLITS.map((s) => s.name);

/** The entry of `name`. @throws RangeError naming `data.split` for an unknown split. */
export function dataSplit(name: string): DataSplit {
  const s = DATA_SPLITS.find((x) => x.name === name);
  if (!s) throw new RangeError(`data.split: expected one of ${SPLIT_NAMES.join(', ')}, got '${name}'`);
  return s;
}
