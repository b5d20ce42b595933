/**
 * The shape of `results.json`, written by `fedscore experiment` (documented for users in
 * docs/results.md; keep the two in step). Plain JSON: numbers, strings, arrays, objects.
 * Per-silo arrays are in silo order; a silo that did not take part in a round has `null`.
 */

import type { EmptyCoalition } from '../../scoring/empty-coalition.js';
import type { Convention } from '../consortium/convention.js';
import type { AdapterInfo } from '../ml/adapter.js';
import type { HeadlineAgreement, LeaderboardEntry } from './leaderboard.js';

/**
 * Version of this schema; bumped on any change. 2 added `scoring`, `comparison.references` and
 * `comparison.byReference` (and, with `scoring.raw`, the `…Raw` methods); a version-1 file reads
 * as a version-2 file with `scoring` = { emptyCoalition: 'initialModel', raw: false, … } and one
 * reference (`RESULTS_SCHEMA_VERSIONS` lists what readers accept).
 */
export const RESULTS_SCHEMA_VERSION = 2;

/** The results.json versions the readers (`fedscore audit`) accept. */
export const RESULTS_SCHEMA_VERSIONS: readonly number[] = [1, 2];

/** `{ mean, std }` over seeds (std is the sample standard deviation; 0 for one seed). */
export interface MeanStd {
  mean: number;
  std: number;
}

/** Agreement of one method's scores with the reference (papers/003 §5). */
export interface MethodComparison {
  spearman: MeanStd;
  kendall: MeanStd;
  pearson: MeanStd;
  l2: MeanStd;
}

/** Utilities of one round (test-set utility of each coalition model the private schemes use). */
export interface RoundUtilities {
  /** v(M) */
  full: number;
  /** v(M0) */
  empty: number;
  /** v(M0 + U_i), reported by silo i; null when i did not take part. */
  withOnly: (number | null)[];
  /** v(M − U_i), reported by silo i; null when i did not take part. */
  without: (number | null)[];
}

/** A quarantined report of a round (see `RoundRecord.quarantined`, docs/results.md). */
export interface QuarantinedRecord {
  silo: number;
  /** The reported v(M0 + U_i) and v(M − U_i). */
  withOnly: number;
  without: number;
  /** Robust z of IOI_i and LOO_i among the round's reports. */
  zWithOnly: number;
  zWithout: number;
  /** Which report(s) exceeded the threshold. */
  flagged: ('withOnly' | 'without')[];
  threshold: number;
  /** Released by the operator (scored); always false in the in-process engine. */
  released: boolean;
}

/** One round of one seed. */
export interface RoundRecord {
  /** 1-based round number. */
  round: number;
  /** Silos selected for the round. */
  selected: number[];
  /** Selected silos that dropped out of secure aggregation (their update is not in M). */
  dropped: number[];
  /** Relative aggregation weight per silo (null when not aggregated). */
  aggregationWeights: (number | null)[];
  /** Test accuracy and loss of the global model after the round. */
  testAccuracy: number;
  testLoss: number;
  utilities: RoundUtilities;
  /** Every score of every silo this round, keyed by method name (`loo`, `ioi`, `fp`, `ee`, `eeMedian`, estimators …). */
  scores: Record<string, (number | null)[]>;
  /**
   * Reports the detector flagged (robust |z| > threshold, scoring/manipulation/quarantine.ts): the
   * private schemes scored the round without them (their silos' private scores are null). Present
   * only when a report was flagged.
   */
  quarantined?: QuarantinedRecord[];
  /** Coalition evaluations spent per method this round. */
  evaluations: Record<string, number>;
  /** Wall time in ms per phase (`training`, `secureAggregation`, `privateScoring`, one per estimator …). */
  timingsMs: Record<string, number>;
}

/** One seed's run. */
export interface RunRecord {
  seed: number;
  rounds: RoundRecord[];
  /** Scores summed over rounds per method (the MR convention), per silo. */
  cumulative: Record<string, number[]>;
  /** The per-silo vectors compared with the reference (cumulative, or those of `comparison.at`). */
  compared: Record<string, number[]>;
  /** Final test accuracy and loss. */
  finalAccuracy: number;
  finalLoss: number;
  /** Total coalition evaluations and wall time per method. */
  evaluations: Record<string, number>;
  timingsMs: Record<string, number>;
  /** How many rounds each silo was selected in. */
  participation: number[];
}

/** One silo role's outcome (see `src/report/outcomes.ts`). */
export interface RoleOutcome {
  /** The silos with this role. */
  silos: number[];
  /** Fraction of rounds a silo of this role was selected in (mean over the role's silos). */
  participation: MeanStd;
  /**
   * Mean over the rounds a silo was aggregated in of its weight / the round's mean weight (1 =
   * equal FedAvg weights; 0 = always left out of the aggregate), averaged over the role's silos.
   * NaN (written as null) when no silo of the role was ever aggregated.
   */
  aggregationShare: MeanStd;
}

/** What a selection/aggregation strategy achieved, `{ mean, std }` over seeds. */
export interface Outcomes {
  finalAccuracy: MeanStd;
  /** Keyed by role (`honest`, `maverick`, `non-iid`, an attack kind, `noise=0.33`, …). */
  byRole: Record<string, RoleOutcome>;
}

