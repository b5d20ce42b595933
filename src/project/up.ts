/**
 * `fedscore up <dir>`: runs a consortium project (project.ts) on this machine as separate
 * processes — `fedscore serve` (SQLite in the folder), `fedscore consortium create --server` (which
 * registers the consortium and so starts the service's schedule) and one `fedscore client` per silo,
 * the command lines of projectCommands — and follows the run over the service's API:
 *
 * - one line per round opened, stage closed, round scored or aborted, with who a stage waits for
 *   every 10 s;
 * - a silo process that dies is a dropout, reported in one line; a stage that waits only for silos
 *   whose process is gone is closed at once (`POST …/rounds/:r/advance`) instead of at its
 *   deadline, so the run goes on with the others (down to the threshold t);
 * - at the end, the per-silo score table (score-table.ts) and the dashboard URL with the viewer
 *   token; then every process is stopped (with `--keep-serving` the service stays up until Ctrl-C).
 *
 * Ctrl-C (SIGINT) or SIGTERM stops every process it started. Each process's output is in
 * `<dir>/logs/<name>.log`.
 */
import { existsSync, renameSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type Round, type StageProgress, TERMINAL_STAGES } from '../contract/schemas.js';
import { ProjectProcesses, type Started } from './processes.js';
import { operatorEnv, projectCommands, readProject } from './project.js';
import { type PublishedScores, siloScoreTable } from './score-table.js';

/** What `fedscore up` takes (src/cli/commands/up.ts). */
export interface UpArgs {
  dir: string;
  /** The service's port (0: any free one). */
  port: number;
  backend?: string;
  keepServing: boolean;
  /** Seconds between "waiting for" lines. */
  waitLineSeconds?: number;
}

/** What `up` reads of a round and of its progress: the contract's wire types (src/contract/schemas.ts). */
type RoundView = Pick<
  Round,
  'round' | 'stage' | 'selected' | 'survivors' | 'dropped' | 'utilities' | 'error'
>;
type Progress = Pick<StageProgress, 'stage' | 'deadline' | 'expected' | 'received' | 'missing'>;

