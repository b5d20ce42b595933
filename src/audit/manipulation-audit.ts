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
import type { Extremum } from '../../scoring/manipulation/bounds.js';
import {
  eeMedianDamageBound,
  eeSelfGain,
  fpSelfGain,
  ioiSelfGain,
  looSelfGain,
} from '../../scoring/manipulation/closed-form.js';
import { binomial, collusionBounds } from '../../scoring/manipulation/collusion.js';
import { detectReports, undetectedBox } from '../../scoring/manipulation/detection.js';
import { influenceMatrix, sensitivityMatrix } from '../../scoring/manipulation/influence.js';
import {
  ATTACK_KINDS,
  type AttackKind,
  type AttackOutcome,
  simulateAttacks,
} from '../../scoring/manipulation/misreports.js';
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
  type BoundedRound,
  type BoundJson,
  type CollusionJson,
  type RoundAudit,
  type SchemeAudit,
} from '../records/audit-json.js';
import type { ExperimentResults, RoundUtilities } from '../records/results.js';
import { reportedUtilities, reportingSilos } from '../records/silo-reports.js';
import type { UtilitiesFile } from '../records/utilities-file.js';
import { type AuditOptions, BOUNDED_RANDOM_TRIALS, type Resolved, resolve } from './audit-options.js';
import { max, mean, min, type RoundAuditSummaryPart, summaryOf } from './audit-summary.js';

export {
  type AttackSummaryJson,
  AUDIT_SCHEMA_VERSION,
  type AuditResult,
  type AuditSource,
  type BoundedRound,
  type BoundJson,
  type CoalitionJson,
  type CollusionJson,
  type DetectionJson,
  type RoundAudit,
  type SchemeAudit,
} from '../records/audit-json.js';
export { type AuditOptions, BOUNDED_RANDOM_TRIALS } from './audit-options.js';
export { auditSummaryPart, type RoundAuditSummaryPart } from './audit-summary.js';

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
  const silos = reportingSilos(utilities);
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
  return reportedUtilities(utilities, silos);
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
  boxes: ReportBox[] | null,
  o: Resolved,
): SchemeAudit {
  const n = silos.length;
  // bounded round (boxes null): no undetected search; EE-median's breakpoint grid not searched
  const searched = boxes !== null || scheme !== 'eeMedian';
  const scores = schemeScores(scheme, u);
  const recorded = rec.scores?.[scheme];
  let recordedScoresMaxAbsDiff: number | null = null;
  if (Array.isArray(recorded) && silos.every((i) => typeof recorded[i] === 'number')) {
    recordedScoresMaxAbsDiff = 0;
    silos.forEach((g, q) => {
      recordedScoresMaxAbsDiff = Math.max(recordedScoresMaxAbsDiff!, Math.abs(recorded[g]! - scores[q]!));
    });
  }
  const bounds = searched
    ? singleSiloBounds(scheme, u, {
        range: o.range,
        threshold: o.threshold,
        exactBudget: o.exactBudget,
        // bounded: the honest point as the box (one evaluation); the result is left out below
        undetectedBoxes: boxes ?? silos.map((_, q) => honestBox(u, q)),
      })
    : [];
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
    // bounded round: no N × N matrix (their bytes, N² per scheme, would dominate the answer)
    influence: boxes === null ? [] : influenceMatrix(scheme, u).map((row) => Array.from(row)),
    sensitivity: boxes === null ? [] : sensitivityMatrix(scheme, u).map((row) => Array.from(row, num)),
    selfGain: bounds.map((b) => boundJson(b.selfGain, u.full)),
    selfGainClosedForm: cf
      ? Array.from({ length: n }, (_, i) => {
          const c = cf(u, i, o.range);
          return c.unbounded ? null : c.value;
        })
      : null,
    selfGainUndetected: boxes === null ? [] : bounds.map((b) => boundJson(b.selfGainUndetected, u.full)),
    damage:
      boxes === null
        ? []
        : bounds.map((b) => b.damage.map((e) => (e === null ? 0 : e.unbounded ? null : e.value))),
    damageExact: boxes !== null && bounds.every((b) => b.damage.every((e) => e === null || e.exact)),
    damageBound:
      scheme === 'eeMedian' && searched
        ? Array.from({ length: n }, (_, i) =>
            Array.from({ length: n }, (_, v) => (i === v ? 0 : num(eeMedianDamageBound(u, i, v)))),
          )
        : null,
    collusion,
    attacks,
  };
}

/** The degenerate box of silo q's honest reports. */
function honestBox(u: PrivateUtilities, q: number): ReportBox {
  const a = u.withOnly[q]!;
  const b = u.without[q]!;
  return { withOnlyLo: a, withOnlyHi: a, withoutLo: b, withoutHi: b };
}

/** What a bounded round leaves out (`RoundAudit.bounded`); docs/audit.md lists the same. */
const BOUNDED_NOT_COMPUTED = [
  'undetectedBoxes',
  'schemes.*.selfGainUndetected',
  'schemes.*.influence',
  'schemes.*.sensitivity',
  'schemes.*.damage',
  'schemes.eeMedian.selfGain',
  'schemes.eeMedian.damageBound',
];

