/**
 * Quarantine of flagged reports (issue 27, A4; issues 32 and 37): the detector of ./detection.ts
 * flags a silo whose reported marginal IOI_j = v(M0 + U_j) − v(M0) or LOO_j = v(M) − v(M − U_j)
 * lies above the other silos' by more than the threshold in robust z (Iglewicz & Hoaglin 1993;
 * papers/003 §5.3 suggests anomaly detection in EE's averaging step), measured against the others'
 * reports only and robust to two colluders. A flagged report is set aside: the round is scored as
 * if that silo had not reported, so an in-range lie the audit sees cannot move the published
 * scores. The operator may release a quarantined report; the round is then scored with it.
 *
 * One pass: the detector runs once on every report of the round (the reports it flags are not
 * re-tested after the others are set aside), the same pass the audit runs. Rounds of fewer than
 * {@link MIN_REPORTS_FOR_QUARANTINE} reports quarantine nothing.
 */
import { checkUtilities, type PrivateUtilities } from '../private.js';
import { checkThreshold } from './_checks.js';
import { COLLUDERS_TOLERATED, DEFAULT_THRESHOLD, detectReports } from './detection.js';
import { MIN_REFERENCE } from './reference-z.js';

/**
 * The fewest reports a round needs before any is quarantined (issue 32, S1: enough to tolerate two
 * colluders): the silo judged, the {@link COLLUDERS_TOLERATED} reports its z may leave out, and
 * the 3 that every reference set keeps. With fewer, a pair could be the whole reference of an
 * honest silo, or a single honest distance would set the scale (in the e2e consortium of 3
 * reporters the detector before issue 27's minimum flagged two different honest silos). Smaller
 * rounds are scored with every report; the audit still shows their flags.
 */
export const MIN_REPORTS_FOR_QUARANTINE = 1 + COLLUDERS_TOLERATED + MIN_REFERENCE;

/** Which of a silo's two reports the detector flagged. */
export type FlaggedReport = 'withOnly' | 'without';

/** One report set aside, with the detector's reason. */
export interface QuarantinedReport {
  /** Position of the silo in the utilities (the caller maps it to its silo id). */
  index: number;
  /** The reported v(M0 + U_j) and v(M − U_j). */
  withOnly: number;
  without: number;
  /** Robust z of IOI_j and of LOO_j against the other silos' reports (see `detectReports`). */
  zWithOnly: number;
  zWithout: number;
  /** The reports whose z exceeds the threshold. */
  flagged: FlaggedReport[];
  /** The threshold on z that was applied. */
  threshold: number;
  /** Whether the operator released it (a released report is scored; it stays listed). */
  released: boolean;
}

/** Options of {@link quarantineReports}. */
export interface QuarantineOptions {
  /** The detector's bound on z; default {@link DEFAULT_THRESHOLD} (3.5). */
  threshold?: number;
  /**
   * The utilities' resolution (1/T for an accuracy on T test examples; see `DetectionOptions`).
   * Default: the detector's (1/1000, no rounding).
   */
  resolution?: number;
  /** Positions (as in the utilities) of reports the operator released: scored even if flagged. */
  released?: readonly number[];
}

/** The detector's verdict on a round: which reports are scored and which are set aside. */
export interface QuarantineDecision {
  /** Positions of the reports that are scored, in order. */
  kept: number[];
  /** Every flagged report (released ones included, with `released: true`), in order. */
  quarantined: QuarantinedReport[];
}

/**
 * Runs the detector on a round's reports and sets aside the flagged ones not released.
 * @param utilities the round's reported utilities (at least 2 silos).
 * @param options threshold, resolution and released positions.
 * @throws RangeError/TypeError naming the field (`utilities.without: …`, `threshold: …`,
 *   `options.resolution: …`, `options.released: …`) on bad input.
 */
export function quarantineReports(
  utilities: PrivateUtilities,
  options: QuarantineOptions = {},
): QuarantineDecision {
  const u = checkUtilities(utilities, 'utilities');
  const threshold = checkThreshold(options.threshold ?? DEFAULT_THRESHOLD);
  const released = new Set<number>();
  for (const r of options.released ?? []) {
    if (!Number.isInteger(r) || r < 0 || r >= u.n)
      throw new RangeError(`options.released: expected positions in [0, ${u.n}), got ${String(r)}`);
    released.add(r);
  }
  if (u.n < MIN_REPORTS_FOR_QUARANTINE)
    return { kept: Array.from({ length: u.n }, (_, j) => j), quarantined: [] };
  const d = detectReports(
    u,
    threshold,
    options.resolution !== undefined ? { resolution: options.resolution } : {},
  );
  const kept: number[] = [];
  const quarantined: QuarantinedReport[] = [];
  for (let j = 0; j < u.n; j++) {
    const zWithOnly = d.zWithOnly[j]!;
    const zWithout = d.zWithout[j]!;
    const free = released.has(j);
    if (d.flagged[j]) {
      const flagged: FlaggedReport[] = [];
      if (zWithOnly > threshold) flagged.push('withOnly');
      if (zWithout > threshold) flagged.push('without');
      quarantined.push({
        index: j,
        withOnly: u.withOnly[j]!,
        without: u.without[j]!,
        zWithOnly,
        zWithout,
        flagged,
        threshold,
        released: free,
      });
    }
    if (!d.flagged[j] || free) kept.push(j);
  }
  return { kept, quarantined };
}

/** The utilities restricted to the positions `kept` (v(M) and v(M0) unchanged). */
export function keptUtilities(u: PrivateUtilities, kept: readonly number[]): PrivateUtilities {
  return {
    full: u.full,
    empty: u.empty,
    withOnly: kept.map((j) => u.withOnly[j]!),
    without: kept.map((j) => u.without[j]!),
  };
}
