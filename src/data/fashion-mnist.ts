/**
 * Fashion-MNIST (Xiao, Rasul & Vollgraf 2017; 28×28 grey images, 10 classes, MIT-licensed),
 * the default real data set of fedscore.
 *
 * Where the files come from, in order:
 *   1. `$FEDSCORE_DATA_DIR` (or the `dataDir` option) — source 'env'. It may be the directory
 *      holding the IDX files or its parent with a `fashion-mnist/` subdirectory. When it is set
 *      but holds no Fashion-MNIST files, loading fails instead of silently falling back.
 *   2. `/usr/share/datasets/fashion-mnist/` from Debian's `dataset-fashion-mnist` — source
 *      'debian', the full 60k train / 10k test split.
 *   3. `examples/data/fashion-mnist/` in this repository — source 'bundled', only the 10k test
 *      split. It is split into train and test deterministically by seed, stratified by class,
 *      and the result's `note` says so.
 * Every load reports `source`, `dir` and a one-line `note` for run records.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkInt, checkNumber, checkSeed } from './check.js';
import { type Dataset, indicesByClass, subset, take } from './dataset.js';
import { readIdxDataset } from './idx.js';
import { createRandom } from './seeded-draws.js';

/** Where a Fashion-MNIST load found its files. */
export type FashionMnistSource = 'env' | 'debian' | 'bundled';

/** Debian's install location (package dataset-fashion-mnist). */
export const DEBIAN_FASHION_MNIST_DIR = '/usr/share/datasets/fashion-mnist';

/** The environment variable that points at another data directory. */
export const DATA_DIR_ENV = 'FEDSCORE_DATA_DIR';

/** Class names in label order (upstream README). */
export const FASHION_MNIST_CLASSES = [
  'T-shirt/top',
  'Trouser',
  'Pullover',
  'Dress',
  'Coat',
  'Sandal',
  'Shirt',
  'Sneaker',
  'Bag',
  'Ankle boot',
] as const;

const FILES = {
  trainImages: 'train-images-idx3-ubyte',
  trainLabels: 'train-labels-idx1-ubyte',
  testImages: 't10k-images-idx3-ubyte',
  testLabels: 't10k-labels-idx1-ubyte',
} as const;

/** The IDX files found in one directory (gzipped preferred); train files may be absent. */
export interface FashionMnistFiles {
  source: FashionMnistSource;
  dir: string;
  testImages: string;
  testLabels: string;
  /** Absent for the bundled copy, which carries the test split only. */
  train?: { images: string; labels: string };
}

/** Options for {@link locateFashionMnist}; the directory options exist for tests and unusual installs. */
export interface LocateOptions {
  /** Use only this source. Default: the first available in the order env → debian → bundled. */
  source?: FashionMnistSource;
  /** Overrides `$FEDSCORE_DATA_DIR`. */
  dataDir?: string;
  /** Environment to read FEDSCORE_DATA_DIR from. Default process.env. */
  env?: Readonly<Record<string, string | undefined>>;
  /** Default {@link DEBIAN_FASHION_MNIST_DIR}. */
  debianDir?: string;
  /** Default: examples/data/fashion-mnist of this repository. */
  bundledDir?: string;
}

/** The repository's bundled copy: examples/data/fashion-mnist, found above this module's directory. */
export function bundledFashionMnistDir(): string {
  let d = dirname(fileURLToPath(import.meta.url));
  for (let up = 0; up < 6; up++) {
    const candidate = join(d, 'examples', 'data', 'fashion-mnist');
    if (existsSync(candidate)) return candidate;
    d = dirname(d);
  }
  return resolve(dirname(fileURLToPath(import.meta.url)), '../../examples/data/fashion-mnist');
}

function findFile(dir: string, base: string): string | undefined {
  for (const name of [`${base}.gz`, base]) {
    const p = join(dir, name);
    if (existsSync(p)) return p;
  }
  return undefined;
}

function filesIn(dir: string, source: FashionMnistSource): FashionMnistFiles | undefined {
  const testImages = findFile(dir, FILES.testImages);
  const testLabels = findFile(dir, FILES.testLabels);
  if (!testImages || !testLabels) return undefined;
  const images = findFile(dir, FILES.trainImages);
  const labels = findFile(dir, FILES.trainLabels);
  const out: FashionMnistFiles = { source, dir, testImages, testLabels };
  if (images && labels) out.train = { images, labels };
  return out;
}

/**
 * Finds the Fashion-MNIST files (see the module comment for the order). Throws Error when the
 * configured data directory, or the requested source, holds no Fashion-MNIST test files.
 */
export function locateFashionMnist(options: LocateOptions = {}): FashionMnistFiles {
  const env = options.env ?? process.env;
  const envDir = options.dataDir ?? env[DATA_DIR_ENV];
  const debianDir = options.debianDir ?? DEBIAN_FASHION_MNIST_DIR;
  const bundledDir = options.bundledDir ?? bundledFashionMnistDir();
  const want = options.source;
  if (want !== undefined && want !== 'env' && want !== 'debian' && want !== 'bundled')
    throw new RangeError(`source: expected 'env', 'debian' or 'bundled', got ${String(want)}`);
  const what = `(${FILES.testImages}[.gz] and ${FILES.testLabels}[.gz])`;
  if (envDir !== undefined && envDir !== '' && (want === undefined || want === 'env')) {
    const found = filesIn(envDir, 'env') ?? filesIn(join(envDir, 'fashion-mnist'), 'env');
    if (found) return found;
    throw new Error(
      `${envDir}: ${options.dataDir !== undefined ? 'dataDir' : DATA_DIR_ENV} holds no Fashion-MNIST files ${what}, neither directly nor under fashion-mnist/`,
    );
  }
  if (want === 'env')
    throw new Error(`source: 'env' requested but neither dataDir nor ${DATA_DIR_ENV} is set`);
  if (want === undefined || want === 'debian') {
    const found = filesIn(debianDir, 'debian');
    if (found) return found;
    if (want === 'debian')
      throw new Error(`${debianDir}: no Fashion-MNIST files ${what}; apt-get install dataset-fashion-mnist`);
  }
  const found = filesIn(bundledDir, 'bundled');
  if (found) return found;
  throw new Error(`${bundledDir}: no Fashion-MNIST files ${what} (the repository's bundled copy is missing)`);
}

