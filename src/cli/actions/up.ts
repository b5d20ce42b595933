/**
 * `fedscore up <dir>`: runs a consortium project (project.ts) on this machine as separate
 * processes — `fedscore serve` (SQLite in the folder), `fedscore consortium create --server` (which
 * registers the consortium and so starts the service's schedule) and one `fedscore client` per silo,
 * the command lines of projectCommands — and follows the run over the service's API. Its steps, in
 * order (issue 34):
 *
 * 1. {@link lockFolder}: `up` owns its folder — a second `up` (or a `serve` on its store) refuses
 *    at once, naming the holder's PID (./lock.ts); a lock left by a SIGKILLed `up` is taken over.
 * 2. {@link waitForStore}, {@link openStoreState}: the store is never moved aside by a failed start: the schedule resumes
 *    from it (./up-store.ts); `--fresh` keeps it under a dated name and starts over.
 * 3. {@link startService}, {@link startSilos}, {@link register} (skipped when the store has the
 *    consortium already).
 * 4. {@link follow}: one line per round opened, stage closed, round scored or aborted, with who a
 *    stage waits for every 10 s. A silo that cannot start (data, key, model, trainer: it exits with
 *    an error before it joined the consortium) stops `up` with exit code 1 and its reason; only a
 *    silo that goes away after joining is a dropout, and a stage that waits only for silos whose
 *    process is gone is closed at once (`POST …/rounds/:r/advance`).
 *    A resumed run first asks which silos sit out (./up-replay.ts, {@link resumedNext}): a silo that
 *    sent its Unmasking response in a round that then ended without a result (an `up` killed
 *    mid-Unmasking) refuses every round on that base model, so it is started again only once a
 *    round has a result; when the others are fewer than t, `up` stops with exit code 1 and one line
 *    naming the round and the code.
 * 5. {@link finish}: the leaderboard (the one `fedscore score` prints) and `scores.json` in the
 *    folder (./up-scores.ts); the dashboard URL dies with `up` unless `--keep-serving`.
 *
 * Ctrl-C (SIGINT) or SIGTERM stops every process it started. Each process's output is appended to
 * `<dir>/logs/<name>.log` under a header line per run.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { journalPathOf } from '../../client/journal.js';
import { inertLines } from '../../consortium/inert-text.js';
import {
  type CumulativeScores,
  type Round,
  type StageProgress,
  TERMINAL_STAGES,
} from '../../consortium/schemas.js';
import { restrictIfPresent } from '../../data/private-files.js';
import { acquireLock, type Lock, LockHeldError, type LockHolder, processAlive } from './lock.js';
import { ProjectProcesses, type Started } from './processes.js';
import { operatorEnv, type Project, projectCommands, readProject } from './project.js';
import { type NextRound, nextRound, nextRoundLine, unmaskedRounds } from './up-replay.js';
import { leaderboardText, projectScores } from './up-scores.js';
import { keepStoreAside, prepareStore, type StoreState } from './up-store.js';

/** What `fedscore up` takes (src/cli/commands/up.ts). */
export interface UpArgs {
  dir: string;
  /** The service's port (0: any free one). */
  port: number;
  backend?: string;
  keepServing: boolean;
  /** Start over: keep the store under a dated name instead of resuming from it. */
  fresh?: boolean;
  /** Seconds between "waiting for" lines. */
  waitLineSeconds?: number;
  /** fedscore's version, recorded in scores.json. */
  version?: string;
}

/** What `up` reads of a round and of its progress: the contract's wire types (src/consortium/schemas.ts). */
type RoundView = Pick<
  Round,
  | 'round'
  | 'stage'
  | 'selected'
  | 'survivors'
  | 'dropped'
  | 'utilities'
  | 'error'
  | 'baseModel'
  | 'resultModel'
>;
type Progress = Pick<StageProgress, 'stage' | 'deadline' | 'expected' | 'received' | 'missing'>;

/** The lock file of a project folder. */
export const PROJECT_LOCK = 'fedscore.lock';
const TERMINAL = new Set<string>(TERMINAL_STAGES);
const num = (x: number) => String(Number(x.toPrecision(3)));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Thrown by a step to end `up` with an exit code (after its reason was said). */
class Stop extends Error {
  constructor(readonly code: number) {
    super(`exit ${code}`);
  }
}

