/**
 * `--plugin <module>`: a user's module, imported before a command reads its experiment
 * configuration, so that it can register strategies, datasets, models or estimators
 * (registerStrategy, registerDataset, registerModel, registerEstimator) that the configuration
 * then names.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Option } from 'commander';
import { UsageError } from './_flags.js';

/** The flag: `--plugin <module>`, repeatable; its value is the list of paths in order. */
export const pluginOption = () =>
  new Option(
    '--plugin <module>',
    'a module to import before the configuration is read (a path relative to the current directory), e.g. one that registers strategies, datasets, models or estimators; repeatable',
  ).argParser((path: string, previous: string[] | undefined) => [...(previous ?? []), path]);

/**
 * Imports each module in order, once (the module cache keeps a module that is named twice).
 *
 * @param paths - file paths as given to `--plugin`, resolved against `cwd`.
 * @param cwd - the directory the paths are relative to (default: the current directory).
 * @throws UsageError "--plugin: cannot import PATH: REASON" when a module cannot be found or its
 *   evaluation throws (e.g. it registers a name twice).
 */
export async function loadPlugins(paths: readonly string[], cwd: string = process.cwd()): Promise<void> {
  for (const path of paths) {
    const url = pathToFileURL(resolve(cwd, path)).href;
    try {
      await import(url);
    } catch (e) {
      throw new UsageError(`--plugin: cannot import ${path}: ${(e as Error)?.message ?? String(e)}`);
    }
  }
}
