/**
 * What a coalition of colluding silos can do by reporting jointly. papers/003 §3.2 excludes
 * collusion from its threat model; auditors ask anyway.
 */
import {
  checkScheme,
  checkUtilities,
  type PrivateUtilities,
  type RegisteredScheme as Scheme,
} from '../private.js';
import { checkSilo, fullBox } from './_checks.js';
import { maximize, type Objective, scoreChange } from './_optimizer.js';
import { resolveBoundOptions } from './_options.js';
import type { BoundOptions, Extremum } from './bounds.js';
import { detectReports } from './detection.js';
import { type SingleSiloBounds, singleSiloBounds } from './single-silo.js';

/** What one coalition of colluding silos can do. */
export interface CoalitionBounds {
  /** The colluding silos, ascending. */
  members: number[];
  /** Largest increase of the members' summed score. */
  totalGain: Extremum;
  /** Per member (in `members` order): largest increase of its own score with the others' help. */
  memberGain: Extremum[];
  /** Largest decrease of each non-member's score; null at members' indices. */
  damage: (Extremum | null)[];
}

/**
 * Bounds for every coalition of k silos reporting jointly (each member's reports anywhere in
 * [lo, hi]², non-members honest). Ratio-of-affine schemes (papers/003 Eq. 2 and 4): the 4^k corners
 * of the 2k-dimensional box (exact unless D can reach zero). EE-median: the candidate grid if it
 * has at most `exactBudget` points, else coordinate search (exact: false).
 * @param scheme one of `SCHEMES` (scoring/private.ts).
 * @param utilities the round's honest utilities.
 * @param k the coalition size, 1 ≤ k ≤ N.
 * @param options range and exact budget (the detector options are not used).
 * @throws RangeError/TypeError naming the parameter on bad input or k ∉ [1, N].
 */
export function collusionBounds(
  scheme: Scheme,
  utilities: PrivateUtilities,
  k: number,
  options: BoundOptions = {},
): CoalitionBounds[] {
  checkScheme(scheme);
  const u = checkUtilities(utilities, 'utilities');
  const { n } = u;
  if (!Number.isInteger(k) || k < 1 || k > n)
    throw new RangeError(`k: expected an integer in [1, ${n}], got ${k}`);
  const { range, exactBudget } = resolveBoundOptions(options);
  const out: CoalitionBounds[] = [];
  for (const members of subsets(n, k)) {
    const total = new Float64Array(n);
    for (const m of members) total[m] = 1;
    const objectives: Objective[] = [{ coefficients: total }];
    for (const m of members) objectives.push(scoreChange(n, m, 1));
    const outsiders = Array.from({ length: n }, (_, v) => v).filter((v) => !members.includes(v));
    for (const v of outsiders) objectives.push(scoreChange(n, v, -1));
    const boxes = members.map(() => fullBox(range));
    const results = maximize(scheme, u, members, boxes, objectives, exactBudget);
    const damage: (Extremum | null)[] = new Array(n).fill(null);
    outsiders.forEach((v, q) => {
      damage[v] = results[1 + k + q]!;
    });
    out.push({ members, totalGain: results[0]!, memberGain: results.slice(1, 1 + k), damage });
  }
  return out;
}

/** What one coalition can gain with reports the detector flags for none of its members. */
export interface UndetectedCoalitionBounds {
  members: number[];
  /** Largest increase of the members' summed score, no member flagged. */
  totalGain: Extremum;
  /** Per member: largest increase of its own score, no member flagged. */
  memberGain: Extremum[];
}

/**
 * The coalition's gains restricted to reports the detector (./detection.ts, robust z at
 * `options.threshold`) flags for none of its members, the other silos honest. Unlike one silo's
 * undetected reports, the coalition's are not a box (a member's report moves the median and MAD
 * the others are judged by), so this is the coordinate search of the optimizer under that
 * constraint, started from the honest reports and from each member's best undetected report alone
 * (`singleSiloBounds`): `exact` is false, the values are attained by unflagged reports (lower
 * bounds of the suprema).
 * @param scheme one of `SCHEMES`.
 * @param utilities the round's honest utilities.
 * @param members the colluding silos (distinct, at least 1).
 * @param options range and threshold.
 * @param single `singleSiloBounds(scheme, utilities, options)` when already computed (the starts).
 * @throws RangeError/TypeError naming the parameter on bad input.
 */
export function undetectedCollusionBounds(
  scheme: Scheme,
  utilities: PrivateUtilities,
  members: readonly number[],
  options: BoundOptions = {},
  single?: readonly SingleSiloBounds[],
): UndetectedCoalitionBounds {
  checkScheme(scheme);
  const u = checkUtilities(utilities, 'utilities');
  const { n } = u;
  if (!Array.isArray(members) || members.length === 0)
    throw new RangeError('members: expected at least one silo');
  for (const [q, m] of members.entries()) checkSilo(`members[${q}]`, m, n);
  const sorted = [...new Set(members)].sort((a, b) => a - b);
  if (sorted.length !== members.length) throw new RangeError('members: expected distinct silos');
  const { range, threshold, exactBudget } = resolveBoundOptions(options);
  const feasible = (reports: typeof u) => {
    const { flagged } = detectReports(reports, threshold);
    return sorted.every((m) => !flagged[m]);
  };
  const honestX = sorted.flatMap((m) => [u.withOnly[m]!, u.without[m]!]);
  if (single !== undefined && single.length !== n)
    throw new RangeError(`single: expected ${n} silos' bounds, got ${single.length}`);
  const alone = single ?? singleSiloBounds(scheme, u, { range, threshold, exactBudget });
  const starts: number[][] = [];
  const all = honestX.slice();
  sorted.forEach((m, q) => {
    const r = alone[m]!.selfGainUndetected.reports?.[0];
    if (!r) return;
    const x = honestX.slice();
    x[2 * q] = r.withOnly;
    x[2 * q + 1] = r.without;
    starts.push(x);
    all[2 * q] = r.withOnly;
    all[2 * q + 1] = r.without;
  });
  starts.push(all);
  const total = new Float64Array(n);
  for (const m of sorted) total[m] = 1;
  const objectives: Objective[] = [{ coefficients: total }, ...sorted.map((m) => scoreChange(n, m, 1))];
  const results = maximize(
    scheme,
    u,
    sorted,
    sorted.map(() => fullBox(range)),
    objectives,
    exactBudget,
    { feasible, starts },
  );
  return { members: sorted, totalGain: results[0]!, memberGain: results.slice(1) };
}

/** All k-subsets of 0..n−1 in lexicographic order. */
function subsets(n: number, k: number): number[][] {
  const out: number[][] = [];
  const current: number[] = [];
  const extend = (start: number) => {
    if (current.length === k) {
      out.push(current.slice());
      return;
    }
    for (let i = start; i <= n - (k - current.length); i++) {
      current.push(i);
      extend(i + 1);
      current.pop();
    }
  };
  extend(0);
  return out;
}

/**
 * The number of coalitions of size k among n silos, C(n, k) (0 when k > n).
 * @throws RangeError naming `n` or `k` unless both are non-negative integers.
 */
export function binomial(n: number, k: number): number {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`n: expected a non-negative integer, got ${n}`);
  if (!Number.isInteger(k) || k < 0) throw new RangeError(`k: expected a non-negative integer, got ${k}`);
  if (k > n) return 0;
  let c = 1;
  for (let i = 1; i <= k; i++) c = (c * (n - k + i)) / i;
  return Math.round(c);
}
