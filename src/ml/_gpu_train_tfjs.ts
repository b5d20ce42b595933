/**
 * Local training on the GPU through tfjs ops only (webgpu; internal to _gpu_train.ts): the path
 * before the fused kernels (issue 36), kept selectable with `FEDSCORE_GPU_TRAIN=tfjs` so that
 * `bench gpu` can count both and a regression in the fused kernels can be told from one in tfjs.
 *
 * Everything stays on the device: the silo's examples are uploaded once, each step uploads only
 * the b indices of its minibatch (`tf.gather`), θ, m, v are tf.Variables updated in place by the
 * same rules as train.ts (PyTorch's Adam with L2 weight decay added to the gradient; SGD with
 * momentum b ← μb + g), ~10 tfjs ops per parameter tensor, and the loss is summed on the device
 * and read once per epoch, asynchronously. The example order is train.ts's (_batches.ts).
 *
 * Differences from the CPU path are float rounding only: the optimizer runs in float32 here
 * (train.ts's Adam loop computes in float64 and rounds θ once per step), and the GPU's products
 * and reductions sum in another order. test/ml/webgpu.test.ts bounds the difference.
 */

import { runBatches } from './_batches.js';
import { softmaxCrossEntropy } from './_blas_kernels.js';
import type { GpuTrainPlan, GpuTrainResult } from './_gpu_plan.js';
import { type Examples, forward, type ModelSpec, paramLayout } from './models.js';
import * as tf from './tf.js';

/** Trains on the device with tfjs ops; returns what trainLocal returns. */
export async function trainOnGpuTfjs(
  spec: ModelSpec,
  m0: Float32Array,
  data: Examples,
  plan: GpuTrainPlan,
): Promise<GpuTrainResult> {
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
