/**
 * Splitting a pool of examples among silos: IID, Dirichlet label skew, quantity skew, papers/002's
 * IID/non-IID mix, and the common shape every partition returns. Mavericks, the long-tailed transform, the common test
 * set and label noise live in their own files and return the same `Partition`.
 *
 * A partition works on a pool of dataset indices (default: all of them, or e.g. what is left
 * after the common test set was taken out) and gives each silo an increasing Int32Array of
 * dataset indices. Unless a partition says otherwise, the silos are disjoint and together
 * cover the pool exactly once (`checkPartition`). All randomness comes from `seed`.
 */
import { checkIndices, checkInt, checkLabels, checkNumber, checkSeed } from './check.js';
import { indicesByClass, type Labels, range } from './dataset.js';
import { deriveSeed, SEED_STREAMS } from './seed.js';
import { createRandom, type Random } from './seeded-draws.js';

/** Per-silo index arrays and what produced them. */
export interface Partition {
  /** silos[i]: the dataset indices silo i holds, increasing. */
  silos: Int32Array[];
  /** Which partition produced it, e.g. 'dirichlet'. */
  kind: string;
  /** Its parameters (seed included), for run records. */
  params: Readonly<Record<string, unknown>>;
}

/** Options every partition accepts. */
export interface PoolOptions {
  /** Number of silos (≥ 1). */
  numSilos: number;
  seed: number;
  /** The dataset indices to split (default 0..n−1). */
  indices?: Int32Array;
}

/** Validates the shared options and returns the pool. */
function poolOf(n: number, o: PoolOptions): { numSilos: number; seed: number; pool: Int32Array } {
  if (typeof o !== 'object' || o === null) throw new TypeError('options: expected an object');
  const numSilos = checkInt('numSilos', o.numSilos, 1);
  const seed = checkSeed('seed', o.seed);
  const pool = o.indices === undefined ? range(n) : checkIndices('indices', o.indices, n, true);
  return { numSilos, seed, pool };
}

/** Sorts each silo's indices (canonical form). */
function finish(silos: Int32Array[]): Int32Array[] {
  for (const s of silos) s.sort();
  return silos;
}

/**
 * Cuts `idx` into consecutive pieces with sizes floor(len·cumsum(p)) differences (the last piece
 * ends at len), as in the NIID-Bench Dirichlet split (Li et al. 2022).
 */
function cutByProportions(idx: Int32Array, p: ArrayLike<number>): Int32Array[] {
  const out: Int32Array[] = [];
  let acc = 0;
  let start = 0;
  for (let j = 0; j < p.length; j++) {
    acc += p[j]!;
    const end = j === p.length - 1 ? idx.length : Math.min(idx.length, Math.floor(acc * idx.length));
    out.push(idx.subarray(start, Math.max(start, end)));
    start = Math.max(start, end);
  }
  return out;
}

function concatAll(parts: Int32Array[][], numSilos: number): Int32Array[] {
  const out: Int32Array[] = [];
  for (let i = 0; i < numSilos; i++) {
    let len = 0;
    for (const p of parts) len += p[i]!.length;
    const a = new Int32Array(len);
    let o = 0;
    for (const p of parts) {
      a.set(p[i]!, o);
      o += p[i]!.length;
    }
    out.push(a);
  }
  return out;
}

/**
 * IID: the pool shuffled by `seed` and dealt into numSilos parts whose sizes differ by at most
 * one. Throws RangeError naming the option on bad options.
 */
export function partitionIid(labels: Labels, options: PoolOptions): Partition {
  const { numSilos, seed, pool } = poolOf(labels.length, options);
  const rng = createRandom(seed);
  const idx = rng.shuffle(pool.slice());
  const silos: Int32Array[] = [];
  const base = Math.floor(idx.length / numSilos);
  const extra = idx.length % numSilos;
  let start = 0;
  for (let i = 0; i < numSilos; i++) {
    const len = base + (i < extra ? 1 : 0);
    silos.push(idx.slice(start, start + len));
    start += len;
  }
  return { silos: finish(silos), kind: 'iid', params: { numSilos, seed, pool: pool.length } };
}

