/**
 * The shape of `audit.json`, written by `fedscore audit` (documented for users in docs/audit.md;
 * keep the two in step) and computed by ../audit/manipulation-audit.ts. Plain JSON: numbers that are unbounded or
 * undefined are null.
 */

import type { ExtremumMethod } from '../../scoring/manipulation/bounds.js';
import type { AttackKind } from '../../scoring/manipulation/misreports.js';
import type { ReportBox, SiloReports, UtilityRange } from '../../scoring/manipulation/reports.js';
import type { Scheme } from '../../scoring/private.js';

/** Version of the audit.json schema; bump on any incompatible change. */
export const AUDIT_SCHEMA_VERSION = 1;

/** A supremum in JSON: `value` null when unbounded. */
export interface BoundJson {
  /** Largest change of the score (score units); null when unbounded. */
  value: number | null;
  /** value / v(M): the change of the budget share; null when unbounded or v(M) = 0. */
  share: number | null;
  unbounded: boolean;
  /** true: the supremum; false: a value attained by feasible reports (coordinate search). */
  exact: boolean;
  method: ExtremumMethod;
  /** Reports attaining it, one per attacker; null when unbounded. */
  reports: SiloReports[] | null;
}

/** One coalition of colluders. */
export interface CoalitionJson {
  /** Silo indices (global). */
  members: number[];
  /** Largest increase of the members' summed score. */
  total: BoundJson;
  /** Per member: largest increase of its own score with the coalition's help. */
  memberGain: BoundJson[];
  /** Per non-member: largest decrease of its score. */
  damage: { silo: number; bound: BoundJson }[];
}

/** Collusion of size k. */
export interface CollusionJson {
  k: number;
  /** Every k-subset of the round's silos, or [] when skipped. */
  coalitions: CoalitionJson[];
  /** Why k was not audited (C(N, k) > maxCoalitions, or k > N). */
  skipped: string | null;
}

/** Simulated attacks of one kind under one scheme. */
export interface AttackSummaryJson {
  /** Misreports simulated (N for the deterministic kinds, N × randomTrials for `random`). */
  count: number;
  /** Per attacker (round order), mean over its misreports: Spearman of attacked vs honest scores. */
  spearman: (number | null)[];
  /** Per attacker: mean change of its own budget share score/v(M). */
  attackerShareChange: (number | null)[];
  /** Per attacker: mean of the largest share another silo loses. */
  largestVictimShareLoss: (number | null)[];
  meanSpearman: number | null;
  minSpearman: number | null;
  meanAttackerShareChange: number | null;
  maxAttackerShareChange: number | null;
}

/** Everything about one scheme in one round. */
export interface SchemeAudit {
  /** Scores recomputed from the recorded utilities (round order). */
  scores: number[];
  /** max |recomputed − recorded `scores[scheme]`|; null when the round did not record the scheme. */
  recordedScoresMaxAbsDiff: number | null;
  /** D = Σ_j w_j (FP, EE, EE-median); null for LOO and IOI. */
  normalizer: number | null;
  /** papers/003 Table 9: rows scored silo, columns reporting silo, share of w_i; rows sum to 1. */
  influence: number[][];
  /** Local sensitivity shares, normalizer included; rows sum to 1 (null entries where D = 0). */
  sensitivity: (number | null)[][];
  /** Per silo: largest gain of its own score, reports anywhere in [lo, hi]². */
  selfGain: BoundJson[];
  /** Per silo: the closed form of its self-gain (LOO, IOI, FP, EE; null entry = unbounded); null for EE-median. */
  selfGainClosedForm: (number | null)[] | null;
  /** Per silo: largest self-gain with reports the detector does not flag. */
  selfGainUndetected: BoundJson[];
  /** damage[i][v]: largest decrease of silo v's score that silo i alone can cause; null = unbounded; 0 on the diagonal. */
  damage: (number | null)[][];
  /** Whether every damage entry is the supremum. */
  damageExact: boolean;
  /** EE-median only: the bound from the honest reports' neighbouring order statistics (null = none). */
  damageBound: (number | null)[][] | null;
  collusion: CollusionJson[];
  attacks: Record<AttackKind, AttackSummaryJson>;
}