/** One run of `up`: its project, output and processes, and the signal that interrupted it. */
class UpRun {
  readonly dir: string;
  readonly p: Project;
  readonly env: { FEDSCORE_ADMIN_TOKEN: string; FEDSCORE_VIEWER_TOKEN: string };
  readonly names: string[];
  readonly t0 = Date.now();
  procs!: ProjectProcesses;
  interrupted: NodeJS.Signals | undefined;
  /** Set once `up` stops its processes: their exits are not dropouts. */
  stopping = false;
  private wake: () => void = () => {};
  url = '';

  constructor(
    readonly o: UpArgs,
    private readonly out: (s: string) => void,
  ) {
    this.dir = resolve(o.dir);
    this.p = readProject(this.dir);
    this.env = operatorEnv(this.dir, this.p);
    this.names = this.p.silos.map((s) => s.name);
  }

  write(s: string): void {
    this.out(s);
  }
  /** A line of progress; it quotes the service's answers and the processes' output (issue 32, T1): no escapes. */
  say(line: string): void {
    this.out(`[${((Date.now() - this.t0) / 1000).toFixed(1).padStart(5)}s] ${inertLines(line)}\n`);
  }
  who(ids: readonly number[]): string {
    return ids.length === 0 ? 'none' : ids.map((i) => this.names[i] ?? `silo ${i}`).join(', ');
  }
  onSignal = (signal: NodeJS.Signals) => {
    this.interrupted = signal;
    this.wake();
  };
  /** Sleeps `ms`, or less when a signal arrives; throws Stop(130) after one. */
  async pause(ms: number): Promise<void> {
    if (this.interrupted) throw new Stop(130);
    await new Promise<void>((r) => {
      const t = setTimeout(r, ms);
      this.wake = () => {
        clearTimeout(t);
        r();
      };
    });
    if (this.interrupted) throw new Stop(130);
  }
  /** `what`, then the process's last lines. */
  failed(s: Started, what: string): string {
    return `${what}; its last lines (all in logs/${s.name}.log):\n${s.lines
      .slice(-8)
      .map((l) => `  ${l}`)
      .join('\n')}`;
  }
  /** A request to the consortium's API with the admin token; undefined unless 2xx. */
  async api<T>(path: string, body?: unknown): Promise<T | undefined> {
    const headers = { authorization: `Bearer ${this.env.FEDSCORE_ADMIN_TOKEN}` };
    const r = await fetch(`${this.url}/v1/consortia/${this.p.id}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }).catch(() => undefined);
    if (!r?.ok) return undefined;
    return (await r.json()) as T;
  }
}

/** Step 1: the folder's lock. @throws Stop(1) when another process holds it. */
function lockFolder(u: UpRun): Lock {
  try {
    const lock = acquireLock(join(u.dir, PROJECT_LOCK), 'fedscore up');
    if (lock.tookOver)
      u.say(
        `the previous fedscore up (pid ${lock.tookOver.pid}, since ${lock.tookOver.since}) is gone: its lock is taken over`,
      );
    return lock;
  } catch (e) {
    if ((e as Error).name !== 'LockHeldError') throw e;
    u.say(`cannot start: ${(e as Error).message}`);
    throw new Stop(1);
  }
}

/**
 * Step 2a: no service holds the store. The processes of an `up` that was SIGKILLed notice it and
 * stop by themselves (src/cli/main.ts, FEDSCORE_PARENT_PID) within a second or so: waited for.
 * @throws Stop(1) naming the holder when another service keeps the store.
 */
async function waitForStore(u: UpRun): Promise<void> {
  const path = join(u.dir, `${u.p.db}.lock`);
  for (let waited = 0; ; waited += 250) {
    let holder: LockHolder | undefined;
    try {
      holder = JSON.parse(readFileSync(path, 'utf8')) as LockHolder;
    } catch {
      return;
    }
    if (!holder || !processAlive(holder.pid)) return;
    if (waited >= 15_000) {
      u.say(
        `cannot start: ${new LockHeldError(path, holder).message} (a service outside this fedscore up uses the project's store)`,
      );
      throw new Stop(1);
    }
    if (waited === 0) u.say(`waiting for the previous run's service (pid ${holder.pid}) to stop`);
    await u.pause(250);
  }
}

