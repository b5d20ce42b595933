/**
 * Issue 25 acceptance, on a private PostgreSQL (CI starts one: scripts/ci-postgres.sh): a
 * 2-configuration × 3-seed sweep run by two real `fedscore worker` processes, one SIGKILLed
 * mid-job. Every job completes once, `sweep status` shows the retry, the collected results equal
 * `experiment --seeds 3`'s (timings aside), a second submission runs nothing again, and a job that
 * fails for good is reported with its error without blocking the rest.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { timingsAside } from './_results.js';

const MAIN = new URL('../../src/cli/main.ts', import.meta.url).pathname;
const url = process.env.DATABASE_URL;

/** A configuration small enough for a job of a few seconds. */
const tiny = (name: string, alpha: number, extra: Record<string, unknown> = {}) => ({
  name,
  seed: 3,
  silos: 4,
  rounds: 2,
  data: { dataset: 'synthetic', trainSize: 300, testSize: 100, synthetic: { features: 16, classes: 3 } },
  partition: { kind: 'dirichlet', alpha },
  model: { kind: 'mlp', hidden: [8] },
  training: { epochs: 1, batchSize: 32 },
  ...extra,
});

function fedscore(args: string[]) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    encoding: 'utf8',
    timeout: 300_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** A `fedscore worker` process; its stderr is kept for failure messages. */
function worker(queue: string, extra: string[]): ChildProcess & { log: string[] } {
  const p = spawn(
    process.execPath,
    ['--import', 'tsx', MAIN, 'worker', '--queue', queue, '--poll', '1', '--maintenance', '1', ...extra],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  ) as ChildProcess & { log: string[] };
  p.log = [];
  p.stderr?.on('data', (d: Buffer) => p.log.push(d.toString()));
  return p;
}

const exited = (p: ChildProcess) =>
  new Promise<number | null>((resolve) =>
    p.exitCode !== null ? resolve(p.exitCode) : p.on('exit', resolve),
  );

