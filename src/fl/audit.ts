/**
 * The manipulation audit of recorded rounds (issue 7; papers/003 §3.2, §5.3, Table 9): for every
 * run, round and private scheme, what a silo that reports selfishly can do. Pure: takes rounds of
 * recorded utilities — an experiment's parsed `results.json` (`auditExperiment`), a utilities file
 * of `fedscore score` (`auditUtilities`) or a live consortium's scored rounds
 * (`auditRecordedRounds`), all through `auditRounds` — and returns the `audit.json` document
 * (`AuditResult`, documented in docs/audit.md — keep the two in step). The math is
 * scoring/manipulation/ and scoring/private.ts.
 */

import {
  checkEmptyCoalition,
  DEFAULT_EMPTY_COALITION,
  type EmptyCoalition,
  utilitiesUnder,
} from '../../scoring/empty-coalition.js';
import {
  ATTACK_KINDS,
  type AttackKind,
  type AttackOutcome,
  simulateAttacks,
} from '../../scoring/manipulation/attacks.js';
import type { Extremum } from '../../scoring/manipulation/bounds.js';
import {
  eeMedianDamageBound,
  eeSelfGain,
  fpSelfGain,
  ioiSelfGain,
  looSelfGain,
} from '../../scoring/manipulation/closed-form.js';
import { binomial, collusionBounds } from '../../scoring/manipulation/collusion.js';
import { DEFAULT_THRESHOLD, detectReports, undetectedBox } from '../../scoring/manipulation/detection.js';
import { influenceMatrix, sensitivityMatrix } from '../../scoring/manipulation/influence.js';
import type { ReportBox, UtilityRange } from '../../scoring/manipulation/reports.js';
import { singleSiloBounds } from '../../scoring/manipulation/single-silo.js';
import {
  type PrivateUtilities,
  SCHEMES,
  type Scheme,
  schemeNormalizer,
  schemeScores,
} from '../../scoring/private.js';
import {
  type AttackSummaryJson,
  AUDIT_SCHEMA_VERSION,
  type AuditResult,
  type AuditSource,
  type BoundJson,
  type CollusionJson,
  type RoundAudit,
  type SchemeAudit,
  type SchemeSummary,
} from './audit-json.js';
import type { ExperimentResults, RoundUtilities } from './results.js';
import type { UtilitiesFile } from './utilities-file.js';

export {
  type AttackSummaryJson,
  AUDIT_SCHEMA_VERSION,
  type AuditResult,
  type AuditSource,
  type BoundJson,
  type CoalitionJson,
  type CollusionJson,
  type DetectionJson,
  type RoundAudit,
  type SchemeAudit,
  type SchemeSummary,
} from './audit-json.js';

/** Options of `auditExperiment` (all optional; defaults in docs/audit.md). */
export interface AuditOptions {
  /** Range of a reported utility. Default [0, 1] (accuracy). */
  range?: UtilityRange;
  /** Detector threshold on |robust z|. Default 3.5 (Iglewicz & Hoaglin 1993). */
  threshold?: number;
  /** inflate-self multiplies each own marginal's magnitude by this. Default 2. */
  inflateFactor?: number;
  /** Random misreports per attacker and round. Default 20. */
  randomTrials?: number;
  /** Seed of the random misreports. Default 0. */
  seed?: number;
  /** Coalition sizes audited. Default [2, 3]. */
  collusionSizes?: number[];
  /** A coalition size k is audited only when C(N, k) ≤ maxCoalitions. Default 64. */
  maxCoalitions?: number;
  /** Largest candidate grid enumerated exactly (EE-median collusion). Default 200 000. */
  exactBudget?: number;
  /** Only these round numbers (1-based). Default: all. */
  rounds?: number[];
  /**
   * A round with a utility outside `range`: 'audit' it anyway (default; an experiment's values
   * are what they are) or 'skip' it with the reason (a live consortium, whose reports the service
   * range-checks: only rounds stored before it did can be outside).
   */
  outOfRange?: 'audit' | 'skip';
}

