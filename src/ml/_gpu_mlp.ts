/**
 * The kernels of the fused training step of a dense network (the built-in `mlp`, or any spec of
 * dense layers after an optional flatten; webgpu, internal to _gpu_mlp_silos.ts, which runs
 * them). For L dense layers a step is 2L dispatches and no readback (the default MLP 784-200-10:
 * 4), whatever the number of silos K it covers:
 *   forward ℓ < L−1   A_{ℓ+1}[r,j] = relu?(Σᵢ A_ℓ[r,i]·W_ℓ[i,j] + b_ℓ[j])           one dispatch each
 *   last layer + loss  z = A_{L−1}W + b; p = softmax(z); D_L = (p − onehot(y)) / b;
 *                      rowLoss[r] = logsumexp(z_r) − z_r[y_r]                      one dispatch
 *   backward ℓ ≥ 1     D_ℓ[r,i] = (Σⱼ D_{ℓ+1}[r,j]·W_ℓ[i,j]) · [A_ℓ[r,i] > 0]         one dispatch each
 *   optimizer          ∂W_ℓ[i,j] = Σ_r A_ℓ[r,i]·D_{ℓ+1}[r,j], ∂b_ℓ[j] = Σ_r D_{ℓ+1}[r,j], then
 *                      _gpu_optimizer.ts's update of every parameter, in place       one dispatch
 * (the gradients of softmax cross-entropy with the mean over the batch, as
 * `softmaxCrossEntropy` in _blas_kernels.ts; ReLU's derivative is 0 at 0, as tfjs's). The
 * weight gradients are never stored: each optimizer invocation sums its own over the batch.
 *
 * K silos in one dispatch: every buffer is K silos' blocks stacked, and every invocation index is
 * silo s = index / (invocations per silo) and a local index within it, so the arithmetic of one
 * silo is the same expressions in the same order whatever K is and wherever the silo sits:
 *  - the flat state (θ, m, v, the pass losses; _gpu_optimizer.ts's layout) of silo s at s·Z;
 *  - the examples X and labels Y of all silos, rows concatenated; the permutation Perm holds
 *    global row numbers (silo s's rows are offset by the rows before it);
 *  - activations A_ℓ and gradients D_ℓ: [K·B × width], silo s's rows from s·B (B the batch size);
 *  - Q, int32 [K × 4], uploaded per step: silo s's (offset of its batch in Perm, b, pass, 0);
 *    b = 0 makes the silo idle in that step (every invocation of it returns at once; the
 *    optimizer leaves its state untouched).
 * Activations are [B × width] per silo whatever the batch (b ≤ B is in Q), so a short last batch
 * reuses the pipelines.
 *
 * A WebGPU shader binds at most 8 storage buffers: the optimizer dispatch takes Q and the layers'
 * inputs and output gradients, X, Perm and D₁ for the first layer and A_ℓ, D_{ℓ+1} for each
 * other, 6 buffers at most: the first two layers in one dispatch, up to three per dispatch beyond.
 * So a step is 2L dispatches for 1 or 2 layers (the built-in `mlp` default has 2) and 2L + 1 for
 * 3 to 5 (before Q took a binding, 3 layers fitted one optimizer dispatch).
 */
import {
  OPTIMIZER_UNIFORMS,
  type OptimizerRule,
  type StateLayout,
  updateFunction,
} from './_gpu_optimizer.js';
import { bindingGroups, type WgslProgram } from './_wgsl_program.js';
import { type ModelSpec, paramLayout } from './models.js';

/** Most classes the loss kernel holds (its logits are unrolled scalars, as in _coalition_wgsl.ts). */
export const FUSED_MLP_MAX_CLASSES = 64;

/** Int32 values per silo in the step buffer Q: (Perm offset of the batch, b, pass, unused). */
export const Q_WIDTH = 4;

export interface Dense {
  readonly inputs: number;
  readonly units: number;
  readonly relu: boolean;
  readonly w: number;
  readonly b: number;
}

