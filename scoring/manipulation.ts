/**
 * Manipulation audit of the private scores (papers/003 §3.2 threat model, §4 Def. 2–4, Property 5,
 * §5.3 and Table 9): how far can a silo that trains honestly but reports selfishly move the scores?
 *
 * Silo i's only lever is the pair it reports, (v(M0 + U_i), v(M − U_i)) — below `withOnly_i` and
 * `without_i` — each anywhere in the utility's range [lo, hi] (accuracy: [0, 1]); v(M) and v(M0)
 * are computed by the server and fixed. Every scheme is score_i = w_i / D · v(M) with a weight
 * w_i affine (mean schemes) or piecewise affine (median) in the reports, and D = Σ_j w_j (FP, EE,
 * EE-median; papers/003 Eq. 2 and 4) or D = 1 (LOO, IOI: no normalizer):
 *   LOO   w_i = v(M) − without_i                          (Def. 2)
 *   IOI   w_i = withOnly_i − v(M0)                        (Eq. 3, second term)
 *   FP    w_i = α(i) = (LOO(i) + IOI(i)) / 2             (Eq. 2–3)
 *   EE    w_i = (β(i) + γ(i)) / 2 = Σ_{j≠i} t_j / (2(N−1)²),
 *         t_j = [v(M) − withOnly_j] + [without_j − v(M0)] (Eq. 4–5)
 *   EE-median: the sum over j ≠ i replaced by (N−1)·median (papers/003 §5.3).
 *
 * Two identities drive the findings (Δ = v(M) − v(M0), A = Σ_j α(j)):
 *   t_j = 2(Δ − α(j))  — the term silo j gives everybody else is its own α read backwards, and
 *   EE(i) = [(N−1)Δ − A + α(i)] / [(N−1)(NΔ − A)] · v(M)   (mean form)
 *         = Σ_{j≠i} t_j / ((N−1) Σ_j t_j) · v(M).
 * Silo i's reports never enter w_i (Property 5 holds for the weight), but they enter the common
 * normalizer Σ_j t_j = 2(NΔ − A): inflating its own α(i) lowers NΔ − A and raises EE(i) by the
 * ratio of normalizers. When the report range lets NΔ − A reach 0 the self-gain is unbounded.
 *
 * Everything here is pure: plain numbers and typed arrays in and out, randomness from a seeded Rng.
 */
import { checkFiniteNumber, checkFiniteVector } from './_checks.js';
import { spearman } from './metrics.js';
import type { PrivateUtilities } from './private.js';
import { createRng } from './random.js';

/** The private schemes audited (keys as in results.json `scores`). */
export type Scheme = 'loo' | 'ioi' | 'fp' | 'ee' | 'eeMedian';

/** All audited schemes, in report order. */
export const SCHEMES: readonly Scheme[] = ['loo', 'ioi', 'fp', 'ee', 'eeMedian'];

/** The range a reported utility may take, [lo, hi] (accuracy: { lo: 0, hi: 1 }). */
export interface UtilityRange {
  lo: number;
  hi: number;
}

/** Reports of one silo: its claimed v(M0 + U_i) and v(M − U_i). */
export interface SiloReports {
  withOnly: number;
  without: number;
}

/** A box of feasible reports for one attacker: withOnly ∈ [withOnlyLo, withOnlyHi], without ∈ [withoutLo, withoutHi]. */
export interface ReportBox {
  withOnlyLo: number;
  withOnlyHi: number;
  withoutLo: number;
  withoutHi: number;
}

/** How an extremum was found. */
export type ExtremumMethod = 'vertices' | 'breakpoints' | 'coordinate-search';

/**
 * The supremum of an objective over feasible reports. The honest reports are always feasible,
 * so `value` ≥ 0. `unbounded` means the reports can drive the normalizer D to zero (or across it);
 * near that point |score| grows without bound, so `value` is +Infinity and `reports` null.
 */
export interface Extremum {
  /** sup of the objective (score units); +Infinity when unbounded. */
  value: number;
  unbounded: boolean;
  /**
   * true: `value` is the supremum (all vertices of the pieces on which the score is a ratio of
   * affine functions were evaluated). false: a value attained by feasible reports (a lower bound
   * of the supremum) that no change of a single reported coordinate improves.
   */
  exact: boolean;
  method: ExtremumMethod;
  /** Reports attaining `value`, one per attacker (in attacker order); null when unbounded. */
  reports: SiloReports[] | null;
  /** Score evaluations spent. */
  evaluations: number;
}

// ---------------------------------------------------------------------------------------------
// Input checks (message starts with the parameter name)

interface Round {
  full: number;
  empty: number;
  a: Float64Array; // withOnly
  b: Float64Array; // without
  n: number;
}

function checkRound(u: PrivateUtilities): Round {
  if (u === null || typeof u !== 'object') throw new TypeError('utilities: expected an object');
  const full = checkFiniteNumber('utilities.full', u.full);
  const empty = checkFiniteNumber('utilities.empty', u.empty);
  const a = checkFiniteVector('utilities.withOnly', u.withOnly, undefined);
  if (a.length < 2) throw new RangeError(`utilities.withOnly: expected at least 2 silos, got ${a.length}`);
  const b = checkFiniteVector('utilities.without', u.without, a.length);
  return { full, empty, a, b, n: a.length };
}

function checkScheme(scheme: unknown): Scheme {
  if (typeof scheme !== 'string' || !(SCHEMES as readonly string[]).includes(scheme))
    throw new RangeError(`scheme: expected one of ${SCHEMES.join(', ')}, got ${String(scheme)}`);
  return scheme as Scheme;
}

function checkRange(range: UtilityRange): UtilityRange {
  if (range === null || typeof range !== 'object') throw new TypeError('range: expected { lo, hi }');
  const lo = checkFiniteNumber('range.lo', range.lo);
  const hi = checkFiniteNumber('range.hi', range.hi);
  if (!(lo < hi)) throw new RangeError(`range: expected lo < hi, got [${lo}, ${hi}]`);
  return { lo, hi };
}

function checkSilo(name: string, i: unknown, n: number): number {
  if (typeof i !== 'number' || !Number.isInteger(i) || i < 0 || i >= n)
    throw new RangeError(`${name}: expected a silo index in [0, ${n}), got ${String(i)}`);
  return i;
}

function checkThreshold(t: unknown): number {
  if (typeof t !== 'number' || !Number.isFinite(t) || t <= 0)
    throw new RangeError(`threshold: expected a finite number > 0, got ${String(t)}`);
  return t;
}

// ---------------------------------------------------------------------------------------------
// Weights and scores

const isRatio = (s: Scheme) => s === 'fp' || s === 'ee' || s === 'eeMedian';

/** Σ x and whether it is zero up to rounding — the same test as scoring/private.ts. */
function sumIsZero(x: Float64Array): { sum: number; zero: boolean } {
  let sum = 0;
  let abs = 0;
  for (const v of x) {
    sum += v;
    abs += Math.abs(v);
  }
  return { sum, zero: abs === 0 || Math.abs(sum) <= 1e-12 * abs };
}

