/**
 * Utilities of a model on a dataset: accuracy, negative mean cross-entropy loss, and per-class
 * accuracy from the confusion matrix (the class-wise utilities of papers/000 Eq. 7).
 */

import { accumulate, accumulateAsync, diagonalOverRows, summarize } from './_reduce.js';
import {
  checkExamples,
  checkParams,
  type Examples,
  forward,
  type ModelSpec,
  paramTensors,
} from './models.js';
import * as tf from './tf.js';

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
  return diagonalOverRows(confusion, numClasses);
}

/** The logits of each batch of `data`, in order, with the batch's first row; the caller disposes them. */
function* batchLogits(
  spec: ModelSpec,
  ws: ReturnType<typeof paramTensors>,
  data: Examples,
  batchSize: number,
): Generator<{ logits: tf.Tensor2D; start: number }> {
  const f = data.n === 0 ? 0 : data.x.length / data.n;
  for (let start = 0; start < data.n; start += batchSize) {
    const b = Math.min(batchSize, data.n - start);
    yield {
      logits: tf.tidy(() =>
        forward(spec, ws, tf.tensor2d(data.x.subarray(start * f, (start + b) * f), [b, f])),
      ),
      start,
    };
  }
}

/**
 * Evaluates the model with flat parameters `params` on `data`, in batches, on the active
 * backend. Synchronous: not on webgpu, where reads must be asynchronous (`evaluateAsync`).
 * Throws RangeError/TypeError naming a bad argument.
 */
export function evaluate(
  spec: ModelSpec,
  params: Float32Array,
  data: Examples,
  options: EvaluateOptions = {},
): Evaluation {
  const batchSize = checkEvaluate(spec, params, data, options);
  const C = spec.numClasses;
  const confusion = new Int32Array(C * C);
  const ws = paramTensors(spec, params);
  let lossSum = 0;
  try {
    for (const { logits, start } of batchLogits(spec, ws, data, batchSize)) {
      try {
        lossSum += accumulate(logits, data.y, start, confusion, C);
      } finally {
        logits.dispose();
      }
    }
  } finally {
    tf.dispose(ws);
  }
  return summarize(confusion, lossSum, C);
}

/**
 * `evaluate` on any backend, webgpu included: the logits of each batch are read back with one
 * asynchronous read (`.data()`) on webgpu; elsewhere the same reads as `evaluate`, and the same
 * numbers. Throws RangeError/TypeError naming a bad argument.
 */
export async function evaluateAsync(
  spec: ModelSpec,
  params: Float32Array,
  data: Examples,
  options: EvaluateOptions = {},
): Promise<Evaluation> {
  const batchSize = checkEvaluate(spec, params, data, options);
  const C = spec.numClasses;
  const confusion = new Int32Array(C * C);
  const ws = paramTensors(spec, params);
  let lossSum = 0;
  try {
    for (const { logits, start } of batchLogits(spec, ws, data, batchSize)) {
      try {
        lossSum += await accumulateAsync(logits, data.y, start, confusion, C);
      } finally {
        logits.dispose();
      }
    }
  } finally {
    tf.dispose(ws);
  }
  return summarize(confusion, lossSum, C);
}

function checkEvaluate(
  spec: ModelSpec,
  params: Float32Array,
  data: Examples,
  options: EvaluateOptions,
): number {
  checkParams(spec, params);
  checkExamples(spec, data);
  const batchSize = options.batchSize ?? 1000;
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new RangeError(`batchSize: expected a positive integer, got ${batchSize}`);
  return batchSize;
}
