/**
 * `npm run bench -- cores [--threads 1,2,4] [--players 15] [--repeat 3]` (or `npx tsx bench/cores.ts …`): the
 * CPU path on every core (issue 36). Prints the cores this process may run on
 * (`os.availableParallelism()`: `taskset -c 0,1 npm run bench -- cores` gives 2) and, for each
 * thread count of `--threads` (default: 1, 2, 4 and the cores; more threads than cores is
 * oversubscribed), the native kernels' time on
 *  - the exact per-round Shapley table of `--players` silos (MLP 784-200-10, 2,000 seeded
 *    synthetic test images, FedAvg, accuracy: set-up and all 2ⁿ coalition values through
 *    `createCoalitionEvaluator`, native/coalitions.c's queue of coalition chunks);
 *  - one large product, the first layer's [2000×784]·[784×200] (native/products.c's queue of
 *    fixed blocks), the best of 5 calls;
 * and whether the table and the product have the same bits as with one thread (they must).
 * The thread counts are interleaved `--repeat` times (default 3) and each keeps its best time, so
 * that load from other processes falls on all of them alike; the table's process CPU time ÷ its
 * wall time says how many cores it actually kept busy.
 * The thread count is set as FEDSCORE_BLAS_THREADS would set it (`loadBlasKernels`).
 */
import { availableParallelism, cpus } from 'node:os';
import { pathToFileURL } from 'node:url';
import { createRng } from '../scoring/seeded-rng.js';
import { gaussianMixture } from '../src/data/synthetic.js';
import { loadBlasKernels } from '../src/ml/_blas_kernels.js';
import { initBackend } from '../src/ml/backend.js';
import { createCoalitionEvaluator } from '../src/ml/coalition.js';
import { initParams, mlp } from '../src/ml/models.js';

/** One row: a thread count's times. */
export interface CoresRow {
  threads: number;
  cores: number;
  players: number;
  tableSeconds: number;
  /** Process CPU time ÷ wall time during the best table: the cores it kept busy. */
  tableBusyCores: number;
  productMs: number;
  tableIdentical: boolean;
  productIdentical: boolean;
}

function option(args: readonly string[], name: string): string | undefined {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
}

function parseList(text: string | undefined, name: string, fallback: number[]): number[] {
  if (text === undefined) return fallback;
  const list = text.split(',').map(Number);
  if (list.length === 0 || list.some((k) => !Number.isInteger(k) || k < 1 || k > 256))
    throw new RangeError(
      `bench cores: ${name}: expected integers in [1, 256] separated by commas, got '${text}'`,
    );
  return list;
}

const sameBits = (a: ArrayLike<number>, b: ArrayLike<number>) =>
  a.length === b.length && Array.from(a).every((x, i) => Object.is(x, b[i]));