/** Scratch buffers for the median weights. */
interface Scratch {
  order: Int32Array;
  pos: Int32Array;
  beta: Float64Array;
  gamma: Float64Array;
  mb: Float64Array;
  mg: Float64Array;
}

const makeScratch = (n: number): Scratch => ({
  order: new Int32Array(n),
  pos: new Int32Array(n),
  beta: new Float64Array(n),
  gamma: new Float64Array(n),
  mb: new Float64Array(n),
  mg: new Float64Array(n),
});

/** Sorts the indices 0..n−1 into `order` by (t value, index) — insertion sort, n is tens at most — and fills `pos`. */
function sortIndices(t: Float64Array, order: number[] | Int32Array, pos: Int32Array): void {
  const n = t.length;
  for (let k = 0; k < n; k++) {
    let q = k;
    while (q > 0 && t[order[q - 1]!]! > t[k]!) {
      order[q] = order[q - 1]!;
      q--;
    }
    order[q] = k;
  }
  for (let p = 0; p < n; p++) pos[order[p]!] = p;
}

/**
 * For each silo i, the median of the values of the other N−1 silos (papers/003 §5.3's robust EE):
 * the others' q-th smallest is order[q] if q < pos[i], else order[q + 1]. (Hot path: no closures.)
 */
function medianOfOthers(
  t: Float64Array,
  order: number[] | Int32Array,
  pos: Int32Array,
  out: Float64Array,
): void {
  const n = t.length;
  sortIndices(t, order, pos);
  const m = n - 1;
  for (let i = 0; i < n; i++) {
    const p = pos[i]!;
    if (m % 2 === 1) {
      const q = (m - 1) / 2;
      out[i] = t[order[q < p ? q : q + 1]!]!;
    } else {
      const q1 = m / 2 - 1;
      const q2 = m / 2;
      out[i] = (t[order[q1 < p ? q1 : q1 + 1]!]! + t[order[q2 < p ? q2 : q2 + 1]!]!) / 2;
    }
  }
}

/**
 * The owners of each silo's median-of-others (ties broken by silo index): calls visit(i, owner,
 * share) for the one (share 1) or two (share 1/2) silos whose values form the median.
 */
function medianOwners(t: Float64Array, visit: (i: number, owner: number, share: number) => void): void {
  const n = t.length;
  const order = new Int32Array(n);
  const pos = new Int32Array(n);
  sortIndices(t, order, pos);
  const m = n - 1;
  const at = (q: number, p: number) => order[q < p ? q : q + 1]!;
  for (let i = 0; i < n; i++) {
    const p = pos[i]!;
    if (m % 2 === 1) visit(i, at((m - 1) / 2, p), 1);
    else {
      visit(i, at(m / 2 - 1, p), 0.5);
      visit(i, at(m / 2, p), 0.5);
    }
  }
}

/** Unnormalized weights w (see the module comment) into `out`. */
function weightsInto(
  scheme: Scheme,
  r: Round,
  a: Float64Array,
  b: Float64Array,
  out: Float64Array,
  s: Scratch,
): Float64Array {
  const { full, empty, n } = r;
  switch (scheme) {
    case 'loo':
      for (let i = 0; i < n; i++) out[i] = full - b[i]!; // Def. 2
      break;
    case 'ioi':
      for (let i = 0; i < n; i++) out[i] = a[i]! - empty; // Eq. 3, second term
      break;
    case 'fp':
      for (let i = 0; i < n; i++) out[i] = (full - b[i]! + (a[i]! - empty)) / 2; // Eq. 3
      break;
    case 'ee': {
      let total = 0;
      for (let j = 0; j < n; j++) total += full - a[j]! + (b[j]! - empty);
      const d = 2 * (n - 1) ** 2; // Eq. 5: (β + γ)/2 with the (N−1)² of both
      for (let i = 0; i < n; i++) out[i] = (total - (full - a[i]! + (b[i]! - empty))) / d;
      break;
    }
    case 'eeMedian': {
      for (let j = 0; j < n; j++) {
        s.beta[j] = full - a[j]!;
        s.gamma[j] = b[j]! - empty;
      }
      medianOfOthers(s.beta, s.order, s.pos, s.mb);
      medianOfOthers(s.gamma, s.order, s.pos, s.mg);
      for (let i = 0; i < n; i++) out[i] = (s.mb[i]! + s.mg[i]!) / (2 * (n - 1));
      break;
    }
  }
  return out;
}

/**
 * Scores from weights, with the same fallbacks as scoring/private.ts (FP: α → LOO → equal
 * shares when the sum is zero; EE: equal shares).
 */
function scoresFromWeights(scheme: Scheme, r: Round, b: Float64Array, w: Float64Array, out: Float64Array) {
  if (!isRatio(scheme)) {
    out.set(w);
    return out;
  }
  const { sum, zero } = sumIsZero(w);
  if (!zero) {
    for (let i = 0; i < r.n; i++) out[i] = (w[i]! / sum) * r.full;
    return out;
  }
  if (scheme === 'fp') {
    const loo = b.map((x) => r.full - x);
    const l = sumIsZero(loo);
    if (!l.zero) {
      for (let i = 0; i < r.n; i++) out[i] = (loo[i]! / l.sum) * r.full;
      return out;
    }
  }
  out.fill(r.full / r.n);
  return out;
}

/**
 * The unnormalized weights w_i of a scheme (the numerators of papers/003 Eq. 2 and 4; the scores
 * themselves for LOO and IOI). See the module comment for each scheme's w.
 * @throws RangeError/TypeError naming the parameter on an unknown scheme or bad utilities.
 */
export function schemeWeights(scheme: Scheme, utilities: PrivateUtilities): Float64Array {
  checkScheme(scheme);
  const r = checkRound(utilities);
  return weightsInto(scheme, r, r.a, r.b, new Float64Array(r.n), makeScratch(r.n));
}

/**
 * The scores of a scheme: w_i / Σ_j w_j · v(M) for FP, EE, EE-median, w_i for LOO and IOI — equal
 * to scoring/private.ts's `leaveOneOut`, `includeOneIn`, `fairPrivate`, `everybodyElse` (tested).
 * @throws RangeError/TypeError naming the parameter on an unknown scheme or bad utilities.
 */
export function schemeScores(scheme: Scheme, utilities: PrivateUtilities): Float64Array {
  checkScheme(scheme);
  const r = checkRound(utilities);
  const w = weightsInto(scheme, r, r.a, r.b, new Float64Array(r.n), makeScratch(r.n));
  return scoresFromWeights(scheme, r, r.b, w, new Float64Array(r.n));
}