/** The dense layers of `spec` when the fused step applies to it, else undefined. */
export function fusedMlpLayers(spec: ModelSpec): Dense[] | undefined {
  const dense = spec.layers.filter((l) => l.kind === 'dense');
  const ok =
    dense.length > 0 &&
    spec.layers.every((l, i) => l.kind === 'dense' || (l.kind === 'flatten' && i === 0)) &&
    !dense.at(-1)!.relu &&
    spec.numClasses <= FUSED_MLP_MAX_CLASSES;
  if (!ok) return undefined;
  const layout = paramLayout(spec);
  return dense.map((l, k) => ({
    inputs: l.inputs,
    units: l.units,
    relu: l.relu,
    w: layout[2 * k]!.offset,
    b: layout[2 * k + 1]!.offset,
  }));
}

/**
 * The sizes of a call: features F and batch B are compiled in; silos K and the floats of a
 * silo's state Z are uniforms, so one set of pipelines serves any number of silos (a pipeline
 * takes seconds to compile on lavapipe).
 */
export interface SiloShape {
  readonly F: number;
  readonly B: number;
  readonly K: number;
  readonly Z: number;
}

/** The kernels' uniforms of their own: K and Z (`SiloShape`). */
const SILO_UNIFORMS = 'silos : i32, stride : i32,';

/** The values `SILO_UNIFORMS` declares. */
export const siloUniforms = (K: number, Z: number) => [
  { type: 'int32' as const, data: [K] },
  { type: 'int32' as const, data: [Z] },
];

const shapeKey = (g: SiloShape) => `${g.F}_${g.B}`;

/**
 * The start of every kernel: which silo the invocation works for (`si`, `li`), its batch
 * (`start`, `b`), its first activation row `sRow` and its state's offset `th`.
 */
const silo = (g: SiloShape, per: number) => `
    let si = index / ${per};
    if (si >= uniforms.silos) { return; }
    let li = index - si * ${per};
    let start = Q[si * ${Q_WIDTH}];
    let b = Q[si * ${Q_WIDTH} + 1];
    let sRow = si * ${g.B};
    let th = si * uniforms.stride;`;

/** How layer ℓ's input row r is addressed: the examples through the permutation, or A_ℓ. */
const rowOf = (l: number, F: number, inW: number, r = 'r') =>
  l === 0 ? `Perm[start + ${r}] * ${F}` : `(sRow + ${r}) * ${inW}`;
const inputName = (l: number) => (l === 0 ? 'X' : `A${l}`);

/** Register tile of the two products that dominate a step (outputs per invocation: T × T). */
const T = 4;
const ts = Array.from({ length: T }, (_, k) => k);
const tiles = (n: number) => Math.ceil(n / T);

/**
 * Forward of a hidden layer, a T×T tile of A_{ℓ+1} (rows × units) per invocation: per input i,
 * T + T loads feed T² FMAs (a per-output dot product loads twice per FMA).
 */
function forwardProgram(l: number, d: Dense, g: SiloShape): WgslProgram {
  const U = d.units;
  const per = tiles(g.B) * tiles(U);
  return {
    key: `mlpFwd_${l}_${shapeKey(g)}_${d.inputs}_${U}_${d.w}_${d.b}_${d.relu}`,
    invocations: g.K * per,
    uniforms: SILO_UNIFORMS,
    code: `
  fn main(index : i32) {${silo(g, per)}
    if (li >= ((b + ${T - 1}) / ${T}) * ${tiles(U)}) { return; }
    let rb = li / ${tiles(U)};
    let rBase = rb * ${T};
    let jBase = (li - rb * ${tiles(U)}) * ${T};
    ${ts.map((a) => `let row${a} = ${rowOf(l, g.F, d.inputs, `min(rBase + ${a}, b - 1)`)};`).join('\n    ')}
    ${ts.map((c) => `let j${c} = min(jBase + ${c}, ${U - 1});`).join(' ')}
    ${ts.flatMap((a) => ts.map((c) => `var acc${a}${c} = 0.0;`)).join(' ')}
    for (var i = 0; i < ${d.inputs}; i++) {
      ${ts.map((a) => `let x${a} = ${inputName(l)}[row${a} + i];`).join(' ')}
      let w = th + ${d.w} + i * ${U};
      ${ts.map((c) => `let w${c} = S[w + j${c}];`).join(' ')}
      ${ts.flatMap((a) => ts.map((c) => `acc${a}${c} = fma(x${a}, w${c}, acc${a}${c});`)).join('\n      ')}
    }
    ${ts
      .flatMap((a) =>
        ts.map(
          (c) =>
            `if (rBase + ${a} < b && jBase + ${c} < ${U}) { let z = acc${a}${c} + S[th + ${d.b} + j${c}]; result[(sRow + rBase + ${a}) * ${U} + j${c}] = ${d.relu ? 'max(z, 0.0)' : 'z'}; }`,
        ),
      )
      .join('\n    ')}
  }`,
  };
}

