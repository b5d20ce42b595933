/**
 * NumPy `.npy` files (format versions 1.0, 2.0 and 3.0, numpy/lib/format.py), what
 * `np.save(path, array)` and `np.save('x.npy', tensor.numpy())` from PyTorch write.
 *
 * Layout: the magic `\x93NUMPY`, the format version (major, minor), the header length
 * (little-endian uint16 in 1.0, uint32 in 2.0 and 3.0), then the header, a Python dict literal
 * `{'descr': '<f4', 'fortran_order': False, 'shape': (60000, 28, 28), }` (latin-1, utf-8 in
 * 3.0) padded with spaces to an aligned length, then the elements in C (row-major) order.
 * Fortran-ordered and structured arrays are refused; so is float16. Both byte orders are read.
 *
 * A data set is a pair `x.npy` (features: float32, float64 or uint8; shape [N, …]) and
 * `y.npy` (integer labels, shape [N] or [N, 1]); `readNpyDataset` checks them against the
 * consortium's input shape and class count. Every error names the file and the problem.
 * No npm reader is used: the ones on the registry are small, little-used and fetch over HTTP
 * (npyjs pulls in cross-fetch); the format is a 10-byte prefix and a dict literal.
 */
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { Dataset } from './dataset.js';
import { checkFeatureRange } from './limits.js';

/** The element types read from `.npy` files (`descr` without its byte-order mark). */
export type NpyDtype =
  | 'float32'
  | 'float64'
  | 'uint8'
  | 'int8'
  | 'uint16'
  | 'int16'
  | 'uint32'
  | 'int32'
  | 'uint64'
  | 'int64'
  | 'bool';

/** A decoded `.npy` array. 64-bit integers are BigInt64Array/BigUint64Array. */
export interface NpyArray {
  /** The header's `descr`, e.g. `<f4`. */
  readonly descr: string;
  readonly dtype: NpyDtype;
  /** Sizes of the dimensions, outermost first ([] for a scalar). */
  readonly shape: readonly number[];
  readonly data:
    | Float32Array
    | Float64Array
    | Uint8Array
    | Int8Array
    | Uint16Array
    | Int16Array
    | Uint32Array
    | Int32Array
    | BigUint64Array
    | BigInt64Array;
}

const KINDS: Record<string, { dtype: NpyDtype; size: number }> = {
  f4: { dtype: 'float32', size: 4 },
  f8: { dtype: 'float64', size: 8 },
  u1: { dtype: 'uint8', size: 1 },
  i1: { dtype: 'int8', size: 1 },
  b1: { dtype: 'bool', size: 1 },
  u2: { dtype: 'uint16', size: 2 },
  i2: { dtype: 'int16', size: 2 },
  u4: { dtype: 'uint32', size: 4 },
  i4: { dtype: 'int32', size: 4 },
  u8: { dtype: 'uint64', size: 8 },
  i8: { dtype: 'int64', size: 8 },
};

const CTORS = {
  float32: Float32Array,
  float64: Float64Array,
  uint8: Uint8Array,
  int8: Int8Array,
  bool: Uint8Array,
  uint16: Uint16Array,
  int16: Int16Array,
  uint32: Uint32Array,
  int32: Int32Array,
  uint64: BigUint64Array,
  int64: BigInt64Array,
} as const;

const MAGIC = [0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59]; // \x93NUMPY
const HOST_LITTLE = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

/** Python's repr of a shape tuple, for messages: (3,), (2, 4). */
export function shapeText(shape: readonly number[]): string {
  return shape.length === 1 ? `(${shape[0]},)` : `(${shape.join(', ')})`;
}

