/**
 * The WGSL programs of the fused conv step (webgpu; internal to _gpu_conv.ts, which says how a
 * step chains them). Stage ℓ (_gpu_conv_stages.ts) reads its input from `A${ℓ}` (stage ℓ−1's
 * forward buffer; for ℓ = 0 the examples X through the pass's permutation Perm) and its
 * pre-activation gradient from `G${ℓ}`; θ is S (the flat state, read-only here) except in the
 * optimizer, which writes the state as `result`. Math as models.ts `forward` and tfjs's
 * gradients (ReLU's derivative 0 at 0; a max pool's gradient to the first maximum of its window
 * in row-major order; an average pool's spread evenly):
 *   conv forward    Z[r,y,x,o] = Σ_{ky,kx,c} I[r, y+ky−p, x+kx−p, c]·W[ky,kx,c,o] + b[o] (zeros
 *                   outside I), A = relu?(Z), O = pool?(A); one invocation per value of O
 *   dense forward   A[r,j] = relu?(Σᵢ I[r,i]·W[i,j] + b[j])
 *   loss            the last dense layer, softmax, G = (p − onehot(y)) / b, rowLoss = lse − z_y
 *   backward ℓ      ∂O_{ℓ−1} = Gℓ·Wℓᵀ (dense) or the transposed convolution of Gℓ (conv), then
 *                   G_{ℓ−1} = relu'(A_{ℓ−1})·unpool(∂O_{ℓ−1})
 *   optimizer       ∂W, ∂b summed over the batch inside each update (never stored), then
 *                   _gpu_optimizer.ts's rule
 */

import { type ConvStage, type DenseStage, outWidth, preWidth, type Stage } from './_gpu_conv_stages.js';
import { OPTIMIZER_UNIFORMS, type StateLayout, updateFunction } from './_gpu_optimizer.js';
import type { GpuTrainPlan } from './_gpu_plan.js';
import { bindingGroups, type WgslProgram } from './_wgsl_program.js';

/**
 * LOOP_BOUNDS: every loop whose trip count is a constant of the spec is written `i < n +
 * uniforms.zero` (`zero` is always 0) so that the shader compiler cannot unroll it. Unrolled, the
 * nested convolution loops made lavapipe's LLVM take 126 s to build LeNet-5's pipelines on a cold
 * shader cache (and never finish at batch sizes 2 and 3); with opaque bounds it takes 1.5 s. The
 * arithmetic and its order are the same either way.
 */
export const STEP_UNIFORMS = 'start : i32, b : i32, zero : i32,';

/** Stage ℓ's input: the buffer's name and the WGSL offset of row `r`'s first value. */
function input(l: number, stages: readonly Stage[], F: number, r = 'r'): { name: string; row: string } {
  return l === 0
    ? { name: 'X', row: `Perm[uniforms.start + ${r}] * ${F}` }
    : { name: `A${l}`, row: `${r} * ${outWidth(stages[l - 1]!)}` };
}

/** A key fragment with every constant of a stage. */
const stageKey = (s: Stage) =>
  s.kind === 'dense'
    ? `d${s.inputs}x${s.units}r${+s.relu}@${s.w},${s.b}`
    : `c${s.inH}x${s.inW}x${s.inC}k${s.k}p${s.pad}o${s.outC}r${+s.relu}${s.pool ? `${s.pool.op}${s.pool.size}` : ''}@${s.w},${s.b}`;