/**
 * The normalizer D = Σ_j w_j of FP, EE and EE-median (papers/003 Eq. 2 and 4); 1 for LOO and IOI.
 * Under EE (mean) D = Σ_j t_j / (2(N−1)) = (NΔ − A)/(N−1).
 * @throws RangeError/TypeError naming the parameter on an unknown scheme or bad utilities.
 */
export function schemeNormalizer(scheme: Scheme, utilities: PrivateUtilities): number {
  checkScheme(scheme);
  if (!isRatio(scheme)) {
    checkRound(utilities);
    return 1;
  }
  return schemeWeights(scheme, utilities).reduce((s, x) => s + x, 0);
}

// ---------------------------------------------------------------------------------------------
// Influence and sensitivity

/**
 * Per scored silo i and reporter j: the contribution c_ij of j's reports to w_i, such that
 * w_i = Σ_j c_ij, plus for each i the reporters that structurally determine w_i.
 */
function contributions(scheme: Scheme, r: Round): { c: Float64Array[]; owners: boolean[][] } {
  const { n, full, empty, a, b } = r;
  const c = Array.from({ length: n }, () => new Float64Array(n));
  const owners = Array.from({ length: n }, () => new Array<boolean>(n).fill(false));
  const w = weightsInto(scheme, r, a, b, new Float64Array(n), makeScratch(n));
  if (scheme === 'loo' || scheme === 'ioi' || scheme === 'fp') {
    for (let i = 0; i < n; i++) {
      c[i]![i] = w[i]!;
      owners[i]![i] = true;
    }
  } else if (scheme === 'ee') {
    const d = 2 * (n - 1) ** 2;
    for (let i = 0; i < n; i++)
      for (let j = 0; j < n; j++)
        if (j !== i) {
          c[i]![j] = (full - a[j]! + (b[j]! - empty)) / d; // t_j / (2(N−1)²), Eq. 5
          owners[i]![j] = true;
        }
  } else {
    const beta = a.map((x) => full - x);
    const gamma = b.map((x) => x - empty);
    const scale = 2 * (n - 1);
    for (const t of [beta, gamma])
      medianOwners(t, (i, o, share) => {
        c[i]![o] = c[i]![o]! + (share * t[o]!) / scale;
        owners[i]![o] = true;
      });
  }
  return { c, owners };
}

/**
 * Influence matrix (papers/003 Table 9): row i (scored silo), column j (reporting silo) is the
 * share of silo i's weight w_i that silo j's reports determine, |c_ij| / Σ_k |c_ik|, where
 * w_i = Σ_j c_ij. Rows sum to 1. (Table 9 prints the transpose: its columns sum to 1.)
 *
 * The normalizer is not counted, for every scheme alike: w_i is the score before the common
 * rescaling · v(M)/Σ_j w_j, which every silo's reports enter (see `sensitivityMatrix` for the
 * local effect including it). Hence:
 * - LOO, IOI, FP: the identity (silo i alone determines w_i);
 * - EE: zero diagonal, c_ij = t_j / (2(N−1)²) for j ≠ i — the paper's "to the extent of
 *   (v(M) − v(M0+U_j)) + (v(M − U_j) − v(M0))";
 * - EE-median: the one or two reporters whose β-term or γ-term is the median of the others
 *   (ties broken by silo index) share w_i; everyone else has influence 0 at these reports.
 * A row whose contributions are all zero is split equally among the reporters that determine w_i.
 * @throws RangeError/TypeError naming the parameter on an unknown scheme or bad utilities.
 */
export function influenceMatrix(scheme: Scheme, utilities: PrivateUtilities): Float64Array[] {
  checkScheme(scheme);
  const r = checkRound(utilities);
  const { c, owners } = contributions(scheme, r);
  return c.map((row, i) => {
    const total = row.reduce((s, x) => s + Math.abs(x), 0);
    if (total > 0) return row.map((x) => Math.abs(x) / total);
    const own = owners[i]!;
    const count = own.filter(Boolean).length;
    return Float64Array.from(own, (o) => (o ? 1 / count : 0));
  });
}

/**
 * Jacobian of the weights: dw[i][2j] = ∂w_i/∂withOnly_j, dw[i][2j+1] = ∂w_i/∂without_j
 * (right derivatives for EE-median, whose medians are piecewise linear).
 */
function weightJacobian(scheme: Scheme, r: Round): Float64Array[] {
  const { n } = r;
  const dw = Array.from({ length: n }, () => new Float64Array(2 * n));
  for (let i = 0; i < n; i++) {
    const row = dw[i]!;
    if (scheme === 'loo') row[2 * i + 1] = -1;
    else if (scheme === 'ioi') row[2 * i] = 1;
    else if (scheme === 'fp') {
      row[2 * i] = 0.5;
      row[2 * i + 1] = -0.5;
    } else if (scheme === 'ee') {
      const d = 2 * (n - 1) ** 2;
      for (let j = 0; j < n; j++)
        if (j !== i) {
          row[2 * j] = -1 / d;
          row[2 * j + 1] = 1 / d;
        }
    }
  }
  if (scheme === 'eeMedian') {
    const beta = r.a.map((x) => r.full - x);
    const gamma = r.b.map((x) => x - r.empty);
    const scale = 2 * (n - 1);
    medianOwners(beta, (i, o, share) => {
      dw[i]![2 * o] = dw[i]![2 * o]! - share / scale;
    });
    medianOwners(gamma, (i, o, share) => {
      dw[i]![2 * o + 1] = dw[i]![2 * o + 1]! + share / scale;
    });
  }
  return dw;
}

/**
 * Local sensitivity of the scores to the reports, normalizer included:
 * J[i][j] = |∂score_i/∂withOnly_j| + |∂score_i/∂without_j| with
 * ∂score_i/∂x = v(M) (∂w_i/∂x · D − w_i ∂D/∂x) / D² (ratio schemes; D = Σ_k w_k), ∂w_i/∂x for
 * LOO and IOI. Rows are normalized to sum to 1 (a row of zeros stays zero). Unlike `influenceMatrix`,
 * EE's diagonal is not zero: silo i's reports move its score through D. Right derivatives for
 * EE-median; at D = 0 the row is NaN (the score is not differentiable there).
 * @throws RangeError/TypeError naming the parameter on an unknown scheme or bad utilities.
 */
export function sensitivityMatrix(scheme: Scheme, utilities: PrivateUtilities): Float64Array[] {
  checkScheme(scheme);
  const r = checkRound(utilities);
  const { n } = r;
  const dw = weightJacobian(scheme, r);
  const ds = dw.map((row) => row.slice());
  if (isRatio(scheme)) {
    const w = weightsInto(scheme, r, r.a, r.b, new Float64Array(n), makeScratch(n));
    const d = w.reduce((s, x) => s + x, 0);
    const dD = new Float64Array(2 * n);
    for (const row of dw) for (let x = 0; x < 2 * n; x++) dD[x] = dD[x]! + row[x]!;
    for (let i = 0; i < n; i++)
      for (let x = 0; x < 2 * n; x++) ds[i]![x] = (r.full * (dw[i]![x]! * d - w[i]! * dD[x]!)) / (d * d);
  }
  return ds.map((row) => {
    const out = new Float64Array(n);
    for (let j = 0; j < n; j++) out[j] = Math.abs(row[2 * j]!) + Math.abs(row[2 * j + 1]!);
    const total = out.reduce((s, x) => s + x, 0);
    if (total > 0) for (let j = 0; j < n; j++) out[j] = out[j]! / total;
    else if (Number.isNaN(total)) out.fill(Number.NaN);
    return out;
  });
}

