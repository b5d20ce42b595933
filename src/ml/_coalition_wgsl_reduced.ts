/**
 * The coalition table's shaders with the reduction on the device (webgpu backend; issue 36): the
 * two-layer MLP's coalition models, as _coalition_wgsl.ts's fused shader computes them, reduced
 * to correct counts per class and loss sums before anything is read. Internal to
 * _coalition_gpu.ts, whose module comment defines the coefficient matrix C and the stacks.
 *
 * Two dispatches per chunk of K coalitions (the fused path took five for the same: its shader,
 * two slices of its [2, K, N] output, the count product and the loss sum):
 *  1. `rows`: one workgroup of 64 invocations per (coalition k, block of 64 test rows); each
 *     invocation computes its row's logits with the fused shader's arithmetic, operation for
 *     operation (the same fma chains in the same order), except that silos outside the coalition
 *     are skipped: their coefficient is 0, and fma(0, q, u) = u for finite q and u ≠ −0, which u
 *     never is (it starts at +0, and an fma whose result is zero gives +0 in round-to-nearest),
 *     so the chain gives the same bits in |S| terms instead of n. The workgroup then counts its
 *     correct rows per class (workgroup atomics, exact) and sums its rows' losses (a fixed tree
 *     over the 64 lanes, rows past N adding +0), and writes C + 1 numbers: [K, B, C + 1] for
 *     B = ⌈N/64⌉ blocks. k is the same for the whole workgroup, so the skipped silos are skipped by
 *     every lane alike (no divergence).
 *  2. `blocks`: one invocation per (k, column) sums the B blocks in order: [K, C + 1], the one
 *     buffer read back per chunk (counts as exact integers in float32, then the loss sum).
 * Nothing of size K·N is written (the fused path wrote and re-read the [2, K, N] flags and
 * losses).
 *
 * So the counts (accuracy, per-class accuracy) equal the fused shader's bit for bit (same arg-max
 * flags, integer sums); the loss sums are the same float32 row losses summed in another order
 * (a tree per block, then the blocks in order; the fused path's tfjs sum is another float32
 * order), within 2(N − 1)·u·Σ|ℓ_r| of each other, u = 2⁻²⁴ (test/ml/_coalition_wgsl_reduced.test.ts).
 *
 * Layouts as in _coalition_wgsl.ts: C [K, n]; Q [n, H, N]; P₀ [H, N]; W_S [K, H, C]; b_S [K, C];
 * labels [N] int32. n, N, H, C and relu are compiled in; K is a uniform.
 */
import { coalitionRowCode } from './_coalition_wgsl.js';
import { runWgsl, WORKGROUP } from './_wgsl_program.js';
import type * as tf from './tf.js';

/** Most classes the shaders hold (C logits per invocation, C counters per workgroup). */
export const REDUCED_MAX_CLASSES = 16;

/** The shape compiled into the shaders. */
export interface ReducedShape {
  readonly n: number;
  readonly rows: number;
  readonly hidden: number;
  readonly classes: number;
  readonly relu: boolean;
}

/** Blocks of test rows (one workgroup each per coalition). */
export const rowBlocks = (rows: number): number => Math.max(1, Math.ceil(rows / WORKGROUP));

/** WGSL of the first dispatch (exported for the tests' structural checks). */
export function rowsShaderCode(s: ReducedShape): string {
  const { rows: N, classes: C } = s;
  const G = WORKGROUP;
  const B = rowBlocks(N);
  return `
  var<workgroup> cnt : array<atomic<u32>, ${C}>;
  var<workgroup> part : array<f32, ${G}>;

  fn main(index : i32) {
    let lane = i32(localIndex);
    let g = index / ${G};
    let kk = uniforms.k;
    let k = min(g / ${B}, kk - 1);
    let blk = g - (g / ${B}) * ${B};
    let r0 = blk * ${G} + lane;
    let valid = r0 < ${N} && g < kk * ${B};
    let r = min(r0, ${N - 1});
    if (lane < ${C}) { atomicStore(&cnt[lane], 0u); }
    workgroupBarrier();
    ${coalitionRowCode(s, true)}
    if (valid && best == y) { atomicAdd(&cnt[y], 1u); }
    part[lane] = select(0.0, top + log(total) - ly, valid);
    workgroupBarrier();
    for (var w = ${G / 2}; w > 0; w = w / 2) {
      if (lane < w) { part[lane] = part[lane] + part[lane + w]; }
      workgroupBarrier();
    }
    if (g < kk * ${B} && lane <= ${C}) {
      var v = 0.0;
      if (lane < ${C}) { v = f32(atomicLoad(&cnt[lane])); } else { v = part[0]; }
      result[g * ${C + 1} + lane] = v;
    }
  }`;
}

/** WGSL of the second dispatch: the blocks of each (coalition, column) summed in order. */
export function blocksShaderCode(s: ReducedShape): string {
  const B = rowBlocks(s.rows);
  const C1 = s.classes + 1;
  return `
  fn main(index : i32) {
    if (index >= uniforms.k * ${C1}) { return; }
    let k = index / ${C1};
    let c = index - k * ${C1};
    var v = 0.0;
    for (var b = 0; b < ${B}; b++) { v = v + Part[(k * ${B} + b) * ${C1} + c]; }
    result[index] = v;
  }`;
}

/**
 * Queues both dispatches for K coalitions (inputs as `fusedCoalitionLogits` takes them) and
 * returns [K, C + 1]: correct counts per class (exact integers in float32), then the summed loss.
 * The caller disposes it; nothing is read here. Through runWgsl, so a shader that fails to
 * compile is reported by `wgslErrors` instead of running as an invalid pipeline.
 */
export function reducedCoalitionCounts(
  shape: ReducedShape,
  K: number,
  coef: tf.Tensor,
  q: tf.Tensor,
  p0: tf.Tensor,
  w: tf.Tensor,
  b: tf.Tensor,
  labels: tf.Tensor,
): tf.Tensor2D {
  if (shape.classes > REDUCED_MAX_CLASSES)
    throw new RangeError(
      `classes: the reduced coalition shaders hold at most ${REDUCED_MAX_CLASSES}, got ${shape.classes}`,
    );
  const B = rowBlocks(shape.rows);
  const C1 = shape.classes + 1;
  const key = `${shape.n}_${shape.rows}_${shape.hidden}_${shape.classes}_${shape.relu}`;
  const k = [{ type: 'int32' as const, data: [K] }];
  const part = runWgsl(
    {
      key: `coalitionRows_${key}`,
      code: rowsShaderCode(shape),
      invocations: K * B * WORKGROUP,
      uniforms: 'k : i32,',
    },
    { Coef: coef, Q: q, P0: p0, W: w, B: b, Y: labels },
    k,
    { size: K * B * C1 },
  );
  try {
    const out = runWgsl(
      {
        key: `coalitionBlocks_${key}`,
        code: blocksShaderCode(shape),
        invocations: K * C1,
        uniforms: 'k : i32,',
      },
      { Part: part },
      k,
      { size: K * C1 },
    );
    try {
      return out.reshape([K, C1]);
    } finally {
      out.dispose();
    }
  } finally {
    part.dispose();
  }
}
