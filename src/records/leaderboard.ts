/**
 * The leaderboard: one table of silos and their scores, the same in every output (console of
 * `experiment`, `score`, `audit`; the first section of report.md/report.html; results.json and
 * scores.json; the dashboard; `fedscore client`'s own line). Docs: docs/results.md#leaderboard.
 *
 * The headline score is EE-median's unnormalised weight w_i = (β̃(i) + γ̃(i))/2 (papers/003 Eq. 4
 * with the median of the others' reports, before the rescaling w_i/D·v(M)): its ranking in a round
 * is always the ranking of the weights, so a normalizer D ≤ 0 — which reverses FP in the
 * quickstart (docs/findings.md) — never reverses it. Why EE-median: docs/findings.md#the-headline-score
 * (the smallest unflagged self-gain in docs/audit.md's table; its weight is built from the other
 * silos' reports only, and the median resists a few misreports).
 *
 * Flags come from what the run knows: the simulated roles (attacks, labelNoise), the detector's
 * quarantine of flagged reports, a silo whose update never moved M0 (v(M0 + U_i) = v(M0) in every
 * round it reported: a free rider), missing reports, and — after `fedscore audit` — reports the
 * audit's detector places outside its undetected box (`auditFlags`).
 */

import { type EmptyCoalition, utilitiesUnder } from '../../scoring/empty-coalition.js';
import { SCHEMES, type Scheme, schemeWeights } from '../../scoring/private.js';
import type { QuarantinedReport, RoundScores } from '../contract/schemas.js';
import { type RecordedUtilities, reportedUtilities, reportingSilos } from './silo-reports.js';

/** The scheme of the headline score (its unnormalised weight; see the module comment). */
export const HEADLINE: Scheme = 'eeMedian';

/** What a flag says about a silo. */
export type FlagKind = 'free-rider' | 'misbehaving' | 'noisy' | 'self-gain' | 'missing-reports';

/** One flag of a silo, with its reason in words. */
export interface LeaderboardFlag {
  kind: FlagKind;
  reason: string;
}

/** One line of the leaderboard (results.json / scores.json `leaderboard[]`). */
export interface LeaderboardEntry {
  /** The silo's 0-based index. */
  silo: number;
  name: string;
  /** 1 = highest headline score; equal scores share a rank. */
  rank: number;
  /** The headline score summed over the scored rounds (mean over seeds). */
  headline: number;
  /** The headline score of the last scored round (null when the silo was not scored in it). */
  lastRound: number | null;
  /** Every private scheme's cumulative score, and the reference's under its name when there is one. */
  scores: Record<string, number>;
  flags: LeaderboardFlag[];
}

/** One recorded round, as results.json and scores.json hold it. */
export interface LeaderboardRound {
  round: number;
  utilities: RecordedUtilities;
  /** The round's scores by method; a silo not scored (no report, quarantined) has null. */
  scores: Readonly<Record<string, readonly (number | null)[]>>;
  /** Silos selected for the round (default: every silo). */
  selected?: readonly number[];
  /** Silos whose reports the detector quarantined (and the operator did not release). */
  quarantined?: readonly number[];
  /** The silos scored (default: those with a headline-scheme score in `scores`). */
  scored?: readonly number[];
}

/** What the leaderboard is built from. */
export interface LeaderboardInput {
  names: readonly string[];
  emptyCoalition: EmptyCoalition;
  /** One entry per seed (one for a scores.json). */
  runs: readonly {
    rounds: readonly LeaderboardRound[];
    cumulative: Readonly<Record<string, readonly number[]>>;
  }[];
  /** Simulated roles (`honest`, an attack kind, `noise=0.80`, …); absent for a utilities file. */
  roles?: readonly string[];
  /** The configured attacks (`attacks`): which silo, which kind. */
  attacks?: readonly { silo: number; kind: string }[];
  /** The reference's name when there is one (its cumulative vector is in each run's `cumulative`). */
  reference?: string;
}

/** The silos scored in a round: `scored`, else those with a headline-scheme score. */
const scoredSilos = (rd: LeaderboardRound) =>
  rd.scored
    ? [...rd.scored]
    : (rd.scores[HEADLINE] ?? []).flatMap((v, i) => (v === null || v === undefined ? [] : [i]));

/** A round as the service publishes it (GET /v1/consortia/:cid/scores, `rounds[]`). */
export type PublishedScores = Pick<
  RoundScores,
  'round' | 'silos' | 'utilities' | 'withOnly' | 'without' | 'schemes'