/** The last layer, softmax cross-entropy and its gradient: output D_L [K·B·C] then rowLoss [K·B]. */
function lossProgram(l: number, d: Dense, g: SiloShape): WgslProgram {
  const C = d.units;
  const cs = Array.from({ length: C }, (_, c) => c);
  return {
    key: `mlpLoss_${l}_${shapeKey(g)}_${d.inputs}_${C}_${d.w}_${d.b}`,
    invocations: g.K * g.B,
    uniforms: SILO_UNIFORMS,
    code: `
  fn main(index : i32) {${silo(g, g.B)}
    let r = li;
    if (r >= b) { return; }
    let row = ${rowOf(l, g.F, d.inputs)};
    ${cs.map((c) => `var l${c} = 0.0;`).join(' ')}
    for (var h = 0; h < ${d.inputs}; h++) {
      let a = ${inputName(l)}[row + h];
      let w = th + ${d.w} + h * ${C};
      ${cs.map((c) => `l${c} = fma(a, S[w + ${c}], l${c});`).join('\n      ')}
    }
    ${cs.map((c) => `l${c} = l${c} + S[th + ${d.b + c}];`).join('\n    ')}
    var top = l0;
    ${cs
      .slice(1)
      .map((c) => `top = max(top, l${c});`)
      .join(' ')}
    var total = 0.0;
    ${cs.map((c) => `total = total + exp(l${c} - top);`).join(' ')}
    let lse = top + log(total);
    let y = Y[Perm[start + r]];
    var ly = 0.0;
    let inv = 1.0 / f32(b);
    ${cs
      .map(
        (c) =>
          `if (y == ${c}) { ly = l${c}; } result[(sRow + r) * ${C} + ${c}] = (exp(l${c} - lse) - select(0.0, 1.0, y == ${c})) * inv;`,
      )
      .join('\n    ')}
    result[uniforms.silos * ${g.B * C} + sRow + r] = lse - ly;
  }`,
  };
}

/** D_ℓ from D_{ℓ+1} through W_ℓ and layer ℓ−1's ReLU (A_ℓ > 0). */
function backwardProgram(l: number, d: Dense, reluBelow: boolean, g: SiloShape): WgslProgram {
  const [In, Out] = [d.inputs, d.units];
  return {
    key: `mlpBwd_${l}_${shapeKey(g)}_${In}_${Out}_${d.w}_${reluBelow}`,
    invocations: g.K * g.B * In,
    uniforms: SILO_UNIFORMS,
    code: `
  fn main(index : i32) {${silo(g, g.B * In)}
    if (li >= b * ${In}) { return; }
    let r = li / ${In};
    let i = li - r * ${In};
    var acc = 0.0;
    for (var j = 0; j < ${Out}; j++) {
      acc = fma(D${l + 1}[(sRow + r) * ${Out} + j], S[th + ${d.w} + i * ${Out} + j], acc);
    }
    result[sRow * ${In} + li] = ${reluBelow ? `select(0.0, acc, A${l}[sRow * ${In} + li] > 0.0)` : 'acc'};
  }`,
  };
}

