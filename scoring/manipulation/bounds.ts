/**
 * What a bound search returns and the options it takes (`singleSiloBounds`, `collusionBounds`):
 * the supremum of a change of scores over the reports an attacker may send.
 */
import type { ReportBox, SiloReports, UtilityRange } from './reports.js';

/** How an extremum was found. */
export type ExtremumMethod = 'vertices' | 'breakpoints' | 'coordinate-search';

/**
 * The supremum of an objective over feasible reports. The honest reports are always feasible,
 * so `value` ≥ 0. `unbounded` is false since issue 32 (S1): a ratio scheme falls back when |D| is
 * within the margin κ·Σ|w| of zero (scoring/private.ts, NORMALIZER_MARGIN), so every score is
 * bounded by |v(M)|/κ; the field stays for readers of audit.json.
 */
export interface Extremum {
  /** sup of the objective (score units); +Infinity when unbounded. */
  value: number;
  /** Always false since the normalizer's margin (issue 32); kept for audit.json readers. */
  unbounded: boolean;
  /**
   * true: `value` is the supremum (all vertices of the pieces on which the score is a ratio of
   * affine functions were evaluated). false: a value attained by feasible reports (a lower bound
   * of the supremum) that no change of a single reported coordinate improves.
   */
  exact: boolean;
  /** How it was found: box corners, the EE-median breakpoint grid, or coordinate search. */
  method: ExtremumMethod;
  /** Reports attaining `value`, one per attacker (in attacker order); null when unbounded. */
  reports: SiloReports[] | null;
  /** Score evaluations spent. */
  evaluations: number;
}

/** Options of `singleSiloBounds` and `collusionBounds`. */
export interface BoundOptions {
  /** Range of a reported utility. Default [0, 1] (accuracy). */
  range?: UtilityRange;
  /** Threshold of the detector for the `undetected` bounds. Default 3.5. */
  threshold?: number;
  /** Largest candidate grid enumerated exactly (EE-median collusion); default 200 000. */
  exactBudget?: number;
  /**
   * The undetected boxes per silo when already computed by `undetectedBox` with the same range and
   * threshold (they do not depend on the scheme); computed when absent.
   */
  undetectedBoxes?: readonly ReportBox[];
}
