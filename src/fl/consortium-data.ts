/**
 * From an experiment configuration and a seed to the consortium's data: the common test set, a
 * server-held validation set (FedTSV's reference update, papers/002 §4), and each silo's
 * training set after the optional long-tailed transform (papers/004 §4.1; these three are
 * `data.split`'s, src/data/split-registry.ts), partitioning, label
 * noise and data-side misbehaviour. The data set comes from the dataset registry
 * (src/data/registry.ts) by `data.dataset`.
 */

import { DEFAULT_TEST_SIZE } from '../consortium/defaults.js';
import { type Dataset, subset } from '../data/dataset.js';
import { applyLabelNoise, linearNoiseRates } from '../data/label-noise.js';
import type { Misbehavior } from '../data/misbehaviors/definition.js';
import { misbehaviorKind } from '../data/misbehaviors/registry.js';
import type { Partition } from '../data/partition.js';
import { DEFAULT_PARTITION, type PartitionOptions, partitionKind } from '../data/partition-registry.js';
import {
  type DataShape,
  type DatasetContext,
  type DatasetDefinition,
  DEFAULT_DATASET,
  findDataset,
  type LoadedDataset,
} from '../data/registry.js';
import { deriveSeed, SEED_STREAMS } from '../data/seed.js';
import { DEFAULT_SPLIT, dataSplit } from '../data/split-registry.js';
import type { RunConfig } from './run-config.js';

/** The consortium's data for one seed. */
export interface Consortium {
  silos: Dataset[];
  /** Role of each silo: 'honest', an attack kind, or 'noise=0.33'. */
  roles: string[];
  /** Update-side misbehaviour per silo (undefined for honest updates). */
  updateAttacks: (Misbehavior | undefined)[];
  test: Dataset;
  validation: Dataset;
  /** Where the data came from, for the results. */
  source: string;
  numClasses: number;
}

/** The configured data set's registry entry and its options block (`data.<name>`, default {}). */
function datasetOf(cfg: RunConfig): {
  definition: DatasetDefinition;
  options: Record<string, unknown>;
} {
  const name = cfg.data?.dataset ?? DEFAULT_DATASET;
  const definition = findDataset(name);
  if (!definition) throw new RangeError(`data.dataset: no data set '${name}' is registered`);
  const block = (cfg.data as Record<string, unknown> | undefined)?.[name];
  return { definition, options: (block ?? {}) as Record<string, unknown> };
}

/** Shape of one example and the number of classes the configured data set has. */
export function dataShapeOf(cfg: RunConfig): DataShape {
  const { definition, options } = datasetOf(cfg);
  return definition.shape(options);
}

/** The configured data set, loaded; checks that it has the shape its registry entry announces. */
function loadPool(cfg: RunConfig, seed: number, env: DatasetContext['env']): LoadedDataset {
  const { definition, options } = datasetOf(cfg);
  const data = cfg.data ?? {};
  const loaded = definition.load(options, {
    seed,
    env,
    silos: cfg.silos,
    ...(data.trainSize !== undefined ? { trainSize: data.trainSize } : {}),
    testSize: data.testSize ?? DEFAULT_TEST_SIZE, // generators size their pool by the test set actually drawn
  });
  const want = definition.shape(options);
  for (const ds of [loaded.pool, loaded.test])
    if (
      ds !== undefined &&
      (ds.numClasses !== want.numClasses || ds.shape.some((d, i) => d !== want.inputShape[i]))
    )
      throw new Error(
        `data.dataset '${definition.name}': loaded ${ds.name} has shape [${ds.shape.join(', ')}] and ${ds.numClasses} classes, its registry entry announces [${want.inputShape.join(', ')}] and ${want.numClasses}`,
      );
  return loaded;
}

/** Redraws of a partition that leaves a silo without examples, before giving up. */
const MAX_PARTITION_DRAWS = 1000;

/**
 * The configured partition, redrawn (draw k > 1 with seed deriveSeed(seed, 3, k)) while a silo gets
 * fewer than `minShare` examples (the split's, 1 unless it drops some of a silo's share): an empty silo cannot train, and Dirichlet(0.1) over 48 silos (papers/000) leaves one
 * empty in most draws. A split without an empty silo is the first draw, as before redraws existed.
 * Throws RangeError naming `partition` when no draw works.
 */
