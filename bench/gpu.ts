/**
 * `npm run bench -- gpu [--quick] [--chunk-mb M]` (also `scripts/gpu-check.sh`, which runs this
 * file bundled on a GPU machine without network): the webgpu backend against the CPU path
 * (wasm, with the OpenBLAS kernels when built) in the same process, on the same machine.
 *
 * Rows (docs/performance.md, "GPU: WebGPU"):
 *  - the adapter (vendor, architecture, description; software or hardware);
 *  - agreement with the CPU path: a square matMul's max |diff|; an MLP 784-200-10's Δ after a
 *    few Adam steps; the exact Shapley table of the smallest n (accuracies, Shapley values);
 *  - training samples/s of the MLP 784-200-10, cnn003 and LeNet-5 (Adam, batch 64) on the GPU
 *    against the CPU path on one core and on all cores (the engine trains one silo per core on
 *    worker threads; this bench counts the one-core rate × cores, an upper bound of the CPU path,
 *    so the ratio against it is a lower bound for the GPU);
 *  - what one optimizer step costs on the device, dispatches and bytes read back, on the training
 *    path (src/ml/_gpu_train.ts: the fused MLP step; for the CNNs the fused conv step on a
 *    hardware adapter, the generic path on a software one), for the CNNs on both conv paths
 *    (`FEDSCORE_GPU_CONV=fused` and `generic`), and, as "before", on the tfjs-ops path
 *    (`FEDSCORE_GPU_TRAIN=tfjs`);
 *  - k silos trained from the same model (the MLP), batched into the same dispatches against one
 *    after another: dispatches per round-step for k = 1, 4, 8 and, for k = 4, wall time per
 *    round-step, interleaved (bench/_gpu_silos.ts);
 *  - exact per-round Shapley at n = 15 and n = 20 (MLP 784-200-10, 2,000 test images): the
 *    2ⁿ-coalition accuracy table on the GPU against the CPU path, seconds and ratio; on the GPU
 *    with the reduced shaders (the default, src/ml/_coalition_wgsl_reduced.ts) and, as "before", the
 *    fused one they replaced (`gpuKernel: 'fused'`), whose accuracy tables must be equal.
 *  - the PyTorch anchor (bench/torch_anchor.py via bench/_torch_anchor.ts, same sizes, same run)
 *    when a python3 imports torch: its rows and each row's ratio to it (fedscore ÷ PyTorch
 *    samples/s for training; PyTorch s ÷ fedscore s for the tables); else one line saying so.
 * `--quick`: small sizes (n = 4 and 6, 200 test images, fewer samples), for lavapipe and CI.
 * `--cpu`: the CPU path's rows only (wasm with the OpenBLAS kernels when built) against the
 * anchor; no WebGPU adapter needed. `--players 15` (a comma-separated list): the tables' n
 * instead of 15 and 20 (n = 20 takes minutes on a small CPU, for fedscore and PyTorch alike).
 * Data are seeded synthetic images (src/data/synthetic.ts): the timing does not depend on them.
 */
import { availableParallelism } from 'node:os';
import * as tf from '@tensorflow/tfjs';
import { createRng } from '../scoring/seeded-rng.js';
import { exactShapley } from '../scoring/shapley.js';
import { gaussianMixture } from '../src/data/synthetic.js';
import { oneBlasThreadHere } from '../src/ml/_blas_kernels.js';
import { type GpuConvPath, gpuConvPath } from '../src/ml/_gpu_train.js';
import { type BackendName, describeBackend, initBackend } from '../src/ml/backend.js';
import { createCoalitionEvaluator } from '../src/ml/coalition.js';
import { createModel } from '../src/ml/model-registry.js';
import { type Examples, initParams, type ModelSpec } from '../src/ml/models.js';
import { trainLocal } from '../src/ml/train.js';
import { stepCost } from './_gpu_counts.js';
import { printSiloRows, type SilosBench, siloRows } from './_gpu_silos.js';
import { type Anchor, runAnchor } from './_torch_anchor.js';
import { type GpuTableRow, profileRows } from './gpu-table.js';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const cpuOnly = args.includes('--cpu');
const chunkAt = args.indexOf('--chunk-mb');
const chunkMb = chunkAt >= 0 ? Number(args[chunkAt + 1]) : undefined;
if (chunkMb !== undefined && !(Number.isFinite(chunkMb) && chunkMb > 0)) {
  console.error(`bench gpu: --chunk-mb: expected a positive number, got ${args[chunkAt + 1]}`);
  process.exit(2);
}