// ---------------------------------------------------------------------------------------------
// Closed forms

/** A closed-form supremum: +Infinity when the normalizer can reach zero. */
export interface ClosedForm {
  value: number;
  unbounded: boolean;
}

/**
 * LOO self-gain: LOO(i) = v(M) − without_i is largest at without_i = lo, so the gain over the
 * honest report is max(0, without_i − lo) (papers/003 Def. 2).
 * @throws RangeError/TypeError naming the parameter on bad input.
 */
export function looSelfGain(utilities: PrivateUtilities, silo: number, range: UtilityRange): ClosedForm {
  const r = checkRound(utilities);
  checkSilo('silo', silo, r.n);
  const { lo } = checkRange(range);
  return { value: Math.max(0, r.b[silo]! - lo), unbounded: false };
}

/**
 * IOI self-gain: IOI(i) = withOnly_i − v(M0) is largest at withOnly_i = hi: max(0, hi − withOnly_i).
 * @throws RangeError/TypeError naming the parameter on bad input.
 */
export function ioiSelfGain(utilities: PrivateUtilities, silo: number, range: UtilityRange): ClosedForm {
  const r = checkRound(utilities);
  checkSilo('silo', silo, r.n);
  const { hi } = checkRange(range);
  return { value: Math.max(0, hi - r.a[silo]!), unbounded: false };
}

/**
 * FP self-gain (papers/003 Eq. 2–3). With R = Σ_{j≠i} α(j) fixed, FP(i) = v(M) α/(α + R) is
 * monotone in α = α(i) on each side of the pole α = −R, and α ranges over
 * [(v(M) − hi + lo − v(M0))/2, (v(M) − lo + hi − v(M0))/2]. If α + R can reach 0 on that interval
 * the gain is unbounded; otherwise it is max(0, max over the two ends − FP_honest(i)).
 * @throws RangeError/TypeError naming the parameter on bad input.
 */
export function fpSelfGain(utilities: PrivateUtilities, silo: number, range: UtilityRange): ClosedForm {
  const r = checkRound(utilities);
  checkSilo('silo', silo, r.n);
  const { lo, hi } = checkRange(range);
  const alpha = weightsInto('fp', r, r.a, r.b, new Float64Array(r.n), makeScratch(r.n));
  const rest = alpha.reduce((s, x) => s + x, 0) - alpha[silo]!;
  const aMin = (r.full - hi + (lo - r.empty)) / 2;
  const aMax = (r.full - lo + (hi - r.empty)) / 2;
  if (aMin + rest <= 0 && aMax + rest >= 0) return { value: Number.POSITIVE_INFINITY, unbounded: true };
  const honest = scoresFromWeights('fp', r, r.b, alpha, new Float64Array(r.n))[silo]!;
  const best = Math.max((r.full * aMin) / (aMin + rest), (r.full * aMax) / (aMax + rest));
  return { value: Math.max(0, best - honest), unbounded: false };
}

/**
 * EE (mean) self-gain through the normalizer. EE(i) = T₋ᵢ / ((N−1) T) · v(M) with
 * T₋ᵢ = Σ_{j≠i} t_j fixed and T = T₋ᵢ + t_i, t_i = [v(M) − withOnly_i] + [without_i − v(M0)]
 * ∈ [Δ − (hi − lo), Δ + (hi − lo)] (papers/003 Eq. 4–5). If T can reach 0 the gain is unbounded;
 * otherwise max(0, max over the two ends of t_i − EE_honest(i)). Own reports never enter w_i,
 * only T: EE'(i) / EE(i) = T / T'.
 * @throws RangeError/TypeError naming the parameter on bad input.
 */
export function eeSelfGain(utilities: PrivateUtilities, silo: number, range: UtilityRange): ClosedForm {
  const r = checkRound(utilities);
  checkSilo('silo', silo, r.n);
  const { lo, hi } = checkRange(range);
  const t = r.a.map((x, j) => r.full - x + (r.b[j]! - r.empty));
  const rest = t.reduce((s, x) => s + x, 0) - t[silo]!;
  const delta = r.full - r.empty;
  const tMin = delta - (hi - lo);
  const tMax = delta + (hi - lo);
  if (rest + tMin <= 0 && rest + tMax >= 0) return { value: Number.POSITIVE_INFINITY, unbounded: true };
  const w = weightsInto('ee', r, r.a, r.b, new Float64Array(r.n), makeScratch(r.n));
  const honest = scoresFromWeights('ee', r, r.b, w, new Float64Array(r.n))[silo]!;
  const at = (ti: number) => (rest / ((r.n - 1) * (rest + ti))) * r.full;
  return { value: Math.max(0, Math.max(at(tMin), at(tMax)) - honest), unbounded: false };
}

/**
 * An upper bound on the damage one silo can do to another under EE-median, from the spread of the
 * honest reports alone. For every scored silo k ≠ attacker, the median of the N−1 values
 * {β_j : j ≠ k} holds one free value (the attacker's) and N−2 honest ones h_(1) ≤ … ≤ h_(N−2);
 * a single value can move the median only between the neighbouring order statistics:
 * [h_(m), h_(m+1)] for N−1 = 2m+1 values, [(h_(m−1)+h_(m))/2, (h_(m)+h_(m+1))/2] for N−1 = 2m
 * (computed by putting the free value at ∓∞). Same for γ. This gives intervals for every w_k and,
 * with the attacker's fixed w, for D = Σ_k w_k; then
 *   damage ≤ EEmed_honest(victim) − min{ v(M) w / D : w ∈ [w_victim], D ∈ [D] }.
 * Infinity when the interval of D contains 0 or N < 4 (a median of 2 values moves freely).
 * @throws RangeError/TypeError naming the parameter on bad input or attacker = victim.
 */