/** Options for {@link loadFashionMnist}. */
export interface LoadFashionMnistOptions extends LocateOptions {
  /** Keep the first `trainLimit` training examples (after any split). */
  trainLimit?: number;
  /** Keep the first `testLimit` test examples (after any split). */
  testLimit?: number;
  /**
   * What to do when the files have no train split (the bundled copy): 'split' (default) splits
   * the 10k images into train and test, stratified by class, by `split.seed`; 'error' throws.
   */
  whenNoTrain?: 'split' | 'error';
  /** The split of a test-only source: fraction held out as test, in (0, 1] (default 0.2; 1 keeps all 10k as test) and seed (default 0). */
  split?: { testFraction?: number; seed?: number };
}

/** A loaded Fashion-MNIST: train and test sets, and where they came from. */
export interface FashionMnist {
  train: Dataset;
  test: Dataset;
  source: FashionMnistSource;
  dir: string;
  /** True when train and test were both cut from the 10k test split. */
  splitFromTest: boolean;
  /** One line for run records and READMEs, e.g. "Fashion-MNIST from debian (/usr/share/…): 60000 train, 10000 test". */
  note: string;
}

/**
 * Loads Fashion-MNIST (see the module comment for where from). Pixels are scaled to [0, 1].
 * Throws Error naming the file when a file is missing, truncated or malformed; RangeError on
 * bad options.
 */
export function loadFashionMnist(options: LoadFashionMnistOptions = {}): FashionMnist {
  if (options.trainLimit !== undefined) checkInt('trainLimit', options.trainLimit, 0);
  if (options.testLimit !== undefined) checkInt('testLimit', options.testLimit, 0);
  const testFraction = checkNumber('split.testFraction', options.split?.testFraction ?? 0.2, 0, 1, {
    min: true,
  });
  const seed = checkSeed('split.seed', options.split?.seed ?? 0);
  const whenNoTrain = options.whenNoTrain ?? 'split';
  if (whenNoTrain !== 'split' && whenNoTrain !== 'error')
    throw new RangeError(`whenNoTrain: expected 'split' or 'error', got ${String(whenNoTrain)}`);

  const files = locateFashionMnist(options);
  const src = `${files.source}:${files.dir}`;
  let train: Dataset;
  let test: Dataset;
  let splitNote = '';
  if (files.train) {
    train = readIdxDataset(files.train.images, files.train.labels, {
      name: 'fashion-mnist-train',
      source: src,
      limit: options.trainLimit,
    });
    test = readIdxDataset(files.testImages, files.testLabels, {
      name: 'fashion-mnist-test',
      source: src,
      limit: options.testLimit,
    });
  } else {
    if (whenNoTrain === 'error')
      throw new Error(`${files.dir}: holds only the Fashion-MNIST test split and whenNoTrain is 'error'`);
    const all = readIdxDataset(files.testImages, files.testLabels, {
      name: 'fashion-mnist-t10k',
      source: src,
    });
    const parts = stratifiedSplit(all.y, all.numClasses, testFraction, seed);
    train = subset(all, parts.train, 'fashion-mnist-t10k-train');
    test = subset(all, parts.test, 'fashion-mnist-t10k-test');
    if (options.trainLimit !== undefined) train = take(train, options.trainLimit);
    if (options.testLimit !== undefined) test = take(test, options.testLimit);
    splitNote = ` (both cut from the 10k test split: stratified, test fraction ${testFraction}, seed ${seed})`;
  }
  return {
    train,
    test,
    source: files.source,
    dir: files.dir,
    splitFromTest: !files.train,
    note: `Fashion-MNIST from ${files.source} (${files.dir}): ${train.n} train, ${test.n} test${splitNote}`,
  };
}

/**
 * Splits indices 0..n−1 into train and test, stratified by class: class c contributes
 * round(testFraction · n_c) of its examples, chosen by `seed`, to test. Both parts are in
 * increasing index order.
 */
export function stratifiedSplit(
  y: Int32Array | Uint8Array,
  numClasses: number,
  testFraction: number,
  seed: number,
): { train: Int32Array; test: Int32Array } {
  checkNumber('testFraction', testFraction, 0, 1);
  const rng = createRandom(checkSeed('seed', seed));
  const isTest = new Uint8Array(y.length);
  let nTest = 0;
  for (const idx of indicesByClass(y, numClasses)) {
    rng.shuffle(idx);
    const k = Math.round(testFraction * idx.length);
    for (let j = 0; j < k; j++) isTest[idx[j]!] = 1;
    nTest += k;
  }
  const train = new Int32Array(y.length - nTest);
  const test = new Int32Array(nTest);
  let a = 0;
  let b = 0;
  for (let i = 0; i < y.length; i++) {
    if (isTest[i]) test[b++] = i;
    else train[a++] = i;
  }
  return { train, test };
}
