/**
 * Softmax cross-entropy (mean over the batch) and its gradient as hand-written WGSL, for the
 * generic GPU training path (webgpu; internal to _gpu_train.ts). tfjs's ops take ~15 dispatches
 * for the loss and its gradient (log-softmax, the one-hot labels, the product, sums, mean, and the
 * same backwards); here they are three, with the labels read as indices (no one-hot tensor):
 *   1. per row r: p = softmax(z_r), G[r,c] = (p_c − [c = y_r]) / b, rowLoss[r] = logsumexp(z_r) − z_r[y_r]
 *   2. the loss: Σ_r rowLoss[r] / b
 *   3. backward: dL/dz = G · dy (dy = 1 for the loss itself, as tfjs's gradient passes it)
 * The same quantities as `softmaxCrossEntropy` (_blas_kernels.ts) computes with tfjs ops, summed
 * in another order (float32 rounding only).
 */
import { runWgsl, type WgslProgram } from './_wgsl_program.js';
import * as tf from './tf.js';

function rowsProgram(C: number): WgslProgram {
  return {
    key: `xentRows_${C}`,
    invocations: 0,
    uniforms: 'b : i32,',
    code: `
  fn main(r : i32) {
    if (r >= uniforms.b) { return; }
    var top = Z[r * ${C}];
    for (var c = 1; c < ${C}; c++) { top = max(top, Z[r * ${C} + c]); }
    var total = 0.0;
    for (var c = 0; c < ${C}; c++) { total = total + exp(Z[r * ${C} + c] - top); }
    let lse = top + log(total);
    let y = Y[r];
    let inv = 1.0 / f32(uniforms.b);
    for (var c = 0; c < ${C}; c++) {
      result[r * ${C} + c] = (exp(Z[r * ${C} + c] - lse) - select(0.0, 1.0, y == c)) * inv;
    }
    result[uniforms.b * ${C} + r] = lse - Z[r * ${C} + y];
  }`,
  };
}

function meanProgram(C: number): WgslProgram {
  return {
    key: `xentMean_${C}`,
    invocations: 1,
    uniforms: 'b : i32,',
    code: `
  fn main(index : i32) {
    if (index > 0) { return; }
    var sum = 0.0;
    for (var r = 0; r < uniforms.b; r++) { sum = sum + G[uniforms.b * ${C} + r]; }
    result[0] = sum / f32(uniforms.b);
  }`,
  };
}

function gradProgram(C: number): WgslProgram {
  return {
    key: `xentGrad_${C}`,
    invocations: 0,
    uniforms: 'b : i32,',
    code: `
  fn main(index : i32) {
    if (index >= uniforms.b * ${C}) { return; }
    result[index] = G[index] * Dy[0];
  }`,
  };
}

/**
 * The mean softmax cross-entropy of `logits` [b, C] against the int32 labels `y` [b], with its
 * gradient (tfjs's `customGrad`: `tf.valueAndGrads` differentiates through it). Call inside
 * tf.tidy.
 */
export function fusedSoftmaxCrossEntropy(logits: tf.Tensor2D, y: tf.Tensor1D): tf.Scalar {
  const [b, C] = [logits.shape[0]!, logits.shape[1]!];
  const uniforms = [{ type: 'int32' as const, data: [b] }];
  const loss = (z: tf.Tensor, save: tf.GradSaveFunc) => {
    const rows = runWgsl({ ...rowsProgram(C), invocations: b }, { Z: z, Y: y }, uniforms, {
      size: b * C + b,
    });
    save([rows]);
    const value = runWgsl(meanProgram(C), { G: rows }, uniforms, { size: 1 }).reshape([]);
    return {
      value,
      gradFunc: (dy: tf.Tensor, saved: tf.Tensor[]) =>
        runWgsl({ ...gradProgram(C), invocations: b * C }, { G: saved[0]!, Dy: dy }, uniforms, {
          size: b * C,
        }).reshape([b, C]),
    };
  };
  const f = tf.customGrad(loss as unknown as Parameters<typeof tf.customGrad>[0]);
  return f(logits) as tf.Scalar;
}
