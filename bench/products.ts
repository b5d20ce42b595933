/**
 * `npm run bench -- products [--addon-baseline <fedscore_kernels.node>] [--threads 1,2] [--repeat 5]`
 * (or `npx tsx bench/products.ts …`): the native products (native/products.c) on the shapes the
 * models take, each cut into its fixed blocks, on 1 thread and on the cores (`--threads`).
 * With `--addon-baseline`, another build of the addon (an older commit's native/build, say) is
 * loaded into the same process and timed on the same operands, interleaved: its blocks, its
 * time and `baseline ÷ this` (above 1: this build is faster). Each cell keeps its best of
 * `--repeat` rounds (default 5), so that load from other processes falls on both alike.
 * Shapes: the MLP's 2000-image evaluation and training product, cnn003's dense layer on 2000
 * images and in training (forward, weight and input gradients), LeNet-5's second convolution
 * as its im2col product.
 */
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type Addon, loadBlasKernels } from '../src/ml/_blas_kernels.js';

/** One shape at one thread count. */
export interface ProductRow {
  shape: string;
  threads: number;
  blocks: number;
  ms: number;
  gflops: number;
  baselineBlocks: number | null;
  baselineMs: number | null;
  /** baselineMs ÷ ms: above 1, this build is faster. */
  ratio: number | null;
}

// name, transA, transB, m, n, k
const SHAPES: [string, number, number, number, number, number][] = [
  ['MLP evaluation 2000×784·784×200', 0, 0, 2000, 200, 784],
  ['MLP training 64×784·784×200', 0, 0, 64, 200, 784],
  ['cnn003 dense, evaluation 2000×18432·18432×128', 0, 0, 2000, 128, 18432],
  ['cnn003 dense, training 64×18432·18432×128', 0, 0, 64, 128, 18432],
  ['cnn003 dense, weight gradient (18432×64)ᵀ·64×128', 1, 0, 18432, 128, 64],
  ['cnn003 dense, input gradient 64×128·(18432×128)ᵀ', 0, 1, 64, 18432, 128],
  ['LeNet-5 conv 2, im2col of 2000 images 128000×150·150×16', 0, 0, 128000, 16, 150],
];

function option(args: readonly string[], name: string): string | undefined {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
}

function fail(message: string): never {
  console.error(`bench products: ${message}`);
  process.exit(2);
}

export async function main(
  args: readonly string[] = process.argv.slice(2),
): Promise<{ json: { products: ProductRow[] } }> {
  const load = loadBlasKernels();
  if (!load.ok) fail(`the native kernels are not built (${load.why}); run npm run build:native`);
  const addon = load.addon;
  let baseline: Addon | undefined;
  const baselinePath = option(args, '--addon-baseline');
  if (baselinePath !== undefined) {
    try {
      baseline = createRequire(import.meta.url)(resolve(baselinePath)) as Addon;
    } catch (e) {
      fail(`--addon-baseline: cannot load ${baselinePath}: ${(e as Error).message.split('\n')[0]}`);
    }
  }
  const threadsArg = option(args, '--threads') ?? `1,${availableParallelism()}`;
  const threads = [...new Set(threadsArg.split(',').map(Number))];
  if (!threads.every((t) => Number.isInteger(t) && t >= 1 && t <= 256))
    fail(`--threads: expected a comma-separated list of integers in [1, 256], got ${threadsArg}`);
  const repeat = Number(option(args, '--repeat') ?? 5);
  if (!Number.isInteger(repeat) || repeat < 1)
    fail(`--repeat: expected a positive integer, got ${option(args, '--repeat')}`);

  console.log(
    `\n## products — ${load.description}; ${availableParallelism()} cores${baseline ? `; baseline ${baselinePath}` : ''}\n`,
  );
  let seed = 12345;
  const random = () => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return seed / 2 ** 32 - 0.5;
  };
  const rows: ProductRow[] = [];
  for (const [shape, ta, tb, m, n, k] of SHAPES) {
    const a = Float32Array.from({ length: m * k }, random);
    const b = Float32Array.from({ length: k * n }, random);
    const c = new Float32Array(m * n);
    const time = (x: Addon, t: number) => {
      x.setLocalThreads(t);
      const reps = Math.max(3, Math.min(50, Math.round(2e9 / (m * n * k))));
      let best = Number.POSITIVE_INFINITY;
      for (let r = 0; r < reps; r++) {
        const t0 = performance.now();
        x.gemm(1, ta, tb, m, n, k, a, 0, b, 0, c, 0);
        best = Math.min(best, performance.now() - t0);
      }
      x.setLocalThreads(0);
      return best;
    };
    for (const t of threads) {
      let ms = Number.POSITIVE_INFINITY;
      let baselineMs = Number.POSITIVE_INFINITY;
      for (let r = 0; r < repeat; r++) {
        ms = Math.min(ms, time(addon, t));
        if (baseline) baselineMs = Math.min(baselineMs, time(baseline, t));
      }
      rows.push({
        shape,
        threads: t,
        blocks: addon.productBlocks(m, n, k),
        ms,
        gflops: (2 * m * n * k) / ms / 1e6,
        baselineBlocks: baseline
          ? typeof baseline.productBlocks === 'function'
            ? baseline.productBlocks(m, n, k)
            : -1
          : null,
        baselineMs: baseline ? baselineMs : null,
        ratio: baseline ? baselineMs / ms : null,
      });
    }
  }
  const cols = baseline ? ' baseline blocks | baseline ms | baseline ÷ this |' : '';
  console.log(`| product | threads | blocks | ms | GFLOP/s |${cols}`);
  console.log(`|---|---:|---:|---:|---:|${baseline ? '---:|---:|---:|' : ''}`);
  for (const r of rows) {
    const base =
      r.baselineMs === null
        ? ''
        : ` ${r.baselineBlocks === -1 ? '?' : r.baselineBlocks} | ${r.baselineMs.toFixed(2)} | ${r.ratio!.toFixed(2)} |`;
    console.log(
      `| ${r.shape} | ${r.threads} | ${r.blocks} | ${r.ms.toFixed(2)} | ${r.gflops.toFixed(1)} |${base}`,
    );
  }
  if (baseline) console.log('(baseline blocks "?": that build cannot say; best of the rounds, interleaved)');
  return { json: { products: rows } };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await main();
