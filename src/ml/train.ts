/**
 * Local training of one silo: minibatch SGD or Adam on the softmax cross-entropy, from the
 * global model M0, returning the update Δ = M_local − M0.
 *
 * Adam and weight decay follow PyTorch's `torch.optim.Adam(weight_decay=λ)` (the decay is added
 * to the gradient, L2-style, not decoupled), the optimizer papers/003 §5 uses with lr = 1e-3
 * and λ = 1e-3. SGD follows `torch.optim.SGD` (momentum buffer b ← μb + g, θ ← θ − lr·b).
 * Each epoch visits the examples in a fresh seeded permutation; the last batch may be short
 * (the schedule both paths share, _batches.ts).
 */

import { createRng } from '../../scoring/seeded-rng.js';
import { runBatches } from './_batches.js';
import { heapView, nativeAdamStep, softmaxCrossEntropy } from './_blas_kernels.js';
import type { GpuTrainPlan } from './_gpu_plan.js';
import { trainOnGpu } from './_gpu_train.js';
import { nativeTrainer } from './_native_train.js';
import { onWebGpu } from './_webgpu.js';
import { checkExamples, checkParams, type Examples, forward, type ModelSpec, paramLayout } from './models.js';
import * as tf from './tf.js';

/**
 * Copies a float32 tensor's values into `out` at `offset`. On wasm it reads the heap in place:
 * `dataSync` would allocate a fresh array per call, and first-touching fresh memory is slow
 * on these VMs (≈28 ms for the 9.4 MB weight gradient of cnn003's dense layer, against
 * ≈0.6 ms to copy it into a buffer already in use).
 */
function copyOut(t: tf.Tensor, out: Float32Array, offset: number): void {
  out.set(heapView(t) ?? (t.dataSync() as Float32Array), offset);
}

/**
 * One Adam step over `count` parameters with PyTorch's update (L2 weight decay added to the
 * gradient), in double precision; the native addon's `adamStep` computes the same expressions
 * in the same order (test/ml/_blas_kernels.test.ts checks the bits). Internal.
 */
export function adamStepJs(
  theta: Float32Array,
  grad: Float32Array,
  m: Float32Array,
  v: Float32Array,
  count: number,
  wd: number,
  beta1: number,
  beta2: number,
  stepSize: number,
  sqrtBc2: number,
  eps: number,
): void {
  const c1 = 1 - beta1;
  const c2 = 1 - beta2;
  for (let i = 0; i < count; i++) {
    const p = theta[i]!;
    const g = grad[i]! + wd * p;
    const mi = beta1 * m[i]! + c1 * g;
    const vi = beta2 * v[i]! + c2 * g * g;
    m[i] = mi;
    v[i] = vi;
    theta[i] = p - (stepSize * mi) / (Math.sqrt(vi) / sqrtBc2 + eps);
  }
}

/** Options for `trainLocal`. */
export interface TrainOptions {
  /** Passes over the local data (default 1); ignored when `steps` is given. */
  epochs?: number;
  /**
   * Exactly this many optimizer steps instead of `epochs` passes: minibatches are taken in order
   * from successive seeded permutations of the data (a new one after each full pass, the last pass
   * cut short). papers/002 Alg. 2 lines 14–18: the server's K SGD steps on the validation set.
   */
  steps?: number;
  /** Examples per step (default 64). */
  batchSize?: number;
  /** `adam` (default) or `sgd`. */
  optimizer?: 'adam' | 'sgd';
  /** Step size (default 1e-3 for Adam, 1e-2 for SGD). */
  learningRate?: number;
  /** L2 weight decay λ added to the gradient as λθ (default 0; papers/003 uses 1e-3). */
  weightDecay?: number;
  /** SGD momentum μ (default 0). */
  momentum?: number;
  /** Adam β1, β2, ε (defaults 0.9, 0.999, 1e-8). */
  beta1?: number;
  beta2?: number;
  epsilon?: number;
  /** Seed of the example order. */
  seed: number;
  /** Called after each epoch with its mean training loss. */
  onEpoch?: (epoch: number, meanLoss: number) => void;
}

/** What `trainLocal` returns. */
export interface TrainResult {
  /** Δ = M_local − M0, same layout as M0. */
  readonly delta: Float32Array;
  /** Mean training loss of each epoch (measured during the epoch, before each step); with `steps`, of each pass. */
  readonly epochLosses: Float64Array;
  /** Optimizer steps taken. */
  readonly steps: number;
  /** Examples processed (epochs × n, or what `steps` minibatches held). */
  readonly samples: number;
}

