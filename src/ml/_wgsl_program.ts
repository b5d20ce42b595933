/**
 * Hand-written WGSL compute programs on tfjs's webgpu backend (internal to src/ml): the plumbing
 * the fused training kernels share (_gpu_optimizer.ts, _gpu_mlp.ts), in the style of the
 * coalition shader (_coalition_wgsl.ts).
 *
 * A program is run through the backend's own `runWebGPUProgram`, so it takes the backend's
 * buffer pool, pipeline cache and command batching, and is counted as one dispatch like any tfjs
 * kernel (bench/_gpu_counts.ts). The user code defines `fn main(index : i32)` over a flat
 * invocation index (the backend folds a dispatch over 65,535 workgroups into two dimensions and
 * recomputes the flat index); inputs are read-only storage arrays named by `inputs`' keys; the
 * one output is `result`, read_write.
 *
 * `into`: the program writes an existing tensor in place (its buffer bound as `result`, which the
 * shader may also read). This is how θ and the optimizer state are updated without a copy; such
 * a tensor is never bound as an input of the same program (WebGPU forbids a buffer both
 * writable and read-only in one dispatch), and its values are never read through tfjs's CPU
 * cache (callers read a slice of it, a fresh tensor).
 */
import * as tf from './tf.js';

/** Invocations per workgroup of the hand-written shaders (this file's and _coalition_wgsl.ts's). */
export const WORKGROUP = 64;

/** tfjs-backend-webgpu's program interface (`WebGPUProgram`), the fields set here. */
export interface Program {
  outputShape: number[];
  shaderKey: string;
  dispatchLayout: { x: number[] };
  dispatch: [number, number, number];
  variableNames: string[];
  workgroupSize: [number, number, number];
  uniforms: string;
  getUserCode(): string;
}

/** The part of tfjs-backend-webgpu's backend the hand-written shaders use. */
export interface WebGpuBackendLike {
  device?: {
    pushErrorScope(filter: 'validation'): void;
    popErrorScope(): Promise<{ message: string } | null>;
  };
  runWebGPUProgram(
    program: Program,
    inputs: tf.TensorInfo[],
    dtype: 'float32',
    uniforms: Uniform[],
    output?: tf.TensorInfo,
  ): tf.TensorInfo;
}

/** One uniform value (declared in the program's `uniforms` string in the same order). */
export interface Uniform {
  type: 'int32' | 'float32';
  data: number[];
}

/** A program: its key (with every compiled-in constant), code, and invocation count. */
export interface WgslProgram {
  /** Unique per distinct `code` (the pipeline cache key; tfjs appends the input shapes). */
  readonly key: string;
  /** WGSL defining `fn main(index : i32)`. */
  readonly code: string;
  /** Invocations (`index` runs over [0, invocations); the code checks its own bound). */
  readonly invocations: number;
  /** Uniform declarations, e.g. `b : i32, lr : f32,`. */
  readonly uniforms?: string;
}

/**
 * Queues `program` with `inputs` (bound in key order) and returns its output: a new float32
 * tensor of `outputSize` values, or `into` written in place (then `into` is returned).
 */
export function runWgsl(
  program: WgslProgram,
  inputs: Readonly<Record<string, tf.Tensor>>,
  uniforms: Uniform[],
  out: { size: number } | { into: tf.Tensor },
): tf.Tensor {
  const names = Object.keys(inputs);
  const size = 'into' in out ? out.into.size : out.size;
  const p: Program = {
    outputShape: [size],
    shaderKey: `fedscore_${program.key}`,
    dispatchLayout: { x: [0] },
    dispatch: [Math.max(1, Math.ceil(program.invocations / WORKGROUP)), 1, 1],
    variableNames: names,
    workgroupSize: [WORKGROUP, 1, 1],
    uniforms: program.uniforms ?? '',
    getUserCode: () => program.code,
  };
  const backend = tf.backend() as unknown as WebGpuBackendLike;
  const tensors = names.map((k) => inputs[k]!);
  // The first run of a program compiles it: tfjs would log a WGSL error and go on with an
  // invalid pipeline, so the compile is watched and `wgslErrors` reports it.
  const key = `${p.shaderKey}|${tensors.map((t) => t.size).join(',')}`;
  const device = backend.device;
  const fresh = device !== undefined && !compiled.has(key);
  if (fresh) {
    compiled.add(key);
    device.pushErrorScope('validation');
  }
  try {
    if ('into' in out) {
      backend.runWebGPUProgram(p, tensors, 'float32', uniforms, out.into);
      return out.into;
    }
    const info = backend.runWebGPUProgram(p, tensors, 'float32', uniforms);
    return tf.engine().makeTensorFromTensorInfo(info);
  } finally {
    if (fresh) {
      unsettled++;
      device.popErrorScope().then(
        (e) => {
          unsettled--;
          if (e) failures.push(`${program.key}: ${e.message}`);
        },
        () => unsettled--,
      );
    }
  }
}

const compiled = new Set<string>();
const failures: string[] = [];
let unsettled = 0;

/**
 * Throws if a program compiled since the last call failed validation (its WGSL error), as far as
 * the device has reported: the training paths call it after their final read, by which time the
 * device has been polled. It never waits (a wait on an error scope that the device does not poll
 * would never end).
 */
export function wgslErrors(): void {
  const bad = failures.splice(0);
  if (bad.length > 0) throw new Error(`a fused GPU kernel is invalid: ${bad[0]}`);
}

/** `wgslErrors` after waiting (up to `waitMs`) for every compile's report to come in. */
export async function settledWgslErrors(waitMs = 5000): Promise<void> {
  const until = performance.now() + waitMs;
  while (unsettled > 0 && performance.now() < until) await new Promise((r) => setTimeout(r, 5));
  wgslErrors();
}

/**
 * Cuts layers 0..L−1, in order, into groups whose storage bindings (`need(ℓ)` each) stay within
 * `limit` (a shader binds at most 8 storage buffers): one dispatch per group. A layer that needs
 * more than `limit` alone gets a group of its own.
 */
export function bindingGroups(L: number, need: (l: number) => number, limit: number): number[][] {
  const groups: number[][] = [];
  let current: number[] = [];
  let bound = 0;
  for (let l = 0; l < L; l++) {
    if (current.length > 0 && bound + need(l) > limit) {
      groups.push(current);
      current = [];
      bound = 0;
    }
    current.push(l);
    bound += need(l);
  }
  groups.push(current);
  return groups;
}