/** WGSL `fn conv(base, y, x, o) -> f32`: relu?(Z) at (y, x, o) of the row starting at `base`. */
function convFunction(s: ConvStage, inName: string): string {
  const bounds = (v: string, n: number) => (s.pad > 0 ? `if (${v} < 0 || ${v} >= ${n}) { continue; }` : '');
  return `
  fn conv(base : i32, y : i32, x : i32, o : i32) -> f32 {
    var acc = 0.0;
    for (var ky = 0; ky < ${s.k} + uniforms.zero; ky++) {
      let iy = y + ky - ${s.pad};
      ${bounds('iy', s.inH)}
      for (var kx = 0; kx < ${s.k} + uniforms.zero; kx++) {
        let ix = x + kx - ${s.pad};
        ${bounds('ix', s.inW)}
        let at = base + (iy * ${s.inW} + ix) * ${s.inC};
        let wt = ${s.w} + (ky * ${s.k} + kx) * ${s.inC * s.outC} + o;
        for (var c = 0; c < ${s.inC} + uniforms.zero; c++) {
          acc = fma(${inName}[at + c], S[wt + c * ${s.outC}], acc);
        }
      }
    }
    let z = acc + S[${s.b} + o];
    return ${s.relu ? 'max(z, 0.0)' : 'z'};
  }`;
}

/** Forward of conv stage ℓ (see the module comment): one invocation per value of O. */
export function convForwardProgram(l: number, stages: readonly Stage[], F: number, B: number): WgslProgram {
  const s = stages[l] as ConvStage;
  const { name, row } = input(l, stages, F);
  const [OW, PW] = [outWidth(s), preWidth(s)];
  const head = (w: string, W: number, C: number) => `
    if (index >= uniforms.b * ${OW}) { return; }
    let r = index / ${OW};
    let q = index - r * ${OW};
    let o = q % ${C};
    let p = q / ${C};
    let ${w} = p % ${W};
    let ${w === 'x' ? 'y' : 'py'} = p / ${W};
    let base = ${row};`;
  let body: string;
  if (!s.pool) {
    body = `${head('x', s.outW, s.outC)}
    result[index] = conv(base, y, x, o);`;
  } else {
    const z = s.pool.size;
    body = `${head('px', s.oW, s.outC)}
    var pooled = 0.0;
    for (var dy = 0; dy < ${z} + uniforms.zero; dy++) {
      for (var dx = 0; dx < ${z} + uniforms.zero; dx++) {
        let y = py * ${z} + dy;
        let x = px * ${z} + dx;
        let a = conv(base, y, x, o);
        result[${B * OW} + r * ${PW} + (y * ${s.outW} + x) * ${s.outC} + o] = a;
        ${s.pool.op === 'max' ? 'pooled = select(max(pooled, a), a, dy == 0 && dx == 0);' : 'pooled = pooled + a;'}
      }
    }
    result[index] = ${s.pool.op === 'max' ? 'pooled' : `pooled / ${z * z}.0`};`;
  }
  return {
    key: `convFwd_${l}_${F}_${B}_${stageKey(s)}`,
    invocations: 0,
    uniforms: STEP_UNIFORMS,
    code: `${convFunction(s, name)}
  fn main(index : i32) {${body}
  }`,
  };
}

/** Forward of a hidden dense stage ℓ ≥ 1: one invocation per (row, unit). */
export function denseForwardProgram(l: number, stages: readonly Stage[]): WgslProgram {
  const s = stages[l] as DenseStage;
  const U = s.units;
  return {
    key: `convDenseFwd_${l}_${stageKey(s)}`,
    invocations: 0,
    uniforms: STEP_UNIFORMS,
    code: `
  fn main(index : i32) {
    if (index >= uniforms.b * ${U}) { return; }
    let r = index / ${U};
    let j = index - r * ${U};
    let base = r * ${s.inputs};
    var acc = 0.0;
    for (var i = 0; i < ${s.inputs} + uniforms.zero; i++) {
      acc = fma(A${l}[base + i], S[${s.w} + i * ${U} + j], acc);
    }
    let z = acc + S[${s.b} + j];
    result[index] = ${s.relu ? 'max(z, 0.0)' : 'z'};
  }`,
  };
}

