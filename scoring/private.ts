/**
 * Private contribution scores under secure aggregation (papers/003 §4).
 *
 * Under SA the server sees only M0 and M; silo i can also evaluate its singleton model
 * M0 + U_i and its leave-one-out model M − U_i (papers/003 Property 4). Every score here is a
 * function of those four kinds of values only:
 *   full     = v(M)            empty   = v(M0)
 *   withOnly = v(M0 + U_i)     without = v(M − U_i)    (one per silo, in silo order)
 *
 * Every scheme is score_i = w_i / D · v(M) with a per-silo weight w_i and D = Σ_j w_j (FP, EE,
 * EE-median: papers/003 Eq. 2 and 4), or score_i = w_i (LOO, IOI: no normalizer). This module is
 * the one owner of the weights, the normalizer and its zero case (Remark 1); the manipulation
 * audit (scoring/manipulation/) calls it rather than computing scores of its own.
 */
import { checkFiniteNumber, checkFiniteVector } from './_checks.js';
import { medianOfOthers } from './_median.js';
import { payoutWeights } from './payout.js';
import { currentPayoutVariant } from './payout-variant.js';

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

/** Utilities that passed `checkUtilities`: finite, copied to Float64Arrays, at least 2 silos. */
export interface CheckedUtilities {
  full: number;
  empty: number;
  withOnly: Float64Array;
  without: Float64Array;
  /** Number of silos N (≥ 2). */
  n: number;
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

/** The published private schemes (the keys of results.json `scores`). */
export type Scheme = 'loo' | 'ioi' | 'fp' | 'ee' | 'eeMedian';

/** Every registered scheme: the published ones and `payout`, the headline's (./payout.ts). */
export type RegisteredScheme = Scheme | 'payout';

/**
 * The published private schemes, in report order: the keys of results.json `scores` (a contract).
 * `payout`, the headline's scheme (./payout.ts), is registered beside them (`ALL_SCHEMES`) and
 * published as the leaderboard's headline and `share`, not as a sixth `scores` key.
 */
export const SCHEMES: readonly Scheme[] = ['loo', 'ioi', 'fp', 'ee', 'eeMedian'];

/** Every registered scheme: `SCHEMES` and the headline's `payout`. */
export const ALL_SCHEMES: readonly RegisteredScheme[] = [...SCHEMES, 'payout'];

/**
 * The margin κ of the normalizer's zero case (issue 32, S1): a ratio scheme falls back as for
 * D = 0 (papers/003 Remark 1) when |D| ≤ κ · Σ_j |w_j|, so a published FP, EE or EE-median score
 * satisfies |score_i| = |w_i| / |D| · |v(M)| ≤ |v(M)| / κ. Chosen with the audit's optimizer
 * (docs/audit.md, "Bounded normalizer"): honest rounds of every run measured keep
 * |D| / Σ|w| ≥ 0.5 for EE and EE-median, while a colluding pair that may push D towards zero is
 * held to |v(M)|/κ = 10·|v(M)|.
 */
export const NORMALIZER_MARGIN = 0.1;

/**
 * The documented range of a published FP, EE or EE-median score: [−|v(M)|/κ, |v(M)|/κ]
 * (`NORMALIZER_MARGIN`). Scores are clamped into it (a no-op but for rounding: the margin alone
 * bounds them).
 */
export function ratioScoreBound(full: number): number {
  return Math.abs(full) / NORMALIZER_MARGIN;
}

/** One scheme on one round: weights, normalizer, which rule made the scores, and the scores. */
export interface SchemeScores {
  /** w_i per silo: the numerators of papers/003 Eq. 2 and 4; the scores themselves for LOO, IOI and payout. */
  weights: Float64Array;
  /** D = Σ_j w_j for FP, EE and EE-median (the denominators of Eq. 2 and 4); 1 for LOO, IOI and payout. */
  normalizer: number;
  /**
   * 'none': score_i = w_i / D · v(M) (w_i for LOO, IOI and payout). 'loo': |D| was within the
   * margin of zero (`NORMALIZER_MARGIN`) and FP fell back to LOO (Remark 1). 'equalShares': |D|
   * was within the margin (for FP, Σ LOO too) and every silo got v(M)/N.
   */
  fallback: 'none' | 'loo' | 'equalShares';
  /** The scores, in silo order. */
  scores: Float64Array;
}

/** The summands of papers/003 Eq. 5 reported by each silo j, before the division by (N−1)². */
export interface EverybodyElseTerms {
  /** v(M) − v(M0 + U_j): silo j's term of β(i) for every i ≠ j. */
  beta: Float64Array;
  /** v(M − U_j) − v(M0): silo j's term of γ(i) for every i ≠ j. */
  gamma: Float64Array;
}

/**
 * Validates private utilities and copies them to Float64Arrays.
 * @param u the utilities.
 * @param name when given, field names in messages are qualified with it (`utilities.without: …`).
 * @throws TypeError for a missing object or field, RangeError for a non-finite value, a length
 *   mismatch or fewer than 2 silos; the message starts with the field's name.
 */
export function checkUtilities(u: PrivateUtilities, name?: string): CheckedUtilities {
  if (u === null || typeof u !== 'object') throw new TypeError(`${name ?? 'utilities'}: expected an object`);
  const field = (f: string) => (name === undefined ? f : `${name}.${f}`);
  const full = checkFiniteNumber(field('full'), u.full);
  const empty = checkFiniteNumber(field('empty'), u.empty);
  const withOnly = checkFiniteVector(field('withOnly'), u.withOnly, undefined);
  if (withOnly.length < 2)
    throw new RangeError(`${field('withOnly')}: expected at least 2 silos, got ${withOnly.length}`);
  const without = checkFiniteVector(field('without'), u.without, withOnly.length);
  return { full, empty, withOnly, without, n: withOnly.length };
}

/**
 * The private utilities of a round whose every coalition value is known: from the table of 2^n
 * values v(S) (index = integer mask, bit i = silo i; v(∅) = table[0], v(N) = table[2^n − 1]),
 * full = v(N), empty = v(∅), withOnly[i] = v({i}), without[i] = v(N ∖ {i}) — the four kinds of
 * values papers/003 §4 lets a server see under secure aggregation, read off a full-visibility game.
 * @param n the number of silos, 2 ≤ n ≤ 30.
 * @param table the 2^n coalition values.
 * @throws RangeError `n:` out of range, `table:` of the wrong length or with a non-finite value;
 *   TypeError `table:` when it is not an array of numbers.
 */
export function utilitiesOfTable(n: number, table: ArrayLike<number>): PrivateUtilities {
  if (!Number.isInteger(n) || n < 2 || n > 30)
    throw new RangeError(`n: expected an integer in [2, 30], got ${n}`);
  const length = (table as ArrayLike<number> | null)?.length;
  if (typeof length === 'number' && length !== 2 ** n)
    throw new RangeError(`table: expected 2^${n} = ${2 ** n} values, got ${length}`);
  const values = checkFiniteVector('table', table, undefined);
  const all = 2 ** n - 1;
  return {
    full: values[all]!,
    empty: values[0]!,
    withOnly: Array.from({ length: n }, (_, i) => values[2 ** i]!),
    without: Array.from({ length: n }, (_, i) => values[all - 2 ** i]!),
  };
}

/**
 * Validates a scheme name.
 * @throws RangeError starting with `scheme:` unless it is one of `ALL_SCHEMES`.
 */
export function checkScheme(scheme: unknown): RegisteredScheme {
  if (typeof scheme !== 'string' || !(ALL_SCHEMES as readonly string[]).includes(scheme))
    throw new RangeError(`scheme: expected one of ${ALL_SCHEMES.join(', ')}, got ${String(scheme)}`);
  return scheme as RegisteredScheme;
}

/** A registered scheme: its weights, and whether its scores divide them by D = Σ_j w_j. */
interface SchemeDefinition {
  /** FP, EE, EE-median: score_i = w_i / D · v(M) (papers/003 Eq. 2 and 4); else score_i = w_i. */
  ratio: boolean;
  weights: (u: CheckedUtilities) => Float64Array;
}

/** The registry of schemes: name → definition (one entry per scheme, no chains on names). */
const REGISTRY: Readonly<Record<RegisteredScheme, SchemeDefinition>> = {
  // Def. 2: LOO(i) = v(M) − v(M − U_i)
  loo: { ratio: false, weights: (u) => u.withOnly.map((_, i) => u.full - u.without[i]!) },
  // Eq. 3, second term: IOI(i) = v(M0 + U_i) − v(M0)
  ioi: { ratio: false, weights: (u) => u.withOnly.map((x) => x - u.empty) },
  // Eq. 3: α(i) = (LOO(i) + IOI(i)) / 2
  fp: {
    ratio: true,
    weights: (u) => u.withOnly.map((x, i) => (u.full - u.without[i]! + (x - u.empty)) / 2),
  },
  ee: { ratio: true, weights: (u) => eeWeights(u) },
  eeMedian: { ratio: true, weights: (u) => eeMedianWeights(u) },
  // The headline (./payout.ts): EE-median's weight gated by the silo's own marginal.
  payout: { ratio: false, weights: (u) => payoutWeights(u, currentPayoutVariant()) },
};

/**
 * The schemes that divide their weights by D = Σ_j w_j, so their scores are shares of v(M)
 * (papers/003 Eq. 2 and 4): FP, EE and EE-median. LOO and IOI are marginals; `payout` is a weight.
 * The one list of the two families (the report's panels read it), read off the registry.
 */
export const RATIO_SCHEMES: readonly Scheme[] = SCHEMES.filter((s) => REGISTRY[s].ratio);

/** FP, EE and EE-median divide their weights by D = Σ_j w_j (papers/003 Eq. 2 and 4); the others do not. */
const dividesByNormalizer = (scheme: RegisteredScheme) => REGISTRY[scheme].ratio;

/**
 * Whether a scheme divides its weights by D = Σ_j w_j (FP, EE, EE-median; papers/003 Eq. 2 and 4).
 * @throws RangeError `scheme:` for an unknown scheme.
 */
export function isRatioScheme(scheme: RegisteredScheme): boolean {
  return dividesByNormalizer(checkScheme(scheme));
}

/**
 * The Eq. 5 summands every silo reports for everybody else (see `EverybodyElseTerms`).
 * @throws RangeError/TypeError naming the field on bad input (see `leaveOneOut`).
 */
export function everybodyElseTerms(u: PrivateUtilities): EverybodyElseTerms {
  return termsOf(checkUtilities(u));
}

/** The Eq. 5 summands of checked utilities (not checked again). */
export function termsOf({ full, empty, withOnly, without, n }: CheckedUtilities): EverybodyElseTerms {
  const beta = new Float64Array(n);
  const gamma = new Float64Array(n);
  for (let j = 0; j < n; j++) {
    beta[j] = full - withOnly[j]!; // reported by silo j: v(M) − v(M0 + U_j)
    gamma[j] = without[j]! - empty; // reported by silo j: v(M − U_j) − v(M0)
  }
  return { beta, gamma };
}

/**
 * Σ x, and whether it counts as zero: |Σ x| ≤ κ · Σ |x| with κ = `NORMALIZER_MARGIN` (issue 32,
 * S1: a D near zero against Σ|w| is treated as D = 0), or Σ |x| = 0.
 */
function sumIsZero(x: Float64Array): { sum: number; zero: boolean } {
  let sum = 0;
  let abs = 0;
  for (const v of x) {
    sum += v;
    abs += Math.abs(v);
  }
  return { sum, zero: abs === 0 || Math.abs(sum) <= NORMALIZER_MARGIN * abs };
}

/**
 * score_i = w_i / Σ w · v(M): the normalization of papers/003 Eq. 2 and Eq. 4, clamped to the
 * documented range ±|v(M)|/κ (`ratioScoreBound`; the margin already bounds it but for rounding).
 */
function rescale(w: Float64Array, sum: number, full: number): Float64Array {
  const bound = ratioScoreBound(full);
  const out = new Float64Array(w.length);
  for (let i = 0; i < w.length; i++) out[i] = Math.min(bound, Math.max(-bound, (w[i]! / sum) * full));
  return out;
}

/** Equal shares v(M)/N: the only efficient, symmetric split when every weight is zero. */
function equalShares(n: number, full: number): Float64Array {
  return new Float64Array(n).fill(full / n);
}

/** Eq. 5: Σ_{j≠i} t_j = Σ_j t_j − t_i, divided by (N−1)²; Eq. 4's numerator (β(i) + γ(i))/2. */
function eeWeights(u: CheckedUtilities): Float64Array {
  const { beta, gamma } = termsOf(u);
  const { n } = u;
  let sumBeta = 0;
  let sumGamma = 0;
  for (let j = 0; j < n; j++) {
    sumBeta += beta[j]!;
    sumGamma += gamma[j]!;
  }
  const d = (n - 1) ** 2;
  const weight = new Float64Array(n);
  for (let i = 0; i < n; i++) weight[i] = ((sumBeta - beta[i]!) / d + (sumGamma - gamma[i]!) / d) / 2;
  return weight;
}

/** §5.3: the mean over j ≠ i in Eq. 5 becomes the median, on the same scale (÷ (N − 1)). */
function eeMedianWeights(u: CheckedUtilities): Float64Array {
  const { beta, gamma } = termsOf(u);
  const { n } = u;
  const weight = new Float64Array(n);
  const medianBeta = medianOfOthers(beta, weight);
  const medianGamma = medianOfOthers(gamma, beta); // β is read; reuse its buffer
  for (let i = 0; i < n; i++) weight[i] = (medianBeta[i]! / (n - 1) + medianGamma[i]! / (n - 1)) / 2;
  return weight;
}

/** The weights w_i of a scheme on checked utilities. */
function weightsOf(scheme: RegisteredScheme, u: CheckedUtilities): Float64Array {
  return Float64Array.from(REGISTRY[scheme].weights(u));
}

/** Scores from weights, with the zero-normalizer fallbacks of Remark 1 (within the margin κ). */
function scoresOf(scheme: RegisteredScheme, u: CheckedUtilities, weights: Float64Array): SchemeScores {
  if (!dividesByNormalizer(scheme))
    return { weights, normalizer: 1, fallback: 'none', scores: weights.slice() };
  const { full, n } = u;
  const { sum, zero } = sumIsZero(weights);
  if (!zero) return { weights, normalizer: sum, fallback: 'none', scores: rescale(weights, sum, full) };
  if (scheme === 'fp') {
    // Remark 1: replace α by LOO (the fallback FP alone has; Σα ≈ 0 says nothing about Σ LOO).
    const loo = weightsOf('loo', u);
    const l = sumIsZero(loo);
    if (!l.zero) return { weights, normalizer: sum, fallback: 'loo', scores: rescale(loo, l.sum, full) };
  }
  return { weights, normalizer: sum, fallback: 'equalShares', scores: equalShares(n, full) };
}

/**
 * One scheme on one round: the weights w_i, the normalizer D, the fallback used and the scores
 * (see `SchemeScores`). The scores equal `leaveOneOut`, `includeOneIn`, `fairPrivate`,
 * `everybodyElse` and `everybodyElse(u, { reduce: 'median' })` bit for bit.
 * @param scheme one of `SCHEMES`.
 * @param utilities the round's utilities.
 * @throws RangeError `scheme:` for an unknown scheme; RangeError/TypeError naming the field
 *   (`utilities.without: …`) on bad utilities.
 */
export function scoreScheme(scheme: RegisteredScheme, utilities: PrivateUtilities): SchemeScores {
  checkScheme(scheme);
  return scoreCheckedScheme(scheme, checkUtilities(utilities, 'utilities'));
}

/**
 * `scoreScheme` without the input checks, for hot loops that checked the utilities once with
 * `checkUtilities` and then change reports in place to other finite values (the manipulation
 * audit's searches). Same numbers as `scoreScheme`.
 * @param scheme one of `SCHEMES` (not checked).
 * @param u utilities as returned by `checkUtilities` (not checked again).
 */
export function scoreCheckedScheme(scheme: RegisteredScheme, u: CheckedUtilities): SchemeScores {
  return scoresOf(scheme, u, weightsOf(scheme, u));
}

/**
 * The weights w_i of a scheme: LOO(i), IOI(i), α(i) (Eq. 3), (β(i) + γ(i))/2 (Eq. 4–5) or its
 * median form (§5.3). Throws like `scoreScheme`.
 */
export function schemeWeights(scheme: RegisteredScheme, utilities: PrivateUtilities): Float64Array {
  return scoreScheme(scheme, utilities).weights;
}

/** The scores of a scheme (see `scoreScheme`). Throws like `scoreScheme`. */
export function schemeScores(scheme: RegisteredScheme, utilities: PrivateUtilities): Float64Array {
  return scoreScheme(scheme, utilities).scores;
}

/**
 * The normalizer D = Σ_j w_j of FP, EE and EE-median (papers/003 Eq. 2 and 4); 1 for LOO and IOI.
 * Under EE (mean) D = (NΔ − A)/(N−1) with Δ = v(M) − v(M0), A = Σ_j α(j). Throws like `scoreScheme`.
 */
export function schemeNormalizer(scheme: RegisteredScheme, utilities: PrivateUtilities): number {
  return scoreScheme(scheme, utilities).normalizer;
}

/**
 * Leave-One-Out: LOO(i) = v(M) − v(M − U_i) (papers/003 Def. 2).
 * @throws RangeError/TypeError naming the field on a length mismatch, a non-finite value or fewer than 2 silos.
 */
export function leaveOneOut(u: PrivateUtilities): Float64Array {
  return weightsOf('loo', checkUtilities(u));
}

/**
 * Include-One-In: IOI(i) = v(M0 + U_i) − v(M0), the second term of papers/003 Eq. 3.
 * @throws RangeError/TypeError naming the field on bad input (see `leaveOneOut`).
 */
export function includeOneIn(u: PrivateUtilities): Float64Array {
  return weightsOf('ioi', checkUtilities(u));
}

/**
 * Fair-Private: FP(i) = α(i) / Σ_j α(j) · v(M), α(i) = (LOO(i) + IOI(i)) / 2
 * (papers/003 Def. 3, Eq. 2–3). When Σ α is zero — within the margin |Σα| ≤ κ·Σ|α|
 * (`NORMALIZER_MARGIN`, issue 32) — α is replaced by LOO (Remark 1 allows LOO or IOI). When Σ LOO is zero
 * too, every silo gets v(M)/N. Scores sum to v(M) (Property 1).
 * @throws RangeError/TypeError naming the field on bad input (see `leaveOneOut`).
 */
export function fairPrivate(u: PrivateUtilities): Float64Array {
  const c = checkUtilities(u);
  return scoresOf('fp', c, weightsOf('fp', c)).scores;
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
  const c = checkUtilities(u);
  const reduce = options.reduce ?? 'mean';
  if (reduce !== 'mean' && reduce !== 'median')
    throw new RangeError(`options.reduce: expected 'mean' or 'median', got ${String(reduce)}`);
  const scheme = reduce === 'mean' ? 'ee' : 'eeMedian';
  return scoresOf(scheme, c, weightsOf(scheme, c)).scores;
}
