/**
 * Private contribution scores under secure aggregation (papers/003 §4).
 *
 * Under SA the server sees only M0 and M; silo i can also evaluate its singleton model
 * M0 + U_i and its leave-one-out model M − U_i (papers/003 Property 4). Every score here is a
 * function of those four kinds of values only:
 *   full     = v(M)            empty   = v(M0)
 *   withOnly = v(M0 + U_i)     without = v(M − U_i)    (one per silo, in silo order)
 */
import { checkFiniteNumber, checkFiniteVector } from './_checks.js';

/** The utilities a round of private scoring needs (see the module comment). */
export interface PrivateUtilities {
  /** v(M): utility of the aggregated model. */
  full: number;
  /** v(M0): utility of the round's starting model. */
  empty: number;
  /** v(M0 + U_i) per silo: each silo's singleton model. */
  withOnly: ArrayLike<number>;
  /** v(M − U_i) per silo: the aggregate without each silo. */
  without: ArrayLike<number>;
}

/** Options of `everybodyElse`. */
export interface EverybodyElseOptions {
  /**
   * How the N − 1 reports of the other silos are combined inside β(i) and γ(i):
   * 'mean' is papers/003 Eq. 5; 'median' replaces the mean by the median (same scale: divided
   * by N − 1), the Byzantine-resilient option of papers/003 §5.3. Default 'mean'.
   */
  reduce?: 'mean' | 'median';
}

/** Validates the utilities; returns them as Float64Arrays. Throws RangeError/TypeError naming the field. */
function checkUtilities(u: PrivateUtilities) {
  if (u === null || typeof u !== 'object') throw new TypeError('utilities: expected an object');
  const full = checkFiniteNumber('full', u.full);
  const empty = checkFiniteNumber('empty', u.empty);
  const withOnly = checkFiniteVector('withOnly', u.withOnly, undefined);
  if (withOnly.length < 2)
    throw new RangeError(`withOnly: expected at least 2 silos, got ${withOnly.length}`);
  const without = checkFiniteVector('without', u.without, withOnly.length);
  return { full, empty, withOnly, without, n: withOnly.length };
}

/**
 * Leave-One-Out: LOO(i) = v(M) − v(M − U_i) (papers/003 Def. 2).
 * @throws RangeError/TypeError naming the field on a length mismatch, a non-finite value or fewer than 2 silos.
 */
export function leaveOneOut(u: PrivateUtilities): Float64Array {
  const { full, without } = checkUtilities(u);
  return without.map((w) => full - w);
}

/**
 * Include-One-In: IOI(i) = v(M0 + U_i) − v(M0), the second term of papers/003 Eq. 3.
 * @throws RangeError/TypeError naming the field on bad input (see `leaveOneOut`).
 */
export function includeOneIn(u: PrivateUtilities): Float64Array {
  const { empty, withOnly } = checkUtilities(u);
  return withOnly.map((w) => w - empty);
}

/** Σ x, and whether it is zero up to rounding (|Σ x| ≤ 1e-12 · Σ |x|, or Σ |x| = 0). */
function sumIsZero(x: Float64Array): { sum: number; zero: boolean } {
  let sum = 0;
  let abs = 0;
  for (const v of x) {
    sum += v;
    abs += Math.abs(v);
  }
  return { sum, zero: abs === 0 || Math.abs(sum) <= 1e-12 * abs };
}

/**
 * Rescales weights a so that the scores sum to v(M): score_i = a_i / Σ a · v(M)
 * (the normalization of papers/003 Eq. 2 and Eq. 4). Returns null when Σ a is zero.
 */
function rescale(a: Float64Array, full: number): Float64Array | null {
  const { sum, zero } = sumIsZero(a);
  if (zero) return null;
  return a.map((x) => (x / sum) * full);
}

/** Equal shares v(M)/N: the only efficient, symmetric split when every weight is zero. */
function equalShares(n: number, full: number): Float64Array {
  return new Float64Array(n).fill(full / n);
}

/**
 * Fair-Private: FP(i) = α(i) / Σ_j α(j) · v(M), α(i) = (LOO(i) + IOI(i)) / 2
 * (papers/003 Def. 3, Eq. 2–3). When Σ α = 0, α is replaced by LOO (Remark 1 allows LOO or IOI;
 * Σ α = 0 forces Σ IOI = −Σ LOO, so both are zero together or neither is). When Σ LOO is zero
 * too, every silo gets v(M)/N. Scores sum to v(M) (Property 1).
 * @throws RangeError/TypeError naming the field on bad input (see `leaveOneOut`).
 */
export function fairPrivate(u: PrivateUtilities): Float64Array {
  const { full, empty, withOnly, without, n } = checkUtilities(u);
  const loo = without.map((w) => full - w);
  const ioi = withOnly.map((w) => w - empty);
  const alpha = loo.map((l, i) => (l + ioi[i]!) / 2); // Eq. 3
  return rescale(alpha, full) ?? rescale(loo, full) ?? equalShares(n, full);
}

/** Median of a Float64Array (mean of the two middle values for even length). */
function median(x: Float64Array): number {
  const s = x.slice().sort();
  const m = s.length >>> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * Everybody-Else (papers/003 Def. 4, Eq. 4–5):
 *   β(i) = Σ_{j≠i} [v(M) − v(M0 + U_j)] / (N−1)²,  γ(i) = Σ_{j≠i} [v(M − U_j) − v(M0)] / (N−1)²,
 *   EE(i) = ((β(i) + γ(i))/2) / Σ_j ((β(j) + γ(j))/2) · v(M).
 * Silo i's own reports never enter its own β(i), γ(i) (Property 5). With `reduce: 'median'`
 * the mean over j ≠ i becomes the median, divided by N − 1 (papers/003 §5.3). When the
 * denominator is zero every silo gets v(M)/N. Scores sum to v(M).
 * @throws RangeError/TypeError naming the field on bad input (see `leaveOneOut`), or `options.reduce` unknown.
 */
export function everybodyElse(u: PrivateUtilities, options: EverybodyElseOptions = {}): Float64Array {
  const { full, empty, withOnly, without, n } = checkUtilities(u);
  const reduce = options.reduce ?? 'mean';
  if (reduce !== 'mean' && reduce !== 'median')
    throw new RangeError(`options.reduce: expected 'mean' or 'median', got ${String(reduce)}`);
  const betaTerm = withOnly.map((w) => full - w); // reported by silo j: v(M) − v(M0 + U_j)
  const gammaTerm = without.map((w) => w - empty); // reported by silo j: v(M − U_j) − v(M0)
  const weight = new Float64Array(n);
  if (reduce === 'mean') {
    // Σ_{j≠i} t_j = Σ_j t_j − t_i; dividing by (N−1)² as in Eq. 5.
    const sumBeta = betaTerm.reduce((s, x) => s + x, 0);
    const sumGamma = gammaTerm.reduce((s, x) => s + x, 0);
    const d = (n - 1) ** 2;
    for (let i = 0; i < n; i++)
      weight[i] = ((sumBeta - betaTerm[i]!) / d + (sumGamma - gammaTerm[i]!) / d) / 2;
  } else {
    const others = new Float64Array(n - 1);
    const robust = (t: Float64Array, i: number) => {
      for (let j = 0, k = 0; j < n; j++) if (j !== i) others[k++] = t[j]!;
      return median(others) / (n - 1);
    };
    for (let i = 0; i < n; i++) weight[i] = (robust(betaTerm, i) + robust(gammaTerm, i)) / 2;
  }
  return rescale(weight, full) ?? equalShares(n, full);
}
