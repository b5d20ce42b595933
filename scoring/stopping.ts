/**
 * Stopping rules: when a sampled estimator may stop before its budget is spent. Kept apart from
 * samplers and estimators and composable (`anyOf`); the evaluation budget is always enforced by
 * the estimator itself, whatever the rule says.
 */
import { checkNonNegative, checkPositiveInteger } from './_checks.js';

/** What an estimator shows a stopping rule after each sample. */
export interface StopState {
  /** Samples completed so far (permutations, for the permutation estimators). */
  readonly samples: number;
  /** The running estimate after those samples (do not keep a reference: it is updated). */
  readonly values: Float64Array;
  /** Distinct evaluations spent so far. */
  readonly evaluations: number;
}

/** A stopping rule. `start(n)` returns a fresh check for one run over n players. */
export interface StoppingRule {
  readonly name: string;
  start(n: number): (state: StopState) => boolean;
}

/** Never stops (the budget alone ends the run). */
export const never: StoppingRule = { name: 'never', start: () => () => false };

/** Stops after `samples` samples. Throws RangeError when samples is not a positive integer. */
export function afterSamples(samples: number): StoppingRule {
  checkPositiveInteger('samples', samples);
  return { name: `afterSamples(${samples})`, start: () => (s) => s.samples >= samples };
}

/** Stops as soon as any of the rules says stop. Throws TypeError when given no rule. */
export function anyOf(...rules: StoppingRule[]): StoppingRule {
  if (rules.length === 0) throw new TypeError('rules: expected at least one stopping rule');
  return {
    name: `anyOf(${rules.map((r) => r.name).join(', ')})`,
    start(n) {
      const checks = rules.map((r) => r.start(n));
      // Every check sees every state (stateful rules keep their history), then we combine.
      return (s) => checks.map((c) => c(s)).some(Boolean);
    },
  };
}

/** Options of `gtgConvergence`. */
export interface GtgConvergenceOptions {
  /** Threshold on the mean relative change (papers/000 Eq. 11 uses 0.05). */
  tolerance?: number;
  /** m, the number of preceding estimates compared (the paper does not fix it; default 5). */
  history?: number;
  /**
   * Floor for |φ_i^[r]| in the denominator, so that a player whose estimate is exactly 0 (a
   * null player) contributes |Δ|/floor instead of a division by zero (default 1e-12).
   */
  floor?: number;
}

/**
 * The GTG-Shapley convergence criterion, papers/000 Eq. 11 (Liu et al. 2022):
 *   (1/(n·m)) Σ_{j=1..m} Σ_{i=1..n} |φ_i^[r] − φ_i^[r−j]| / |φ_i^[r]| < tolerance,
 * where φ^[r] is the estimate after r permutations. Not met while r ≤ m.
 * Throws RangeError on a negative tolerance, a history that is not a positive integer or a
 * floor that is not positive.
 */
export function gtgConvergence(options: GtgConvergenceOptions = {}): StoppingRule {
  const tolerance = options.tolerance ?? 0.05;
  const m = options.history ?? 5;
  const floor = options.floor ?? 1e-12;
  checkNonNegative('tolerance', tolerance);
  checkPositiveInteger('history', m);
  if (!(floor > 0) || !Number.isFinite(floor))
    throw new RangeError(`floor: expected a finite number > 0, got ${floor}`);
  return {
    name: `gtgConvergence(${tolerance}, m=${m})`,
    start(n) {
      const past: Float64Array[] = []; // φ^[r−1], …, φ^[r−m], newest first
      return (s) => {
        let met = false;
        if (past.length === m) {
          let sum = 0;
          for (const old of past)
            for (let i = 0; i < n; i++) {
              const now = s.values[i]!;
              sum += Math.abs(now - old[i]!) / Math.max(Math.abs(now), floor);
            }
          met = sum / (n * m) < tolerance;
        }
        past.unshift(s.values.slice());
        if (past.length > m) past.pop();
        return met;
      };
    },
  };
}