> & { quarantined: readonly Pick<QuarantinedReport, 'silo' | 'released'>[] };

/**
 * The leaderboard of a networked consortium's published rounds (the dashboard's and
 * `fedscore client`'s): the same entries as an experiment's, from the published utilities.
 */
export function leaderboardOfPublished(
  names: readonly string[],
  rounds: readonly PublishedScores[],
  emptyCoalition: EmptyCoalition = 'initialModel',
): LeaderboardEntry[] {
  const cumulative: Record<string, number[]> = {};
  for (const rd of rounds)
    for (const [m, values] of Object.entries(rd.schemes)) {
      if (cumulative[m] === undefined) cumulative[m] = names.map(() => 0);
      const acc = cumulative[m];
      values.forEach((v, i) => {
        if (i < acc.length) acc[i]! += v ?? 0;
      });
    }
  return leaderboardOf({
    names,
    emptyCoalition,
    runs: [
      {
        cumulative,
        rounds: rounds.map((rd) => ({
          round: rd.round,
          utilities: { ...rd.utilities, withOnly: rd.withOnly, without: rd.without },
          scores: rd.schemes,
          scored: rd.silos,
          quarantined: rd.quarantined.filter((q) => !q.released).map((q) => q.silo),
        })),
      },
    ],
  });
}

/**
 * The headline score of every silo in one round: EE-median's weights over the scored silos under
 * the run's v(∅) (null for a silo not scored; every entry null when fewer than 2 were scored).
 */
export function headlineOfRound(rd: LeaderboardRound, n: number, empty: EmptyCoalition): (number | null)[] {
  const out = new Array<number | null>(n).fill(null);
  const silos = scoredSilos(rd).filter((i) => reportingSilos(rd.utilities).includes(i));
  if (silos.length < 2) return out;
  const w = schemeWeights(HEADLINE, utilitiesUnder(reportedUtilities(rd.utilities, silos).u, empty));
  silos.forEach((g, q) => {
    out[g] = w[q]!;
  });
  return out;
}

const mean = (xs: readonly number[]) => (xs.length === 0 ? 0 : xs.reduce((s, x) => s + x, 0) / xs.length);
const roundList = (rs: readonly number[]) => `round${rs.length > 1 ? 's' : ''} ${rs.join(', ')}`;

/** A flag added to `flags`, or its reason joined to the silo's existing flag of that kind. */
function addFlag(flags: LeaderboardFlag[], kind: FlagKind, reason: string): void {
  const had = flags.find((f) => f.kind === kind);
  if (had) had.reason = `${had.reason}; ${reason}`;
  else flags.push({ kind, reason });
}

/** The flags a simulated role carries: label noise (`noise=0.80`) or a configured attack. */
function roleFlags(role: string | undefined, attack: string | undefined, flags: LeaderboardFlag[]): void {
  const noise = role ? /^noise=(.*)$/.exec(role) : null;
  if (noise && Number(noise[1]) > 0) addFlag(flags, 'noisy', `label noise at rate ${noise[1]} (labelNoise)`);
  if (attack === undefined) return;
  if (attack === 'free-rider')
    addFlag(flags, 'free-rider', 'simulated free rider (attacks): sends M0 back, so its update is 0');
  else addFlag(flags, 'misbehaving', `simulated '${attack}' attack (attacks)`);
}

/** The flags the recorded rounds show for silo i of every run. */
function recordFlags(input: LeaderboardInput, i: number, flags: LeaderboardFlag[]): void {
  const quarantined = new Set<number>();
  const missing = new Set<number>();
  let reported = 0;
  let unmoved = 0;
  let rounds = 0;
  for (const run of input.runs)
    for (const rd of run.rounds) {
      const selected = rd.selected ?? input.names.map((_, k) => k);
      if (!selected.includes(i)) continue;
      rounds++;
      if (rd.quarantined?.includes(i)) quarantined.add(rd.round);
      if (!reportingSilos(rd.utilities).includes(i)) {
        missing.add(rd.round);
        continue;
      }
      reported++;
      if (rd.utilities.withOnly[i] === rd.utilities.empty) unmoved++;
    }
  if (reported > 0 && unmoved === reported)
    addFlag(
      flags,
      'free-rider',
      `its update never moved the model: v(M0 + U_i) = v(M0) in every round it reported (${reported})`,
    );
  if (quarantined.size > 0)
    addFlag(
      flags,
      'misbehaving',
      `reports quarantined by the detector (robust |z| above its threshold) in ${roundList([...quarantined])}`,
    );
  if (missing.size > 0)
    addFlag(
      flags,
      'missing-reports',
      `no report in ${missing.size} of the ${rounds} round(s) it was selected for (${roundList([...missing])})`,
    );
}

