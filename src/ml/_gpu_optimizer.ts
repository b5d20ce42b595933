/**
 * The fused optimizer on the device (webgpu; internal to _gpu_train.ts and _gpu_mlp.ts): one
 * WGSL dispatch updates every parameter, in place, with train.ts's rules (PyTorch's):
 *   g ← ∇ + λθ                                     (L2 weight decay added to the gradient)
 *   Adam:  m ← β1·m + (1−β1)·g,  v ← β2·v + (1−β2)·g²,
 *          θ ← θ − (lr / (1−β1ᵗ))·m / (√v / √(1−β2ᵗ) + ε)       (torch.optim.Adam)
 *   SGD:   b ← g at t = 1, else μ·b + g (when μ > 0; b = g without momentum),  θ ← θ − lr·b
 * Kingma & Ba 2015 Alg. 1 with PyTorch's placement of ε (after the bias-corrected √v).
 *
 * The state is ONE flat float32 tensor: θ [P] | m [P] | v [P] (m only with SGD momentum, neither
 * for plain SGD) | one loss sum per pass. The optimizer binds it as its output and rewrites it
 * (no copy, no new buffer); the gradient of each parameter tensor is a separate input, bound as
 * tfjs's backward pass produced it. A WebGPU shader stage has 8 storage buffers (the state, the
 * loss and up to 6 gradients), so a model with more than 6 parameter tensors takes one dispatch
 * per 6 (LeNet-5 and cnn003: 2). The batch's mean loss × b is added to the pass's slot by the
 * same dispatch (invocation 0), so the loss is summed on the device and read once per pass.
 *
 * Everything is float32 (train.ts's CPU loop computes in float64 and rounds θ once per step);
 * the per-step constants (lr/(1−β1ᵗ), √(1−β2ᵗ), …) are computed in float64 here and passed as
 * float32 uniforms. test/ml/_gpu_optimizer.test.ts checks the update against `adamStepJs` and the
 * SGD loop on random data.
 */
import { runWgsl, type Uniform, type WgslProgram, wgslErrors } from './_wgsl_program.js';
import * as tf from './tf.js';

/** The optimizer's hyper-parameters (train.ts's resolved options). */
export interface OptimizerRule {
  readonly optimizer: 'adam' | 'sgd';
  readonly lr: number;
  readonly wd: number;
  readonly momentum: number;
  readonly beta1: number;
  readonly beta2: number;
  readonly eps: number;
}

/** Where things sit in the flat state tensor. */
export interface StateLayout {
  /** Parameters P. */
  readonly params: number;
  /** Offset of m (−1 when there is none). */
  readonly m: number;
  /** Offset of v (−1 when there is none). */
  readonly v: number;
  /** Offset of the per-pass loss sums. */
  readonly loss: number;
  /** Total floats. */
  readonly size: number;
}

export function stateLayout(params: number, rule: OptimizerRule, passes: number): StateLayout {
  const slots = rule.optimizer === 'adam' ? 3 : rule.momentum > 0 ? 2 : 1;
  return {
    params,
    m: slots >= 2 ? params : -1,
    v: slots >= 3 ? 2 * params : -1,
    loss: slots * params,
    size: slots * params + Math.max(1, passes),
  };
}

/** Most gradient tensors one dispatch binds (8 storage buffers: state, loss, 6 gradients). */
export const GRADS_PER_DISPATCH = 6;

/** The per-step uniforms, declared by `OPTIMIZER_UNIFORMS` (float64 constants rounded to f32). */
export function optimizerUniforms(rule: OptimizerRule, step: number, b: number, pass: number): Uniform[] {
  const adam = rule.optimizer === 'adam';
  return [
    { type: 'float32', data: [adam ? rule.lr / (1 - rule.beta1 ** step) : rule.lr] },
    { type: 'float32', data: [adam ? Math.sqrt(1 - rule.beta2 ** step) : 1] },
    { type: 'float32', data: [rule.wd] },
    { type: 'float32', data: [adam ? rule.beta1 : rule.momentum] },
    { type: 'float32', data: [1 - rule.beta1] },
    { type: 'float32', data: [rule.beta2] },
    { type: 'float32', data: [1 - rule.beta2] },
    { type: 'float32', data: [rule.eps] },
    { type: 'int32', data: [step === 1 ? 1 : 0] },
    { type: 'int32', data: [b] },
    { type: 'int32', data: [pass] },
  ];
}

export const OPTIMIZER_UNIFORMS =
  'stepSize : f32, sqrtBc2 : f32, wd : f32, beta1 : f32, c1 : f32, beta2 : f32, c2 : f32, eps : f32, first : i32, b : i32, epoch : i32,';

