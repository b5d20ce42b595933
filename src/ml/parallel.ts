/**
 * Local training of many silos in parallel on worker threads: the wasm backend is
 * single-threaded here, so one worker per core trains one silo at a time. Results are the same
 * bits as `trainLocal` on the same backend in the main thread (each task is deterministic).
 *
 * Workers and the native kernels' threads do not oversubscribe the cores: each worker's large
 * products and fused training steps run on `workerBlasThreads(workers)` threads, its share of
 * the cores (one when there is a worker per core). The bits do not depend on it.
 */
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { type BackendName, currentBackend, parseBackendName } from './backend.js';
import { workerBlasThreads } from './core-share.js';
import { checkExamples, checkParams, type Examples, type ModelSpec } from './models.js';
import type { TrainOptions, TrainResult } from './train.js';

export { workerBlasThreads } from './core-share.js';

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
function startWorker(backend: BackendName | undefined, blasThreads: number): Worker {
  const workerData = { backend, blasThreads };
  if (!import.meta.url.endsWith('.ts'))
    return new Worker(new URL('./_train_worker.js', import.meta.url), { workerData });
  const tsxRoot = dirname(createRequire(import.meta.url).resolve('tsx/package.json'));
  const tsxApi = pathToFileURL(join(tsxRoot, 'dist/esm/api/index.mjs')).href;
  const target = new URL('./_train_worker.ts', import.meta.url).href;
  const boot = `import(${JSON.stringify(tsxApi)}).then((m) => { m.register(); return import(${JSON.stringify(target)}); });`;
  return new Worker(boot, { eval: true, workerData });
}

function checkTasks(tasks: readonly TrainTask[]): void {
  if (!Array.isArray(tasks)) throw new TypeError('tasks: expected an array');
  for (const [i, t] of tasks.entries()) {
    checkParams(t.spec, t.m0, `tasks[${i}].m0`);
    checkExamples(t.spec, t.data, `tasks[${i}].data`);
    if (!t.options || !Number.isFinite(t.options.seed))
      throw new RangeError(`tasks[${i}].options.seed: expected a finite number`);
    if (t.options.onEpoch) throw new TypeError(`tasks[${i}].options.onEpoch: callbacks cannot cross threads`);
  }
}

/** A reusable set of training workers (start-up, ≈0.5–2 s each, is paid once). */
export interface TrainPool {
  readonly workers: number;
  /**
   * Trains every task (see `trainLocal`); results in task order. One batch at a time. The
   * pool keeps a shared copy of each task's examples for later batches: do not modify them
   * after handing them over.
   */
  train(tasks: readonly TrainTask[]): Promise<TrainResult[]>;
  /** Stops the workers. */
  close(): Promise<void>;
}

/**
 * Starts `workers` training threads (default: available cores).
 * Throws RangeError naming a bad option.
 */
export function createTrainPool(options: ParallelOptions = {}): TrainPool {
  const count = options.workers ?? availableParallelism();
  if (!Number.isInteger(count) || count < 1)
    throw new RangeError(`workers: expected a positive integer, got ${count}`);
  if (options.backend !== undefined) parseBackendName(options.backend);
  const backend = options.backend ?? currentBackend()?.name;
  const blasThreads = workerBlasThreads(count);
  const pool = Array.from({ length: count }, () => startWorker(backend, blasThreads));
  let busy = false;
  let closed = false;
  return {
    workers: count,
    async train(tasks) {
      checkTasks(tasks);
      if (closed) throw new Error('train: the pool is closed');
      if (busy) throw new Error('train: the pool is already training a batch');
      busy = true;
      try {
        return await runBatch(pool, tasks);
      } finally {
        busy = false;
      }
    },
    async close() {
      closed = true;
      await Promise.all(pool.map((w) => w.terminate()));
    },
  };
}

