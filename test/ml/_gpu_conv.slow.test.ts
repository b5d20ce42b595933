/**
 * The fused conv step (src/ml/_gpu_conv.ts) against the CPU path (wasm) and the tfjs GPU path
 * (FEDSCORE_GPU_TRAIN=tfjs) with the same seeds, on the webgpu backend (Mesa's lavapipe in CI;
 * skipped with the reason printed when no adapter can be created, failing instead with CI=true,
 * as test/ml/webgpu.test.ts).
 *
 * Tolerances, and why (as test/ml/_gpu_mlp.test.ts): all paths take the same steps on the same
 * batches (_batches.ts); they differ in float32 rounding of the products and sums (another order
 * on the device) and in the optimizer, float64 on the CPU path and float32 on the device. Δ:
 * 2e-5 absolute (2 % of one Adam step of lr = 1e-3; for SGD, lr × the rounding of a gradient of
 * order 1); each pass's mean loss: 1e-5 relative. The shapes are tiny (lavapipe), but every case
 * of the kernels is taken: padding (LeNet-5's first convolution), max and average pooling, a
 * pooled map of odd size (the last row and column dropped, as valid pooling), several input
 * channels, a short last batch, Adam with L2 decay and SGD with momentum.
 */
import { describe, expect, it } from 'vitest';
import { stepCost } from '../../bench/_gpu_counts.js';
import { fusedConvStages } from '../../src/ml/_gpu_conv_stages.js';
import { loadWebGpu } from '../../src/ml/_webgpu.js';
import { type BackendName, initBackend } from '../../src/ml/backend.js';
import { createModel, modelSpec } from '../../src/ml/model-registry.js';
import { type Examples, initParams, type ModelSpec } from '../../src/ml/models.js';
import { type TrainOptions, trainLocal } from '../../src/ml/train.js';
import { gaussianMixture, maxAbs, maxAbsDiff } from './_synthetic.js';
import { webgpuSuite } from './_webgpu_suite.js';

process.env.FEDSCORE_GPU_CONV = 'fused'; // a software adapter (lavapipe) takes the generic path by default (gpuConvPath)
const gpu = await loadWebGpu();
const inCi = process.env.CI === 'true';
if (!gpu.ok)
  console.warn(`test/ml/_gpu_conv.slow.test.ts: ${inCi ? 'CI=true, failing' : 'skipped'}: ${gpu.why}`);

const cnn = (inputShape: [number, number, number], pool: boolean) =>
  createModel('cnn003', { inputShape, numClasses: 3, hidden: 8, pool });
const lenet = createModel('lenet5', { inputShape: [28, 28, 1], numClasses: 10 });
/** A conv spec the fused step does not cover (two pooling layers in a row). */
const twoPools = modelSpec('test', 'two-pools', [12, 12, 1], 3, [
  { kind: 'conv', kernel: 3, inChannels: 1, outChannels: 2, pad: 0, relu: true },
  { kind: 'pool', op: 'max', size: 2 },
  { kind: 'pool', op: 'avg', size: 2 },
  { kind: 'flatten' },
  { kind: 'dense', inputs: 8, units: 3, relu: false },
]);

async function on<T>(backend: BackendName, f: () => Promise<T>): Promise<T> {
  await initBackend({ backend });
  try {
    return await f();
  } finally {
    await initBackend({ backend: 'webgpu' });
  }
}

async function withTfjsPath<T>(f: () => Promise<T>): Promise<T> {
  process.env.FEDSCORE_GPU_TRAIN = 'tfjs';
  try {
    return await f();
  } finally {
    delete process.env.FEDSCORE_GPU_TRAIN;
  }
}

type Result = Awaited<ReturnType<typeof trainLocal>>;

function expectClose(g: Result, c: Result) {
  expect(g.steps).toBe(c.steps);
  expect(g.samples).toBe(c.samples);
  expect(maxAbsDiff(g.delta, c.delta)).toBeLessThan(2e-5);
  for (const [e, loss] of c.epochLosses.entries())
    expect(Math.abs(g.epochLosses[e]! - loss) / loss).toBeLessThan(1e-5);
}

