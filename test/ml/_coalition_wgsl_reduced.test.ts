/**
 * The reduced coalition shaders (src/ml/_coalition_wgsl_reduced.ts) against the fused one they
 * replaced (_coalition_wgsl.ts, `gpuKernel: 'fused'`), on the webgpu backend (lavapipe in CI; skipped with
 * the reason printed when no adapter can be created, failing instead with CI=true).
 *
 * What is guaranteed, and checked:
 *  - counts: the same per-row arithmetic (the same fma chains in the same order; skipped silos
 *    would contribute fma(0, q, u) = u exactly), so the same arg-max flags and integer counts:
 *    the accuracy and per-class tables are equal bit for bit;
 *  - loss sums: the same float32 row losses summed in another order; each order's error is at most
 *    (N − 1)·u·Σ|ℓ_r| (recursive summation, any order, u = 2⁻²⁴; to first order), so they differ
 *    by at most 2(N − 1)·u·Σ|ℓ_r|; the row losses are ≥ 0 (logsumexp ≥ the label's logit, up to
 *    one rounding), so Σ|ℓ_r| is the sum itself: checked as 2N·u relative.
 * The reduced accuracy table is also compared with the CPU path's (wasm). The setups cover several chunks of a small budget (the last one shorter), test rows that are
 * not a multiple of the 64-row block (150), a silo of weight 0 (its coefficient 0 in coalitions it
 * is in), the additive convention, sampled coalitions, and the structure: one readback and two
 * shader dispatches per chunk.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maskToCoalition } from '../../scoring/coalition.js';
import { blocksShaderCode, rowsShaderCode } from '../../src/ml/_coalition_wgsl_reduced.js';
import { loadWebGpu, onSoftwareAdapter } from '../../src/ml/_webgpu.js';
import { initBackend } from '../../src/ml/backend.js';
import {
  type CoalitionSetup,
  createCoalitionEvaluator,
  type EvaluatorOptions,
} from '../../src/ml/coalition.js';
import { createModel } from '../../src/ml/model-registry.js';
import { initParams } from '../../src/ml/models.js';
import * as tf from '../../src/ml/tf.js';
import { gaussianMixture, randomVector } from './_synthetic.js';

const gpu = await loadWebGpu();
const inCi = process.env.CI === 'true';
if (!gpu.ok)
  console.warn(
    `test/ml/_coalition_wgsl_reduced.test.ts: ${inCi ? 'CI=true, failing' : 'skipped'}: ${gpu.why}`,
  );

const U = 2 ** -24;
const shape = [4, 4, 1] as const;
const test = gaussianMixture(150, shape, 5, 3);

function setupOf(n: number, extra: Partial<CoalitionSetup> = {}): CoalitionSetup {
  const spec = createModel('mlp', { hidden: [12], inputShape: shape, numClasses: 5 });
  return {
    spec,
    m0: initParams(spec, 2),
    updates: Array.from({ length: n }, (_, i) => randomVector(spec.paramCount, 30 + i, 0.4)),
    data: test,
    ...extra,
  };
}

/** Dispatches and readbacks of the webgpu backend while `f` runs (bench/_gpu_counts.ts's method). */
async function counted<T>(f: () => Promise<T>): Promise<{ value: T; dispatches: number; readbacks: number }> {
  const backend = tf.backend() as unknown as {
    recordAndSubmit: (...a: unknown[]) => unknown;
    getBufferData: (...a: unknown[]) => Promise<unknown>;
  };
  const [record, read] = [backend.recordAndSubmit, backend.getBufferData];
  let dispatches = 0;
  let readbacks = 0;
  backend.recordAndSubmit = function (this: unknown, ...a: unknown[]) {
    dispatches++;
    return record.apply(this, a);
  };
  backend.getBufferData = function (this: unknown, ...a: unknown[]) {
    readbacks++;
    return read.apply(this, a);
  };
  try {
    return { value: await f(), dispatches, readbacks };
  } finally {
    backend.recordAndSubmit = record;
    backend.getBufferData = read;
  }
}

async function tables(setup: CoalitionSetup, options: EvaluatorOptions) {
  const ev = createCoalitionEvaluator(setup, options);
  try {
    expect(ev.gpu).toBe(true);
    return {
      accuracy: await ev.table('accuracy'),
      perClass: await ev.table('perClassAccuracy'),
      negLoss: await ev.table('negLoss'),
    };
  } finally {
    ev.dispose();
  }
}

/** |a − b| ≤ 2N·u·|b| per entry (see the module comment). */
function expectLossBound(a: Float64Array, b: Float64Array): void {
  const N = test.n;
  for (const [m, v] of b.entries()) expect(Math.abs(a[m]! - v)).toBeLessThanOrEqual(2 * N * U * Math.abs(v));
}