/**
 * Shared copies of the examples tasks send, made once per array: a silo's data is the same
 * every round, and posting it would copy it (all of its buffer, for a view into a larger array)
 * into fresh memory in the worker at every call, which costs ≈3 ms per MB on these VMs. Hence
 * the pool's contract: examples handed to it are not modified afterwards (src/data and the
 * engine build new arrays for every change). M0 is shared once per batch, not cached.
 */
const sharedCopies = new WeakMap<ArrayBufferView, ArrayBufferView>();

function sharedCopy<T extends Float32Array | Int32Array | Uint8Array>(a: T): T {
  const Ctor = a.constructor as new (b: SharedArrayBuffer) => T;
  const copy = new Ctor(new SharedArrayBuffer(a.byteLength));
  (copy as unknown as { set(x: ArrayLike<number>): void }).set(a);
  return copy;
}

function shared<T extends Float32Array | Int32Array | Uint8Array>(a: T): T {
  if (a.buffer instanceof SharedArrayBuffer) return a;
  const hit = sharedCopies.get(a);
  if (hit) return hit as T;
  const copy = sharedCopy(a);
  sharedCopies.set(a, copy);
  return copy;
}

function sharedLabels(y: ArrayLike<number>): ArrayLike<number> {
  return y instanceof Int32Array || y instanceof Uint8Array ? shared(y) : y;
}

async function runBatch(pool: Worker[], tasks: readonly TrainTask[]): Promise<TrainResult[]> {
  const results: TrainResult[] = new Array(tasks.length);
  const models = new Map<Float32Array, Float32Array>();
  const model = (m0: Float32Array) => {
    if (m0.buffer instanceof SharedArrayBuffer) return m0;
    let copy = models.get(m0);
    if (!copy) {
      copy = sharedCopy(m0);
      models.set(m0, copy);
    }
    return copy;
  };
  let next = 0;
  const cleanups: (() => void)[] = [];
  try {
    await Promise.all(
      pool.map(
        (w) =>
          new Promise<void>((resolve, reject) => {
            const send = () => {
              if (next >= tasks.length) return resolve();
              const id = next++;
              const t = tasks[id]!;
              const { x, y, n, shape, numClasses } = t.data;
              w.postMessage({
                id,
                spec: t.spec,
                m0: model(t.m0),
                data: { x: shared(x), y: sharedLabels(y), n, shape, numClasses },
                options: t.options,
              });
            };
            const onMessage = (r: Reply) => {
              if (!r.ok) return reject(new Error(`tasks[${r.id}]: ${r.error}`));
              results[r.id] = {
                delta: r.delta!,
                epochLosses: r.epochLosses!,
                steps: r.steps!,
                samples: r.samples!,
              };
              send();
            };
            const onError = (e: Error) => reject(new Error(`trainParallel: worker failed (${e.message})`));
            const onExit = (code: number) =>
              reject(new Error(`trainParallel: worker exited with code ${code}`));
            w.on('message', onMessage);
            w.on('error', onError);
            w.on('exit', onExit);
            cleanups.push(() => {
              w.off('message', onMessage);
              w.off('error', onError);
              w.off('exit', onExit);
            });
            send();
          }),
      ),
    );
  } finally {
    for (const c of cleanups) c();
  }
  return results;
}

/**
 * Trains every task (see `trainLocal`) on a fresh pool of worker threads (min(cores, tasks)
 * by default), closed afterwards; results in task order.
 *
 * @throws RangeError/TypeError naming the bad task field or option; Error when a worker fails
 *   (the message names the task).
 */
export async function trainParallel(
  tasks: readonly TrainTask[],
  options: ParallelOptions = {},
): Promise<TrainResult[]> {
  checkTasks(tasks);
  const workers = options.workers ?? Math.min(availableParallelism(), Math.max(1, tasks.length));
  if (!Number.isInteger(workers) || workers < 1)
    throw new RangeError(`workers: expected a positive integer, got ${workers}`);
  if (tasks.length === 0) return [];
  const pool = createTrainPool({ ...options, workers: Math.min(workers, tasks.length) });
  try {
    return await pool.train(tasks);
  } finally {
    await pool.close();
  }
}
