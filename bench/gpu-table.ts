/**
 * `npm run bench -- gpu-table [--players 10,12] [--rows 300] [--repeat 2]` (or `npx tsx
 * bench/gpu-table.ts …`): where the GPU coalition table's time goes, and the reduced shaders
 * (src/ml/_coalition_wgsl_reduced.ts, the default) against the fused one before them
 * (_coalition_wgsl.ts, `gpuKernel: 'fused'`), interleaved in one run (fused, reduced, fused,
 * reduced …; best of each; the first run of each includes compiling its pipelines, reported
 * apart) on the active webgpu adapter. Issue 36; docs/performance.md, "The coalition table on the
 * GPU: where the time goes".
 *
 * Model and data as bench/gpu.ts's table rows: the MLP 784-200-10, FedAvg, weights 100 + 10i,
 * `--rows` seeded synthetic test images (default 300: on lavapipe, a CPU Vulkan driver, the
 * table of n = 12 at 2,000 images takes minutes). Per kernel and n, from the backend's own calls
 * (tfjs-backend-webgpu 4.22, wrapped while the evaluator runs, as bench/_gpu_counts.ts does):
 *  - dispatches (`recordAndSubmit`, one per compute pass dispatch) and its host time (encoding;
 *    on the first run, pipeline compiles too);
 *  - uploads (`uploadToGPU` of a tensor that still holds host values): count and bytes — the
 *    coefficient rows and, in setting up, the test set and the stacks' inputs;
 *  - readbacks (`getBufferData`: copy to a staging buffer, submit, `mapAsync`): count, bytes, and
 *    the wall time spent waiting in them (the device's compute shows up here: the host waits for
 *    the chunk it reads, with the next one queued);
 *  - set-up (the evaluator's first-layer stacks, queued) and table seconds, the rest of the host
 *    time (coefficient rows, bookkeeping) = table − encode − upload − wait;
 *  - the work: coalitions per chunk, workgroups of its row shader (one invocation per coalition
 *    and row, 64 per workgroup; the reduced shader's workgroups hold one coalition each, rows
 *    padded to 64), first-layer terms per hidden unit and row (fused: n; reduced: the members,
 *    n/2 on average), and the two tables' agreement: counts equal bit for bit, loss sums' largest
 *    relative difference.
 */
import { pathToFileURL } from 'node:url';
import * as tf from '@tensorflow/tfjs';
import { gaussianMixture } from '../src/data/synthetic.js';
import { rowBlocks } from '../src/ml/_coalition_wgsl_reduced.js';
import { describeBackend, initBackend } from '../src/ml/backend.js';
import { createCoalitionEvaluator } from '../src/ml/coalition.js';
import { createModel } from '../src/ml/model-registry.js';
import { type Examples, initParams } from '../src/ml/models.js';

/** What the wrapped backend saw while one table was built. */
export interface TableProfile {
  kernel: 'fused' | 'reduced';
  setupS: number;
  tableS: number;
  dispatches: number;
  encodeS: number;
  uploads: number;
  bytesUploaded: number;
  uploadS: number;
  readbacks: number;
  bytesRead: number;
  waitS: number;
}

/** One row per n and kernel. */
export interface GpuTableRow extends TableProfile {
  n: number;
  rows: number;
  /** The first run (pipeline compiles included), seconds. */
  firstS: number;
  /** Coalitions per dispatch and workgroups per shader dispatch (of a full chunk). */
  chunk: number;
  workgroups: number;
  /** First-layer terms per hidden unit, row and coalition (mean). */
  firstLayerTerms: number;
}

interface Backend {
  recordAndSubmit: (...a: unknown[]) => unknown;
  getBufferData: (buffer: { size: number }) => Promise<unknown>;
  uploadToGPU: (dataId: unknown) => void;
  tensorMap: { get(id: unknown): { values: unknown; shape: number[]; dtype: string } | undefined };
}

