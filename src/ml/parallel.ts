/**
 * Local training of many silos in parallel on worker threads: the wasm backend is
 * single-threaded here, so one worker per core trains one silo at a time. Results are the same
 * bits as `trainLocal` on the same backend in the main thread (each task is deterministic).
 */
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { type BackendName, currentBackend, parseBackendName } from './backend.js';
import { checkExamples, checkParams, type Examples, type ModelSpec } from './models.js';
import type { TrainOptions, TrainResult } from './train.js';

/** One silo's training job. `options.onEpoch` is not supported across threads and is rejected. */
export interface TrainTask {
  readonly spec: ModelSpec;
  readonly m0: Float32Array;
  readonly data: Examples;
  readonly options: TrainOptions;
}

/** Options for `trainParallel`. */
export interface ParallelOptions {
  /** Worker threads (default: min(available cores, tasks)). */
  workers?: number;
  /** Backend of the workers (default: the main thread's current backend, else auto order). */
  backend?: BackendName;
}

interface Reply {
  id: number;
  ok: boolean;
  error?: string;
  delta?: Float32Array;
  epochLosses?: Float64Array;
  steps?: number;
  samples?: number;
}

/**
 * The worker to start. From compiled JavaScript it is `_train_worker.js`; from TypeScript
 * sources (tsx, vitest) it is a small bootstrap that registers tsx's loader in the worker and
 * then imports `_train_worker.ts` (tsx is a devDependency, only needed in that case).
 */
function startWorker(backend: BackendName | undefined): Worker {
  if (!import.meta.url.endsWith('.ts'))
    return new Worker(new URL('./_train_worker.js', import.meta.url), { workerData: { backend } });
  const tsxRoot = dirname(createRequire(import.meta.url).resolve('tsx/package.json'));
  const tsxApi = pathToFileURL(join(tsxRoot, 'dist/esm/api/index.mjs')).href;
  const target = new URL('./_train_worker.ts', import.meta.url).href;
  const boot = `import(${JSON.stringify(tsxApi)}).then((m) => { m.register(); return import(${JSON.stringify(target)}); });`;
  return new Worker(boot, { eval: true, workerData: { backend } });
}

/**
 * Trains every task (see `trainLocal`) on a pool of worker threads; results in task order.
 *
 * @throws RangeError/TypeError naming the bad task field or option; Error when a worker fails
 *   (the message names the task).
 */
export async function trainParallel(
  tasks: readonly TrainTask[],
  options: ParallelOptions = {},
): Promise<TrainResult[]> {
  if (!Array.isArray(tasks)) throw new TypeError('tasks: expected an array');
  tasks.forEach((t, i) => {
    checkParams(t.spec, t.m0, `tasks[${i}].m0`);
    checkExamples(t.spec, t.data, `tasks[${i}].data`);
    if (!t.options || !Number.isFinite(t.options.seed))
      throw new RangeError(`tasks[${i}].options.seed: expected a finite number`);
    if (t.options.onEpoch) throw new TypeError(`tasks[${i}].options.onEpoch: callbacks cannot cross threads`);
  });
  const workers = options.workers ?? Math.min(availableParallelism(), tasks.length);
  if (!Number.isInteger(workers) || workers < 1)
    throw new RangeError(`workers: expected a positive integer, got ${workers}`);
  if (options.backend !== undefined) parseBackendName(options.backend);
  if (tasks.length === 0) return [];
  const backend = options.backend ?? currentBackend()?.name;
  const results: TrainResult[] = new Array(tasks.length);
  let next = 0;
  const pool = Array.from({ length: Math.min(workers, tasks.length) }, () => startWorker(backend));
  try {
    await Promise.all(
      pool.map(
        (w) =>
          new Promise<void>((resolve, reject) => {
            const send = () => {
              if (next >= tasks.length) return resolve();
              const id = next++;
              const t = tasks[id]!;
              w.postMessage({
                id,
                spec: t.spec,
                m0: t.m0,
                data: {
                  x: t.data.x,
                  y: t.data.y,
                  n: t.data.n,
                  shape: t.data.shape,
                  numClasses: t.data.numClasses,
                },
                options: t.options,
              });
            };
            w.on('message', (r: Reply) => {
              if (!r.ok) return reject(new Error(`tasks[${r.id}]: ${r.error}`));
              results[r.id] = {
                delta: r.delta!,
                epochLosses: r.epochLosses!,
                steps: r.steps!,
                samples: r.samples!,
              };
              send();
            });
            w.on('error', (e) => reject(new Error(`trainParallel: worker failed (${e.message})`)));
            w.on('exit', (code) => {
              if (next < tasks.length || code !== 0)
                reject(new Error(`trainParallel: worker exited with code ${code}`));
            });
            send();
          }),
      ),
    );
  } finally {
    await Promise.all(pool.map((w) => w.terminate()));
  }
  return results;
}
