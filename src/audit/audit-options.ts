/**
 * The options of the manipulation audit (./manipulation-audit.ts; defaults in docs/audit.md) and their
 * checked, resolved form.
 */
import { DEFAULT_THRESHOLD } from '../../scoring/manipulation/detection.js';
import type { UtilityRange } from '../../scoring/manipulation/reports.js';

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
  /**
   * The bounded mode (docs/audit.md "Bounded mode"; the service's audit sets it): a round of more
   * than this many reporting silos is audited without the searches whose cost grows fastest with
   * its silo count N — the undetected boxes and every `selfGainUndetected` (a 2000-step walk of
   * the detector per silo and side), EE-median's single-silo bounds and damage bounds (about N⁴
   * score evaluations: the breakpoint grid per silo) — with at most {@link BOUNDED_RANDOM_TRIALS}
   * random misreports per attacker, and without the N × N matrices (influence, sensitivity,
   * damage: N² numbers per scheme); the round lists what it left out in `bounded`. What remains
   * per silo — scores, self-gain bounds of LOO, IOI, FP and EE, closed forms, detection, attacks —
   * costs O(N³) score terms and O(N) bytes. Default: none (every round audited in full).
   */
  maxOptimizedSilos?: number;
}

/** Random misreports per attacker in a bounded round (`AuditOptions.maxOptimizedSilos`). */
export const BOUNDED_RANDOM_TRIALS = 2;

/** Checks `options` and fills in the defaults. @throws TypeError/RangeError naming the option. */
export function resolve(options: AuditOptions) {
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
    maxOptimizedSilos:
      options.maxOptimizedSilos === undefined
        ? Number.POSITIVE_INFINITY
        : positiveInt('maxOptimizedSilos', options.maxOptimizedSilos),
    rounds: options.rounds,
  };
}

export type Resolved = ReturnType<typeof resolve>;