function checkNumber(
  field: string,
  v: number,
  min: number,
  max = Number.POSITIVE_INFINITY,
  strictMin = false,
) {
  if (typeof v !== 'number' || !Number.isFinite(v) || v < min || (strictMin && v === min) || v > max)
    throw new RangeError(`${field}: expected a number in ${strictMin ? '(' : '['}${min}, ${max}], got ${v}`);
}

function checkInteger(field: string, v: number, min: number) {
  if (!Number.isInteger(v) || v < min)
    throw new RangeError(`${field}: expected an integer ≥ ${min}, got ${v}`);
}

/**
 * `trainLocal`'s options checked and resolved (defaults filled in, the passes `steps` needs, the
 * seeded example order): what every training path takes. Internal to src/ml.
 *
 * @throws RangeError/TypeError naming the bad field (shapes, labels count, options).
 */
export function trainPlan(
  spec: ModelSpec,
  m0: Float32Array,
  data: Examples,
  options: TrainOptions,
): GpuTrainPlan {
  checkParams(spec, m0, 'm0');
  checkExamples(spec, data);
  if (!options || typeof options !== 'object') throw new TypeError('options: expected an object with a seed');
  const epochs = options.epochs ?? 1;
  const batchSize = options.batchSize ?? 64;
  const opt = options.optimizer ?? 'adam';
  if (opt !== 'adam' && opt !== 'sgd')
    throw new RangeError(`optimizer: expected adam or sgd, got ${String(opt)}`);
  const lr = options.learningRate ?? (opt === 'adam' ? 1e-3 : 1e-2);
  const wd = options.weightDecay ?? 0;
  const momentum = options.momentum ?? 0;
  const beta1 = options.beta1 ?? 0.9;
  const beta2 = options.beta2 ?? 0.999;
  const eps = options.epsilon ?? 1e-8;
  checkInteger('epochs', epochs, 0);
  checkInteger('batchSize', batchSize, 1);
  const maxSteps = options.steps;
  if (maxSteps !== undefined) checkInteger('steps', maxSteps, 0);
  checkNumber('learningRate', lr, 0, Number.POSITIVE_INFINITY, true);
  checkNumber('weightDecay', wd, 0);
  checkNumber('momentum', momentum, 0, 1);
  checkNumber('beta1', beta1, 0, 1);
  checkNumber('beta2', beta2, 0, 1);
  checkNumber('epsilon', eps, 0);
  if (!Number.isFinite(options.seed))
    throw new RangeError(`seed: expected a finite number, got ${options.seed}`);

  const rng = createRng(options.seed);
  // With `steps`, as many passes as the steps need (the last one cut short).
  const passes =
    maxSteps === undefined ? epochs : data.n === 0 ? 0 : Math.ceil(maxSteps / Math.ceil(data.n / batchSize));
  return {
    passes,
    maxSteps,
    batchSize,
    optimizer: opt,
    lr,
    wd,
    momentum,
    beta1,
    beta2,
    eps,
    rng,
    onEpoch: options.onEpoch,
  };
}

/**
 * Trains `spec` from `m0` on `data` and returns Δ = M_local − M0. Uses the active tfjs backend
 * (call `initBackend` first). Deterministic for a given seed and backend. On webgpu the whole
 * loop runs on the device (_gpu_train.ts), with no synchronous read.
 *
 * @throws RangeError/TypeError naming the bad field (shapes, labels count, options).
 */