/** The last dense stage, softmax cross-entropy and its gradient: G [B·C], then rowLoss [B]. */
export function lossProgram(l: number, stages: readonly Stage[], B: number): WgslProgram {
  const s = stages[l] as DenseStage;
  const C = s.units;
  const cs = Array.from({ length: C }, (_, c) => c);
  return {
    key: `convLoss_${l}_${B}_${stageKey(s)}`,
    invocations: 0,
    uniforms: STEP_UNIFORMS,
    code: `
  fn main(r : i32) {
    if (r >= uniforms.b) { return; }
    let row = r * ${s.inputs};
    ${cs.map((c) => `var l${c} = 0.0;`).join(' ')}
    for (var h = 0; h < ${s.inputs} + uniforms.zero; h++) {
      let a = A${l}[row + h];
      let w = ${s.w} + h * ${C};
      ${cs.map((c) => `l${c} = fma(a, S[w + ${c}], l${c});`).join('\n      ')}
    }
    ${cs.map((c) => `l${c} = l${c} + S[${s.b + c}];`).join('\n    ')}
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

/** WGSL `fn gradO(r, i) -> f32`: ∂loss/∂(stage ℓ's input)[r, i], from Gℓ through Wℓ. */
function gradOFunction(l: number, s: Stage): string {
  if (s.kind === 'dense')
    return `
  fn gradO(r : i32, i : i32) -> f32 {
    var acc = 0.0;
    for (var j = 0; j < ${s.units} + uniforms.zero; j++) {
      acc = fma(G${l}[r * ${s.units} + j], S[${s.w} + i * ${s.units} + j], acc);
    }
    return acc;
  }`;
  const bounds = (v: string, n: number) => `if (${v} < 0 || ${v} >= ${n}) { continue; }`;
  return `
  fn gradO(r : i32, i : i32) -> f32 {
    let c = i % ${s.inC};
    let p = i / ${s.inC};
    let xi = p % ${s.inW};
    let yi = p / ${s.inW};
    var acc = 0.0;
    for (var ky = 0; ky < ${s.k} + uniforms.zero; ky++) {
      let y = yi + ${s.pad} - ky;
      ${bounds('y', s.outH)}
      for (var kx = 0; kx < ${s.k} + uniforms.zero; kx++) {
        let x = xi + ${s.pad} - kx;
        ${bounds('x', s.outW)}
        let g = r * ${preWidth(s)} + (y * ${s.outW} + x) * ${s.outC};
        let wt = ${s.w} + ((ky * ${s.k} + kx) * ${s.inC} + c) * ${s.outC};
        for (var o = 0; o < ${s.outC} + uniforms.zero; o++) {
          acc = fma(G${l}[g + o], S[wt + o], acc);
        }
      }
    }
    return acc;
  }`;
}

/**
 * G_{ℓ−1} from Gℓ (ℓ ≥ 1), through Wℓ and stage ℓ−1's pooling and ReLU (reads A_ℓ, stage ℓ−1's
 * forward buffer). Without pooling one invocation per value; with pooling one per window (the
 * windows cover the map, rows and columns past the last whole window get 0, as valid pooling).
 */
export function backwardProgram(l: number, stages: readonly Stage[], B: number): WgslProgram {
  const p = stages[l - 1]!;
  const A = `A${l}`;
  let body: string;
  if (p.kind === 'dense' || !p.pool) {
    const W = outWidth(p);
    body = `
    if (index >= uniforms.b * ${W}) { return; }
    let r = index / ${W};
    let g = gradO(r, index - r * ${W});
    result[index] = ${p.relu ? `select(0.0, g, ${A}[index] > 0.0)` : 'g'};`;
  } else {
    const z = p.pool!.size;
    const [cH, cW, C] = [Math.ceil(p.outH / z), Math.ceil(p.outW / z), p.outC];
    const per = cH * cW * C;
    const [OW, PW] = [outWidth(p), preWidth(p)];
    body = `
    if (index >= uniforms.b * ${per}) { return; }
    let r = index / ${per};
    let q = index - r * ${per};
    let c = q % ${C};
    let t = q / ${C};
    let qx = t % ${cW};
    let qy = t / ${cW};
    let inside = qy < ${p.oH} && qx < ${p.oW};
    var g = 0.0;
    var o = 0.0;
    if (inside) {
      let i = (qy * ${p.oW} + qx) * ${C} + c;
      g = gradO(r, i);
      o = ${A}[r * ${OW} + i];
    }
    var found = false;
    for (var dy = 0; dy < ${z} + uniforms.zero; dy++) {
      for (var dx = 0; dx < ${z} + uniforms.zero; dx++) {
        let y = qy * ${z} + dy;
        let x = qx * ${z} + dx;
        if (y >= ${p.outH} || x >= ${p.outW}) { continue; }
        let at = r * ${PW} + (y * ${p.outW} + x) * ${C} + c;
        var v = 0.0;
        if (inside) {
          let a = ${A}[${B * OW} + at];
          ${p.pool!.op === 'max' ? 'if (!found && a == o) { found = true; v = g; }' : `v = g / ${z * z}.0;`}
          ${p.relu ? 'v = select(0.0, v, a > 0.0);' : ''}
        }
        result[at] = v;
      }
    }`;
  }
  return {
    key: `convBwd_${l}_${B}_${stageKey(p)}_${stageKey(stages[l]!)}`,
    invocations: 0,
    uniforms: STEP_UNIFORMS,
    code: `${gradOFunction(l, stages[l]!)}
  fn main(index : i32) {${body}
  }`,
  };
}

/** Register tile of a dense weight gradient (T × T outputs per invocation, as _gpu_mlp.ts). */
const T = 4;
const ts = Array.from({ length: T }, (_, k) => k);
const tiles = (n: number) => Math.ceil(n / T);

/** The branch of the optimizer updating a dense stage's W and b; `at`: its first invocation. */
function denseBranch(l: number, s: DenseStage, at: number): { code: string; end: number } {
  const [In, Out] = [s.inputs, s.units];
  const bAt = at + tiles(In) * tiles(Out);
  const end = bAt + Out;
  return {
    end,
    code: `if (index < ${bAt}) {
      let q = index - ${at};
      let ib = q / ${tiles(Out)};
      let iBase = ib * ${T};
      let jBase = (q - ib * ${tiles(Out)}) * ${T};
      ${ts.map((a) => `let i${a} = min(iBase + ${a}, ${In - 1});`).join(' ')}
      ${ts.map((c) => `let j${c} = min(jBase + ${c}, ${Out - 1});`).join(' ')}
      ${ts.flatMap((a) => ts.map((c) => `var g${a}${c} = 0.0;`)).join(' ')}
      for (var r = 0; r < uniforms.b; r++) {
        let row = r * ${In};
        ${ts.map((a) => `let a${a} = A${l}[row + i${a}];`).join(' ')}
        ${ts.map((c) => `let d${c} = G${l}[r * ${Out} + j${c}];`).join(' ')}
        ${ts.flatMap((a) => ts.map((c) => `g${a}${c} = fma(a${a}, d${c}, g${a}${c});`)).join('\n        ')}
      }
      var gs = array<f32, ${T * T}>(${ts.flatMap((a) => ts.map((c) => `g${a}${c}`)).join(', ')});
      for (var k = 0; k < ${T * T} + uniforms.zero; k++) {
        let i = iBase + k / ${T};
        let j = jBase + k % ${T};
        if (i < ${In} && j < ${Out}) { update(${s.w} + i * ${Out} + j, gs[k]); }
      }
    } else if (index < ${end}) {
      let j = index - ${bAt};
      var g = 0.0;
      for (var r = 0; r < uniforms.b; r++) { g = g + G${l}[r * ${Out} + j]; }
      update(${s.b} + j, g);
    }`,
  };
}

/** The branch updating a conv stage's W (one invocation per weight, HWIO order) and b. */
function convBranch(
  l: number,
  stages: readonly Stage[],
  F: number,
  at: number,
): { code: string; end: number } {
  const s = stages[l] as ConvStage;
  const { name, row } = input(l, stages, F);
  const nW = s.k * s.k * s.inC * s.outC;
  const bAt = at + nW;
  const end = bAt + s.outC;
  const PW = preWidth(s);
  const bounds = (v: string, n: number) => (s.pad > 0 ? `if (${v} < 0 || ${v} >= ${n}) { continue; }` : '');
  return {
    end,
    code: `if (index < ${bAt}) {
      let q = index - ${at};
      let o = q % ${s.outC};
      let t = q / ${s.outC};
      let c = t % ${s.inC};
      let t2 = t / ${s.inC};
      let kx = t2 % ${s.k};
      let ky = t2 / ${s.k};
      var g = 0.0;
      for (var r = 0; r < uniforms.b; r++) {
        let base = ${row};
        let gb = r * ${PW} + o;
        for (var y = 0; y < ${s.outH} + uniforms.zero; y++) {
          let iy = y + ky - ${s.pad};
          ${bounds('iy', s.inH)}
          for (var x = 0; x < ${s.outW} + uniforms.zero; x++) {
            let ix = x + kx - ${s.pad};
            ${bounds('ix', s.inW)}
            g = fma(${name}[base + (iy * ${s.inW} + ix) * ${s.inC} + c], G${l}[gb + (y * ${s.outW} + x) * ${s.outC}], g);
          }
        }
      }
      update(${s.w} + q, g);
    } else if (index < ${end}) {
      let o = index - ${bAt};
      var g = 0.0;
      for (var r = 0; r < uniforms.b; r++) {
        for (var p = 0; p < ${s.outH * s.outW} + uniforms.zero; p++) { g = g + G${l}[r * ${PW} + p * ${s.outC} + o]; }
      }
      update(${s.b} + o, g);
    }`,
  };
}

/** The optimizer over the stages of `group`, with their weight gradients; adds the loss when last. */
export function optimizerProgram(
  group: readonly number[],
  stages: readonly Stage[],
  F: number,
  B: number,
  plan: GpuTrainPlan,
  st: StateLayout,
): WgslProgram {
  const L = stages.length;
  const C = (stages[L - 1] as DenseStage).units;
  let cum = 0;
  const branches: string[] = [];
  for (const l of group) {
    const s = stages[l]!;
    const br = s.kind === 'dense' ? denseBranch(l, s, cum) : convBranch(l, stages, F, cum);
    branches.push(br.code);
    cum = br.end;
  }
  const lossHere = group.includes(L - 1);
  return {
    key: `convOpt_${plan.optimizer}_${st.m}_${st.v}_${st.loss}_${F}_${B}_${group.join('-')}_${stages.map(stageKey).join(',')}`,
    invocations: cum,
    uniforms: `${OPTIMIZER_UNIFORMS} start : i32, zero : i32,`,
    code: `${updateFunction(plan, st)}
  fn main(index : i32) {
    ${
      lossHere
        ? `if (index == 0) {
      var sum = 0.0;
      for (var r = 0; r < uniforms.b; r++) { sum = sum + G${L - 1}[${B * C} + r]; }
      result[${st.loss} + uniforms.epoch] = result[${st.loss} + uniforms.epoch] + sum;
    }`
        : ''
    }
    ${branches.join(' else ')}
  }`,
  };
}

/** Storage buffers stage ℓ's weight gradient binds: X and Perm, or A_ℓ; and Gℓ. */
export const gradientBindings = (l: number): number => (l === 0 ? 3 : 2);

/** Stage groups for the optimizer: each binds ≤ 7 inputs (8 storage buffers with the state). */
export function optimizerGroups(L: number): number[][] {
  return bindingGroups(L, gradientBindings, 7);
}