/** The detector on one round. */
export interface DetectionJson {
  threshold: number;
  /** Robust z of the honest reported marginals v(M0+U_i) − v(M0) and v(M) − v(M−U_i). */
  zWithOnly: number[];
  zWithout: number[];
  /** Silos (global indices) flagged on the honest reports. */
  flaggedHonest: number[];
  /** Per attack kind: fraction of the simulated misreports whose attacker is flagged (null: none simulated). */
  rates: Record<AttackKind, number | null>;
  /** Per attack kind: mean number of honest silos flagged alongside the attacker (null: none simulated). */
  honestFlaggedPerAttack: Record<AttackKind, number | null>;
}

/** One round of one run. */
export interface RoundAudit {
  round: number;
  /** Silos (global indices) that reported this round; every per-silo array is in this order. */
  silos: number[];
  /**
   * The utilities the schemes saw, restricted to `silos`: the recorded ones, with `empty` = 0 when
   * the run scored with `scoring.emptyCoalition: 'zero'`.
   */
  utilities: { full: number; empty: number; withOnly: number[]; without: number[] };
  /** The feasible-report box the detector lets through, per silo (scheme-independent). */
  undetectedBoxes: ReportBox[];
  detection: DetectionJson;
  schemes: Record<Scheme, SchemeAudit>;
  /**
   * Present only in a round audited in the bounded mode (`options.maxOptimizedSilos` below the
   * round's silo count; the service's audit, docs/audit.md "Bounded mode"): what was not computed.
   * Each field it names is empty (`[]`) or null in this round, never a value.
   */
  bounded?: BoundedRound;
}

/** What a bounded round left out (`RoundAudit.bounded`). */
export interface BoundedRound {
  /** The cap the round exceeded: the full audit runs on rounds of at most this many silos. */
  maxOptimizedSilos: number;
  /** The round's silo count. */
  silos: number;
  /** Random misreports per attacker actually simulated (≤ `options.randomTrials`). */
  randomTrials: number;
  /** The fields left empty or null, as paths (`schemes.*.selfGainUndetected`, …). */
  notComputed: string[];
}

/** Per scheme, over all audited rounds. */
export interface SchemeSummary {
  /** Rounds × silos in which a single silo's self-gain is unbounded. */
  unboundedSelfGain: number;
  /** Silo-rounds audited. */
  siloRounds: number;
  /** Largest finite self-gain as a share of v(M); null when none is finite. */
  maxFiniteSelfGainShare: number | null;
  /** Mean and max undetected self-gain share over bounded silo-rounds. */
  meanUndetectedSelfGainShare: number | null;
  maxUndetectedSelfGainShare: number | null;
  /** Silo-rounds whose undetected self-gain is unbounded. */
  unboundedUndetectedSelfGain: number;
  /** Per attack kind: mean Spearman and mean attacker share change over all rounds. */
  attacks: Record<AttackKind, { meanSpearman: number | null; meanAttackerShareChange: number | null }>;
}

/** Where audited rounds came from (`AuditResult.source`). */
export interface AuditSource {
  createdAt: string | null;
  dataSource: string;
  silos: string[];
  resultsSchemaVersion: number | null;
}

/** The whole of `audit.json`. */
export interface AuditResult {
  auditSchemaVersion: typeof AUDIT_SCHEMA_VERSION;
  /**
   * Where the rounds came from: results.json's `createdAt`, `dataSource`, silo names and
   * `schemaVersion`; for a utilities file `createdAt` and `resultsSchemaVersion` are null.
   */
  source: AuditSource;
  options: {
    range: UtilityRange;
    threshold: number;
    inflateFactor: number;
    randomTrials: number;
    seed: number;
    collusionSizes: number[];
    maxCoalitions: number;
    exactBudget: number;
    /** Present when set: rounds of more silos are audited in the bounded mode (`RoundAudit.bounded`). */
    maxOptimizedSilos?: number;
  };
  schemes: Scheme[];
  runs: { seed: number; rounds: (RoundAudit | { round: number; skipped: string })[] }[];
  summary: Record<Scheme, SchemeSummary>;
  /** Detection rate per attack kind over all audited rounds. */
  detectionRates: Record<AttackKind, number | null>;
}
