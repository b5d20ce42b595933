/**
 * Maverick partitions: some silos own whole classes (papers/000 §3 and Fig. 1; papers/001
 * Def. 3.1 and Fig. 1).
 *
 * - exclusive: each Maverick owns `classesPerMaverick` classes that no other silo holds (the
 *   "Maverick" of papers/001 Fig. 1; papers/000's 2 Mavericks each owning one class).
 * - shared: all Mavericks jointly own the same `classesPerMaverick` classes, split evenly among
 *   them ("shared Mavericks", papers/000 §3, papers/001 Remark 1).
 *
 * The remaining (common) classes go to the non-Mavericks: in equal shares (alpha = Infinity,
 * the default: "non-Maverick clients have a balanced distribution", papers/001), or by
 * Dir(alpha) per class (papers/000's Mavericks + Dir(γ), γ ∈ {0.1, 1, 10}). papers/000 Fig. 1
 * shows Mavericks "still containing samples from other classes" while papers/001 Def. 3.1 has
 * their rare-class fraction q ≈ 1: `maverickCommonShare` s covers both — each Maverick first
 * receives round(s·n_c/numSilos) examples of every common class c (s = 1: what an IID silo
 * would get; default 0).
 *
 * Mavericks are the last `numMavericks` silos.
 */
import { checkIndices, checkInt, checkLabels, checkNumber, checkSeed } from './check.js';
import { indicesByClass, type Labels, range } from './dataset.js';
import type { Partition, PoolOptions } from './partition.js';
import { createRandom } from './seeded-draws.js';

/** Options for {@link partitionMavericks}. */
export interface MavericksOptions extends PoolOptions {
  numClasses: number;
  /** Number of Maverick silos, in [1, numSilos − 1]. */
  numMavericks: number;
  mode: 'exclusive' | 'shared';
  /** Classes each Maverick owns (exclusive) or the Mavericks share (shared). Default 1. */
  classesPerMaverick?: number;
  /** The rare classes, explicitly (exclusive: Maverick j owns entries [j·k, (j+1)·k)). Default: drawn by seed. */
  rareClasses?: readonly number[];
  /** Concentration for the common classes among non-Mavericks; Infinity (default) splits them equally. */
  alpha?: number;
  /** Share of common classes Mavericks also receive (see the module comment), in [0, 1]. Default 0. */
  maverickCommonShare?: number;
}

/** A Maverick partition: the partition plus who owns what. */
export interface MavericksPartition extends Partition {
  /** Silo ids of the Mavericks. */
  mavericks: number[];
  /** The rare classes (exclusive: Maverick j owns rareClasses[j·k .. (j+1)·k − 1]). */
  rareClasses: number[];
  /** owners[c]: the silos that may hold class c (the Mavericks for rare classes). */
  owners: number[][];
}

/**
 * Splits the pool with Mavericks (see the module comment). Silos are disjoint and cover the
 * pool. Throws RangeError naming the option on bad options.
 */
export function partitionMavericks(labels: Labels, options: MavericksOptions): MavericksPartition {
  const numSilos = checkInt('numSilos', options.numSilos, 2);
  const seed = checkSeed('seed', options.seed);
  const numClasses = checkInt('numClasses', options.numClasses, 2);
  checkLabels('labels', labels, numClasses);
  const pool =
    options.indices === undefined
      ? range(labels.length)
      : checkIndices('indices', options.indices, labels.length, true);
  const m = checkInt('numMavericks', options.numMavericks, 1, numSilos - 1);
  const mode = options.mode;
  if (mode !== 'exclusive' && mode !== 'shared')
    throw new RangeError(`mode: expected 'exclusive' or 'shared', got ${String(mode)}`);
  const k = checkInt('classesPerMaverick', options.classesPerMaverick ?? 1, 1);
  const nRare = mode === 'exclusive' ? m * k : k;
  if (nRare >= numClasses)
    throw new RangeError(
      `classesPerMaverick: ${nRare} rare classes leave no common class out of ${numClasses} (${mode}, ${m} Mavericks × ${k})`,
    );
  const alpha = checkNumber('alpha', options.alpha ?? Number.POSITIVE_INFINITY, 0, Number.POSITIVE_INFINITY, {
    min: true,
  });
  const share = checkNumber('maverickCommonShare', options.maverickCommonShare ?? 0, 0, 1);
  const rng = createRandom(seed);

  let rare: number[];
  if (options.rareClasses !== undefined) {
    rare = [...options.rareClasses];
    if (rare.length !== nRare)
      throw new RangeError(`rareClasses: expected ${nRare} classes, got ${rare.length}`);
    for (let i = 0; i < rare.length; i++) checkInt(`rareClasses[${i}]`, rare[i], 0, numClasses - 1);
    if (new Set(rare).size !== rare.length) throw new RangeError('rareClasses: a class is listed twice');
  } else {
    rare = Array.from(rng.permutation(numClasses).subarray(0, nRare));
  }
  const mavericks = Array.from({ length: m }, (_, j) => numSilos - m + j);
  const regular = numSilos - m;
  const owners: number[][] = Array.from({ length: numClasses }, () =>
    Array.from({ length: numSilos }, (_, s) => s),
  );

  const buckets: number[][] = Array.from({ length: numSilos }, () => []);
  const byClass = indicesByClass(labels, numClasses, pool);
  const rareOwner = new Map<number, number[]>();
  rare.forEach((c, i) => {
    rareOwner.set(c, mode === 'exclusive' ? [mavericks[Math.floor(i / k)]!] : mavericks);
  });
  for (let c = 0; c < numClasses; c++) {
    const idx = rng.shuffle(byClass[c]!.slice());
    const own = rareOwner.get(c);
    if (own) {
      owners[c] = [...own];
      // Split evenly among the owners (one owner: all of it).
      const base = Math.floor(idx.length / own.length);
      const extra = idx.length % own.length;
      let start = 0;
      own.forEach((s, j) => {
        const len = base + (j < extra ? 1 : 0);
        for (let t = start; t < start + len; t++) buckets[s]!.push(idx[t]!);
        start += len;
      });
      continue;
    }
    let start = 0;
    if (share > 0) {
      const each = Math.min(Math.round((share * idx.length) / numSilos), Math.floor(idx.length / m));
      for (const s of mavericks) {
        for (let t = start; t < start + each; t++) buckets[s]!.push(idx[t]!);
        start += each;
      }
    } else {
      owners[c] = owners[c]!.filter((s) => s < regular);
    }
    const rest = idx.subarray(start);
    const p =
      alpha === Number.POSITIVE_INFINITY
        ? new Float64Array(regular).fill(1 / regular)
        : rng.dirichlet(new Float64Array(regular).fill(alpha));
    let acc = 0;
    let from = 0;
    for (let s = 0; s < regular; s++) {
      acc += p[s]!;
      const to = s === regular - 1 ? rest.length : Math.min(rest.length, Math.floor(acc * rest.length));
      for (let t = from; t < Math.max(from, to); t++) buckets[s]!.push(rest[t]!);
      from = Math.max(from, to);
    }
  }
  const silos = buckets.map((b) => Int32Array.from(b).sort());
  return {
    silos,
    kind: `mavericks-${mode}`,
    params: {
      numSilos,
      seed,
      numMavericks: m,
      classesPerMaverick: k,
      alpha,
      maverickCommonShare: share,
      rareClasses: rare,
    },
    mavericks,
    rareClasses: rare,
    owners,
  };
}
