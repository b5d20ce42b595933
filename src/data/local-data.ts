/**
 * A silo's own data (`fedscore client --data <path>`): one entry, `loadLocalData`, that finds
 * the format of `path` and reads it with that format's reader, checked against the
 * consortium's input shape and class count. The data stay on the silo; only the examples'
 * count may leave it, as an aggregation weight, when the consortium says so.
 *
 * | format         | `path`                                                               | reader           |
 * |----------------|----------------------------------------------------------------------|------------------|
 * | `npy`          | a directory with `x.npy` and `y.npy`, or the `…x.npy` file (`…y.npy` beside it) | npy.ts   |
 * | `idx`          | a directory with one `*images*idx*` / `*labels*idx*` pair (gz or not), or the images file | idx.ts |
 * | `csv`          | a `.csv` (or `.csv.gz`) file                                         | csv.ts           |
 * | `image-folder` | a directory of class sub-folders with PNG/JPEG images                | image-folder.ts  |
 *
 * `format` forces one. Every error names the file and the problem. The readers' resource and
 * value bounds (decompressed size, image pixels, |feature| ≤ 1e6) are in limits.ts.
 */
import { readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { readCsvDataset } from './csv.js';
import { checkDataset, type Dataset } from './dataset.js';
import { readIdxDataset } from './idx.js';
import { readImageFolder } from './image-folder.js';
import { readNpyDataset } from './npy.js';

/** The formats `loadLocalData` reads. */
export const LOCAL_FORMATS = ['npy', 'idx', 'csv', 'image-folder'] as const;
export type LocalFormat = (typeof LOCAL_FORMATS)[number];

/** Options for {@link loadLocalData}. */
export interface LocalDataOptions {
  /** The consortium's input shape [h, w, c] (tabular data: [1, features, 1]). */
  inputShape: readonly [number, number, number];
  numClasses: number;
  /** The format, instead of detecting it from `path`. */
  format?: LocalFormat;
  /** CSV: the label column (default `label`). */
  labelColumn?: string;
  /** CSV: the field delimiter (default `,`). */
  delimiter?: string;
  /** Image folders: resize images to h×w instead of refusing other sizes (default false). */
  resize?: boolean;
  /** CSV and image folders: class names in label order. */
  classNames?: readonly string[];
  /** .npy: layout of image arrays, `nhwc` (default) or PyTorch's `nchw`. */
  layout?: 'nhwc' | 'nchw';
  /** The data set's name (default: from the path). */
  name?: string;
  /** IDX and CSV: largest decompressed size of a file (defaults in limits.ts). */
  maxBytes?: number;
  /** Image folders: largest image, width × height, checked from its header (default 4096²). */
  maxPixels?: number;
}

/** What `detectLocalFormat` found: the format and the file(s) or directory to read. */
export interface LocalSource {
  readonly format: LocalFormat;
  /** The file or directory read (images file for IDX, x.npy for npy). */
  readonly path: string;
  /** The labels file of a pair (IDX, npy). */
  readonly labels?: string;
}

const IDX_IMAGES = /images.*idx|idx.*images/i;

function kindOf(path: string): 'file' | 'dir' | undefined {
  const s = statSync(path, { throwIfNoEntry: false });
  return s === undefined ? undefined : s.isDirectory() ? 'dir' : 'file';
}

/** The labels file beside an IDX images file: images → labels, idx3 → idx1. */
function idxLabelsFor(images: string): string {
  const name = basename(images).replace(/images/i, (m) => (m === 'IMAGES' ? 'LABELS' : 'labels'));
  return join(dirname(images), name.replace(/idx3/i, 'idx1'));
}

/** The labels file beside `…x.npy` (`…y.npy`) or `…images.npy` (`…labels.npy`). */
function npyLabelsFor(x: string): string | undefined {
  const name = basename(x);
  const m = /^(.*?)(x|X|images)\.npy$/.exec(name);
  if (!m) return undefined;
  const y = m[2] === 'images' ? 'labels' : m[2] === 'X' ? 'Y' : 'y';
  return join(dirname(x), `${m[1]}${y}.npy`);
}

function pair(format: 'idx' | 'npy', path: string, labels: string): LocalSource {
  if (kindOf(labels) !== 'file')
    throw new Error(`${path}: the ${format === 'idx' ? 'IDX' : '.npy'} labels file ${labels} is missing`);
  return { format, path, labels };
}

function fromDirectory(dir: string, format: LocalFormat | undefined): LocalSource {
  const names = readdirSync(dir).sort();
  const has = (n: string) => names.includes(n) && kindOf(join(dir, n)) === 'file';
  if ((format === undefined || format === 'npy') && (has('x.npy') || has('y.npy'))) {
    if (!has('x.npy')) throw new Error(`${dir}: has y.npy but no x.npy`);
    return pair('npy', join(dir, 'x.npy'), join(dir, 'y.npy'));
  }
  if (format === 'npy') throw new Error(`${dir}: no x.npy and y.npy in this directory`);
  const images = names.filter((n) => IDX_IMAGES.test(n) && kindOf(join(dir, n)) === 'file');
  if ((format === undefined || format === 'idx') && images.length > 0) {
    if (images.length > 1)
      throw new Error(`${dir}: several IDX image files (${images.join(', ')}); pass the one to read`);
    const file = join(dir, images[0]!);
    return pair('idx', file, idxLabelsFor(file));
  }
  if (format === 'idx') throw new Error(`${dir}: no IDX images file (a name with 'images' and 'idx')`);
  if (format === 'csv') throw new Error(`${dir}: is a directory; pass the .csv file itself`);
  if (names.some((n) => !n.startsWith('.') && kindOf(join(dir, n)) === 'dir'))
    return { format: 'image-folder', path: dir };
  throw new Error(
    `${dir}: no data found: expected x.npy + y.npy, an IDX images/labels pair, or one sub-folder of PNG/JPEG images per class`,
  );
}

function fromFile(file: string, format: LocalFormat | undefined): LocalSource {
  const name = basename(file);
  if (format === 'image-folder') throw new Error(`${file}: is a file; image folders are directories`);
  if (format === 'csv' || (format === undefined && /\.csv(\.gz)?$/i.test(name)))
    return { format: 'csv', path: file };
  if (format === 'npy' || (format === undefined && /\.npy$/i.test(name))) {
    const labels = npyLabelsFor(file);
    if (!labels)
      throw new Error(
        `${file}: expected the features file x.npy (labels in y.npy beside it), or their directory`,
      );
    return pair('npy', file, labels);
  }
  if (format === 'idx' || (format === undefined && IDX_IMAGES.test(name))) {
    const labels = idxLabelsFor(file);
    if (labels === file) throw new Error(`${file}: expected the IDX images file (a name with 'images')`);
    return pair('idx', file, labels);
  }
  throw new Error(
    `${file}: unknown data format (expected a .csv file, x.npy, an IDX images file, or a directory); name it with format`,
  );
}

/**
 * The format of `path` and the files to read (see the module comment).
 * Throws Error naming the path when it does not exist or holds no data fedscore can read.
 */
export function detectLocalFormat(path: string, format?: LocalFormat): LocalSource {
  if (typeof path !== 'string' || path === '') throw new TypeError('path: expected a file or directory');
  if (format !== undefined && !LOCAL_FORMATS.includes(format))
    throw new RangeError(`format: expected one of ${LOCAL_FORMATS.join(', ')}, got ${String(format)}`);
  const kind = kindOf(path);
  if (kind === undefined) throw new Error(`${path}: no such file or directory`);
  return kind === 'dir' ? fromDirectory(path, format) : fromFile(path, format);
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
  let ds: Dataset;
  switch (src.format) {
    case 'npy':
      ds = readNpyDataset(src.path, src.labels!, {
        inputShape,
        numClasses,
        name,
        ...(options.layout ? { layout: options.layout } : {}),
      });
      break;
    case 'idx': {
      ds = readIdxDataset(src.path, src.labels!, {
        name,
        source: `idx:${src.path}`,
        numClasses,
        ...(options.maxBytes !== undefined ? { maxBytes: options.maxBytes } : {}),
      });
      const [h, w, c] = ds.shape;
      if (h !== inputShape[0] || w !== inputShape[1] || c !== inputShape[2])
        throw new Error(
          `${src.path}: images of shape ${h}×${w}×${c} do not fit the input shape ${inputShape.join('×')}`,
        );
      if (ds.n === 0) throw new Error(`${src.path}: holds no examples`);
      break;
    }
    case 'csv':
      ds = readCsvDataset(src.path, {
        inputShape,
        numClasses,
        name,
        ...(options.labelColumn !== undefined ? { labelColumn: options.labelColumn } : {}),
        ...(options.delimiter !== undefined ? { delimiter: options.delimiter } : {}),
        ...(options.classNames ? { classNames: options.classNames } : {}),
        ...(options.maxBytes !== undefined ? { maxBytes: options.maxBytes } : {}),
      });
      break;
    default:
      ds = await readImageFolder(src.path, {
        inputShape,
        numClasses,
        name,
        ...(options.resize !== undefined ? { resize: options.resize } : {}),
        ...(options.classNames ? { classNames: options.classNames } : {}),
        ...(options.maxPixels !== undefined ? { maxPixels: options.maxPixels } : {}),
      });
  }
  return checkDataset(ds);
}