/**
 * A round to audit: its number, the utilities recorded for it (null for a silo without a report)
 * and, optionally, the scores recorded with them (compared with the recomputed ones). An
 * experiment's `RoundRecord` is one.
 */
export interface AuditRoundInput {
  round: number;
  utilities: RoundUtilities;
  scores?: Readonly<Record<string, readonly (number | null)[]>>;
}

/** One run of rounds to audit (an experiment's seed). */
export interface AuditRunInput {
  seed: number;
  rounds: readonly AuditRoundInput[];
}

// ---------------------------------------------------------------------------------------------

const num = (x: number): number | null => (Number.isFinite(x) ? x : null);
const mean = (xs: number[]): number | null => {
  const f = xs.filter(Number.isFinite);
  return f.length === 0 ? null : f.reduce((s, x) => s + x, 0) / f.length;
};
const max = (xs: number[]): number | null => {
  const f = xs.filter(Number.isFinite);
  return f.length === 0 ? null : Math.max(...f);
};
const min = (xs: number[]): number | null => {
  const f = xs.filter(Number.isFinite);
  return f.length === 0 ? null : Math.min(...f);
};

function boundJson(e: Extremum, full: number): BoundJson {
  return {
    value: e.unbounded ? null : num(e.value),
    // null also when v(M) is so close to 0 that the share overflows (v(M) = 5e-324 is a valid accuracy)
    share: e.unbounded || full === 0 ? null : num(e.value / full),
    unbounded: e.unbounded,
    exact: e.exact,
    method: e.method,
    reports: e.reports,
  };
}

function resolve(options: AuditOptions) {
  if (options === null || typeof options !== 'object') throw new TypeError('options: expected an object');
  const range = options.range ?? { lo: 0, hi: 1 };
  if (
    typeof range !== 'object' ||
    !Number.isFinite(range.lo) ||
    !Number.isFinite(range.hi) ||
    !(range.lo < range.hi)
  )
    throw new RangeError('options.range: expected finite { lo, hi } with lo < hi');
  const positiveInt = (name: string, x: number, allowZero = false) => {
    if (!Number.isInteger(x) || x < (allowZero ? 0 : 1))
      throw new RangeError(
        `options.${name}: expected a ${allowZero ? 'non-negative' : 'positive'} integer, got ${x}`,
      );
    return x;
  };
  const collusionSizes = options.collusionSizes ?? [2, 3];
  if (!Array.isArray(collusionSizes))
    throw new TypeError('options.collusionSizes: expected an array of integers');
  for (const k of collusionSizes) positiveInt('collusionSizes', k);
  const threshold = options.threshold ?? DEFAULT_THRESHOLD;
  if (!Number.isFinite(threshold) || threshold <= 0)
    throw new RangeError(`options.threshold: expected a finite number > 0, got ${threshold}`);
  const inflateFactor = options.inflateFactor ?? 2;
  if (!Number.isFinite(inflateFactor) || inflateFactor < 1)
    throw new RangeError(`options.inflateFactor: expected a finite number ≥ 1, got ${inflateFactor}`);
  const seed = options.seed ?? 0;
  if (!Number.isFinite(seed)) throw new RangeError(`options.seed: expected a finite number, got ${seed}`);
  if (options.rounds !== undefined && !Array.isArray(options.rounds))
    throw new TypeError('options.rounds: expected an array of round numbers');
  const outOfRange = options.outOfRange ?? 'audit';
  if (outOfRange !== 'audit' && outOfRange !== 'skip')
    throw new RangeError(`options.outOfRange: expected 'audit' or 'skip', got ${String(outOfRange)}`);
  return {
    range: { lo: range.lo, hi: range.hi },
    outOfRange,
    threshold,
    inflateFactor,
    randomTrials: positiveInt('randomTrials', options.randomTrials ?? 20, true),
    seed,
    collusionSizes,
    maxCoalitions: positiveInt('maxCoalitions', options.maxCoalitions ?? 64),
    exactBudget: positiveInt('exactBudget', options.exactBudget ?? 200_000),
    rounds: options.rounds,
  };
}

