/**
 * The data file formats (./format.ts), one file each, listed once in ./builtin.ts (one line per
 * format) and collected here in detection order (each format's `detectionRank`): `fedscore client
 * --data`, the `files` data set and `fedscore init --format` read this list.
 */
import * as BUILTIN from './builtin.js';
import type { DataFormat } from './format.js';

/** Every format, in detection order (ascending `detectionRank`). */
export const DATA_FORMATS: readonly DataFormat[] = Object.values<DataFormat>(BUILTIN).sort(
  (a, b) => a.detectionRank - b.detectionRank,
);

/** The formats' names, in registry order. */
export const DATA_FORMAT_NAMES: readonly string[] = DATA_FORMATS.map((f) => f.name);

/** The format `name`. Throws RangeError naming `field` and the formats when there is none. */
export function dataFormat(name: string, field = 'format'): DataFormat {
  const found = DATA_FORMATS.find((f) => f.name === name);
  if (!found)
    throw new RangeError(`${field}: expected one of ${DATA_FORMAT_NAMES.join(', ')}, got ${String(name)}`);
  return found;
}
