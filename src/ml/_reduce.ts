/**
 * Reductions shared by evaluate.ts and coalition.ts (internal): logits → loss sum and
 * confusion matrix → `Evaluation`.
 */

import { heapView, nativeReduceLogits } from './_blas_kernels.js';
import { onWebGpu } from './_webgpu.js';
import type { Evaluation } from './evaluate.js';
import type * as tf from './tf.js';

/**
 * Accumulates one batch of logits into a confusion matrix and returns the batch's summed
 * cross-entropy. `logits` is [b, C]. The logits are read back once and reduced in JS in float64
 * (log-sum-exp with the max subtracted; arg-max with ties to the lower class): on wasm that is
 * cheaper than the half-dozen small kernels of logSoftmax/argMax, and identical for every
 * caller, so combined and naive coalition evaluation reduce the same way. With the native
 * addon the same loop runs in C on the logits in place (glibc's exp and log instead of V8's: the
 * loss may differ in the last bits, arg-maxes and counts do not).
 */
export function accumulate(
  logits: tf.Tensor2D,
  labels: ArrayLike<number>,
  labelOffset: number,
  confusion: Int32Array,
  numClasses: number,
): number {
  const rows = logits.shape[0];
  const C = numClasses;
  const native = labels instanceof Int32Array ? nativeReduceLogits() : undefined;
  if (native) {
    const view = heapView(logits) ?? (logits.dataSync() as Float32Array);
    return native(rows, C, view, labels as Int32Array, labelOffset, confusion);
  }
  return accumulateValues(logits.dataSync() as Float32Array, rows, labels, labelOffset, confusion, C);
}

/**
 * `accumulate` with an asynchronous read of the logits, for backends where synchronous reads are
 * unavailable (webgpu: `dataSync` throws there); on other backends it is `accumulate`.
 */
export async function accumulateAsync(
  logits: tf.Tensor2D,
  labels: ArrayLike<number>,
  labelOffset: number,
  confusion: Int32Array,
  numClasses: number,
): Promise<number> {
  if (!onWebGpu()) return accumulate(logits, labels, labelOffset, confusion, numClasses);
  const z = (await logits.data()) as Float32Array;
  return accumulateValues(z, logits.shape[0], labels, labelOffset, confusion, numClasses);
}

/** The JavaScript reduction of `accumulate` on logits already read back (row-major [rows, C]). */
function accumulateValues(
  z: Float32Array,
  rows: number,
  labels: ArrayLike<number>,
  labelOffset: number,
  confusion: Int32Array,
  C: number,
): number {
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
    perClassAccuracy: diagonalOverRows(confusion, numClasses),
  };
}

/** confusion[t,t] / Σ_p confusion[t,p] per class t (NaN for an empty row). */
export function diagonalOverRows(confusion: Int32Array, numClasses: number): Float64Array {
  const out = new Float64Array(numClasses);
  for (let t = 0; t < numClasses; t++) {
    let row = 0;
    for (let p = 0; p < numClasses; p++) row += confusion[t * numClasses + p]!;
    out[t] = row === 0 ? Number.NaN : confusion[t * numClasses + t]! / row;
  }
  return out;
}
