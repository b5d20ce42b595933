/** `sweep submit`: records a sweep and enqueues the jobs that have not run yet. */

import type { ExperimentConfig } from '../records/config.js';
import { chunksFor } from '../sim/reference-chunks.js';
import { DEFAULT_POLICY, enqueue, type JobPolicy, openQueue } from './queue.js';
import { configDigest, jobsOf, labelsOf, queueJobId, type SweepSpec, seedsOf, sweepId } from './spec.js';
import { SweepStore } from './store.js';

/** What was submitted: the sweep id, its jobs, and how many were newly enqueued. */
export interface Submitted {
  id: string;
  jobs: number;
  enqueued: number;
  spec: SweepSpec;
}

/**
 * The sweep of `configs` (each read from its path), `seeds` seeds each (default: each
 * configuration's own count, as `experiment` counts them). With `chunks`, each configuration that
 * computes the true Shapley value computes it in that many jobs per seed (at most 2^silos).
 * @throws RangeError naming `--chunks`.
 */
export function sweepOf(
  configs: readonly { path: string; config: ExperimentConfig }[],
  seeds?: number,
  chunks?: number,
): SweepSpec {
  const labels = labelsOf(configs.map((c) => c.path));
  const perConfig = chunks === undefined ? undefined : configs.map((c) => chunksFor(c.config, chunks));
  return {
    ...(perConfig?.some((k) => k > 0) ? { chunks: perConfig } : {}),
    configs: configs.map((c, i) => ({
      label: labels[i]!,
      path: c.path,
      config: c.config,
      digest: configDigest(c.config),
    })),
    seeds: configs.map((c) => seedsOf(c.config, seeds)),
  };
}

/**
 * Records the sweep and enqueues its jobs. Submitting the same sweep again enqueues only the
 * jobs that are neither done nor failed for good, under the same queue ids (so a job still
 * queued or running is not added twice).
 */
export async function submitSweep(
  url: string,
  spec: SweepSpec,
  policy: JobPolicy = DEFAULT_POLICY,
): Promise<Submitted> {
  const id = sweepId(spec);
  const jobs = jobsOf(spec);
  const store = await SweepStore.open(url);
  try {
    const open = await store.submit(id, spec, jobs, (key) => queueJobId(id, key));
    const boss = await openQueue(url, { supervise: false });
    try {
      await enqueue(
        boss,
        open.map((j) => ({ id: queueJobId(id, j.key), data: { sweep: id, key: j.key } })),
        policy,
      );
    } finally {
      await boss.stop({ graceful: false, wait: true });
    }
    return { id, jobs: jobs.length, enqueued: open.length, spec };
  } finally {
    await store.close();
  }
}
