/** A sweep's jobs and ids (src/sweep/spec.ts) and the sweep commands' usage errors. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/records/config.js';
import { jobsOf, labelsOf, queueJobId, seedsOf, sweepId } from '../../src/sweep/spec.js';
import { sweepOf } from '../../src/sweep/submit.js';
import { cli, dryRun } from '../cli/_cli.js';

const cfg = (seed: number, alpha = 1) =>
  parseConfig({
    seed,
    silos: 4,
    rounds: 2,
    data: { dataset: 'synthetic', trainSize: 300, testSize: 100 },
    partition: { kind: 'dirichlet', alpha },
  });

describe('sweep specs', () => {
  it('counts seeds as experiment --seeds k does, and labels configurations by file name, uniquely', () => {
    expect(seedsOf(cfg(3), 3)).toEqual([3, 4, 5]);
    expect(seedsOf(cfg(7))).toEqual([7]);
    expect(labelsOf(['examples/a.json', 'other/a.json', 'b.json', 'x y.JSON'])).toEqual([
      'a',
      'a-2',
      'b',
      'x_y',
    ]);
  });

  it('one job per configuration × seed; the id depends on the configurations and seeds only', () => {
    const spec = sweepOf(
      [
        { path: 'a.json', config: cfg(3) },
        { path: 'b.json', config: cfg(3, 0.3) },
      ],
      3,
    );
    const jobs = jobsOf(spec);
    expect(jobs.map((j) => [j.configIndex, j.seed])).toEqual([
      [0, 3],
      [0, 4],
      [0, 5],
      [1, 3],
      [1, 4],
      [1, 5],
    ]);
    expect(new Set(jobs.map((j) => j.key)).size).toBe(6);
    // the same sweep from other paths is the same sweep; other seeds or configurations are not
    const same = sweepOf(
      [
        { path: 'x/a.json', config: cfg(3) },
        { path: 'x/b.json', config: cfg(3, 0.3) },
      ],
      3,
    );
    expect(sweepId(same)).toBe(sweepId(spec));
    expect(sweepId(sweepOf([{ path: 'a.json', config: cfg(3) }], 3))).not.toBe(sweepId(spec));
    expect(
      sweepId(
        sweepOf(
          spec.configs.map((c) => ({ path: c.path, config: c.config })),
          2,
        ),
      ),
    ).not.toBe(sweepId(spec));
  });

  it('--chunks: k chunk jobs per seed of a configuration with the true Shapley value, none for the others; another sweep id', () => {
    const withSv = parseConfig({ ...cfg(3), silos: 3, comparison: { trueShapley: true } });
    // 4 silos: the true Shapley value is on by default (n ≤ 6), so switch it off
    const off = parseConfig({ ...cfg(3, 0.5), comparison: { trueShapley: false } });
    const plain = sweepOf(
      [
        { path: 'sv.json', config: withSv },
        { path: 'off.json', config: off },
      ],
      2,
    );
    const spec = sweepOf(
      [
        { path: 'sv.json', config: withSv },
        { path: 'off.json', config: off },
      ],
      2,
      3,
    );
    expect(plain.chunks).toBeUndefined();
    expect(spec.chunks).toEqual([3, 0]);
    const jobs = jobsOf(spec);
    expect(
      jobs.map((j) => [j.configIndex, j.seed, j.chunk ? `${j.chunk.index + 1}/${j.chunk.of}` : 'run']),
    ).toEqual([
      [0, 3, 'run'],
      [0, 3, '1/3'],
      [0, 3, '2/3'],
      [0, 3, '3/3'],
      [0, 4, 'run'],
      [0, 4, '1/3'],
      [0, 4, '2/3'],
      [0, 4, '3/3'],
      [1, 3, 'run'],
      [1, 4, 'run'],
    ]);
    // the seeds' own jobs keep the keys they have without chunks
    expect(jobs.filter((j) => !j.chunk).map((j) => j.key)).toEqual(jobsOf(plain).map((j) => j.key));
    expect(new Set(jobs.map((j) => j.key)).size).toBe(jobs.length);
    expect(sweepId(spec)).not.toBe(sweepId(plain));
    // at most 2^silos chunks: 3 silos, 8 coalitions
    expect(sweepOf([{ path: 'sv.json', config: withSv }], 1, 100).chunks).toEqual([8]);
  });

  it('queue ids are UUIDs, one per (sweep, job), stable', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), fc.string(), (sweep, k1, k2) => {
        const a = queueJobId(sweep, k1);
        expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        expect(queueJobId(sweep, k1)).toBe(a);
        if (k1 !== k2) expect(queueJobId(sweep, k2)).not.toBe(a);
      }),
    );
  });
});

describe('sweep and worker usage', () => {
  it('names the flag of a bad queue URL, sweep id or missing flag (exit 2)', async () => {
    const { commands, calls } = dryRun();
    const run = (argv: string[]) => cli(argv, { commands });
    expect((await run(['worker', '--queue', 'http://h/db'])).err).toMatch(
      /^fedscore: --queue: expected a postgres:\/\/ URL, got 'http:\/\/h\/db'/,
    );
    expect((await run(['sweep', 'status', '--queue', 'postgres://h/db', '--id', 'x'])).err).toMatch(
      /^fedscore: --id: expected sw- and 16 hex digits, got 'x'/,
    );
    expect((await run(['sweep', 'submit', '--queue', 'postgres://h/db'])).err).toMatch(
      /^fedscore: --config: required/,
    );
    expect((await run(['worker', '--queue', 'postgres://h/db', '--concurrency', '0'])).err).toMatch(
      /^fedscore: --concurrency: expected an integer in \[1, 256\], got '0'/,
    );
    expect((await run(['sweep'])).code).toBe(2);
    expect(
      (await run(['sweep', 'submit', '--queue', 'postgres://h/db', '--config', 'a.json', '--chunks', '0']))
        .err,
    ).toMatch(/^fedscore: --chunks: expected an integer in \[1, 65536\], got '0'/);
    expect(calls).toEqual([]);
  });
});
