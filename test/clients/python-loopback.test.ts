/**
 * A reports-only consortium on loopback with three Python silos, as docs/networked.md's worked
 * example runs it: the client is installed as a package (`pip install ./clients/python` into a
 * fresh virtual environment, clients/python/pyproject.toml); the service listens on a real socket
 * (as `fedscore serve` does); the operator creates the consortium with `fedscore consortium create
 * --external`; each silo makes its key with `fedscore-client keygen` and is a process of
 * example_silo.py run outside the checkout (it imports the installed package); and the scores the
 * service publishes, read back with `fedscore-client scores` (a table, and `--json`), equal those
 * `fedscore score --utilities` computes from the same utilities. Skipped, saying why, only without
 * python3 or `cryptography`; without python3-venv, -setuptools or -pip it fails, naming them.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { rankLabel } from '../../scoring/leaderboard.js';
import type { CumulativeScores } from '../../src/consortium/schemas.js';
import type { ExperimentConfig } from '../../src/records/config.js';
import { leaderboardOfPublished } from '../../src/records/leaderboard.js';
import type { UtilityScores } from '../../src/records/utility-scores.js';
import { type App, buildApp } from '../../src/server/app.js';
import { openStore, type StoreHandle } from '../../src/server/store/database.js';
import { cli } from '../cli/_cli.js';
import { installClient, PYTHON_CLIENT_DIR, pythonProblem, run, venvProblem } from './_python.js';

const ADMIN = 'loopback-admin-token-0123456789';
const CID = 'py-loopback';
const SCHEMES = ['loo', 'ioi', 'fp', 'ee', 'eeMedian'] as const;

/** The consortium's utilities, in the format of docs/utilities.md (silo 2 misses round 3). */
const UTILITIES = {
  silos: ['silo-0', 'silo-1', 'silo-2'],
  rounds: [
    { round: 1, full: 0.71, empty: 0.35, withOnly: [0.52, 0.48, 0.41], without: [0.63, 0.66, 0.7] },
    { round: 2, full: 0.79, empty: 0.71, withOnly: [0.74, 0.73, 0.69], without: [0.77, 0.78, 0.79] },
    { round: 3, full: 0.83, empty: 0.79, withOnly: [0.8, 0.815, null], without: [0.82, 0.8, null] },
  ],
};

/** The operator's configuration (docs/networked.md's worked example): 3 silos, t = 2. */
const CONFIG: ExperimentConfig = {
  silos: 3,
  rounds: 3,
  data: {
    dataset: 'synthetic',
    trainSize: 60,
    testSize: 30,
    synthetic: { features: 4, classes: 3, examples: 200 },
  },
  model: { kind: 'mlp', hidden: [5] },
  secureAggregation: { threshold: 2 },
};

const problem = pythonProblem();
if (problem) console.warn(`python-loopback.test.ts: skipped — ${problem}`);