type Resolved = ReturnType<typeof resolve>;

function checkResults(results: ExperimentResults): void {
  if (results === null || typeof results !== 'object')
    throw new TypeError('results: expected a parsed results.json object');
  if (!Array.isArray(results.runs)) throw new TypeError('results: expected `runs` to be an array');
  if (results.silos === null || typeof results.silos !== 'object' || !Array.isArray(results.silos.names))
    throw new TypeError('results: expected `silos.names` to be an array');
}

/** The participants of a round and their utilities, or a reason to skip it. */
function roundUtilities(
  rec: AuditRoundInput,
  o: Resolved,
): { silos: number[]; u: PrivateUtilities } | string {
  const { utilities } = rec;
  if (utilities === null || typeof utilities !== 'object') return 'no utilities recorded';
  if (!Number.isFinite(utilities.full) || !Number.isFinite(utilities.empty))
    return 'v(M) or v(M0) not finite';
  const silos: number[] = [];
  for (let i = 0; i < utilities.withOnly.length; i++) {
    const a = utilities.withOnly[i];
    const b = utilities.without[i];
    if (typeof a === 'number' && typeof b === 'number' && Number.isFinite(a) && Number.isFinite(b))
      silos.push(i);
  }
  if (silos.length < 2) return `fewer than 2 silos reported (${silos.length})`;
  if (o.outOfRange === 'skip') {
    const { lo, hi } = o.range;
    const values = [
      utilities.full,
      utilities.empty,
      ...silos.flatMap((i) => [utilities.withOnly[i]!, utilities.without[i]!]),
    ];
    if (values.some((x) => !(x >= lo && x <= hi))) return `a utility lies outside the range [${lo}, ${hi}]`;
  }
  return {
    silos,
    u: {
      full: utilities.full,
      empty: utilities.empty,
      withOnly: silos.map((i) => utilities.withOnly[i]!),
      without: silos.map((i) => utilities.without[i]!),
    },
  };
}

function summarizeAttacks(
  outcomes: AttackOutcome[],
  scheme: Scheme,
  kind: AttackKind,
  n: number,
): AttackSummaryJson {
  const mine = outcomes.filter((o) => o.kind === kind);
  const perAttacker = (f: (o: AttackOutcome) => number) =>
    Array.from({ length: n }, (_, i) => mean(mine.filter((o) => o.attacker === i).map(f)));
  const sp = (o: AttackOutcome) => o.effects[scheme]!.spearman;
  const own = (o: AttackOutcome) => o.effects[scheme]!.shareChange[o.attacker]!;
  const victim = (o: AttackOutcome) => {
    let worst = 0;
    o.effects[scheme]!.shareChange.forEach((x, j) => {
      if (j !== o.attacker && -x > worst) worst = -x;
    });
    return worst;
  };
  return {
    count: mine.length,
    spearman: perAttacker(sp),
    attackerShareChange: perAttacker(own),
    largestVictimShareLoss: perAttacker(victim),
    meanSpearman: mean(mine.map(sp)),
    minSpearman: min(mine.map(sp)),
    meanAttackerShareChange: mean(mine.map(own)),
    maxAttackerShareChange: max(mine.map(own)),
  };
}

const closedForms: Partial<
  Record<Scheme, (u: PrivateUtilities, i: number, r: UtilityRange) => { value: number; unbounded: boolean }>
> = { loo: looSelfGain, ioi: ioiSelfGain, fp: fpSelfGain, ee: eeSelfGain };

