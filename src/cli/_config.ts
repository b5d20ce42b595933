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

/** Reads and validates a configuration file; errors name the file and the field. */
export async function loadConfig(path: string): Promise<ExperimentConfig> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new UsageError(
      `--config: cannot read ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new ConfigError([{ path: '', message: `not valid JSON (${(e as Error).message})` }], path);
  }
  return parseConfig(json, path);
}
