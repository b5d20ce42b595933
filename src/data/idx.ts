/**
 * IDX files (LeCun et al., the MNIST format; Fashion-MNIST uses it unchanged), plain or gzipped.
 *
 * Header: two zero bytes, a type byte (0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32,
 * 0x0D float32, 0x0E float64), the number of dimensions d, then d big-endian uint32 sizes;
 * the data follow, big-endian, row-major. Gzip is recognized by its magic bytes (1f 8b), not by
 * the file name. Every error names the file and what is wrong with it.
 *
 * A gzipped file is never inflated past what its header declares (issue 27, A5: a 1 MB `.gz`
 * had become 6.3 GB): the header is read from the first inflated bytes, a declared size above
 * `maxBytes` (default MAX_DECOMPRESSED_BYTES, limits.ts) is refused before the data are
 * inflated, and the data are inflated with zlib's `maxOutputLength` set to the declared size.
 */
import { readFileSync } from 'node:fs';
import { constants, gunzipSync } from 'node:zlib';
import type { Dataset } from './dataset.js';
import { checkBound, MAX_DECOMPRESSED_BYTES, mib } from './limits.js';

/** The element types IDX defines. */
export type IdxType = 'uint8' | 'int8' | 'int16' | 'int32' | 'float32' | 'float64';

const TYPES: Record<number, { type: IdxType; size: number }> = {
  8: { type: 'uint8', size: 1 },
  9: { type: 'int8', size: 1 },
  11: { type: 'int16', size: 2 },
  12: { type: 'int32', size: 4 },
  13: { type: 'float32', size: 4 },
  14: { type: 'float64', size: 8 },
};

/** A decoded IDX array. */
export interface IdxArray {
  type: IdxType;
  /** Sizes of the dimensions, outermost first. */
  dims: number[];
  /** The elements in row-major order (uint8 data is a view on the decoded buffer). */
  data: Uint8Array | Int8Array | Int16Array | Int32Array | Float32Array | Float64Array;
}

/** Whether bytes start with the gzip magic number. */
export function isGzip(bytes: Uint8Array): boolean {
  return bytes.length >= 2 && bytes[0] === 0x1f && bytes[1] === 0x8b;
}

/**
 * Decodes an IDX array from bytes (gunzipping first when they are gzip). `file` names the
 * source in error messages. Throws Error on a bad magic, unknown type, truncated or oversized data.
 */
export function parseIdx(bytes: Uint8Array, file = '<bytes>', maxBytes = MAX_DECOMPRESSED_BYTES): IdxArray {
  checkBound('maxBytes', maxBytes);
  const raw = isGzip(bytes) ? gunzipIdx(bytes, file, maxBytes) : bytes;
  if (raw.length > maxBytes)
    throw new Error(
      `${file}: ${raw.length} bytes of IDX data exceed the limit of ${mib(maxBytes)} (maxBytes)`,
    );
  if (raw.length < 4) throw new Error(`${file}: truncated IDX header (${raw.length} bytes, need at least 4)`);
  if (raw[0] !== 0 || raw[1] !== 0)
    throw new Error(
      `${file}: not an IDX file (magic starts with 0x${hex(raw[0]!)}${hex(raw[1]!)}, expected 0x0000)`,
    );
  const t = TYPES[raw[2]!];
  if (!t) throw new Error(`${file}: unknown IDX element type 0x${hex(raw[2]!)}`);
  const ndim = raw[3]!;
  if (ndim === 0) throw new Error(`${file}: IDX header declares 0 dimensions`);
  const headerSize = 4 + 4 * ndim;
  if (raw.length < headerSize)
    throw new Error(
      `${file}: truncated IDX header (${raw.length} bytes, need ${headerSize} for ${ndim} dimensions)`,
    );
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const dims: number[] = [];
  let count = 1;
  for (let k = 0; k < ndim; k++) {
    const d = view.getUint32(4 + 4 * k, false);
    dims.push(d);
    count *= d;
  }
  const expected = headerSize + count * t.size;
  if (raw.length < expected)
    throw new Error(
      `${file}: truncated IDX data: dimensions [${dims.join(', ')}] of ${t.type} need ${expected} bytes, file has ${raw.length}`,
    );
  if (raw.length > expected)
    throw new Error(
      `${file}: ${raw.length - expected} unexpected trailing bytes after IDX data of dimensions [${dims.join(', ')}]`,
    );
  const off = headerSize;
  let data: IdxArray['data'];
  switch (t.type) {
    case 'uint8':
      data = raw.subarray(off, expected);
      break;
    case 'int8':
      data = new Int8Array(raw.buffer, raw.byteOffset + off, count);
      break;
    default: {
      const Ctor = { int16: Int16Array, int32: Int32Array, float32: Float32Array, float64: Float64Array }[
        t.type
      ];
      const out = new Ctor(count);
      for (let i = 0; i < count; i++) {
        const p = off + i * t.size;
        out[i] =
          t.type === 'int16'
            ? view.getInt16(p, false)
            : t.type === 'int32'
              ? view.getInt32(p, false)
              : t.type === 'float32'
                ? view.getFloat32(p, false)
                : view.getFloat64(p, false);
      }
      data = out;
    }
  }
  return { type: t.type, dims, data };
}

