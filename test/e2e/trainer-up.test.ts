/**
 * Issue 35, Acceptance: a PyTorch consortium from nothing, typed in a folder outside the checkout
 * as docs/trainer.md says (`fedscore init demo --trainer torch --silos 3`, then `fedscore up demo`;
 * the test adds `--backend cpu`, a small data set and, for its checks, `--keep-serving`): every
 * round runs with the silos' PyTorch trainers, the leaderboard is printed, v(M) of the last round
 * is above the initial model's v(M0), and the service's private scores equal those that
 * `fedscore score --utilities` computes from the same utilities (the silos' reports, v(M), v(M0)).
 * Then `up` again with one silo SIGKILLed in round 2 and restarted from round 3.
 *
 * Needs python3 with torch and numpy (Debian: python3-torch python3-numpy; FEDSCORE_PYTHON picks
 * the interpreter, default /usr/bin/python3 where it exists).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, onTestFailed } from 'vitest';
import { projectCommands, readProject } from '../../src/cli/actions/project.js';
import { parseUtilitiesFile } from '../../src/records/utilities-file.js';
import { scoreUtilities } from '../../src/records/utility-scores.js';
import { ROOT, until } from './_processes.js';
import { TORCH_INIT, TORCH_UP } from './_torch.js';

const PYTHON =
  process.env.FEDSCORE_PYTHON ?? (existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3');
const user = mkdtempSync(join(tmpdir(), 'fedscore-e2e-torch-'));
const started: ChildProcess[] = [];

afterAll(() => {
  for (const c of started)
    try {
      process.kill(-c.pid!, 'SIGKILL');
    } catch {}
  rmSync(user, { recursive: true, force: true });
});

/** What the test adds: a small, fast run on the CPU. */
const SMALL = ['--examples', '40', '--test-size', '60', '--rounds', '3'];