function partition(
  cfg: RunConfig,
  labels: Dataset['y'],
  indices: Int32Array,
  numClasses: number,
  seed: number,
  minShare: number,
): Partition {
  for (let draw = 1; draw <= MAX_PARTITION_DRAWS; draw++) {
    const p = partitionOnce(cfg, labels, indices, numClasses, seed, draw);
    if (p.silos.every((s) => s.length >= minShare)) return p;
  }
  throw new RangeError(
    `partition: every one of ${MAX_PARTITION_DRAWS} draws left a silo with no training examples; use more data, fewer silos or a larger alpha`,
  );
}

function partitionOnce(
  cfg: RunConfig,
  labels: Dataset['y'],
  indices: Int32Array,
  numClasses: number,
  seed: number,
  draw: number,
): Partition {
  const p: PartitionOptions & { readonly kind: string } = cfg.partition ?? { kind: DEFAULT_PARTITION };
  const base = {
    numSilos: cfg.silos,
    seed:
      draw === 1
        ? deriveSeed(seed, SEED_STREAMS.run.partition)
        : deriveSeed(seed, SEED_STREAMS.run.partition, draw),
    indices,
  };
  return partitionKind(p.kind).split(labels, base, p, numClasses);
}

/**
 * Each silo's label-noise rate: linear 0 … maxRate (papers/003 §5.4), or the explicit `silos`
 * map (`{ "4": 0.8 }`, the others 0). The config check (config.ts) ensures exactly one form.
 */
export function labelNoiseRates(
  n: number,
  noise: { maxRate?: number; silos?: Record<string, number> },
): Float64Array {
  if (noise.maxRate !== undefined) return linearNoiseRates(n, 0, noise.maxRate);
  const rates = new Float64Array(n);
  for (const [k, r] of Object.entries(noise.silos ?? {})) rates[Number(k)] = r;
  return rates;
}

/** Options of {@link buildConsortium}. */
export interface BuildConsortiumOptions {
  /** Environment the data sets read paths from ($FEDSCORE_DATA_DIR); default process.env. */
  env?: DatasetContext['env'];
}

/**
 * Builds the consortium's data (see the module comment). Throws RangeError naming the config
 * field on impossible sizes; Error naming `data.dataset` when the data set's files are missing.
 */
export function buildConsortium(
  cfg: RunConfig,
  seed: number,
  options: BuildConsortiumOptions = {},
): Consortium {
  const { pool, test: given, source, fullDataHint } = loadPool(cfg, seed, options.env ?? process.env);
  const numClasses = pool.numClasses;
  // The test set, the validation set and the pool the partition shares out: data.split's entry
  // (src/data/split-registry.ts).
  const plan = dataSplit(cfg.data?.split ?? DEFAULT_SPLIT).plan({
    pool,
    given,
    numClasses,
    seed,
    testSize: cfg.data?.testSize ?? DEFAULT_TEST_SIZE,
    trainSize: cfg.data?.trainSize,
    longTail: cfg.data?.longTail,
    source,
    fullDataHint,
  });
  const { test, validation } = plan;
  const part = plan.toSilos(
    partition(cfg, plan.partitionLabels, plan.partitionPool, numClasses, seed, plan.minShare),
  );

  let labels = pool.y;
  const roles = Array.from({ length: cfg.silos }, () => 'honest');
  // Data roles first (Mavericks and non-IID silos are the last ones); noise and attacks override them.
  const p = cfg.partition;
  if (p)
    partitionKind(p.kind)
      .roles?.(p, cfg.silos)
      .forEach((role, i) => {
        if (role !== undefined) roles[i] = role;
      });
  if (cfg.labelNoise) {
    const rates = labelNoiseRates(cfg.silos, cfg.labelNoise);
    labels = applyLabelNoise(pool.y, part.silos, {
      numClasses,
      rates,
      seed: deriveSeed(seed, SEED_STREAMS.run.labelNoise),
    }).labels;
    rates.forEach((r, i) => {
      if (cfg.labelNoise?.maxRate !== undefined || r > 0) roles[i] = `noise=${r.toFixed(2)}`;
    });
  }
  const noisy: Dataset = labels === pool.y ? pool : { ...pool, y: labels };
  const silos = part.silos.map((idx, i) => subset(noisy, idx, `silo-${i}`));
  const updateAttacks: (Misbehavior | undefined)[] = silos.map(() => undefined);
  for (const [k, a] of (cfg.attacks ?? []).entries()) {
    const kind = misbehaviorKind(a.kind);
    const m: Misbehavior = {
      kind: a.kind,
      seed: deriveSeed(seed, SEED_STREAMS.run.attack, k),
      ...(a.factor !== undefined ? { factor: a.factor } : {}),
    };
    if (kind.side === 'data') silos[a.silo] = kind.apply(silos[a.silo]!, m);
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
