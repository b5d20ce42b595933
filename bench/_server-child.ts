/**
 * The service of the load benchmark (./_server-load.ts) in its own process, so that its resident
 * memory is measured alone: the app over the store given as JSON on the command line, listening on
 * 127.0.0.1 (the per-silo rate limit lifted: the load is many silos, not one abusive one). Prints
 * `listening <url>`; SIGTERM closes it.
 *
 * It answers commands on stdin, one a line, each with one line on stdout:
 * - `sample`: `sample <JSON>` — {@link MemorySample}: what the process's memory is made of, found
 *   without disturbing it (the V8 heap as it is, the live heap after the last full collection V8
 *   ran by itself since the previous sample — recorded by v8.GCProfiler —, the audit thread's heap);
 * - `sample gc` (only when started with `--expose-gc`): the same after a forced full collection of
 *   the main isolate, with the RSS before and after it;
 * - `snapshot <file>`: writes a V8 heap snapshot (after a collection) to <file>, then
 *   `snapshot <file>`. Writing one takes as much memory again for a while (the RSS that follows is
 *   not the service's own).
 */
import { createInterface } from 'node:readline';
import v8 from 'node:v8';
import { buildApp } from '../src/server/app.js';
import { openStore, type StoreLocation } from '../src/server/store/database.js';
import { ADMIN } from './_server-loader.js';

/** One `sample` answer: bytes. */
export interface MemorySample {
  /** Resident memory when the command arrived. */
  rss: number;
  /** With `sample gc`: resident memory once the forced collection is done. */
  rssAfterGc: number | null;
  /** Objects in the main isolate's heap (live after a forced collection; as found otherwise). */
  heapUsed: number;
  /** What V8 has committed for the main isolate's heap. */
  heapTotal: number;
  /** Memory of C++ objects bound to JavaScript (Buffers included). */
  external: number;
  /** Of `external`: ArrayBuffers and Buffers. */
  arrayBuffers: number;
  /** Committed bytes per V8 heap space (new_space, old_space, large_object_space, code_space, …). */
  spaces: Record<string, number>;
  /** What V8 itself has malloc'ed for the main isolate (outside its heap). */
  malloced: number;
  /**
   * The full (mark-compact) collections V8 ran by itself since the previous sample, and the main
   * heap's size right after the last of them (null when none ran): the live heap, unforced.
   */
  fullGcs: number;
  liveAfterFullGc: number | null;
  /** The largest committed main heap a collection since the previous sample started from. */
  peakHeapTotal: number;
  /** The worker threads' heaps (the service's audit thread), as found (`process.report`). */
  workers: { heapUsed: number; heapTotal: number }[];
}

/** The part of a diagnostic report read here. */
interface Report {
  workers?: { javascriptHeap?: { usedMemory?: number; totalMemory?: number } }[];
}

/** The part of v8.GCProfiler's record read here. */
interface GcRecord {
  statistics: {
    gcType: string;
    beforeGC: { heapStatistics: { totalHeapSize: number } };
    afterGC: { heapStatistics: { usedHeapSize: number } };
  }[];
}

let profiler = new v8.GCProfiler();
profiler.start();

function sample(force: boolean): MemorySample {
  const rss = process.memoryUsage.rss();
  const gcs = (profiler.stop() as GcRecord).statistics;
  profiler = new v8.GCProfiler();
  profiler.start();
  const full = gcs.filter((g) => g.gcType === 'MarkSweepCompact');
  const gc = (globalThis as { gc?: () => void }).gc;
  if (force) {
    if (gc === undefined) throw new Error('sample gc: the service was not started with --expose-gc');
    gc();
  }
  const m = process.memoryUsage();
  return {
    rss,
    rssAfterGc: force ? m.rss : null,
    heapUsed: m.heapUsed,
    heapTotal: m.heapTotal,
    external: m.external,
    arrayBuffers: m.arrayBuffers,
    spaces: Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [s.space_name, s.space_size])),
    malloced: v8.getHeapStatistics().malloced_memory,
    fullGcs: full.length,
    liveAfterFullGc: full.at(-1)?.afterGC.heapStatistics.usedHeapSize ?? null,
    peakHeapTotal: Math.max(m.heapTotal, ...gcs.map((g) => g.beforeGC.heapStatistics.totalHeapSize)),
    workers: ((process.report.getReport() as Report).workers ?? []).map((w) => ({
      heapUsed: w.javascriptHeap?.usedMemory ?? Number.NaN,
      heapTotal: w.javascriptHeap?.totalMemory ?? Number.NaN,
    })),
  };
}

const location = JSON.parse(process.argv[2]!) as StoreLocation;
const store = await openStore(location);
const app = await buildApp({
  store,
  adminToken: ADMIN,
  // vector reads too: a small, fast shape (1 × 4 silos) runs over 60 rounds a minute
  rateLimit: { max: 1e9, maxVectorReads: 1e9, windowMs: 60_000 },
  closeStore: true,
});
const url = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`listening ${url}\n`);
process.once('SIGTERM', () => {
  void app.close().then(() => process.exit(0));
});

createInterface({ input: process.stdin }).on('line', (line) => {
  try {
    if (line === 'sample' || line === 'sample gc')
      process.stdout.write(`sample ${JSON.stringify(sample(line === 'sample gc'))}\n`);
    else if (line.startsWith('snapshot ')) {
      const file = line.slice('snapshot '.length);
      (globalThis as { gc?: () => void }).gc?.();
      v8.writeHeapSnapshot(file);
      process.stdout.write(`snapshot ${file}\n`);
    } else process.stdout.write(`error unknown command: ${JSON.stringify(line)}\n`);
  } catch (e) {
    process.stdout.write(`error ${(e as Error).message}\n`);
  }
});