/** `npm --prefix <checkout> run -s fedscore -- <args>` typed in the user's folder. */
function fedscore(args: readonly string[], cwd = user) {
  const { DATABASE_URL: _shared, FEDSCORE_ADMIN_TOKEN: _t, ...env } = process.env;
  const child = spawn('npm', ['--prefix', ROOT, 'run', '-s', 'fedscore', '--', ...args], {
    cwd,
    env: { ...env, FEDSCORE_PYTHON: PYTHON },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  const lines: string[] = [];
  let buf = '';
  const onData = (d: Buffer) => {
    buf += d.toString();
    const parts = buf.split('\n');
    buf = parts.pop()!;
    lines.push(...parts);
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
  return { child, lines, exited };
}

const torch = spawnSync(PYTHON, ['-c', 'import torch, numpy'], { encoding: 'utf8' });
const dir = join(user, 'demo');

describe.runIf(torch.status === 0)('a PyTorch consortium: fedscore init --trainer torch, fedscore up', () => {
  it('runs every round with the trainers; the model learns; the private scores are fedscore score --utilities’s', async () => {
    const init = fedscore([...TORCH_INIT, ...SMALL]);
    onTestFailed(() => console.log(init.lines.join('\n')));
    expect(await init.exited, init.lines.join('\n')).toBe(0);
    const p = readProject(dir);
    expect(p.trainer).toBe(`${PYTHON} model.py`);
    const file = JSON.parse(readFileSync(join(dir, p.consortiumFile), 'utf8'));
    expect(file.model.kind).toBe('external');

    const up = fedscore([...TORCH_UP, '--backend', 'cpu', '--keep-serving']);
    onTestFailed(() => console.log(up.lines.join('\n')));
    const url = await until(
      () => `the run to end\n${up.lines.join('\n')}`,
      () => {
        const l = up.lines.find((x) => x.includes('the service stays up at '));
        return l ? /stays up at (\S+)/.exec(l)![1] : undefined;
      },
      400_000,
    );
    const text = up.lines.join('\n');
    expect(text).toContain('3 rounds: 3 scored, 0 aborted; dropouts: none');
    expect(text).toMatch(/Leaderboard — headline: payout/); // the leaderboard `fedscore score` prints
    const admin = readFileSync(join(dir, p.tokens.admin), 'utf8').trim();
    const get = async <T>(path: string) =>
      (await (
        await fetch(`${url}/v1/consortia/${p.id}${path}`, { headers: { authorization: `Bearer ${admin}` } })
      ).json()) as T;
    const { rounds } = await get<{ rounds: { round: number; utilities: { full: number; empty: number } }[] }>(
      '/rounds',
    );
    const published = await get<{ rounds: { round: number; schemes: Record<string, (number | null)[]> }[] }>(
      '/scores',
    );
    process.kill(-up.child.pid!, 'SIGINT');
    await up.exited;
    // The model learned: the last round's v(M) is above the initial model's v(M0).
    expect(rounds).toHaveLength(3);
    expect(rounds[2]!.utilities.full).toBeGreaterThan(rounds[0]!.utilities.empty);

    // The silos' reports, as each logged them, with the service's v(M) and v(M0): a utilities file.
    const reports = p.silos.map((s) => {
      const log = readFileSync(join(dir, 'logs', `${s.name}.log`), 'utf8');
      return new Map(
        [...log.matchAll(/round (\d+): report accepted \(v\(M0\+U_i\) = (\S+), v\(M−U_i\) = (\S+)\)/g)].map(
          (m) => [Number(m[1]), [Number(m[2]), Number(m[3])]] as const,
        ),
      );
    });
    const utilities = parseUtilitiesFile(
      {
        rounds: rounds.map((r) => ({
          round: r.round,
          full: r.utilities.full,
          empty: r.utilities.empty,
          withOnly: reports.map((m) => m.get(r.round)![0]),
          without: reports.map((m) => m.get(r.round)![1]),
        })),
      },
      'the silos’ reports',
    );
    const offline = await scoreUtilities(utilities, {
      source: 'the silos’ reports',
      fedscoreVersion: 'test',
    });
    for (const [k, r] of published.rounds.entries()) {
      // Through JSON, as the service publishes them (JSON has no −0).
      const { mrsv: _none, ...mine } = JSON.parse(JSON.stringify(offline.rounds[k]!.scores));
      expect(Object.fromEntries(Object.keys(r.schemes).map((s) => [s, mine[s]]))).toEqual(r.schemes);
    }
  }, 500_000);

  it('up again, a silo SIGKILLed in round 2 and restarted: the run finishes', async () => {
    // --fresh: the first test's store holds a finished schedule (up would resume it, with nothing
    // to run). --keep-serving: the service stays up for the restarted silo whenever it is back.
    const up = fedscore([...TORCH_UP, '--backend', 'cpu', '--keep-serving', '--fresh']);
    onTestFailed(() => console.log(up.lines.join('\n')));
    const victim = await until(
      () => `round 2 to open\n${up.lines.join('\n')}`,
      () => {
        if (!up.lines.some((l) => l.includes('round 2 of 3 opened'))) return undefined;
        const l = up.lines.find((x) => / silo-1 \(silo 1, \S+ data\): pid \d+$/.test(x));
        return l ? Number(/pid (\d+)$/.exec(l)![1]) : undefined;
      },
      400_000,
    );
    process.kill(victim, 'SIGKILL');
    const url = /service (\S+) \(/.exec(up.lines.find((l) => l.includes('] service '))!)![1]!;
    const p = readProject(dir);
    const args = projectCommands(p, { server: url, port: 0, backend: 'cpu' }).clients[1]!;
    const again = fedscore([...args, '--first-round', '3'], dir);
    onTestFailed(() => console.log(again.lines.join('\n')));
    await until(
      () => `the run to end\n${up.lines.join('\n')}`,
      () => up.lines.some((x) => x.includes('the service stays up at ')) || undefined,
      400_000,
    );
    // The restarted silo checks the consortium again, rebuilds its model chain and takes part from
    // round 3 (reported, or missed when it came back after the round had started).
    expect(await again.exited, again.lines.join('\n')).toBe(0);
    expect(again.lines.join('\n')).toMatch(/silo 1 round 3: (report accepted|missed|dropped)/);
    process.kill(-up.child.pid!, 'SIGINT');
    await up.exited;
    const text = up.lines.join('\n');
    expect(up.lines.filter((l) => l.includes('a dropout'))).toHaveLength(1);
    expect(text).toMatch(/silo-1 \(silo 1\) stopped \(SIGKILL\) in round 2: a dropout/);
    expect(text).toMatch(/round 3 of 3 scored/);
    expect(text).toContain('3 rounds: 3 scored, 0 aborted');
  }, 500_000);
});
