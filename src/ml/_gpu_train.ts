/**
 * Local training on the GPU (webgpu backend; internal to train.ts, which checks the options and
 * calls `trainOnGpu` when `onWebGpu()`).
 *
 * The CPU path keeps θ and the optimizer state in JavaScript and reads every gradient back;
 * on a GPU that would be two transfers of the whole model per step. Here everything stays on
 * the device: the silo's examples are uploaded once, each step uploads only the b indices of
 * its minibatch (`tf.gather`), θ, m, v are tf.Variables updated in place by the same rules as
 * train.ts (PyTorch's Adam with L2 weight decay added to the gradient; SGD with momentum
 * b ← μb + g), and the loss is summed on the device and read once per epoch, asynchronously
 * (`dataSync` is unavailable on webgpu). The example order is train.ts's: the same seeded
 * permutation per epoch, so the two paths take the same steps on the same batches.
 *
 * Differences from the CPU path are float rounding only: the optimizer runs in float32 here
 * (train.ts's Adam loop computes in float64 and rounds θ once per step), and the GPU's products
 * and reductions sum in another order. test/ml/webgpu.test.ts bounds the difference.
 */

import type { Rng } from '../../scoring/seeded-rng.js';
import { runBatches } from './_batches.js';
import { softmaxCrossEntropy } from './_blas_kernels.js';
import { type Examples, forward, type ModelSpec, paramLayout } from './models.js';
import * as tf from './tf.js';

/** train.ts's resolved options (checked there). */
export interface GpuTrainPlan {
  readonly passes: number;
  readonly maxSteps: number | undefined;
  readonly batchSize: number;
  readonly optimizer: 'adam' | 'sgd';
  readonly lr: number;
  readonly wd: number;
  readonly momentum: number;
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
  readonly rng: Rng;
  readonly onEpoch?: ((epoch: number, meanLoss: number) => void) | undefined;
}

/** Trains on the device; returns what trainLocal returns. */
export async function trainOnGpu(
  spec: ModelSpec,
  m0: Float32Array,
  data: Examples,
  plan: GpuTrainPlan,
): Promise<{ delta: Float32Array; epochLosses: Float64Array; steps: number; samples: number }> {
  const layout = paramLayout(spec);
  const features = data.n === 0 ? 0 : data.x.length / data.n;
  const { optimizer, lr, wd, momentum, beta1, beta2, eps } = plan;
  const theta = layout.map((e) =>
    tf.variable(tf.tensor(m0.subarray(e.offset, e.offset + e.size), [...e.shape]), false),
  );
  const zeros = () => layout.map((e) => tf.variable(tf.zeros([...e.shape]), false));
  const m = optimizer === 'adam' || momentum > 0 ? zeros() : undefined;
  const v = optimizer === 'adam' ? zeros() : undefined;
  const x = tf.tensor2d(data.x, [data.n, features]);
  const labels = tf.tensor1d(Int32Array.from(data.y), 'int32');
  let lossSum: tf.Scalar = tf.scalar(0);
  let steps = 0; // the step being taken, 1, 2, … (Adam's bias corrections, momentum's first step)
  try {
    const run = await runBatches(data.n, plan, {
      step(order, start, b, taken) {
        steps = taken;
        const next = tf.tidy(() => {
          const idx = tf.tensor1d(order.subarray(start, start + b), 'int32');
          const xb = tf.gather(x, idx) as tf.Tensor2D;
          const yb = tf.oneHot(tf.gather(labels, idx), spec.numClasses).toFloat() as tf.Tensor2D;
          const { value, grads } = tf.valueAndGrads((...ws: tf.Tensor[]) =>
            softmaxCrossEntropy(forward(spec, ws, xb), yb),
          )(theta);
          update(grads);
          return tf.add(lossSum, tf.mul(value, b)) as tf.Scalar;
        });
        lossSum.dispose();
        lossSum = next;
      },
      // Read once per pass, asynchronously (one GPU → CPU transfer per epoch).
      async passLoss() {
        const total = (await lossSum.data())[0]!;
        lossSum.dispose();
        lossSum = tf.scalar(0);
        return total;
      },
    });
    const delta = new Float32Array(spec.paramCount);
    for (const [k, e] of layout.entries()) {
      const values = (await theta[k]!.data()) as Float32Array;
      for (let j = 0; j < e.size; j++) delta[e.offset + j] = values[j]! - m0[e.offset + j]!;
    }
    return { delta, ...run };
  } finally {
    tf.dispose([...theta, ...(m ?? []), ...(v ?? []), x, labels, lossSum]);
  }

  /** One optimizer step on the variables (train.ts's rules, in float32 on the device). */
  function update(grads: tf.Tensor[]): void {
    for (const [k, t] of theta.entries()) {
      const g = wd === 0 ? grads[k]! : tf.add(grads[k]!, tf.mul(t, wd));
      if (optimizer === 'adam') {
        const mk = tf.add(tf.mul(m![k]!, beta1), tf.mul(g, 1 - beta1));
        const vk = tf.add(tf.mul(v![k]!, beta2), tf.mul(tf.square(g), 1 - beta2));
        const stepSize = lr / (1 - beta1 ** steps);
        const sqrtBc2 = Math.sqrt(1 - beta2 ** steps);
        m![k]!.assign(mk);
        v![k]!.assign(vk);
        t.assign(tf.sub(t, tf.div(tf.mul(mk, stepSize), tf.add(tf.div(tf.sqrt(vk), sqrtBc2), eps))));
      } else {
        let step = g;
        if (m) {
          step = steps === 1 ? g : tf.add(tf.mul(m[k]!, momentum), g);
          m[k]!.assign(step);
        }
        t.assign(tf.sub(t, tf.mul(step, lr)));
      }
    }
  }
}
