/**
 * A sweep worker: takes jobs from the queue one at a time, runs them (run-job.ts) and writes
 * their results to the store. Any machine that reaches the database (and the data) may run one;
 * a worker killed mid-job loses nothing but that attempt, which the queue hands to another worker
 * once it expires (queue.ts).
 */
import { hostname } from 'node:os';
import type PgBoss from 'pg-boss';
import type { Learner } from '../fl/learner/learner.js';
import { openQueue, type QueuedJob, SWEEP_QUEUE } from './queue.js';
import { type RunJobOptions, runJob } from './run-job.js';
import { jobsOf, type SweepSpec } from './spec.js';
import { SweepStore } from './store.js';

export interface WorkerOptions extends RunJobOptions {
  queue: string;
  /** Seconds between polls of the queue when it is empty (default 2). */
  pollSeconds?: number;
  /** Seconds between the queue's maintenance runs, which expire and retry lost jobs (default 60). */
  maintenanceSeconds?: number;
  /** Exit after this many seconds without a job (default: run until stopped). */
  idleExitSeconds?: number;
  /** One line per job event. */
  log?: (line: string) => void;
}

/** Runs jobs until stopped (SIGINT/SIGTERM) or idle for `idleExitSeconds`. @returns the jobs it finished. */
export async function runWorker(o: WorkerOptions): Promise<number> {
  const log = o.log ?? (() => {});
  const name = `${hostname()}:${process.pid}`;
  const store = await SweepStore.open(o.queue);
  let boss: PgBoss;
  try {
    boss = await openQueue(o.queue, { maintenanceIntervalSeconds: o.maintenanceSeconds ?? 60 });
  } catch (e) {
    await store.close();
    throw e;
  }
  const specs = new Map<string, SweepSpec>();
  const learners = new Map<string, Learner>();
  let busy = false;
  let last = Date.now();
  let finished = 0;
  const handle = async (job: PgBoss.JobWithMetadata<QueuedJob>) => {
    const { sweep, key } = job.data;
    const spec = specs.get(sweep) ?? (await store.spec(sweep));
    specs.set(sweep, spec);
    const row = (await store.jobs(sweep)).find((j) => j.key === key);
    if (!row) throw new Error(`job ${sweep}/${key}: not in the store`);
    if (!(await store.start(sweep, key, name))) {
      log(`${sweep} ${key}: already finished, skipped`);
      return;
    }
    const label = spec.configs[row.configIndex]?.label ?? String(row.configIndex);
    log(`${sweep} ${label} seed ${row.seed}: started (attempt ${job.retryCount + 1})`);
    const t0 = performance.now();
    try {
      const job = jobsOf(spec).find((j) => j.key === key);
      if (!job) throw new Error(`job ${sweep}/${key}: not a job of the sweep's spec`);
      const result = await runJob(spec, job, { ...o, learners });
      await store.finish(sweep, key, result);
      finished++;
      log(`${sweep} ${label} seed ${row.seed}: done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    } catch (e) {
      const final = job.retryCount >= job.retryLimit;
      const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
      await store.fail(sweep, key, message, final);
      log(
        `${sweep} ${label} seed ${row.seed}: ${final ? 'failed for good' : 'failed, will be retried'}: ${message}`,
      );
      throw e;
    }
  };
  await boss.work<QueuedJob>(
    SWEEP_QUEUE,
    { batchSize: 1, includeMetadata: true, pollingIntervalSeconds: o.pollSeconds ?? 2 },
    async (jobs) => {
      busy = true;
      try {
        for (const job of jobs) await handle(job);
      } finally {
        busy = false;
        last = Date.now();
      }
    },
  );
  log(`worker ${name}: waiting for jobs`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    if (o.idleExitSeconds !== undefined) {
      const timer = setInterval(() => {
        if (!busy && Date.now() - last > o.idleExitSeconds! * 1000) {
          clearInterval(timer);
          resolve();
        }
      }, 250);
    }
  });
  await boss.stop({ graceful: true, wait: true, timeout: 10_000 });
  for (const l of learners.values()) await l.close();
  await store.close();
  log(`worker ${name}: stopped after ${finished} job(s)`);
  return finished;
}