describe.runIf(gpu.ok || inCi)('the reduced coalition shaders', () => {
  beforeAll(async () => {
    await initBackend({ backend: 'webgpu' });
  });
  afterAll(async () => {
    await initBackend({ backend: 'wasm' });
  });

  it('gives the fused shader’s table: counts bit for bit, loss sums within the summation bound', async () => {
    for (const extra of [
      { weights: [3, 1, 0, 2, 5, 4, 1] },
      { convention: 'additive' as const },
    ] satisfies Partial<CoalitionSetup>[]) {
      const setup = setupOf(7, extra);
      // A budget of a few coalitions per chunk: several chunks, the last one shorter.
      const t = await tables(setup, { gpuKernel: 'reduced', gpuChunkBytes: 20_000 });
      const f = await tables(setup, { gpuKernel: 'fused' });
      expect(Array.from(t.accuracy)).toEqual(Array.from(f.accuracy));
      expect(Array.from(t.perClass)).toEqual(Array.from(f.perClass));
      expectLossBound(t.negLoss, f.negLoss);
      // And the CPU path's table (no near-ties in this seeded set, as test/ml/webgpu.test.ts).
      await initBackend({ backend: 'wasm' });
      try {
        const ev = createCoalitionEvaluator(setup);
        expect(Array.from(await ev.table('accuracy'))).toEqual(Array.from(t.accuracy));
        ev.dispose();
      } finally {
        await initBackend({ backend: 'webgpu' });
      }
      // A table with something in it: the accuracies separate the coalitions.
      expect(new Set(t.accuracy).size).toBeGreaterThan(3);
    }
  });

  it('evaluates sampled coalitions as the fused shader does', async () => {
    const n = 7;
    const setup = setupOf(n, { weights: [1, 2, 3, 4, 5, 6, 0] });
    const batch = [0, 1, 5, 64, 65, 100, 127].map((m) => maskToCoalition(n, m));
    const values = async (options: EvaluatorOptions) => {
      const ev = createCoalitionEvaluator(setup, options);
      try {
        return await ev.values(batch);
      } finally {
        ev.dispose();
      }
    };
    const t = await values({ gpuKernel: 'reduced' });
    const f = await values({ gpuKernel: 'fused' });
    expect(Array.from(t.accuracy)).toEqual(Array.from(f.accuracy));
    expect(Array.from(t.perClassAccuracy)).toEqual(Array.from(f.perClassAccuracy));
    expectLossBound(t.negLoss, f.negLoss);
  });

  it('reads back one buffer per chunk, in 6 dispatches per chunk (the fused path: 9 and two reads)', async () => {
    // n = 7, H = 12, C = 5, 150 rows (3 blocks of 64), a 32 KiB budget. Per coalition, reduced:
    // 4·(2·(H·C + C) + (3 + 1)·(C + 1) + n) = 644 bytes, 50 coalitions per chunk, 3 chunks; fused:
    // 4·(2·150 + H·C + C) = 1,460 bytes, 22 per chunk, 6 chunks.
    const setup = setupOf(7);
    const profile = async (gpuKernel: 'reduced' | 'fused') => {
      const options = { gpuKernel, gpuChunkBytes: 32 * 1024 };
      // Setting up (the first layer's stacks) alone, then the set-up and the table.
      const setupOnly = await counted(async () => createCoalitionEvaluator(setup, options).dispose());
      const all = await counted(() => tables(setup, options));
      return { readbacks: all.readbacks, perTable: all.dispatches - setupOnly.dispatches };
    };
    const t = await profile('reduced');
    const f = await profile('fused');
    expect(t.readbacks).toBe(3);
    expect(f.readbacks).toBe(2 * 6);
    // Per chunk: W_S and b_S (a product and an add each) and the two shaders.
    expect(t.perTable).toBe(6 * 3);
    // The fused path: the same four, the shader, two slices of its output, the count product
    // and the loss sum.
    expect(f.perTable).toBeGreaterThan(8 * 6);
  });

  it('is the default on a hardware adapter; the fused shader is on a software one', async () => {
    const setup = setupOf(7);
    const { readbacks } = await counted(() => tables(setup, {}));
    // One table in one chunk (128 MiB budget): the reduced shaders read one buffer, the fused two.
    expect(readbacks).toBe(onSoftwareAdapter() ? 2 : 1);
    expect(onSoftwareAdapter()).toBe(gpu.ok && gpu.adapter.software);
  });

  it('compiles the shape in, and stores C + 1 numbers per coalition and block of rows', () => {
    const shape = { n: 5, rows: 300, hidden: 7, classes: 3, relu: true };
    const rows = rowsShaderCode(shape);
    expect(rows).toContain('var<workgroup> cnt : array<atomic<u32>, 3>');
    // 300 rows: 5 blocks of 64; the only global store is the block's C + 1 numbers.
    expect(rows).toContain('let k = min(g / 5, kk - 1);');
    expect(rows.match(/result\[/g)).toHaveLength(1);
    expect(rows).toContain('result[g * 4 + lane] = v;');
    const blocks = blocksShaderCode(shape);
    expect(blocks).toContain('for (var b = 0; b < 5; b++) { v = v + Part[(k * 5 + b) * 4 + c]; }');
  });

  it('rejects an unknown kernel name', () => {
    expect(() => createCoalitionEvaluator(setupOf(2), { gpuKernel: 'fast' as unknown as 'reduced' })).toThrow(
      /gpuKernel: expected reduced or fused, got fast/,
    );
  });
});
