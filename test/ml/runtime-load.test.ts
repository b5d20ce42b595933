/**
 * The native pieces load on this Node line (run on every supported line by .ci/run through
 * scripts/ci-node-smoke.sh): fedscore's Node-API kernels compute a product, Dawn's webgpu addon
 * loads, and better-sqlite3 (rebuilt per line: it is built against V8's ABI) opens a database.
 * In CI each must load; elsewhere a missing one is reported as such (OpenBLAS or a Vulkan driver
 * may not be installed on a developer's machine).
 */
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { loadBlasKernels } from '../../src/ml/_blas_kernels.js';

const ci = process.env.CI === 'true';

describe(`native pieces on Node ${process.version}`, () => {
  it('the OpenBLAS kernels load and multiply', () => {
    const load = loadBlasKernels();
    if (!load.ok) {
      expect(ci, `CI must build the native kernels: ${load.why}`).toBe(false);
      return;
    }
    const a = Float32Array.from([1, 2, 3, 4, 5, 6]); // 2×3
    const b = Float32Array.from([7, 8, 9, 10, 11, 12]); // 3×2
    const c = new Float32Array(4);
    load.addon.gemm(1, 0, 0, 2, 2, 3, a, 0, b, 0, c, 0);
    expect([...c]).toEqual([58, 64, 139, 154]);
  });

  it("Dawn's webgpu addon loads", async () => {
    const dawn = (await import('webgpu')) as unknown as { create: unknown; globals: object };
    expect(typeof dawn.create).toBe('function');
    expect(Object.keys(dawn.globals)).toContain('GPUBufferUsage');
  });

  it('better-sqlite3 opens a database', () => {
    const SQLite = createRequire(import.meta.url)('better-sqlite3') as new (
      f: string,
    ) => { prepare(s: string): { get(): unknown }; close(): void };
    const db = new SQLite(':memory:');
    expect(db.prepare('select 6 * 7 as x').get()).toEqual({ x: 42 });
    db.close();
  });
});
