/**
 * From an experiment configuration and a seed to the consortium's data: the common test set, a
 * server-held validation set (FedTSV's reference update, papers/002 §4), and each silo's
 * training set after partitioning, label noise and data-side misbehaviour.
 */
import { type Dataset, subset } from '../data/dataset.js';
import { loadFashionMnist } from '../data/fashion-mnist.js';
import { applyLabelNoise, linearNoiseRates } from '../data/label-noise.js';
import { partitionMavericks } from '../data/mavericks.js';
import {
  applyDataMisbehavior,
  isDataMisbehavior,
  type Misbehavior,
  type UpdateMisbehavior,
} from '../data/misbehavior.js';
import {
  type Partition,
  partitionDirichlet,
  partitionIid,
  partitionQuantitySkew,
} from '../data/partition.js';
import { gaussianMixture } from '../data/synthetic.js';
import { balancedTestSplit } from '../data/test-set.js';
import type { ExperimentConfig } from './config.js';

/** The consortium's data for one seed. */
export interface Consortium {
  silos: Dataset[];
  /** Role of each silo: 'honest', an attack kind, or 'noise=0.33'. */
  roles: string[];
  /** Update-side misbehaviour per silo (undefined for honest updates). */
  updateAttacks: (UpdateMisbehavior | undefined)[];
  test: Dataset;
  validation: Dataset;
  /** Where the data came from, for the results. */
  source: string;
  numClasses: number;
}

/** Shape of one example and the number of classes the configured data set has. */
export function dataShapeOf(cfg: ExperimentConfig): {
  inputShape: [number, number, number];
  numClasses: number;
} {
  const data = cfg.data ?? {};
  if ((data.dataset ?? 'fashion-mnist') === 'synthetic')
    return { inputShape: [1, data.synthetic?.features ?? 784, 1], numClasses: data.synthetic?.classes ?? 10 };
  return { inputShape: [28, 28, 1], numClasses: 10 };
}

/** Mixes integers into a 31-bit seed (deterministic, order-sensitive). */
export function deriveSeed(...parts: number[]): number {
  let h = 0x811c9dc5;
  for (const p of parts) {
    h = Math.imul(h ^ (p >>> 0), 0x01000193);
    h ^= h >>> 15;
    h = Math.imul(h, 0x2c1b3c6d);
    h ^= h >>> 12;
  }
  return h >>> 1;
}

function loadPool(
  cfg: ExperimentConfig,
  seed: number,
): { pool: Dataset; test?: Dataset; source: string; partial?: boolean } {
  const data = cfg.data ?? {};
  if ((data.dataset ?? 'fashion-mnist') === 'synthetic') {
    const s = data.synthetic ?? {};
    const total = s.examples ?? (data.trainSize ?? 200 * cfg.silos) + (data.testSize ?? 500) + 200;
    const pool = gaussianMixture({
      n: total,
      numClasses: s.classes ?? 10,
      features: s.features ?? 784,
      separation: s.separation ?? 0.6,
      seed: deriveSeed(seed, 1),
      meansSeed: deriveSeed(seed, 2),
      name: 'synthetic',
    });
    return { pool, source: `synthetic Gaussian mixture (${total} examples)` };
  }
  const fm = loadFashionMnist({ split: { testFraction: 0.2, seed } });
  // partial: the bundled copy, which carries the 10k test split only
  return { pool: fm.train, test: fm.test, source: fm.note, partial: fm.splitFromTest };
}

/** Redraws of a partition that leaves a silo without examples, before giving up. */
const MAX_PARTITION_DRAWS = 1000;

/**
 * The configured partition, redrawn (draw k > 1 with seed deriveSeed(seed, 3, k)) while a silo gets
 * no examples: an empty silo cannot train, and Dirichlet(0.1) over 48 silos (papers/000) leaves one
 * empty in most draws. A split without an empty silo is the first draw, as before redraws existed.
 * Throws RangeError naming `partition` when no draw works.
 */
function partition(
  cfg: ExperimentConfig,
  labels: Dataset['y'],
  indices: Int32Array,
  numClasses: number,
  seed: number,
): Partition {
  for (let draw = 1; draw <= MAX_PARTITION_DRAWS; draw++) {
    const p = partitionOnce(cfg, labels, indices, numClasses, seed, draw);
    if (p.silos.every((s) => s.length > 0)) return p;
  }
  throw new RangeError(
    `partition: every one of ${MAX_PARTITION_DRAWS} draws left a silo with no training examples; use more data, fewer silos or a larger alpha`,
  );
}

function partitionOnce(
  cfg: ExperimentConfig,
  labels: Dataset['y'],
  indices: Int32Array,
  numClasses: number,
  seed: number,
  draw: number,
): Partition {
  const p = cfg.partition ?? { kind: 'iid' };
  const base = {
    numSilos: cfg.silos,
    seed: draw === 1 ? deriveSeed(seed, 3) : deriveSeed(seed, 3, draw),
    indices,
  };
  switch (p.kind) {
    case 'iid':
      return partitionIid(labels, base);
    case 'dirichlet':
      return partitionDirichlet(labels, { ...base, alpha: p.alpha!, numClasses });
    case 'mixed':
      return partitionMixed(labels, base, p.nonIid!, p.alpha!, numClasses);
    case 'mavericks':
      return partitionMavericks(labels, {
        ...base,
        numClasses,
        numMavericks: p.mavericks ?? 1,
        mode: p.mode ?? 'exclusive',
        ...(p.classesPerMaverick !== undefined ? { classesPerMaverick: p.classesPerMaverick } : {}),
        ...(p.alpha !== undefined ? { alpha: p.alpha } : {}),
      });
    case 'quantity-skew':
      return partitionQuantitySkew(labels, { ...base, ...(p.beta !== undefined ? { beta: p.beta } : {}) });
  }
}

