/**
 * Conv-first coalition models batched on the GPU (src/ml/_coalition_gpu_conv.ts) against the
 * naive path (one evaluation per coalition model), on tiny shapes: lavapipe in CI.
 *
 * Tolerances, and why: accuracies (arg-max counts) are equal — the batched path forms M_S in
 * float32 on the device (the naive path combines it in float64 on the CPU) and sums the products
 * in another order, which moves a logit by rounding only, and these seeded sets have no test row
 * within rounding of a tie (checked exactly). The loss agrees to 1e-5 relative (float32 logits;
 * the naive path reduces in float64, the batched one in float32 on the device).
 *
 * Skipped, with the reason printed, only when no WebGPU adapter can be created; with CI=true a
 * missing adapter fails instead.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { maskToCoalition } from '../../scoring/coalition.js';
import { gpuConvCoalitions, widestPerRow } from '../../src/ml/_coalition_gpu_conv.js';
import { loadWebGpu } from '../../src/ml/_webgpu.js';
import { initBackend } from '../../src/ml/backend.js';
import { type CoalitionSetup, createCoalitionEvaluator } from '../../src/ml/coalition.js';
import { checkSetup } from '../../src/ml/coalition-model.js';
import { createModel } from '../../src/ml/model-registry.js';
import { initParams, type ModelSpec } from '../../src/ml/models.js';
import { saveModel, tinyCnn } from './_layers.js';
import { gaussianMixture, randomVector } from './_synthetic.js';

const gpu = await loadWebGpu();
const inCi = process.env.CI === 'true';
if (!gpu.ok)
  console.warn(`test/ml/webgpu-conv.test.ts: ${inCi ? 'CI=true, failing' : 'skipped'}: ${gpu.why}`);

/** All 2ⁿ coalitions of `setup`, batched on the GPU (auto) and one model at a time (naive). */
async function bothTables(setup: CoalitionSetup, gpuChunkBytes?: number) {
  const n = setup.updates.length;
  const all = Array.from({ length: 2 ** n }, (_, m) => maskToCoalition(n, m));
  const batched = createCoalitionEvaluator(setup, gpuChunkBytes ? { gpuChunkBytes } : {});
  const naive = createCoalitionEvaluator(setup, { mode: 'naive' });
  try {
    expect(batched.gpu).toBe(true);
    expect(naive.gpu).toBe(false);
    return { batched: await batched.values(all), naive: await naive.values(all) };
  } finally {
    batched.dispose();
    naive.dispose();
  }
}

function expectAgreement(r: Awaited<ReturnType<typeof bothTables>>) {
  expect(Array.from(r.batched.accuracy)).toEqual(Array.from(r.naive.accuracy));
  expect(Array.from(r.batched.perClassAccuracy)).toEqual(Array.from(r.naive.perClassAccuracy));
  for (const [m, v] of r.naive.negLoss.entries())
    expect(Math.abs(r.batched.negLoss[m]! - v) / Math.abs(v), `coalition ${m}`).toBeLessThan(1e-5);
  // The coalitions differ: a table that ignored its coefficients could not pass.
  expect(new Set(r.naive.negLoss).size).toBeGreaterThan(2 ** 3);
}

function setupOf(spec: ModelSpec, n: number, rows: number, seed: number): CoalitionSetup {
  const data = gaussianMixture(rows, spec.inputShape, spec.numClasses, seed);
  return {
    spec,
    m0: initParams(spec, seed),
    updates: Array.from({ length: n }, (_, i) => randomVector(spec.paramCount, seed + 10 + i, 0.05)),
    weights: Array.from({ length: n }, (_, i) => i + 1),
    data,
  };
}

describe.runIf(gpu.ok || inCi)('conv-first coalition models, batched on the GPU', () => {
  beforeAll(async () => {
    await initBackend({ backend: 'webgpu' });
  });
  afterAll(async () => {
    await initBackend({ backend: 'wasm' });
  });

  it('a user Layers CNN (same and valid padding, max and average pooling): all 32 coalitions as the naive path', async () => {
    const path = await saveModel(tinyCnn(2));
    const spec = createModel('tfjs-layers', { path, inputShape: [8, 8, 2], numClasses: 3 });
    expectAgreement(await bothTables(setupOf(spec, 5, 24, 14)));
  });

  it('cnn003 (small input) in several chunks and blocks of rows, as the naive path', async () => {
    const spec = createModel('cnn003', { inputShape: [8, 8, 1], numClasses: 4, hidden: 8 });
    const setup = setupOf(spec, 4, 20, 21);
    // A budget of two coalitions on 7 rows: one coalition per chunk, the rows in blocks.
    const row = widestPerRow(spec);
    const budget = 4 * 2 * (spec.paramCount + 7 * row);
    const coefficients = checkSetup(setup);
    const probe = gpuConvCoalitions({
      spec,
      m0: setup.m0,
      updates: setup.updates,
      data: setup.data,
      a: coefficients.a,
      scale: coefficients.scale,
      maxChunkBytes: budget,
    });
    try {
      expect(probe.chunk).toBe(1);
      expect(probe.rowsPerBlock).toBeLessThan(setup.data.n);
    } finally {
      probe.dispose();
    }
    expectAgreement(await bothTables(setup, budget));
    // and with the default budget: all 16 coalitions in one dispatch, all rows at once
    expectAgreement(await bothTables(setup));
  });

  it('LeNet-5 on 28×28 images: sampled coalitions, several per dispatch, as the naive path', async () => {
    const spec = createModel('lenet5', { inputShape: [28, 28, 1], numClasses: 10 });
    const setup = setupOf(spec, 3, 12, 31);
    const r = await bothTables(setup);
    expect(Array.from(r.batched.accuracy)).toEqual(Array.from(r.naive.accuracy));
    for (const [m, v] of r.naive.negLoss.entries())
      expect(Math.abs(r.batched.negLoss[m]! - v) / Math.abs(v), `coalition ${m}`).toBeLessThan(1e-5);
  });
});
