/**
 * The data file formats (./format.ts), one file each, listed once here in detection order:
 * `fedscore client --data`, the `files` data set and `fedscore init --format` read this list.
 */
import { csvFormat } from './csv.js';
import type { DataFormat } from './format.js';
import { idxFormat } from './idx.js';
import { imageFolderFormat } from './image-folder.js';
import { npyFormat } from './npy.js';

export const DATA_FORMATS: readonly DataFormat[] = [
  npyFormat,
  idxFormat,
  csvFormat,
  imageFolderFormat, // last: any folder with sub-folders is one
];

/** The formats' names, in registry order. */
export const DATA_FORMAT_NAMES: readonly string[] = DATA_FORMATS.map((f) => f.name);

/** The format `name`. Throws RangeError naming `field` and the formats when there is none. */
export function dataFormat(name: string, field = 'format'): DataFormat {
  const found = DATA_FORMATS.find((f) => f.name === name);
  if (!found)
    throw new RangeError(`${field}: expected one of ${DATA_FORMAT_NAMES.join(', ')}, got ${String(name)}`);
  return found;
}