/** Options for {@link partitionDirichlet}. */
export interface DirichletOptions extends PoolOptions {
  /** Concentration μ (papers/003 §5, default there 0.5) or γ (papers/000 Fig. 1): > 0; larger is closer to IID. */
  alpha: number;
  numClasses: number;
  /** Redraw until every silo holds at least this many examples (default 0: empty silos allowed). */
  minSize?: number;
  /** Draws before giving up on `minSize` (default 1000). */
  maxDraws?: number;
}

function dirichletSplit(byClass: Int32Array[], numSilos: number, alpha: number, rng: Random): Int32Array[] {
  const conc = new Float64Array(numSilos).fill(alpha);
  const parts = byClass.map((idx) => {
    const shuffled = rng.shuffle(idx.slice());
    return cutByProportions(shuffled, rng.dirichlet(conc));
  });
  return concatAll(parts, numSilos);
}

/**
 * Dirichlet label skew (Hsu et al. 2019; papers/003 §5 with μ = 0.5, papers/000 with
 * Dir(γ), γ ∈ {0.1, 1, 10}; papers/004 after the long-tailed transform): for every class c,
 * proportions p_c ~ Dir(α·1_numSilos) and silo i gets a ⌊·⌋-rounded share p_{c,i} of class c's
 * (shuffled) pool examples. Each silo's share of a class has mean 1/n and variance
 * (1/n)(1 − 1/n)/(nα + 1). Redraws the whole split while a silo has fewer than `minSize`.
 * Throws RangeError naming the option on bad options or when `minSize` is not reached.
 */
export function partitionDirichlet(labels: Labels, options: DirichletOptions): Partition {
  const { numSilos, seed, pool } = poolOf(labels.length, options);
  const numClasses = checkInt('numClasses', options.numClasses, 1);
  checkLabels('labels', labels, numClasses);
  const alpha = checkNumber('alpha', options.alpha, 0, Number.POSITIVE_INFINITY, { min: true, max: true });
  const minSize = checkInt('minSize', options.minSize ?? 0, 0);
  const maxDraws = checkInt('maxDraws', options.maxDraws ?? 1000, 1);
  if (minSize * numSilos > pool.length)
    throw new RangeError(
      `minSize: ${minSize} per silo × ${numSilos} silos exceeds the pool of ${pool.length}`,
    );
  const rng = createRandom(seed);
  const byClass = indicesByClass(labels, numClasses, pool);
  for (let draw = 1; draw <= maxDraws; draw++) {
    const silos = dirichletSplit(byClass, numSilos, alpha, rng);
    if (silos.every((s) => s.length >= minSize))
      return {
        silos: finish(silos),
        kind: 'dirichlet',
        params: { numSilos, seed, alpha, numClasses, minSize, draws: draw, pool: pool.length },
      };
  }
  throw new RangeError(
    `minSize: no Dirichlet(${alpha}) split over ${numSilos} silos gave every silo ≥ ${minSize} examples in ${maxDraws} draws`,
  );
}

/** Options of `partitionMixed`. */
export interface MixedOptions extends PoolOptions {
  indices: Int32Array;
  /** Silos with label skew (the last `nonIid` of them), in [1, numSilos − 1]. */
  nonIid: number;
  /** Dirichlet concentration of their label skew. */
  alpha: number;
  numClasses: number;
}

/**
 * papers/002 §IV.A's mix: the pool is dealt IID into `numSilos` parts; the first numSilos − nonIid
 * silos keep theirs, and the union of the last `nonIid` parts is split among those silos by
 * Dirichlet(alpha) over labels (so each group holds a share of the pool proportional to its size).
 * Throws RangeError naming `partition.nonIid` when it is not an integer in [1, numSilos − 1].
 */