export function eeMedianDamageBound(utilities: PrivateUtilities, attacker: number, victim: number): number {
  const r = checkRound(utilities);
  checkSilo('attacker', attacker, r.n);
  checkSilo('victim', victim, r.n);
  if (attacker === victim) throw new RangeError('victim: expected a silo other than the attacker');
  const { n } = r;
  if (n < 4) return Number.POSITIVE_INFINITY;
  const s = makeScratch(n);
  const wAt = (a: number, b: number) => {
    const aa = r.a.slice();
    const bb = r.b.slice();
    aa[attacker] = a;
    bb[attacker] = b;
    return weightsInto('eeMedian', r, aa, bb, new Float64Array(n), s);
  };
  // β = v(M) − withOnly: withOnly = +∞ puts β at −∞; γ = without − v(M0): without = −∞ puts γ at −∞.
  const low = wAt(Number.MAX_VALUE / 4, -Number.MAX_VALUE / 4);
  const high = wAt(-Number.MAX_VALUE / 4, Number.MAX_VALUE / 4);
  const honest = weightsInto('eeMedian', r, r.a, r.b, new Float64Array(n), s);
  let dLo = honest[attacker]!;
  let dHi = honest[attacker]!;
  for (let k = 0; k < n; k++)
    if (k !== attacker) {
      dLo += Math.min(low[k]!, high[k]!);
      dHi += Math.max(low[k]!, high[k]!);
    }
  if (!Number.isFinite(dLo) || !Number.isFinite(dHi) || (dLo <= 0 && dHi >= 0))
    return Number.POSITIVE_INFINITY;
  const wLo = Math.min(low[victim]!, high[victim]!);
  const wHi = Math.max(low[victim]!, high[victim]!);
  let min = Number.POSITIVE_INFINITY;
  for (const w of [wLo, wHi]) for (const d of [dLo, dHi]) min = Math.min(min, (r.full * w) / d);
  const honestScore = scoresFromWeights('eeMedian', r, r.b, honest, new Float64Array(n))[victim]!;
  return honestScore - min;
}

// ---------------------------------------------------------------------------------------------
// Optimization over report boxes

/** An objective: maximize Σ_t coef[t] · (score_t(reports) − score_t(honest)). */
interface Objective {
  coef: Float64Array;
}

interface SearchOptions {
  /** Largest vertex grid enumerated exactly; beyond it, coordinate search. */
  exactBudget: number;
}

class Evaluator {
  readonly a: Float64Array;
  readonly b: Float64Array;
  readonly w: Float64Array;
  readonly s: Float64Array;
  readonly honest: Float64Array;
  readonly scratch: Scratch;
  evaluations = 0;
  minD = Number.POSITIVE_INFINITY;
  maxD = Number.NEGATIVE_INFINITY;
  constructor(
    readonly scheme: Scheme,
    readonly r: Round,
  ) {
    this.a = r.a.slice();
    this.b = r.b.slice();
    this.w = new Float64Array(r.n);
    this.s = new Float64Array(r.n);
    this.scratch = makeScratch(r.n);
    weightsInto(scheme, r, r.a, r.b, this.w, this.scratch);
    this.honest = scoresFromWeights(scheme, r, r.b, this.w, new Float64Array(r.n));
  }
  /** Scores at the current reports (this.a, this.b); records the range of D. */
  eval(): Float64Array {
    this.evaluations++;
    weightsInto(this.scheme, this.r, this.a, this.b, this.w, this.scratch);
    if (isRatio(this.scheme)) {
      const { sum, zero } = sumIsZero(this.w);
      const d = zero ? 0 : sum;
      if (d < this.minD) this.minD = d;
      if (d > this.maxD) this.maxD = d;
    }
    return scoresFromWeights(this.scheme, this.r, this.b, this.w, this.s);
  }
  value(o: Objective, s: Float64Array): number {
    let v = 0;
    for (let t = 0; t < s.length; t++) if (o.coef[t] !== 0) v += o.coef[t]! * (s[t]! - this.honest[t]!);
    return v;
  }
  /** True when the evaluated reports put D on both sides of zero, or at zero. */
  crossed(): boolean {
    return isRatio(this.scheme) && this.minD <= 0 && this.maxD >= 0;
  }
}

const uniqueSorted = (xs: number[]) => [...new Set(xs)].sort((x, y) => x - y);

/**
 * Candidate values of each coordinate: the box ends, plus (EE-median) the other silos' values of
 * the same report inside the box, where the median's order changes. For k = 1 the product of the
 * candidates contains every vertex of the pieces on which the score is a ratio of affine functions;
 * for k > 1 with a common box too (a vertex of the arrangement {x_m = h_j}, {x_m = x_m'} assigns
 * every coordinate a candidate value).
 */
function candidates(scheme: Scheme, r: Round, attackers: number[], boxes: ReportBox[]): number[][] {
  const out: number[][] = [];
  const others = (v: Float64Array) => Array.from(v).filter((_, j) => !attackers.includes(j));
  for (let m = 0; m < attackers.length; m++) {
    const box = boxes[m]!;
    const ca = [box.withOnlyLo, box.withOnlyHi];
    const cb = [box.withoutLo, box.withoutHi];
    if (scheme === 'eeMedian') {
      for (const x of others(r.a)) if (x > box.withOnlyLo && x < box.withOnlyHi) ca.push(x);
      for (const x of others(r.b)) if (x > box.withoutLo && x < box.withoutHi) cb.push(x);
      for (const bx of boxes) {
        for (const x of [bx.withOnlyLo, bx.withOnlyHi])
          if (x > box.withOnlyLo && x < box.withOnlyHi) ca.push(x);
        for (const x of [bx.withoutLo, bx.withoutHi]) if (x > box.withoutLo && x < box.withoutHi) cb.push(x);
      }
    }
    out.push(uniqueSorted(ca), uniqueSorted(cb));
  }
  return out;
}

/**
 * Maximizes every objective over the product of the attackers' boxes (the other silos report
 * honestly). Exact enumeration of the candidate grid when it has at most `exactBudget` points,
 * otherwise a coordinate search (see `Extremum.exact`).
 */
