/**
 * The service of the load benchmark (./_server-load.ts) in its own process, so that its resident
 * memory is measured alone: the app over the store given as JSON on the command line, listening on
 * 127.0.0.1 (the per-silo rate limit lifted: the load is many silos, not one abusive one). Prints
 * `listening <url>`; SIGTERM closes it.
 *
 * With `FEDSCORE_BENCH_HEAP=1` (the parent then starts it with `--expose-gc`) it also answers
 * commands on stdin, one a line, each with one line on stdout:
 * - `heap`: `heap <JSON>` — {@link HeapSample}: RSS before and after a full garbage collection,
 *   and the V8 heap (used, total, per space) and off-heap buffers after it;
 * - `snapshot <file>`: writes a V8 heap snapshot (after a collection) to <file>, then
 *   `snapshot <file>`.
 */
import { createInterface } from 'node:readline';
import v8 from 'node:v8';
import { buildApp } from '../src/server/app.js';
import { openStore, type StoreLocation } from '../src/server/store/database.js';
import { ADMIN } from './_server-loader.js';

/** One `heap` answer: bytes, every field. */
export interface HeapSample {
  /** Resident memory when the command arrived (before the collection). */
  rssBeforeGc: number;
  /** Resident memory once the collection is done. */
  rssAfterGc: number;
  /** Live JavaScript objects of the main isolate after the collection. */
  heapUsed: number;
  /** What V8 has reserved for the main isolate's heap (committed pages). */
  heapTotal: number;
  /** Memory of C++ objects bound to JavaScript (Buffers included). */
  external: number;
  /** Of `external`: ArrayBuffers and Buffers. */
  arrayBuffers: number;
  /** Committed bytes per V8 heap space (new_space, old_space, large_object_space, code_space, …). */
  spaces: Record<string, { size: number; used: number }>;
  /** What V8 itself has malloc'ed for the main isolate (outside its heap). */
  malloced: number;
  /**
   * The heaps of the worker threads (the service's audit thread), as found — not collected: the
   * forced collection is the main isolate's. From the diagnostic report (`process.report`).
   */
  workers: { heapUsed: number; heapTotal: number }[];
  /** Whether a collection ran (false: no `--expose-gc`, the figures are as found). */
  collected: boolean;
}

/** The part of a diagnostic report read here. */
interface Report {
  workers?: { javascriptHeap?: { usedMemory?: number; totalMemory?: number } }[];
}

function sample(): HeapSample {
  const rssBeforeGc = process.memoryUsage.rss();
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const m = process.memoryUsage();
  return {
    rssBeforeGc,
    rssAfterGc: m.rss,
    heapUsed: m.heapUsed,
    heapTotal: m.heapTotal,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
    spaces: Object.fromEntries(
      v8.getHeapSpaceStatistics().map((s) => [s.space_name, { size: s.space_size, used: s.space_used_size }]),
    ),
    malloced: v8.getHeapStatistics().malloced_memory,
    workers: ((process.report.getReport() as Report).workers ?? []).map((w) => ({
      heapUsed: w.javascriptHeap?.usedMemory ?? Number.NaN,
      heapTotal: w.javascriptHeap?.totalMemory ?? Number.NaN,
    })),
    collected: gc !== undefined,
  };
}

const location = JSON.parse(process.argv[2]!) as StoreLocation;
const store = await openStore(location);
const app = await buildApp({
  store,
  adminToken: ADMIN,
  rateLimit: { max: 1e9, windowMs: 60_000 },
  closeStore: true,
});
const url = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`listening ${url}\n`);
process.once('SIGTERM', () => {
  void app.close().then(() => process.exit(0));
});

if (process.env.FEDSCORE_BENCH_HEAP === '1')
  createInterface({ input: process.stdin }).on('line', (line) => {
    if (line === 'heap') process.stdout.write(`heap ${JSON.stringify(sample())}\n`);
    else if (line.startsWith('snapshot ')) {
      const file = line.slice('snapshot '.length);
      (globalThis as { gc?: () => void }).gc?.();
      v8.writeHeapSnapshot(file);
      process.stdout.write(`snapshot ${file}\n`);
    } else process.stdout.write(`error unknown command: ${JSON.stringify(line)}\n`);
  });
