/**
 * How the cores are shared out between parallel workers (training threads, seed processes) and
 * the native kernels' threads inside each (src/ml/_blas_kernels.ts), so that the two do not
 * oversubscribe the machine. Kept apart from parallel.ts so that a process that only forks
 * workers (src/sweep/local.ts) does not load the tensor backend.
 */
import { availableParallelism } from 'node:os';

/**
 * Native kernel threads for each of `workers` parallel workers: the cores this process may run
 * on (`os.availableParallelism()`, or `cores`) shared out, at least one, at most 256, so that
 * workers × threads never exceeds the cores (one thread each when there is a worker per core).
 */
export function workerBlasThreads(workers: number, cores = availableParallelism()): number {
  return Math.max(1, Math.min(256, Math.floor(cores / Math.max(1, workers))));
}