function parseHeader(text: string, file: string): { descr: string; fortran: boolean; shape: number[] } {
  const t = text.trim();
  if (!t.startsWith('{') || !t.endsWith('}'))
    throw new Error(
      `${file}: malformed .npy header (expected a Python dict literal, got ${JSON.stringify(t)})`,
    );
  if (/['"]descr['"]\s*:\s*\[/.test(t))
    throw new Error(
      `${file}: structured dtypes (record arrays) are not supported; save a plain numeric array`,
    );
  const descr = /['"]descr['"]\s*:\s*['"]([^'"]*)['"]/.exec(t)?.[1];
  const fortran = /['"]fortran_order['"]\s*:\s*(True|False)/.exec(t)?.[1];
  const shape = /['"]shape['"]\s*:\s*\(([^)]*)\)/.exec(t)?.[1];
  if (descr === undefined || fortran === undefined || shape === undefined)
    throw new Error(
      `${file}: malformed .npy header (needs 'descr', 'fortran_order' and 'shape'): ${JSON.stringify(t)}`,
    );
  const dims = shape
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
    .map((s) => {
      const m = /^(\d+)L?$/.exec(s);
      if (!m) throw new Error(`${file}: malformed .npy header: shape entry '${s}' is not a size`);
      return Number(m[1]);
    });
  return { descr, fortran: fortran === 'True', shape: dims };
}

/**
 * Decodes `.npy` bytes. `file` names the source in error messages. Throws Error on a bad
 * magic, an unsupported version or dtype, Fortran order, truncated or oversized data.
 */
export function parseNpy(bytes: Uint8Array, file = '<bytes>'): NpyArray {
  if (!(bytes instanceof Uint8Array)) throw new TypeError('bytes: expected a Uint8Array');
  if (bytes.length < 10 || MAGIC.some((b, i) => bytes[i] !== b))
    throw new Error(`${file}: not a .npy file (no \\x93NUMPY magic at the start)`);
  const major = bytes[6]!;
  const minor = bytes[7]!;
  if (major < 1 || major > 3)
    throw new Error(`${file}: unsupported .npy format version ${major}.${minor} (1.0, 2.0 and 3.0 are read)`);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const prefix = major === 1 ? 10 : 12;
  if (bytes.length < prefix) throw new Error(`${file}: truncated .npy header`);
  const headerLen = major === 1 ? dv.getUint16(8, true) : dv.getUint32(8, true);
  const start = prefix + headerLen;
  if (bytes.length < start)
    throw new Error(
      `${file}: truncated .npy header (${headerLen} bytes announced, ${bytes.length - prefix} present)`,
    );
  const text = new TextDecoder(major === 3 ? 'utf-8' : 'latin1').decode(bytes.subarray(prefix, start));
  const { descr, fortran, shape } = parseHeader(text, file);
  if (fortran)
    throw new Error(
      `${file}: Fortran-ordered array (fortran_order: True); save it in C order, e.g. np.save(path, np.ascontiguousarray(a))`,
    );
  const order = descr[0];
  const kind = KINDS[descr.slice(1)];
  if (!kind || (order !== '<' && order !== '>' && order !== '|' && order !== '='))
    throw new Error(
      `${file}: unsupported dtype '${descr}' (float32, float64 and integer arrays are read; convert with a.astype(np.float32))`,
    );
  const little = order === '<' || order === '|' || (order === '=' && HOST_LITTLE);
  let count = 1;
  for (const d of shape) count *= d;
  const need = count * kind.size;
  const have = bytes.length - start;
  if (have < need)
    throw new Error(
      `${file}: truncated .npy data: shape ${shapeText(shape)} of ${kind.dtype} needs ${need} bytes, the file has ${have}`,
    );
  if (have > need)
    throw new Error(
      `${file}: ${have - need} unexpected trailing bytes after the data of shape ${shapeText(shape)}`,
    );
  const Ctor = CTORS[kind.dtype];
  let data: NpyArray['data'];
  if (kind.size === 1 || little === HOST_LITTLE) {
    // Copy into fresh, aligned memory (the file's buffer may be pooled or misaligned).
    data = new Ctor(new Uint8Array(bytes.buffer, bytes.byteOffset + start, need).slice().buffer);
  } else {
    data = new Ctor(count);
    const get = getter(kind.dtype, dv);
    for (let i = 0; i < count; i++) (data as unknown as unknown[])[i] = get(start + i * kind.size, little);
  }
  return { descr, dtype: kind.dtype, shape, data };
}

function getter(dtype: NpyDtype, dv: DataView): (offset: number, little: boolean) => number | bigint {
  switch (dtype) {
    case 'float32':
      return (o, le) => dv.getFloat32(o, le);
    case 'float64':
      return (o, le) => dv.getFloat64(o, le);
    case 'uint16':
      return (o, le) => dv.getUint16(o, le);
    case 'int16':
      return (o, le) => dv.getInt16(o, le);
    case 'uint32':
      return (o, le) => dv.getUint32(o, le);
    case 'int32':
      return (o, le) => dv.getInt32(o, le);
    case 'uint64':
      return (o, le) => dv.getBigUint64(o, le);
    default:
      return (o, le) => dv.getBigInt64(o, le);
  }
}

/** Reads and decodes a `.npy` file. Throws Error naming the file on any problem. */
export function readNpy(path: string): NpyArray {
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    throw new Error(
      `${path}: cannot read .npy file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  }
  return parseNpy(bytes, path);
}

/**
 * `.npy` 1.0 bytes (little-endian, C order) of `data` with `shape`, as `np.save` writes them:
 * for fixtures, and for exporting data sets to NumPy. Throws RangeError when the element count
 * does not match the shape.
 */
export function encodeNpy(
  data: Float32Array | Float64Array | Uint8Array | Int32Array | BigInt64Array | Int16Array | Uint16Array,
  shape: readonly number[],
): Uint8Array {
  const count = shape.reduce((p, d) => p * d, 1);
  if (data.length !== count)
    throw new RangeError(`data: shape ${shapeText(shape)} needs ${count} elements, got ${data.length}`);
  const descr =
    data instanceof Float32Array
      ? '<f4'
      : data instanceof Float64Array
        ? '<f8'
        : data instanceof Uint8Array
          ? '|u1'
          : data instanceof Int32Array
            ? '<i4'
            : data instanceof BigInt64Array
              ? '<i8'
              : data instanceof Int16Array
                ? '<i2'
                : '<u2';
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': ${shapeText(shape)}, }`;
  // numpy pads with spaces and ends with '\n' so that the data start at a multiple of 64.
  header += ' '.repeat(63 - ((10 + header.length) % 64));
  header += '\n';
  const head = new TextEncoder().encode(header);
  const out = new Uint8Array(10 + head.length + data.byteLength);
  out.set(MAGIC, 0);
  out[6] = 1;
  out[7] = 0;
  new DataView(out.buffer).setUint16(8, head.length, true);
  out.set(head, 10);
  const body = new DataView(out.buffer, 10 + head.length);
  const size = data.BYTES_PER_ELEMENT;
  if (HOST_LITTLE || size === 1)
    out.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), 10 + head.length);
  else
    for (let i = 0; i < data.length; i++) {
      const v = data[i]!;
      if (data instanceof Float32Array) body.setFloat32(i * 4, v as number, true);
      else if (data instanceof Float64Array) body.setFloat64(i * 8, v as number, true);
      else if (data instanceof Int32Array) body.setInt32(i * 4, v as number, true);
      else if (data instanceof BigInt64Array) body.setBigInt64(i * 8, v as bigint, true);
      else if (data instanceof Int16Array) body.setInt16(i * 2, v as number, true);
      else body.setUint16(i * 2, v as number, true);
    }
  return out;
}

/** Options for {@link readNpyDataset}. */
export interface NpyDatasetOptions {
  /** The consortium's input shape [h, w, c]. */
  inputShape: readonly [number, number, number];
  numClasses: number;
  /**
   * Layout of image arrays in x.npy: `nhwc` (default; TensorFlow/Keras, and what fedscore
   * uses) or `nchw` (PyTorch's), transposed to HWC on reading.
   */
  layout?: 'nhwc' | 'nchw';
  name?: string;
}

const sameShape = (a: readonly number[], b: readonly number[]) =>
  a.length === b.length && a.every((d, i) => d === b[i]);

/**
 * A data set from `x.npy` and `y.npy`. Features: float32 or float64 (taken as they are, the
 * silo's own normalization) or uint8 (scaled by 1/255); one example of shape [h, w, c],
 * [h, w] (c = 1) or [h·w·c] (flat), or [c, h, w] with `layout: 'nchw'`. Labels: any integer
 * dtype, shape [N] or [N, 1], in [0, numClasses).
 * Throws Error naming the file: unreadable, truncated, wrong dtype or shape, a feature that is
 * not finite or beyond ±MAX_FEATURE_MAGNITUDE (limits.ts; named by its index), labels out of
 * range, different example counts, no examples.
 */
export function readNpyDataset(xPath: string, yPath: string, options: NpyDatasetOptions): Dataset {
  const { inputShape, numClasses } = options;
  const layout = options.layout ?? 'nhwc';
  if (layout !== 'nhwc' && layout !== 'nchw')
    throw new RangeError(`layout: expected 'nhwc' or 'nchw', got ${String(layout)}`);
  const xa = readNpy(xPath);
  const ya = readNpy(yPath);
  const [h, w, c] = inputShape;
  const f = h * w * c;
  if (xa.dtype !== 'float32' && xa.dtype !== 'float64' && xa.dtype !== 'uint8')
    throw new Error(
      `${xPath}: expected float32, float64 or uint8 features, got ${xa.dtype} ('${xa.descr}'); save x.astype(np.float32)`,
    );
  if (xa.shape.length < 2)
    throw new Error(`${xPath}: expected an array of examples [N, …], got shape ${shapeText(xa.shape)}`);
  const n = xa.shape[0]!;
  const one = xa.shape.slice(1);
  const channelsFirst = sameShape(one, [c, h, w]) && c > 1;
  const fits =
    sameShape(one, [h, w, c]) ||
    sameShape(one, [f]) ||
    (c === 1 && (sameShape(one, [h, w]) || sameShape(one, [1, h, w]))) ||
    (layout === 'nchw' && channelsFirst);
  if (!fits) {
    const hint =
      channelsFirst && layout === 'nhwc'
        ? `; it looks channels-first (PyTorch's NCHW): pass layout 'nchw' or save x.transpose(0, 2, 3, 1)`
        : '';
    throw new Error(
      `${xPath}: examples of shape ${shapeText(one)} do not fit the input shape ${h}×${w}×${c} (${f} features)${hint}`,
    );
  }
  if (!['int8', 'uint8', 'int16', 'uint16', 'int32', 'uint32', 'int64', 'uint64'].includes(ya.dtype))
    throw new Error(
      `${yPath}: expected integer class labels, got ${ya.dtype} ('${ya.descr}'); save y.astype(np.int64)` +
        (ya.shape.length === 2 && ya.shape[1]! > 1 ? ' (one-hot labels: save y.argmax(1))' : ''),
    );
  if (!(ya.shape.length === 1 || (ya.shape.length === 2 && ya.shape[1] === 1)))
    throw new Error(
      `${yPath}: expected labels of shape (N,) or (N, 1), got ${shapeText(ya.shape)}` +
        (ya.shape.length === 2 ? ' (one-hot labels: save y.argmax(1))' : ''),
    );
  const ny = ya.shape[0]!;
  if (ny !== n) throw new Error(`${yPath}: has ${ny} labels but ${xPath} has ${n} examples`);
  if (n === 0) throw new Error(`${xPath}: holds no examples`);
  const y = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const v = Number(ya.data[i]!);
    if (!(v >= 0 && v < numClasses))
      throw new Error(`${yPath}: label ${v} at index ${i} is outside [0, ${numClasses})`);
    y[i] = v;
  }
  const x = new Float32Array(n * f);
  const src = xa.data as Float32Array | Float64Array | Uint8Array;
  const scale = xa.dtype === 'uint8' ? 1 / 255 : 1;
  if (layout === 'nchw' && channelsFirst) {
    // [n, c, h, w] → [n, h, w, c]
    const hw = h * w;
    for (let i = 0; i < n; i++)
      for (let ch = 0; ch < c; ch++)
        for (let p = 0; p < hw; p++) x[i * f + p * c + ch] = src[i * f + ch * hw + p]! * scale;
  } else if (scale === 1) x.set(src);
  else for (let i = 0; i < x.length; i++) x[i] = src[i]! * scale;
  checkFeatureRange(x, f, xPath);
  return {
    x,
    y,
    n,
    shape: [h, w, c],
    numClasses,
    name: options.name ?? basename(xPath, '.npy'),
    source: `npy:${xPath}+${yPath}`,
  };
}
