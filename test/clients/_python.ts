/**
 * Whether the Python client's tests can run here: python3 with the `cryptography` package
 * (Debian's python3-cryptography; CI installs it, .ci/run). The tests that need it skip, saying
 * why, only when one of the two is missing.
 */
import { spawnSync } from 'node:child_process';

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
