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
import {
  type CoalitionSetup,
  type CoalitionValues,
  createCoalitionEvaluator,
} from '../../src/ml/coalition.js';
import { checkSetup } from '../../src/ml/coalition-model.js';
import { createModel } from '../../src/ml/model-registry.js';
import { initParams, type ModelSpec } from '../../src/ml/models.js';
import { saveModel, tinyCnn } from './_layers.js';
import { gaussianMixture, randomVector } from './_synthetic.js';

const gpu = await loadWebGpu();
const inCi = process.env.CI === 'true';
if (!gpu.ok)
  console.warn(`test/ml/webgpu-conv.test.ts: ${inCi ? 'CI=true, failing' : 'skipped'}: ${gpu.why}`);

/**
 * All 2ⁿ coalitions of `setup` one model at a time (naive) and batched on the GPU (auto), once per
 * chunk budget of `budgets` (undefined: the default).
 */
async function tables(setup: CoalitionSetup, budgets: (number | undefined)[] = [undefined]) {
  const n = setup.updates.length;
  const all = Array.from({ length: 2 ** n }, (_, m) => maskToCoalition(n, m));
  const naive = createCoalitionEvaluator(setup, { mode: 'naive' });
  try {
    expect(naive.gpu).toBe(false);
    const expected = await naive.values(all);
    for (const gpuChunkBytes of budgets) {
      const batched = createCoalitionEvaluator(setup, gpuChunkBytes ? { gpuChunkBytes } : {});
      try {
        expect(batched.gpu).toBe(true);
        expectAgreement(await batched.values(all), expected);
      } finally {
        batched.dispose();
      }
    }
    return expected;
  } finally {
    naive.dispose();
  }
}

function expectAgreement(batched: CoalitionValues, naive: CoalitionValues) {
  expect(Array.from(batched.accuracy)).toEqual(Array.from(naive.accuracy));
  expect(Array.from(batched.perClassAccuracy)).toEqual(Array.from(naive.perClassAccuracy));
  for (const [m, v] of naive.negLoss.entries())
    expect(Math.abs(batched.negLoss[m]! - v) / Math.abs(v), `coalition ${m}`).toBeLessThan(1e-5);
}

/** The coalitions differ: a table that ignored its coefficients could not pass. */
function expectDistinct(naive: CoalitionValues) {
  expect(new Set(naive.negLoss).size).toBeGreaterThan(naive.negLoss.length / 2);
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
    expectDistinct(await tables(setupOf(spec, 5, 24, 14)));
  });

  it('cnn003 (small input) in several chunks and blocks of rows, as the naive path', async () => {
    const spec = createModel('cnn003', { inputShape: [8, 8, 1], numClasses: 4, hidden: 8 });
    const setup = setupOf(spec, 4, 16, 21);
    // A budget of one coalition on 7 rows: one coalition per chunk, the rows in blocks of 7.
    const row = widestPerRow(spec);
    const budget = 4 * (spec.paramCount + 7 * row);
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
      expect(probe.rowsPerBlock).toBe(7);
    } finally {
      probe.dispose();
    }
    // and with the default budget: all 16 coalitions in one dispatch, all rows at once
    expectDistinct(await tables(setup, [budget, undefined]));
  });

  it('LeNet-5 on 28×28 images: all 8 coalitions in one dispatch, as the naive path', async () => {
    const spec = createModel('lenet5', { inputShape: [28, 28, 1], numClasses: 10 });
    const setup = setupOf(spec, 3, 12, 31);
    expectDistinct(await tables(setup));
  });
});
