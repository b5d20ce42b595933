import * as tf from '@tensorflow/tfjs';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadFashionMnist } from '../../src/data/fashion-mnist.js';
import { initBackend } from '../../src/ml/backend.js';
import { evaluate } from '../../src/ml/evaluate.js';
import {
  cnn003,
  forward,
  initParams,
  lenet5,
  type ModelSpec,
  mlp,
  paramTensors,
} from '../../src/ml/models.js';
import { trainLocal } from '../../src/ml/train.js';
import { gaussianMixture, maxAbs, maxAbsDiff, sameBits } from './_synthetic.js';

beforeAll(async () => {
  await initBackend({ backend: 'wasm' });
});

const spec = mlp({ inputShape: [8, 8, 1], hidden: [32] });
const both = gaussianMixture(1024, [8, 8, 1], 10, 1);
const data = { ...both, n: 512, x: both.x.subarray(0, 512 * 64), y: both.y.subarray(0, 512) };

function fullBatchGradient(s: ModelSpec, params: Float32Array): Float32Array {
  return tf.tidy(() => {
    const xb = tf.tensor2d(data.x, [data.n, 64]);
    const yb = tf.oneHot(tf.tensor1d(Int32Array.from(data.y), 'int32'), 10);
    const grads = tf.grads((...w: tf.Tensor[]) =>
      tf.neg(tf.mean(tf.sum(tf.mul(yb, tf.logSoftmax(forward(s, w, xb))), 1))),
    )(paramTensors(s, params));
    const out = new Float32Array(s.paramCount);
    let o = 0;
    for (const g of grads) {
      out.set(g.dataSync() as Float32Array, o);
      o += g.size;
    }
    return out;
  });
}