export async function main(
  argv: readonly string[] = process.argv.slice(2),
): Promise<{ json: { cores: CoresRow[] } }> {
  const cores = availableParallelism();
  const threads = parseList(option(argv, '--threads'), '--threads', [...new Set([1, 2, 4, cores])]);
  const [players] = parseList(option(argv, '--players'), '--players', [15]);
  const [repeat] = parseList(option(argv, '--repeat'), '--repeat', [3]);
  if (players! > 20) throw new RangeError(`bench cores: --players: expected at most 20, got ${players}`);
  const n = players!;
  await initBackend({ backend: 'wasm' });
  const load = loadBlasKernels();
  if (!load.ok) throw new Error(`bench cores: the native kernels are needed (${load.why})`);
  const addon = load.addon;

  const spec = mlp({ hidden: [200], inputShape: [28, 28, 1], numClasses: 10 });
  const test = gaussianMixture({ n: 2000, shape: [28, 28, 1], numClasses: 10, seed: 9 });
  const m0 = initParams(spec, 2);
  const updates = Array.from({ length: n }, (_, i) => {
    const u = initParams(spec, 100 + i);
    for (let k = 0; k < u.length; k++) u[k] = u[k]! * 0.05;
    return u;
  });
  const rng = createRng(4);
  const [M, K, N] = [2000, 784, 200];
  const a = Float32Array.from({ length: M * K }, () => rng.next() - 0.5);
  const b = Float32Array.from({ length: K * N }, () => rng.next() - 0.5);

  console.log(
    `\n## CPU path on every core — exact per-round Shapley n = ${n} (MLP 784-200-10, 2,000 test images) and a [${M}×${K}]·[${K}×${N}] product\n`,
  );
  console.log(
    `cores this process may run on (os.availableParallelism()): ${cores} of ${cpus().length}; default native threads: ${addon.info().threads}; ${cpus()[0]?.model ?? 'cpu'}\n`,
  );
  const best = new Map<number, { tableSeconds: number; busy: number; productMs: number }>();
  let firstTable: Float64Array | undefined;
  let firstProduct: Float32Array | undefined;
  const identical = new Map<number, { table: boolean; product: boolean }>();
  for (let r = 0; r < repeat!; r++)
    for (const t of threads) {
      const withT = loadBlasKernels({ ...process.env, FEDSCORE_BLAS_THREADS: String(t) });
      if (!withT.ok || withT.addon.info().threads !== t)
        throw new Error(`bench cores: could not set ${t} threads`);
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const ev = createCoalitionEvaluator({
        spec,
        m0,
        updates,
        weights: updates.map((_, i) => 100 + 10 * i),
        data: test,
      });
      let table: Float64Array;
      try {
        if (!ev.native)
          throw new Error('bench cores: the coalition evaluator did not take the native kernel');
        table = await ev.table('accuracy');
      } finally {
        ev.dispose();
      }
      const tableSeconds = (performance.now() - t0) / 1000;
      const cpu = process.cpuUsage(cpu0);
      const busy = (cpu.user + cpu.system) / 1e6 / tableSeconds;
      const c = new Float32Array(M * N);
      let productMs = Number.POSITIVE_INFINITY;
      for (let k = 0; k < 5; k++) {
        const p0 = performance.now();
        addon.gemm(1, 0, 0, M, N, K, a, 0, b, 0, c, 0);
        productMs = Math.min(productMs, performance.now() - p0);
      }
      firstTable ??= table;
      firstProduct ??= Float32Array.from(c);
      const same = identical.get(t) ?? { table: true, product: true };
      identical.set(t, {
        table: same.table && sameBits(table, firstTable),
        product: same.product && sameBits(c, firstProduct),
      });
      const was = best.get(t);
      best.set(t, {
        tableSeconds: Math.min(was?.tableSeconds ?? Number.POSITIVE_INFINITY, tableSeconds),
        busy: was === undefined || tableSeconds < was.tableSeconds ? busy : was.busy,
        productMs: Math.min(was?.productMs ?? Number.POSITIVE_INFINITY, productMs),
      });
    }
  console.log(
    `best of ${repeat}, thread counts interleaved\n\n| native threads | cores | table s | busy cores (CPU ÷ wall) | table identical to 1 thread | product ms | product identical |`,
  );
  console.log('|---:|---:|---:|---:|---|---:|---|');
  const rows: CoresRow[] = threads.map((t) => {
    const b = best.get(t)!;
    const same = identical.get(t)!;
    const row: CoresRow = {
      threads: t,
      cores,
      players: n,
      tableSeconds: b.tableSeconds,
      tableBusyCores: b.busy,
      productMs: b.productMs,
      tableIdentical: same.table,
      productIdentical: same.product,
    };
    console.log(
      `| ${t}${t > cores ? ' (oversubscribed)' : ''} | ${cores} | ${b.tableSeconds.toFixed(2)} | ${b.busy.toFixed(2)} | ${same.table ? 'yes' : 'NO'} | ${b.productMs.toFixed(1)} | ${same.product ? 'yes' : 'NO'} |`,
    );
    return row;
  });
  loadBlasKernels({ ...process.env, FEDSCORE_BLAS_THREADS: String(cores) });
  return { json: { cores: rows } };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