/** Runs `fn` with the webgpu backend's calls wrapped; adds what they did to `p`. */
async function watched<T>(p: TableProfile, fn: () => Promise<T> | T): Promise<T> {
  const b = tf.backend() as unknown as Backend;
  if (typeof b.recordAndSubmit !== 'function' || typeof b.uploadToGPU !== 'function')
    throw new Error(
      `bench gpu-table: the active backend '${tf.getBackend()}' is not tfjs-backend-webgpu 4.x`,
    );
  const [record, read, upload] = [b.recordAndSubmit, b.getBufferData, b.uploadToGPU];
  b.recordAndSubmit = function (this: unknown, ...a: unknown[]) {
    const t = performance.now();
    try {
      return record.apply(this, a);
    } finally {
      p.dispatches++;
      p.encodeS += (performance.now() - t) / 1000;
    }
  };
  // The wait: wall time while at least one readback is pending (two may overlap).
  let pending = 0;
  let since = 0;
  b.getBufferData = async function (this: unknown, buffer: { size: number }) {
    if (pending++ === 0) since = performance.now();
    try {
      return await read.call(this, buffer);
    } finally {
      p.readbacks++;
      p.bytesRead += buffer.size;
      if (--pending === 0) p.waitS += (performance.now() - since) / 1000;
    }
  };
  b.uploadToGPU = function (this: Backend, dataId: unknown) {
    const d = b.tensorMap.get(dataId);
    // Host values not yet on the device (uploadToGPU clears them once copied).
    const bytes = d?.values ? 4 * d.shape.reduce((x, y) => x * y, 1) : 0;
    const t = performance.now();
    try {
      return upload.call(this, dataId);
    } finally {
      if (bytes > 0) {
        p.uploads++;
        p.bytesUploaded += bytes;
        p.uploadS += (performance.now() - t) / 1000;
      }
    }
  };
  try {
    return await fn();
  } finally {
    b.recordAndSubmit = record;
    b.getBufferData = read;
    b.uploadToGPU = upload;
  }
}

const spec = createModel('mlp', { hidden: [200], inputShape: [28, 28, 1], numClasses: 10 });

function setupOf(n: number, test: Examples) {
  const m0 = initParams(spec, 2);
  const updates = Array.from({ length: n }, (_, i) => {
    const u = initParams(spec, 100 + i);
    for (let k = 0; k < u.length; k++) u[k] = u[k]! * 0.05;
    return u;
  });
  return { spec, m0, updates, weights: updates.map((_, i) => 100 + 10 * i), data: test };
}

/** One table with `kernel`, profiled: [profile, table counts as accuracies, negLoss]. */
async function profileTable(
  kernel: 'fused' | 'reduced',
  n: number,
  test: Examples,
): Promise<{ p: TableProfile; accuracy: Float64Array; perClass: Float64Array; negLoss: Float64Array }> {
  const p: TableProfile = {
    kernel,
    setupS: 0,
    tableS: 0,
    dispatches: 0,
    encodeS: 0,
    uploads: 0,
    bytesUploaded: 0,
    uploadS: 0,
    readbacks: 0,
    bytesRead: 0,
    waitS: 0,
  };
  const setup = setupOf(n, test);
  let t = performance.now();
  const ev = await watched(p, () => createCoalitionEvaluator(setup, { gpuKernel: kernel }));
  p.setupS = (performance.now() - t) / 1000;
  try {
    t = performance.now();
    const accuracy = await watched(p, () => ev.table('accuracy'));
    p.tableS = (performance.now() - t) / 1000;
    return {
      p,
      accuracy,
      perClass: await ev.table('perClassAccuracy'),
      negLoss: await ev.table('negLoss'),
    };
  } finally {
    ev.dispose();
  }
}

/** The chunk the evaluator picks (src/ml/_coalition_gpu.ts, 128 MiB), and a dispatch's workgroups. */
function work(kernel: 'fused' | 'reduced', n: number, N: number) {
  const [H, C] = [200, 10];
  const head = H * C + C;
  const B = rowBlocks(N);
  const per = kernel === 'reduced' ? 4 * (2 * head + (B + 1) * (C + 1) + n) : 4 * (2 * N + head);
  const cap = kernel === 'reduced' ? 16_384 : 4096;
  const chunk = Math.min(2 ** n, Math.max(1, Math.min(cap, Math.floor(2 ** 27 / per))));
  // One invocation per coalition and row, 64 per workgroup; the reduced shader's workgroups hold
  // one coalition each (rows padded to blocks of 64).
  const workgroups = kernel === 'reduced' ? chunk * B : Math.ceil((chunk * N) / 64);
  // First-layer terms per hidden unit and row: fused n; reduced the coalition's members (n/2 on
  // average over all 2ⁿ).
  return { chunk, workgroups, firstLayerTerms: kernel === 'reduced' ? n / 2 : n };
}

/**
 * The interleaved rows for each n of `players` on the active webgpu backend (printed as a
 * Markdown table; also run by bench/gpu.ts, so that scripts/gpu-check.sh prints them on a GPU).
 */