/** Step 2b: the store, resumed or (with --fresh) kept aside. */
async function openStoreState(u: UpRun): Promise<StoreState> {
  if (u.o.fresh) {
    const aside = keepStoreAside(u.dir, u.p.db);
    if (aside) {
      restrictIfPresent(join(u.dir, aside)); // a store an older version left 0644 (issue 32, P1)
      u.say(`--fresh: the previous store is kept as ${aside}; starting over from round 1`);
      // So are the silos' journals (src/client/journal.ts): the fresh run starts a new consortium
      // from the same M0, which a silo's journal refuses once it unmasked on M0 (issue 32, R1). Here
      // one operator runs the server and every silo on this machine, so there is no one to hide an
      // update from; a real silo keeps its journal (docs/threat-model.md, "Round replay"). A resumed
      // run keeps them: it continues the same consortium.
      const stamp = aside.slice(u.p.db.length + 1);
      const journals = u.p.silos
        .map((x) => journalPathOf(resolve(u.dir, x.key)))
        .filter((j) => existsSync(j));
      for (const j of journals) renameSync(j, `${j}.${stamp}`);
      if (journals.length > 0) u.say(`--fresh: the silos' journals are kept as <key>.journal.${stamp}`);
    }
  }
  const state = await prepareStore(u.dir, u.p.db, u.p.id);
  if (state.registered)
    u.say(
      `resuming from the store ${u.p.db}: ${state.over} round${state.over === 1 ? '' : 's'} over${state.withdrawn ? `; round ${state.withdrawn} was interrupted before any silo masked its input: it runs again (the store as it was: ${state.keptAs})` : ''}${state.running ? `; round ${state.running.round} was interrupted in ${state.running.stage}, past masking: it is closed with what the store has` : ''} (--fresh starts over)`,
    );
  return state;
}

/** Step 3a: the service, on a free port unless one is given. @returns its URL. */
async function startService(u: UpRun): Promise<Started> {
  const placeholder = projectCommands(u.p, {
    server: '',
    port: u.o.port,
    ...(u.o.backend ? { backend: u.o.backend } : {}),
  });
  const server = u.procs.start('serve', placeholder.serve);
  for (;;) {
    if (!ProjectProcesses.running(server)) {
      await server.exited;
      u.say(u.failed(server, 'the service stopped before it listened'));
      throw new Stop(1);
    }
    const l = server.lines.find((x) => x.includes('listening on '));
    if (l) {
      u.url = l
        .slice(l.indexOf('listening on ') + 13)
        .trim()
        .replace(/\/+$/, '');
      break;
    }
    await u.pause(100);
  }
  u.say(`service ${u.url} (store ${u.p.db}; log logs/serve.log)`);
  u.say(`dashboard ${u.url}/dashboard/${u.p.id}#token=${u.env.FEDSCORE_VIEWER_TOKEN} (while up runs)`);
  return server;
}

/** The silos' processes, by silo id (a silo that sits out is started later, ./up-replay.ts). */
type Silos = Map<number, Started>;

/**
 * Step 3b: one client per silo (each waits for its consortium), from round `first`; `only`: these
 * silos alone (default every one).
 */
function startSilos(u: UpRun, first: number, only?: readonly number[]): Silos {
  const cmds = projectCommands(u.p, {
    server: u.url,
    port: u.o.port,
    ...(u.o.backend ? { backend: u.o.backend } : {}),
  });
  const from = first > 1 ? ['--first-round', String(first)] : [];
  const silos: Silos = new Map();
  for (const [i, args] of cmds.clients.entries()) {
    if (only && !only.includes(i)) continue;
    const s = u.procs.start(u.names[i]!, [...args, ...from]);
    silos.set(i, s);
    u.say(`${u.names[i]} (silo ${i}, ${u.p.silos[i]!.format} data): pid ${s.child.pid}`);
  }
  return silos;
}

