/**
 * Issue 23, Acceptance: from nothing to a running consortium in two commands, typed in a folder
 * outside the checkout as a user would (`npm --prefix <checkout> run -s fedscore -- …`, so paths are
 * the user's, through INIT_CWD): `fedscore init` writes a project of 3 silos in three formats (IDX,
 * .npy, CSV) and `fedscore up` runs it — the service, the registration and the three silos as
 * separate processes, the schedule opening the rounds. Every round is scored, the final table names
 * the 3 silos, and no process it started is left after it returns. Then `up --fresh` runs the same
 * project again and the test SIGKILLs one silo (by the pid `up` printed) once round 2 has opened: `up`
 * reports the dropout in one line, closes the stage that waits only for it, and finishes the run.
 *
 * FEDSCORE_E2E_LOG=1 prints `up`'s output.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, onTestFailed } from 'vitest';
import { readProject } from '../../src/cli/actions/project.js';
import { ROOT, until } from './_processes.js';
import { INIT_ARGS, TEST_ONLY_ARGS, UP_ARGS } from './_quickstart.js';

const user = mkdtempSync(join(tmpdir(), 'fedscore-e2e-up-'));
const started: ChildProcess[] = [];

afterAll(() => {
  // Each command runs in its own process group (npm, tsx, node and what `up` started).
  for (const c of started)
    try {
      process.kill(-c.pid!, 'SIGKILL');
    } catch {}
  rmSync(user, { recursive: true, force: true });
});

/** `npm --prefix <checkout> run -s fedscore -- <args>` typed in the user's folder. */
function fedscore(args: string[], extraEnv: Record<string, string> = {}) {
  const { DATABASE_URL: _shared, FEDSCORE_ADMIN_TOKEN: _t, ...env } = process.env;
  const child = spawn('npm', ['--prefix', ROOT, 'run', '-s', 'fedscore', '--', ...args], {
    cwd: user,
    env: { ...env, ...extraEnv },
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

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The silos' pids `up` printed (`silo-1 (silo 1, npy data): pid 1234`). */
const pids = (lines: string[]) =>
  lines.flatMap((l) => {
    const m = / (silo-\d+) \(silo (\d+), \S+ data\): pid (\d+)$/.exec(l);
    return m ? [{ name: m[1]!, silo: Number(m[2]), pid: Number(m[3]) }] : [];
  });

describe('fedscore init and fedscore up, from a folder outside the checkout', () => {
  it('init writes the project; up scores every round, prints the table, leaves no process', async () => {
    const init = fedscore([...INIT_ARGS, ...TEST_ONLY_ARGS]);
    onTestFailed(() => console.log(init.lines.join('\n')));
    expect(await init.exited, init.lines.join('\n')).toBe(0);
    // Written where the user typed the command, not in the checkout.
    const dir = join(user, 'hospitals');
    expect(existsSync(join(ROOT, 'hospitals'))).toBe(false);
    const p = readProject(dir);
    expect(p.silos.map((s) => [s.name, s.format])).toEqual([
      ['silo-0', 'idx'],
      ['silo-1', 'npy'],
      ['silo-2', 'csv'],
    ]);
    for (const s of p.silos) expect(existsSync(join(dir, s.data)) && existsSync(join(dir, s.key))).toBe(true);
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toContain(p.digest);

    const up = fedscore([...UP_ARGS, ...TEST_ONLY_ARGS]);
    onTestFailed(() => console.log(up.lines.join('\n')));
    // Issue 34: while it runs, a second `up` on the folder and a `serve` on its store refuse at
    // once, naming the holder's PID; the first run's store is untouched (checked below).
    await until(
      () => `the service to listen\n${up.lines.join('\n')}`,
      () => (up.lines.some((l) => / service http:/.test(l)) ? true : undefined),
      300_000,
    );
    const holder = JSON.parse(readFileSync(join(dir, 'fedscore.lock'), 'utf8')).pid as number;
    const second = fedscore([...UP_ARGS, ...TEST_ONLY_ARGS]);
    expect(await second.exited).toBe(1);
    expect(second.lines.join('\n')).toContain(
      `cannot start: ${join(dir, 'fedscore.lock')} is held by fedscore up (pid ${holder} `,
    );
    const serve = fedscore(['serve', '--db', 'hospitals/fedscore.db', '--port', '0'], {
      FEDSCORE_ADMIN_TOKEN: 'a-second-operator-token-0123456789',
    });
    expect(await serve.exited).toBe(1);
    expect(serve.lines.join('\n')).toMatch(
      /fedscore serve: cannot start: .*fedscore\.db\.lock is held by fedscore serve \(pid \d+ /,
    );
    expect(await up.exited, up.lines.join('\n')).toBe(0);
    if (process.env.FEDSCORE_E2E_LOG) console.log(up.lines.join('\n'));
    const text = up.lines.join('\n');
    for (const r of [1, 2]) {
      expect(text).toMatch(new RegExp(`round ${r} of 2 opened: silo-0, silo-1, silo-2`));
      expect(text).toMatch(new RegExp(`round ${r} of 2 scored: survivors silo-0, silo-1, silo-2`));
    }
    // The leaderboard (issue 37: the one `fedscore score` prints), and scores.json in its format.
    const heading = up.lines.findIndex((l) => l.startsWith('Leaderboard — headline: payout'));
    expect(heading).toBeGreaterThan(0);
    expect(up.lines[heading + 2]).toMatch(/^\s*rank\s+silo\s+headline \(payout\)/);
    const scores = JSON.parse(readFileSync(join(dir, 'scores.json'), 'utf8'));
    expect(scores).toMatchObject({ scoresSchemaVersion: 1, headline: 'payout' });
    expect(scores.rounds.map((r: { round: number }) => r.round)).toEqual([1, 2]);
    const board = scores.leaderboard as { name: string; rank: number }[];
    expect(board.map((e) => e.name).sort()).toEqual(['silo-0', 'silo-1', 'silo-2']);
    for (const e of board)
      expect(up.lines.slice(heading + 3, heading + 6).some((l) => l.includes(e.name))).toBe(true);
    expect(text).toContain('2 rounds: 2 scored, 0 aborted; dropouts: none');
    // The dashboard dies with `up`, and the last line says so and how to keep it.
    expect(text).toMatch(/the dashboard URL above with it: run fedscore up hospitals --keep-serving/);
    expect(text).toMatch(/dashboard http:\/\/127\.0\.0\.1:\d+\/dashboard\/hospitals#token=[0-9a-f]{48}/);
    // No process left: the silos (pids printed) and the service.
    const silos = pids(up.lines);
    expect(silos.map((s) => s.name)).toEqual(['silo-0', 'silo-1', 'silo-2']);
    for (const s of silos) expect(alive(s.pid), s.name).toBe(false);
    expect(readFileSync(join(dir, 'logs/serve.log'), 'utf8')).toContain('listening on');
    // No lock is left behind.
    expect(existsSync(join(dir, 'fedscore.lock'))).toBe(false);
  }, 400_000);

  it('up --fresh, a silo SIGKILLed in round 2: one dropout line, the run finishes', async () => {
    const up = fedscore([...UP_ARGS, '--fresh', ...TEST_ONLY_ARGS]);
    onTestFailed(() => console.log(up.lines.join('\n')));
    const victim = await until(
      () => `round 2 to open\n${up.lines.join('\n')}`,
      () => (up.lines.some((l) => l.includes('round 2 of 2 opened')) ? pids(up.lines)[1] : undefined),
      300_000,
    );
    process.kill(victim.pid, 'SIGKILL');
    expect(await up.exited, up.lines.join('\n')).toBe(0);
    if (process.env.FEDSCORE_E2E_LOG) console.log(up.lines.join('\n'));
    const text = up.lines.join('\n');
    expect(text).toContain('--fresh: the previous store is kept as fedscore.db.');
    // The logs are appended: both runs' parts, each under its header.
    const log = readFileSync(join(user, 'hospitals', 'logs/serve.log'), 'utf8');
    expect(log.match(/^===== fedscore up, /gm)).toHaveLength(2);
    const dropout = up.lines.filter((l) => l.includes('a dropout'));
    expect(dropout).toHaveLength(1);
    expect(dropout[0]).toMatch(/silo-1 \(silo 1\) stopped \(SIGKILL\) in round 2: a dropout/);
    expect(text).toMatch(/round 2 of 2 scored: survivors silo-0, silo-2/);
    expect(text).toContain('2 rounds: 2 scored, 0 aborted; dropouts: silo-1');
    for (const s of pids(up.lines)) expect(alive(s.pid), s.name).toBe(false);
  }, 400_000);

  it('a silo that cannot start (its data file gone) stops up with exit code 1 and its reason', async () => {
    const dir = join(user, 'hospitals');
    const p = readProject(dir);
    const data = join(dir, p.silos[1]!.data);
    renameSync(data, `${data}.away`);
    try {
      const up = fedscore([...UP_ARGS, ...TEST_ONLY_ARGS, '--fresh']);
      onTestFailed(() => console.log(up.lines.join('\n')));
      expect(await up.exited, up.lines.join('\n')).toBe(1);
      const text = up.lines.join('\n');
      expect(text).toMatch(/silo-1 \(silo 1\) cannot start \(exit code \d+\); its last lines/);
      expect(text).toContain(p.silos[1]!.data.split('/').pop()!);
      expect(text).not.toMatch(/: a dropout;/);
      for (const s of pids(up.lines)) expect(alive(s.pid), s.name).toBe(false);
    } finally {
      renameSync(`${data}.away`, data);
    }
  }, 400_000);
});