const playersAt = args.indexOf('--players');
const playersArg = playersAt >= 0 ? args[playersAt + 1] : undefined;
const playersList = playersArg?.split(',').map(Number);
if (playersAt >= 0 && !playersList?.every((k) => Number.isInteger(k) && k >= 2 && k <= 22)) {
  console.error(`bench gpu: --players: expected integers in [2, 22] separated by commas, got ${playersArg}`);
  process.exit(2);
}

const BASE_SIZES = quick
  ? { matmul: 128, trainSamples: { mlp: 256, cnn003: 16, lenet5: 64 }, testImages: 200, players: [4, 6] }
  : {
      matmul: 1024,
      trainSamples: { mlp: 4096, cnn003: 512, lenet5: 2048 },
      testImages: 2000,
      players: [15, 20],
    };
const SIZES = playersList ? { ...BASE_SIZES, players: playersList } : BASE_SIZES;

/** What `main` returns for `--json` (`gpu`). */
export interface GpuBench {
  adapter: string;
  cores: number;
  agreement: {
    matmulMaxAbsDiff: number;
    mlpDeltaMaxAbsDiff: number;
    shapleyMaxAbsDiff: number;
    tableEqual: boolean;
  };
  /** null (with `--cpu`) where the GPU was not run. */
  training: {
    model: string;
    gpu: number | null;
    cpuOneCore: number;
    cpuAllCores: number;
    ratio: number | null;
    torch: number | null;
    gpuToTorch: number | null;
    cpuOneCoreToTorch: number | null;
    /** GPU dispatches and bytes read back per optimizer step (bench/_gpu_counts.ts); null with --cpu. */
    perStep: StepCounts | null;
    /** The same with FEDSCORE_GPU_TRAIN=tfjs: the tfjs-ops path before the fused kernels (issue 36). */
    perStepTfjs: StepCounts | null;
    /** The conv models' two paths (FEDSCORE_GPU_CONV=fused and =generic); null for the MLP and with --cpu. */
    perStepConv: { fused: StepCounts; generic: StepCounts } | null;
    /** The conv path this adapter takes by default, the one `gpu` and `perStep` measured (gpuConvPath). */
    convPath: GpuConvPath | null;
    /** A whole 2-step call: the steps, the upload of the examples, the final reads. */
    call: { steps: number; dispatches: number; readbacks: number; bytesRead: number } | null;
  }[];
  shapley: {
    n: number;
    coalitions: number;
    gpuSeconds: number | null;
    /** The fused shader before issue 36's reduced ones (`gpuKernel: 'fused'`), seconds; null with --cpu. */
    gpuFusedSeconds: number | null;
    /** Its accuracy table equals the reduced one's (null with --cpu). */
    fusedTableEqual: boolean | null;
    cpuSeconds: number;
    ratio: number | null;
    chunk: string;
    torchSeconds: number | null;
    torchToGpu: number | null;
    torchToCpu: number | null;
  }[];
  /** The tables' profile per kernel (bench/gpu-table.ts); null with --cpu. */
  tableProfile: GpuTableRow[] | null;
  /** bench/torch_anchor.py's rows (same sizes), or why it did not run. */
  anchor: Anchor | { missing: string };
  /** k silos from one model batched vs one after another (bench/_gpu_silos.ts); null with --cpu. */
  silos: SilosBench | null;
}

/** Runs `f` with the environment variable `name` (src/ml/_gpu_train.ts reads them) set to `value`, then restores it. */
async function withEnv<T>(
  name: 'FEDSCORE_GPU_TRAIN' | 'FEDSCORE_GPU_CONV',
  value: string,
  f: () => Promise<T>,
): Promise<T> {
  const old = process.env[name];
  process.env[name] = value;
  try {
    return await f();
  } finally {
    if (old === undefined) delete process.env[name];
    else process.env[name] = old;
  }
}

type StepCounts = { dispatches: number; readbacks: number; bytesRead: number };

/** A conv model's cost per step on the fused conv step and on the generic path. */
async function convPaths(
  countSteps: (steps: number) => Promise<unknown>,
): Promise<{ fused: StepCounts; generic: StepCounts }> {
  const fused = (await withEnv('FEDSCORE_GPU_CONV', 'fused', () => stepCost(countSteps, 2, 4))).perStep;
  const generic = (await withEnv('FEDSCORE_GPU_CONV', 'generic', () => stepCost(countSteps, 2, 4))).perStep;
  return { fused, generic };
}

