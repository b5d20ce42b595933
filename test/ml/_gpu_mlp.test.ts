/**
 * The fused MLP step (src/ml/_gpu_mlp.ts) against the CPU path (wasm) with the same seeds, on
 * the webgpu backend (Mesa's lavapipe in CI; skipped with the reason printed when no adapter
 * can be created, failing instead with CI=true, as test/ml/webgpu.test.ts).
 *
 * Tolerances, and why: both paths take the same steps on the same batches (_batches.ts); they
 * differ in float32 rounding of the products and sums (another order on the device) and in the
 * optimizer, float64 on the CPU path and float32 on the device. Δ after two epochs of Adam:
 * 2e-5 absolute (2 % of one Adam step of lr = 1e-3, as test/ml/webgpu.test.ts); each epoch's mean
 * loss: 1e-5 relative; the final model's accuracy on the training set: equal (no example sits on
 * a near-tie in these seeded sets; checked exactly).
 */
import { describe, expect, it } from 'vitest';
import { stepCost } from '../../bench/_gpu_counts.js';
import { fusedMlpLayers } from '../../src/ml/_gpu_mlp.js';
import { gpuTrainPath } from '../../src/ml/_gpu_train.js';
import { loadWebGpu } from '../../src/ml/_webgpu.js';
import { type BackendName, initBackend } from '../../src/ml/backend.js';
import { evaluateAsync } from '../../src/ml/evaluate.js';
import { createModel } from '../../src/ml/model-registry.js';
import { initParams, type ModelSpec } from '../../src/ml/models.js';
import { type TrainOptions, trainLocal } from '../../src/ml/train.js';
import { gaussianMixture, maxAbs, maxAbsDiff } from './_synthetic.js';
import { webgpuSuite } from './_webgpu_suite.js';

const gpu = await loadWebGpu();
const inCi = process.env.CI === 'true';
if (!gpu.ok) console.warn(`test/ml/_gpu_mlp.test.ts: ${inCi ? 'CI=true, failing' : 'skipped'}: ${gpu.why}`);

const shape = [6, 6, 1] as const;
const data = gaussianMixture(100, shape, 5, 7); // batches of 32: the last one short (4)
const mlp = (hidden: number[]) => createModel('mlp', { hidden, inputShape: shape, numClasses: 5 });

async function on<T>(backend: BackendName, f: () => Promise<T>): Promise<T> {
  await initBackend({ backend });
  try {
    return await f();
  } finally {
    await initBackend({ backend: 'webgpu' });
  }
}

async function compare(spec: ModelSpec, o: TrainOptions) {
  const m0 = initParams(spec, 1);
  const g = await trainLocal(spec, m0, data, o);
  const c = await on('wasm', () => trainLocal(spec, m0, data, o));
  expect(g.steps).toBe(c.steps);
  expect(g.samples).toBe(c.samples);
  expect(maxAbsDiff(g.delta, c.delta)).toBeLessThan(2e-5);
  for (const [e, loss] of c.epochLosses.entries())
    expect(Math.abs(g.epochLosses[e]! - loss) / loss).toBeLessThan(1e-5);
  expect(maxAbs(g.delta)).toBeGreaterThan(1e-3); // the training moved the model
  return { m0, g, c };
}

const withParams = (m0: Float32Array, delta: Float32Array) => m0.map((v, i) => v + delta[i]!);

describe.runIf(gpu.ok || inCi)('the fused MLP step on webgpu', () => {
  webgpuSuite('FEDSCORE_GPU_TRAIN');

  it('applies to dense networks only', () => {
    expect(fusedMlpLayers(mlp([16]))?.length).toBe(2);
    expect(
      fusedMlpLayers(createModel('lenet5', { inputShape: [28, 28, 1], numClasses: 10 })),
    ).toBeUndefined();
  });

  it('trains as the CPU path does: loss curve, Δ and final accuracy (Adam, L2 decay, 3 epochs)', async () => {
    const spec = mlp([16]);
    const { m0, g, c } = await compare(spec, {
      seed: 3,
      epochs: 3,
      batchSize: 32,
      learningRate: 0.01,
      weightDecay: 1e-3,
    });
    expect(g.epochLosses[2]!).toBeLessThan(g.epochLosses[0]!); // the loss curve goes down
    await initBackend({ backend: 'wasm' });
    const accG = (await evaluateAsync(spec, withParams(m0, g.delta), data)).accuracy;
    const accC = (await evaluateAsync(spec, withParams(m0, c.delta), data)).accuracy;
    await initBackend({ backend: 'webgpu' });
    expect(accG).toBe(accC);
    expect(accC).toBeGreaterThan(0.5); // well above chance (0.2): the step learns
  });

  it('trains 3 and 4 dense layers (4: two optimizer dispatches), SGD with momentum and `steps`', async () => {
    for (const hidden of [
      [12, 8],
      [10, 8, 6],
    ]) {
      const r = await compare(mlp(hidden), {
        seed: 5,
        steps: 5,
        batchSize: 32,
        optimizer: 'sgd',
        learningRate: 0.05,
        momentum: 0.9,
        weightDecay: 1e-3,
      });
      expect(r.g.steps).toBe(5);
    }
  });

  it('takes 2L dispatches and no readback per step; FEDSCORE_GPU_TRAIN=tfjs takes the tfjs ops', async () => {
    const spec = mlp([16]);
    const train = (steps: number) =>
      trainLocal(spec, initParams(spec, 1), data, { seed: 3, steps, batchSize: 16 });
    const fused = await stepCost(train, 1, 3);
    expect(fused.perStep).toEqual({ dispatches: 4, readbacks: 0, bytesRead: 0 });
    process.env.FEDSCORE_GPU_TRAIN = 'tfjs';
    const tfjs = await stepCost(train, 1, 3);
    expect(tfjs.perStep.dispatches).toBeGreaterThan(40);
    expect(tfjs.perStep.readbacks).toBe(0);
    process.env.FEDSCORE_GPU_TRAIN = 'fast';
    expect(() => gpuTrainPath()).toThrow(/FEDSCORE_GPU_TRAIN: expected one of fused, tfjs, got fast/);
  });
});
