/**
 * The experiment configuration reader several commands share, kept light (no report or service
 * modules) so that a command loads only what it runs.
 */
import { ConfigError, type ExperimentConfig, parseConfig } from '../records/config.js';
import { readFlagFile } from './_flags.js';

/**
 * Reads and validates the configuration file `--config` names.
 * @throws UsageError when the file cannot be read; ConfigError naming the file and the field.
 */
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
