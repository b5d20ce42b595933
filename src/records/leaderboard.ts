/**
 * The leaderboard: one table of silos and their scores, the same in every output (console of
 * `experiment`, `score`, `audit`; the first section of report.md/report.html; results.json and
 * scores.json; the dashboard; `fedscore client`'s own line). Docs: docs/results.md#leaderboard.
 *
 * The headline score is the `payout` weight (scoring/payout.ts, issue 37): EE-median's weight
 * (papers/003 Eq. 4 with the median of the others' reports, before any rescaling) gated by the
 * silo's own improvement over a zero update where the other silos' improvements show a signal,
 * the same part of the round's gain for every silo where they do not, summed over the scored
 * rounds. It has no normalizer, so a D ≤ 0 — which reverses FP in the quickstart
 * (docs/findings.md) — never reverses it; a free rider gets 0 in every round with signal. Why: docs/findings.md#the-headline-score (separation against self-gain, measured). The
 * numbers — headline, share, interval, rank, rankRange — come from scoring/leaderboard.ts (pure,
 * exported by `@fedscore/scoring`); this module adds names, every scheme's column and flags.
 *
 * Flags come from what the run knows: the simulated roles (attacks, labelNoise), the detector's
 * quarantine of flagged reports, a silo whose update never moved M0 (v(M0 + U_i) = v(M0) in every
 * round it reported: a free rider), missing reports, and — after `fedscore audit` — reports the
 * audit's detector places outside its undetected box (`auditFlags`).
 */
import type { EmptyCoalition } from '../../scoring/empty-coalition.js';
import {
  HEADLINE_SCHEME,
  type HeadlineRound,
  headlineLeaderboard,
  headlineOfRound as headlineOfRecordedRound,
} from '../../scoring/leaderboard.js';
import { kendallTau, spearman } from '../../scoring/metrics.js';
import { type RegisteredScheme, SCHEMES } from '../../scoring/private.js';
import type { QuarantinedReport, RoundScores } from '../consortium/schemas.js';
import { type RecordedUtilities, reportingSilos } from './silo-reports.js';

/** The scheme of the headline score (its weight; see the module comment). */
export const HEADLINE: RegisteredScheme = HEADLINE_SCHEME;

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
  /**
   * [best, worst] rank over the middle 95 % of a bootstrap over rounds (scoring/leaderboard.ts);
   * best ≠ worst is a near-tie, printed "2–3". Absent in files written before issue 37.
   */
  rankRange?: [number, number];
  /** The headline score summed over the scored rounds (mean over seeds). */
  headline: number;
  /** 95 % bootstrap interval of `headline` over rounds. Absent in files written before issue 37. */
  interval?: [number, number];
  /**
   * The silo's fraction of the consortium's reward: max(0, headline) over the sum of those of the
   * silos ever selected (Σ = 1); null for a silo never selected. Absent in older files.
   */
  share?: number | null;
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

/** The silos scored in a round: `scored`, else those with an EE-median score (any scheme would do). */
const scoredSilos = (rd: LeaderboardRound) =>
  rd.scored
    ? [...rd.scored]
    : (rd.scores.eeMedian ?? []).flatMap((v, i) => (v === null || v === undefined ? [] : [i]));

/** A round as the service publishes it (GET /v1/consortia/:cid/scores, `rounds[]`). */
export type PublishedScores = Pick<
  RoundScores,
  'round' | 'silos' | 'utilities' | 'withOnly' | 'without' | 'schemes'
> & {
  quarantined: readonly Pick<QuarantinedReport, 'silo' | 'released'>[];
  /**
   * The silos selected for the round (null or absent: every silo). A silo that sat the round out
   * owes no report: `missing-reports` counts only the rounds a silo was selected for (issue 37).
   */
  selected?: RoundScores['selected'];
};

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
          ...(rd.selected ? { selected: rd.selected } : {}),
        })),
      },
    ],
  });
}

/**
 * The headline score of every silo in one round: the `payout` weights over the scored silos under
 * the run's v(∅) (null for a silo not scored; every entry null when fewer than 2 were scored).
 */
export function headlineOfRound(rd: LeaderboardRound, n: number, empty: EmptyCoalition): (number | null)[] {
  return headlineOfRecordedRound(headlineRoundOf(rd), n, empty);
}