/**
 * papers/002 §IV.A's mix: the pool is dealt IID into `numSilos` parts; the first numSilos − nonIid
 * silos keep theirs, and the union of the last `nonIid` parts is split among those silos by
 * Dirichlet(alpha) over labels (so each group holds a share of the pool proportional to its size).
 */
export function partitionMixed(
  labels: Dataset['y'],
  base: { numSilos: number; seed: number; indices: Int32Array },
  nonIid: number,
  alpha: number,
  numClasses: number,
): Partition {
  if (!Number.isInteger(nonIid) || nonIid < 1 || nonIid >= base.numSilos)
    throw new RangeError(`partition.nonIid: expected an integer in [1, ${base.numSilos - 1}], got ${nonIid}`);
  const iid = partitionIid(labels, base);
  const iidSilos = base.numSilos - nonIid;
  const rest = iid.silos.slice(iidSilos);
  const pool = new Int32Array(rest.reduce((s, a) => s + a.length, 0));
  let at = 0;
  for (const a of rest) {
    pool.set(a, at);
    at += a.length;
  }
  const skewed = partitionDirichlet(labels, {
    numSilos: nonIid,
    seed: deriveSeed(base.seed, 0x4d1),
    indices: pool,
    alpha,
    numClasses,
    minSize: 1,
  });
  return {
    silos: [...iid.silos.slice(0, iidSilos), ...skewed.silos],
    kind: 'mixed',
    params: { numSilos: base.numSilos, nonIid, alpha, seed: base.seed, pool: base.indices.length },
  };
}

/** Builds the consortium's data (see the module comment). Throws RangeError naming the config field on impossible sizes. */
export function buildConsortium(cfg: ExperimentConfig, seed: number): Consortium {
  const { pool, test: given, source, partial } = loadPool(cfg, seed);
  const numClasses = pool.numClasses;
  const testSize = cfg.data?.testSize ?? 2000;
  const validationSize = Math.min(500, Math.floor(pool.n / 10));
  // The common test set is class-balanced (papers/003 §5); drawn from the dedicated test split when there is one.
  const testPool = given ?? pool;
  const perClass = Math.floor(testSize / numClasses);
  if (perClass < 1)
    throw new RangeError(`data.testSize: must be at least the number of classes (${numClasses})`);
  const testSplit = balancedTestSplit(testPool.y, { numClasses, perClass, seed: deriveSeed(seed, 4) });
  const test = subset(testPool, testSplit.test, 'test');
  let rest = given ? Int32Array.from({ length: pool.n }, (_, i) => i) : testSplit.rest;
  const validation = subset(pool, rest.subarray(0, validationSize), 'validation');
  rest = rest.subarray(validationSize);
  const trainSize = cfg.data?.trainSize ?? rest.length;
  if (trainSize > rest.length)
    throw new RangeError(
      `data.trainSize: ${trainSize} exceeds the ${rest.length} training examples available (data: ${source})` +
        (partial
          ? '; the full set: apt-get install dataset-fashion-mnist, or FEDSCORE_DATA_DIR=<dir with the IDX files>'
          : ''),
    );
  rest = rest.subarray(0, trainSize);
  const part = partition(cfg, pool.y, rest, numClasses, seed);

  let labels = pool.y;
  const roles = Array.from({ length: cfg.silos }, () => 'honest');
  // Data roles first (Mavericks and non-IID silos are the last ones); noise and attacks override them.
  const p = cfg.partition;
  if (p?.kind === 'mavericks')
    for (let i = cfg.silos - (p.mavericks ?? 1); i < cfg.silos; i++) roles[i] = 'maverick';
  if (p?.kind === 'mixed') for (let i = cfg.silos - p.nonIid!; i < cfg.silos; i++) roles[i] = 'non-iid';
  if (cfg.labelNoise) {
    const rates = linearNoiseRates(cfg.silos, 0, cfg.labelNoise.maxRate);
    labels = applyLabelNoise(pool.y, part.silos, { numClasses, rates, seed: deriveSeed(seed, 5) }).labels;
    rates.forEach((r, i) => {
      roles[i] = `noise=${r.toFixed(2)}`;
    });
  }
  const noisy: Dataset = labels === pool.y ? pool : { ...pool, y: labels };
  const silos = part.silos.map((idx, i) => subset(noisy, idx, `silo-${i}`));
  const updateAttacks: (UpdateMisbehavior | undefined)[] = silos.map(() => undefined);
  for (const [k, a] of (cfg.attacks ?? []).entries()) {
    const attackSeed = deriveSeed(seed, 6, k);
    const m: Misbehavior =
      a.kind === 'label-flip' || a.kind === 'free-rider'
        ? { kind: a.kind }
        : a.kind === 'scale'
          ? { kind: 'scale', factor: a.factor ?? -1 }
          : a.kind === 'random-update'
            ? {
                kind: 'random-update',
                seed: attackSeed,
                ...(a.factor !== undefined ? { std: a.factor } : {}),
              }
            : { kind: a.kind, seed: attackSeed };
    if (isDataMisbehavior(m)) silos[a.silo] = applyDataMisbehavior(silos[a.silo]!, m);
    else updateAttacks[a.silo] = m;
    roles[a.silo] = a.kind;
  }
  for (const [i, s] of silos.entries())
    if (s.n === 0)
      throw new RangeError(
        `partition: silo ${i} received no training examples; use more data or fewer silos`,
      );
  return { silos, roles, updateAttacks, test, validation, source, numClasses };
}
