/**
 * `fedscore rounds open|status|close --server URL --consortium ID [--token-file FILE]`: the
 * operator's manual control of a consortium's rounds over the service's HTTP API with the admin
 * token (flags: src/cli/commands/rounds.ts).
 *
 *   open    POST /v1/consortia/:cid/rounds
 *   status  GET  /v1/consortia/:cid, …/rounds and, for a running round, …/rounds/:r/progress
 *   close   POST …/rounds/:r/advance with the stage to close (--stage, or the round's current stage
 *           as read just before; the service refuses it, FEDSCORE_ERR_STAGE_MISMATCH, when the
 *           stage closed meanwhile), or …/abort with --abort
 *   release POST …/rounds/:r/reports/:silo/release (score the round with a quarantined report)
 *
 * Errors name what went wrong: the service cannot be reached, refuses the token, does not know
 * the consortium (or the round), or refuses the step (with its catalogue code and message).
 */

import type { ErrorCode } from '../../consortium/error-codes.js';
import { inertLines } from '../../consortium/inert-text.js';
import {
  type Consortium,
  isTerminal,
  type Round,
  type RoundScores,
  type StageProgress,
} from '../../consortium/schemas.js';
import { readFlagFile, UsageError } from '../_flags.js';

/** What `fedscore rounds <action>` takes (src/cli/commands/rounds.ts). */
export type RoundsArgs = {
  action: 'open' | 'status' | 'close' | 'release';
  /** The service's URL without a trailing slash. */
  server: string;
  consortium: string;
  round?: number;
  abort?: boolean;
  /** `release`: the silo whose quarantined report is released. */
  silo?: number;
  /** close: the stage to close (default: the round's current stage, read first). */
  stage?: string;
} & ({ token: string } | { tokenFile: string });

/** The service's answers, as the contract declares them (src/consortium/schemas.ts). */
type ConsortiumView = Pick<
  Consortium,
  'id' | 'participants' | 'threshold' | 'corruptSilos' | 'minimumThreshold' | 'weakThreshold' | 'rounds'
> & { readonly strategy?: Pick<NonNullable<Consortium['strategy']>, 'name'> };
type RoundView = Pick<
  Round,
  'round' | 'stage' | 'deadline' | 'selected' | 'survivors' | 'dropped' | 'utilities' | 'error' | 'faults'
>;
type ScoresView = RoundScores;
type Progress = Pick<StageProgress, 'stage' | 'deadline' | 'expected' | 'received' | 'missing'>;

/** The service refused a request or could not be reached: exit code 1, printed without a stack. */
const RoundsError = RangeError;

/** The codes of a refused token: operator routes (ADMIN_TOKEN) and reads (CREDENTIALS_REQUIRED, NOT_PERMITTED). */
const TOKEN_REFUSED: ReadonlySet<string> = new Set<ErrorCode>([
  'FEDSCORE_ERR_ADMIN_TOKEN',
  'FEDSCORE_ERR_CREDENTIALS_REQUIRED',
  'FEDSCORE_ERR_NOT_PERMITTED',
]);
const CONSORTIUM_NOT_FOUND: ErrorCode = 'FEDSCORE_ERR_CONSORTIUM_NOT_FOUND';

/** Runs `fedscore rounds <action>`. @returns the exit code. */
export async function roundsCommand(
  o: RoundsArgs,
  print: (s: string) => void = (s) => process.stdout.write(s),
): Promise<number> {
  // Stages, details and codes are the service's words (issue 32, T1): no escape reaches the terminal.
  const out = (s: string) => print(inertLines(s));
  const token = 'token' in o ? o.token : (await readFlagFile('token-file', o.tokenFile)).trim();
  if (token.length === 0)
    throw new UsageError(`--token-file: ${'tokenFile' in o ? o.tokenFile : ''} is empty`);
  const api = client(o.server, o.consortium, token);
  if (o.action === 'open') {
    const r = await api.call<RoundView>('POST', '/rounds');
    out(
      `round ${r.round} opened: ${r.selected ? `silos ${r.selected.join(', ')}` : 'every silo'}; ${r.stage}: ${left(r.deadline)}\n`,
    );
    return 0;
  }
  if (o.action === 'close') {
    const round = o.round ?? (await latest(api))?.round;
    if (round === undefined) throw new RoundsError(`consortium ${o.consortium} has no round to close`);
    if (o.abort) {
      const r = await api.call<RoundView>('POST', `/rounds/${round}/abort`);
      out(`round ${r.round} aborted\n`);
      return 0;
    }
    // the stage to close is named: one that closed meanwhile is refused, not the next one closed
    const stage = o.stage ?? (await api.call<RoundView>('GET', `/rounds/${round}`)).stage;
    const r = await api.call<RoundView>('POST', `/rounds/${round}/advance`, { stage });
    out(
      `round ${r.round}: stage ${stage} closed; now ${r.stage}${r.error ? ` (${r.error.code}: ${r.error.detail})` : ''}\n`,
    );
    return 0;
  }
  if (o.action === 'release') {
    if (o.round === undefined || o.silo === undefined)
      throw new UsageError('release: expected --round and --silo');
    const r = await api.call<ScoresView>('POST', `/rounds/${o.round}/reports/${o.silo}/release`);
    const still = r.quarantined.filter((q) => !q.released).map((q) => q.silo);
    out(
      `round ${r.round}: silo ${o.silo}'s report released; scored silos ${list(r.silos)}${still.length > 0 ? `; still quarantined: ${still.join(', ')}` : ''}\n`,
    );
    return 0;
  }
  const c = await api.call<ConsortiumView>('GET', '');
  const { rounds } = await api.call<{ rounds: RoundView[] }>('GET', '/rounds');
  out(statusText(c, rounds));
  const current = rounds[rounds.length - 1];
  if (current && !isTerminal(current.stage)) {
    const p = await api.call<Progress>('GET', `/rounds/${current.round}/progress`);
    out(progressText(current.round, p));
  }
  return 0;
}

