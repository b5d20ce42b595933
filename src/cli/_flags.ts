/**
 * What the commands share for their flags, kept light (commander and node:fs only, so that
 * `fedscore <cmd> --help` loads no command module): the one usage error, and parsers that check a
 * flag's value where commander reads it, with messages that start with the flag's name.
 */

import { readFile } from 'node:fs/promises';
import { Option } from 'commander';
import { BACKEND_NAMES } from '../ml/backend-names.js';

/**
 * A usage error: the command line (a flag, its value, or a file a flag names) is wrong. Printed
 * without a stack trace, with a pointer to the command's help; exit code 2 (src/cli/program.ts).
 */
export class UsageError extends Error {
  override name = 'UsageError';
}

/** The text of the file a flag names. @throws UsageError "--flag: cannot read PATH: CODE". */
export async function readFlagFile(flag: string, path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (e) {
    throw new UsageError(
      `--${flag}: cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
}

/** An optional integer flag in [min, max] (decimal digits only). @throws UsageError naming the flag. */
export function integerFlag(
  flag: string,
  raw: string | undefined,
  min: number,
  max: number,
): number | undefined {
  if (raw === undefined) return undefined;
  if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max)
    throw new UsageError(`--${flag}: expected an integer in [${min}, ${max}], got '${raw}'`);
  return Number(raw);
}

/** `--name <value>`: an integer in [min, max], checked by integerFlag as commander reads it. */
export function integerOption(name: string, value: string, description: string, min: number, max: number) {
  return new Option(`--${name} <${value}>`, description).argParser((raw: string) =>
    integerFlag(name, raw, min, max),
  );
}

/** `--name <url>`: an http(s) URL, kept as written. @throws UsageError naming the flag. */
export function httpUrlOption(name: string, description: string) {
  return new Option(`--${name} <url>`, description).argParser((raw: string) => {
    let url: URL | undefined;
    try {
      url = new URL(raw);
    } catch {}
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
      throw new UsageError(`--${name}: expected an http(s) URL, got '${raw}'`);
    return raw;
  });
}

/** `--name <id>`: a consortium id (lower-case letters, digits, dashes; 1..63). @throws UsageError. */
export function idOption(name: string, description: string) {
  return new Option(`--${name} <id>`, description).argParser((raw: string) => {
    if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(raw))
      throw new UsageError(`--${name}: expected lower-case letters, digits and dashes, got '${raw}'`);
    return raw;
  });
}

const REQUIRED = new WeakSet<Option>();

/**
 * Marks a flag as one that must be given: src/cli/program.ts names it in the usage line, marks it
 * "(required)" in the help and reports `--name: required` when it is missing. (Not commander's
 * makeOptionMandatory: commander checks those before unknown flags, so `--confg` would be
 * reported as "--config: required" instead of suggesting --config.)
 */
export function required<T extends Option>(option: T): T {
  REQUIRED.add(option);
  return option;
}

/** Whether `required` marked the flag. */
export const isRequired = (option: Option): boolean => REQUIRED.has(option);

/** The `--backend <name>` flag: one of BACKEND_NAMES. @throws UsageError naming the flag. */
export const backendOption = (what = '') =>
  new Option(
    '--backend <name>',
    `${BACKEND_NAMES.join(' | ')}${what} (default: FEDSCORE_BACKEND, then automatic)`,
  ).argParser((raw: string) => {
    if (!(BACKEND_NAMES as readonly string[]).includes(raw))
      throw new UsageError(`--backend: expected one of ${BACKEND_NAMES.join(', ')}, got '${raw}'`);
    return raw;
  });
