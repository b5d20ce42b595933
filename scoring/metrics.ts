/**
 * Agreement between two score vectors (papers/003 §5: "we compare ... using the normalized L2
 * distance, Spearman's and Kendall's rank correlation and Pearson correlation").
 */

function checkPair(a: ArrayLike<number>, b: ArrayLike<number>, min = 2): void {
  if (a.length !== b.length)
    throw new RangeError(`b: expected ${a.length} values to match a, got ${b.length}`);
  if (a.length < min) throw new RangeError(`a: expected at least ${min} values, got ${a.length}`);
  for (let i = 0; i < a.length; i++) {
    if (!Number.isFinite(a[i])) throw new RangeError(`a[${i}]: expected a finite number, got ${a[i]}`);
    if (!Number.isFinite(b[i])) throw new RangeError(`b[${i}]: expected a finite number, got ${b[i]}`);
  }
}

/** Ranks 1..n with ties given their average rank. */
export function averageRanks(x: ArrayLike<number>): Float64Array {
  const n = x.length;
  const order = Array.from({ length: n }, (_, i) => i).sort((i, j) => x[i]! - x[j]!);
  const ranks = new Float64Array(n);
  for (let start = 0; start < n; ) {
    let end = start + 1;
    while (end < n && x[order[end]!] === x[order[start]!]) end++;
    const rank = (start + end + 1) / 2; // mean of ranks start+1 .. end
    for (let k = start; k < end; k++) ranks[order[k]!] = rank;
    start = end;
  }
  return ranks;
}

function pearsonUnchecked(a: ArrayLike<number>, b: ArrayLike<number>): number {
  const n = a.length;
  let ma = 0;
  let mb = 0;
  for (let i = 0; i < n; i++) {
    ma += a[i]!;
    mb += b[i]!;
  }
  ma /= n;
  mb /= n;
  let sab = 0;
  let saa = 0;
  let sbb = 0;
  for (let i = 0; i < n; i++) {
    const da = a[i]! - ma;
    const db = b[i]! - mb;
    sab += da * db;
    saa += da * da;
    sbb += db * db;
  }
  if (saa === 0 || sbb === 0) return Number.NaN;
  // √saa·√sbb rather than √(saa·sbb): the product can underflow; clamp rounding past ±1.
  return Math.max(-1, Math.min(1, sab / (Math.sqrt(saa) * Math.sqrt(sbb))));
}

/**
 * Pearson correlation. NaN when either vector is constant (correlation undefined).
 * @throws RangeError on a length mismatch, fewer than 2 values or non-finite values.
 */
export function pearson(a: ArrayLike<number>, b: ArrayLike<number>): number {
  checkPair(a, b);
  return pearsonUnchecked(a, b);
}

/**
 * Spearman rank correlation: Pearson correlation of the average ranks (ties get their mean rank).
 * NaN when either vector is constant.
 * @throws RangeError on a length mismatch, fewer than 2 values or non-finite values.
 */
export function spearman(a: ArrayLike<number>, b: ArrayLike<number>): number {
  checkPair(a, b);
  return pearsonUnchecked(averageRanks(a), averageRanks(b));
}

/**
 * Kendall's tau-b: (C − D) / √((n0 − n1)(n0 − n2)), n0 = n(n−1)/2, n1 and n2 the tied pairs in
 * a and in b. O(n²), fine for the tens to hundreds of silos scored here. NaN when a vector is constant.
 * @throws RangeError on a length mismatch, fewer than 2 values or non-finite values.
 */
export function kendallTau(a: ArrayLike<number>, b: ArrayLike<number>): number {
  checkPair(a, b);
  const n = a.length;
  let concordant = 0;
  let discordant = 0;
  let tiesA = 0;
  let tiesB = 0;
  for (let i = 0; i < n; i++) {
    for (let j = i + 1; j < n; j++) {
      const da = Math.sign(a[i]! - a[j]!);
      const db = Math.sign(b[i]! - b[j]!);
      if (da === 0) tiesA++;
      if (db === 0) tiesB++;
      if (da !== 0 && db !== 0) da === db ? concordant++ : discordant++;
    }
  }
  const n0 = (n * (n - 1)) / 2;
  const denom = Math.sqrt((n0 - tiesA) * (n0 - tiesB));
  return denom === 0 ? Number.NaN : (concordant - discordant) / denom;
}

/**
 * Normalized L2 distance (papers/003 §5): each vector minus its minimum, divided by its mean
 * (after the shift), then the Euclidean distance between the two. A vector whose values are all
 * equal normalizes to zeros. Invariant to positive affine rescaling of either vector.
 * @throws RangeError on a length mismatch, fewer than 2 values or non-finite values.
 */
export function normalizedL2(a: ArrayLike<number>, b: ArrayLike<number>): number {
  checkPair(a, b);
  const na = normalize(a);
  const nb = normalize(b);
  let s = 0;
  for (let i = 0; i < na.length; i++) s += (na[i]! - nb[i]!) ** 2;
  return Math.sqrt(s);
}

function normalize(x: ArrayLike<number>): Float64Array {
  let min = Number.POSITIVE_INFINITY;
  for (let i = 0; i < x.length; i++) min = Math.min(min, x[i]!);
  const shifted = Float64Array.from(x as ArrayLike<number>, (v) => v - min);
  const mean = shifted.reduce((s, v) => s + v, 0) / shifted.length;
  return mean === 0 ? shifted : shifted.map((v) => v / mean);
}
