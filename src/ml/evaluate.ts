/**
 * Utilities of a model on a dataset: accuracy, negative mean cross-entropy loss, and per-class
 * accuracy from the confusion matrix (the class-wise utilities of papers/000 Eq. 7).
 */
import * as tf from '@tensorflow/tfjs';
import {
  checkExamples,
  checkParams,
  type Examples,
  forward,
  type ModelSpec,
  paramTensors,
} from './models.js';

/** Utilities of one model on one dataset. */
export interface Evaluation {
  /** Number of examples evaluated. */
  readonly n: number;
  /** Fraction of examples whose arg-max logit is the label (ties go to the lower class). */
  readonly accuracy: number;
  /** Mean softmax cross-entropy (natural log). */
  readonly loss: number;
  /** −loss, the "negative loss" utility. */
  readonly negLoss: number;
  /** confusion[t·C + p] = examples of true class t predicted as p. */
  readonly confusion: Int32Array;
  /** Per class t: confusion[t,t] / examples of class t (NaN for a class with no examples). */
  readonly perClassAccuracy: Float64Array;
}

/** Options for `evaluate`. */
export interface EvaluateOptions {
  /** Examples per forward pass (default 1000). */
  batchSize?: number;
}

/** Per-class accuracy from a C×C confusion matrix (NaN where a class has no examples). */
export function perClassAccuracy(confusion: Int32Array, numClasses: number): Float64Array {
  if (!Number.isInteger(numClasses) || numClasses < 1 || confusion.length !== numClasses * numClasses)
    throw new RangeError(`confusion: expected ${numClasses}×${numClasses} entries, got ${confusion.length}`);
  const out = new Float64Array(numClasses);
  for (let t = 0; t < numClasses; t++) {
    let row = 0;
    for (let p = 0; p < numClasses; p++) row += confusion[t * numClasses + p]!;
    out[t] = row === 0 ? Number.NaN : confusion[t * numClasses + t]! / row;
  }
  return out;
}

/**
 * Accumulates one batch of logits into a confusion matrix and returns the batch's summed
 * cross-entropy. `logits` is [b, C]. The logits are read back once and reduced in JS in float64
 * (log-sum-exp with the max subtracted; arg-max with ties to the lower class): on wasm that is
 * cheaper than the half-dozen small kernels of logSoftmax/argMax, and identical for every
 * caller, so combined and naive coalition evaluation reduce the same way.
 * Internal building block shared with coalition.ts.
 */
export function accumulate(
  logits: tf.Tensor2D,
  labels: ArrayLike<number>,
  labelOffset: number,
  confusion: Int32Array,
  numClasses: number,
): number {
  const z = logits.dataSync() as Float32Array;
  const rows = logits.shape[0];
  const C = numClasses;
  let sum = 0;
  for (let k = 0; k < rows; k++) {
    const o = k * C;
    let best = 0;
    let max = z[o]!;
    for (let c = 1; c < C; c++)
      if (z[o + c]! > max) {
        max = z[o + c]!;
        best = c;
      }
    let e = 0;
    for (let c = 0; c < C; c++) e += Math.exp(z[o + c]! - max);
    const t = labels[labelOffset + k]!;
    sum += max + Math.log(e) - z[o + t]!;
    confusion[t * C + best]!++;
  }
  return sum;
}

/** Builds an `Evaluation` from a confusion matrix and a summed loss. */
export function summarize(confusion: Int32Array, lossSum: number, numClasses: number): Evaluation {
  let n = 0;
  let correct = 0;
  for (let t = 0; t < numClasses; t++)
    for (let p = 0; p < numClasses; p++) {
      const c = confusion[t * numClasses + p]!;
      n += c;
      if (t === p) correct += c;
    }
  const loss = n === 0 ? Number.NaN : lossSum / n;
  return {
    n,
    accuracy: n === 0 ? Number.NaN : correct / n,
    loss,
    negLoss: -loss,
    confusion,
    perClassAccuracy: perClassAccuracy(confusion, numClasses),
  };
}

/**
 * Evaluates the model with flat parameters `params` on `data`, in batches, on the active
 * backend. Throws RangeError/TypeError naming a bad argument.
 */
export function evaluate(
  spec: ModelSpec,
  params: Float32Array,
  data: Examples,
  options: EvaluateOptions = {},
): Evaluation {
  checkParams(spec, params);
  checkExamples(spec, data);
  const batchSize = options.batchSize ?? 1000;
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new RangeError(`batchSize: expected a positive integer, got ${batchSize}`);
  const f = data.n === 0 ? 0 : data.x.length / data.n;
  const C = spec.numClasses;
  const confusion = new Int32Array(C * C);
  const ws = paramTensors(spec, params);
  let lossSum = 0;
  try {
    for (let start = 0; start < data.n; start += batchSize) {
      const b = Math.min(batchSize, data.n - start);
      const logits = tf.tidy(() =>
        forward(spec, ws, tf.tensor2d(data.x.subarray(start * f, (start + b) * f), [b, f])),
      );
      lossSum += accumulate(logits, data.y, start, confusion, C);
      logits.dispose();
    }
  } finally {
    tf.dispose(ws);
  }
  return summarize(confusion, lossSum, C);
}