/**
 * WGSL: `fn update(p : i32, grad : f32)`, the rule above for parameter p on `result` (the state),
 * reading the uniforms of `OPTIMIZER_UNIFORMS`. Shared with the fused MLP step.
 */
export function updateFunction(rule: OptimizerRule, s: StateLayout): string {
  const body =
    rule.optimizer === 'adam'
      ? `let m = uniforms.beta1 * result[${s.m} + p] + uniforms.c1 * g;
    let v = uniforms.beta2 * result[${s.v} + p] + uniforms.c2 * g * g;
    result[${s.m} + p] = m;
    result[${s.v} + p] = v;
    result[p] = th - (uniforms.stepSize * m) / (sqrt(v) / uniforms.sqrtBc2 + uniforms.eps);`
      : s.m >= 0
        ? `var d = g;
    if (uniforms.first == 0) { d = uniforms.beta1 * result[${s.m} + p] + g; }
    result[${s.m} + p] = d;
    result[p] = th - uniforms.stepSize * d;`
        : 'result[p] = th - uniforms.stepSize * g;';
  return `
  fn update(p : i32, grad : f32) {
    let th = result[p];
    let g = grad + uniforms.wd * th;
    ${body}
  }`;
}

/** One parameter tensor of the flat vector: its offset and size. */
export interface ParamRange {
  readonly offset: number;
  readonly size: number;
}

/** The program updating `ranges` from gradients G0…G(k−1) (k ≤ GRADS_PER_DISPATCH). */
function program(
  rule: OptimizerRule,
  s: StateLayout,
  ranges: readonly ParamRange[],
  addLoss: boolean,
): WgslProgram {
  let cum = 0;
  const branches = ranges.map((r, j) => {
    const at = cum;
    cum += r.size;
    return `${j === 0 ? '' : 'else '}if (index < ${cum}) { update(${r.offset} + index - ${at}, G${j}[index - ${at}]); }`;
  });
  const key = `opt_${rule.optimizer}_${s.m}_${s.v}_${s.loss}_${addLoss}_${ranges.map((r) => `${r.offset}:${r.size}`).join(',')}`;
  return {
    key,
    invocations: cum,
    uniforms: OPTIMIZER_UNIFORMS,
    code: `${updateFunction(rule, s)}
  fn main(index : i32) {
    ${addLoss ? `if (index == 0) { result[${s.loss} + uniforms.epoch] = result[${s.loss} + uniforms.epoch] + Lv[0] * f32(uniforms.b); }` : ''}
    ${branches.join('\n    ')}
  }`,
  };
}

/**
 * Queues the optimizer step `step` (1, 2, …) on `state` in place: `grads[k]` is the gradient of
 * `ranges[k]`; `loss` (a scalar, the batch's mean loss) × b is added to pass `pass`'s slot.
 * ⌈ranges / 6⌉ dispatches.
 */
export function fusedOptimizerStep(
  state: tf.Tensor,
  s: StateLayout,
  rule: OptimizerRule,
  ranges: readonly ParamRange[],
  grads: readonly tf.Tensor[],
  loss: tf.Tensor,
  at: { step: number; b: number; pass: number },
): void {
  const uniforms = optimizerUniforms(rule, at.step, at.b, at.pass);
  for (let first = 0; first < ranges.length; first += GRADS_PER_DISPATCH) {
    const group = ranges.slice(first, first + GRADS_PER_DISPATCH);
    const inputs: Record<string, tf.Tensor> = {};
    for (const [j] of group.entries()) inputs[`G${j}`] = grads[first + j]!;
    if (first === 0) inputs.Lv = loss;
    runWgsl(program(rule, s, group, first === 0), inputs, uniforms, { into: state });
  }
}

/** Pass `pass`'s loss sum from the flat state: the one 4-byte read of a pass. */
export async function readPassLoss(state: tf.Tensor, s: StateLayout, pass: number): Promise<number> {
  const t = tf.slice(state, [s.loss + pass], [1]);
  try {
    return (await t.data())[0]!;
  } finally {
    t.dispose();
  }
}

/**
 * Δ = θ − m0, θ read from the flat state once at the end of a call; a shader that failed to
 * compile is reported first (wgslErrors), so a broken pipeline never passes for a result.
 */
export async function readDelta(state: tf.Tensor, m0: Float32Array): Promise<Float32Array> {
  const P = m0.length;
  const th = tf.slice(state, [0], [P]);
  const values = (await th.data()) as Float32Array;
  th.dispose();
  wgslErrors();
  const delta = new Float32Array(P);
  for (let i = 0; i < P; i++) delta[i] = values[i]! - m0[i]!;
  return delta;
}