/** A recorded round as scoring/leaderboard.ts takes it. */
const headlineRoundOf = (rd: LeaderboardRound): HeadlineRound => ({
  ...rd.utilities,
  scored: scoredSilos(rd).filter((i) => reportingSilos(rd.utilities).includes(i)),
});

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
 * and in the last scored round, its share, interval and rank range (scoring/leaderboard.ts), every
 * private scheme's cumulative score (and the reference's), means over seeds, flags with their
 * reasons; in rank order.
 */
export function leaderboardOf(input: LeaderboardInput): LeaderboardEntry[] {
  const n = input.names.length;
  const selected = input.names.map((_, i) =>
    input.runs.some((run) =>
      run.rounds.some((rd) => (rd.selected ?? input.names.map((_, k) => k)).includes(i)),
    ),
  );
  const numbers = headlineLeaderboard(
    n,
    input.runs.map((run) => run.rounds.map(headlineRoundOf)),
    { emptyCoalition: input.emptyCoalition, selected },
  );
  const methods = [...SCHEMES, ...(input.reference ? [input.reference] : [])];
  const entries = input.names.map((name, i): LeaderboardEntry => {
    const flags: LeaderboardFlag[] = [];
    roleFlags(input.roles?.[i], input.attacks?.find((a) => a.silo === i)?.kind, flags);
    recordFlags(input, i, flags);
    const scores: Record<string, number> = {};
    for (const m of methods) {
      const values = input.runs.flatMap((run) => (run.cumulative[m] ? [run.cumulative[m]![i] ?? 0] : []));
      if (values.length > 0) scores[m] = mean(values);
    }
    const x = numbers[i]!;
    return {
      silo: i,
      name,
      rank: x.rank,
      rankRange: x.rankRange,
      headline: x.headline,
      interval: x.interval,
      share: x.share,
      lastRound: x.lastRound,
      scores,
      flags,
    };
  });
  return entries.sort((a, b) => a.rank - b.rank || a.silo - b.silo);
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
 * outside its undetected box (robust z of IOI or LOO above the threshold) in some round gets a
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
        // One-sided, as the detector (scoring/manipulation/detection.ts): a marginal far below its
        // references only lowers the silo's own score (an honest Maverick, bad data, a free rider).
        if ((zWithOnly[q] ?? 0) > threshold || (zWithout[q] ?? 0) > threshold) {
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
      `the audit's detector flags its reports (robust z above the threshold) in ${roundList([...at])}: outside the region where the audit bounds a silo's self-gain`,
    );
    return { ...e, flags };
  });
}

/** Rank agreement of one shown quantity with one reference. */
export interface RankAgreement {
  spearman: number;
  kendall: number;
}

/** results.json / scores.json `headlineAgreement[]`: what is shown, against a cumulative reference. */
export interface HeadlineAgreement {
  /** The reference (its cumulative vector: MR-SV, i.e. roundSv summed over the rounds). */
  reference: string;
  /** The silos compared: those with a share (ever selected). */
  silos: number;
  /** The cumulative headline against the reference. */
  headline: RankAgreement | null;
  /** `share` against the reference. */
  share: RankAgreement | null;
}

/**
 * Agreement (Spearman, Kendall τ-b; papers/003 §5) of the cumulative headline and of `share` with
 * each cumulative reference the entries carry (a `scores` key that is not a private scheme), over
 * the silos with a share; null where fewer than 2 silos or a constant vector leave it undefined.
 */
export function headlineAgreementOf(entries: readonly LeaderboardEntry[]): HeadlineAgreement[] {
  const refs = [...new Set(entries.flatMap((e) => Object.keys(e.scores)))].filter(
    (m) => !(SCHEMES as readonly string[]).includes(m),
  );
  const rows = entries.filter((e) => e.share !== null && e.share !== undefined);
  const agree = (a: number[], b: number[]): RankAgreement | null => {
    if (a.length < 2) return null;
    const s = spearman(a, b);
    const k = kendallTau(a, b);
    return Number.isFinite(s) && Number.isFinite(k) ? { spearman: s, kendall: k } : null;
  };
  return refs.flatMap((reference) => {
    const withRef = rows.filter((e) => Number.isFinite(e.scores[reference]));
    if (withRef.length < 2) return [];
    const ref = withRef.map((e) => e.scores[reference]!);
    return [
      {
        reference,
        silos: withRef.length,
        headline: agree(
          withRef.map((e) => e.headline),
          ref,
        ),
        share: agree(
          withRef.map((e) => e.share!),
          ref,
        ),
      },
    ];
  });
}
