/**
 * Local training on the GPU (webgpu backend; internal to train.ts, which checks the options and
 * calls `trainOnGpu` when `onWebGpu()`). Four paths, chosen by the model and
 * `FEDSCORE_GPU_TRAIN` (docs/performance.md, "GPU: WebGPU"):
 *  - dense networks (the built-in `mlp`): the fused step of _gpu_mlp.ts (run by _gpu_mlp_silos.ts,
 *    which also trains several silos in the same dispatches, train-silos.ts), 2L hand-written WGSL
 *    dispatches per step for L layers (4 for the default MLP), minibatches gathered on the device;
 *  - convolutional networks of convolutions (each optionally pooled), a flatten and dense layers
 *    (the built-in `cnn003` and `lenet5`; _gpu_conv_stages.ts says which specs): the fused step of
 *    _gpu_conv.ts, 2S + 1 hand-written WGSL dispatches for S stages (cnn003 9, LeNet-5 11,
 *    against 48 and 62 on the path below), minibatches gathered on the device; on a hardware
 *    adapter by default, `FEDSCORE_GPU_CONV` chooses (`gpuConvPath`);
 *  - every other model (user Layers models of other shapes; cnn003 and LeNet-5 on a software
 *    adapter or with FEDSCORE_GPU_CONV=generic): tfjs's forward and backward ops
 *    for the layers, the loss and its gradient in three WGSL dispatches (_gpu_xent.ts, instead of
 *    ~15 tfjs ops), then the fused optimizer of _gpu_optimizer.ts (one dispatch per 6 parameter
 *    tensors, instead of ~10 tfjs ops per parameter tensor); θ is a slice of the flat state per
 *    tensor;
 *  - `FEDSCORE_GPU_TRAIN=tfjs`: tfjs ops only (_gpu_train_tfjs.ts), the path before the fused
 *    kernels, kept to compare against (`bench gpu` counts both).
 * All of them keep θ and the optimizer state on the device, upload the examples once, read nothing
 * inside a pass (the pass's loss once at its end, asynchronously; θ once at the end), and take
 * train.ts's steps on train.ts's batches (_batches.ts). Differences from the CPU path are float32
 * rounding only (the optimizer in float32 here, float64 there; sums in another order):
 * test/ml/webgpu.test.ts, test/ml/_gpu_mlp.test.ts and test/ml/_gpu_conv.slow.test.ts bound them.
 */

import { runBatches } from './_batches.js';
import { trainConvFused } from './_gpu_conv.js';
import { fusedConvStages } from './_gpu_conv_stages.js';
import { fusedMlpLayers } from './_gpu_mlp.js';
import { trainMlpFused } from './_gpu_mlp_silos.js';
import { fusedOptimizerStep, readDelta, readPassLoss, stateLayout } from './_gpu_optimizer.js';
import type { GpuTrainPlan, GpuTrainResult } from './_gpu_plan.js';
import { trainOnGpuTfjs } from './_gpu_train_tfjs.js';
import { fusedSoftmaxCrossEntropy } from './_gpu_xent.js';
import { onSoftwareAdapter } from './_webgpu.js';
import { type Examples, forward, type ModelSpec, paramLayout } from './models.js';
import * as tf from './tf.js';

/** The GPU training paths `FEDSCORE_GPU_TRAIN` names. */
export const GPU_TRAIN_PATHS = ['fused', 'tfjs'] as const;
export type GpuTrainPath = (typeof GPU_TRAIN_PATHS)[number];

/** `FEDSCORE_GPU_TRAIN` (default `fused`); throws RangeError naming it on another value. */
export function gpuTrainPath(env: NodeJS.ProcessEnv = process.env): GpuTrainPath {
  const v = env.FEDSCORE_GPU_TRAIN ?? 'fused';
  if (!(GPU_TRAIN_PATHS as readonly string[]).includes(v))
    throw new RangeError(`FEDSCORE_GPU_TRAIN: expected one of ${GPU_TRAIN_PATHS.join(', ')}, got ${v}`);
  return v as GpuTrainPath;
}