/**
 * Ranks by headline score, highest first; equal scores share a rank (1, 2, 2, 4).
 * @returns the entries in rank order.
 */
export function ranked(entries: Omit<LeaderboardEntry, 'rank'>[]): LeaderboardEntry[] {
  const sorted = [...entries].sort((a, b) => b.headline - a.headline || a.silo - b.silo);
  return sorted.map((e, k) => {
    const first = sorted.findIndex((x) => x.headline === e.headline);
    return { ...e, rank: (first < 0 ? k : first) + 1 };
  });
}

/**
 * The leaderboard of recorded rounds: per silo the headline score summed over the scored rounds
 * and in the last scored round, every private scheme's cumulative score (and the reference's),
 * means over seeds, flags with their reasons; in rank order.
 */
export function leaderboardOf(input: LeaderboardInput): LeaderboardEntry[] {
  const n = input.names.length;
  const perRun = input.runs.map((run) => {
    const rounds = run.rounds.map((rd) => headlineOfRound(rd, n, input.emptyCoalition));
    const scored = rounds.filter((h) => h.some((v) => v !== null));
    const total = Array.from({ length: n }, (_, i) => scored.reduce((s, h) => s + (h[i] ?? 0), 0));
    return { total, last: scored.at(-1) ?? null };
  });
  const methods = [...SCHEMES, ...(input.reference ? [input.reference] : [])];
  return ranked(
    input.names.map((name, i) => {
      const flags: LeaderboardFlag[] = [];
      roleFlags(input.roles?.[i], input.attacks?.find((a) => a.silo === i)?.kind, flags);
      recordFlags(input, i, flags);
      const lasts = perRun.flatMap((p) => (p.last && p.last[i] !== null ? [p.last[i]!] : []));
      const scores: Record<string, number> = {};
      for (const m of methods) {
        const values = input.runs.flatMap((run) => (run.cumulative[m] ? [run.cumulative[m]![i] ?? 0] : []));
        if (values.length > 0) scores[m] = mean(values);
      }
      return {
        silo: i,
        name,
        headline: mean(perRun.map((p) => p.total[i]!)),
        lastRound: lasts.length === perRun.length && lasts.length > 0 ? mean(lasts) : null,
        scores,
        flags,
      };
    }),
  );
}

/** What `auditFlags` reads of audit.json: per run and round, the silos and the detector's robust z. */
export interface AuditDetections {
  runs: readonly {
    rounds: readonly (
      | {
          round: number;
          silos: readonly number[];
          detection: { threshold: number; zWithOnly: readonly number[]; zWithout: readonly number[] };
        }
      | { round: number; skipped: string }
    )[];
  }[];
}

/**
 * The leaderboard with the audit's flags added: a silo whose reports the audit's detector places
 * outside its undetected box (robust |z| of IOI or LOO above the threshold) in some round gets a
 * `self-gain` flag naming the rounds — there its reports can carry a self-gain beyond what the
 * audit bounds for unflagged reports (docs/audit.md).
 */
export function withAuditFlags(
  entries: readonly LeaderboardEntry[],
  audit: AuditDetections,
): LeaderboardEntry[] {
  const rounds = new Map<number, Set<number>>();
  for (const run of audit.runs)
    for (const rd of run.rounds) {
      if (!('detection' in rd)) continue;
      const { threshold, zWithOnly, zWithout } = rd.detection;
      rd.silos.forEach((silo, q) => {
        if (Math.abs(zWithOnly[q] ?? 0) > threshold || Math.abs(zWithout[q] ?? 0) > threshold) {
          if (!rounds.has(silo)) rounds.set(silo, new Set());
          rounds.get(silo)!.add(rd.round);
        }
      });
    }
  return entries.map((e) => {
    const at = rounds.get(e.silo);
    if (!at) return e;
    const flags = e.flags.map((f) => ({ ...f }));
    addFlag(
      flags,
      'self-gain',
      `the audit's detector flags its reports (robust |z| above the threshold) in ${roundList([...at])}: outside the region where the audit bounds a silo's self-gain`,
    );
    return { ...e, flags };
  });
}
