/**
 * Training several silos from the same model in the same dispatches (webgpu, the fused MLP step;
 * internal to src/ml): K silos' states, examples, permutations and batch positions are stacked
 * (_gpu_mlp.ts's layout), and each step of the round is the 2L dispatches of one silo's step
 * (4 for the MLP 784-200-10), covering all K, instead of 2L·K. `trainMlpFused` is the case K = 1,
 * the path of one silo (_gpu_train.ts).
 *
 * Steps are taken in lockstep: global step t is every silo's step t. Adam's bias corrections and
 * SGD's first-step rule depend on t only, so the per-step uniforms are shared; a silo's batch
 * offset, size b and pass index differ and go in the per-step buffer Q. Silos of different sizes
 * take different numbers of steps (passes × ⌈n/B⌉, or `steps`) and end their passes at different
 * steps: each walks its own schedule (_batches.ts, its own seeded permutations), and a silo with
 * no step left is idle (b = 0) in the dispatches that remain. Idle rather than regrouped
 * mid-run: regrouping would rebuild the stacked buffers and pipelines for each new K, while an
 * idle silo costs invocations that return at once. `trainSilos` (train-silos.ts) sorts a round's
 * silos by step count before cutting them into groups of `FEDSCORE_GPU_SILOS`, so a group's silos
 * end close together.
 *
 * Each silo's result is that of training it alone (K = 1) on the same path, to the bit: its
 * arithmetic is the same expressions in the same order whatever K and wherever it sits in the
 * stack (test/ml/_gpu_mlp_silos.test.ts checks it on lavapipe with Adam and SGD, unequal sizes and
 * short last batches). Nothing is read inside the run: each silo's pass losses and θ come back in
 * one read at the end (a silo given `onEpoch` has its pass's loss read at the pass's end instead).
 */
import { batchSchedule, type ScheduleEvent } from './_batches.js';
import { type Dense, mlpStepPrograms, Q_WIDTH, siloUniforms } from './_gpu_mlp.js';
import { optimizerUniforms, stateLayout } from './_gpu_optimizer.js';
import type { GpuTrainPlan, GpuTrainResult } from './_gpu_plan.js';
import { runWgsl, wgslErrors } from './_wgsl_program.js';
import type { Examples, ModelSpec } from './models.js';
import * as tf from './tf.js';

/** Default of `FEDSCORE_GPU_SILOS`: the most silos one call trains in the same dispatches. */
export const DEFAULT_GPU_SILOS = 8;

/**
 * `FEDSCORE_GPU_SILOS` (default 8): the most silos trained in the same dispatches; 1 trains
 * them one after another. Throws RangeError naming it on anything but a positive integer.
 */
export function gpuSilosPerCall(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.FEDSCORE_GPU_SILOS;
  if (raw === undefined || raw === '') return DEFAULT_GPU_SILOS;
  const k = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isSafeInteger(k) || k < 1)
    throw new RangeError(`FEDSCORE_GPU_SILOS: expected a positive integer, got ${raw}`);
  return k;
}

/** One silo of a batched call: its examples and train.ts's plan for it. */
export interface SiloTask {
  readonly data: Examples;
  readonly plan: GpuTrainPlan;
}

/** The fields of a plan that must agree across the silos of one call (compiled into the kernels). */
export const sharedRuleKey = (p: GpuTrainPlan): string =>
  [p.optimizer, p.lr, p.wd, p.momentum, p.beta1, p.beta2, p.eps, p.batchSize].join('|');

/** Trains one silo with the fused step (call only when `fusedMlpLayers(spec)`). */
export async function trainMlpFused(
  spec: ModelSpec,
  layers: readonly Dense[],
  m0: Float32Array,
  data: Examples,
  plan: GpuTrainPlan,
): Promise<GpuTrainResult> {
  return (await trainMlpSilos(spec, layers, m0, [{ data, plan }]))[0]!;
}

