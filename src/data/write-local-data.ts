/**
 * Writes a data set in one of the formats `fedscore client --data` reads (the format registry,
 * ./formats/registry.ts: an IDX pair, x.npy + y.npy, a CSV file with a `label` column, or an
 * image folder of PNGs). `fedscore init` writes each silo's split this way; what it writes reads
 * back with loadLocalData to the same examples, in order (pixels of IDX and PNG files are bytes:
 * values in [0, 1] are rounded to multiples of 1/255).
 */
import type { Dataset } from './dataset.js';
import { DATA_FORMATS, dataFormat } from './formats/registry.js';
import type { LocalFormat } from './local-data.js';

export { writeNpyDataset } from './formats/npy.js';

/** The file names each format writes, for a README. */
export const FORMAT_FILES: Readonly<Record<LocalFormat, string>> = Object.fromEntries(
  DATA_FORMATS.map((f) => [f.name, f.writes]),
);

/**
 * Writes `ds` under `dir` in `format`. IDX and image folders store pixels as bytes, so they need
 * values in [0, 1] (image data).
 * @returns the path to give `--data` (the directory, or the CSV file).
 * @throws RangeError naming `--format` when the format is unknown or the data cannot be stored in it.
 */
export function writeLocalData(dir: string, ds: Dataset, format: LocalFormat): Promise<string> {
  return dataFormat(format, '--format').write(dir, ds);
}