function maximize(
  scheme: Scheme,
  r: Round,
  attackers: number[],
  boxes: ReportBox[],
  objectives: Objective[],
  opts: SearchOptions,
): Extremum[] {
  const ev = new Evaluator(scheme, r);
  const cand = candidates(scheme, r, attackers, boxes);
  const dims = cand.length;
  const points = cand.reduce((p, c) => p * c.length, 1);
  const best = objectives.map(() => ({ value: 0, x: null as number[] | null }));
  const set = (x: number[]) => {
    for (let m = 0; m < attackers.length; m++) {
      ev.a[attackers[m]!] = x[2 * m]!;
      ev.b[attackers[m]!] = x[2 * m + 1]!;
    }
  };
  const honestX = attackers.flatMap((i) => [r.a[i]!, r.b[i]!]);
  const offer = (x: number[]) => {
    set(x);
    const s = ev.eval();
    objectives.forEach((o, k) => {
      const v = ev.value(o, s);
      if (v > best[k]!.value) best[k] = { value: v, x: x.slice() };
    });
  };
  offer(honestX); // honest reports: value 0
  const exact = points <= opts.exactBudget;
  if (exact) {
    const idx = new Array<number>(dims).fill(0);
    const x = cand.map((c) => c[0]!);
    for (let p = 0; p < points; p++) {
      offer(x);
      for (let d = 0; d < dims; d++) {
        idx[d] = idx[d]! + 1;
        if (idx[d]! < cand[d]!.length) {
          x[d] = cand[d]![idx[d]!]!;
          break;
        }
        idx[d] = 0;
        x[d] = cand[d]![0]!;
      }
    }
  } else {
    // Coordinate search per objective from the honest point and the best box corner. Along one
    // coordinate the score is a ratio of piecewise-affine functions whose pieces end at the box
    // ends and the other silos' current values, so each line step is exact on its line.
    const corners: number[][] = [];
    if (dims <= 12) {
      for (let mask = 0; mask < 1 << dims; mask++)
        corners.push(cand.map((c, d) => ((mask >> d) & 1 ? c[c.length - 1]! : c[0]!)));
    }
    objectives.forEach((o, k) => {
      const starts = [honestX];
      let bestCorner: number[] | null = null;
      let bestCornerValue = Number.NEGATIVE_INFINITY;
      for (const c of corners) {
        set(c);
        const v = ev.value(o, ev.eval());
        if (v > bestCornerValue) {
          bestCornerValue = v;
          bestCorner = c;
        }
      }
      if (bestCorner) starts.push(bestCorner);
      for (const start of starts) {
        const x = start.slice();
        set(x);
        let cur = ev.value(o, ev.eval());
        for (let sweep = 0; sweep < 100; sweep++) {
          let improved = false;
          for (let d = 0; d < dims; d++) {
            const m = d >> 1;
            const box = boxes[m]!;
            const [lo, hi] = d % 2 === 0 ? [box.withOnlyLo, box.withOnlyHi] : [box.withoutLo, box.withoutHi];
            const line = [lo, hi];
            const vals = d % 2 === 0 ? ev.a : ev.b;
            for (let j = 0; j < r.n; j++)
              if (j !== attackers[m] && vals[j]! > lo && vals[j]! < hi) line.push(vals[j]!);
            for (const v of line) {
              const keep = x[d]!;
              x[d] = v;
              set(x);
              const val = ev.value(o, ev.eval());
              if (val > cur + 1e-15 * Math.max(1, Math.abs(cur))) {
                cur = val;
                improved = true;
              } else x[d] = keep;
            }
            set(x);
          }
          if (!improved) break;
        }
        if (cur > best[k]!.value) best[k] = { value: cur, x: x.slice() };
      }
    });
  }
  const unbounded = ev.crossed();
  const reportsOf = (x: number[]) =>
    attackers.map((_, m) => ({ withOnly: x[2 * m]!, without: x[2 * m + 1]! }));
  const method: ExtremumMethod = !exact
    ? 'coordinate-search'
    : scheme === 'eeMedian'
      ? 'breakpoints'
      : 'vertices';
  return best.map((b) => ({
    value: unbounded ? Number.POSITIVE_INFINITY : b.value,
    unbounded,
    exact,
    method,
    reports: unbounded ? null : reportsOf(b.x ?? honestX),
    evaluations: ev.evaluations,
  }));
}

// ---------------------------------------------------------------------------------------------
// Detection

/** Iglewicz–Hoaglin constant: Φ⁻¹(0.75), so 0.6745·(x − med)/MAD ≈ (x − μ)/σ for normal data. */
const IH = 0.6745;
/** √(π/2): MeanAD of a normal is σ·√(2/π); used when MAD = 0 (the IBM convention). */
const MEAN_AD = 1.253314;