/** The optimizer over the parameters of `group` (layer indices), with their weight gradients. */
function optimizerProgram(
  group: readonly number[],
  layers: readonly Dense[],
  g: SiloShape,
  rule: OptimizerRule,
  st: StateLayout,
): WgslProgram {
  const L = layers.length;
  const C = layers[L - 1]!.units;
  let cum = 0;
  const branches: string[] = [];
  for (const l of group) {
    const d = layers[l]!;
    const [In, Out] = [d.inputs, d.units];
    const wAt = cum;
    cum += tiles(In) * tiles(Out);
    const bAt = cum;
    cum += Out;
    branches.push(`if (li < ${bAt}) {
      let q = li - ${wAt};
      let ib = q / ${tiles(Out)};
      let iBase = ib * ${T};
      let jBase = (q - ib * ${tiles(Out)}) * ${T};
      ${ts.map((a) => `let i${a} = min(iBase + ${a}, ${In - 1});`).join(' ')}
      ${ts.map((c) => `let j${c} = min(jBase + ${c}, ${Out - 1});`).join(' ')}
      ${ts.flatMap((a) => ts.map((c) => `var g${a}${c} = 0.0;`)).join(' ')}
      for (var r = 0; r < b; r++) {
        let row = ${rowOf(l, g.F, In)};
        ${ts.map((a) => `let a${a} = ${inputName(l)}[row + i${a}];`).join(' ')}
        ${ts.map((c) => `let d${c} = D${l + 1}[(sRow + r) * ${Out} + j${c}];`).join(' ')}
        ${ts.flatMap((a) => ts.map((c) => `g${a}${c} = fma(a${a}, d${c}, g${a}${c});`)).join('\n        ')}
      }
      var gs = array<f32, ${T * T}>(${ts.flatMap((a) => ts.map((c) => `g${a}${c}`)).join(', ')});
      for (var k = 0; k < ${T * T}; k++) {
        let i = iBase + k / ${T};
        let j = jBase + k % ${T};
        if (i < ${In} && j < ${Out}) { update(th + ${d.w} + i * ${Out} + j, gs[k]); }
      }
    } else if (li < ${cum}) {
      let j = li - ${bAt};
      var g = 0.0;
      for (var r = 0; r < b; r++) { g = g + D${l + 1}[(sRow + r) * ${Out} + j]; }
      update(th + ${d.b} + j, g);
    }`);
  }
  const lossHere = group.includes(L - 1);
  return {
    key: `mlpOpt_${rule.optimizer}_${st.m}_${st.v}_${st.loss}_${shapeKey(g)}_${group.join('-')}_${layers.map((d) => `${d.inputs}x${d.units}@${d.w}`).join(',')}`,
    invocations: g.K * cum,
    uniforms: `${OPTIMIZER_UNIFORMS} ${SILO_UNIFORMS}`,
    code: `${updateFunction(rule, st)}
  fn main(index : i32) {${silo(g, cum)}
    if (b == 0) { return; }
    ${
      lossHere
        ? `if (li == 0) {
      let slot = th + ${st.loss} + Q[si * ${Q_WIDTH} + 2];
      var sum = 0.0;
      for (var r = 0; r < b; r++) { sum = sum + D${L}[uniforms.silos * ${g.B * C} + sRow + r]; }
      result[slot] = result[slot] + sum;
    }`
        : ''
    }
    ${branches.join(' else ')}
  }`,
  };
}

/** Layer groups for the optimizer: each binds ≤ 6 inputs besides Q (its layers' inputs and gradients). */
function optimizerGroups(L: number): number[][] {
  return bindingGroups(L, (l) => (l === 0 ? 3 : 2), 6); // X and Perm, or A_ℓ; and D_{ℓ+1}
}

/** Every program of a step for `layers` on K silos (built once per training call). */
export interface MlpStepPrograms {
  readonly forwards: readonly WgslProgram[];
  readonly loss: WgslProgram;
  /** Index ℓ ≥ 1: the backward to layer ℓ's input. */
  readonly backwards: readonly (WgslProgram | undefined)[];
  readonly groups: readonly (readonly number[])[];
  readonly optimizers: readonly WgslProgram[];
}

export function mlpStepPrograms(
  layers: readonly Dense[],
  g: SiloShape,
  rule: OptimizerRule,
  st: StateLayout,
): MlpStepPrograms {
  const L = layers.length;
  const groups = optimizerGroups(L);
  return {
    forwards: layers.slice(0, -1).map((d, l) => forwardProgram(l, d, g)),
    loss: lossProgram(L - 1, layers[L - 1]!, g),
    backwards: layers.map((d, l) => (l === 0 ? undefined : backwardProgram(l, d, layers[l - 1]!.relu, g))),
    groups,
    optimizers: groups.map((grp) => optimizerProgram(grp, layers, g, rule, st)),
  };
}
