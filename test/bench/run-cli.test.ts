/**
 * `npm run bench` (bench/run.ts) as a user meets it: `--help` prints the usage and the sections
 * instead of starting every section (an hour or more); a wrong section or option is refused with
 * exit code 2 and the name; `products` compares this build's blocks with another build's.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadBlasKernels } from '../../src/ml/_blas_kernels.js';

const RUN = fileURLToPath(new URL('../../bench/run.ts', import.meta.url));
const bench = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', RUN, ...args], { encoding: 'utf8', timeout: 60_000 });

describe('npm run bench', () => {
  it('--help prints the usage and every section, and runs none', () => {
    const r = bench('--help');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^`npm run bench \[-- \[--json <file>\]/);
    expect(r.stdout).toMatch(/Sections: shapley, .*, products \(none named: all of them\)\./);
    expect(r.stdout).not.toMatch(/# fedscore benchmarks/);
  });

  it('refuses an unknown section and an option without its value, naming them', () => {
    const a = bench('nope');
    expect(a.status).toBe(2);
    expect(a.stderr).toMatch(/bench: unknown section 'nope' \(known: shapley, .*products\)/);
    const b = bench('products', '--repeat');
    expect(b.status).toBe(2);
    expect(b.stderr).toMatch(/bench: --repeat needs a value/);
  });

  it.runIf(loadBlasKernels().ok)('products refuses a bad thread list, naming --threads', () => {
    const r = bench('products', '--threads', '0,2');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      /bench products: --threads: expected a comma-separated list of integers in \[1, 256\], got 0,2/,
    );
  });
});