const TERMINAL = new Set<string>(TERMINAL_STAGES);
const num = (x: number) => String(Number(x.toPrecision(3)));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs the project until its last round is over. @returns the exit code (0: every round over, none aborted). */
export async function upCommand(
  o: UpArgs,
  out: (s: string) => void = (s) => process.stdout.write(s),
): Promise<number> {
  const dir = resolve(o.dir);
  const p = readProject(dir);
  const env = operatorEnv(dir, p);
  const names = p.silos.map((s) => s.name);
  const who = (ids: readonly number[]) =>
    ids.length === 0 ? 'none' : ids.map((i) => names[i] ?? `silo ${i}`).join(', ');
  const t0 = Date.now();
  const say = (line: string) => out(`[${((Date.now() - t0) / 1000).toFixed(1).padStart(5)}s] ${line}\n`);
  // A previous run's store holds the consortium already: kept aside, not reused.
  if (existsSync(join(dir, p.db))) {
    const aside = `${p.db}.${new Date().toISOString().replace(/[:.]/g, '-')}`;
    renameSync(join(dir, p.db), join(dir, aside));
    say(`the previous run's store is kept as ${aside}`);
  }
  const procs = new ProjectProcesses(dir, env);
  let interrupted: NodeJS.Signals | undefined;
  let wake: () => void = () => {};
  const onSignal = (signal: NodeJS.Signals) => {
    interrupted = signal;
    wake();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  /** Sleeps `ms`, or less when a signal arrives. */
  const pause = (ms: number) =>
    new Promise<void>((r) => {
      const t = setTimeout(r, ms);
      wake = () => {
        clearTimeout(t);
        r();
      };
    });
  const failed = (s: Started, what: string) =>
    `${what}; its last lines (all in logs/${s.name}.log):\n${s.lines
      .slice(-8)
      .map((l) => `  ${l}`)
      .join('\n')}`;
  try {
    // The service, on a free port unless one is given.
    const placeholder = projectCommands(p, {
      server: '',
      port: o.port,
      ...(o.backend ? { backend: o.backend } : {}),
    });
    const server = procs.start('serve', placeholder.serve);
    let url: string | undefined;
    while (url === undefined) {
      if (interrupted) return 130;
      if (!ProjectProcesses.running(server)) {
        say(failed(server, 'the service stopped before it listened'));
        return 1;
      }
      const l = server.lines.find((x) => x.includes('listening on '));
      url = l?.slice(l.indexOf('listening on ') + 13).trim();
      if (url === undefined) await pause(100);
    }
    url = url.replace(/\/+$/, '');
    const cmds = projectCommands(p, {
      server: url,
      port: o.port,
      ...(o.backend ? { backend: o.backend } : {}),
    });
    say(`service ${url} (store ${p.db}; log logs/serve.log)`);
    say(`dashboard ${url}/dashboard/${p.id}#token=${env.FEDSCORE_VIEWER_TOKEN}`);

    // The silos first (each waits for its consortium), then the registration that starts the schedule.
    const silos = cmds.clients.map((args, i) => procs.start(names[i]!, args));
    for (const [i, s] of silos.entries())
      say(`${names[i]} (silo ${i}, ${p.silos[i]!.format} data): pid ${s.child.pid}`);
    const create = procs.start('consortium-create', cmds.create);
    const created = await create.exited;
    if (created !== 0) {
      say(failed(create, `consortium create failed (${created})`));
      return 1;
    }
    const printed = create.lines
      .find((l) => /^digest [0-9a-f]{64}$/.test(l.trim()))
      ?.trim()
      .slice(7);
    if (printed !== p.digest) {
      say(
        `consortium create wrote a consortium file with digest ${printed}, not the project's ${p.digest}: was config.json, keys.txt or the model changed after fedscore init?`,
      );
      return 1;
    }
    say(`consortium ${p.id} registered: ${p.silos.length} silos, schedule of rounds started`);

    const headers = { authorization: `Bearer ${env.FEDSCORE_ADMIN_TOKEN}` };
    const api = async <T>(path: string, body?: unknown): Promise<T | undefined> => {
      const r = await fetch(`${url}/v1/consortia/${p.id}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }).catch(() => undefined);
      if (!r?.ok) return undefined;
      return (await r.json()) as T;
    };
    const consortium = await api<{ rounds?: number }>('');
    const total = consortium?.rounds ?? 0;
    const seen = new Map<number, string>();
    const dead = new Set<number>();
    let lastWaitLine = 0;
    let aborted = 0;
    let currentRound = 0;
    for (const [i, s] of silos.entries())
      void s.exited.then((code) => {
        if (interrupted || code === 0) return;
        dead.add(i);
        say(
          `${names[i]} (silo ${i}) stopped (${typeof code === 'string' ? code : `exit code ${code}`}) in round ${currentRound || 1}: a dropout; the others go on (log logs/${names[i]}.log)`,
        );
      });
    for (;;) {
      if (interrupted) return 130;
      if (!ProjectProcesses.running(server)) {
        say(failed(server, 'the service stopped'));
        return 1;
      }
      const list = (await api<{ rounds: RoundView[] }>('/rounds'))?.rounds ?? [];
      for (const r of list) {
        const before = seen.get(r.round);
        if (before === r.stage) continue;
        if (before === undefined) {
          currentRound = r.round;
          say(`round ${r.round} of ${total} opened: ${r.selected ? who(r.selected) : 'every silo'}`);
        } else if (!TERMINAL.has(before) && !TERMINAL.has(r.stage))
          say(`round ${r.round}: ${before} closed, now ${r.stage}`);
        if (TERMINAL.has(r.stage) && !TERMINAL.has(before ?? '')) {
          const dropped = r.dropped && r.dropped.length > 0 ? `; dropped ${who(r.dropped)}` : '';
          if (r.stage === 'scored')
            say(
              `round ${r.round} of ${total} scored: survivors ${who(r.survivors ?? [])}${dropped}${r.utilities ? `; v(M) = ${num(r.utilities.full)}, v(M0) = ${num(r.utilities.empty)}` : ''}`,
            );
          else {
            aborted++;
            say(
              `round ${r.round} of ${total} ${r.stage}${r.error ? `: ${r.error.code}: ${r.error.detail}` : ''}${dropped}`,
            );
          }
        }
        seen.set(r.round, r.stage);
      }
      const last = list[list.length - 1];
      if (last && last.round >= total && TERMINAL.has(last.stage)) break;
      if (last && !TERMINAL.has(last.stage)) {
        const pr = await api<Progress>(`/rounds/${last.round}/progress`);
        if (pr && pr.missing.length > 0) {
          if (pr.missing.every((i) => dead.has(i)) && pr.stage === last.stage) {
            say(
              `round ${last.round}: closing ${pr.stage} now: it waits only for ${who(pr.missing)}, whose process is gone`,
            );
            await api(`/rounds/${last.round}/advance`, { stage: pr.stage });
          } else if (Date.now() - lastWaitLine > 1000 * (o.waitLineSeconds ?? 10)) {
            lastWaitLine = Date.now();
            const left = Math.max(0, Math.round((pr.deadline - Date.now()) / 1000));
            say(
              `round ${last.round} is in ${pr.stage}: ${pr.received.length} of ${pr.expected.length} in, waiting for ${who(pr.missing)} (${left} s left)`,
            );
          }
        }
      }
      if (
        silos.every((s) => !ProjectProcesses.running(s)) &&
        !(last && last.round >= total && TERMINAL.has(last.stage))
      ) {
        await sleep(1000); // the last round's end may be on its way
        if ((await api<{ rounds: RoundView[] }>('/rounds'))?.rounds.at(-1)?.stage === last?.stage) {
          say('every silo has stopped before the last round: see logs/');
          return 1;
        }
      }
      await pause(250);
    }
    // The silos leave by themselves after the last round.
    const leaving = Date.now();
    while (silos.some(ProjectProcesses.running) && Date.now() - leaving < 30_000 && !interrupted)
      await pause(100);
    const scores = await api<PublishedScores>('/scores');
    if (scores) out(siloScoreTable(scores, names));
    say(
      `${total} rounds: ${total - aborted} scored, ${aborted} aborted; dropouts: ${dead.size === 0 ? 'none' : who([...dead])}`,
    );
    if (o.keepServing) {
      say(`the service stays up at ${url} (dashboard above); Ctrl-C stops it`);
      while (!interrupted && ProjectProcesses.running(server)) await pause(1000);
    }
    return aborted === 0 ? 0 : 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await procs.stopAll();
    if (interrupted) say(`stopped (${interrupted}): every process it started has exited`);
  }
}