describe('trainLocal', () => {
  it('lowers the training loss and the held-out loss with Adam (papers/003 settings) and with SGD', async () => {
    const m0 = initParams(spec, 1);
    const heldOut = { ...both, n: 512, x: both.x.subarray(512 * 64), y: both.y.subarray(512) };
    const before = evaluate(spec, m0, heldOut);
    for (const opts of [
      { optimizer: 'adam' as const, learningRate: 1e-3, weightDecay: 1e-3 },
      { optimizer: 'sgd' as const, learningRate: 0.1, momentum: 0.9 },
    ]) {
      const r = await trainLocal(spec, m0, data, { ...opts, seed: 1, epochs: 3, batchSize: 32 });
      expect(r.steps).toBe(3 * 16);
      expect(r.samples).toBe(3 * 512);
      expect(r.epochLosses[2]!).toBeLessThan(r.epochLosses[0]!);
      const local = m0.map((v, i) => v + r.delta[i]!);
      const after = evaluate(spec, local, heldOut);
      expect(after.loss).toBeLessThan(0.85 * before.loss);
      expect(after.accuracy).toBeGreaterThan(before.accuracy + 0.3);
    }
  });

  it('returns Δ = M_local − M0 and leaves M0 untouched; same seed → same Δ, other seed → other Δ', async () => {
    const m0 = initParams(spec, 2);
    const copy = Float32Array.from(m0);
    const a = await trainLocal(spec, m0, data, { seed: 5, batchSize: 64 });
    expect(sameBits(m0, copy)).toBe(true);
    const b = await trainLocal(spec, m0, data, { seed: 5, batchSize: 64 });
    expect(sameBits(a.delta, b.delta)).toBe(true);
    const c = await trainLocal(spec, m0, data, { seed: 6, batchSize: 64 });
    expect(maxAbsDiff(a.delta, c.delta)).toBeGreaterThan(0);
    const none = await trainLocal(spec, m0, data, { seed: 5, epochs: 0 });
    expect(maxAbs(none.delta)).toBe(0);
  });

  it('`steps` takes exactly that many steps over successive passes; epochs is then ignored', async () => {
    const m0 = initParams(spec, 3);
    // 512 examples, batch 64: 8 steps a pass. 8 steps = one epoch, bit for bit.
    const epoch = await trainLocal(spec, m0, data, { seed: 4, batchSize: 64 });
    const eight = await trainLocal(spec, m0, data, { seed: 4, batchSize: 64, steps: 8, epochs: 3 });
    expect(eight.steps).toBe(8);
    expect(eight.samples).toBe(512);
    expect(sameBits(eight.delta, epoch.delta)).toBe(true);
    // 20 steps = two passes and 4 batches of a third (fresh permutations), like 3 epochs cut short.
    const twenty = await trainLocal(spec, m0, data, { seed: 4, batchSize: 64, steps: 20 });
    expect(twenty.steps).toBe(20);
    expect(twenty.samples).toBe(20 * 64);
    expect(twenty.epochLosses).toHaveLength(3);
    const three = await trainLocal(spec, m0, data, { seed: 4, batchSize: 64, epochs: 3 });
    expect(three.steps).toBe(24);
    expect(maxAbsDiff(twenty.delta, three.delta)).toBeGreaterThan(0);
    // 3 steps: fewer than a pass
    const few = await trainLocal(spec, m0, data, { seed: 4, batchSize: 64, steps: 3 });
    expect([few.steps, few.samples]).toEqual([3, 192]);
    expect(maxAbs((await trainLocal(spec, m0, data, { seed: 4, steps: 0 })).delta)).toBe(0);
    await expect(trainLocal(spec, m0, data, { seed: 1, steps: 1.5 })).rejects.toThrow(/^steps: /);
  });

  it('one full-batch SGD step is −lr·(∇L + λθ)', async () => {
    const m0 = initParams(spec, 3);
    const g = fullBatchGradient(spec, m0);
    const lr = 0.05;
    const wd = 0.01;
    const r = await trainLocal(spec, m0, data, {
      optimizer: 'sgd',
      learningRate: lr,
      weightDecay: wd,
      seed: 1,
      batchSize: 512,
    });
    const want = m0.map((p, i) => -lr * (g[i]! + wd * p));
    expect(maxAbsDiff(r.delta, want)).toBeLessThan(1e-6);
  });

  it('one full-batch Adam step is −lr·ĝ/(|ĝ| + ε) with ĝ = ∇L + λθ (PyTorch Adam, bias-corrected)', async () => {
    const m0 = initParams(spec, 4);
    const g = fullBatchGradient(spec, m0);
    const lr = 1e-3;
    const wd = 1e-3;
    const r = await trainLocal(spec, m0, data, {
      learningRate: lr,
      weightDecay: wd,
      seed: 1,
      batchSize: 512,
    });
    const want = m0.map((p, i) => {
      const gi = g[i]! + wd * p;
      return (-lr * gi) / (Math.abs(gi) + 1e-8);
    });
    // The step is ±lr for any gradient much larger than ε, so compare on that scale.
    expect(maxAbsDiff(r.delta, want) / lr).toBeLessThan(1e-3);
  });

  it('trains a CNN on the wasm backend (convolution gradients registered by fedscore)', async () => {
    const cnn = cnn003({ inputShape: [8, 8, 1], hidden: 16 });
    const small = gaussianMixture(128, [8, 8, 1], 10, 2);
    const r = await trainLocal(cnn, initParams(cnn, 1), small, {
      seed: 1,
      epochs: 4,
      batchSize: 16,
      learningRate: 3e-3,
    });
    expect(r.epochLosses[3]!).toBeLessThan(0.7 * r.epochLosses[0]!);
  });

  it('trains LeNet-5 (padded 5×5 convolutions, average pooling) on the wasm backend', async () => {
    const net = lenet5();
    const small = gaussianMixture(256, [28, 28, 1], 10, 1);
    const r = await trainLocal(net, initParams(net, 1), small, {
      seed: 1,
      epochs: 4,
      batchSize: 32,
      learningRate: 3e-3,
    });
    expect(r.epochLosses[3]!).toBeLessThan(0.9 * r.epochLosses[0]!);
  });

  it('learns a Fashion-MNIST slice (src/data loader: Debian set, or the bundled 10k split)', async () => {
    const fm = loadFashionMnist({ trainLimit: 2000, testLimit: 1000 });
    const spec784 = mlp();
    const m0 = initParams(spec784, 1);
    const before = evaluate(spec784, m0, fm.test);
    const r = await trainLocal(spec784, m0, fm.train, { seed: 1, epochs: 1, weightDecay: 1e-3 });
    const after = evaluate(
      spec784,
      m0.map((v, i) => v + r.delta[i]!),
      fm.test,
    );
    expect(after.loss).toBeLessThan(0.5 * before.loss);
    // 10 classes: chance is 0.1; one epoch on 2000 images reaches ≈0.7.
    expect(after.accuracy).toBeGreaterThan(0.6);
  });

  it('rejects bad arguments, naming the field', async () => {
    const m0 = initParams(spec, 1);
    await expect(trainLocal(spec, new Float32Array(3), data, { seed: 1 })).rejects.toThrow(/^m0: /);
    await expect(trainLocal(spec, m0, { ...data, n: 3 }, { seed: 1 })).rejects.toThrow(/^data\.x: /);
    await expect(trainLocal(spec, m0, { ...data, numClasses: 3 }, { seed: 1 })).rejects.toThrow(
      /^data\.numClasses: /,
    );
    await expect(trainLocal(spec, m0, data, { seed: 1, batchSize: 0 })).rejects.toThrow(/^batchSize: /);
    await expect(trainLocal(spec, m0, data, { seed: 1, learningRate: -1 })).rejects.toThrow(
      /^learningRate: /,
    );
    await expect(trainLocal(spec, m0, data, { seed: 1, optimizer: 'rmsprop' as never })).rejects.toThrow(
      /^optimizer: /,
    );
    await expect(trainLocal(spec, m0, data, { seed: Number.NaN })).rejects.toThrow(/^seed: /);
  });
});