/** Step 3c: the registration that starts the schedule (its digest must be the project's). */
async function register(u: UpRun): Promise<void> {
  const cmds = projectCommands(u.p, {
    server: u.url,
    port: u.o.port,
    ...(u.o.backend ? { backend: u.o.backend } : {}),
  });
  const create = u.procs.start('consortium-create', cmds.create);
  const created = await create.exited;
  if (created !== 0) {
    u.say(u.failed(create, `consortium create failed (${created})`));
    throw new Stop(1);
  }
  const printed = create.lines
    .find((l) => /^digest [0-9a-f]{64}$/.test(l.trim()))
    ?.trim()
    .slice(7);
  if (printed !== u.p.digest) {
    u.say(
      `consortium create wrote a consortium file with digest ${printed}, not the project's ${u.p.digest}: was config.json, keys.txt or the model changed after fedscore init?`,
    );
    throw new Stop(1);
  }
  u.say(`consortium ${u.p.id} registered: ${u.p.silos.length} silos, schedule of rounds started`);
}

/** Whether a silo's output shows it joined (its consortium checked against its own setup). */
const joined = (s: Started, id: string) => s.lines.some((l) => l.includes(`consortium ${id} checked`));

/** What {@link follow} saw. */
interface Followed {
  total: number;
  aborted: number;
  dead: Set<number>;
}

/**
 * Step 4: follows the rounds until the schedule's last one is over. The silos `away` (./up-replay.ts)
 * are started once a round from `from` on (the first this run runs) has a result — the next round
 * is then on a new base model — and until then a stage that waits only for them (or for silos whose
 * process is gone) is closed at once.
 * @throws Stop(1) when the service stops, a silo cannot start, or every silo stopped before the end.
 */
async function follow(
  u: UpRun,
  server: Started,
  silos: Silos,
  o: { away: readonly number[]; from: number } = { away: [], from: 1 },
): Promise<Followed> {
  const total = (await u.api<{ rounds?: number }>(''))?.rounds ?? 0;
  const seen = new Map<number, string>();
  const dead = new Set<number>();
  const away = new Set(o.away);
  const cannotStart: string[] = [];
  let lastWaitLine = 0;
  let aborted = 0;
  let currentRound = 0;
  const watch = (i: number, s: Started) =>
    void s.exited.then((code) => {
      if (u.interrupted || u.stopping || code === 0) return;
      // An error exit before it joined: it cannot start (data, key, model, trainer) — a failure.
      if (typeof code === 'number' && !joined(s, u.p.id)) {
        cannotStart.push(u.failed(s, `${u.names[i]} (silo ${i}) cannot start (exit code ${code})`));
        return;
      }
      dead.add(i);
      u.say(
        `${u.names[i]} (silo ${i}) stopped (${typeof code === 'string' ? code : `exit code ${code}`}) in round ${currentRound || 1}: a dropout; the others go on (log logs/${u.names[i]}.log)`,
      );
    });
  for (const [i, s] of silos) watch(i, s);
  for (;;) {
    if (cannotStart.length > 0) {
      for (const c of cannotStart) u.say(c);
      u.say(
        'stopping: a silo that cannot start is a failure, not a dropout; fix it and run fedscore up again',
      );
      throw new Stop(1);
    }
    if (!ProjectProcesses.running(server)) {
      u.say(u.failed(server, 'the service stopped'));
      throw new Stop(1);
    }
    const list = (await u.api<{ rounds: RoundView[] }>('/rounds'))?.rounds ?? [];
    for (const r of list) {
      const before = seen.get(r.round);
      if (before === r.stage) continue;
      if (before === undefined) {
        currentRound = r.round;
        if (!TERMINAL.has(r.stage))
          u.say(`round ${r.round} of ${total} opened: ${r.selected ? u.who(r.selected) : 'every silo'}`);
      } else if (!TERMINAL.has(before) && !TERMINAL.has(r.stage))
        u.say(`round ${r.round}: ${before} closed, now ${r.stage}`);
      if (TERMINAL.has(r.stage) && !TERMINAL.has(before ?? '')) {
        const dropped = r.dropped && r.dropped.length > 0 ? `; dropped ${u.who(r.dropped)}` : '';
        if (r.stage === 'scored')
          u.say(
            `round ${r.round} of ${total} scored: survivors ${u.who(r.survivors ?? [])}${dropped}${r.utilities ? `; v(M) = ${num(r.utilities.full)}, v(M0) = ${num(r.utilities.empty)}` : ''}`,
          );
        else {
          aborted++;
          u.say(
            `round ${r.round} of ${total} ${r.stage}${r.error ? `: ${r.error.code}: ${r.error.detail}` : ''}${dropped}`,
          );
        }
      }
      seen.set(r.round, r.stage);
    }
    const result = list.find((r) => r.resultModel !== null && r.round >= o.from);
    if (away.size > 0 && result && result.round < total) {
      const back = [...away];
      away.clear();
      u.say(
        `round ${result.round} has a result (model version ${result.resultModel}): ${u.who(back)} ${back.length === 1 ? 'takes' : 'take'} part again from round ${result.round + 1}`,
      );
      for (const [i, s] of startSilos(u, result.round + 1, back)) {
        silos.set(i, s);
        watch(i, s);
      }
    }
    const last = list[list.length - 1];
    if (last && last.round >= total && TERMINAL.has(last.stage)) break;
    if (last && !TERMINAL.has(last.stage)) {
      const pr = await u.api<Progress>(`/rounds/${last.round}/progress`);
      if (pr && pr.missing.length > 0) {
        if (pr.missing.every((i) => dead.has(i) || away.has(i)) && pr.stage === last.stage) {
          const gone = pr.missing.filter((i) => !away.has(i));
          const out = pr.missing.filter((i) => away.has(i));
          const whom = [
            ...(gone.length > 0 ? [`${u.who(gone)}, whose process is gone`] : []),
            ...(out.length > 0
              ? [
                  `${u.who(out)}, sitting out the rounds on a base model ${out.length === 1 ? 'it' : 'they'} unmasked on`,
                ]
              : []),
          ];
          u.say(`round ${last.round}: closing ${pr.stage} now: it waits only for ${whom.join(', and ')}`);
          await u.api(`/rounds/${last.round}/advance`, { stage: pr.stage });
        } else if (Date.now() - lastWaitLine > 1000 * (u.o.waitLineSeconds ?? 10)) {
          lastWaitLine = Date.now();
          const left = Math.max(0, Math.round((pr.deadline - Date.now()) / 1000));
          u.say(
            `round ${last.round} is in ${pr.stage}: ${pr.received.length} of ${pr.expected.length} in, waiting for ${u.who(pr.missing)} (${left} s left)`,
          );
        }
      }
    }
    if ([...silos.values()].every((s) => !ProjectProcesses.running(s)) && cannotStart.length === 0) {
      await sleep(1000); // the last round's end may be on its way
      const now = (await u.api<{ rounds: RoundView[] }>('/rounds'))?.rounds.at(-1);
      if (
        now?.stage === last?.stage &&
        now?.round === last?.round &&
        !(now && now.round >= total && TERMINAL.has(now.stage))
      ) {
        u.say('every silo has stopped before the last round: see logs/');
        throw new Stop(1);
      }
    }
    await u.pause(250);
  }
  return { total, aborted, dead };
}

