/**
 * `npm install -g` puts `fedscore` on PATH (issue 34), for real, into a temporary prefix:
 * - from the tarball `npm pack` makes (its prepack builds dist/): the bin runs the built CLI, and
 *   `fedscore init` works there on its default data set, the bundled Fashion-MNIST test split
 *   (package.json "files"), with no FEDSCORE_DATA_DIR;
 * - from the checkout folder, which npm links: the bin runs from the checkout (its sources, with
 *   the checkout's tsx).
 * Slow (the build, and an install of every runtime dependency: about a minute on an idle 2-core
 * machine), hence `npm run test:slow`; test/package/package.test.ts installs the tarball into a
 * project in CI and runs its linked bin.
 */
import { type SpawnSyncOptions, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = join(dirname(fileURLToPath(import.meta.url)), '../..');
const version = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version;
const work = mkdtempSync(join(tmpdir(), 'fedscore-global-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Runs a command; fails the test with its output unless it exits 0. @returns stdout. */
function run(command: string, args: string[], options: SpawnSyncOptions = {}): string {
  const r = spawnSync(command, args, { encoding: 'utf8', timeout: 400_000, ...options });
  if (r.status !== 0)
    throw new Error(
      `${command} ${args.join(' ')} exited ${r.status ?? r.signal}\n${String(r.stdout)}\n${String(r.stderr)}`,
    );
  return String(r.stdout);
}

const NPM_FLAGS = ['--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'];

/**
 * A shell's environment whose PATH is the prefix's bin and node's folder only (no checkout's
 * node_modules/.bin), without FEDSCORE_DATA_DIR.
 */
function userEnv(prefix: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${join(prefix, 'bin')}:${dirname(process.execPath)}`,
  };
  for (const k of Object.keys(env))
    if (k === 'FEDSCORE_DATA_DIR' || k.startsWith('npm_') || k === 'INIT_CWD') delete env[k];
  return env;
}

let tarball: string;
beforeAll(() => {
  run('npm', ['pack', '--pack-destination', work, '--loglevel=error'], { cwd: root });
  tarball = join(work, `fedscore-${version}.tgz`);
}, 400_000);

describe('npm install -g', () => {
  it('<tarball>: fedscore is on PATH, runs the built CLI, and init works on the bundled data', () => {
    const prefix = join(work, 'from-tarball');
    // No install scripts (the native kernels are optional; better-sqlite3 is needed by `up`, not here).
    run(
      'npm',
      ['install', '-g', '--prefix', prefix, '--ignore-scripts', '--omit=optional', ...NPM_FLAGS, tarball],
      {
        cwd: work,
      },
    );
    const home = join(work, 'user-1');
    mkdirSync(home);
    const env = userEnv(prefix);
    const help = spawnSync('fedscore', ['--help'], { cwd: home, env, encoding: 'utf8' });
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^Usage: fedscore /);
    const installed = join(prefix, 'lib', 'node_modules', 'fedscore');
    expect(realpathSync(join(prefix, 'bin', 'fedscore'))).toBe(join(installed, 'bin', 'fedscore.mjs'));
    expect(existsSync(join(installed, 'src'))).toBe(false); // the built CLI: dist/
    const init = spawnSync(
      'fedscore',
      ['init', 'demo', '--silos', '3', '--examples', '40', '--test-size', '40'],
      {
        cwd: home,
        env,
        encoding: 'utf8',
        timeout: 200_000,
      },
    );
    expect(init.status, init.stderr).toBe(0);
    expect(init.stderr).toBe('');
    expect(init.stdout).toContain('fedscore up demo');
    expect(readFileSync(join(home, 'demo', 'fedscore-project.json'), 'utf8')).toContain('"silos"');
  });

  it('<checkout>: npm links the folder, and fedscore runs from it', () => {
    const prefix = join(work, 'from-checkout');
    run('npm', ['install', '-g', '--prefix', prefix, ...NPM_FLAGS, root], { cwd: work });
    expect(realpathSync(join(prefix, 'lib', 'node_modules', 'fedscore'))).toBe(realpathSync(root));
    const home = join(work, 'user-2');
    mkdirSync(home);
    const help = spawnSync('fedscore', ['--help'], { cwd: home, env: userEnv(prefix), encoding: 'utf8' });
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^Usage: fedscore /);
  });
});
