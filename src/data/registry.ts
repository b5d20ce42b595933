/**
 * The dataset registry: a data set's name → how to load it, the shape of its examples and the
 * TypeBox schema of its options. An experiment configuration picks one with `data.dataset` and
 * sets its options in the block named after it (`data.synthetic: { features: 8 }`).
 *
 * The built-ins register in one list, `BUILTIN_DATASETS`:
 * - `fashion-mnist` (the default): 28×28×1, 10 classes; fashion-mnist.ts says where the files
 *   are looked for ($FEDSCORE_DATA_DIR, Debian's dataset-fashion-mnist, the bundled test split).
 * - `synthetic`: a seeded Gaussian mixture (synthetic.ts), [1, features, 1], no files.
 * - `cifar10`: 32×32×3, 10 classes, the binary version (cifar10.ts) from
 *   `$FEDSCORE_DATA_DIR/cifar-10-batches-bin/` (data_batch_1.bin … data_batch_5.bin and
 *   test_batch.bin; the files may also sit in $FEDSCORE_DATA_DIR itself). It is not installable
 *   from a package; download "CIFAR-10 binary version" from https://www.cs.toronto.edu/~kriz/cifar.html.
 * - `files`: a user's own x.npy + y.npy, IDX pair or CSV file (files-dataset.ts; `fedscore init
 *   --data <file>` writes its options).
 * `registerDataset` adds more.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Type, { type TObject } from 'typebox';
import { loadCifar10 } from './cifar10.js';
import type { Dataset } from './dataset.js';
import { DATA_DIR_ENV, loadFashionMnist } from './fashion-mnist.js';
import { FILES_ENTRY, type FilesOptions } from './files-dataset.js';
import { deriveSeed, SEED_STREAMS } from './seed.js';
import { gaussianMixture } from './synthetic.js';

/** Shape of one example and the number of classes. */
export interface DataShape {
  inputShape: [number, number, number];
  numClasses: number;
}

/** What a loader gets besides its options. */
export interface DatasetContext {
  /** The run's seed; derive independent streams with `deriveSeed(seed, k)` (seed.ts). */
  seed: number;
  /** Environment to read paths from ($FEDSCORE_DATA_DIR); process.env in runs. */
  env: Readonly<Record<string, string | undefined>>;
  /** Number of silos of the run. */
  silos: number;
  /** `data.trainSize` and `data.testSize` when set, for generators that size their pool by them. */
  trainSize?: number;
  testSize?: number;
}

/** A loaded data set. */
export interface LoadedDataset {
  /** The examples the training pool (and, without `test`, the test set) is drawn from. */
  pool: Dataset;
  /** A dedicated test split: the common test set is drawn from it instead of the pool. */
  test?: Dataset;
  /** Where the data came from, one line for the results. */
  source: string;
  /** When a reduced copy was loaded: how to get the full data (appended to size errors). */
  fullDataHint?: string;
}

/** A registered data set. `O` is the type of its options (what its `options` schema admits). */
export interface DatasetDefinition<O = Record<string, unknown>> {
  /** The name configurations use (`data.dataset`); also the key of its options block. */
  readonly name: string;
  /** One line for documentation and schema descriptions. */
  readonly description: string;
  /**
   * TypeBox object schema of the options block `data.<name>`; absent: the data set takes no
   * options. Close it (`additionalProperties: false`) and describe every property.
   */
  readonly options?: TObject;
  /** Shape of one example and number of classes for these options, without loading anything. */
  shape(options: O): DataShape;
  /**
   * Loads the data. Throws Error naming `data.dataset` and where it looked when the files are
   * missing; the pool must have `shape(options)`'s shape and classes.
   */
  load(options: O, context: DatasetContext): LoadedDataset;
}

/** Options of the `synthetic` data set (`data.synthetic`). */
export interface SyntheticOptions {
  features?: number;
  classes?: number;
  separation?: number;
  examples?: number;
}

const FASHION_MNIST: DatasetDefinition<Record<string, never>> = {
  name: 'fashion-mnist',
  description:
    'Fashion-MNIST, 28×28×1, 10 classes, from $FEDSCORE_DATA_DIR, Debian dataset-fashion-mnist or else the bundled 10k test split',
  shape: () => ({ inputShape: [28, 28, 1], numClasses: 10 }),
  load(_options, { seed, env }) {
    const fm = loadFashionMnist({ split: { testFraction: 0.2, seed }, env });
    return {
      pool: fm.train,
      test: fm.test,
      source: fm.note,
      // the bundled copy carries the 10k test split only
      ...(fm.splitFromTest
        ? {
            fullDataHint: `the full set: apt-get install dataset-fashion-mnist, or ${DATA_DIR_ENV}=<dir with the IDX files>`,
          }
        : {}),
    };
  },
};

/** The options of `synthetic` a configuration leaves out (its schema documents them as defaults). */
const SYNTHETIC_DEFAULTS = { features: 784, classes: 10, separation: 0.6 } as const;

