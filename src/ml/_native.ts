/**
 * Loading the optional native tfjs packages (internal; used by backend.ts).
 *
 * `@tensorflow/tfjs-node(-gpu)` register their kernels when their module starts loading and
 * then require the napi binding under `lib/`, which their install script downloads. When that
 * script did not run (npm skipped it, or it failed offline) a require would half-register a
 * `tensorflow` backend and throw; so the binding folder is checked first.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

/**
 * Loads the package installed in folder `root` (undefined: not installed). Returns undefined
 * when it loaded, else why not.
 */
export function loadNativeAt(root: string | undefined): string | undefined {
  if (root === undefined) return 'not installed';
  if (!existsSync(join(root, 'lib')))
    return 'installed without its native binding (install script did not run)';
  try {
    createRequire(join(root, 'package.json'))(root);
    return undefined;
  } catch (e) {
    return `failed to load (${(e as Error).message.split('\n')[0]})`;
  }
}