export async function trainLocal(
  spec: ModelSpec,
  m0: Float32Array,
  data: Examples,
  options: TrainOptions,
): Promise<TrainResult> {
  const plan = trainPlan(spec, m0, data, options);
  // On the GPU, θ and the optimizer state stay on the device (_gpu_train.ts).
  if (onWebGpu()) return trainOnGpu(spec, m0, data, plan);
  const { passes, batchSize, maxSteps, rng, optimizer: opt, lr, wd, momentum, beta1, beta2, eps } = plan;
  const layout = paramLayout(spec);
  const features = data.x.length / Math.max(1, data.n);
  const classes = spec.numClasses;
  const count = spec.paramCount;
  // Parameters and optimizer state live in JS as flat vectors; each step uploads θ, lets tfjs
  // compute the gradient and updates θ in one loop. One fused JS loop over the vector costs far
  // less on wasm than the ~14 tfjs ops per tensor an Adam step takes (measured ≈100 ms per step
  // for the 2.4M-parameter cnn003, against ≈10 ms here).
  const theta = Float32Array.from(m0);
  const grad = new Float32Array(count);
  const m = opt === 'adam' || momentum > 0 ? new Float32Array(count) : undefined;
  const v = opt === 'adam' ? new Float32Array(count) : undefined;
  // The batch is closed over, not an argument: tfjs would otherwise differentiate through it too.
  let xb: tf.Tensor2D | undefined;
  let yb: tf.Tensor2D | undefined;
  const valueAndGrads = tf.valueAndGrads((...ws: tf.Tensor[]) =>
    softmaxCrossEntropy(forward(spec, ws, xb!), yb!),
  );
  const adamNative = opt === 'adam' ? nativeAdamStep() : undefined;
  // With the native kernels active, one addon call does the whole step (_native_train.ts): the
  // gradient of the tfjs path below up to float rounding, the same bits in any thread.
  const fused = nativeTrainer(spec, batchSize);
  const labels = new Int32Array(fused ? batchSize : 0);
  const hyper = new Float64Array([wd, beta1, beta2, 0, 0, eps]);
  const xBuf = new Float32Array(batchSize * features);
  const yBuf = new Float32Array(batchSize * classes);
  let lossSum = 0;
  let steps = 0; // the step being taken, 1, 2, … (Adam's bias corrections, momentum's first step)
  const run = await runBatches(
    data.n,
    { passes, batchSize, maxSteps, rng, onEpoch: options.onEpoch },
    {
      step(order, start, b, taken) {
        steps = taken;
        if (fused) {
          for (let k = 0; k < b; k++) {
            const i = order[start + k]!;
            xBuf.set(data.x.subarray(i * features, (i + 1) * features), k * features);
            labels[k] = data.y[i]!;
          }
          if (opt === 'adam') {
            hyper[3] = lr / (1 - beta1 ** steps);
            hyper[4] = Math.sqrt(1 - beta2 ** steps);
            lossSum += b * fused.step(theta, grad, xBuf, labels, b, { m: m!, v: v!, hyper });
          } else {
            lossSum += b * fused.step(theta, grad, xBuf, labels, b);
            optimizerStep();
          }
          return;
        }
        yBuf.fill(0, 0, b * classes);
        for (let k = 0; k < b; k++) {
          const i = order[start + k]!;
          xBuf.set(data.x.subarray(i * features, (i + 1) * features), k * features);
          yBuf[k * classes + data.y[i]!] = 1;
        }
        lossSum +=
          b *
          tf.tidy(() => {
            xb = tf.tensor2d(xBuf.subarray(0, b * features), [b, features]);
            yb = tf.tensor2d(yBuf.subarray(0, b * classes), [b, classes]);
            const ws = layout.map((e) =>
              tf.tensor(theta.subarray(e.offset, e.offset + e.size), [...e.shape]),
            );
            const { value, grads } = valueAndGrads(ws);
            for (const [k, e] of layout.entries()) copyOut(grads[k]!, grad, e.offset);
            return value.dataSync()[0]!;
          });
        optimizerStep();
      },
      passLoss() {
        const sum = lossSum;
        lossSum = 0;
        return sum;
      },
    },
  );
  const delta = new Float32Array(count);
  for (let i = 0; i < count; i++) delta[i] = theta[i]! - m0[i]!;
  return { delta, ...run };

  /** One optimizer step on θ with the gradient in `grad` (PyTorch's update rules). */
  function optimizerStep(): void {
    if (opt === 'adam') {
      const mm = m!;
      const vv = v!;
      const stepSize = lr / (1 - beta1 ** steps);
      const sqrtBc2 = Math.sqrt(1 - beta2 ** steps);
      // The native loop computes the same double-precision expressions in the same order.
      (adamNative ?? adamStepJs)(theta, grad, mm, vv, count, wd, beta1, beta2, stepSize, sqrtBc2, eps);
    } else {
      for (let i = 0; i < count; i++) {
        let g = grad[i]! + wd * theta[i]!;
        if (m) {
          g = steps === 1 ? g : momentum * m[i]! + g;
          m[i] = g;
        }
        theta[i] = theta[i]! - lr * g;
      }
    }
  }
}
