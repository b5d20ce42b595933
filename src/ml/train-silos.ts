/**
 * Local training of several silos from the same global model M0, the engine's round (issue 36):
 * on webgpu, for a dense network on the fused path, the silos train K at a time in the same
 * dispatches (_gpu_mlp_silos.ts: a step of K silos is the 4 dispatches of one silo's step for
 * the MLP, not 4K); everywhere else, and for models the fused MLP step does not cover, one after
 * another with `trainLocal`. Each silo's result is the same bits either way
 * (test/ml/train-silos.test.ts), so batching never changes a score.
 *
 * `FEDSCORE_GPU_SILOS` (default 8) caps K; 1 turns batching off (docs/performance.md, "GPU:
 * WebGPU"). A round's silos are sorted by their step count before being cut into groups, so the
 * silos of a group end close together (a silo that has finished is idle in the group's remaining
 * dispatches).
 */
import { fusedMlpLayers } from './_gpu_mlp.js';
import { gpuSilosPerCall, type SiloTask, sharedRuleKey, trainMlpSilos } from './_gpu_mlp_silos.js';
import { gpuTrainPath } from './_gpu_train.js';
import { onWebGpu } from './_webgpu.js';
import type { Examples, ModelSpec } from './models.js';
import { type TrainOptions, type TrainResult, trainLocal, trainPlan } from './train.js';

/** One silo's training job: its examples and `trainLocal`'s options. */
export interface SiloJob {
  readonly data: Examples;
  readonly options: TrainOptions;
}

/** Steps a plan takes: passes × ⌈n / B⌉, at most `maxSteps`. */
function stepsOf(t: SiloTask): number {
  const all = t.plan.passes * Math.ceil(t.data.n / t.plan.batchSize);
  return t.plan.maxSteps === undefined ? all : Math.min(all, t.plan.maxSteps);
}

/**
 * Trains each job from `m0` (see `trainLocal`); results in job order, each the bits
 * `trainLocal(spec, m0, job.data, job.options)` returns on the active backend.
 *
 * @throws RangeError/TypeError naming the bad job field (`jobs[i].…`) or `FEDSCORE_GPU_SILOS`.
 */
export async function trainSilos(
  spec: ModelSpec,
  m0: Float32Array,
  jobs: readonly SiloJob[],
): Promise<TrainResult[]> {
  if (!Array.isArray(jobs)) throw new TypeError('jobs: expected an array');
  // Every job checked first, its field named (`jobs[i].…`), before any training.
  const tasks: SiloTask[] = jobs.map((j, i) => {
    try {
      return { data: j.data, plan: trainPlan(spec, m0, j.data, j.options) };
    } catch (e) {
      if (e instanceof RangeError) throw new RangeError(`jobs[${i}].${e.message}`);
      if (e instanceof TypeError) throw new TypeError(`jobs[${i}].${e.message}`);
      throw e;
    }
  });
  const perCall = onWebGpu() ? gpuSilosPerCall() : 1;
  const layers =
    perCall > 1 && jobs.length > 1 && gpuTrainPath() === 'fused' ? fusedMlpLayers(spec) : undefined;
  if (!layers) {
    const out: TrainResult[] = [];
    for (const j of jobs) out.push(await trainLocal(spec, m0, j.data, j.options));
    return out;
  }
  // Groups: the same optimizer and batch size (compiled into the kernels), fewest steps first.
  const byRule = new Map<string, number[]>();
  for (const [i, t] of tasks.entries()) {
    const key = sharedRuleKey(t.plan);
    byRule.set(key, [...(byRule.get(key) ?? []), i]);
  }
  const results: TrainResult[] = new Array(jobs.length);
  for (const ids of byRule.values()) {
    const sorted = [...ids].sort((a, b) => stepsOf(tasks[a]!) - stepsOf(tasks[b]!) || a - b);
    for (let at = 0; at < sorted.length; at += perCall) {
      const group = sorted.slice(at, at + perCall);
      const out = await trainMlpSilos(
        spec,
        layers,
        m0,
        group.map((i) => tasks[i]!),
      );
      for (const [k, i] of group.entries()) results[i] = out[k]!;
    }
  }
  return results;
}
