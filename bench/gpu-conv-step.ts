/**
 * `npx tsx bench/gpu-conv-step.ts [--steps K] [--rounds R] [--batch B]`: the webgpu training step
 * of cnn003 and LeNet-5 (Adam, batch 64 by default, 28×28×1 images, 10 classes) on the fused
 * conv kernels (src/ml/_gpu_conv.ts) against the path before them (tfjs's forward and backward
 * ops with the fused loss and optimizer, `trainWithFusedOptimizer` in src/ml/_gpu_train.ts), in
 * one process, interleaved: per model and round, both paths' K-step calls one after the other.
 * Prints one Markdown row per model: dispatches / readbacks / bytes read back per step (the
 * difference of a 4-step and a 2-step call, bench/_gpu_counts.ts) and ms per step (the
 * difference of a (K+1)-step and a 1-step call over K, so the upload and the final read of θ
 * are not in it; the median over the rounds, each round's figure listed). On lavapipe (Mesa's
 * CPU Vulkan) the GPU is the CPU: read the times as indicative only.
 */
import { createRng } from '../scoring/seeded-rng.js';
import { gaussianMixture } from '../src/data/synthetic.js';
import { trainConvFused } from '../src/ml/_gpu_conv.js';
import { fusedConvStages } from '../src/ml/_gpu_conv_stages.js';
import type { GpuTrainPlan } from '../src/ml/_gpu_plan.js';
import { trainWithFusedOptimizer } from '../src/ml/_gpu_train.js';
import { describeBackend, initBackend } from '../src/ml/backend.js';
import { createModel } from '../src/ml/model-registry.js';
import { type Examples, initParams, type ModelSpec } from '../src/ml/models.js';
import { stepCost } from './_gpu_counts.js';

function flag(name: string, fallback: number): number {
  const at = process.argv.indexOf(`--${name}`);
  if (at < 0) return fallback;
  const v = Number(process.argv[at + 1]);
  if (!Number.isInteger(v) || v < 1) {
    console.error(`gpu-conv-step: --${name}: expected a positive integer, got ${process.argv[at + 1]}`);
    process.exit(2);
  }
  return v;
}
const K = flag('steps', 3);
const ROUNDS = flag('rounds', 3);
const BATCH = flag('batch', 64);

const plan = (steps: number): GpuTrainPlan => ({
  passes: steps, // at least one batch per pass; maxSteps stops it
  maxSteps: steps,
  batchSize: BATCH,
  optimizer: 'adam',
  lr: 1e-3,
  wd: 1e-3,
  momentum: 0,
  beta1: 0.9,
  beta2: 0.999,
  eps: 1e-8,
  rng: createRng(3),
});

type Train = (steps: number) => Promise<unknown>;

function paths(spec: ModelSpec, data: Examples): { before: Train; after: Train } {
  const m0 = initParams(spec, 1);
  const stages = fusedConvStages(spec);
  if (!stages) throw new Error(`gpu-conv-step: ${spec.name} is not covered by the fused conv step`);
  return {
    before: (steps) => trainWithFusedOptimizer(spec, m0, data, plan(steps)),
    after: (steps) => trainConvFused(spec, stages, m0, data, plan(steps)),
  };
}

async function msPerStep(train: Train): Promise<number> {
  const t0 = performance.now();
  await train(1);
  const t1 = performance.now();
  await train(K + 1);
  const t2 = performance.now();
  return (t2 - t1 - (t1 - t0)) / K;
}

const info = await initBackend({ backend: 'webgpu' });
console.log(`${describeBackend(info)}; Adam, batch ${BATCH}, ${K} steps timed, ${ROUNDS} rounds`);
const data = gaussianMixture({ n: BATCH * (K + 1), shape: [28, 28, 1], numClasses: 10, seed: 7 });
const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)]!;
const rows: string[] = [];
for (const kind of ['cnn003', 'lenet5'] as const) {
  const spec = createModel(kind, { inputShape: [28, 28, 1], numClasses: 10 });
  const { before, after } = paths(spec, data);
  const cost = { before: await stepCost(before, 2, 4), after: await stepCost(after, 2, 4) };
  const ms = { before: [] as number[], after: [] as number[] };
  for (let r = 0; r < ROUNDS; r++) {
    ms.before.push(await msPerStep(before));
    ms.after.push(await msPerStep(after));
  }
  const c = (x: { dispatches: number; readbacks: number; bytesRead: number }) =>
    `${x.dispatches} / ${x.readbacks} / ${x.bytesRead}`;
  const list = (a: number[]) => a.map((v) => v.toFixed(0)).join(', ');
  rows.push(
    `| ${spec.name} | ${c(cost.before.perStep)} | ${c(cost.after.perStep)} | ${median(ms.before).toFixed(0)} (${list(ms.before)}) | ${median(ms.after).toFixed(0)} (${list(ms.after)}) | ${(median(ms.before) / median(ms.after)).toFixed(2)}× |`,
  );
}
console.log(
  '\n| model | before: dispatches / readbacks / bytes per step | after (fused conv) | before: ms per step, median (rounds) | after | before ÷ after |',
);
console.log('|---|---:|---:|---:|---:|---:|');
for (const r of rows) console.log(r);