const SYNTHETIC: DatasetDefinition<SyntheticOptions> = {
  name: 'synthetic',
  description: 'seeded Gaussian mixture, one component per class, [1, features, 1], no files',
  options: Type.Object(
    {
      features: Type.Optional(
        Type.Integer({
          minimum: 1,
          default: SYNTHETIC_DEFAULTS.features,
          description: 'Features per example.',
        }),
      ),
      classes: Type.Optional(
        Type.Integer({
          minimum: 2,
          default: SYNTHETIC_DEFAULTS.classes,
          description: 'Classes, one mixture component each.',
        }),
      ),
      separation: Type.Optional(
        Type.Number({
          exclusiveMinimum: 0,
          default: SYNTHETIC_DEFAULTS.separation,
          description: 'Spread of the class means.',
        }),
      ),
      examples: Type.Optional(
        Type.Integer({
          minimum: 20,
          description:
            'Examples drawn, training pool and test set together. Default: trainSize (200·silos) + testSize (data.testSize, default 2000) + 200.',
        }),
      ),
    },
    { additionalProperties: false, description: 'Gaussian-mixture settings' },
  ),
  shape: (o) => ({
    inputShape: [1, o.features ?? SYNTHETIC_DEFAULTS.features, 1],
    numClasses: o.classes ?? SYNTHETIC_DEFAULTS.classes,
  }),
  load(o, { seed, silos, trainSize, testSize }) {
    const total = o.examples ?? (trainSize ?? 200 * silos) + (testSize ?? 500) + 200;
    const pool = gaussianMixture({
      n: total,
      numClasses: o.classes ?? SYNTHETIC_DEFAULTS.classes,
      features: o.features ?? SYNTHETIC_DEFAULTS.features,
      separation: o.separation ?? SYNTHETIC_DEFAULTS.separation,
      seed: deriveSeed(seed, SEED_STREAMS.run.syntheticData),
      meansSeed: deriveSeed(seed, SEED_STREAMS.run.syntheticMeans),
      name: SYNTHETIC.name,
    });
    return { pool, source: `synthetic Gaussian mixture (${total} examples)` };
  },
};

/** The subdirectory of $FEDSCORE_DATA_DIR that holds the CIFAR-10 binary batches. */
export const CIFAR10_SUBDIR = 'cifar-10-batches-bin';

const CIFAR10: DatasetDefinition<Record<string, never>> = {
  name: 'cifar10',
  description: `CIFAR-10, 32×32×3, 10 classes, binary batches in $${DATA_DIR_ENV}/${CIFAR10_SUBDIR}/`,
  shape: () => ({ inputShape: [32, 32, 3], numClasses: 10 }),
  load(_options, { env }) {
    const files = 'data_batch_1.bin … data_batch_5.bin and test_batch.bin';
    const root = env[DATA_DIR_ENV];
    if (root === undefined || root === '')
      throw new Error(
        `data.dataset '${CIFAR10.name}': ${DATA_DIR_ENV} is not set; it must name a directory with ${CIFAR10_SUBDIR}/ (${files}, the "CIFAR-10 binary version")`,
      );
    const dir = [join(root, CIFAR10_SUBDIR), root].find((d) => existsSync(join(d, 'data_batch_1.bin')));
    if (dir === undefined)
      throw new Error(
        `data.dataset '${CIFAR10.name}': no CIFAR-10 batches in ${DATA_DIR_ENV}=${root}: expected ${join(root, CIFAR10_SUBDIR)}/ with ${files} (the "CIFAR-10 binary version")`,
      );
    const { train, test } = loadCifar10(dir);
    return { pool: train, test, source: `CIFAR-10 from ${dir}: ${train.n} train, ${test.n} test` };
  },
};

/** A user's own x.npy + y.npy, IDX pair or CSV file (files-dataset.ts). */
export const FILES_DATASET: DatasetDefinition<FilesOptions> = { name: 'files', ...FILES_ENTRY };

/** The built-in data sets, registered in this order when the module loads. */
export const BUILTIN_DATASETS: readonly DatasetDefinition[] = [
  FASHION_MNIST,
  SYNTHETIC,
  CIFAR10,
  FILES_DATASET,
] as DatasetDefinition[];

/** The data set of a configuration without `data.dataset`. */
export const DEFAULT_DATASET: string = FASHION_MNIST.name;

const registry = new Map<string, DatasetDefinition>();

const NAME_RE = /^[a-z0-9][a-z0-9._-]*$/i;

/**
 * Adds a data set under `definition.name`.
 * @throws TypeError when the definition is malformed; RangeError when the name is taken or not
 *   a name of letters, digits, '.', '_' and '-'.
 */
export function registerDataset<O>(definition: DatasetDefinition<O>): void {
  if (typeof definition !== 'object' || definition === null)
    throw new TypeError('definition: expected { name, description, shape, load, options? }');
  const { name, description, options, shape, load } = definition;
  if (typeof name !== 'string') throw new TypeError('name: expected a string');
  if (!NAME_RE.test(name))
    throw new RangeError(`name: expected letters, digits, '.', '_' or '-', got '${name}'`);
  if (registry.has(name)) throw new RangeError(`name: data set '${name}' is already registered`);
  if (typeof description !== 'string') throw new TypeError('description: expected a string');
  if (options !== undefined && (typeof options !== 'object' || options === null || options.type !== 'object'))
    throw new TypeError('options: expected a TypeBox object schema (Type.Object)');
  if (typeof shape !== 'function') throw new TypeError('shape: expected a function');
  if (typeof load !== 'function') throw new TypeError('load: expected a function');
  registry.set(name, definition as DatasetDefinition);
}

/** The registered data set names, built-ins first, in registration order. */
export function datasetNames(): string[] {
  return [...registry.keys()];
}

/** The data set registered as `name`, or undefined. */
export function findDataset(name: string): DatasetDefinition | undefined {
  return registry.get(name);
}

for (const definition of BUILTIN_DATASETS) registerDataset(definition);