function median(x: ArrayLike<number>): number {
  const s = Float64Array.from(x).sort();
  const m = s.length >>> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * Modified z-scores (Iglewicz & Hoaglin 1993): z_j = 0.6745 (x_j − median) / MAD. When MAD = 0,
 * z_j = (x_j − median) / (1.253314 · MeanAD); when that is 0 too (all values equal), z = 0.
 * @throws RangeError/TypeError naming `x` on an empty or non-finite input.
 */
export function robustZ(x: ArrayLike<number>): Float64Array {
  const v = checkFiniteVector('x', x, undefined);
  if (v.length === 0) throw new RangeError('x: expected at least one value');
  const med = median(v);
  const dev = v.map((y) => Math.abs(y - med));
  const mad = median(dev);
  if (mad > 0) return v.map((y) => (IH * (y - med)) / mad);
  const meanAd = dev.reduce((s, y) => s + y, 0) / dev.length;
  if (meanAd > 0) return v.map((y) => (y - med) / (MEAN_AD * meanAd));
  return new Float64Array(v.length);
}

/** Robust z-scores of the reported marginals and the silos flagged. */
export interface Detection {
  /** z of IOI_j = withOnly_j − v(M0). */
  zWithOnly: Float64Array;
  /** z of LOO_j = v(M) − without_j. */
  zWithout: Float64Array;
  /** |z| > threshold on either marginal. */
  flagged: boolean[];
}

/** Default threshold on |z| (Iglewicz & Hoaglin 1993 recommend 3.5). */
export const DEFAULT_THRESHOLD = 3.5;

/**
 * Flags reports inconsistent with the rest: robust z-scores (`robustZ`) of the reported marginals
 * v(M0 + U_j) − v(M0) and v(M) − v(M − U_j); a silo is flagged when either |z| > threshold.
 * @throws RangeError/TypeError naming the parameter on bad utilities or threshold ≤ 0.
 */
export function detectReports(utilities: PrivateUtilities, threshold = DEFAULT_THRESHOLD): Detection {
  const r = checkRound(utilities);
  checkThreshold(threshold);
  return detect(r, r.a, r.b, threshold);
}

function detect(r: Round, a: Float64Array, b: Float64Array, threshold: number): Detection {
  const zWithOnly = robustZ(a.map((x) => x - r.empty));
  const zWithout = robustZ(b.map((x) => r.full - x));
  const flagged = Array.from(
    zWithOnly,
    (z, j) => Math.abs(z) > threshold || Math.abs(zWithout[j]!) > threshold,
  );
  return { zWithOnly, zWithout, flagged };
}

/**
 * The reports of one silo the detector lets through while everyone else reports honestly: for each
 * of withOnly and without, the interval of values in [lo, hi] around the honest value whose robust
 * z stays within the threshold (grid of 2001 points, ends refined by bisection). If the honest value
 * is itself flagged, the interval is that value alone. The interval is the connected piece around
 * the honest value, so an optimum over it is a lower bound if the accepted set had other pieces.
 * @throws RangeError/TypeError naming the parameter on bad input.
 */
export function undetectedBox(
  utilities: PrivateUtilities,
  silo: number,
  range: UtilityRange,
  threshold = DEFAULT_THRESHOLD,
): ReportBox {
  const r = checkRound(utilities);
  checkSilo('silo', silo, r.n);
  const { lo, hi } = checkRange(range);
  checkThreshold(threshold);
  const interval = (which: 'a' | 'b'): [number, number] => {
    const honest = which === 'a' ? r.a[silo]! : r.b[silo]!;
    const ok = (x: number) => {
      const v = (which === 'a' ? r.a : r.b).slice();
      v[silo] = x;
      const z = robustZ(which === 'a' ? v.map((y) => y - r.empty) : v.map((y) => r.full - y));
      return Math.abs(z[silo]!) <= threshold;
    };
    if (!ok(honest)) return [honest, honest];
    const edge = (from: number, to: number): number => {
      // walk a grid from the honest value towards `to`; bisection between last accepted and first rejected
      const steps = 2000;
      let good = from;
      for (let k = 1; k <= steps; k++) {
        const x = from + ((to - from) * k) / steps;
        if (!ok(x)) {
          let bad = x;
          for (let it = 0; it < 60; it++) {
            const mid = (good + bad) / 2;
            if (ok(mid)) good = mid;
            else bad = mid;
          }
          return good;
        }
        good = x;
      }
      return to;
    };
    const start = Math.min(hi, Math.max(lo, honest));
    return [Math.min(honest, edge(start, lo)), Math.max(honest, edge(start, hi))];
  };
  const [withOnlyLo, withOnlyHi] = interval('a');
  const [withoutLo, withoutHi] = interval('b');
  return { withOnlyLo, withOnlyHi, withoutLo, withoutHi };
}

// ---------------------------------------------------------------------------------------------
// Single-silo and collusion bounds

/** Options of the bounds. */
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

/** What one silo can do alone. */
export interface SingleSiloBounds {
  /** Largest increase of its own score (reports anywhere in [lo, hi]²). */
  gain: Extremum;
  /** Largest decrease it can cause to each other silo's score; null at its own index. */
  damage: (Extremum | null)[];
  /** Largest own gain with reports the detector does not flag (see `undetectedBox`). */
  gainUndetected: Extremum;
  /** The box of undetected reports. */
  undetectedBox: ReportBox;
}

function resolveOptions(options: BoundOptions) {
  if (options === null || typeof options !== 'object') throw new TypeError('options: expected an object');
  const range = checkRange(options.range ?? { lo: 0, hi: 1 });
  const threshold = checkThreshold(options.threshold ?? DEFAULT_THRESHOLD);
  const exactBudget = options.exactBudget ?? 200_000;
  if (!Number.isInteger(exactBudget) || exactBudget < 1)
    throw new RangeError(`options.exactBudget: expected a positive integer, got ${exactBudget}`);
  return { range, threshold, exactBudget };
}

const fullBox = (range: UtilityRange): ReportBox => ({
  withOnlyLo: range.lo,
  withOnlyHi: range.hi,
  withoutLo: range.lo,
  withoutHi: range.hi,
});

const unit = (n: number, i: number, v: number) => {
  const c = new Float64Array(n);
  c[i] = v;
  return c;
};

/**
 * For every silo i alone (the others honest): its largest self-gain, the largest damage to each
 * other silo, and the largest self-gain the detector would not flag. LOO, IOI, FP, EE: the score
 * is a ratio of affine functions of (withOnly_i, without_i) with a common denominator D, so unless
 * D can reach zero the extremes are at the 4 corners (exact). EE-median: on each cell of the grid
 * of box ends and the other silos' values the medians are affine, so the grid is exact too.
 * Collusion: see `collusionBounds`.
 * @throws RangeError/TypeError naming the parameter on bad input.
 */
export function singleSiloBounds(
  scheme: Scheme,
  utilities: PrivateUtilities,
  options: BoundOptions = {},
): SingleSiloBounds[] {
  checkScheme(scheme);
  const r = checkRound(utilities);
  const { range, threshold, exactBudget } = resolveOptions(options);
  if (options.undetectedBoxes !== undefined && options.undetectedBoxes.length !== r.n)
    throw new RangeError(
      `options.undetectedBoxes: expected ${r.n} boxes, got ${options.undetectedBoxes.length}`,
    );
  const out: SingleSiloBounds[] = [];
  for (let i = 0; i < r.n; i++) {
    const objectives: Objective[] = [{ coef: unit(r.n, i, 1) }];
    for (let v = 0; v < r.n; v++) if (v !== i) objectives.push({ coef: unit(r.n, v, -1) });
    const res = maximize(scheme, r, [i], [fullBox(range)], objectives, { exactBudget });
    const damage: (Extremum | null)[] = [];
    for (let v = 0, k = 1; v < r.n; v++) damage.push(v === i ? null : res[k++]!);
    const box = options.undetectedBoxes?.[i] ?? undetectedBox(utilities, i, range, threshold);
    const [gainUndetected] = maximize(scheme, r, [i], [box], [{ coef: unit(r.n, i, 1) }], { exactBudget });
    out.push({ gain: res[0]!, damage, gainUndetected: gainUndetected!, undetectedBox: box });
  }
  return out;
}

/** What one coalition of colluding silos can do (papers/003 §3.2 excludes collusion; auditors ask). */
export interface CoalitionBounds {
  members: number[];
  /** Largest increase of the members' summed score. */
  total: Extremum;
  /** Per member (in `members` order): largest increase of its own score with the others' help. */
  memberGain: Extremum[];
  /** Largest decrease of each non-member's score; null at members' indices. */
  damage: (Extremum | null)[];
}

/**
 * Bounds for every coalition of k silos reporting jointly (each member's reports anywhere in
 * [lo, hi]², non-members honest). Ratio-of-affine schemes: the 4^k corners of the 2k-dimensional
 * box (exact unless D can reach zero). EE-median: the candidate grid if it has at most
 * `exactBudget` points, else coordinate search (exact: false).
 * @throws RangeError/TypeError naming the parameter on bad input or k ∉ [1, N].
 */
export function collusionBounds(
  scheme: Scheme,
  utilities: PrivateUtilities,
  k: number,
  options: BoundOptions = {},
): CoalitionBounds[] {
  checkScheme(scheme);
  const r = checkRound(utilities);
  if (!Number.isInteger(k) || k < 1 || k > r.n)
    throw new RangeError(`k: expected an integer in [1, ${r.n}], got ${k}`);
  const { range, exactBudget } = resolveOptions(options);
  const out: CoalitionBounds[] = [];
  for (const members of subsets(r.n, k)) {
    const objectives: Objective[] = [];
    const total = new Float64Array(r.n);
    for (const m of members) total[m] = 1;
    objectives.push({ coef: total });
    for (const m of members) objectives.push({ coef: unit(r.n, m, 1) });
    const outsiders = Array.from({ length: r.n }, (_, v) => v).filter((v) => !members.includes(v));
    for (const v of outsiders) objectives.push({ coef: unit(r.n, v, -1) });
    const res = maximize(
      scheme,
      r,
      members,
      members.map(() => fullBox(range)),
      objectives,
      { exactBudget },
    );
    const damage: (Extremum | null)[] = new Array(r.n).fill(null);
    outsiders.forEach((v, q) => {
      damage[v] = res[1 + k + q]!;
    });
    out.push({ members, total: res[0]!, memberGain: res.slice(1, 1 + k), damage });
  }
  return out;
}

/** All k-subsets of 0..n−1 in lexicographic order. */
function subsets(n: number, k: number): number[][] {
  const out: number[][] = [];
  const cur: number[] = [];
  const rec = (start: number) => {
    if (cur.length === k) {
      out.push(cur.slice());
      return;
    }
    for (let i = start; i <= n - (k - cur.length); i++) {
      cur.push(i);
      rec(i + 1);
      cur.pop();
    }
  };
  rec(0);
  return out;
}

/** Number of k-subsets of n, C(n, k). */
export function binomial(n: number, k: number): number {
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`n: expected a non-negative integer, got ${n}`);
  if (!Number.isInteger(k) || k < 0) throw new RangeError(`k: expected a non-negative integer, got ${k}`);
  if (k > n) return 0;
  let c = 1;
  for (let i = 1; i <= k; i++) c = (c * (n - k + i)) / i;
  return Math.round(c);
}