interface Cursor {
  readonly events: Generator<ScheduleEvent, void, undefined>;
  readonly passes: { epoch: number; seen: number; loss?: number }[];
  steps: number;
  done: boolean;
}

/**
 * Trains every silo from `m0` in the same dispatches; results in `silos` order, each what
 * trainLocal returns. The silos' plans must agree on `sharedRuleKey` (an Error otherwise: a
 * caller's bug, not an input error).
 */
export async function trainMlpSilos(
  spec: ModelSpec,
  layers: readonly Dense[],
  m0: Float32Array,
  silos: readonly SiloTask[],
): Promise<GpuTrainResult[]> {
  const K = silos.length;
  if (K === 0) return [];
  const rule = silos[0]!.plan;
  for (const t of silos)
    if (sharedRuleKey(t.plan) !== sharedRuleKey(rule))
      throw new Error('trainMlpSilos: the silos of one call must share the optimizer and batch size');
  const L = layers.length;
  const F = layers[0]!.inputs;
  const B = rule.batchSize;
  const P = spec.paramCount;
  const maxPasses = Math.max(...silos.map((t) => t.plan.passes));
  const st = stateLayout(P, rule, maxPasses);
  const Z = st.size;
  const programs = mlpStepPrograms(layers, { F, B, K, Z }, rule, st);

  // The stacked inputs: states at k·Z, examples' rows concatenated from rowAt[k].
  const rowAt: number[] = [];
  let N = 0;
  for (const t of silos) {
    rowAt.push(N);
    N += t.data.n;
  }
  const init = new Float32Array(K * Z);
  const xs = new Float32Array(N * F);
  const ys = new Int32Array(N);
  for (const [k, t] of silos.entries()) {
    init.set(m0, k * Z);
    xs.set(t.data.x.subarray(0, t.data.n * F), rowAt[k]! * F);
    for (let i = 0; i < t.data.n; i++) ys[rowAt[k]! + i] = t.data.y[i]!;
  }
  const permHost = new Int32Array(N);
  const state = tf.tensor1d(init);
  const x = tf.tensor1d(xs);
  const labels = tf.tensor1d(ys, 'int32');
  let perm: tf.Tensor | undefined;

  const cursors: Cursor[] = silos.map((t) => ({
    events: batchSchedule(t.data.n, t.plan),
    passes: [],
    steps: 0,
    done: false,
  }));
  const passLoss = async (k: number, pass: number) => {
    const one = tf.slice(state, [k * Z + st.loss + pass], [1]);
    try {
      return (await one.data())[0]!;
    } finally {
      one.dispose();
    }
  };
  /** Silo k's next step, past its pass ends (recorded; read now for an `onEpoch`). */
  const next = async (k: number) => {
    const c = cursors[k]!;
    for (;;) {
      const r = c.events.next();
      if (r.done) {
        c.done = true;
        return undefined;
      }
      const e = r.value;
      if (e.kind === 'step') return e;
      const entry: Cursor['passes'][number] = { epoch: e.epoch, seen: e.seen };
      c.passes.push(entry);
      const onEpoch = silos[k]!.plan.onEpoch;
      if (onEpoch) {
        entry.loss = (await passLoss(k, e.epoch)) / Math.max(1, e.seen);
        onEpoch(e.epoch, entry.loss);
      }
      await Promise.resolve();
    }
  };

  try {
    for (let t = 1; ; t++) {
      const q = new Int32Array(K * Q_WIDTH);
      let active = 0;
      let newPerm = false;
      for (const [k, c] of cursors.entries()) {
        if (c.done) continue;
        const e = await next(k);
        if (!e) continue;
        if (e.step !== t) throw new Error(`trainMlpSilos: silo ${k} at step ${e.step}, the others at ${t}`);
        if (e.start === 0) {
          const at = rowAt[k]!;
          for (let i = 0; i < e.order.length; i++) permHost[at + i] = at + e.order[i]!;
          newPerm = true;
        }
        q[k * Q_WIDTH] = rowAt[k]! + e.start;
        q[k * Q_WIDTH + 1] = e.b;
        q[k * Q_WIDTH + 2] = c.passes.length;
        c.steps = t;
        active++;
      }
      if (active === 0) break;
      if (newPerm) {
        perm?.dispose();
        perm = tf.tensor1d(Int32Array.from(permHost), 'int32');
      }
      step(t, tf.tensor1d(q, 'int32'), perm!);
    }
    return await results();
  } finally {
    tf.dispose([state, x, labels, ...(perm ? [perm] : [])]);
  }

  /** Queues global step t: 2L dispatches over the K silos. */
  function step(t: number, Q: tf.Tensor, Perm: tf.Tensor): void {
    const A: tf.Tensor[] = []; // A[ℓ], ℓ ≥ 1
    const D: tf.Tensor[] = []; // D[ℓ], ℓ ≥ 1
    try {
      for (let l = 0; l + 1 < L; l++) {
        const input: Record<string, tf.Tensor> = l === 0 ? { X: x, Perm } : { [`A${l}`]: A[l]! };
        A[l + 1] = runWgsl(programs.forwards[l]!, { ...input, S: state, Q }, siloUniforms(K, Z), {
          size: K * B * layers[l]!.units,
        });
      }
      const lastIn: Record<string, tf.Tensor> = L === 1 ? { X: x, Perm } : { [`A${L - 1}`]: A[L - 1]!, Perm };
      D[L] = runWgsl(programs.loss, { ...lastIn, S: state, Y: labels, Q }, siloUniforms(K, Z), {
        size: K * B * (layers[L - 1]!.units + 1),
      });
      for (let l = L - 1; l >= 1; l--) {
        const inputs: Record<string, tf.Tensor> = { [`D${l + 1}`]: D[l + 1]!, S: state, Q };
        if (layers[l - 1]!.relu) inputs[`A${l}`] = A[l]!;
        D[l] = runWgsl(programs.backwards[l]!, inputs, siloUniforms(K, Z), {
          size: K * B * layers[l]!.inputs,
        });
      }
      // b and pass are per silo (Q); the uniforms' own are unused here.
      const uniforms = [...optimizerUniforms(rule, t, 0, 0), ...siloUniforms(K, Z)];
      for (const [g, group] of programs.groups.entries()) {
        const inputs: Record<string, tf.Tensor> = {};
        for (const l of group) {
          if (l === 0) Object.assign(inputs, { X: x, Perm });
          else inputs[`A${l}`] = A[l]!;
          inputs[`D${l + 1}`] = D[l + 1]!;
        }
        runWgsl(programs.optimizers[g]!, { ...inputs, Q }, uniforms, { into: state });
      }
    } finally {
      tf.dispose([Q, ...A.filter(Boolean), ...D.filter(Boolean)]);
    }
  }

  /** Every silo's θ and pass losses in one read (then a shader that failed to compile is reported). */
  async function results(): Promise<GpuTrainResult[]> {
    const slots = Math.max(1, maxPasses);
    const parts = silos.flatMap((_, k) => [
      tf.slice(state, [k * Z], [P]),
      tf.slice(state, [k * Z + st.loss], [slots]),
    ]);
    const all = tf.concat(parts);
    let values: Float32Array;
    try {
      values = (await all.data()) as Float32Array;
    } finally {
      tf.dispose([all, ...parts]);
    }
    wgslErrors();
    return silos.map((t, k) => {
      const at = k * (P + slots);
      const delta = new Float32Array(P);
      for (let i = 0; i < P; i++) delta[i] = values[at + i]! - m0[i]!;
      const c = cursors[k]!;
      const epochLosses = new Float64Array(t.plan.passes);
      let samples = 0;
      for (const p of c.passes) {
        epochLosses[p.epoch] = p.loss ?? values[at + P + p.epoch]! / Math.max(1, p.seen);
        samples += p.seen;
      }
      return { delta, epochLosses, steps: c.steps, samples };
    });
  }
}
