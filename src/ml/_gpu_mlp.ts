/**
 * The fused training step of a dense network (the built-in `mlp`, or any spec of dense layers
 * after an optional flatten; webgpu, internal to _gpu_train.ts). For L dense layers a step is
 * 2L dispatches and no readback (the default MLP 784-200-10: 4):
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
 * Minibatches are gathered on the device: the examples and labels are uploaded once per call,
 * the pass's permutation once per pass, and each step passes only (start, b) as uniforms; the
 * first layer reads X[Perm[start + r]] directly. θ, m, v and the per-pass loss sums are the flat
 * state of _gpu_optimizer.ts; the loss is added by the optimizer dispatch and read once per pass.
 * Activations are [batchSize × width] buffers whatever the batch (b ≤ batchSize is a uniform), so
 * a short last batch reuses the pipelines.
 *
 * A WebGPU shader binds at most 8 storage buffers: the optimizer dispatch takes the layers'
 * inputs and output gradients for up to 3 layers at once, and one dispatch per group of layers
 * beyond (never on the built-in models, whose `mlp` default has 2 layers).
 */
import { runBatches } from './_batches.js';
import {
  OPTIMIZER_UNIFORMS,
  optimizerUniforms,
  readDelta,
  readPassLoss,
  type StateLayout,
  stateLayout,
  updateFunction,
} from './_gpu_optimizer.js';
import type { GpuTrainPlan, GpuTrainResult } from './_gpu_plan.js';
import { runWgsl, type WgslProgram } from './_wgsl_program.js';
import { type Examples, type ModelSpec, paramLayout } from './models.js';
import * as tf from './tf.js';

/** Most classes the loss kernel holds (its logits are unrolled scalars, as in _coalition_wgsl.ts). */
export const FUSED_MLP_MAX_CLASSES = 64;

