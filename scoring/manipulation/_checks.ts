/**
 * Internal: input checks and small helpers of the manipulation audit (messages start with the
 * parameter's name). Never re-exported.
 */
import { checkFiniteNumber } from '../_checks.js';
import type { CheckedUtilities } from '../private.js';
import type { ReportBox, UtilityRange } from './reports.js';

/** A range with finite lo < hi. */
export function checkRange(range: UtilityRange): UtilityRange {
  if (range === null || typeof range !== 'object') throw new TypeError('range: expected { lo, hi }');
  const lo = checkFiniteNumber('range.lo', range.lo);
  const hi = checkFiniteNumber('range.hi', range.hi);
  if (!(lo < hi)) throw new RangeError(`range: expected lo < hi, got [${lo}, ${hi}]`);
  return { lo, hi };
}

/** A silo index in [0, n). */
export function checkSilo(name: string, i: unknown, n: number): number {
  if (typeof i !== 'number' || !Number.isInteger(i) || i < 0 || i >= n)
    throw new RangeError(`${name}: expected a silo index in [0, ${n}), got ${String(i)}`);
  return i;
}

/** A detector threshold: finite and > 0. */
export function checkThreshold(t: unknown): number {
  if (typeof t !== 'number' || !Number.isFinite(t) || t <= 0)
    throw new RangeError(`threshold: expected a finite number > 0, got ${String(t)}`);
  return t;
}

/** An options object (undefined is not accepted: callers default it to {}). */
export function checkOptions(options: unknown): void {
  if (options === null || typeof options !== 'object') throw new TypeError('options: expected an object');
}

/** The utilities with silo i's two reports replaced (the others unchanged). */
export function replaceReports(
  u: CheckedUtilities,
  silo: number,
  withOnly: number,
  without: number,
): CheckedUtilities {
  const w = u.withOnly.slice();
  const wo = u.without.slice();
  w[silo] = withOnly;
  wo[silo] = without;
  return { ...u, withOnly: w, without: wo };
}

/** The box of every report in the range. */
export const fullBox = (range: UtilityRange): ReportBox => ({
  withOnlyLo: range.lo,
  withOnlyHi: range.hi,
  withoutLo: range.lo,
  withoutHi: range.hi,
});