function auditScheme(
  scheme: Scheme,
  rec: AuditRoundInput,
  silos: number[],
  u: PrivateUtilities,
  outcomes: AttackOutcome[],
  boxes: ReportBox[],
  o: Resolved,
): SchemeAudit {
  const n = silos.length;
  const scores = schemeScores(scheme, u);
  const recorded = rec.scores?.[scheme];
  let recordedScoresMaxAbsDiff: number | null = null;
  if (Array.isArray(recorded) && silos.every((i) => typeof recorded[i] === 'number')) {
    recordedScoresMaxAbsDiff = 0;
    silos.forEach((g, q) => {
      recordedScoresMaxAbsDiff = Math.max(recordedScoresMaxAbsDiff!, Math.abs(recorded[g]! - scores[q]!));
    });
  }
  const bounds = singleSiloBounds(scheme, u, {
    range: o.range,
    threshold: o.threshold,
    exactBudget: o.exactBudget,
    undetectedBoxes: boxes,
  });
  const cf = closedForms[scheme];
  const collusion: CollusionJson[] = o.collusionSizes.map((k) => {
    if (k > n) return { k, coalitions: [], skipped: `k = ${k} exceeds the ${n} silos of the round` };
    const count = binomial(n, k);
    if (count > o.maxCoalitions)
      return {
        k,
        coalitions: [],
        skipped: `C(${n}, ${k}) = ${count} coalitions exceed maxCoalitions = ${o.maxCoalitions}`,
      };
    const coalitions = collusionBounds(scheme, u, k, { range: o.range, exactBudget: o.exactBudget }).map(
      (c) => ({
        members: c.members.map((q) => silos[q]!),
        total: boundJson(c.totalGain, u.full),
        memberGain: c.memberGain.map((e) => boundJson(e, u.full)),
        damage: c.damage.flatMap((e, q) =>
          e === null ? [] : [{ silo: silos[q]!, bound: boundJson(e, u.full) }],
        ),
      }),
    );
    return { k, coalitions, skipped: null };
  });
  const attacks = Object.fromEntries(
    ATTACK_KINDS.map((kind) => [kind, summarizeAttacks(outcomes, scheme, kind, n)]),
  ) as Record<AttackKind, AttackSummaryJson>;
  return {
    scores: Array.from(scores),
    recordedScoresMaxAbsDiff,
    normalizer: scheme === 'loo' || scheme === 'ioi' ? null : schemeNormalizer(scheme, u),
    influence: influenceMatrix(scheme, u).map((row) => Array.from(row)),
    sensitivity: sensitivityMatrix(scheme, u).map((row) => Array.from(row, num)),
    selfGain: bounds.map((b) => boundJson(b.selfGain, u.full)),
    selfGainClosedForm: cf
      ? Array.from({ length: n }, (_, i) => {
          const c = cf(u, i, o.range);
          return c.unbounded ? null : c.value;
        })
      : null,
    selfGainUndetected: bounds.map((b) => boundJson(b.selfGainUndetected, u.full)),
    damage: bounds.map((b) => b.damage.map((e) => (e === null ? 0 : e.unbounded ? null : e.value))),
    damageExact: bounds.every((b) => b.damage.every((e) => e === null || e.exact)),
    damageBound:
      scheme === 'eeMedian'
        ? Array.from({ length: n }, (_, i) =>
            Array.from({ length: n }, (_, v) => (i === v ? 0 : num(eeMedianDamageBound(u, i, v)))),
          )
        : null,
    collusion,
    attacks,
  };
}