interface Dense {
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

/** How layer ℓ's input row r is addressed: the examples through the permutation, or A_ℓ. */
const rowOf = (l: number, F: number, inW: number, r = 'r') =>
  l === 0 ? `Perm[uniforms.start + ${r}] * ${F}` : `${r} * ${inW}`;
const inputName = (l: number) => (l === 0 ? 'X' : `A${l}`);

/** Register tile of the two products that dominate a step (outputs per invocation: T × T). */
const T = 4;
const ts = Array.from({ length: T }, (_, k) => k);
const tiles = (n: number) => Math.ceil(n / T);

/**
 * Forward of a hidden layer, a T×T tile of A_{ℓ+1} (rows × units) per invocation: per input i,
 * T + T loads feed T² FMAs (a per-output dot product loads twice per FMA).
 */
function forwardProgram(l: number, d: Dense, F: number): WgslProgram {
  const U = d.units;
  return {
    key: `mlpFwd_${l}_${F}_${d.inputs}_${U}_${d.w}_${d.b}_${d.relu}`,
    invocations: 0,
    uniforms: 'start : i32, b : i32,',
    code: `
  fn main(index : i32) {
    if (index >= ((uniforms.b + ${T - 1}) / ${T}) * ${tiles(U)}) { return; }
    let rb = index / ${tiles(U)};
    let rBase = rb * ${T};
    let jBase = (index - rb * ${tiles(U)}) * ${T};
    ${ts.map((a) => `let row${a} = ${rowOf(l, F, d.inputs, `min(rBase + ${a}, uniforms.b - 1)`)};`).join('\n    ')}
    ${ts.map((c) => `let j${c} = min(jBase + ${c}, ${U - 1});`).join(' ')}
    ${ts.flatMap((a) => ts.map((c) => `var acc${a}${c} = 0.0;`)).join(' ')}
    for (var i = 0; i < ${d.inputs}; i++) {
      ${ts.map((a) => `let x${a} = ${inputName(l)}[row${a} + i];`).join(' ')}
      let w = ${d.w} + i * ${U};
      ${ts.map((c) => `let w${c} = S[w + j${c}];`).join(' ')}
      ${ts.flatMap((a) => ts.map((c) => `acc${a}${c} = fma(x${a}, w${c}, acc${a}${c});`)).join('\n      ')}
    }
    ${ts
      .flatMap((a) =>
        ts.map(
          (c) =>
            `if (rBase + ${a} < uniforms.b && jBase + ${c} < ${U}) { let z = acc${a}${c} + S[${d.b} + j${c}]; result[(rBase + ${a}) * ${U} + j${c}] = ${d.relu ? 'max(z, 0.0)' : 'z'}; }`,
        ),
      )
      .join('\n    ')}
  }`,
  };
}

/** The last layer, softmax cross-entropy and its gradient: output D_L [B·C] then rowLoss [B]. */
function lossProgram(l: number, d: Dense, F: number, B: number): WgslProgram {
  const C = d.units;
  const cs = Array.from({ length: C }, (_, c) => c);
  return {
    key: `mlpLoss_${l}_${F}_${d.inputs}_${C}_${d.w}_${d.b}_${B}`,
    invocations: 0,
    uniforms: 'start : i32, b : i32,',
    code: `
  fn main(r : i32) {
    if (r >= uniforms.b) { return; }
    let row = ${rowOf(l, F, d.inputs)};
    ${cs.map((c) => `var l${c} = 0.0;`).join(' ')}
    for (var h = 0; h < ${d.inputs}; h++) {
      let a = ${inputName(l)}[row + h];
      let w = ${d.w} + h * ${C};
      ${cs.map((c) => `l${c} = fma(a, S[w + ${c}], l${c});`).join('\n      ')}
    }
    ${cs.map((c) => `l${c} = l${c} + S[${d.b + c}];`).join('\n    ')}
    var top = l0;
    ${cs
      .slice(1)
      .map((c) => `top = max(top, l${c});`)
      .join(' ')}
    var total = 0.0;
    ${cs.map((c) => `total = total + exp(l${c} - top);`).join(' ')}
    let lse = top + log(total);
    let y = Y[Perm[uniforms.start + r]];
    var ly = 0.0;
    let inv = 1.0 / f32(uniforms.b);
    ${cs
      .map(
        (c) =>
          `if (y == ${c}) { ly = l${c}; } result[r * ${C} + ${c}] = (exp(l${c} - lse) - select(0.0, 1.0, y == ${c})) * inv;`,
      )
      .join('\n    ')}
    result[${B * C} + r] = lse - ly;
  }`,
  };
}

/** D_ℓ from D_{ℓ+1} through W_ℓ and layer ℓ−1's ReLU (A_ℓ > 0). */
function backwardProgram(l: number, d: Dense, reluBelow: boolean): WgslProgram {
  const [In, Out] = [d.inputs, d.units];
  return {
    key: `mlpBwd_${l}_${In}_${Out}_${d.w}_${reluBelow}`,
    invocations: 0,
    uniforms: 'start : i32, b : i32,',
    code: `
  fn main(index : i32) {
    if (index >= uniforms.b * ${In}) { return; }
    let r = index / ${In};
    let i = index - r * ${In};
    var acc = 0.0;
    for (var j = 0; j < ${Out}; j++) {
      acc = fma(D${l + 1}[r * ${Out} + j], S[${d.w} + i * ${Out} + j], acc);
    }
    result[index] = ${reluBelow ? `select(0.0, acc, A${l}[index] > 0.0)` : 'acc'};
  }`,
  };
}

/** The optimizer over the parameters of `group` (layer indices), with their weight gradients. */
function optimizerProgram(
  group: readonly number[],
  layers: readonly Dense[],
  F: number,
  B: number,
  plan: GpuTrainPlan,
  s: StateLayout,
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
    branches.push(`if (index < ${bAt}) {
      let q = index - ${wAt};
      let ib = q / ${tiles(Out)};
      let iBase = ib * ${T};
      let jBase = (q - ib * ${tiles(Out)}) * ${T};
      ${ts.map((a) => `let i${a} = min(iBase + ${a}, ${In - 1});`).join(' ')}
      ${ts.map((c) => `let j${c} = min(jBase + ${c}, ${Out - 1});`).join(' ')}
      ${ts.flatMap((a) => ts.map((c) => `var g${a}${c} = 0.0;`)).join(' ')}
      for (var r = 0; r < uniforms.b; r++) {
        let row = ${rowOf(l, F, In)};
        ${ts.map((a) => `let a${a} = ${inputName(l)}[row + i${a}];`).join(' ')}
        ${ts.map((c) => `let d${c} = D${l + 1}[r * ${Out} + j${c}];`).join(' ')}
        ${ts.flatMap((a) => ts.map((c) => `g${a}${c} = fma(a${a}, d${c}, g${a}${c});`)).join('\n        ')}
      }
      var gs = array<f32, ${T * T}>(${ts.flatMap((a) => ts.map((c) => `g${a}${c}`)).join(', ')});
      for (var k = 0; k < ${T * T}; k++) {
        let i = iBase + k / ${T};
        let j = jBase + k % ${T};
        if (i < ${In} && j < ${Out}) { update(${d.w} + i * ${Out} + j, gs[k]); }
      }
    } else if (index < ${cum}) {
      let j = index - ${bAt};
      var g = 0.0;
      for (var r = 0; r < uniforms.b; r++) { g = g + D${l + 1}[r * ${Out} + j]; }
      update(${d.b} + j, g);
    }`);
  }
  const lossHere = group.includes(L - 1);
  return {
    key: `mlpOpt_${plan.optimizer}_${s.m}_${s.v}_${s.loss}_${F}_${B}_${group.join('-')}_${layers.map((d) => `${d.inputs}x${d.units}@${d.w}`).join(',')}`,
    invocations: cum,
    uniforms: `${OPTIMIZER_UNIFORMS} start : i32,`,
    code: `${updateFunction(plan, s)}
  fn main(index : i32) {
    ${
      lossHere
        ? `if (index == 0) {
      var sum = 0.0;
      for (var r = 0; r < uniforms.b; r++) { sum = sum + D${L}[${B * C} + r]; }
      result[${s.loss} + uniforms.epoch] = result[${s.loss} + uniforms.epoch] + sum;
    }`
        : ''
    }
    ${branches.join(' else ')}
  }`,
  };
}

