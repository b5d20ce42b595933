/**
 * Issue 34, acceptance: "a resumed `up` ends with the same leaderboard as an uninterrupted run of the
 * same project". A 3-silo, 3-round project (`fedscore init`) runs once without interruption; then
 * `up --fresh` runs it again and the test SIGKILLs the `up` process itself (its PID from the
 * folder's lock) once round 1 is scored — its service and silos notice and stop by themselves — and
 * `up` again resumes from the store. Its scores.json has the same rounds, cumulative scores and
 * leaderboard as the uninterrupted run's, and nothing it started is left.
 *
 * Slow (three `up` runs of real training): `npm run test:slow`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, until } from './_processes.js';

const user = mkdtempSync(join(tmpdir(), 'fedscore-e2e-resume-'));
const started: ChildProcess[] = [];
afterAll(() => {
  for (const c of started)
    try {
      process.kill(-c.pid!, 'SIGKILL');
    } catch {}
  rmSync(user, { recursive: true, force: true });
});

function fedscore(args: string[]) {
  const { DATABASE_URL: _shared, FEDSCORE_ADMIN_TOKEN: _t, ...env } = process.env;
  const child = spawn(
    process.execPath,
    ['--import', import.meta.resolve('tsx'), join(ROOT, 'src/cli/main.ts'), ...args],
    {
      cwd: user,
      env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
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
const dir = join(user, 'resume');
const scoresJson = () => JSON.parse(readFileSync(join(dir, 'scores.json'), 'utf8'));
/** What must agree between two runs (the source names the service's URL, whose port differs). */
const comparable = (s: { rounds: unknown; cumulative: unknown; leaderboard: unknown }) => ({
  rounds: s.rounds,
  cumulative: s.cumulative,
  leaderboard: s.leaderboard,
});

describe('fedscore up, SIGKILLed and run again', () => {
  it('resumes from the store and ends with the uninterrupted run’s leaderboard', async () => {
    const init = fedscore([
      'init',
      'resume',
      '--silos',
      '3',
      '--rounds',
      '3',
      '--examples',
      '60',
      '--backend',
      'cpu',
    ]);
    expect(await init.exited, init.lines.join('\n')).toBe(0);
    const whole = fedscore(['up', 'resume', '--backend', 'cpu']);
    expect(await whole.exited, whole.lines.join('\n')).toBe(0);
    const reference = comparable(scoresJson());
    expect((reference.rounds as unknown[]).length).toBe(3);

    const first = fedscore(['up', 'resume', '--fresh', '--backend', 'cpu']);
    await until(
      () => `round 1 to be scored\n${first.lines.join('\n')}`,
      () => (first.lines.some((l) => l.includes('round 1 of 3 scored')) ? true : undefined),
      400_000,
    );
    const upPid = JSON.parse(readFileSync(join(dir, 'fedscore.lock'), 'utf8')).pid as number;
    process.kill(upPid, 'SIGKILL');
    const silos = first.lines.flatMap((l) => {
      const m = / pid (\d+)$/.exec(l);
      return m ? [Number(m[1])] : [];
    });
    expect(silos).toHaveLength(3);

    const again = fedscore(['up', 'resume', '--backend', 'cpu']);
    const code = await again.exited;
    const text = again.lines.join('\n');
    expect(code, text).toBe(0);
    expect(text).toContain(`the previous fedscore up (pid ${upPid}`);
    expect(text).toMatch(/resuming from the store fedscore\.db: 1 round over/);
    expect(comparable(scoresJson())).toEqual(reference);
    // The interrupted run's silos stopped by themselves; nothing of the second run is left.
    for (const pid of silos) expect(alive(pid)).toBe(false);
    expect(existsSync(join(dir, 'fedscore.lock'))).toBe(false);
  }, 1_200_000);
});