/** Trains on the device; returns what trainLocal returns. */
export function trainOnGpu(
  spec: ModelSpec,
  m0: Float32Array,
  data: Examples,
  plan: GpuTrainPlan,
): Promise<GpuTrainResult> {
  if (gpuTrainPath() === 'tfjs') return trainOnGpuTfjs(spec, m0, data, plan);
  const dense = fusedMlpLayers(spec);
  if (dense) return trainMlpFused(spec, dense, m0, data, plan);
  const conv = fusedConvStages(spec);
  if (conv && gpuConvPath() === 'fused') return trainConvFused(spec, conv, m0, data, plan);
  return trainWithFusedOptimizer(spec, m0, data, plan);
}

/** The conv training paths `FEDSCORE_GPU_CONV` names. */
export const GPU_CONV_PATHS = ['fused', 'generic'] as const;
export type GpuConvPath = (typeof GPU_CONV_PATHS)[number];

/**
 * `FEDSCORE_GPU_CONV`: which path the specs of _gpu_conv_stages.ts (cnn003, LeNet-5) take.
 * Default: `fused` on a hardware adapter, `generic` (tfjs's ops, the fused loss and optimizer) on
 * a software one (lavapipe, SwiftShader), where the fused step is not faster (cnn003 0.6–0.76× of
 * the generic path, LeNet-5 1.2–2.4×: these kernels are not tiled, tfjs's are) and where one cold
 * CI run of its test blocked in pipeline creation for over 8 minutes (docs/performance.md, "The
 * fused conv step"), as the coalition table keeps its fused shader there (_coalition_gpu.ts).
 * @throws RangeError naming FEDSCORE_GPU_CONV on another value.
 */
export function gpuConvPath(env: NodeJS.ProcessEnv = process.env): GpuConvPath {
  const v = env.FEDSCORE_GPU_CONV;
  if (v === undefined || v === '') return onSoftwareAdapter() ? 'generic' : 'fused';
  if (!(GPU_CONV_PATHS as readonly string[]).includes(v))
    throw new RangeError(`FEDSCORE_GPU_CONV: expected one of ${GPU_CONV_PATHS.join(', ')}, got ${v}`);
  return v as GpuConvPath;
}

/**
 * tfjs's forward and backward, the fused optimizer (see the module comment); exported for
 * bench/gpu-conv-step.ts, which times it against the fused conv step.
 */
export async function trainWithFusedOptimizer(
  spec: ModelSpec,
  m0: Float32Array,
  data: Examples,
  plan: GpuTrainPlan,
): Promise<GpuTrainResult> {
  const layout = paramLayout(spec);
  const P = spec.paramCount;
  const features = data.n === 0 ? 0 : data.x.length / data.n;
  const s = stateLayout(P, plan, plan.passes);
  const init = new Float32Array(s.size);
  init.set(m0);
  const state = tf.tensor1d(init);
  const x = tf.tensor2d(data.x, [data.n, features]);
  const labels = tf.tensor1d(Int32Array.from(data.y), 'int32');
  let pass = 0;
  try {
    const run = await runBatches(data.n, plan, {
      step(order, start, b, taken) {
        tf.tidy(() => {
          const idx = tf.tensor1d(order.subarray(start, start + b), 'int32');
          const xb = tf.gather(x, idx) as tf.Tensor2D;
          const yb = tf.gather(labels, idx) as tf.Tensor1D;
          const ws = layout.map((e) => tf.slice(state, [e.offset], [e.size]).reshape([...e.shape]));
          const { value, grads } = tf.valueAndGrads((...w: tf.Tensor[]) =>
            fusedSoftmaxCrossEntropy(forward(spec, w, xb), yb),
          )(ws);
          fusedOptimizerStep(state, s, plan, layout, grads, value, { step: taken, b, pass });
        });
      },
      async passLoss() {
        try {
          return await readPassLoss(state, s, pass);
        } finally {
          pass++;
        }
      },
    });
    return { delta: await readDelta(state, m0), ...run };
  } finally {
    tf.dispose([state, x, labels]);
  }
}
