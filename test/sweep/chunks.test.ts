/**
 * `sweep submit --chunks n` on a private PostgreSQL (CI starts one: scripts/ci-postgres.sh): each
 * seed's true Shapley value is computed by n chunk jobs of coalition ranges, recorded with their
 * digests, and `sweep collect` puts them back together into the same results.json as
 * `experiment --seeds k` (timings aside).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { timingsAside } from './_results.js';

const MAIN = new URL('../../src/cli/main.ts', import.meta.url).pathname;
const url = process.env.DATABASE_URL;

/** 3 silos, 2 rounds: a retraining game of 8 coalitions, each two FedAvg rounds of a tiny MLP. */
const tiny = {
  name: 'tiny-true-sv',
  seed: 2,
  silos: 3,
  rounds: 2,
  data: { dataset: 'synthetic', trainSize: 240, testSize: 90, synthetic: { features: 12, classes: 3 } },
  partition: { kind: 'dirichlet', alpha: 0.5 },
  model: { kind: 'mlp', hidden: [8] },
  training: { epochs: 1, batchSize: 32 },
  scoring: { utility: 'negLoss' },
  comparison: { estimators: { mrsv: {} }, trueShapley: true, references: ['trueSv', 'mrsv'] },
};

function fedscore(args: string[]) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', MAIN, ...args], {
    encoding: 'utf8',
    timeout: 300_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe.skipIf(!url)('sweep submit --chunks on the PostgreSQL queue', () => {
  const admin = new pg.Client({ connectionString: url });
  let db: pg.Client;
  let queue: string;
  let dir: string;
  let dbName: string;

  beforeAll(async () => {
    await admin.connect();
    dbName = `fedscore_chunks_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    await admin.query(`CREATE DATABASE ${dbName}`);
    const u = new URL(url!);
    u.pathname = `/${dbName}`;
    queue = u.toString();
    db = new pg.Client({ connectionString: queue });
    await db.connect();
    dir = await mkdtemp(join(tmpdir(), 'fedscore-chunks-'));
    await writeFile(join(dir, 'tiny-true-sv.json'), JSON.stringify(tiny));
  });

  afterAll(async () => {
    await db?.end();
    await new Promise((r) => setTimeout(r, 300));
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin.end();
    await rm(dir, { recursive: true, force: true });
  });

  it('3 chunk jobs per seed, recorded with digests, collected into the results of experiment --seeds 2', async () => {
    const config = join(dir, 'tiny-true-sv.json');
    const submit = fedscore([
      'sweep',
      'submit',
      '--queue',
      queue,
      '--config',
      config,
      '--seeds',
      '2',
      '--chunks',
      '3',
    ]);
    expect(submit.code, submit.err).toBe(0);
    expect(submit.err).toContain('tiny-true-sv: its true Shapley value in 3 chunk job(s) per seed');
    expect(submit.err).toContain('8 job(s); 8 to run');
    const id = submit.out.trim();
    // without --chunks it is another sweep (the split is part of what the sweep is)
    const plain = fedscore(['sweep', 'submit', '--queue', queue, '--config', config, '--seeds', '2']);
    expect(plain.code, plain.err).toBe(0);
    expect(plain.out.trim()).not.toBe(id);
    await db.query("DELETE FROM pgboss.job WHERE data->>'sweep' = $1", [plain.out.trim()]);

    const w = spawn(
      process.execPath,
      ['--import', 'tsx', MAIN, 'worker', '--queue', queue, '--poll', '1', '--idle-exit', '5'],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    const log: string[] = [];
    w.stderr?.on('data', (d: Buffer) => log.push(d.toString()));
    const code = await new Promise<number | null>((resolve) => w.on('exit', resolve));
    expect(code, log.join('')).toBe(0);

    const { rows } = await db.query(
      `SELECT job_key, state, data_digest, config_digest, code_version, result
       FROM fedscore_sweep_job WHERE sweep_id = $1 ORDER BY job_key`,
      [id],
    );
    expect(rows.map((r) => r.job_key.split(':').slice(2).join(':'))).toEqual([
      '2',
      '2:sv1/3',
      '2:sv2/3',
      '2:sv3/3',
      '3',
      '3:sv1/3',
      '3:sv2/3',
      '3:sv3/3',
    ]);
    for (const r of rows) {
      expect(r.state).toBe('done');
      expect(r.config_digest).toMatch(/^[0-9a-f]{64}$/);
      expect(r.code_version).toMatch(/^fedscore@/);
    }
    // every chunk ran on the data of its seed's run
    for (const seed of ['2', '3']) {
      const mine = rows.filter((r) => r.job_key.split(':')[2] === seed);
      expect(new Set(mine.map((r) => r.data_digest)).size).toBe(1);
      const ranges = mine
        .filter((r) => r.job_key.includes(':sv'))
        .map((r) => JSON.parse(r.result).chunk)
        .map((c: { from: number; to: number; values: number[] }) => [c.from, c.to, c.values.length]);
      expect(ranges).toEqual([
        [0, 2, 2],
        [2, 5, 3],
        [5, 8, 3],
      ]);
      // the seed's own job left the true Shapley value to its chunks
      const run = JSON.parse(mine.find((r) => !r.job_key.includes(':sv')).result).run;
      expect(run.compared.trueSv).toBeUndefined();
    }

    const out = join(dir, 'collected');
    const collect = fedscore(['sweep', 'collect', '--queue', queue, '--id', id, '--out', out]);
    expect(collect.code, collect.err).toBe(0);
    const single = join(dir, 'single');
    const e = fedscore(['experiment', '--config', config, '--out', single, '--seeds', '2', '--quiet']);
    expect(e.code, e.err).toBe(0);
    const expected = JSON.parse(await readFile(join(single, 'results.json'), 'utf8'));
    const got = JSON.parse(await readFile(join(out, 'tiny-true-sv', 'results.json'), 'utf8'));
    expect(got.runs.map((r: { compared: { trueSv: number[] } }) => r.compared.trueSv)).toHaveLength(2);
    expect(got.comparison.reference).toBe('trueSv');
    expect(timingsAside(got)).toEqual(timingsAside(expected));
  }, 600_000);
});
