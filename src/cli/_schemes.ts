/** `--schemes <list>` of `experiment` and `score`: the private schemes the outputs show. */
import type { Scheme } from '../../scoring/private.js';
import { parseSchemes } from '../records/shown-schemes.js';
import { UsageError } from './_flags.js';

/**
 * The schemes a `--schemes` flag lists (`loo,ee,fp`).
 * @throws UsageError naming --schemes and the bad name.
 */
export function schemesFlag(list: string): Scheme[] {
  try {
    return parseSchemes(list, '--schemes');
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}