/**
 * A round an interrupted `up` left past masking: the silos of that run are gone, so each of its
 * stages is closed at once; it ends with what the store has, or aborts with its coded reason.
 */
async function closeInterrupted(u: UpRun, round: number): Promise<void> {
  for (let k = 0; k < 8; k++) {
    const r = await u.api<RoundView>(`/rounds/${round}`);
    if (!r || TERMINAL.has(r.stage)) return;
    await u.api(`/rounds/${round}/advance`, { stage: r.stage });
  }
}

/**
 * Step 3b′ of a resumed run: which silos sit out the next round (./up-replay.ts) — said on the
 * console. @throws Stop(1) with one line naming the round and the code when the others are too few.
 */
async function resumedNext(u: UpRun): Promise<NextRound> {
  const c = await u.api<{ threshold: number }>('');
  const rounds = (await u.api<{ rounds: RoundView[] }>('/rounds'))?.rounds ?? [];
  if (!c) return { kind: 'all' };
  let unmasked: Map<number, number[]>;
  try {
    unmasked = unmaskedRounds(
      u.dir,
      u.p.silos.map((s) => s.key),
      u.p.digest,
    );
  } catch (e) {
    if ((e as Error).name !== 'JournalError') throw e;
    u.say(`cannot resume: ${(e as Error).message}`);
    throw new Stop(1);
  }
  const next = nextRound(rounds, unmasked, u.names.length, c.threshold);
  if (next.kind === 'all') return next;
  const ended = (r: number) => {
    const v = rounds.find((x) => x.round === r);
    return `round ${r} ${v?.stage ?? 'ended'}${v?.error ? ` (${v.error.code})` : ''} without a result`;
  };
  u.say(
    nextRoundLine(next, (ids) => u.who(ids), ended, {
      threshold: c.threshold,
      n: u.names.length,
      dir: u.o.dir,
    }),
  );
  if (next.kind === 'stop') throw new Stop(1);
  return next;
}

