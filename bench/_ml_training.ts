/**
 * The training part of bench/ml.ts: one silo's samples/s (main thread with its default threads,
 * and on one thread as a pool worker runs), two silos on two worker threads, the wasm kernels
 * alone, against PyTorch at each of its thread settings (bench/ml_reference.py), and where a
 * step's CPU time goes (the fused native step's profile, per layer and phase).
 *
 * Every fedscore figure is the median of REPEATS runs taken in alternation (per model: one silo
 * default, one silo on one thread, two silos on two workers), since the machine is shared.
 * PyTorch runs in its own process before these, with its own alternation and median.
 */
import { oneBlasThreadHere, useBlasKernels } from '../src/ml/_blas_kernels.js';
import { nativeTrainer } from '../src/ml/_native_train.js';
import { type Examples, initParams, type ModelSpec } from '../src/ml/models.js';
import { createTrainPool } from '../src/ml/parallel.js';
import { trainLocal } from '../src/ml/train.js';
import { report } from './_json.js';

const REPEATS = 5;

/** One model of the table: its spec, label, key in ml_reference.py's JSON, and samples per run. */
export interface TrainingModel {
  readonly spec: ModelSpec;
  readonly label: string;
  readonly key: string;
  readonly n: number;
}

/** ml_reference.py's `training` object: per model key, samples/s and CPU/wall per setting. */
export type ReferenceTraining = Record<string, Record<string, number>>;

/** One row of the `training` JSON key (samples/s; ratios are fedscore ÷ the named figure). */
export interface TrainingRow {
  model: string;
  /** One silo in the main thread, default threads (two cores on this machine). */
  fedscore: number;
  /** One silo on one thread (as in a pool worker). */
  fedscore1Thread: number;
  /** Two silos at once on two worker threads: the sum of their samples over the wall time. */
  fedscore2Workers: number;
  /** One silo on the wasm backend's kernels alone (null without the addon). */
  fedscoreWasmKernels: number | null;
  /** torch.set_num_threads(1); OpenBLAS keeps its own threads in the linear layers. */
  pytorch1Thread: number | null;
  /** torch.set_num_threads(2). */
  pytorch2Threads: number | null;
  /** torch.set_num_threads(1) and OpenBLAS on one thread. */
  pytorch1ThreadBlas1Thread: number | null;
  /** PyTorch's CPU seconds per wall second in each setting. */
  pytorchCpuPerWall: Record<string, number> | null;
  /** The fastest PyTorch setting and its rate: the anchor. */
  pytorchBestSetting: string | null;
  pytorchBest: number | null;
  /** fedscore ÷ pytorchBest (target ≥ 0.9). */
  ratio: number | null;
  /** fedscore2Workers ÷ fedscore1Thread: two one-thread silos against one (target ≥ 1.7). */
  workersScaling: number;
  /** fedscore2Workers ÷ fedscore (one silo that already uses both cores). */
  workersVsOneSilo: number;
}

const SETTINGS: [string, string][] = [
  ['2', 'pytorch2Threads'],
  ['1', 'pytorch1Thread'],
  ['1blas1', 'pytorch1ThreadBlas1Thread'],
];