export function partitionMixed(labels: Labels, options: MixedOptions): Partition {
  const { nonIid, alpha, numClasses, ...base } = options;
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
    seed: deriveSeed(base.seed, SEED_STREAMS.sub.mixedNonIid),
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

/** Options for {@link partitionQuantitySkew}. */
export interface QuantitySkewOptions extends PoolOptions {
  /** Silo sizes ∝ q ~ Dir(beta·1_numSilos) (Li et al. 2022, quantity skew); > 0. Exclusive with `fractions`. */
  beta?: number;
  /** Explicit silo size fractions (non-negative, summing to 1 within 1e-9). Exclusive with `beta`. */
  fractions?: readonly number[];
  /** Redraw (beta only) until every silo holds at least this many examples (default 1). */
  minSize?: number;
  maxDraws?: number;
}

/**
 * Quantity skew: IID labels, unequal sizes. Sizes follow `fractions`, or proportions drawn
 * from Dir(beta) (each silo's expected fraction 1/n, variance (1/n)(1 − 1/n)/(nβ + 1)).
 * Throws RangeError naming the option on bad options or when `minSize` is not reached.
 */
export function partitionQuantitySkew(labels: Labels, options: QuantitySkewOptions): Partition {
  const { numSilos, seed, pool } = poolOf(labels.length, options);
  const minSize = checkInt('minSize', options.minSize ?? 1, 0);
  const maxDraws = checkInt('maxDraws', options.maxDraws ?? 1000, 1);
  if ((options.beta === undefined) === (options.fractions === undefined))
    throw new RangeError('beta: give exactly one of beta and fractions');
  const rng = createRandom(seed);
  if (options.fractions !== undefined) {
    const fr = options.fractions;
    if (fr.length !== numSilos)
      throw new RangeError(`fractions: expected ${numSilos} entries, got ${fr.length}`);
    let sum = 0;
    fr.forEach((f, i) => {
      sum += checkNumber(`fractions[${i}]`, f, 0, 1);
    });
    if (Math.abs(sum - 1) > 1e-9) throw new RangeError(`fractions: expected a sum of 1, got ${sum}`);
    const silos = cutByProportions(rng.shuffle(pool.slice()), fr).map((s) => s.slice());
    return { silos: finish(silos), kind: 'quantity-skew', params: { numSilos, seed, fractions: [...fr] } };
  }
  const beta = checkNumber('beta', options.beta, 0, Number.POSITIVE_INFINITY, { min: true, max: true });
  if (minSize * numSilos > pool.length)
    throw new RangeError(
      `minSize: ${minSize} per silo × ${numSilos} silos exceeds the pool of ${pool.length}`,
    );
  const conc = new Float64Array(numSilos).fill(beta);
  for (let draw = 1; draw <= maxDraws; draw++) {
    const silos = cutByProportions(rng.shuffle(pool.slice()), rng.dirichlet(conc));
    if (silos.every((s) => s.length >= minSize))
      return {
        silos: finish(silos.map((s) => s.slice())),
        kind: 'quantity-skew',
        params: { numSilos, seed, beta, minSize, draws: draw },
      };
  }
  throw new RangeError(
    `minSize: no Dir(${beta}) size split over ${numSilos} silos gave every silo ≥ ${minSize} examples in ${maxDraws} draws`,
  );
}

/**
 * Checks that a partition's silos are disjoint and (when `exact`) cover `pool` exactly;
 * returns a description of the first problem, or null. For tests and for inputs from outside.
 */
export function partitionProblem(p: Partition, n: number, pool?: Int32Array, exact = true): string | null {
  const seen = new Uint8Array(n);
  for (let s = 0; s < p.silos.length; s++) {
    const silo = p.silos[s]!;
    for (let k = 0; k < silo.length; k++) {
      const i = silo[k]!;
      if (!(i >= 0 && i < n)) return `silo ${s}: index ${i} outside [0, ${n})`;
      if (seen[i]) return `silo ${s}: index ${i} is in two silos (or twice in one)`;
      seen[i] = 1;
    }
  }
  if (exact) {
    const want = pool ?? range(n);
    let covered = 0;
    for (let k = 0; k < want.length; k++) {
      if (!seen[want[k]!]) return `pool index ${want[k]} is in no silo`;
      covered++;
    }
    let total = 0;
    for (const s of p.silos) total += s.length;
    if (total !== covered) return `silos hold ${total} indices but the pool has ${covered}`;
  }
  return null;
}

/** Per-silo, per-class counts: counts[i][c] is how many examples of class c silo i holds. */
export function siloClassCounts(p: Partition, labels: Labels, numClasses: number): Int32Array[] {
  return p.silos.map((s) => {
    const c = new Int32Array(numClasses);
    for (let k = 0; k < s.length; k++) c[labels[s[k]!]!]!++;
    return c;
  });
}