function auditRound(
  rec: AuditRoundInput,
  o: Resolved,
  seed: number,
  emptyCoalition: EmptyCoalition,
): RoundAudit | { round: number; skipped: string } {
  const got = roundUtilities(rec, o);
  if (typeof got === 'string') return { round: rec.round, skipped: got };
  const { silos } = got;
  const u = utilitiesUnder(got.u, emptyCoalition); // v(∅) as the run scored
  const outcomes = simulateAttacks(u, {
    range: o.range,
    inflateFactor: o.inflateFactor,
    randomTrials: o.randomTrials,
    seed,
    threshold: o.threshold,
  });
  const det = detectReports(u, o.threshold);
  const rate = (kind: AttackKind, f: (x: AttackOutcome) => number) =>
    mean(outcomes.filter((x) => x.kind === kind).map(f));
  // the undetected boxes do not depend on the scheme
  const undetectedBoxes = silos.map((_, q) => undetectedBox(u, q, o.range, o.threshold));
  const schemes = Object.fromEntries(
    SCHEMES.map((s) => [s, auditScheme(s, rec, silos, u, outcomes, undetectedBoxes, o)]),
  ) as Record<Scheme, SchemeAudit>;
  return {
    round: rec.round,
    silos,
    utilities: {
      full: u.full,
      empty: u.empty,
      withOnly: Array.from(u.withOnly),
      without: Array.from(u.without),
    },
    undetectedBoxes,
    detection: {
      threshold: o.threshold,
      zWithOnly: Array.from(det.zWithOnly),
      zWithout: Array.from(det.zWithout),
      flaggedHonest: silos.filter((_, q) => det.flagged[q]),
      rates: Object.fromEntries(ATTACK_KINDS.map((k) => [k, rate(k, (x) => (x.detected ? 1 : 0))])) as Record<
        AttackKind,
        number | null
      >,
      honestFlaggedPerAttack: Object.fromEntries(
        ATTACK_KINDS.map((k) => [k, rate(k, (x) => x.honestSilosFlagged)]),
      ) as Record<AttackKind, number | null>,
    },
    schemes,
  };
}

/**
 * Audits every run and round for every private scheme (LOO, IOI, FP, EE, EE-median): influence
 * (papers/003 Table 9) and sensitivity matrices, single-silo self-gain and damage (also under the
 * detector), collusion for the configured sizes, simulated attacks with Spearman and budget-share
 * changes, and detection rates. Rounds with fewer than 2 reporting silos are listed as skipped. The
 * random misreports of run r, round t use seed `options.seed + 1000 · r + t`, so the audit is
 * reproducible.
 * @param runs the rounds of each run, in order.
 * @param source where they came from, recorded as `source`.
 * @param emptyCoalition v(∅) as the rounds were scored (scoring/empty-coalition.ts): with 'zero' the
 *   schemes see `empty` = 0, as the run's scores did.
 * @throws TypeError/RangeError naming the parameter on malformed runs or options.
 */
export function auditRounds(
  runs: readonly AuditRunInput[],
  source: AuditSource,
  options: AuditOptions = {},
  emptyCoalition: EmptyCoalition = DEFAULT_EMPTY_COALITION,
): AuditResult {
  if (!Array.isArray(runs as unknown)) throw new TypeError('runs: expected an array of runs');
  checkEmptyCoalition(emptyCoalition, 'emptyCoalition');
  const o = resolve(options);
  const wanted = o.rounds ? new Set(o.rounds) : null;
  const audits = runs.map((run, r) => ({
    seed: run.seed,
    rounds: run.rounds
      .filter((rec) => wanted === null || wanted.has(rec.round))
      .map((rec) => auditRound(rec, o, o.seed + 1000 * r + rec.round, emptyCoalition)),
  }));
  const audited = audits.flatMap((r) => r.rounds).filter((x): x is RoundAudit => 'schemes' in x);
  const summary = Object.fromEntries(
    SCHEMES.map((s) => {
      const per = audited.map((a) => a.schemes[s]);
      const gains = per.flatMap((p) => p.selfGain);
      const undetected = per.flatMap((p) => p.selfGainUndetected);
      const attacks = Object.fromEntries(
        ATTACK_KINDS.map((k) => [
          k,
          {
            meanSpearman: mean(per.map((p) => p.attacks[k].meanSpearman ?? Number.NaN)),
            meanAttackerShareChange: mean(per.map((p) => p.attacks[k].meanAttackerShareChange ?? Number.NaN)),
          },
        ]),
      ) as SchemeSummary['attacks'];
      const summaryOf: SchemeSummary = {
        unboundedSelfGain: gains.filter((g) => g.unbounded).length,
        siloRounds: gains.length,
        maxFiniteSelfGainShare: max(gains.map((g) => g.share ?? Number.NaN)),
        meanUndetectedSelfGainShare: mean(undetected.map((g) => g.share ?? Number.NaN)),
        maxUndetectedSelfGainShare: max(undetected.map((g) => g.share ?? Number.NaN)),
        unboundedUndetectedSelfGain: undetected.filter((g) => g.unbounded).length,
        attacks,
      };
      return [s, summaryOf];
    }),
  ) as Record<Scheme, SchemeSummary>;
  const detectionRates = Object.fromEntries(
    ATTACK_KINDS.map((k) => [k, mean(audited.map((a) => a.detection.rates[k] ?? Number.NaN))]),
  ) as Record<AttackKind, number | null>;
  return {
    auditSchemaVersion: AUDIT_SCHEMA_VERSION,
    source,
    options: {
      range: o.range,
      threshold: o.threshold,
      inflateFactor: o.inflateFactor,
      randomTrials: o.randomTrials,
      seed: o.seed,
      collusionSizes: o.collusionSizes,
      maxCoalitions: o.maxCoalitions,
      exactBudget: o.exactBudget,
    },
    schemes: [...SCHEMES],
    runs: audits,
    summary,
    detectionRates,
  };
}