async function use(name: BackendName): Promise<string> {
  const info = await initBackend({ backend: name });
  return describeBackend(info);
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

const images = (n: number, seed: number): Examples =>
  gaussianMixture({ n, shape: [28, 28, 1], numClasses: 10, seed });

/** Samples/s of one silo's local training (Adam, batch 64, one epoch), after a warm-up. */
async function trainingRate(spec: ModelSpec, data: Examples): Promise<number> {
  const m0 = initParams(spec, 1);
  const w = Math.min(data.n, 128);
  const warm = {
    ...data,
    n: w,
    x: data.x.subarray(0, w * 784),
    y: Int32Array.from({ length: w }, (_, i) => data.y[i]!),
  };
  await trainLocal(spec, m0, warm, { seed: 0, weightDecay: 1e-3 });
  const t = performance.now();
  await trainLocal(spec, m0, data, { seed: 1, weightDecay: 1e-3 });
  return data.n / ((performance.now() - t) / 1000);
}

async function shapleyTable(
  spec: ModelSpec,
  n: number,
  test: Examples,
  gpuKernel: 'reduced' | 'fused' = 'reduced',
): Promise<{ table: Float64Array; seconds: number; chunk: string }> {
  const m0 = initParams(spec, 2);
  const updates = Array.from({ length: n }, (_, i) => {
    const u = initParams(spec, 100 + i);
    for (let k = 0; k < u.length; k++) u[k] = u[k]! * 0.05;
    return u;
  });
  const t = performance.now();
  const ev = createCoalitionEvaluator(
    { spec, m0, updates, weights: updates.map((_, i) => 100 + 10 * i), data: test },
    { gpuKernel, ...(chunkMb !== undefined ? { gpuChunkBytes: Math.round(chunkMb * 2 ** 20) } : {}) },
  );
  try {
    const table = await ev.table('accuracy');
    const how = ev.native ? 'native kernel' : ev.gpu ? `${ev.mode}, batched dispatches` : ev.mode;
    return { table, seconds: (performance.now() - t) / 1000, chunk: how };
  } finally {
    ev.dispose();
  }
}

export async function main(): Promise<{ json: { gpu: GpuBench } } | undefined> {
  let gpuLine = 'none (--cpu: the CPU path only)';
  if (!cpuOnly)
    try {
      gpuLine = await use('webgpu');
    } catch (e) {
      console.log(`\n## gpu: skipped, no WebGPU adapter (${(e as Error).message}); --cpu runs the CPU rows`);
      if (process.env.FEDSCORE_GPU_CHECK_MAIN === '1') process.exitCode = 1;
      return undefined;
    }
  const cpuLine = await use('wasm');
  const onGpu = async () => {
    if (!cpuOnly) await use('webgpu');
  };
  await onGpu();
  const cores = availableParallelism();
  console.log(
    `\n## gpu — ${gpuLine}\nCPU path: ${cpuLine}; ${cores} cores${quick ? '; --quick sizes' : ''}\n`,
  );

  // Agreement.
  const square = SIZES.matmul;
  const rng = createRng(3);
  const a = Float32Array.from({ length: square * square }, () => rng.next());
  const product = async () => {
    const x = tf.tensor2d(a, [square, square]);
    const y = tf.matMul(x, x);
    const out = (await y.data()) as Float32Array;
    tf.dispose([x, y]);
    return out;
  };
  const mlp = createModel('mlp', { hidden: [200], inputShape: [28, 28, 1], numClasses: 10 });
  let matmulMaxAbsDiff = Number.NaN;
  let mlpDeltaMaxAbsDiff = Number.NaN;
  if (!cpuOnly) {
    const mg = await product();
    await use('wasm');
    const mc = await product();
    await use('webgpu');
    const few = images(256, 5);
    const opts = { seed: 2, steps: 4, weightDecay: 1e-3 };
    const dg = await trainLocal(mlp, initParams(mlp, 1), few, opts);
    await use('wasm');
    const dc = await trainLocal(mlp, initParams(mlp, 1), few, opts);
    await use('webgpu');
    matmulMaxAbsDiff = maxAbsDiff(mg, mc);
    mlpDeltaMaxAbsDiff = maxAbsDiff(dg.delta, dc.delta);
  }

  // The PyTorch anchor, same sizes, before the fedscore rows (its threads do not overlap them).
  const anchor = runAnchor(SIZES, cores);
  const torchRate = (i: number) =>
    'missing' in anchor ? null : (anchor.training[i]?.samplesPerSecond ?? null);
  const torchSeconds = (n: number) =>
    'missing' in anchor ? null : (anchor.shapley.find((r) => r.n === n)?.seconds ?? null);
  const over = (a: number | null, b: number | null) => (a === null || b === null ? null : a / b);

  // Training.
  const training: GpuBench['training'] = [];
  const counted = images(256, 8); // four batches of 64 in one pass: per-step counts without pass ends
  for (const [i, kind] of (['mlp', 'cnn003', 'lenet5'] as const).entries()) {
    const spec = kind === 'mlp' ? mlp : createModel(kind, { inputShape: [28, 28, 1], numClasses: 10 });
    const data = images(SIZES.trainSamples[kind], 7);
    const gpu = cpuOnly ? null : await trainingRate(spec, data);
    const countSteps = (steps: number) => trainLocal(spec, initParams(spec, 1), counted, { seed: 3, steps });
    const cost = cpuOnly ? null : await stepCost(countSteps, 2, 4);
    const before = cpuOnly
      ? null
      : await withEnv('FEDSCORE_GPU_TRAIN', 'tfjs', () => stepCost(countSteps, 2, 4));
    // The conv models: both conv paths, whichever this adapter takes by default (gpuConvPath).
    const conv = cpuOnly || spec === mlp ? null : await convPaths(countSteps);
    await use('wasm');
    // "1 core": the native kernels on one thread (the engine's workers train that way, one per core).
    oneBlasThreadHere(true);
    const cpu = await trainingRate(spec, data).finally(() => oneBlasThreadHere(false));
    await onGpu();
    training.push({
      model: spec.name,
      gpu,
      cpuOneCore: cpu,
      cpuAllCores: cpu * cores,
      ratio: over(gpu, cpu * cores),
      torch: torchRate(i),
      gpuToTorch: over(gpu, torchRate(i)),
      cpuOneCoreToTorch: over(cpu, torchRate(i)),
      perStep: cost?.perStep ?? null,
      perStepTfjs: before?.perStep ?? null,
      perStepConv: conv,
      convPath: cpuOnly || spec === mlp ? null : gpuConvPath(),
      call: cost?.call ?? null,
    });
  }

  // Several silos in the same dispatches (the MLP).
  const silos = cpuOnly ? null : await siloRows(mlp, images, quick ? 3 : 5);

  // Exact per-round Shapley.
  const test = images(SIZES.testImages, 9);
  const shapley: GpuBench['shapley'] = [];
  let agreement = { shapleyMaxAbsDiff: Number.NaN, tableEqual: false };
  for (const n of SIZES.players) {
    const before = cpuOnly ? null : await shapleyTable(mlp, n, test, 'fused');
    const g = cpuOnly ? null : await shapleyTable(mlp, n, test);
    await use('wasm');
    const c = await shapleyTable(mlp, n, test);
    await onGpu();
    if (g !== null && n === SIZES.players[0])
      agreement = {
        shapleyMaxAbsDiff: maxAbsDiff(exactShapley(n, g.table), exactShapley(n, c.table)),
        tableEqual: maxAbsDiff(g.table, c.table) === 0,
      };
    shapley.push({
      n,
      coalitions: 2 ** n,
      gpuSeconds: g?.seconds ?? null,
      gpuFusedSeconds: before?.seconds ?? null,
      fusedTableEqual: g && before ? maxAbsDiff(g.table, before.table) === 0 : null,
      cpuSeconds: c.seconds,
      ratio: over(c.seconds, g?.seconds ?? null),
      chunk: g ? `gpu ${g.chunk}, cpu ${c.chunk}` : `cpu ${c.chunk}`,
      torchSeconds: torchSeconds(n),
      torchToGpu: over(torchSeconds(n), g?.seconds ?? null),
      torchToCpu: over(torchSeconds(n), c.seconds),
    });
  }

  // Where the table's time goes, per kernel (bench/gpu-table.ts): dispatches, uploads,
  // readbacks, waits; the fused and reduced shaders interleaved once more.
  let profile: GpuTableRow[] | null = null;
  if (!cpuOnly) {
    console.log(
      '\nThe tables on the GPU, where the time goes (bench/gpu-table.ts; fused shader before, reduced after, once each):',
    );
    profile = await profileRows(SIZES.players, test, 1);
  }

  const result: GpuBench = {
    adapter: gpuLine,
    cores,
    agreement: { matmulMaxAbsDiff, mlpDeltaMaxAbsDiff, ...agreement },
    training,
    shapley,
    tableProfile: profile,
    anchor,
    silos,
  };
  const f = (x: number | null, d = 1) => (x === null ? '—' : x.toFixed(d));
  const fx = (x: number | null) => (x === null ? '—' : `${x.toFixed(2)}×`);
  if (!cpuOnly) {
    console.log('| agreement with the CPU path | value |\n|---|---:|');
    console.log(`| ${square}² matMul max abs diff | ${matmulMaxAbsDiff.toExponential(2)} |`);
    console.log(
      `| MLP 784-200-10 Δ after 4 Adam steps, max abs diff | ${mlpDeltaMaxAbsDiff.toExponential(2)} |`,
    );
    console.log(
      `| exact Shapley n = ${SIZES.players[0]}: accuracy table equal / Shapley max abs diff | ${result.agreement.tableEqual ? 'yes' : 'no'} / ${result.agreement.shapleyMaxAbsDiff.toExponential(2)} |\n`,
    );
  }
  const torchLine =
    'missing' in anchor
      ? anchor.missing
      : `PyTorch anchor: torch ${anchor.torch} on ${anchor.device} (${anchor.python}); threads per row: the faster of ${anchor.runs.map((r) => r.threads).join(' and ')}`;
  console.log(torchLine);
  const thr = (t: number | undefined) => (t === undefined ? '' : ` (${t} thr)`);
  console.log(
    '\n| training (Adam, batch 64) | GPU samples/s | CPU 1 core | CPU all cores (1 core × cores) | GPU ÷ CPU all cores | PyTorch | GPU ÷ PyTorch | CPU 1 core ÷ PyTorch |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
  for (const [i, r] of training.entries()) {
    const t = 'missing' in anchor ? undefined : anchor.training[i]?.threads;
    console.log(
      `| ${r.model} | ${f(r.gpu)} | ${f(r.cpuOneCore)} | ${f(r.cpuAllCores)} | ${fx(r.ratio)} | ${f(r.torch)}${thr(t)} | ${fx(r.gpuToTorch)} | ${fx(r.cpuOneCoreToTorch)} |`,
    );
  }
  if (!cpuOnly) {
    console.log(
      '\n| webgpu, one optimizer step (Adam, batch 64) | dispatches | readbacks | bytes read back | conv models: FEDSCORE_GPU_CONV=fused / generic dispatches (readbacks) | before: FEDSCORE_GPU_TRAIN=tfjs dispatches / readbacks / bytes | a 2-step call: dispatches / readbacks / bytes read |',
    );
    console.log('|---|---:|---:|---:|---|---:|---|');
    for (const r of training) {
      const b = r.perStepTfjs!;
      const c = r.perStepConv;
      const conv = c
        ? `${c.fused.dispatches} (${c.fused.readbacks}) / ${c.generic.dispatches} (${c.generic.readbacks}); default here: ${r.convPath}`
        : '—';
      console.log(
        `| ${r.model} | ${r.perStep!.dispatches} | ${r.perStep!.readbacks} | ${r.perStep!.bytesRead} | ${conv} | ${b.dispatches} / ${b.readbacks} / ${b.bytesRead} | ${r.call!.dispatches} / ${r.call!.readbacks} / ${r.call!.bytesRead} |`,
      );
    }
  }
  if (silos) printSiloRows(silos);
  console.log(
    `\n| exact per-round Shapley (MLP 784-200-10, ${SIZES.testImages} test images) | coalitions | GPU s | GPU s before (fused shader; table equal) | CPU s | CPU ÷ GPU | PyTorch s | PyTorch ÷ GPU | PyTorch ÷ CPU | paths |`,
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---|');
  for (const r of shapley) {
    const t = 'missing' in anchor ? undefined : anchor.shapley.find((x) => x.n === r.n)?.threads;
    console.log(
      `| n = ${r.n} | ${r.coalitions} | ${f(r.gpuSeconds, 2)} | ${f(r.gpuFusedSeconds, 2)}${r.fusedTableEqual === null ? '' : r.fusedTableEqual ? ' (yes)' : ' (NO)'} | ${f(r.cpuSeconds, 2)} | ${fx(r.ratio)} | ${f(r.torchSeconds, 3)}${thr(t)} | ${fx(r.torchToGpu)} | ${fx(r.torchToCpu)} | ${r.chunk} |`,
    );
  }
  return { json: { gpu: result } };
}

// Run directly (the bundle of scripts/gpu-check.sh, or `npx tsx bench/gpu.ts`).
if (process.env.FEDSCORE_GPU_CHECK_MAIN === '1' || import.meta.url === `file://${process.argv[1]}`)
  await main();
