/**
 * What one optimizer step costs on the webgpu backend (issue 36, "count what a step costs"):
 * GPU dispatches and bytes read back, counted by wrapping the backend instance of
 * @tensorflow/tfjs-backend-webgpu 4.22 while a training call runs:
 *  - `recordAndSubmit(program, …)`: called once per compute program, right before its single
 *    `computePassEncoder.dispatchWorkgroups` (backend_webgpu.js), so its calls are the dispatches;
 *  - `getBufferData(buffer)`: every read of a GPU buffer to the host (`data()`, `read()`;
 *    `copyBufferToBuffer` into a staging buffer, `mapAsync`), `buffer.size` bytes each.
 * A step's cost is the difference between a run of `hi` and one of `lo` steps, divided by
 * `hi − lo` (steps past the first: the first step takes a few dispatches fewer), so the per-call
 * setup (upload of the examples, the read of θ and the losses at the end) is not in it; `call` is
 * everything a whole `lo`-step call did.
 */
import * as tf from '@tensorflow/tfjs';

interface Counts {
  dispatches: number;
  readbacks: number;
  bytesRead: number;
}

interface WebGpuBackendLike {
  recordAndSubmit: (...a: unknown[]) => unknown;
  getBufferData: (buffer: { size: number }) => Promise<unknown>;
}

/** Runs `fn` on the active webgpu backend and counts its dispatches and readbacks. */
export async function countGpuWork(fn: () => Promise<unknown>): Promise<Counts> {
  const backend = tf.backend() as unknown as WebGpuBackendLike;
  if (typeof backend.recordAndSubmit !== 'function' || typeof backend.getBufferData !== 'function')
    throw new Error(`countGpuWork: the active backend '${tf.getBackend()}' is not tfjs-backend-webgpu 4.x`);
  const counts: Counts = { dispatches: 0, readbacks: 0, bytesRead: 0 };
  const record = backend.recordAndSubmit;
  const read = backend.getBufferData;
  backend.recordAndSubmit = function (this: unknown, ...a: unknown[]) {
    counts.dispatches++;
    return record.apply(this, a);
  };
  backend.getBufferData = function (this: unknown, buffer: { size: number }) {
    counts.readbacks++;
    counts.bytesRead += buffer.size;
    return read.call(this, buffer);
  };
  try {
    await fn();
  } finally {
    backend.recordAndSubmit = record;
    backend.getBufferData = read;
  }
  return counts;
}

/** Per step (the difference of `hi` and `lo` steps, per step) and a whole `lo`-step call. */
export async function stepCost(
  train: (steps: number) => Promise<unknown>,
  lo = 2,
  hi = 6,
): Promise<{ perStep: Counts; call: Counts & { steps: number } }> {
  await train(lo); // pipelines compiled, buffers pooled
  const a = await countGpuWork(() => train(lo));
  const b = await countGpuWork(() => train(hi));
  const k = hi - lo;
  const perStep = {
    dispatches: (b.dispatches - a.dispatches) / k,
    readbacks: (b.readbacks - a.readbacks) / k,
    bytesRead: (b.bytesRead - a.bytesRead) / k,
  };
  return { perStep, call: { steps: lo, ...a } };
}
