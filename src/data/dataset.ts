/**
 * The in-memory dataset every src/data reader and generator returns, and cheap helpers on it.
 *
 * Layout: `x` is row-major, example i occupying x[i·F, (i+1)·F) with F = h·w·c features in
 * height → width → channel order (HWC, what tfjs expects for [n, h, w, c] tensors), values in
 * [0, 1]. `y` holds class labels in [0, numClasses). Plain typed arrays: no tensor library here.
 */
import { checkIndices, checkInt, checkLabels } from './check.js';

/** Class labels: bytes as read from IDX/CIFAR files, or 32-bit integers. */
export type Labels = Int32Array | Uint8Array;

/** Examples with labels (see the module comment for the layout). */
export interface Dataset {
  /** Features, row-major n × (h·w·c), values in [0, 1]. */
  readonly x: Float32Array;
  /** Labels, length n, each in [0, numClasses). */
  readonly y: Labels;
  /** Number of examples. */
  readonly n: number;
  /** Shape of one example: [height, width, channels]. Flat feature vectors use [1, F, 1]. */
  readonly shape: readonly [number, number, number];
  readonly numClasses: number;
  /** Short name, e.g. 'fashion-mnist-train'. */
  readonly name: string;
  /** Where the examples came from, human-readable (source kind and path, or generator and seed). */
  readonly source: string;
}

/** Number of features of one example (h·w·c). */
export function featureCount(ds: Pick<Dataset, 'shape'>): number {
  return ds.shape[0] * ds.shape[1] * ds.shape[2];
}

/**
 * Checks a dataset's invariants (lengths, shape, labels in range; x in [0, 1] when `checkValues`).
 * Throws TypeError/RangeError naming the field. Returns its argument.
 */
export function checkDataset(ds: Dataset, checkValues = false): Dataset {
  if (!(ds.x instanceof Float32Array)) throw new TypeError('x: expected a Float32Array');
  checkInt('n', ds.n, 0);
  checkInt('numClasses', ds.numClasses, 1);
  if (!Array.isArray(ds.shape) || ds.shape.length !== 3) throw new TypeError('shape: expected [h, w, c]');
  for (let i = 0; i < 3; i++) checkInt(`shape[${i}]`, ds.shape[i], 1);
  const f = featureCount(ds);
  if (ds.x.length !== ds.n * f)
    throw new RangeError(`x: expected n·features = ${ds.n}·${f} = ${ds.n * f} values, got ${ds.x.length}`);
  if (ds.y.length !== ds.n) throw new RangeError(`y: expected ${ds.n} labels, got ${ds.y.length}`);
  checkLabels('y', ds.y, ds.numClasses);
  if (checkValues) {
    for (let i = 0; i < ds.x.length; i++) {
      const v = ds.x[i]!;
      if (!(v >= 0 && v <= 1)) throw new RangeError(`x: value ${v} at ${i} is outside [0, 1]`);
    }
  }
  return ds;
}

/**
 * The examples at `indices`, in that order, as a new dataset. Copies the rows (a model needs
 * contiguous memory); prefer passing index arrays around and subsetting once per silo.
 * Throws RangeError on an index outside [0, n).
 */
export function subset(ds: Dataset, indices: Int32Array, name = `${ds.name}[subset]`): Dataset {
  checkIndices('indices', indices, ds.n);
  const f = featureCount(ds);
  const x = new Float32Array(indices.length * f);
  const y = ds.y instanceof Uint8Array ? new Uint8Array(indices.length) : new Int32Array(indices.length);
  for (let k = 0; k < indices.length; k++) {
    const i = indices[k]!;
    x.set(ds.x.subarray(i * f, (i + 1) * f), k * f);
    y[k] = ds.y[i]!;
  }
  return { x, y, n: indices.length, shape: ds.shape, numClasses: ds.numClasses, name, source: ds.source };
}

/**
 * Examples [start, start + count) as views on the same memory (no copy).
 * Throws RangeError when the range leaves [0, n].
 */
export function slice(
  ds: Dataset,
  start: number,
  count: number,
  name = `${ds.name}[${start}:${start + count}]`,
): Dataset {
  checkInt('start', start, 0, ds.n);
  checkInt('count', count, 0, ds.n - start);
  const f = featureCount(ds);
  return {
    x: ds.x.subarray(start * f, (start + count) * f),
    y: ds.y.subarray(start, start + count),
    n: count,
    shape: ds.shape,
    numClasses: ds.numClasses,
    name,
    source: ds.source,
  };
}

/** The first min(count, n) examples as views (no copy). Throws RangeError when count < 0. */
export function take(ds: Dataset, count: number): Dataset {
  checkInt('count', count, 0);
  return slice(ds, 0, Math.min(count, ds.n), `${ds.name}[:${Math.min(count, ds.n)}]`);
}

/**
 * The same examples with other labels (x is shared, not copied): for label noise and flipping.
 * Throws RangeError when y has the wrong length or a label out of range.
 */
export function withLabels(ds: Dataset, y: Labels, name = ds.name): Dataset {
  if (y.length !== ds.n) throw new RangeError(`y: expected ${ds.n} labels, got ${y.length}`);
  checkLabels('y', y, ds.numClasses);
  return { ...ds, y, name };
}

/** Label counts per class over `indices` (default: all of y). */
export function classCounts(y: Labels, numClasses: number, indices?: Int32Array): Int32Array {
  const counts = new Int32Array(numClasses);
  if (indices) for (let k = 0; k < indices.length; k++) counts[y[indices[k]!]!]!++;
  else for (let i = 0; i < y.length; i++) counts[y[i]!]!++;
  return counts;
}

/** For each class, the indices (from `indices`, default 0..n−1) whose label is that class, in order. */
export function indicesByClass(y: Labels, numClasses: number, indices?: Int32Array): Int32Array[] {
  const counts = classCounts(y, numClasses, indices);
  const out = Array.from(counts, (c) => new Int32Array(c));
  const fill = new Int32Array(numClasses);
  const m = indices ? indices.length : y.length;
  for (let k = 0; k < m; k++) {
    const i = indices ? indices[k]! : k;
    const c = y[i]!;
    out[c]![fill[c]!++] = i;
  }
  return out;
}

/** 0, 1, …, n−1. */
export function range(n: number): Int32Array {
  checkInt('n', n, 0);
  const r = new Int32Array(n);
  for (let i = 0; i < n; i++) r[i] = i;
  return r;
}
