/**
 * Worker side of parallel.ts (internal): initializes the requested backend, then trains each
 * task it is sent with `trainLocal` and posts back Δ (its buffer transferred, not copied).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { blasThreadsHere } from './_blas_kernels.js';
import { type BackendName, initBackend } from './backend.js';
import type { Examples, ModelSpec } from './models.js';
import { type TrainOptions, trainLocal } from './train.js';

interface Task {
  id: number;
  spec: ModelSpec;
  m0: Float32Array;
  data: Examples;
  options: TrainOptions;
}

const port = parentPort;
if (!port) throw new Error('_train_worker: must run as a worker thread');
// The worker's share of the cores for its native kernels (parallel.ts's workerBlasThreads: one
// when the pool runs a worker per core), so that workers and kernel threads do not oversubscribe.
const data = workerData as { backend: BackendName; blasThreads?: number };
const ready = initBackend({ backend: data.backend }).then((b) => {
  blasThreadsHere(data.blasThreads ?? 1);
  return b;
});

port.on('message', async (task: Task) => {
  try {
    const backend = await ready;
    const r = await trainLocal(task.spec, task.m0, task.data, task.options);
    port.postMessage(
      {
        id: task.id,
        ok: true,
        backend: backend.name,
        delta: r.delta,
        epochLosses: r.epochLosses,
        steps: r.steps,
        samples: r.samples,
      },
      [r.delta.buffer as ArrayBuffer, r.epochLosses.buffer as ArrayBuffer],
    );
  } catch (e) {
    port.postMessage({
      id: task.id,
      ok: false,
      error: e instanceof Error ? `${e.name}: ${e.message}` : String(e),
    });
  }
});