/** Requests to the consortium's routes with the admin token; errors as {@link RoundsError}. */
function client(server: string, consortium: string, token: string) {
  return {
    async call<T>(method: 'GET' | 'POST', path: string, payload?: unknown): Promise<T> {
      const url = `${server}/v1/consortia/${consortium}${path}`;
      let res: Response;
      try {
        res = await fetch(url, {
          method,
          headers: {
            authorization: `Bearer ${token}`,
            ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
          },
          ...(payload === undefined ? {} : { body: JSON.stringify(payload) }),
        });
      } catch (e) {
        const cause = (e as { cause?: { code?: string; message?: string } }).cause;
        throw new RoundsError(
          `cannot reach the service at ${server}: ${cause?.code ?? cause?.message ?? (e as Error).message}`,
        );
      }
      const text = await res.text();
      let body: { code?: string; message?: string } = {};
      try {
        body = JSON.parse(text) as typeof body;
      } catch {}
      if (res.ok) return body as T;
      const what = `${method} ${path || '/'}: HTTP ${res.status}`;
      if (body.code !== undefined && TOKEN_REFUSED.has(body.code))
        throw new RoundsError(`the service at ${server} refused the admin token (${body.code})`);
      if (body.code === CONSORTIUM_NOT_FOUND)
        throw new RoundsError(`the service at ${server} has no consortium '${consortium}' (${body.code})`);
      throw new RoundsError(`${what} ${body.code ?? ''}: ${body.message ?? text}`.trim());
    },
  };
}

async function latest(api: ReturnType<typeof client>): Promise<RoundView | undefined> {
  const { rounds } = await api.call<{ rounds: RoundView[] }>('GET', '/rounds');
  return rounds[rounds.length - 1];
}

/** "41 s left", "3 min 5 s left", or that the deadline has passed. */
function left(deadline: number, now = Date.now()): string {
  const s = Math.round((deadline - now) / 1000);
  if (s <= 0) return 'deadline passed: it closes at the next request or schedule pass';
  return `${s < 60 ? `${s} s` : `${Math.floor(s / 60)} min ${s % 60} s`} left`;
}

const list = (xs: readonly number[] | null) => (xs === null ? '–' : xs.length === 0 ? 'none' : xs.join(','));
const num = (x: number) => String(Number(x.toPrecision(4)));

/** The consortium line and the table of rounds. */
export function statusText(c: ConsortiumView, rounds: readonly RoundView[]): string {
  const n = c.participants.length;
  const last = rounds[rounds.length - 1];
  const schedule =
    c.rounds === undefined
      ? 'no schedule (rounds opened by hand)'
      : `schedule: round ${last?.round ?? 0} of ${c.rounds}${last && last.round >= c.rounds && isTerminal(last.stage) ? ' (done)' : ''}`;
  const lines = [
    `consortium ${c.id}: ${n} silos, t = ${c.threshold} (minimum ${c.minimumThreshold} for n_C = ${c.corruptSilos})${c.weakThreshold ? ' WEAK THRESHOLD (opted in)' : ''}; ${c.strategy ? `strategy ${c.strategy.name}; ` : ''}${schedule}`,
  ];
  const header = ['round', 'stage', 'selected', 'survivors', 'dropped', 'v(M) / v(M0)', 'faults'];
  const rows = rounds.map((r) => [
    String(r.round),
    r.error ? `${r.stage} (${r.error.code})` : r.stage,
    r.selected === null ? 'all' : r.selected.join(','),
    list(r.survivors),
    list(r.dropped),
    r.utilities ? `${num(r.utilities.full)} / ${num(r.utilities.empty)}` : '–',
    r.faults.length === 0 ? '–' : r.faults.map((f) => `silo ${f.silo} ${f.code}`).join('; '),
  ]);
  if (rows.length === 0) lines.push('no round yet');
  else {
    const widths = header.map((h, k) => Math.max(h.length, ...rows.map((r) => r[k]!.length)));
    const fmt = (cells: string[]) =>
      cells
        .map((x, k) => x.padEnd(widths[k]!))
        .join('  ')
        .trimEnd();
    lines.push(fmt(header), ...rows.map(fmt));
  }
  return `${lines.join('\n')}\n`;
}

/** The running round's stage: who it waits for and the time left. */
export function progressText(round: number, p: Progress, now = Date.now()): string {
  const waiting = p.missing.length === 0 ? 'nobody (closes now)' : `silos ${p.missing.join(', ')}`;
  return `round ${round} is in ${p.stage}: ${p.received.length} of ${p.expected.length} in (${list(p.received)}), waiting for ${waiting}; ${left(p.deadline, now)}\n`;
}