/**
 * The audit of a recorded experiment: `auditRounds` over the runs of its parsed `results.json`.
 * @throws TypeError/RangeError naming the parameter on malformed results or options.
 */
export function auditExperiment(results: ExperimentResults, options: AuditOptions = {}): AuditResult {
  checkResults(results);
  return auditRounds(
    results.runs,
    {
      createdAt: results.createdAt,
      dataSource: results.dataSource,
      silos: results.silos.names,
      resultsSchemaVersion: results.schemaVersion,
    },
    options,
    // results.json version 1 has no `scoring`: its scores used v(∅) = v(M0)
    checkEmptyCoalition(results.scoring?.emptyCoalition, 'results.scoring.emptyCoalition'),
  );
}

/**
 * The audit of a utilities file (`fedscore audit --utilities`, docs/utilities.md): its rounds as
 * one run (`seed` 0). Throws like `auditRounds`.
 * @param file a file returned by `parseUtilitiesFile`.
 * @param source the file name, recorded as `source.dataSource` (`utilities file <source>`).
 */
export function auditUtilities(file: UtilitiesFile, source: string, options: AuditOptions = {}): AuditResult {
  const rounds: AuditRoundInput[] = file.rounds.map((r) => ({
    round: r.round,
    utilities: { full: r.full, empty: r.empty, withOnly: [...r.withOnly], without: [...r.without] },
  }));
  return auditRounds(
    [{ seed: 0, rounds }],
    {
      createdAt: null,
      dataSource: `utilities file ${source}`,
      silos: [...file.silos],
      resultsSchemaVersion: null,
    },
    options,
  );
}

/** One round as a live consortium records it (the service's scored rounds). */
export interface RecordedRound {
  round: number;
  utilities: { full: number; empty: number };
  withOnly: readonly (number | null)[];
  without: readonly (number | null)[];
  schemes: Readonly<Record<string, readonly (number | null)[]>>;
}

/**
 * The same audit for a live consortium (issue 7: "the service exposes the same audit"): its
 * scored rounds in place of an experiment's `runs`. Throws like `auditExperiment`.
 */
export function auditRecordedRounds(
  rounds: readonly RecordedRound[],
  silos: readonly string[],
  source: string,
  options: AuditOptions = {},
  emptyCoalition?: EmptyCoalition,
): AuditResult {
  const recorded: AuditRoundInput[] = rounds.map((r) => ({
    round: r.round,
    utilities: {
      full: r.utilities.full,
      empty: r.utilities.empty,
      withOnly: [...r.withOnly],
      without: [...r.without],
    },
    scores: r.schemes,
  }));
  return auditRounds(
    [{ seed: 0, rounds: recorded }],
    { createdAt: new Date(0).toISOString(), dataSource: source, silos: [...silos], resultsSchemaVersion: 1 },
    options,
    emptyCoalition,
  );
}
