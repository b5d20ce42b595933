/**
 * What several commands share, kept light (no report or service modules) so that a command
 * loads only what it runs: the usage error and the experiment configuration reader.
 */
import { readFile } from 'node:fs/promises';
import { ConfigError, type ExperimentConfig, parseConfig } from '../fl/config.js';

/** A usage error: printed without a stack trace, exit code 2. */
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

/** An optional integer flag in [min, max]. @throws UsageError naming the flag. */
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

/** Reads and validates a configuration file; errors name the file and the field. */
export async function loadConfig(path: string): Promise<ExperimentConfig> {
  const text = await readFlagFile('config', path);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new ConfigError([{ path: '', message: `not valid JSON (${(e as Error).message})` }], path);
  }
  return parseConfig(json, path);
}