describe.skipIf(!url)('sweeps on the PostgreSQL queue', () => {
  const admin = new pg.Client({ connectionString: url });
  let db: pg.Client;
  let queue: string;
  let dir: string;
  let dbName: string;
  const workers: ChildProcess[] = [];

  beforeAll(async () => {
    await admin.connect();
    dbName = `fedscore_sweep_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    await admin.query(`CREATE DATABASE ${dbName}`);
    const u = new URL(url!);
    u.pathname = `/${dbName}`;
    queue = u.toString();
    db = new pg.Client({ connectionString: queue });
    await db.connect();
    dir = await mkdtemp(join(tmpdir(), 'fedscore-sweep-'));
    await writeFile(join(dir, 'tiny-a.json'), JSON.stringify(tiny('tiny-a', 1)));
    await writeFile(join(dir, 'tiny-b.json'), JSON.stringify(tiny('tiny-b', 0.3)));
    // valid, but no partition of 10 examples over 12 silos gives every silo one: fails at run time
    await writeFile(
      join(dir, 'bad.json'),
      JSON.stringify(
        tiny('bad', 1, { silos: 12, data: { dataset: 'synthetic', trainSize: 10, testSize: 100 } }),
      ),
    );
  });

  afterAll(async () => {
    for (const w of workers) if (w.exitCode === null) w.kill('SIGKILL');
    await db?.end();
    await new Promise((r) => setTimeout(r, 300));
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin.end();
    await rm(dir, { recursive: true, force: true });
  });

  it('two workers, one SIGKILLed mid-job: every job completes once, the retry shows, results equal experiment --seeds 3', async () => {
    const configs = ['--config', join(dir, 'tiny-a.json'), join(dir, 'tiny-b.json')];
    // expiry: longer than any job here (a few seconds each), short enough for the test
    const submit = ['sweep', 'submit', '--queue', queue, ...configs, '--seeds', '3', '--expire-in', '25'];
    const first = fedscore(submit);
    expect(first.code, first.err).toBe(0);
    const id = first.out.trim();
    expect(id).toMatch(/^sw-[0-9a-f]{16}$/);
    // submitting the same sweep again names it and adds no job to the queue
    const again = fedscore(submit);
    expect(again.out.trim()).toBe(id);
    const queued = await db.query("SELECT count(*)::int AS n FROM pgboss.job WHERE data->>'sweep' = $1", [
      id,
    ]);
    expect(queued.rows[0].n).toBe(6);

    const a = worker(queue, ['--idle-exit', '120']);
    const b = worker(queue, ['--idle-exit', '35']); // outlives the killed job's expiry (25 s) and the maintenance that takes it back (1 s)
    workers.push(a, b);
    // wait until worker a is mid-job, then kill it outright
    let killed: string | undefined;
    for (let t = 0; t < 600 && !killed; t++) {
      const { rows } = await db.query(
        "SELECT job_key FROM fedscore_sweep_job WHERE sweep_id = $1 AND state = 'running' AND worker = $2",
        [id, `${hostname()}:${a.pid}`],
      );
      if (rows.length > 0) killed = rows[0].job_key as string;
      else await new Promise((r) => setTimeout(r, 200));
    }
    expect(killed, a.log.join('')).toBeDefined();
    await new Promise((r) => setTimeout(r, 500));
    a.kill('SIGKILL');
    expect(await exited(a)).toBeNull();
    expect(await exited(b), b.log.join('')).toBe(0);

    const { rows } = await db.query(
      'SELECT job_key, state, attempts FROM fedscore_sweep_job WHERE sweep_id = $1 ORDER BY job_key',
      [id],
    );
    expect(rows).toHaveLength(6);
    for (const r of rows)
      expect({ key: r.job_key, state: r.state, attempts: r.attempts }).toEqual({
        key: r.job_key,
        state: 'done',
        attempts: r.job_key === killed ? 2 : 1,
      });
    expect(b.log.join('')).toContain('(attempt 2)');

    const status = fedscore(['sweep', 'status', '--queue', queue, '--id', id, '--json']);
    expect(status.code, status.err).toBe(0);
    const s = JSON.parse(status.out) as {
      configs: { label: string; done: number; retried: number; failed: number }[];
    };
    expect(s.configs.map((c) => c.label)).toEqual(['tiny-a', 'tiny-b']);
    expect(s.configs.map((c) => c.done)).toEqual([3, 3]);
    expect(s.configs.reduce((n, c) => n + c.retried, 0)).toBe(1);
    expect(s.configs.reduce((n, c) => n + c.failed, 0)).toBe(0);
    const table = fedscore(['sweep', 'status', '--queue', queue, '--id', id]);
    expect(table.out).toMatch(/retried/);

    const out = join(dir, 'collected');
    const collect = fedscore(['sweep', 'collect', '--queue', queue, '--id', id, '--out', out]);
    expect(collect.code, collect.err).toBe(0);
    for (const label of ['tiny-a', 'tiny-b']) {
      const single = join(dir, `single-${label}`);
      const e = fedscore([
        'experiment',
        '--config',
        join(dir, `${label}.json`),
        '--out',
        single,
        '--seeds',
        '3',
        '--quiet',
      ]);
      expect(e.code, e.err).toBe(0);
      const expected = JSON.parse(await readFile(join(single, 'results.json'), 'utf8'));
      const got = JSON.parse(await readFile(join(out, label, 'results.json'), 'utf8'));
      expect(got.seeds).toEqual([3, 4, 5]);
      expect(timingsAside(got)).toEqual(timingsAside(expected));
    }

    // a third submission of the finished sweep enqueues nothing and no worker runs anything
    const third = fedscore(submit);
    expect(third.err).toContain('0 to run');
    const idle = worker(queue, ['--idle-exit', '3']);
    workers.push(idle);
    expect(await exited(idle)).toBe(0);
    expect(idle.log.join('')).toContain('stopped after 0 job(s)');
  }, 600_000);

  it('a job that fails for good is reported with its error and does not block the rest', async () => {
    const submit = fedscore([
      'sweep',
      'submit',
      '--queue',
      queue,
      '--config',
      join(dir, 'bad.json'),
      join(dir, 'tiny-a.json'),
      '--seeds',
      '1',
      '--retries',
      '1',
    ]);
    expect(submit.code, submit.err).toBe(0);
    const id = submit.out.trim();
    const w = worker(queue, ['--idle-exit', '5']);
    workers.push(w);
    expect(await exited(w), w.log.join('')).toBe(0);
    const status = fedscore(['sweep', 'status', '--queue', queue, '--id', id]);
    expect(status.out).toMatch(/^bad\s+1\s+0\s+0\s+0\s+1\s+1$/m);
    expect(status.out).toMatch(/^tiny-a\s+1\s+1\s+0\s+0\s+0\s+0$/m);
    expect(status.out).toContain('failed: bad seed 3: RangeError: partition: every one of');
    const collect = fedscore([
      'sweep',
      'collect',
      '--queue',
      queue,
      '--id',
      id,
      '--out',
      join(dir, 'partial'),
    ]);
    expect(collect.code).toBe(1);
    expect(collect.out).toContain('not written: bad: 1 job(s) not done');
    expect(JSON.parse(await readFile(join(dir, 'partial', 'tiny-a', 'results.json'), 'utf8')).seeds).toEqual([
      3,
    ]);
  }, 300_000);
});
