/**
 * A file format a silo's data can come in (`fedscore client --data`, the `files` data set,
 * `fedscore init --format`): one format per file in this folder, listed once in ./builtin.ts (one
 * line; ./registry.ts collects them).
 * A format declares how to find its files under a path, how to read them into a Dataset, and how
 * to write a Dataset so that it reads back to the same examples. Detection asks the formats in
 * ascending `detectionRank`; the first that claims the path reads it.
 */
import { statSync } from 'node:fs';
import type { Dataset } from '../dataset.js';

/** What a format found under a path: the format and the file(s) or directory to read. */
export interface LocalSource {
  readonly format: string;
  /** The file or directory read (images file for IDX, x.npy for npy). */
  readonly path: string;
  /** The labels file of a pair (IDX, npy). */
  readonly labels?: string;
}

/** What every reader is given: the consortium's shape and the reader options a silo may set. */
export interface FormatReadOptions {
  /** The consortium's input shape [h, w, c] (tabular data: [1, features, 1]). */
  inputShape: readonly [number, number, number];
  numClasses: number;
  /** The data set's name. */
  name: string;
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
  /** IDX and CSV: largest decompressed size of a file (defaults in ../limits.ts). */
  maxBytes?: number;
  /** Image folders: largest image, width × height, checked from its header (default 4096²). */
  maxPixels?: number;
}

export interface DataFormat {
  /** The name `--data-format`, `format` and `--format` take. */
  readonly name: string;
  /**
   * Where detection asks this format, lower first (and the order formats are listed in): the
   * formats of named files first, a format that claims any folder (image folders) last. Distinct
   * across formats (test/arch/registries.test.ts).
   */
  readonly detectionRank: number;
  /** What `path` is for this format (documentation and errors). */
  readonly path: string;
  /** The files `write` creates, for a project's README. */
  readonly writes: string;
  /**
   * This format's files in directory `dir` (its entries `names`, sorted), or undefined when it
   * sees none there. `forced`: the user named this format, so "none" is an error naming the path.
   */
  inDirectory(dir: string, names: readonly string[], forced: boolean): LocalSource | undefined;
  /** The same for a file. */
  inFile(file: string, forced: boolean): LocalSource | undefined;
  /** Reads what `inDirectory`/`inFile` found. Synchronous formats return the Dataset itself. */
  read(src: LocalSource, options: FormatReadOptions): Dataset | Promise<Dataset>;
  /** Whether `read` returns the Dataset itself (the `files` data set reads only these). */
  readonly synchronous: boolean;
  /** The shape [h, w, c] of one example from the file's header (`fedscore init --data`), when it has one. */
  exampleShape?(src: LocalSource): [number, number, number];
  /** Writes `ds` under `dir`; returns the path to give `--data`. Throws RangeError when `ds` does not fit the format. */
  write(dir: string, ds: Dataset): Promise<string>;
}

/** 'file', 'dir', or undefined when `path` does not exist. */
export function kindOf(path: string): 'file' | 'dir' | undefined {
  const s = statSync(path, { throwIfNoEntry: false });
  return s === undefined ? undefined : s.isDirectory() ? 'dir' : 'file';
}

/** A pair source; throws naming the missing labels file. */
export function pairSource(format: string, what: string, path: string, labels: string): LocalSource {
  if (kindOf(labels) !== 'file') throw new Error(`${path}: the ${what} labels file ${labels} is missing`);
  return { format, path, labels };
}

/** The shape of one example from an array's shape [n, …]: flat → [1, f, 1], [h, w] → [h, w, 1]. */
export function exampleShapeOf(file: string, dims: readonly number[]): [number, number, number] {
  const rest = dims.slice(1);
  if (rest.length === 1) return [1, rest[0]!, 1];
  if (rest.length === 2) return [rest[0]!, rest[1]!, 1];
  if (rest.length === 3) return [rest[0]!, rest[1]!, rest[2]!];
  throw new Error(
    `${file}: examples of shape [${dims.join(', ')}]: expected [n, features], [n, h, w] or [n, h, w, c]`,
  );
}

/** Pixel bytes of values in [0, 1]. */
export const pixelBytes = (ds: Dataset) =>
  Uint8Array.from(ds.x, (v) => Math.max(0, Math.min(255, Math.round(v * 255))));

/** Throws RangeError naming the format when `ds` has values outside [0, 1] (formats that store bytes). */
export function checkPixels(format: string, ds: Dataset): void {
  if (ds.x.some((v) => v < 0 || v > 1))
    throw new RangeError(
      `--format: ${format} stores pixels in [0, 1]; these data have other values (use npy or csv)`,
    );
}