export async function profileRows(
  players: readonly number[],
  test: Examples,
  repeat: number,
): Promise<GpuTableRow[]> {
  const rows = test.n;
  console.log(
    '| n | kernel | first run s | best s | set-up s | table s | dispatches | encode s | uploads / MB | readbacks / MB read | wait in readbacks s | other host s | coalitions per chunk | workgroups of the row shader per chunk | first-layer terms per hidden unit and row |',
  );
  console.log('|---|---|---:|---:|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---:|');
  const out: GpuTableRow[] = [];
  for (const n of players) {
    const best: Partial<Record<'fused' | 'reduced', TableProfile>> = {};
    const first: Partial<Record<'fused' | 'reduced', number>> = {};
    const tables: Partial<Record<'fused' | 'reduced', Awaited<ReturnType<typeof profileTable>>>> = {};
    for (let r = 0; r < repeat; r++)
      for (const kernel of ['fused', 'reduced'] as const) {
        const res = await profileTable(kernel, n, test);
        const s = res.p.setupS + res.p.tableS;
        first[kernel] ??= s;
        const b = best[kernel];
        if (!b || s < b.setupS + b.tableS) best[kernel] = res.p;
        tables[kernel] = res;
      }
    for (const kernel of ['fused', 'reduced'] as const) {
      const p = best[kernel]!;
      const row: GpuTableRow = { ...p, n, rows, firstS: first[kernel]!, ...work(kernel, n, rows) };
      out.push(row);
      const mb = (x: number) => (x / 2 ** 20).toFixed(2);
      const other = p.tableS - p.encodeS - p.uploadS - p.waitS;
      console.log(
        `| ${n} | ${kernel} | ${row.firstS.toFixed(2)} | ${(p.setupS + p.tableS).toFixed(2)} | ${p.setupS.toFixed(3)} | ${p.tableS.toFixed(2)} | ${p.dispatches} | ${p.encodeS.toFixed(3)} | ${p.uploads} / ${mb(p.bytesUploaded)} | ${p.readbacks} / ${mb(p.bytesRead)} | ${p.waitS.toFixed(2)} | ${other.toFixed(3)} | ${row.chunk} | ${row.workgroups} | ${row.firstLayerTerms.toFixed(2)} |`,
      );
    }
    const [f, t] = [tables.fused!, tables.reduced!];
    const same = (x: Float64Array, y: Float64Array) => x.every((v, m) => Object.is(v, y[m]));
    let rel = 0;
    for (const [m, v] of f.negLoss.entries()) rel = Math.max(rel, Math.abs(t.negLoss[m]! - v) / Math.abs(v));
    console.log(
      `| ${n} | agreement | accuracy table equal: ${same(f.accuracy, t.accuracy) ? 'yes' : 'NO'}; per-class equal: ${same(f.perClass, t.perClass) ? 'yes' : 'NO'}; negLoss largest relative difference ${rel.toExponential(2)} | ||||||||||||`,
    );
  }
  return out;
}

export async function main(): Promise<{ json: { gpuTable: GpuTableRow[] } }> {
  const args = process.argv.slice(2);
  const opt = (name: string, dflt: string) => {
    const at = args.indexOf(name);
    return at >= 0 ? (args[at + 1] ?? '') : dflt;
  };
  const players = opt('--players', '10,12').split(',').map(Number);
  const rows = Number(opt('--rows', '300'));
  const repeat = Number(opt('--repeat', '2'));
  if (!players.every((k) => Number.isInteger(k) && k >= 2 && k <= 22))
    throw new RangeError(
      `--players: expected integers in [2, 22] separated by commas, got ${players.join(',')}`,
    );
  if (!(Number.isInteger(rows) && rows >= 1))
    throw new RangeError(`--rows: expected a positive integer, got ${rows}`);
  if (!(Number.isInteger(repeat) && repeat >= 1))
    throw new RangeError(`--repeat: expected a positive integer, got ${repeat}`);
  const adapter = describeBackend(await initBackend({ backend: 'webgpu' }));
  const test = gaussianMixture({ n: rows, shape: [28, 28, 1], numClasses: 10, seed: 9 });
  console.log(
    `\n## gpu-table — ${adapter}\nMLP 784-200-10, ${rows} test images, FedAvg; fused then reduced, ${repeat}× interleaved, best of each\n`,
  );
  return { json: { gpuTable: await profileRows(players, test, repeat) } };
}

// Run directly (`npx tsx bench/gpu-table.ts`); not when bundled into scripts/gpu-check.sh's
// bench/gpu.ts, where import.meta.url is the bundle's.
if (
  /gpu-table\.[cm]?[jt]s$/.test(process.argv[1] ?? '') &&
  import.meta.url === pathToFileURL(process.argv[1]!).href
)
  await main();
