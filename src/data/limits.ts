/**
 * Resource bounds of the data readers (issue 27, A5 and A7): what a silo's data file may make
 * the reader allocate or accept before any check of its content. A file beyond a bound is
 * refused with an error naming the file, the bound and its value — never read past it.
 *
 * | bound | default | applies to | override |
 * |---|---|---|---|
 * | `MAX_DECOMPRESSED_BYTES` | 512 MiB | a gzipped IDX file's output (also capped by the size its header declares) | `maxBytes` of readIdx / loadLocalData |
 * | `MAX_CSV_BYTES` | 128 MiB | a CSV file's text, gzipped or not | `maxBytes` of readCsvDataset / loadLocalData |
 * | `MAX_IMAGE_PIXELS` | 4096² | one image's width × height, read from its header before decoding | `maxPixels` of readImageFolder / loadLocalData |
 * | `MAX_PIXELS_IN_FLIGHT` | 2 · 4096² | pixels of the images decoded at once (at most `IMAGES_IN_FLIGHT` images) | — |
 * | `MAX_FEATURE_MAGNITUDE` | 1e6 | \|x\| of every feature of .npy and CSV data (NaN and ±∞ too) | — |
 */

/** Largest output of a gzipped data file (IDX) when no smaller size is declared. */
export const MAX_DECOMPRESSED_BYTES = 512 * 1024 * 1024;

/** Largest CSV text (after gunzip): csv-parse holds every cell as a string, ~10× the text. */
export const MAX_CSV_BYTES = 128 * 1024 * 1024;

/** Largest image (width × height) decoded; sharp's own default is 16383². */
export const MAX_IMAGE_PIXELS = 4096 * 4096;

/** Images decoded at once (sharp decodes on libuv's thread pool)… */
export const IMAGES_IN_FLIGHT = 8;
/** …and at most this many pixels among them (one larger image still decodes alone). */
export const MAX_PIXELS_IN_FLIGHT = 2 * MAX_IMAGE_PIXELS;

/**
 * Largest |feature| a data file may hold. Features are taken as the silo scaled them (images
 * in [0, 1], standardized tabular data within a few units); a value beyond this is a units error
 * or an attempt to overflow training (float32 products of 3e38 are ∞), and is refused.
 */
export const MAX_FEATURE_MAGNITUDE = 1e6;

const MIB = 1024 * 1024;

/** `n` bytes in MiB for messages ("512 MiB"). */
export function mib(n: number): string {
  return n % MIB === 0 ? `${n / MIB} MiB` : `${(n / MIB).toFixed(1)} MiB`;
}

/** Throws RangeError unless `v` is a positive safe integer (a byte or pixel bound). */
export function checkBound(name: string, v: number): number {
  if (!Number.isSafeInteger(v) || v < 1)
    throw new RangeError(`${name}: expected a positive integer, got ${v}`);
  return v;
}

/**
 * Throws Error naming `file` and the first offending example and feature unless every value of
 * `x` (f features per example) is finite with |v| ≤ MAX_FEATURE_MAGNITUDE.
 */
export function checkFeatureRange(x: Float32Array, f: number, file: string): void {
  for (let k = 0; k < x.length; k++) {
    const v = x[k]!;
    if (!(v >= -MAX_FEATURE_MAGNITUDE && v <= MAX_FEATURE_MAGNITUDE))
      throw new Error(
        `${file}: feature value ${v} at index ${k} (example ${Math.floor(k / f)}, feature ${k % f}) is ${Number.isFinite(v) ? `beyond ±${MAX_FEATURE_MAGNITUDE.toExponential()}` : 'not finite'}: features must be finite with |x| ≤ ${MAX_FEATURE_MAGNITUDE.toExponential()} (scale the data)`,
      );
  }
}