/** The fused step against the CPU path and (`tfjs`) the tfjs GPU path. */
async function compare(spec: ModelSpec, data: Examples, o: TrainOptions, tfjs = true) {
  const m0 = initParams(spec, 1);
  const g = await trainLocal(spec, m0, data, o);
  const c = await on('wasm', () => trainLocal(spec, m0, data, o));
  expectClose(g, c);
  if (tfjs) expectClose(g, await withTfjsPath(() => trainLocal(spec, m0, data, o)));
  expect(maxAbs(g.delta)).toBeGreaterThan(1e-3); // the training moved the model
  return g;
}

const adam: TrainOptions = { seed: 3, epochs: 2, batchSize: 4, learningRate: 0.01, weightDecay: 1e-3 };
const sgd: TrainOptions = {
  seed: 5,
  steps: 4,
  batchSize: 4,
  optimizer: 'sgd',
  learningRate: 0.05,
  momentum: 0.9,
  weightDecay: 1e-3,
};

describe.runIf(gpu.ok || inCi)('the fused conv step on webgpu', () => {
  webgpuSuite('FEDSCORE_GPU_TRAIN');

  it('applies to convolutions, each optionally pooled, then dense layers', () => {
    expect(fusedConvStages(cnn([8, 8, 1], false))?.map((s) => s.kind)).toEqual([
      'conv',
      'conv',
      'dense',
      'dense',
    ]);
    const stages = fusedConvStages(lenet)!;
    expect(stages.map((s) => (s.kind === 'conv' ? `conv${s.pad}${s.pool?.op}${s.oH}` : s.kind))).toEqual([
      'conv2avg14',
      'conv0avg5',
      'dense',
      'dense',
      'dense',
    ]);
    expect(fusedConvStages(createModel('mlp', { hidden: [4] }))).toBeUndefined();
    expect(fusedConvStages(twoPools)).toBeUndefined();
  });

  it('trains cnn003 as the CPU and tfjs paths do (Adam, 2 epochs, short last batch; SGD with momentum: CPU)', async () => {
    const spec = cnn([8, 8, 2], false);
    const data = gaussianMixture(10, [8, 8, 2], 3, 7); // batches of 4: the last one short (2)
    const g = await compare(spec, data, adam);
    expect(g.steps).toBe(6);
    await compare(spec, data, sgd, false);
  });

  it('trains cnn003 with max pooling over odd-sized maps (the last row and column dropped)', async () => {
    const spec = cnn([11, 11, 1], true); // 9×9 → 4×4 (row 8 dropped) → 2×2 → 1×1
    await compare(spec, gaussianMixture(10, [11, 11, 1], 3, 8), adam);
  });

  it('trains LeNet-5 as the CPU path (and, with Adam, the tfjs path) does (padding, average pooling)', async () => {
    const data = gaussianMixture(6, [28, 28, 1], 10, 9); // batches of 4 and 2
    await compare(lenet, data, { ...adam, epochs: 1 });
    await compare(lenet, data, { ...sgd, steps: 2 }, false);
  });

  it('leaves other conv specs to the generic path, which agrees with the CPU path', async () => {
    await compare(twoPools, gaussianMixture(10, [12, 12, 1], 3, 10), adam, false);
  });

  it('takes 2S + 1 dispatches and no readback per step (cnn003 9, LeNet-5 11; the tfjs paths: bench gpu)', async () => {
    for (const [spec, shape, expected] of [
      [cnn([8, 8, 1], false), [8, 8, 1], 9],
      [lenet, [28, 28, 1], 11],
    ] as const) {
      const data = gaussianMixture(16, shape, spec.numClasses, 11); // 4 batches of 4 per pass
      const train = (steps: number) =>
        trainLocal(spec, initParams(spec, 1), data, { seed: 3, steps, batchSize: 4 });
      const fused = await stepCost(train, 1, 3);
      expect(fused.perStep).toEqual({ dispatches: expected, readbacks: 0, bytesRead: 0 });
    }
  });
});