/** The size an IDX header declares (header and data), or undefined when `head` is too short. */
function declaredSize(head: Uint8Array): number | undefined {
  if (head.length < 4) return undefined;
  const t = TYPES[head[2]!];
  const ndim = head[3]!;
  if (head[0] !== 0 || head[1] !== 0 || !t || ndim === 0) return 0; // malformed: parseIdx names it
  if (head.length < 4 + 4 * ndim) return undefined;
  const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
  let count = 1;
  for (let k = 0; k < ndim; k++) count *= view.getUint32(4 + 4 * k, false);
  return 4 + 4 * ndim + count * t.size;
}

const tooLarge = (e: unknown) => (e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE';

/**
 * Inflates a gzipped IDX file without letting it grow past its header's declared size (or
 * `maxBytes`): the header comes from inflating a prefix (a deflate stream grows at most ~1032×,
 * so a 4 KiB prefix gives at most ~4 MiB), then the whole file with `maxOutputLength`.
 */
function gunzipIdx(bytes: Uint8Array, file: string, maxBytes: number): Uint8Array {
  let declared: number | undefined;
  for (const prefix of [256, 4096]) {
    let head: Uint8Array;
    try {
      head = gunzipSync(bytes.subarray(0, prefix), {
        finishFlush: constants.Z_SYNC_FLUSH,
        maxOutputLength: 8 * 1024 * 1024,
      });
    } catch {
      break; // a corrupt stream: the full inflate below names the problem
    }
    declared = declaredSize(head);
    if (declared !== undefined || prefix >= bytes.length) break;
  }
  if (declared !== undefined && declared > maxBytes)
    throw new Error(
      `${file}: its IDX header declares ${declared} bytes, above the limit of ${mib(maxBytes)} of decompressed data (maxBytes); refused before decompressing`,
    );
  const limit = declared !== undefined && declared > 0 ? declared + 1 : maxBytes + 1;
  try {
    return gunzipSync(bytes, { maxOutputLength: limit });
  } catch (e) {
    if (tooLarge(e))
      throw new Error(
        `${file}: gzip data decompress to more than ${declared ? `the ${declared} bytes its IDX header declares` : mib(maxBytes)} (stopped at ${limit} bytes: a decompression bomb or a corrupt header)`,
      );
    throw new Error(`${file}: corrupt or truncated gzip data (${(e as Error).message})`);
  }
}

/**
 * Reads and decodes an IDX file (plain or gzipped), of at most `maxBytes` decompressed bytes
 * (default MAX_DECOMPRESSED_BYTES). Throws Error naming the file on any problem.
 */
export function readIdx(path: string, maxBytes = MAX_DECOMPRESSED_BYTES): IdxArray {
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    throw new Error(
      `${path}: cannot read IDX file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  }
  return parseIdx(bytes, path, maxBytes);
}

/** Options for {@link readIdxDataset}. */
export interface IdxDatasetOptions {
  name: string;
  source: string;
  /** Number of classes; labels must lie in [0, numClasses). Default 10. */
  numClasses?: number;
  /** Keep only the first `limit` examples (the whole file is still decoded). */
  limit?: number;
  /** Largest decompressed size of each file (default MAX_DECOMPRESSED_BYTES, limits.ts). */
  maxBytes?: number;
}

/**
 * An image dataset from an IDX image file (uint8, [n, h, w] or [n, h, w, c]) and an IDX label
 * file (uint8, [n]). Pixels are scaled to [0, 1] by /255. Throws Error naming the file when
 * either is malformed, when their counts differ, or when a label is out of range.
 */
export function readIdxDataset(imagesPath: string, labelsPath: string, options: IdxDatasetOptions): Dataset {
  const numClasses = options.numClasses ?? 10;
  const images = readIdx(imagesPath, options.maxBytes);
  const labels = readIdx(labelsPath, options.maxBytes);
  if (images.type !== 'uint8') throw new Error(`${imagesPath}: expected uint8 images, got ${images.type}`);
  if (images.dims.length !== 3 && images.dims.length !== 4)
    throw new Error(
      `${imagesPath}: expected image dimensions [n, h, w] or [n, h, w, c], got [${images.dims.join(', ')}]`,
    );
  if (labels.type !== 'uint8') throw new Error(`${labelsPath}: expected uint8 labels, got ${labels.type}`);
  if (labels.dims.length !== 1)
    throw new Error(`${labelsPath}: expected label dimensions [n], got [${labels.dims.join(', ')}]`);
  const [nImages, h, w, c = 1] = images.dims as [number, number, number, number?];
  const nLabels = labels.dims[0]!;
  if (nImages !== nLabels)
    throw new Error(`${labelsPath}: has ${nLabels} labels but ${imagesPath} has ${nImages} images`);
  const n = Math.min(nImages, options.limit ?? nImages);
  const y = (labels.data as Uint8Array).slice(0, n);
  for (let i = 0; i < n; i++)
    if (y[i]! >= numClasses)
      throw new Error(`${labelsPath}: label ${y[i]} at index ${i} is outside [0, ${numClasses})`);
  const src = images.data as Uint8Array;
  const f = h * w * c;
  const x = new Float32Array(n * f);
  for (let i = 0; i < n * f; i++) x[i] = src[i]! / 255;
  return { x, y, n, shape: [h, w, c], numClasses, name: options.name, source: options.source };
}

function hex(b: number): string {
  return b.toString(16).padStart(2, '0');
}
