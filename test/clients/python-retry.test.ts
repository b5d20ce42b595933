/**
 * The Python client retries transient failures with backoff (clients/python/test_retry.py:
 * refused and dropped connections, 429 with retry-after, 502, 503, 504; each attempt signed
 * afresh; other answers not retried). Skipped, saying why, only without python3 or `cryptography`.
 */
import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { PYTHON_CLIENT_DIR, pythonProblem } from './_python.js';

const problem = pythonProblem();
if (problem) console.warn(`python-retry.test.ts: skipped — ${problem}`);

describe.skipIf(problem !== undefined)('the Python client retries', () => {
  it('passes clients/python/test_retry.py', () => {
    const r = spawnSync('python3', ['test_retry.py'], {
      cwd: PYTHON_CLIENT_DIR,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.stderr).toMatch(/Ran 6 tests in [\d.]+s\n\nOK\n$/);
    expect(r.status).toBe(0);
  });
});