/** Layer groups for the optimizer: each binds ≤ 7 inputs (its layers' inputs and gradients). */
function optimizerGroups(L: number): number[][] {
  const groups: number[][] = [];
  let current: number[] = [];
  let bound = 0;
  for (let l = 0; l < L; l++) {
    const need = l === 0 ? 3 : 2; // X and Perm, or A_ℓ; and D_{ℓ+1}
    if (current.length > 0 && bound + need > 7) {
      groups.push(current);
      current = [];
      bound = 0;
    }
    current.push(l);
    bound += need;
  }
  groups.push(current);
  return groups;
}

/** Trains a dense network with the fused step (call only when `fusedMlpLayers(spec)`). */
export async function trainMlpFused(
  spec: ModelSpec,
  layers: readonly Dense[],
  m0: Float32Array,
  data: Examples,
  plan: GpuTrainPlan,
): Promise<GpuTrainResult> {
  const L = layers.length;
  const F = layers[0]!.inputs;
  const B = plan.batchSize;
  const P = spec.paramCount;
  const s = stateLayout(P, plan, plan.passes);
  const init = new Float32Array(s.size);
  init.set(m0);
  const state = tf.tensor1d(init);
  const x = tf.tensor1d(data.x);
  const labels = tf.tensor1d(Int32Array.from(data.y), 'int32');
  const forwards = layers.slice(0, -1).map((d, l) => forwardProgram(l, d, F));
  const loss = lossProgram(L - 1, layers[L - 1]!, F, B);
  const backwards = layers.map((d, l) => (l === 0 ? undefined : backwardProgram(l, d, layers[l - 1]!.relu)));
  const groups = optimizerGroups(L);
  const optimizers = groups.map((g) => optimizerProgram(g, layers, F, B, plan, s));
  let perm: tf.Tensor | undefined;
  let pass = 0;
  try {
    const run = await runBatches(data.n, plan, {
      step(order, start, b, taken) {
        if (start === 0) {
          perm?.dispose();
          perm = tf.tensor1d(Int32Array.from(order), 'int32');
        }
        const at = [
          { type: 'int32' as const, data: [start] },
          { type: 'int32' as const, data: [b] },
        ];
        const sized = (width: number, invocations: number, p: WgslProgram) => ({
          p: { ...p, invocations },
          size: B * width,
        });
        // A[ℓ] for ℓ ≥ 1, D[ℓ] for ℓ ≥ 1.
        const A: tf.Tensor[] = [];
        const D: tf.Tensor[] = [];
        try {
          for (let l = 0; l + 1 < L; l++) {
            const u = layers[l]!.units;
            const { p, size } = sized(u, tiles(b) * tiles(u), forwards[l]!);
            const input: Record<string, tf.Tensor> = l === 0 ? { X: x, Perm: perm! } : { [`A${l}`]: A[l]! };
            A[l + 1] = runWgsl(p, { ...input, S: state }, at, { size });
          }
          const lastIn: Record<string, tf.Tensor> =
            L === 1 ? { X: x, Perm: perm! } : { [`A${L - 1}`]: A[L - 1]!, Perm: perm! };
          D[L] = runWgsl({ ...loss, invocations: b }, { ...lastIn, S: state, Y: labels }, at, {
            size: B * layers[L - 1]!.units + B,
          });
          for (let l = L - 1; l >= 1; l--) {
            const d = layers[l]!;
            const { p, size } = sized(d.inputs, b * d.inputs, backwards[l]!);
            const inputs: Record<string, tf.Tensor> = { [`D${l + 1}`]: D[l + 1]!, S: state };
            if (layers[l - 1]!.relu) inputs[`A${l}`] = A[l]!;
            D[l] = runWgsl(p, inputs, at, { size });
          }
          const uniforms = [
            ...optimizerUniforms(plan, taken, b, pass),
            { type: 'int32' as const, data: [start] },
          ];
          for (const [k, g] of groups.entries()) {
            const inputs: Record<string, tf.Tensor> = {};
            for (const l of g) {
              if (l === 0) Object.assign(inputs, { X: x, Perm: perm! });
              else inputs[`A${l}`] = A[l]!;
              inputs[`D${l + 1}`] = D[l + 1]!;
            }
            runWgsl(optimizers[k]!, inputs, uniforms, { into: state });
          }
        } finally {
          tf.dispose([...A.filter(Boolean), ...D.filter(Boolean)]);
        }
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
    tf.dispose([state, x, labels, ...(perm ? [perm] : [])]);
  }
}
