/**
 * One fused compute shader for the coalition models of a two-layer MLP (webgpu backend; internal
 * to _coalition_gpu.ts, whose module comment defines the coefficient matrix C and the stacks).
 *
 * For a chunk of K coalitions, one invocation per (coalition k, test row r) computes
 *   z_h     = relu?(P₀[r,h] + Σᵢ C[k,i]·Pᵢ[r,h])            h < H   (the first layer, combined)
 *   ℓ_c     = Σ_h z_h·W_S[k][h,c] + b_S[k][c]              c < C   (one FMA chain over h)
 *   correct = [arg-max_c ℓ_c = y_r]  (ties to the lower class, as `accumulate` resolves them)
 *   loss    = logsumexp(ℓ) − ℓ_{y_r}
 * and writes the two numbers; nothing of size K·N·H is ever stored. The tfjs-op path this
 * replaces for this shape wrote the [K, N, H] hidden activations three times (product, bias,
 * relu) and read them back for a batched product with a 10-column output: on lavapipe 71 s of
 * the quickstart's first round went there (docs/performance.md, "GPU: WebGPU").
 *
 * Layouts (row-major, float32 unless said): C [K, n]; Pᵢ stacked as Q [n, H, N] and P₀ as
 * [H, N], so that neighbouring invocations (neighbouring rows r) read neighbouring addresses;
 * W_S [K, H, C]; b_S [K, C]; labels [N] int32. The output is [2, K, N]: correct flags, then
 * losses. n, N, H, C and relu are compiled into the shader (one pipeline per evaluator shape);
 * K·N is a uniform, so the last, shorter chunk reuses the pipeline.
 */
import { type Program, type WebGpuBackendLike, WORKGROUP } from './_wgsl_program.js';
import * as tf from './tf.js';

/** Most classes the shader's logit array holds. */
export const FUSED_MAX_CLASSES = 64;

/** The shape compiled into the shader. */
export interface FusedShape {
  /** Silos (columns of C). */
  readonly n: number;
  /** Test rows. */
  readonly rows: number;
  /** Hidden units of the first layer. */
  readonly hidden: number;
  readonly classes: number;
  /** ReLU after the first layer. */
  readonly relu: boolean;
}

/**
 * The WGSL of one (coalition k, test row r) pair, shared by this shader and the reduced ones
 * (_coalition_wgsl_reduced.ts) so that both compute the same fma chains in the same order: the
 * coalition's first layer P0 + Σᵢ Coef[k,i]·Qᵢ (relu?), its output layer, and leaves in scope
 * `best` (the arg-max), `y` (the label), `top`, `total` and `ly` (the loss is top + log(total) − ly).
 * `membersOnly` skips the silos whose coefficient is 0 (fma(0, q, u) = u for finite q: the same
 * sums). The C logits are separate scalars (no dynamically indexed array: in lavapipe's vectorized
 * invocations that is a gather/scatter through memory for every access).
 */
export function coalitionRowCode(s: FusedShape, membersOnly: boolean): string {
  const { n, rows: N, hidden: H, classes: C } = s;
  const cs = Array.from({ length: C }, (_, c) => c);
  const term = membersOnly
    ? `let ci = Coef[k * ${n} + i];
        if (ci == 0.0) { continue; }
        u = fma(ci, Q[(i * ${H} + h) * ${N} + r], u);`
    : `u = fma(Coef[k * ${n} + i], Q[(i * ${H} + h) * ${N} + r], u);`;
  return `${cs.map((c) => `var l${c} = 0.0;`).join(' ')}
    for (var h = 0; h < ${H}; h++) {
      var u = 0.0;
      for (var i = 0; i < ${n}; i++) {
        ${term}
      }
      var z = P0[h * ${N} + r] + u;
      ${s.relu ? 'z = max(z, 0.0);' : ''}
      let wRow = (k * ${H} + h) * ${C};
      ${cs.map((c) => `l${c} = fma(z, W[wRow + ${c}], l${c});`).join('\n      ')}
    }
    ${cs.map((c) => `l${c} = l${c} + B[k * ${C} + ${c}];`).join('\n    ')}
    var best = 0;
    var top = l0;
    ${cs
      .slice(1)
      .map((c) => `if (l${c} > top) { top = l${c}; best = ${c}; }`)
      .join('\n    ')}
    let y = Y[r];
    var total = 0.0;
    var ly = 0.0;
    ${cs.map((c) => `total = total + exp(l${c} - top); if (y == ${c}) { ly = l${c}; }`).join('\n    ')}`;
}

function shaderCode(s: FusedShape): string {
  const N = s.rows;
  return `
  fn main(index : i32) {
    let kn = uniforms.kn;
    if (index >= kn) { return; }
    let k = index / ${N};
    let r = index - k * ${N};
    ${coalitionRowCode(s, false)}
    result[index] = select(0.0, 1.0, best == y);
    result[kn + index] = top + log(total) - ly;
  }`;
}

/**
 * Queues the fused shader on the active webgpu backend for K coalitions: `coef` [K, n] (the
 * scaled coefficients s(S)·aᵢ), `q` [n, H·N], `p0` [H·N], `w` [K, H·C], `b` [K, C], `labels`
 * [N] int32. Returns [correct, loss], each [K, N] (the caller disposes them; no read here).
 */
export function fusedCoalitionLogits(
  shape: FusedShape,
  K: number,
  coef: tf.Tensor,
  q: tf.Tensor,
  p0: tf.Tensor,
  w: tf.Tensor,
  b: tf.Tensor,
  labels: tf.Tensor,
): [tf.Tensor2D, tf.Tensor2D] {
  if (shape.classes > FUSED_MAX_CLASSES)
    throw new RangeError(
      `classes: the fused coalition shader holds at most ${FUSED_MAX_CLASSES}, got ${shape.classes}`,
    );
  const kn = K * shape.rows;
  const program: Program = {
    outputShape: [2, K, shape.rows],
    shaderKey: `fedscoreCoalitionMlp_${shape.n}_${shape.rows}_${shape.hidden}_${shape.classes}_${shape.relu}`,
    dispatchLayout: { x: [0, 1, 2] },
    dispatch: [Math.ceil(kn / WORKGROUP), 1, 1],
    variableNames: ['Coef', 'Q', 'P0', 'W', 'B', 'Y'],
    workgroupSize: [WORKGROUP, 1, 1],
    uniforms: 'kn : i32,',
    getUserCode: () => shaderCode(shape),
  };
  const backend = tf.backend() as unknown as WebGpuBackendLike;
  const info = backend.runWebGPUProgram(program, [coef, q, p0, w, b, labels], 'float32', [
    { type: 'int32', data: [kn] },
  ]);
  const both = tf.engine().makeTensorFromTensorInfo(info) as tf.Tensor3D;
  try {
    const [correct, loss] = tf.unstack(both, 0) as [tf.Tensor2D, tf.Tensor2D];
    return [correct, loss];
  } finally {
    both.dispose();
  }
}
