/**
 * The utilities file reader `fedscore score` and `fedscore audit --utilities` share (kept light:
 * the file's schema only, no report or audit modules).
 */
import {
  parseUtilitiesText,
  type UtilitiesFile,
  type UtilitiesReadOptions,
} from '../records/utilities-file.js';
import { readFlagFile } from './_flags.js';

/**
 * Reads and validates the utilities file `--utilities` names (docs/utilities.md).
 * Utilities beyond ±1e6 are refused (MAX_UTILITY_MAGNITUDE), and outside `options.range` when
 * given (the audit's [0, 1]).
 * @throws UsageError when the file cannot be read; UtilitiesFileError naming the file and the
 *   JSON path of every problem (both exit 2).
 */
export async function loadUtilities(
  path: string,
  options: UtilitiesReadOptions = {},
): Promise<UtilitiesFile> {
  return parseUtilitiesText(await readFlagFile('utilities', path), path, options);
}