/** Step 5: the leaderboard and scores.json; the dashboard's fate. @returns the exit code. */
async function finish(u: UpRun, server: Started, silos: Silos, f: Followed): Promise<number> {
  // The silos leave by themselves after the last round.
  const leaving = Date.now();
  while ([...silos.values()].some(ProjectProcesses.running) && Date.now() - leaving < 30_000)
    await u.pause(100);
  const published = await u.api<CumulativeScores>('/scores');
  if (published) {
    const scores = await projectScores(published, u.names, {
      source: `the published rounds of consortium ${u.p.id} (${u.url}/v1/consortia/${u.p.id}/scores)`,
      fedscoreVersion: u.o.version ?? 'unknown',
    });
    u.write(`\n${leaderboardText(scores)}`);
    writeFileSync(join(u.dir, 'scores.json'), `${JSON.stringify(scores, null, 2)}\n`);
    u.say(`wrote scores.json (the format of fedscore score; docs/utilities.md)`);
  }
  u.say(
    `${f.total} rounds: ${f.total - f.aborted} scored, ${f.aborted} aborted; dropouts: ${f.dead.size === 0 ? 'none' : u.who([...f.dead])}`,
  );
  if (u.o.keepServing) {
    u.say(`the service stays up at ${u.url} (dashboard above); Ctrl-C stops it`);
    while (ProjectProcesses.running(server)) await u.pause(1000);
  } else
    u.say(
      `the service stops now, and the dashboard URL above with it: run fedscore up ${u.o.dir} --keep-serving to keep it up after the last round`,
    );
  return f.aborted === 0 ? 0 : 1;
}

/** Runs the project until its last round is over. @returns the exit code (0: every round over, none aborted). */
export async function upCommand(
  o: UpArgs,
  out: (s: string) => void = (s) => process.stdout.write(s),
): Promise<number> {
  const u = new UpRun(o, out);
  let lock: Lock | undefined;
  process.on('SIGINT', u.onSignal);
  process.on('SIGTERM', u.onSignal);
  try {
    lock = lockFolder(u);
    await waitForStore(u);
    const state = await openStoreState(u);
    u.procs = new ProjectProcesses(u.dir, u.env);
    const server = await startService(u);
    if (state.registered && state.total !== undefined && state.over >= state.total && !state.running) {
      u.say(
        `the schedule of ${state.total} rounds is complete in this store: nothing to run (fedscore up ${o.dir} --fresh starts over)`,
      );
      return await finish(u, server, new Map(), {
        total: state.total,
        aborted: state.aborted,
        dead: new Set(),
      });
    }
    if (state.running) await closeInterrupted(u, state.running.round);
    const first = state.running ? state.running.round + 1 : state.over + 1;
    // The interrupted round was the schedule's last: closing it ended the run, no silo is needed.
    const done = state.registered && state.total !== undefined && first > state.total;
    const next: NextRound = state.registered && !done ? await resumedNext(u) : { kind: 'all' };
    const away = next.kind === 'sit-out' ? next.silos : [];
    const from = state.registered ? first : 1;
    const silos = done
      ? new Map()
      : startSilos(
          u,
          from,
          u.names.map((_, i) => i).filter((i) => !away.includes(i)),
        );
    if (!state.registered) await register(u);
    return await finish(u, server, silos, await follow(u, server, silos, { away, from }));
  } catch (e) {
    if (e instanceof Stop) return e.code;
    throw e;
  } finally {
    process.off('SIGINT', u.onSignal);
    process.off('SIGTERM', u.onSignal);
    u.stopping = true;
    await u.procs?.stopAll();
    lock?.release();
    if (u.interrupted) u.say(`stopped (${u.interrupted}): every process it started has exited`);
  }
}
