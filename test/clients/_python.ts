/**
 * Whether the Python client's tests can run here: python3 with the `cryptography` package
 * (Debian's python3-cryptography; CI installs it, .ci/run). The tests that need it skip, saying
 * why, only when one of the two is missing. And the client installed as a package
 * (clients/python/pyproject.toml) into a fresh virtual environment, as docs/python-client.md says.
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync } from 'node:fs';
import { join } from 'node:path';

/** Why the Python tests cannot run, or undefined when they can. */
export function pythonProblem(): string | undefined {
  const r = spawnSync('python3', ['-c', 'import cryptography'], { encoding: 'utf8' });
  if (r.error) return `python3 is not installed (${(r.error as NodeJS.ErrnoException).code})`;
  if (r.status !== 0)
    return `python3 has no 'cryptography' package (apt-get install python3-cryptography): ${r.stderr.trim().split('\n').pop()}`;
  return undefined;
}

/** clients/python/, where the client and its vector check live. */
export const PYTHON_CLIENT_DIR = new URL('../../clients/python/', import.meta.url).pathname;

/**
 * The interpreter virtual environments are made from: Debian's /usr/bin/python3 (python3-venv,
 * python3-setuptools, python3-pip, python3-cryptography; .ci/run installs them), else python3.
 */
export const VENV_PYTHON =
  process.env.FEDSCORE_VENV_PYTHON ?? (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');

/** Why the client cannot be installed into a virtual environment here, or undefined. */
export function venvProblem(): string | undefined {
  const r = spawnSync(VENV_PYTHON, ['-c', 'import venv, ensurepip, setuptools, cryptography'], {
    encoding: 'utf8',
  });
  if (r.error) return `${VENV_PYTHON} cannot run (${(r.error as NodeJS.ErrnoException).code})`;
  if (r.status !== 0)
    return `${VENV_PYTHON} lacks a module for the package install (apt-get install python3-venv python3-setuptools python3-pip python3-cryptography): ${r.stderr.trim().split('\n').pop()}`;
  return undefined;
}

/** A command run to completion: its stdout; rejects with its stderr on a non-zero exit. */
export function run(command: string, args: readonly string[], o: { cwd?: string } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...o });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      err += d;
    });
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${command} ${args.join(' ')}: exit ${code}\n${err}`)),
    );
  });
}

/**
 * `pip install ./clients/python` into a fresh virtual environment under `dir`, as
 * docs/python-client.md says (offline: the system's setuptools, no index). The folder is copied
 * first, so the build's `build/` and `*.egg-info` are not written into the checkout.
 * @returns the environment's python and its `fedscore-client` command.
 */
export async function installClient(dir: string): Promise<{ python: string; fedscoreClient: string }> {
  const source = join(dir, 'fedscore-client-src');
  cpSync(PYTHON_CLIENT_DIR, source, {
    recursive: true,
    filter: (p) => !/(^|\/)(build|__pycache__|[^/]*\.egg-info)$/.test(p),
  });
  const venv = join(dir, 'venv');
  // The environment without its own copy of pip (ensurepip takes ~15 s on two busy cores): the
  // system's pip installs into it (`pip --python`), the same install as the docs' venv/bin/pip.
  await run(VENV_PYTHON, ['-m', 'venv', '--system-site-packages', '--without-pip', venv]);
  await run(VENV_PYTHON, [
    '-m',
    'pip',
    '--python',
    join(venv, 'bin', 'python'),
    'install',
    '--quiet',
    '--no-build-isolation',
    '--no-index',
    source,
  ]);
  return { python: join(venv, 'bin', 'python'), fedscoreClient: join(venv, 'bin', 'fedscore-client') };
}
