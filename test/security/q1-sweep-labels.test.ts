/**
 * Issue 32, Q1: sweep labels become paths. A configuration file named `...json` got the label `..`
 * at submit, and `sweep collect` wrote its results.json and reports into the parent of `--out`; a
 * label read back from the queue database was joined to `--out` unchecked, so whoever can write
 * that database chooses where collect writes.
 *
 * Against the code before the fix (f7a4317): `labelsOf` gave `..`, `.` and `.hidden`, and collect
 * of a sweep labelled `..` wrote `results.json` beside `--out` (both tests failed). Needs
 * PostgreSQL (DATABASE_URL), as the sweep queue does; the labels' own checks need none.
 */
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/records/config.js';
import { collectSweep, labelFolder } from '../../src/sweep/collect.js';
import { runJob } from '../../src/sweep/run-job.js';
import { checkLabel, jobsOf, labelsOf, queueJobId, type SweepSpec, sweepId } from '../../src/sweep/spec.js';
import { SweepStore } from '../../src/sweep/store.js';
import { sweepOf } from '../../src/sweep/submit.js';

const url = process.env.DATABASE_URL;

/** The characters a hostile file name mixes: dots, separators, controls, non-ASCII, plain letters. */
const NAME_CHARS = fc.constantFrom(
  '.',
  '.',
  '/',
  '\\',
  'a',
  'b',
  '-',
  '_',
  ' ',
  '\n',
  '\u001b',
  'é',
  '\u202e',
);

describe('labels at submit', () => {
  it('a file named ...json, ..json or .hidden.json gets a plain folder name', () => {
    expect(labelsOf(['/x/...json', '/x/..json', 'a/.hidden.json', 'b/.json', 'c/ok.json'])).toEqual([
      'config',
      'config-2',
      'hidden',
      'config-3',
      'ok',
    ]);
  });

  it('every label of any file name passes the check collect applies', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: NAME_CHARS, maxLength: 120 }), { maxLength: 6 }), (names) => {
        const labels = labelsOf(names.map((n) => `/dir/${n}`));
        return labels.every((l) => checkLabel(l, 'label') === l) && new Set(labels).size === labels.length;
      }),
      { numRuns: 200 },
    );
  });

  it('the check refuses ., .., separators, control characters and the empty label, naming the field', () => {
    for (const bad of ['.', '..', '../x', 'a/b', 'a\\b', '/abs', '', 'x\u001b[2J', 'a\nb', '.hidden', 7])
      expect(() => checkLabel(bad, 'sweep s: configs[0].label')).toThrow(
        /^sweep s: configs\[0\]\.label: expected/,
      );
    expect(() => labelFolder('/tmp/out', '..', 'f')).toThrow(/^f: /);
    expect(labelFolder('/tmp/out', 'a.b', 'f')).toBe('/tmp/out/a.b');
  });
});

describe.skipIf(!url)('sweep collect with labels read back from the queue database', () => {
  const admin = new pg.Client({ connectionString: url });
  let queue: string;
  let dbName: string;
  let dir: string;
  const config = {
    name: 'tiny',
    seed: 3,
    silos: 3,
    rounds: 1,
    data: { dataset: 'synthetic', trainSize: 60, testSize: 30, synthetic: { features: 4, classes: 2 } },
    model: { kind: 'mlp', hidden: [4] },
    training: { epochs: 1, batchSize: 32 },
  };

  beforeAll(async () => {
    await admin.connect();
    dbName = `fedscore_q1_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    await admin.query(`CREATE DATABASE ${dbName}`);
    const u = new URL(url!);
    u.pathname = `/${dbName}`;
    queue = u.toString();
    dir = await mkdtemp(join(tmpdir(), 'fedscore-q1-'));
  });
  afterAll(async () => {
    await admin.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    await admin.end();
    await rm(dir, { recursive: true, force: true });
  });

  /** Records `spec` with every job done (one real seed run), as workers would leave it. */
  async function recordDone(spec: SweepSpec): Promise<string> {
    const id = sweepId(spec);
    const jobs = jobsOf(spec);
    const store = await SweepStore.open(queue);
    try {
      await store.submit(id, spec, jobs, (key) => queueJobId(id, key));
      for (const j of jobs) await store.finish(id, j.key, await runJob(spec, j, { codeVersion: 'test' }));
    } finally {
      await store.close();
    }
    return id;
  }

  it('a label `..` planted in the database is refused, naming it, and nothing is written outside --out', async () => {
    // As `sweep submit` records a file named `...json`: a plain label, collected inside --out.
    const spec = sweepOf([{ path: join(dir, '...json'), config: parseConfig(config, '...json') }], 1);
    const label = spec.configs[0]!.label;
    expect(label).toBe('config');
    const id = await recordDone(spec);
    const out = join(dir, 'runs', 'out');
    const c = await collectSweep(queue, id, out, { fedscoreVersion: 'test' });
    expect(c.written.map((w) => w.dir)).toEqual([join(out, label)]);
    expect(existsSync(join(out, label, 'results.json'))).toBe(true);

    // Whoever can write the queue database rewrites the label: collect refuses before writing.
    for (const planted of ['..', '../../etc', '.']) {
      const db = new pg.Client({ connectionString: queue });
      await db.connect();
      try {
        await db.query('UPDATE fedscore_sweep SET spec = $2 WHERE id = $1', [
          id,
          JSON.stringify({ ...spec, configs: [{ ...spec.configs[0]!, label: planted }] }),
        ]);
      } finally {
        await db.end();
      }
      await expect(collectSweep(queue, id, out, { fedscoreVersion: 'test' })).rejects.toThrow(
        `sweep ${id}: configs[0].label: expected`,
      );
      expect(existsSync(join(dir, 'runs', 'results.json'))).toBe(false);
      expect(existsSync(join(out, 'results.json'))).toBe(false);
    }
  }, 60_000);
});
