/**
 * The utilities file reader `fedscore score` and `fedscore audit --utilities` share (kept light:
 * the file's schema only, no report or audit modules).
 */
import { parseUtilitiesText, type UtilitiesFile } from '../fl/utilities-file.js';
import { readFlagFile } from './_flags.js';

/**
 * Reads and validates the utilities file `--utilities` names (docs/utilities.md).
 * @throws UsageError when the file cannot be read; UtilitiesFileError naming the file and the
 *   JSON path of every problem.
 */
export async function loadUtilities(path: string): Promise<UtilitiesFile> {
  return parseUtilitiesText(await readFlagFile('utilities', path), path);
}
