/**
 * Issue 34, acceptance: "a resumed `up` ends with the same leaderboard as an uninterrupted run of the
 * same project". A 3-silo, 3-round project (`fedscore init`) runs once without interruption; then
 * `up --fresh` runs it again and the test SIGKILLs the `up` process itself (its PID from the
 * folder's lock) once round 1 is scored — its service and silos notice and stop by themselves — and
 * `up` again resumes from the store. Its scores.json has the same rounds, cumulative scores and
 * leaderboard as the uninterrupted run's, and nothing it started is left.
 *
 * And an `up` SIGKILLed mid-Unmasking (src/cli/actions/up-replay.ts): the silos' processes are
 * stepped with SIGSTOP/SIGCONT so that exactly one of three (t = 2) has sent its Unmasking response
 * when the whole process group is SIGKILLed; `up` again closes round 1 (it aborts with its code),
 * the silo that answered sits out round 2 (on the same base, which it refuses) and is back in round
 * 3 — no wait, no "dropout", its journal agreeing with the store.
 *
 * Slow (three `up` runs of real training): `npm run test:slow`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readProject } from '../../src/cli/actions/project.js';
import { journalPathOf } from '../../src/client/journal.js';
import { openStore } from '../../src/server/store/database.js';
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

/**
 * `fedscore init <name> --silos n` and `up`, SIGKILLed (the whole process group) once the silos of
 * `g2` — and they alone — have sent their Unmasking response in round 1. The silos' processes are
 * stepped with SIGSTOP/SIGCONT, one group running at a time; each runs until it waits for the other
 * group's messages, so the order is fixed: `g2` advertises first, `g1` shares first, `g2` masks
 * first, `g1` sends its consistency checks first, and `g2`, the last to send theirs, is the only
 * group running when the Unmasking requests are served.
 */
async function killMidUnmask(name: string, n: number, g2: number[]): Promise<string> {
  const project = join(user, name);
  const init = fedscore([
    'init',
    name,
    '--silos',
    String(n),
    '--rounds',
    '3',
    '--examples',
    '60',
    '--backend',
    'cpu',
  ]);
  expect(await init.exited, init.lines.join('\n')).toBe(0);
  const first = fedscore(['up', name, '--backend', 'cpu']);
  const pids = await until(
    () => `the silos' pids\n${first.lines.join('\n')}`,
    () => {
      const p = first.lines.flatMap((l) => {
        const m = /^.*\] silo-(\d) \(silo \d.*: pid (\d+)$/.exec(l);
        return m ? [[Number(m[1]), Number(m[2])] as const] : [];
      });
      return p.length === n ? new Map(p) : undefined;
    },
    120_000,
  );
  const g1 = [...pids.keys()].filter((i) => !g2.includes(i));
  const signal = (silos: number[], s: NodeJS.Signals) => {
    for (const i of silos) process.kill(pids.get(i)!, s);
  };
  const log = (i: number) => {
    try {
      return readFileSync(join(project, 'logs', `silo-${i}.log`), 'utf8');
    } catch {
      return '';
    }
  };
  const sent = (silos: number[], type: string) =>
    until(
      () => `${type} of silos ${silos.join(', ')}\n${first.lines.join('\n')}`,
      () => (silos.every((i) => log(i).includes(`round 1: ${type} accepted`)) ? true : undefined),
      400_000,
    );
  signal(g1, 'SIGSTOP');
  await sent(g2, 'advertise');
  signal(g2, 'SIGSTOP');
  signal(g1, 'SIGCONT');
  await sent(g1, 'share');
  signal(g1, 'SIGSTOP');
  signal(g2, 'SIGCONT');
  await sent(g2, 'mask');
  signal(g2, 'SIGSTOP');
  signal(g1, 'SIGCONT');
  await sent(g1, 'consistency');
  signal(g1, 'SIGSTOP');
  signal(g2, 'SIGCONT');
  await sent(g2, 'unmask');
  // Everything at once: up, its service, the silos (stopped ones included).
  process.kill(-first.child.pid!, 'SIGKILL');
  await first.exited;
  await until(
    () => 'the killed processes to be gone',
    () => ([...pids.values()].every((p) => !alive(p)) ? true : undefined),
    30_000,
  );
  for (const i of g1) expect(log(i)).not.toContain('round 1: unmask accepted');
  return project;
}

