/**
 * `sweep status`: per configuration, how many jobs are done, running, queued, failed for good
 * and retried, from the store and the queue together (a job the queue expired on its last
 * attempt is failed even though its worker never said so).
 */
import { openQueue, queueState } from './queue.js';
import type { SweepSpec } from './spec.js';
import { type JobRow, SweepStore } from './store.js';

/** One configuration's line of the status. */
export interface ConfigStatus {
  label: string;
  jobs: number;
  done: number;
  running: number;
  queued: number;
  failed: number;
  /** Jobs that needed more than one attempt (a failure or an expiry). */
  retried: number;
}

export interface SweepStatus {
  id: string;
  configs: ConfigStatus[];
  /** Jobs failed for good, with their error. */
  failures: { label: string; seed: number; error: string }[];
  /** Every job as the store and the queue see it. */
  jobs: (JobRow & { queue: string | null; retryCount: number })[];
}

/** The sweep's status. @throws SweepNotFound naming `--id`. */
export async function sweepStatus(url: string, id: string): Promise<SweepStatus> {
  const store = await SweepStore.open(url);
  try {
    const spec: SweepSpec = await store.spec(id);
    const boss = await openQueue(url, { supervise: false });
    const jobs: SweepStatus['jobs'] = [];
    try {
      for (const row of await store.jobs(id)) {
        const q = await queueState(boss, row.queueId);
        let { state, error } = row;
        if (q?.state === 'failed' && state !== 'done' && state !== 'failed') {
          // expired (or failed) on its last attempt without its worker recording it
          error = `${error ? `${error}; ` : ''}the queue gave up: ${JSON.stringify(q.output)}`;
          await store.markFailed(id, row.key, error);
          state = 'failed';
        }
        jobs.push({ ...row, state, error, queue: q?.state ?? null, retryCount: q?.retryCount ?? 0 });
      }
    } finally {
      await boss.stop({ graceful: false, wait: true });
    }
    const configs = spec.configs.map((c, i) => {
      const mine = jobs.filter((j) => j.configIndex === i);
      const count = (p: (j: (typeof jobs)[number]) => boolean) => mine.filter(p).length;
      return {
        label: c.label,
        jobs: mine.length,
        done: count((j) => j.state === 'done'),
        // a running row the queue has taken back (expired) is waiting for its next attempt
        running: count((j) => j.state === 'running' && j.queue === 'active'),
        queued: count(
          (j) =>
            j.state === 'queued' || j.state === 'error' || (j.state === 'running' && j.queue !== 'active'),
        ),
        failed: count((j) => j.state === 'failed'),
        retried: count((j) => j.attempts > 1 || j.retryCount > 0),
      };
    });
    const failures = jobs
      .filter((j) => j.state === 'failed')
      .map((j) => ({ label: spec.configs[j.configIndex]?.label ?? '?', seed: j.seed, error: j.error ?? '' }));
    return { id, configs, failures, jobs };
  } finally {
    await store.close();
  }
}
