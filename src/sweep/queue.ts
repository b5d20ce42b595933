/**
 * The job queue: pg-boss 10 on the same PostgreSQL as the sweep store. What fedscore relies on:
 * - expiry: a job active longer than its `expireInSeconds` (a worker killed with SIGKILL, a
 *   machine lost) is failed by the queue's maintenance and, with retries left, delivered again
 *   to any worker;
 * - retry: a job whose handler throws is retried up to `retryLimit` times, then stays `failed`
 *   with its error; other jobs go on;
 * - one delivery at a time: a job is fetched with `FOR UPDATE SKIP LOCKED`, so two workers never
 *   hold it at once; its id is derived from the sweep and the job (spec.ts `queueJobId`), so a
 *   second submission of a queued job inserts nothing (`ON CONFLICT DO NOTHING`).
 */
import PgBoss from 'pg-boss';

/** The queue every sweep's jobs go to. */
export const SWEEP_QUEUE = 'fedscore-sweep';

/** What a queued job carries: the sweep and the job's key (the rest is in the store). */
export interface QueuedJob {
  sweep: string;
  key: string;
}

/** How jobs are retried and expire (`sweep submit --retries --expire-in`). */
export interface JobPolicy {
  /** Further attempts after the first failure or expiry. */
  retries: number;
  /** Seconds a job may run before the queue takes it back (pg-boss: under 24 h). */
  expireInSeconds: number;
}

/** Default policy: 2 retries; 23 h expiry (pg-boss's limit is 24 h; a full-scale seed can take hours). */
export const DEFAULT_POLICY: JobPolicy = { retries: 2, expireInSeconds: 23 * 3600 };

/** Opens pg-boss on `url` (installs or migrates its schema on first use). */
export async function openQueue(
  url: string,
  o: { maintenanceIntervalSeconds?: number; supervise?: boolean } = {},
): Promise<PgBoss> {
  const boss = new PgBoss({
    connectionString: url,
    max: 4,
    supervise: o.supervise ?? true,
    schedule: false,
    ...(o.maintenanceIntervalSeconds !== undefined
      ? { maintenanceIntervalSeconds: o.maintenanceIntervalSeconds }
      : {}),
  });
  boss.on('error', (e) => process.stderr.write(`queue: ${e.message}\n`));
  await boss.start();
  if (!(await boss.getQueue(SWEEP_QUEUE))) {
    try {
      await boss.createQueue(SWEEP_QUEUE, { name: SWEEP_QUEUE, policy: 'standard' });
    } catch (e) {
      // another process created it meanwhile
      if (!(await boss.getQueue(SWEEP_QUEUE))) throw e;
    }
  }
  return boss;
}

/** Enqueues jobs under their derived ids; ids the queue already holds are left alone. */
export async function enqueue(
  boss: PgBoss,
  jobs: readonly { id: string; data: QueuedJob }[],
  policy: JobPolicy,
): Promise<void> {
  if (jobs.length === 0) return;
  await boss.insert(
    jobs.map((j) => ({
      id: j.id,
      name: SWEEP_QUEUE,
      data: j.data,
      retryLimit: policy.retries,
      retryDelay: 0,
      expireInSeconds: policy.expireInSeconds,
    })),
  );
}

/** The queue's view of a job: its state and how often it was retried (null when the queue has no such job). */
export async function queueState(
  boss: PgBoss,
  id: string,
): Promise<{ state: string; retryCount: number; output: unknown } | null> {
  const j = await boss.getJobById<QueuedJob>(SWEEP_QUEUE, id, { includeArchive: true });
  return j ? { state: j.state, retryCount: j.retryCount, output: j.output } : null;
}