/**
 * The secure-aggregation parameters a private run used (protocol/config.ts, protocol/weighted.ts;
 * docs/threat-model.md). Thresholds are those of a round of all silos; a round of k < n
 * selected silos raises t to its own bound.
 */
export interface SecureAggregationRecord {
  /** n_C: corrupted silos tolerated (`secureAggregation.corruptSilos`, default ⌈n/3⌉ − 1). */
  corruptSilos: number;
  /** The threshold t of a round of all silos. */
  threshold: number;
  /** ⌊(n + n_C)/2⌋ + 1: the smallest t private against a malicious server colluding with n_C silos. */
  minimumThreshold: number;
  /** True when t < minimumThreshold: the explicit `weakThreshold` opt-in was used. */
  weakThreshold: boolean;
  /** Unmasking corrections (`off`, `recompute`, `fallback`). */
  corrections: 'off' | 'recompute' | 'fallback';
  /** Headroom bits of the quantizer that make the aggregate range check meaningful. */
  guardBits: number;
  /** The weight floor f, largest share s and effective number m every round's weights kept (weight-floor.ts); absent in older results. */
  weightFloor?: number;
  maxWeightShare?: number;
  minEffectiveSilos?: number;
}

/** The whole of `results.json`. */
export interface ExperimentResults {
  /** `RESULTS_SCHEMA_VERSION` when written now; 1 in files written before version 2. */
  schemaVersion: 1 | typeof RESULTS_SCHEMA_VERSION;
  /** The validated configuration, defaults filled in. */
  config: unknown;
  /**
   * The private schemes the outputs show, as `fedscore experiment --schemes` asked (absent: the
   * default, every scheme but FP; src/records/shown-schemes.ts). A display option of the reports,
   * not of the run: every scheme is recorded either way.
   */
  schemes?: string[];
  /** Tensor backend used (`webgpu`, `tensorflow`, `wasm`, `cpu`). */
  backend: string;
  /** Who ran the products and convolutions, e.g. `OpenBLAS 0.3.21 (2 threads)` (absent when unknown). */
  kernels?: string;
  /**
   * On `webgpu`: the adapter (vendor, architecture, device, description, and whether it is a
   * software one such as lavapipe). Absent on other backends.
   */
  adapter?: AdapterInfo;
  versions: { fedscore: string; node: string; tfjs: string };
  createdAt: string;
  /** Where the data came from (e.g. the Debian package path or the bundled test split). */
  dataSource: string;
  /**
   * The examples the run used (last seed): training examples over the silos (Σ silos.examples)
   * and the common test set. `dataSource` describes the whole source, which may be larger.
   * Absent in older files.
   */
  dataUsed?: { train: number; test: number };
  /**
   * What saw individual updates: in private mode the server side never does; the comparison
   * harness (full visibility) does, and the strategies that need updates do.
   */
  visibility: { serverReadIndividualUpdates: boolean; harnessReadIndividualUpdates: boolean; note: string };
  /** Absent when secure aggregation is off (`secureAggregation.enabled: false`) and in older results. */
  secureAggregation?: SecureAggregationRecord;
  seeds: number[];
  silos: { count: number; names: string[]; examples: number[]; roles: string[] };
  /**
   * How the rounds' utilities became scores, defaults resolved (absent in version 1, which means
   * `emptyCoalition: 'initialModel'`, `raw: false`).
   */
  scoring?: {
    /** `scoring.utility`: accuracy or negLoss. */
    utility: 'accuracy' | 'negLoss';
    /** `aggregation.convention`: how coalition models were formed. */
    coalitions: Convention;
    /** `scoring.emptyCoalition`: v(∅) = v(M0) ('initialModel') or 0 ('zero'). */
    emptyCoalition: EmptyCoalition;
    /** `scoring.raw`: whether rounds carry fpRaw, eeRaw and eeMedianRaw. */
    raw: boolean;
    /** `scoring.quarantine`: whether flagged reports were left out (absent in files written before it: false). */
    quarantine?: boolean;
  };
  runs: RunRecord[];
  comparison: {
    /** The primary reference (`mrsv` by default, `trueSv` when computed); `methods` is its table. */
    reference: string;
    /** Every configured reference, the primary first (absent in version 1: just `reference`). */
    references?: string[];
    /** `cumulative`, or the round number whose scores are compared. */
    at: 'cumulative' | number;
    /** Agreement of every method with the primary reference (= `byReference[reference]`). */
    methods: Record<string, MethodComparison>;
    /** Agreement of every method with each reference (absent in version 1). */
    byReference?: Record<string, Record<string, MethodComparison>>;
    /** With attacks configured: per method, the fraction of seeds whose lowest score is an attacker's. */
    detection?: Record<string, number>;
  };
  /** Final accuracy and per-role participation and aggregation share (papers/000 Table 2, papers/002 Fig. 2). */
  outcomes?: Outcomes;
  /** The headline score's scheme (`payout` since issue 37, `eeMedian` before: its weight; src/records/leaderboard.ts); absent in older files. */
  headline?: string;
  /** Every silo in rank order, cumulative over the scored rounds, mean over seeds, with flags (docs/results.md#leaderboard). */
  leaderboard?: LeaderboardEntry[];
  /** Agreement of the cumulative headline and `share` with the cumulative reference (issue 37); absent in older files. */
  headlineAgreement?: HeadlineAgreement[];
  /** Total wall time in ms. */
  wallTimeMs: number;
}
