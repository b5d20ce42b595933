/**
 * Tabular data sets in CSV (RFC 4180): a header row naming the columns, one example per row,
 * numeric feature columns and one label column, by default `label`. The feature columns are
 * every other column, in header order; their count must be the consortium's feature count
 * (h·w·c of its input shape, [1, F, 1] for tabular models). Features are taken as they are
 * (the silo's own scaling); labels are integers in [0, numClasses), or class names when the
 * consortium lists them (`classNames`). The file may be gzipped (recognized by its magic bytes).
 *
 * Parsing (quotes, embedded delimiters and newlines, CRLF, a UTF-8 byte-order mark) is
 * csv-parse's; every cell is then checked here, and errors name the file, the line and the
 * column: `silo.csv: line 7, column 'petal_width': 'abc' is not a number`.
 *
 * Bounds (limits.ts; issue 27, A5 and A7): the text, gunzipped or not, is at most `maxBytes`
 * (default MAX_CSV_BYTES) — a gzip stream is inflated with zlib's `maxOutputLength`, a plain
 * file's size is checked before it is read — and every feature is finite with
 * |x| ≤ MAX_FEATURE_MAGNITUDE.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { basename } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parse } from 'csv-parse/sync';
import type { Dataset } from './dataset.js';
import { isGzip } from './idx.js';
import { checkBound, checkFeatureRange, MAX_CSV_BYTES, mib } from './limits.js';

/** Options for {@link readCsvDataset}. */
export interface CsvDatasetOptions {
  /** The consortium's input shape [h, w, c]; the file has h·w·c feature columns. */
  inputShape: readonly [number, number, number];
  numClasses: number;
  /** Name of the label column (default `label`). */
  labelColumn?: string;
  /** Field delimiter, one character (default `,`). */
  delimiter?: string;
  /** Class names in label order: label cells may then hold a name instead of its index. */
  classNames?: readonly string[];
  name?: string;
  /** Largest text, after gunzip (default MAX_CSV_BYTES, limits.ts). */
  maxBytes?: number;
}

const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;
const INTEGER = /^[+-]?\d+$/;

interface Row {
  record: string[];
  info: { lines: number };
}

/**
 * A data set from CSV text or bytes (see the module comment); `file` names the source in
 * messages. Throws Error naming the file, line and column: malformed CSV, a missing or
 * repeated column, the wrong number of feature columns, a cell that is not a number, a label
 * that is not a class, no examples.
 */
