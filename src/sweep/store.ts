/**
 * Where a sweep lives in PostgreSQL, beside pg-boss's own schema: the sweep (its configurations
 * and seeds) and one row per job with its state, its attempts, its last error and its result
 * (the seed's record as JSON text, with the digests of the configuration, data and code it ran).
 * Every worker writes here, so no result lives only on a worker's disk.
 */
import pg from 'pg';
import type { SeedRecord } from '../sim/experiment.js';
import type { ReferenceChunk } from '../sim/reference-chunks.js';
import type { SweepJob, SweepSpec } from './spec.js';

/** A job's state in the store: `running` until its attempt ends; `error` is a failed attempt that will be retried. */
export type JobState = 'queued' | 'running' | 'error' | 'done' | 'failed';

/** A job's row. */
export interface JobRow {
  key: string;
  configIndex: number;
  seed: number;
  state: JobState;
  attempts: number;
  error: string | null;
  worker: string | null;
  queueId: string;
  /** Seconds the last finished attempt ran. */
  seconds: number | null;
}

/** What a finished job recorded: the seed's record or a chunk of its reference table, and the digests of what it ran. */
export interface JobResult {
  /** A seed's job. */
  record?: SeedRecord;
  /** A chunk job (src/sim/reference-chunks.ts). */
  chunk?: ReferenceChunk;
  configDigest: string;
  dataDigest: string;
  codeVersion: string;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS fedscore_sweep (
  id text PRIMARY KEY,
  created_at timestamptz NOT NULL DEFAULT now(),
  spec text NOT NULL
);
CREATE TABLE IF NOT EXISTS fedscore_sweep_job (
  sweep_id text NOT NULL REFERENCES fedscore_sweep(id),
  job_key text NOT NULL,
  config_index integer NOT NULL,
  seed integer NOT NULL,
  queue_id uuid NOT NULL,
  state text NOT NULL DEFAULT 'queued',
  attempts integer NOT NULL DEFAULT 0,
  error text,
  worker text,
  started_at timestamptz,
  finished_at timestamptz,
  config_digest text,
  data_digest text,
  code_version text,
  result text,
  PRIMARY KEY (sweep_id, job_key)
);`;

/** An open connection to a sweep store. */
export class SweepStore {
  private constructor(private readonly pool: pg.Pool) {}

  /** Connects and creates the tables when missing (under an advisory lock: several processes may start at once). */
  static async open(url: string): Promise<SweepStore> {
    const pool = new pg.Pool({ connectionString: url, max: 4 });
    const client = await pool.connect().catch(async (e: unknown) => {
      await pool.end();
      throw new Error(`--queue: cannot connect to ${redact(url)}: ${(e as Error).message}`);
    });
    try {
      await client.query('SELECT pg_advisory_lock(7427781)');
      await client.query(SCHEMA);
      await client.query('SELECT pg_advisory_unlock(7427781)');
    } finally {
      client.release();
    }
    return new SweepStore(pool);
  }

  close(): Promise<void> {
    return this.pool.end();
  }

  /**
   * Records the sweep and its jobs; jobs already recorded are left as they are.
   * @returns the jobs that still have to run (neither done nor failed for good).
   */
  async submit(id: string, spec: SweepSpec, jobs: readonly SweepJob[], queueIdOf: (key: string) => string) {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(
        'INSERT INTO fedscore_sweep (id, spec) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING',
        [id, JSON.stringify(spec)],
      );
      for (const j of jobs)
        await client.query(
          `INSERT INTO fedscore_sweep_job (sweep_id, job_key, config_index, seed, queue_id)
           VALUES ($1, $2, $3, $4, $5) ON CONFLICT (sweep_id, job_key) DO NOTHING`,
          [id, j.key, j.configIndex, j.seed, queueIdOf(j.key)],
        );
      const { rows } = await client.query(
        "SELECT job_key FROM fedscore_sweep_job WHERE sweep_id = $1 AND state NOT IN ('done', 'failed')",
        [id],
      );
      await client.query('COMMIT');
      const open = new Set(rows.map((r) => r.job_key as string));
      return jobs.filter((j) => open.has(j.key));
    } catch (e) {
      await client.query('ROLLBACK');
      throw e;
    } finally {
      client.release();
    }
  }

  /** The sweep's configurations and seeds. @throws Error naming `--id` when there is no such sweep. */
  async spec(id: string): Promise<SweepSpec> {
    const { rows } = await this.pool.query('SELECT spec FROM fedscore_sweep WHERE id = $1', [id]);
    if (rows.length === 0) throw new SweepNotFound(`--id: no sweep '${id}' in this database`);
    return JSON.parse(rows[0].spec as string) as SweepSpec;
  }

  /** Every job of the sweep, by configuration and seed. */
  async jobs(id: string): Promise<JobRow[]> {
    const { rows } = await this.pool.query(
      `SELECT job_key, config_index, seed, state, attempts, error, worker, queue_id,
              EXTRACT(EPOCH FROM (finished_at - started_at))::float8 AS seconds
       FROM fedscore_sweep_job WHERE sweep_id = $1 ORDER BY config_index, seed`,
      [id],
    );
    return rows.map((r) => ({
      key: r.job_key,
      configIndex: r.config_index,
      seed: r.seed,
      state: r.state,
      attempts: r.attempts,
      error: r.error,
      worker: r.worker,
      queueId: r.queue_id,
      seconds: r.seconds,
    }));
  }

  /**
   * Marks an attempt as started unless the job is already done or failed for good.
   * @returns false when it is (a second delivery of a finished job: nothing to run).
   */
  async start(id: string, key: string, worker: string): Promise<boolean> {
    const { rowCount } = await this.pool.query(
      `UPDATE fedscore_sweep_job SET state = 'running', attempts = attempts + 1, worker = $3,
              started_at = now(), finished_at = NULL
       WHERE sweep_id = $1 AND job_key = $2 AND state NOT IN ('done', 'failed')`,
      [id, key, worker],
    );
    return rowCount === 1;
  }

  /** Records a job's result (once: a job already done keeps its first result). */
  async finish(id: string, key: string, r: JobResult): Promise<void> {
    await this.pool.query(
      `UPDATE fedscore_sweep_job SET state = 'done', error = NULL, finished_at = now(), result = $3,
              config_digest = $4, data_digest = $5, code_version = $6
       WHERE sweep_id = $1 AND job_key = $2 AND state <> 'done'`,
      // a seed's record as it is (a SeedRecord has no key `chunk`), a chunk under `chunk`
      [
        id,
        key,
        JSON.stringify(r.chunk ? { chunk: r.chunk } : r.record),
        r.configDigest,
        r.dataDigest,
        r.codeVersion,
      ],
    );
  }

  /** Records a failed attempt: `failed` for good when `final`, else `error` (the queue retries it). */
  async fail(id: string, key: string, error: string, final: boolean): Promise<void> {
    await this.pool.query(
      `UPDATE fedscore_sweep_job SET state = $3, error = $4, finished_at = now()
       WHERE sweep_id = $1 AND job_key = $2 AND state <> 'done'`,
      [id, key, final ? 'failed' : 'error', error],
    );
  }

  /** Marks jobs failed for good that the queue gave up on (expired on their last attempt). */
  async markFailed(id: string, key: string, error: string): Promise<void> {
    await this.fail(id, key, error, true);
  }

  /** The results of the sweep's finished jobs, by job key. */
  async results(id: string): Promise<Map<string, JobResult>> {
    const { rows } = await this.pool.query(
      `SELECT job_key, result, config_digest, data_digest, code_version
       FROM fedscore_sweep_job WHERE sweep_id = $1 AND state = 'done'`,
      [id],
    );
    return new Map(
      rows.map((r) => [
        r.job_key as string,
        {
          ...((parsed: SeedRecord | { chunk: ReferenceChunk }) =>
            'chunk' in parsed ? { chunk: parsed.chunk } : { record: parsed })(JSON.parse(r.result as string)),
          configDigest: r.config_digest,
          dataDigest: r.data_digest,
          codeVersion: r.code_version,
        },
      ]),
    );
  }
}

/** No sweep of that id. */
export class SweepNotFound extends Error {
  override name = 'SweepNotFound';
}

/** A connection URL with its password replaced by `***`, for messages. */
export function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.href;
  } catch {
    return '(the --queue URL)';
  }
}