describe.skipIf(problem !== undefined)('three Python silos in a reports-only consortium on loopback', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fedscore-py-'));
  let store: StoreHandle | undefined;
  let app: App | undefined;
  const children: ChildProcess[] = [];
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await app?.close();
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('scores the rounds exactly as `fedscore score --utilities` does', async () => {
    const missing = venvProblem();
    if (missing) throw new Error(missing);
    const { python, fedscoreClient } = await installClient(dir);
    // The silo script from outside the checkout: it imports the installed fedscore_client.
    const exampleSilo = join(dir, 'example_silo.py');
    copyFileSync(join(PYTHON_CLIENT_DIR, 'example_silo.py'), exampleSilo);
    store = await openStore({ sqlite: join(dir, 'store.db') });
    app = await buildApp({ store, adminToken: ADMIN });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const server = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    const admin = async (method: string, path: string, body?: unknown) => {
      const r = await fetch(`${server}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${ADMIN}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: r.status, json: (await r.json()) as Record<string, unknown> };
    };

    // Each silo makes its key with `fedscore-client keygen`; the operator collects the public keys
    // and creates the reports-only consortium with `fedscore consortium create --external`.
    const keys = [0, 1, 2].map((i) => join(dir, `silo-${i}.key`));
    const publicKeys = await Promise.all(
      keys.map(async (k) => (await run(fedscoreClient, ['keygen', '--out', k])).trim()),
    );
    for (const pk of publicKeys) expect(pk).toMatch(/^[0-9a-f]{64}$/);
    writeFileSync(join(dir, 'keys.txt'), `${publicKeys.join('\n')}\n`);
    writeFileSync(join(dir, 'cfg.json'), JSON.stringify(CONFIG));
    const printed: string[] = [];
    const quiet = vi.spyOn(process.stdout, 'write').mockImplementation((t: string | Uint8Array) => {
      printed.push(String(t));
      return true;
    });
    let created: Awaited<ReturnType<typeof cli>>;
    try {
      created = await cli(
        [
          ...['consortium', 'create', '--server', server, '--id', CID, '--external'],
          ...[
            '--config',
            join(dir, 'cfg.json'),
            '--keys',
            join(dir, 'keys.txt'),
            '--out',
            join(dir, 'consortium.json'),
          ],
          ...['--backend', 'cpu'],
        ],
        { env: { FEDSCORE_ADMIN_TOKEN: ADMIN } },
      );
    } finally {
      quiet.mockRestore();
    }
    expect(created.code, created.err).toBe(0);
    expect(printed.join('')).toContain(`reports-only consortium ${CID} registered at ${server}`);
    const consortium = await admin('GET', `/v1/consortia/${CID}`);
    expect(consortium.json).toMatchObject({ secureAggregation: 'external', threshold: 2 });

    // Three silo processes, each with its own reports; they wait for the operator's rounds.
    const exits = [0, 1, 2].map((i) => {
      const reports = UTILITIES.rounds
        .filter((r) => r.withOnly[i] !== null)
        .map((r) => ({ round: r.round, singleton: r.withOnly[i], complement: r.without[i] }));
      const file = join(dir, `reports-${i}.json`);
      writeFileSync(file, JSON.stringify(reports));
      const child = spawn(
        python,
        [
          exampleSilo,
          ...['--server', server, '--consortium', CID, '--silo', String(i), '--key', keys[i]!],
          ...['--reports', file],
        ],
        { stdio: ['ignore', 'pipe', 'pipe'], cwd: dir },
      );
      children.push(child);
      let out = '';
      let err = '';
      child.stdout!.on('data', (d) => {
        out += d;
      });
      child.stderr!.on('data', (d) => {
        err += d;
      });
      return new Promise<{ code: number | null; out: string; err: string }>((resolve) =>
        child.on('exit', (code) => resolve({ code, out, err })),
      );
    });

    const stageOf = async (round: number) =>
      (await admin('GET', `/v1/consortia/${CID}/rounds/${round}`)).json.stage;
    const until = async (what: string, ok: () => Promise<boolean>) => {
      const end = Date.now() + 30_000;
      while (!(await ok())) {
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    for (const r of UTILITIES.rounds) {
      const opened = await admin('POST', `/v1/consortia/${CID}/rounds/${r.round}/utilities`, {
        full: r.full,
        empty: r.empty,
      });
      expect(opened.status, JSON.stringify(opened.json)).toBe(201);
      if (r.round < 3)
        await until(`round ${r.round} scored`, async () => (await stageOf(r.round)) === 'scored');
    }
    // Silo 2 does not report round 3: once silos 0 and 1 are done, the operator closes it.
    const done = await Promise.all(exits);
    for (const [i, d] of done.entries()) {
      expect(d.err).toBe('');
      expect(d.code).toBe(0);
      expect(d.out.trim().split('\n').length, `silo ${i}`).toBe(i === 2 ? 2 : 3);
    }
    expect(await stageOf(3)).toBe('reporting');
    const closed = await admin('POST', `/v1/consortia/${CID}/rounds/3/advance`, { stage: 'reporting' });
    expect(closed.json.stage).toBe('scored');

    // A refused report reaches the Python silo as the service's error code (exit 1).
    const silo = (i: number) => [
      '--server',
      server,
      '--consortium',
      CID,
      '--silo',
      String(i),
      '--key',
      keys[i]!,
    ];
    await expect(
      run(fedscoreClient, [
        'report',
        ...silo(2),
        '--round',
        '3',
        '--singleton',
        '1.5',
        '--complement',
        '0.5',
      ]),
    ).rejects.toThrow(/exit 1\nfedscore-client: HTTP 400 FEDSCORE_ERR_UTILITY_OUT_OF_RANGE/);

    // The scores as a Python silo reads them: a table, and the service's JSON with --json …
    const service = JSON.parse(
      await run(fedscoreClient, ['scores', ...silo(1), '--json']),
    ) as CumulativeScores;
    const cumulative = (await run(fedscoreClient, ['scores', ...silo(1)])).trimEnd().split('\n');
    expect(cumulative[0]).toBe(
      `consortium ${CID}: cumulative scores over 3 scored rounds (1, 2, 3); headline: 95 % interval by bootstrap over rounds, rank "2–3" a near-tie`,
    );
    expect(cumulative[1]!.split(/\s+/)).toEqual([
      'silo',
      ...SCHEMES,
      'headline',
      '95',
      '%',
      'interval',
      'share',
      'rank',
    ]);
    // the headline and share: the service's leaderboard (the dashboard's) of the same rounds
    const board = leaderboardOfPublished(['0', '1', '2'], service.rounds);
    expect(cumulative.slice(2).map((l) => l.split(/\s+/))).toEqual(
      [0, 1, 2].map((i) => {
        const e = board.find((x) => x.silo === i)!;
        return [
          String(i),
          ...SCHEMES.map((m) => service.cumulative[m]![i]!.toFixed(4)),
          e.headline.toFixed(4),
          `[${e.interval![0].toFixed(4)},`,
          `${e.interval![1].toFixed(4)}]`,
          e.share!.toFixed(4),
          rankLabel(e),
        ];
      }),
    );
    const round3 = (await run(fedscoreClient, ['scores', ...silo(0), '--round', '3'])).trimEnd().split('\n');
    expect(round3[0]).toBe('round 3: v(M) = 0.8300, v(M0) = 0.7900; scored silos 0, 1');
    expect(round3[1]!.split(/\s+/)).toEqual(['silo', 'v(M0+U_i)', 'v(M-U_i)', ...SCHEMES]);
    expect(round3[4]!.split(/\s+/)).toEqual(['2', '–', '–', ...SCHEMES.map(() => '–')]);
    // … and as `fedscore score --utilities` computes them from the same utilities.
    const file = join(dir, 'utilities.json');
    writeFileSync(file, JSON.stringify(UTILITIES));
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    let r: Awaited<ReturnType<typeof cli>>;
    try {
      r = await cli(['score', '--utilities', file, '--out', join(dir, 'out')]);
    } finally {
      spy.mockRestore();
    }
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const offline = JSON.parse(readFileSync(join(dir, 'out', 'scores.json'), 'utf8')) as UtilityScores;

    expect(service.rounds.map((x) => x.round)).toEqual([1, 2, 3]);
    expect(service.rounds[2]!.silos).toEqual([0, 1]);
    for (const [k, round] of service.rounds.entries()) {
      expect(round.utilities).toEqual({ full: UTILITIES.rounds[k]!.full, empty: UTILITIES.rounds[k]!.empty });
      for (const m of SCHEMES) {
        const want = offline.rounds[k]!.scores[m]!;
        const got = round.schemes[m]!;
        expect(
          got.map((x) => x === null),
          `round ${k + 1} ${m}`,
        ).toEqual(want.map((x) => x === null));
        got.forEach((x, i) => {
          if (x !== null) expect(x, `round ${k + 1} ${m} silo ${i}`).toBeCloseTo(want[i]!, 12);
        });
      }
    }
    for (const m of SCHEMES)
      service.cumulative[m]!.forEach((x, i) => {
        expect(x, `cumulative ${m} silo ${i}`).toBeCloseTo(offline.cumulative[m]![i]!, 12);
      });
  });
});
