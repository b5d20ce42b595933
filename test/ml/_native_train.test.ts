/**
 * The fused native training step (native/*.c, src/ml/_native_train.ts): the gradient of the tfjs
 * path for every layer kind (dense, padded and valid convolutions, direct and through im2col, max
 * and average pooling of several window sizes, flatten), and the same bits on one thread and two.
 * (Worker against main thread: parallel.test.ts.)
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { loadBlasKernels, useBlasKernels } from '../../src/ml/_blas_kernels.js';
import { nativeTrainer, useFusedTraining } from '../../src/ml/_native_train.js';
import { initBackend } from '../../src/ml/backend.js';
import { modelSpec } from '../../src/ml/model-registry.js';
import { cnn003, initParams, lenet5, type ModelSpec, mlp } from '../../src/ml/models.js';
import { trainLocal } from '../../src/ml/train.js';
import { gaussianMixture, maxAbs, maxAbsDiff, sameBits } from './_synthetic.js';

const load = loadBlasKernels();

/** A small CNN with average pooling of window `size` (XNNPACK's summation order differs by size). */
function avgNet(size: number): ModelSpec {
  return modelSpec('test', `avg${size}`, [12, 12, 2], 5, [
    { kind: 'conv', kernel: 3, inChannels: 2, outChannels: 4, pad: 1, relu: true },
    { kind: 'pool', op: 'avg', size },
    { kind: 'conv', kernel: 2, inChannels: 4, outChannels: 3, pad: 0, relu: false },
    { kind: 'pool', op: 'max', size: 2 },
    { kind: 'flatten' },
    { kind: 'dense', inputs: 3 * Math.floor((Math.floor(12 / size) - 1) / 2) ** 2, units: 5, relu: false },
  ]);
}

describe.runIf(load.ok)('fused native training step', () => {
  beforeAll(async () => {
    await initBackend({ backend: 'wasm' });
    useBlasKernels(true);
  });

  const cases: [string, ModelSpec][] = [
    ['MLP with two hidden layers', mlp({ inputShape: [8, 8, 1], hidden: [24, 16] })],
    ['MLP with a layer split in halves', mlp({ inputShape: [16, 16, 1], hidden: [300] })],
    ['cnn003 (valid convolutions)', cnn003({ inputShape: [10, 10, 1], hidden: 16 })],
    ['cnn003 with max pooling', cnn003({ inputShape: [12, 12, 1], hidden: 16, pool: true })],
    ['LeNet-5 (padded convolutions, 2×2 average pooling)', lenet5()],
    ['average pooling 3×3', avgNet(3)],
    ['average pooling 4×4 (two XNNPACK passes)', avgNet(4)],
    [
      'a direct convolution with 20 channels (a full vector and 4 more)',
      modelSpec('test', 'direct20', [9, 9, 1], 3, [
        { kind: 'conv', kernel: 3, inChannels: 1, outChannels: 20, pad: 1, relu: true },
        { kind: 'flatten' },
        { kind: 'dense', inputs: 9 * 9 * 20, units: 3, relu: false },
      ]),
    ],
  ];
  for (const [title, spec] of cases)
    it(`computes the gradient of the tfjs path: ${title}`, async () => {
      // One full-batch SGD step with lr = 1 from M0: Δ = −∇L(M0), on both paths.
      const data = gaussianMixture(37, spec.inputShape, spec.numClasses, 3);
      const m0 = initParams(spec, 4);
      const options = { seed: 1, optimizer: 'sgd' as const, learningRate: 1, batchSize: 37 };
      expect(nativeTrainer(spec, 37)).toBeDefined();
      const fused = await trainLocal(spec, m0, data, options);
      useFusedTraining(false);
      try {
        const tfjs = await trainLocal(spec, m0, data, options);
        expect(maxAbsDiff(fused.delta, tfjs.delta)).toBeLessThan(2e-6 * maxAbs(tfjs.delta) + 1e-9);
        expect(Math.abs(fused.epochLosses[0]! - tfjs.epochLosses[0]!)).toBeLessThan(1e-6);
      } finally {
        useFusedTraining(true);
      }
    });

  it('gives the same bits on one thread and on two, and the forward pass of the tfjs path', async () => {
    const addon = load.ok ? load.addon : undefined!;
    for (const spec of [
      mlp({ inputShape: [16, 16, 1], hidden: [300] }),
      lenet5(),
      cnn003({ inputShape: [14, 14, 1] }),
    ]) {
      const data = gaussianMixture(150, spec.inputShape, spec.numClasses, 5);
      const m0 = initParams(spec, 6);
      const options = { seed: 3, weightDecay: 1e-3, batchSize: 64, epochs: 2 };
      addon.setLocalThreads(2);
      const two = await trainLocal(spec, m0, data, options);
      addon.setLocalThreads(1);
      const one = await trainLocal(spec, m0, data, options);
      addon.setLocalThreads(0);
      expect(sameBits(one.delta, two.delta)).toBe(true);
      expect([...one.epochLosses]).toEqual([...two.epochLosses]);
    }
  });

  it('is not used with the wasm kernels, and its arguments are checked', () => {
    const spec = mlp({ inputShape: [4, 4, 1], hidden: [8] });
    useBlasKernels(false);
    expect(nativeTrainer(spec, 8)).toBeUndefined();
    useBlasKernels(true);
    const t = nativeTrainer(spec, 8)!;
    const theta = initParams(spec, 1);
    const grad = new Float32Array(spec.paramCount);
    const x = new Float32Array(8 * 16);
    expect(() => t.step(theta, grad, x, Int32Array.of(0, 10), 2)).toThrow(/^labels: a label is not a class$/);
    expect(() => t.step(theta, grad, x, new Int32Array(9), 9)).toThrow(/^b: expected 1 ≤ b/);
    expect(() => t.step(theta.subarray(1), grad, x, new Int32Array(8), 8)).toThrow(
      /^theta: expected at least/,
    );
    const addon = load.ok
      ? (load.addon as unknown as { createTrainer: (...a: unknown[]) => unknown })
      : undefined!;
    expect(() => addon.createTrainer(new Float64Array([1, 0, 10, 0, 0, 0]), [4, 4, 1], 10, 5, 8)).toThrow(
      /^paramCount: differs/,
    );
    expect(() => addon.createTrainer(new Float64Array([2, 0, 3, 5, 0, 0]), [4, 4, 1], 10, 0, 8)).toThrow(
      /^layers: a convolution does not fit its input$/,
    );
    expect(() => addon.createTrainer(new Float64Array([9, 0, 0, 0, 0, 0]), [4, 4, 1], 10, 0, 8)).toThrow(
      /^layers: unknown layer kind$/,
    );
  });
});