/** The audit of one round: the per-round part of `auditRounds`, `seed` its random misreports' seed. */
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
  const bounded = silos.length > o.maxOptimizedSilos;
  const randomTrials = bounded ? Math.min(o.randomTrials, BOUNDED_RANDOM_TRIALS) : o.randomTrials;
  const outcomes = simulateAttacks(u, {
    range: o.range,
    inflateFactor: o.inflateFactor,
    randomTrials,
    seed,
    threshold: o.threshold,
  });
  const det = detectReports(u, o.threshold);
  const rate = (kind: AttackKind, f: (x: AttackOutcome) => number) =>
    mean(outcomes.filter((x) => x.kind === kind).map(f));
  // the undetected boxes do not depend on the scheme
  const undetectedBoxes = bounded ? null : silos.map((_, q) => undetectedBox(u, q, o.range, o.threshold));
  const schemes = Object.fromEntries(
    SCHEMES.map((s) => [s, auditScheme(s, rec, silos, u, outcomes, undetectedBoxes, o)]),
  ) as Record<Scheme, SchemeAudit>;
  const boundedRound: BoundedRound | null = bounded
    ? {
        maxOptimizedSilos: o.maxOptimizedSilos,
        silos: silos.length,
        randomTrials,
        notComputed: [...BOUNDED_NOT_COMPUTED],
      }
    : null;
  return {
    round: rec.round,
    silos,
    utilities: {
      full: u.full,
      empty: u.empty,
      withOnly: Array.from(u.withOnly),
      without: Array.from(u.without),
    },
    undetectedBoxes: undetectedBoxes ?? [],
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
    ...(boundedRound ? { bounded: boundedRound } : {}),
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
  return assemble(audits, source, o);
}

/** One run of audited rounds, as `AuditResult.runs` holds it. */
type AuditedRun = AuditResult['runs'][number];

/** The document around audited rounds: the per-scheme summary and detection rates over them. */
function assemble(audits: AuditedRun[], source: AuditSource, o: Resolved): AuditResult {
  return summarize(
    audits.flatMap((r) => r.rounds),
    audits,
    source,
    o,
  );
}

/** `assemble` with the summary read from `parts` (full rounds or their summary parts). */
function summarize(
  parts: readonly (RoundAuditSummaryPart | RoundAudit | { round: number; skipped: string })[],
  audits: AuditedRun[],
  source: AuditSource,
  o: Resolved,
): AuditResult {
  const { summary, detectionRates } = summaryOf(parts);
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
      ...(Number.isFinite(o.maxOptimizedSilos) ? { maxOptimizedSilos: o.maxOptimizedSilos } : {}),
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
  return auditRounds(
    [{ seed: 0, rounds: rounds.map(recordedInput) }],
    recordedSource(silos, source),
    options,
    emptyCoalition,
  );
}

const recordedInput = (r: RecordedRound): AuditRoundInput => ({
  round: r.round,
  utilities: {
    full: r.utilities.full,
    empty: r.utilities.empty,
    withOnly: [...r.withOnly],
    without: [...r.without],
  },
  scores: r.schemes,
});

const recordedSource = (silos: readonly string[], source: string): AuditSource => ({
  createdAt: new Date(0).toISOString(),
  dataSource: source,
  silos: [...silos],
  resultsSchemaVersion: 1,
});

/** A round's entry in `AuditResult.runs[0].rounds`: its audit, or why it was not audited. */
export type RoundAuditEntry = RoundAudit | { round: number; skipped: string };

/**
 * One recorded round's audit, as `auditRecordedRounds` computes it among the others (the same
 * seed: the misreports of round t use `options.seed + t`), so a service can audit each round once
 * when it is scored and keep it (src/server/service/round-audits.ts). Throws like `auditRecordedRounds`.
 */
export function auditRecordedRound(
  round: RecordedRound,
  options: AuditOptions = {},
  emptyCoalition: EmptyCoalition = DEFAULT_EMPTY_COALITION,
): RoundAuditEntry {
  checkEmptyCoalition(emptyCoalition, 'emptyCoalition');
  const o = resolve(options);
  return auditRound(recordedInput(round), o, o.seed + round.round, emptyCoalition);
}

/**
 * The document of `auditRecordedRounds` from rounds audited one by one (`auditRecordedRound`, same
 * options), in round order: summary and detection rates are recomputed over them (O(rounds · N)).
 */
export function assembleRecordedAudit(
  rounds: readonly RoundAuditEntry[],
  silos: readonly string[],
  source: string,
  options: AuditOptions = {},
): AuditResult {
  return assemble([{ seed: 0, rounds: [...rounds] }], recordedSource(silos, source), resolve(options));
}

/**
 * `assembleRecordedAudit` from the rounds' summary parts (`auditSummaryPart`) alone: the document
 * with `runs: [{ seed: 0, rounds: [] }]`, for a caller that holds the rounds' JSON and splices it in
 * (the service, which keeps each round's audit as JSON and never parses it again).
 */
export function assembleRecordedSummary(
  parts: readonly (RoundAuditSummaryPart | { round: number; skipped: string })[],
  silos: readonly string[],
  source: string,
  options: AuditOptions = {},
): AuditResult {
  return summarize(parts, [{ seed: 0, rounds: [] }], recordedSource(silos, source), resolve(options));
}
