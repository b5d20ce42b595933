/**
 * A silo's own data (`fedscore client --data <path>`): one entry, `loadLocalData`, that finds
 * the format of `path` and reads it with that format's reader, checked against the
 * consortium's input shape and class count. The data stay on the silo; only the examples'
 * count may leave it, as an aggregation weight, when the consortium says so.
 *
 * The formats (npy, IDX, CSV, image folders) are the registry's (./formats/registry.ts), one
 * file each: what `path` is for each, its reader and its writer. `format` forces one. Every
 * error names the file and the problem. The readers' resource and value bounds (decompressed
 * size, image pixels, |feature| ≤ 1e6) are in limits.ts.
 */
import { readdirSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { checkDataset, type Dataset } from './dataset.js';
import { type FormatReadOptions, kindOf, type LocalSource } from './formats/format.js';
import { DATA_FORMAT_NAMES, DATA_FORMATS, dataFormat } from './formats/registry.js';

export type { LocalSource } from './formats/format.js';

/** A format's name (the registry's, ./formats/registry.ts). */
export type LocalFormat = string;

/** Options for {@link loadLocalData}: the readers' options, the format and the name optional. */
export interface LocalDataOptions extends Omit<FormatReadOptions, 'name'> {
  /** The format, instead of detecting it from `path`. */
  format?: LocalFormat;
  /** The data set's name (default: from the path). */
  name?: string;
}

/**
 * The format of `path` and the files to read (see the module comment).
 * Throws Error naming the path when it does not exist or holds no data fedscore can read.
 */
export function detectLocalFormat(path: string, format?: LocalFormat): LocalSource {
  if (typeof path !== 'string' || path === '') throw new TypeError('path: expected a file or directory');
  const formats = format === undefined ? DATA_FORMATS : [dataFormat(format)];
  const kind = kindOf(path);
  if (kind === undefined) throw new Error(`${path}: no such file or directory`);
  const forced = format !== undefined;
  const names = kind === 'dir' ? readdirSync(path).sort() : [];
  for (const f of formats) {
    const src = kind === 'dir' ? f.inDirectory(path, names, forced) : f.inFile(path, forced);
    if (src) return src;
  }
  throw new Error(
    kind === 'dir'
      ? `${path}: no data found: expected ${DATA_FORMATS.map((f) => f.path).join('; or ')}`
      : `${path}: unknown data format (expected ${DATA_FORMATS.map((f) => f.path).join('; or ')}); name it with format (${DATA_FORMAT_NAMES.join(', ')})`,
  );
}

/**
 * A silo's data set from `path` (see the module comment), with `inputShape` and `numClasses`
 * of the consortium. Throws Error naming the file: missing, unknown format, truncated, wrong
 * dtype or shape, labels out of range, images and labels of different counts, no examples.
 */
export async function loadLocalData(path: string, options: LocalDataOptions): Promise<Dataset> {
  if (!options || typeof options !== 'object')
    throw new TypeError('options: expected { inputShape, numClasses }');
  const { inputShape, numClasses } = options;
  if (
    !Array.isArray(inputShape) ||
    inputShape.length !== 3 ||
    !inputShape.every((d) => Number.isInteger(d) && d > 0)
  )
    throw new RangeError(`inputShape: expected [height, width, channels], got ${JSON.stringify(inputShape)}`);
  if (!Number.isInteger(numClasses) || numClasses < 1)
    throw new RangeError(`numClasses: expected a positive integer, got ${numClasses}`);
  const src = detectLocalFormat(path, options.format);
  const name = options.name ?? basename(resolve(path)).replace(/\.(csv(\.gz)?|npy|gz)$/i, '');
  const { format: _format, ...readerOptions } = options;
  const read: FormatReadOptions = { ...readerOptions, inputShape, numClasses, name };
  return checkDataset(await dataFormat(src.format).read(src, read));
}