export function parseCsvDataset(
  input: string | Uint8Array,
  file: string,
  options: CsvDatasetOptions,
): Dataset {
  const { inputShape, numClasses } = options;
  const labelColumn = options.labelColumn ?? 'label';
  const delimiter = options.delimiter ?? ',';
  if (typeof labelColumn !== 'string' || labelColumn === '')
    throw new TypeError('labelColumn: expected a column name');
  if (typeof delimiter !== 'string' || delimiter.length !== 1)
    throw new RangeError(`delimiter: expected one character, got ${JSON.stringify(delimiter)}`);
  const maxBytes = checkBound('maxBytes', options.maxBytes ?? MAX_CSV_BYTES);
  let text = input;
  if (text instanceof Uint8Array && isGzip(text)) {
    try {
      text = gunzipSync(text, { maxOutputLength: maxBytes });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE')
        throw new Error(
          `${file}: gzip data decompress to more than the limit of ${mib(maxBytes)} of CSV text (maxBytes); stopped there`,
        );
      throw new Error(`${file}: corrupt or truncated gzip data (${(e as Error).message})`);
    }
  }
  if (text.length > maxBytes)
    throw new Error(
      `${file}: ${text.length} bytes of CSV text exceed the limit of ${mib(maxBytes)} (maxBytes)`,
    );
  let rows: Row[];
  try {
    rows = parse(text, {
      bom: true,
      delimiter,
      trim: true,
      skip_empty_lines: true,
      info: true,
    }) as unknown as Row[];
  } catch (e) {
    throw new Error(`${file}: malformed CSV (${(e as Error).message})`);
  }
  const header = rows[0]?.record;
  if (!header) throw new Error(`${file}: empty file (expected a header row, then one example per row)`);
  const seen = new Set<string>();
  for (const name of header) {
    if (seen.has(name)) throw new Error(`${file}: column '${name}' appears twice in the header`);
    seen.add(name);
  }
  const labelAt = header.indexOf(labelColumn);
  if (labelAt < 0)
    throw new Error(
      `${file}: no label column '${labelColumn}' in the header (columns: ${header.join(', ')}); name it with labelColumn`,
    );
  const [h, w, c] = inputShape;
  const f = h * w * c;
  const featureAt = header.map((_, k) => k).filter((k) => k !== labelAt);
  if (featureAt.length !== f)
    throw new Error(
      `${file}: ${featureAt.length} feature columns besides '${labelColumn}', the input shape ${h}×${w}×${c} needs ${f}`,
    );
  const n = rows.length - 1;
  if (n === 0) throw new Error(`${file}: holds no examples (only a header row)`);
  const classIndex = new Map((options.classNames ?? []).map((name, k) => [name, k]));
  const x = new Float32Array(n * f);
  const y = new Int32Array(n);
  for (let i = 0; i < n; i++) {
    const { record, info } = rows[i + 1]!;
    const at = `${file}: line ${info.lines}`;
    for (const [j, k] of featureAt.entries()) {
      const cell = record[k]!;
      const v = Number(cell);
      if (!NUMBER.test(cell) || !Number.isFinite(Math.fround(v)))
        throw new Error(
          `${at}, column '${header[k]}': ${cell === '' ? 'empty cell' : `'${cell}' is not a number`}`,
        );
      x[i * f + j] = v;
    }
    const cell = record[labelAt]!;
    const label = classIndex.get(cell) ?? (INTEGER.test(cell) ? Number(cell) : Number.NaN);
    if (!(label >= 0 && label < numClasses))
      throw new Error(
        `${at}, column '${labelColumn}': ${cell === '' ? 'empty cell' : `'${cell}'`} is not a class label (an integer in [0, ${numClasses})${classIndex.size > 0 ? ' or a class name' : ''})`,
      );
    y[i] = label;
  }
  checkFeatureRange(x, f, file);
  return {
    x,
    y,
    n,
    shape: [h, w, c],
    numClasses,
    name: options.name ?? basename(file).replace(/\.csv(\.gz)?$/i, ''),
    source: `csv:${file}`,
  };
}

/** Reads a CSV data set from `path` (see `parseCsvDataset`). Throws Error naming the file. */
export function readCsvDataset(path: string, options: CsvDatasetOptions): Dataset {
  const maxBytes = checkBound('maxBytes', options.maxBytes ?? MAX_CSV_BYTES);
  let bytes: Uint8Array;
  try {
    bytes = readBounded(path, maxBytes);
  } catch (e) {
    if (e instanceof RangeError) throw e;
    throw new Error(
      `${path}: cannot read CSV file (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`,
    );
  }
  return parseCsvDataset(bytes, path, options);
}

/**
 * The file's bytes, refused (RangeError) when it holds more than `maxBytes`: a gzipped file may
 * not be larger than the text it may inflate to (deflate never expands by more than ~0.1 %).
 */
function readBounded(path: string, maxBytes: number): Uint8Array {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    if (size > maxBytes)
      throw new RangeError(
        `${path}: ${size} bytes exceed the limit of ${mib(maxBytes)} of CSV text (maxBytes)`,
      );
    const out = Buffer.alloc(size);
    let at = 0;
    while (at < size) {
      const got = readSync(fd, out, at, size - at, null);
      if (got === 0) break;
      at += got;
    }
    return out.subarray(0, at);
  } finally {
    closeSync(fd);
  }
}