const median = (a: readonly number[]) => {
  const s = [...a].sort((x, y) => x - y);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

function head(d: Examples, n: number, features: number): Examples {
  return { ...d, n, x: d.x.subarray(0, n * features), y: (d.y as Int32Array).subarray(0, n) };
}

async function oneSiloRate(m: TrainingModel, data: Examples): Promise<number> {
  const features = data.x.length / data.n;
  const m0 = initParams(m.spec, 1);
  const t = performance.now();
  await trainLocal(m.spec, m0, head(data, m.n, features), { seed: 1, weightDecay: 1e-3 });
  return m.n / ((performance.now() - t) / 1000);
}

/**
 * Measures every model and returns the rows (also reported under `training`). `reference` is
 * ml_reference.py's `training` object with OpenBLAS, when PyTorch ran.
 */
export async function measureTraining(
  models: readonly TrainingModel[],
  data: Examples,
  reference: ReferenceTraining | undefined,
  native: boolean,
): Promise<TrainingRow[]> {
  const features = data.x.length / data.n;
  const one: number[][] = models.map(() => []);
  const single: number[][] = models.map(() => []);
  const workers: number[][] = models.map(() => []);
  for (const m of models)
    await trainLocal(m.spec, initParams(m.spec, 1), head(data, 128, features), {
      seed: 0,
      weightDecay: 1e-3,
    });
  const wasm: (number | null)[] = [];
  for (const m of models) {
    if (!native) {
      wasm.push(null);
      continue;
    }
    useBlasKernels(false);
    try {
      await oneSiloRate({ ...m, n: 64 }, data);
      wasm.push(await oneSiloRate(m, data));
    } finally {
      useBlasKernels(true);
    }
  }
  // Two silos at once, one per core on worker threads (one OpenBLAS thread each): how the
  // engine trains. Each silo trains on the model's n examples with its own seed. The three
  // settings take turns per model and repeat, so that a load change on the shared machine
  // hits each alike (their ratios are the targets).
  const pool = createTrainPool({ workers: 2 });
  try {
    const tasks = models.map((m) =>
      [0, 1].map((i) => ({
        spec: m.spec,
        m0: initParams(m.spec, 1),
        data: head(data, m.n, features),
        options: { seed: 10 + i, weightDecay: 1e-3 },
      })),
    );
    for (const t of tasks) await pool.train(t.map((x) => ({ ...x, data: head(x.data, 128, features) })));
    for (let rep = 0; rep < REPEATS; rep++)
      for (const [i, m] of models.entries()) {
        one[i]!.push(await oneSiloRate(m, data));
        oneBlasThreadHere(true);
        try {
          single[i]!.push(await oneSiloRate(m, data));
        } finally {
          oneBlasThreadHere(false);
        }
        const t = performance.now();
        await pool.train(tasks[i]!);
        workers[i]!.push((2 * m.n) / ((performance.now() - t) / 1000));
      }
  } finally {
    await pool.close();
  }
  const rows = models.map((m, i): TrainingRow => {
    const ref = reference?.[m.key];
    const rate = (k: string) => (typeof ref?.[k] === 'number' ? ref[k] : null);
    const present = SETTINGS.filter(([k]) => rate(k) !== null);
    const best = present.reduce<[string, number] | null>(
      (b, [k]) => (b === null || rate(k)! > b[1] ? [k, rate(k)!] : b),
      null,
    );
    const fedscore = median(one[i]!);
    const fedscore1Thread = median(single[i]!);
    const fedscore2Workers = median(workers[i]!);
    return {
      model: m.label,
      fedscore,
      fedscore1Thread,
      fedscore2Workers,
      fedscoreWasmKernels: wasm[i]!,
      pytorch1Thread: rate('1'),
      pytorch2Threads: rate('2'),
      pytorch1ThreadBlas1Thread: rate('1blas1'),
      pytorchCpuPerWall: ref ? Object.fromEntries(present.map(([k]) => [k, ref[`${k}_cpu`] ?? NaN])) : null,
      pytorchBestSetting: best ? SETTINGS.find(([k]) => k === best[0])![1] : null,
      pytorchBest: best ? best[1] : null,
      ratio: best ? fedscore / best[1] : null,
      workersScaling: fedscore2Workers / fedscore1Thread,
      workersVsOneSilo: fedscore2Workers / fedscore,
    };
  });
  report('training', rows);
  return rows;
}

const fmt = (v: number | null, digits = 0) =>
  v === null || !Number.isFinite(v)
    ? '—'
    : v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** The training table (Markdown). */
export function printTraining(rows: readonly TrainingRow[]): void {
  console.log(
    `\n### Training, samples/s (median of ${REPEATS}; PyTorch: threads as torch.set_num_threads, "BLAS 1" = OpenBLAS on one thread too)\n`,
  );
  console.log(
    '| model | fedscore, 1 silo | 1 silo, 1 thread | 2 silos on 2 workers | wasm kernels only | PyTorch 1 thread | PyTorch 2 threads | PyTorch 1 thread, BLAS 1 | fedscore ÷ best PyTorch | 2 workers ÷ 1 silo on 1 thread | 2 workers ÷ 1 silo |',
  );
  console.log('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows)
    console.log(
      `| ${r.model} | ${fmt(r.fedscore)} | ${fmt(r.fedscore1Thread)} | ${fmt(r.fedscore2Workers)} | ${fmt(r.fedscoreWasmKernels)} | ${fmt(r.pytorch1Thread)} | ${fmt(r.pytorch2Threads)} | ${fmt(r.pytorch1ThreadBlas1Thread)} | ${r.ratio === null ? '—' : `${r.ratio.toFixed(2)} (vs ${r.pytorchBestSetting})`} | ${r.workersScaling.toFixed(2)} | ${r.workersVsOneSilo.toFixed(2)} |`,
    );
  const cpu = rows.filter((r) => r.pytorchCpuPerWall);
  if (cpu.length)
    console.log(
      `\nPyTorch CPU s per wall s (1 thread / 2 threads / 1 thread, BLAS 1): ${cpu
        .map(
          (r) =>
            `${r.model} ${['1', '2', '1blas1'].map((k) => (r.pytorchCpuPerWall![k] ?? NaN).toFixed(2)).join(' / ')}`,
        )
        .join('; ')}`,
    );
}

const PHASES = ['forward', 'bias+ReLU', 'ReLU grad', 'input grad', 'weight grad', 'Adam'];

/**
 * Where a fused step's CPU time goes (native/train.c's profile), per model and layer: STEPS
 * steps of batch 64 on the first examples, main-thread threads. Nothing without the addon.
 */
export function printStepProfile(models: readonly TrainingModel[], data: Examples): void {
  const features = data.x.length / data.n;
  const lines: string[] = [];
  for (const m of models) {
    const trainer = nativeTrainer(m.spec, 64);
    if (!trainer) return;
    const theta = initParams(m.spec, 1);
    const count = m.spec.paramCount;
    const [grad, mm, vv] = [0, 0, 0].map(() => new Float32Array(count)) as [
      Float32Array,
      Float32Array,
      Float32Array,
    ];
    const x = data.x.subarray(0, 64 * features);
    const labels = Int32Array.from((data.y as Int32Array).subarray(0, 64));
    const adam = { m: mm, v: vv, hyper: new Float64Array([1e-3, 0.9, 0.999, 1e-3, 1, 1e-8]) };
    const steps = Math.max(4, Math.round(m.n / 64 / 2));
    for (let i = 0; i < 3; i++) trainer.step(theta, grad, x, labels, 64, adam);
    trainer.profile();
    const t = performance.now();
    for (let i = 0; i < steps; i++) trainer.step(theta, grad, x, labels, 64, adam);
    const wall = (performance.now() - t) / steps;
    const p = trainer.profile().map((v) => v / steps);
    const total = p.reduce((a, b) => a + b, 0);
    m.spec.layers.forEach((l, i) => {
      const cells = p.subarray(6 * i, 6 * i + 6);
      if (cells.every((v) => v < 0.0005)) return;
      const what =
        l.kind === 'dense'
          ? `dense ${l.inputs}→${l.units}`
          : l.kind === 'conv'
            ? `conv ${l.kernel}×${l.kernel} ${l.inChannels}→${l.outChannels}`
            : `${l.kind === 'pool' ? `${l.op} pool ${l.size}×${l.size}` : l.kind}`;
      lines.push(`| ${m.label} | ${i} ${what} | ${[...cells].map((v) => v.toFixed(3)).join(' | ')} |`);
    });
    lines.push(
      `| ${m.label} | **step**: CPU ${total.toFixed(2)} ms (loss ${p.at(-1)!.toFixed(3)}), wall ${wall.toFixed(2)} ms | | | | | | |`,
    );
  }
  console.log(
    '\n### Where a training step goes (fused native step, batch 64, CPU ms per step summed over threads)\n',
  );
  console.log(`| model | layer | ${PHASES.join(' | ')} |`);
  console.log(`|---|---|${PHASES.map(() => '---:|').join('')}`);
  for (const l of lines) console.log(l);
}