/** The silos whose Unmasking response of round `r` the store of `project` holds. */
async function storedUnmask(project: string, r: number): Promise<number[]> {
  const store = await openStore({ sqlite: join(project, 'fedscore.db') });
  try {
    const rows = await store.db
      .selectFrom('messages')
      .select('silo')
      .where('round', '=', r)
      .where('stage', '=', 'unmask')
      .orderBy('silo')
      .execute();
    return rows.map((x) => x.silo);
  } finally {
    await store.close();
  }
}

describe('fedscore up, SIGKILLed mid-Unmasking and run again', () => {
  it('aborts the round with its code; the silo that unmasked sits out round 2, none is a dropout', async () => {
    // 3 silos, t = 2: silo 2 alone answered.
    const project = await killMidUnmask('unmask', 3, [2]);
    const again = fedscore(['up', 'unmask', '--backend', 'cpu']);
    const code = await again.exited;
    const text = again.lines.join('\n');
    // Round 1 aborted: up says so with exit code 1, as for any aborted round — after the last round.
    expect(code, text).toBe(1);
    expect(text).toMatch(/round 1 was interrupted in unmask, past masking/);
    expect(text).toMatch(/round 1 of 3 aborted: [A-Z][A-Z_]+: /);
    expect(text).toContain(
      'silo-2 had sent its Unmasking response in it: FEDSCORE_ERR_BASE_ALREADY_UNMASKED: it refuses every round on its base model (version 0)',
    );
    expect(text).toContain('it sits out until a round has a result, the others go on');
    expect(text).toContain(
      'round 2: closing advertise now: it waits only for silo-2, sitting out the rounds on a base model it unmasked on',
    );
    expect(text).toContain('round 2 of 3 scored: survivors silo-0, silo-1');
    expect(text).toContain('silo-2 takes part again from round 3');
    expect(text).toContain('round 3 of 3 scored: survivors silo-0, silo-1, silo-2');
    expect(text).toContain('3 rounds: 2 scored, 1 aborted; dropouts: none');
    expect(text).not.toContain('a dropout');
    const scores = JSON.parse(readFileSync(join(project, 'scores.json'), 'utf8'));
    // Round 1 has no scores; silo 2 reported nothing in round 2 (it sat out) and did in round 3.
    expect(
      scores.rounds.map((r: { round: number; scores: { loo: (number | null)[] } }) => [
        r.round,
        r.scores.loo.map((x) => x !== null),
      ]),
    ).toEqual([
      [2, [true, true, false]],
      [3, [true, true, true]],
    ]);
    // The journals agree with the store: silo 2 alone unmasked in round 1, stored; it has nothing in round 2.
    const journal = (i: number) =>
      readFileSync(journalPathOf(join(project, readProject(project).silos[i]!.key)), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { kind: string; round: number });
    const unmasked = (i: number) =>
      journal(i)
        .filter((e) => e.kind === 'unmasked')
        .map((e) => e.round);
    // (silos 0 and 1 unmasked on M0 once, in round 2; every silo on version 2 in round 3.)
    expect([unmasked(0), unmasked(1), unmasked(2)]).toEqual([
      [2, 3],
      [2, 3],
      [1, 3],
    ]);
    expect(journal(2).filter((e) => e.round === 2)).toEqual([]);
    expect(await storedUnmask(project, 1)).toEqual([2]);
    expect(existsSync(join(project, 'fedscore.lock'))).toBe(false);
  }, 1_200_000);

  it('stops with exit code 1 and one line when the silos left are fewer than t', async () => {
    // 4 silos, t = 3: silos 2 and 3 answered, the 2 others cannot make a round on M0.
    const project = await killMidUnmask('unmask4', 4, [2, 3]);
    expect(await storedUnmask(project, 1)).toEqual([2, 3]);
    const again = fedscore(['up', 'unmask4', '--backend', 'cpu']);
    const code = await again.exited;
    const text = again.lines.join('\n');
    expect(code, text).toBe(1);
    expect(text).toMatch(
      /\] cannot go on: round 1 aborted \(BELOW_THRESHOLD\) without a result; silo-2, silo-3 had sent their Unmasking responses in it: FEDSCORE_ERR_BASE_ALREADY_UNMASKED: they refuse every round on its base model \(version 0\), the next round's \(docs\/threat-model\.md, "Round replay"\), and the 2 other silos are fewer than t = 3; fedscore up unmask4 --fresh starts over$/m,
    );
    // No silo was started, nothing is left.
    expect(text).not.toMatch(/: pid \d+$/m);
    expect(existsSync(join(project, 'fedscore.lock'))).toBe(false);
  }, 1_200_000);
});
