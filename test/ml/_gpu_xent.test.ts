/**
 * The loss kernels of the generic GPU training path (src/ml/_gpu_xent.ts) against tfjs's ops
 * (`softmaxCrossEntropy`), value and gradient, on the webgpu backend (lavapipe in CI; skipped with
 * the reason printed when no adapter can be created, failing instead with CI=true). Float32 sums
 * in another order: 1e-6 relative on the loss, 1e-7 absolute on the gradient (entries ≤ 1/b).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { softmaxCrossEntropy } from '../../src/ml/_blas_kernels.js';
import { fusedSoftmaxCrossEntropy } from '../../src/ml/_gpu_xent.js';
import { loadWebGpu } from '../../src/ml/_webgpu.js';
import { initBackend } from '../../src/ml/backend.js';
import * as tf from '../../src/ml/tf.js';
import { maxAbsDiff, randomVector } from './_synthetic.js';

const gpu = await loadWebGpu();
const inCi = process.env.CI === 'true';
if (!gpu.ok) console.warn(`test/ml/_gpu_xent.test.ts: ${inCi ? 'CI=true, failing' : 'skipped'}: ${gpu.why}`);

describe.runIf(gpu.ok || inCi)('softmax cross-entropy in three WGSL dispatches', () => {
  beforeAll(async () => {
    await initBackend({ backend: 'webgpu' });
  });
  afterAll(async () => {
    await initBackend({ backend: 'wasm' });
  });

  it('gives tfjs-ops loss and gradient', async () => {
    const [b, C] = [13, 7];
    const z = tf.tensor2d(randomVector(b * C, 4, 6), [b, C]);
    const labels = Int32Array.from({ length: b }, (_, r) => (r * 5) % C);
    const y = tf.tensor1d(labels, 'int32');
    const onehot = tf.oneHot(y, C).toFloat() as tf.Tensor2D;
    const ours = tf.valueAndGrad((t: tf.Tensor) => fusedSoftmaxCrossEntropy(t as tf.Tensor2D, y))(z);
    const theirs = tf.valueAndGrad((t: tf.Tensor) => softmaxCrossEntropy(t as tf.Tensor2D, onehot))(z);
    const [v1, v2] = [(await ours.value.data())[0]!, (await theirs.value.data())[0]!];
    expect(Math.abs(v1 - v2) / v2).toBeLessThan(1e-6);
    expect(v2).toBeGreaterThan(0.5); // random logits of scale 6: far from a zero loss
    const [g1, g2] = [await ours.grad.data(), await theirs.grad.data()];
    expect(maxAbsDiff(g1, g2)).toBeLessThan(1e-7);
    expect(maxAbsDiff(g2, new Float32Array(g2.length))).toBeGreaterThan(1e-2);
    tf.dispose([z, y, onehot, ours.value, ours.grad, theirs.value, theirs.grad]);
  });
});