// ---------------------------------------------------------------------------------------------
// Simulated attacks

/** The simulated misreports. */
export type AttackKind = 'inflateSelf' | 'deflateOthers' | 'random';

/** All attack kinds, in report order. */
export const ATTACK_KINDS: readonly AttackKind[] = ['inflateSelf', 'deflateOthers', 'random'];

/** Options of `simulateAttacks`. */
export interface AttackOptions {
  /** Range of a reported utility; default [0, 1]. */
  range?: UtilityRange;
  /** inflate-self multiplies the magnitude of each own marginal by this factor; default 2. */
  inflateFactor?: number;
  /** Random reports drawn per attacker; default 20. */
  randomTrials?: number;
  /** Seed of the random reports; default 0. */
  seed?: number;
  /** Detector threshold; default 3.5. */
  threshold?: number;
  /** Schemes to score; default all. */
  schemes?: readonly Scheme[];
}

/** The effect of one simulated misreport on one scheme. */
export interface AttackEffect {
  /** Spearman correlation of the attacked scores with the honest ones (NaN if either is constant). */
  spearman: number;
  /** Change of each silo's budget share score/v(M) (NaN when v(M) = 0). */
  shareChange: Float64Array;
}

/** One simulated misreport: one attacker, the others honest. */
export interface AttackOutcome {
  kind: AttackKind;
  attacker: number;
  /** 0 for the deterministic kinds; the draw index for `random`. */
  trial: number;
  reports: SiloReports;
  /** Whether the detector flags the attacker. */
  detected: boolean;
  /** Honest silos flagged alongside. */
  honestFlagged: number;
  effects: Partial<Record<Scheme, AttackEffect>>;
}

const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));

/**
 * Simulates misreports on a recorded round, one attacker at a time (the others honest):
 * - inflateSelf: each own marginal m ∈ {IOI_i, LOO_i} is reported as m + (f − 1)|m| (f =
 *   `inflateFactor`), i.e. withOnly' = v(M0) + IOI', without' = v(M) − LOO', clipped to [lo, hi];
 * - deflateOthers: withOnly' = v(M), without' = v(M0) — "the others' updates added nothing":
 *   t_i = 0, the least silo i can give everybody else's EE weight without going negative (it is
 *   also α(i) = Δ: under every scheme the only lever is the same pair of numbers);
 * - random: both reports uniform in [lo, hi] (seeded), `randomTrials` draws.
 * For each scheme: Spearman of attacked vs honest scores and the change of every budget share
 * score/v(M) (FP, EE, EE-median are efficient, papers/003 Property 1; LOO and IOI shares do not sum to 1).
 * @throws RangeError/TypeError naming the parameter on bad input.
 */
export function simulateAttacks(utilities: PrivateUtilities, options: AttackOptions = {}): AttackOutcome[] {
  const r = checkRound(utilities);
  if (options === null || typeof options !== 'object') throw new TypeError('options: expected an object');
  const { lo, hi } = checkRange(options.range ?? { lo: 0, hi: 1 });
  const f = options.inflateFactor ?? 2;
  if (!Number.isFinite(f) || f < 1)
    throw new RangeError(`options.inflateFactor: expected a finite number ≥ 1, got ${f}`);
  const trials = options.randomTrials ?? 20;
  if (!Number.isInteger(trials) || trials < 0)
    throw new RangeError(`options.randomTrials: expected a non-negative integer, got ${trials}`);
  const threshold = checkThreshold(options.threshold ?? DEFAULT_THRESHOLD);
  const schemes = (options.schemes ?? SCHEMES).map(checkScheme);
  const rng = createRng(checkFiniteNumber('options.seed', options.seed ?? 0));
  const s = makeScratch(r.n);
  const honest = new Map(
    schemes.map((sc) => [
      sc,
      scoresFromWeights(
        sc,
        r,
        r.b,
        weightsInto(sc, r, r.a, r.b, new Float64Array(r.n), s),
        new Float64Array(r.n),
      ),
    ]),
  );
  const out: AttackOutcome[] = [];
  const run = (kind: AttackKind, attacker: number, trial: number, rep: SiloReports) => {
    const a = r.a.slice();
    const b = r.b.slice();
    a[attacker] = rep.withOnly;
    b[attacker] = rep.without;
    const det = detect(r, a, b, threshold);
    const effects: Partial<Record<Scheme, AttackEffect>> = {};
    for (const sc of schemes) {
      const h = honest.get(sc)!;
      const sAtt = scoresFromWeights(
        sc,
        r,
        b,
        weightsInto(sc, r, a, b, new Float64Array(r.n), s),
        new Float64Array(r.n),
      );
      const shareChange = sAtt.map((x, j) => (r.full === 0 ? Number.NaN : (x - h[j]!) / r.full));
      effects[sc] = { spearman: spearman(h, sAtt), shareChange };
    }
    out.push({
      kind,
      attacker,
      trial,
      reports: rep,
      detected: det.flagged[attacker]!,
      honestFlagged: det.flagged.filter((x, j) => x && j !== attacker).length,
      effects,
    });
  };
  for (let i = 0; i < r.n; i++) {
    const ioi = r.a[i]! - r.empty;
    const loo = r.full - r.b[i]!;
    run('inflateSelf', i, 0, {
      withOnly: clamp(r.empty + ioi + (f - 1) * Math.abs(ioi), lo, hi),
      without: clamp(r.full - (loo + (f - 1) * Math.abs(loo)), lo, hi),
    });
    run('deflateOthers', i, 0, { withOnly: clamp(r.full, lo, hi), without: clamp(r.empty, lo, hi) });
  }
  for (let i = 0; i < r.n; i++)
    for (let t = 0; t < trials; t++)
      run('random', i, t, { withOnly: lo + (hi - lo) * rng.next(), without: lo + (hi - lo) * rng.next() });
  return out;
}
