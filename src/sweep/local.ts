/**
 * The local default of a sweep: without a queue, the seeds of one configuration run in child
 * processes on this machine, one per core (each trains its silos on the training thread pool;
 * the rest of a seed — coalition evaluations, secure aggregation, the references — is
 * single-threaded apart from the native kernels, which is what the processes spread; each child's
 * native kernels get its share of the cores, `FEDSCORE_BLAS_THREADS` = ⌊cores ÷ children⌋ unless
 * it is set, so that the processes do not oversubscribe them). Each seed's record is what the seed
 * computes in one process (src/sim/experiment.ts `runSeedRecord`), so the assembled results.json
 * is the single-process one, timings aside.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';
import { workerBlasThreads } from '../ml/core-share.js';
import type { ExperimentConfig } from '../records/config.js';
import type { SeedRecord } from '../sim/experiment.js';

/** How the seeds run. */
export interface LocalOptions {
  /** Child processes (default: min(seeds, available cores)). */
  workers?: number;
  backend?: string;
  /** Absolute paths of plugin modules each child imports first. */
  plugins?: readonly string[];
  /** Called as each seed finishes. */
  onSeed?: (seed: number, done: number, total: number) => void;
}

type Reply = { ok: true; seed: number; record: SeedRecord } | { ok: false; seed: number; error: string };

/** The child's module and the flags that run it: compiled JavaScript, or TypeScript through tsx. */
function child(): { module: URL; execArgv: string[] } {
  if (!import.meta.url.endsWith('.ts'))
    return { module: new URL('./_seed-process.js', import.meta.url), execArgv: [] };
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm')).href;
  return { module: new URL('./_seed-process.ts', import.meta.url), execArgv: ['--import', tsx] };
}

/** Default number of child processes for `seeds` seeds: one per core, no more than seeds. */
export const defaultWorkers = (seeds: number) => Math.max(1, Math.min(seeds, availableParallelism()));

/**
 * Runs every seed of `cfg` in child processes. @returns the records in `seeds`' order.
 * @throws Error naming the first seed that failed (the others are stopped).
 */
export async function runSeedsLocally(
  cfg: ExperimentConfig,
  seeds: readonly number[],
  o: LocalOptions = {},
): Promise<SeedRecord[]> {
  const n = Math.max(1, Math.min(o.workers ?? defaultWorkers(seeds.length), seeds.length));
  const { module, execArgv } = child();
  const records = new Map<number, SeedRecord>();
  const pending = [...seeds];
  const children: ChildProcess[] = [];
  const stopped = new Set<ChildProcess>();
  const stop = (c: ChildProcess) => {
    if (stopped.has(c) || !c.connected) return;
    stopped.add(c);
    c.send({ stop: true });
  };
  try {
    await new Promise<void>((resolve, reject) => {
      let failed = false;
      const next = (c: ChildProcess) => {
        const seed = pending.shift();
        if (seed === undefined) {
          stop(c);
          return;
        }
        c.send({ cfg, seed, ...(o.backend ? { backend: o.backend } : {}) });
      };
      const env = { ...process.env };
      if (env.FEDSCORE_BLAS_THREADS === undefined || env.FEDSCORE_BLAS_THREADS === '')
        env.FEDSCORE_BLAS_THREADS = String(workerBlasThreads(n));
      for (let i = 0; i < n; i++) {
        const c = fork(module, [], { execArgv, env, serialization: 'advanced', stdio: 'inherit' });
        children.push(c);
        c.on('message', (r: Reply) => {
          if (failed) return;
          if (!r.ok) {
            failed = true;
            reject(new Error(`seed ${r.seed}: ${r.error}`));
            return;
          }
          records.set(r.seed, r.record);
          o.onSeed?.(r.seed, records.size, seeds.length);
          if (records.size === seeds.length) resolve();
          else next(c);
        });
        c.on('exit', (code, signal) => {
          if (!failed && records.size < seeds.length && (code !== 0 || signal)) {
            failed = true;
            reject(new Error(`a seed process exited (${signal ?? `code ${code}`}) before its seed was done`));
          }
        });
        c.send({ plugins: o.plugins ?? [] });
        next(c);
      }
    });
  } catch (e) {
    for (const c of children) c.kill('SIGTERM');
    throw e;
  } finally {
    for (const c of children) stop(c);
    await Promise.all(
      children.map((c) =>
        c.exitCode !== null || c.signalCode !== null ? undefined : new Promise((r) => c.on('exit', r)),
      ),
    );
  }
  return seeds.map((s) => records.get(s)!);
}
