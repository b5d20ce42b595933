/**
 * Internal: the detector's z of one silo's marginal against the other silos' (issue 37, issue 32
 * S1). Not part of the package's public API; scripts/false-flags.ts uses it for the previous
 * detector's column.
 *
 * The reference is the others' reports, never the silo's own (a liar cannot hide by moving the
 * median it is judged by), less up to `drop` of them: z is the smallest over every way of leaving
 * out `drop` other reports, so two colluders cannot push an honest silo over the threshold by
 * shrinking the spread or moving the median — one of the reference sets leaves both out. At least
 * {@link MIN_REFERENCE} reports stay in every reference set (fewer others: fewer are left out).
 *
 * The scale is the reference's median absolute deviation (Iglewicz & Hoaglin 1993), floored twice:
 * at `floor`, because the utilities resolve nothing finer than their resolution (a test set of T
 * examples resolves 1/T), so a spread below a few resolution steps is noise, not a tight
 * consensus; and at `kappa` times the reference silos' typical magnitude (the median of their
 * max(|IOI|, |LOO|)), because how far one silo's update moves the utility sets how far an honest
 * silo's marginal can lie from the others' — a silo whose data the others lack (a Maverick, the
 * one silo holding a class) differs from them by about that much, not by a few MADs of a tight
 * cluster.
 */

/** Iglewicz–Hoaglin constant: Φ⁻¹(0.75), so 0.6745·(x − med)/MAD ≈ (x − μ)/σ for normal data. */
export const IGLEWICZ_HOAGLIN = 0.6745;

/** The fewest reports every reference set keeps. */
export const MIN_REFERENCE = 2;

/** Median of a sorted array. */
function sortedMedian(s: Float64Array, len: number): number {
  const m = len >>> 1;
  return len % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * Median of |s_k − med| over a sorted array s whose median is med, in O(len): the deviations grow
 * outward from the middle on both sides, so a merge from the middle reads them in order.
 */
function sortedMad(s: Float64Array, len: number, med: number): number {
  let l = (len - 1) >>> 1; // last index of the lower half (s[l] ≤ med)
  let r = l + 1;
  const want = len >>> 1; // 0-based rank of the upper middle deviation
  let prev = 0;
  for (let k = 0; k <= want; k++) {
    const dl = l >= 0 ? med - s[l]! : Number.POSITIVE_INFINITY;
    const dr = r < len ? s[r]! - med : Number.POSITIVE_INFINITY;
    const d = dl <= dr ? dl : dr;
    if (dl <= dr) l--;
    else r++;
    if (k === want) return len % 2 === 1 ? d : (prev + d) / 2;
    prev = d;
  }
  return prev;
}

/** One reference set's centre and scale. */
export interface Reference {
  median: number;
  scale: number;
  /** For an enclosing reference: the smallest scale a set can have (bounds z below the median). */
  minScale?: number;
}

/** How a reference set's scale is floored. */
export interface ScaleFloor {
  /** Absolute floor (the utilities' resolution steps). */
  floor: number;
  /** Relative floor: this times the median of the reference silos' magnitudes. */
  kappa: number;
}

/**
 * Above this many other reports the sets are not enumerated (C(k, 2) sets of k values each): one
 * reference encloses them all (see `enclosingReference`), so z is a lower bound of the smallest z
 * over the sets and the detector flags no more than it would with them.
 */
export const EXACT_UP_TO = 16;

/**
 * A reference whose z lower-bounds every set's, for k sorted values with m ≤ 2 of them left out:
 * its median is the largest a set can have (the m lowest left out) and its scale the largest a
 * set can have — the MAD of a set about its own median c is at most its median deviation about
 * the median of all, which is at most the (q + m)-th smallest deviation of all (leaving values out
 * moves an order statistic up by at most m), plus |c − median of all| ≤ the spread of the sets'
 * medians; the typical magnitude likewise is at most the order statistic m ranks up.
 */
function enclosingReference(
  k: number,
  at: (q: number) => number,
  magAt: (q: number) => number,
  m: number,
  floor: number,
  kappa: number,
): Reference {
  const len = k - m;
  const med = (from: number, count: number) =>
    count % 2 === 1
      ? at(from + (count >>> 1))
      : (at(from + (count >>> 1) - 1) + at(from + (count >>> 1))) / 2;
  const medHi = med(m, len);
  const medLo = med(0, len);
  const mid = med(0, k);
  const q = len >>> 1; // upper middle rank of a set's deviations
  const r = Math.min(k - 1, q + m);
  // the r-th smallest |v − mid|: deviations grow outward from the middle on both sides
  let lo = (k - 1) >>> 1;
  while (lo >= 0 && at(lo) > mid) lo--;
  let hi = lo + 1;
  let d = 0;
  for (let t = 0; t <= r; t++) {
    const dl = lo >= 0 ? mid - at(lo) : Number.POSITIVE_INFINITY;
    const dr = hi < k ? at(hi) - mid : Number.POSITIVE_INFINITY;
    if (dl <= dr) {
      d = dl;
      lo--;
    } else {
      d = dr;
      hi++;
    }
  }
  const madHi = d + Math.max(medHi - mid, mid - medLo);
  return { median: medHi, scale: Math.max(madHi, floor, kappa * magAt(r)), minScale: floor };
}

/**
 * z of every silo's value (see {@link referenceZ}), sorting once: the enclosing reference of
 * each silo (more than {@link EXACT_UP_TO} others) is read off the sorted values in O(N).
 */
export function referenceZAll(x: ArrayLike<number>, mag: ArrayLike<number>, drop: number, floor: ScaleFloor) {
  const n = x.length;
  const k = n - 1;
  const m = Math.max(0, Math.min(drop, k - MIN_REFERENCE));
  if (k <= EXACT_UP_TO || m === 0) return Float64Array.from(x, (_, j) => referenceZ(x, mag, j, drop, floor));
  const order = sortedOthers(x, -1);
  const byMag = sortedOthers(mag, -1);
  const sorted = Float64Array.from(order, (p) => x[p]!);
  const magSorted = Float64Array.from(byMag, (p) => mag[p]!);
  const rank = new Int32Array(n);
  const magRank = new Int32Array(n);
  for (let r = 0; r < n; r++) {
    rank[order[r]!] = r;
    magRank[byMag[r]!] = r;
  }
  return Float64Array.from(x, (xj, j) => {
    const rj = rank[j]!;
    const mj = magRank[j]!;
    const ref = enclosingReference(
      k,
      (q) => sorted[q < rj ? q : q + 1]!,
      (q) => magSorted[q < mj ? q : q + 1]!,
      m,
      floor.floor,
      floor.kappa,
    );
    const d = xj - ref.median;
    return (IGLEWICZ_HOAGLIN * d) / (d < 0 ? ref.minScale! : ref.scale);
  });
}

/** Positions other than j (all when j < 0), sorted by (value, position): insertion sort (N is tens at most). */
function sortedOthers(v: ArrayLike<number>, j: number): Int32Array {
  const out = new Int32Array(j < 0 ? v.length : v.length - 1);
  let len = 0;
  for (let p = 0; p < v.length; p++) {
    if (p === j) continue;
    let q = len++;
    while (q > 0 && v[out[q - 1]!]! > v[p]!) {
      out[q] = out[q - 1]!;
      q--;
    }
    out[q] = p;
  }
  return out;
}

/** The q-th smallest (0-based) of sorted `s` once its positions a < b (−1: none) are left out. */
function kthWithout(s: Float64Array, a: number, b: number, q: number): number {
  let i = q;
  if (a >= 0 && i >= a) i++;
  if (b >= 0 && i >= b) i++;
  return s[i]!;
}

/** Median of sorted `s` with positions a < b (−1: none) left out. */
function medianWithout(s: Float64Array, a: number, b: number, len: number): number {
  const m = len >>> 1;
  return len % 2 === 1 ? kthWithout(s, a, b, m) : (kthWithout(s, a, b, m - 1) + kthWithout(s, a, b, m)) / 2;
}

/**
 * Every reference set of the others (`x` and `mag` without position j): each way of leaving out
 * min(drop, others − MIN_REFERENCE) of them (none when that is ≤ 0), with its median and its scale
 * max(MAD, floor, kappa · median magnitude). Calls `visit` per set.
 */
export function forEachReference(
  x: ArrayLike<number>,
  mag: ArrayLike<number>,
  j: number,
  drop: number,
  { floor, kappa }: ScaleFloor,
  visit: (ref: Reference) => void,
): void {
  const k = x.length - 1;
  // the others sorted by value, and each one's position in the others sorted by magnitude
  const order = sortedOthers(x, j);
  const byMag = sortedOthers(mag, j);
  const magSorted = new Float64Array(k);
  const magRank = new Int32Array(x.length);
  for (let r = 0; r < k; r++) {
    magSorted[r] = mag[byMag[r]!]!;
    magRank[byMag[r]!] = r;
  }
  const sorted = new Float64Array(k);
  for (let p = 0; p < k; p++) sorted[p] = x[order[p]!]!;
  const m = Math.max(0, Math.min(drop, k - MIN_REFERENCE));
  const len = k - m;
  const s = new Float64Array(len);
  const emit = (skipA: number, skipB: number) => {
    let q = 0;
    for (let p = 0; p < k; p++) if (p !== skipA && p !== skipB) s[q++] = sorted[p]!;
    const med = sortedMedian(s, len);
    // the magnitudes of the same reference silos: leave out the ranks of the two left out
    const ra = skipA >= 0 ? magRank[order[skipA]!]! : -1;
    const rb = skipB >= 0 ? magRank[order[skipB]!]! : -1;
    const one = ra < 0 || rb < 0;
    const typical = medianWithout(
      magSorted,
      one ? Math.max(ra, rb) : Math.min(ra, rb),
      one ? -1 : Math.max(ra, rb),
      len,
    );
    visit({ median: med, scale: Math.max(sortedMad(s, len, med), floor, kappa * typical) });
  };
  if (m === 0) emit(-1, -1);
  else if (k > EXACT_UP_TO)
    visit(
      enclosingReference(
        k,
        (q) => sorted[q]!,
        (q) => magSorted[q]!,
        m,
        floor,
        kappa,
      ),
    );
  else if (m === 1) for (let a = 0; a < k; a++) emit(a, -1);
  else for (let a = 0; a < k; a++) for (let b = a + 1; b < k; b++) emit(a, b);
}

/**
 * z of x[j] against the others: min over reference sets of 0.6745 (x_j − median)/scale (one-sided:
 * the detector flags z > threshold). 0 when there are no others.
 */
export function referenceZ(
  x: ArrayLike<number>,
  mag: ArrayLike<number>,
  j: number,
  drop: number,
  floor: ScaleFloor,
): number {
  if (x.length < 2) return 0;
  let best = Number.POSITIVE_INFINITY;
  const xj = x[j]!;
  forEachReference(x, mag, j, drop, floor, ({ median, scale, minScale }) => {
    const d = xj - median;
    const z = (IGLEWICZ_HOAGLIN * d) / (d < 0 && minScale !== undefined ? minScale : scale);
    if (z < best) best = z;
  });
  return best;
}

/**
 * The largest value silo j may report without z > threshold, the others fixed: max over reference
 * sets of median + threshold · scale / 0.6745 (+∞ when there are no others).
 */
export function largestUnflagged(
  x: ArrayLike<number>,
  mag: ArrayLike<number>,
  j: number,
  drop: number,
  floor: ScaleFloor,
  threshold: number,
): number {
  if (x.length < 2) return Number.POSITIVE_INFINITY;
  let best = Number.NEGATIVE_INFINITY;
  forEachReference(x, mag, j, drop, floor, ({ median, scale }) => {
    const b = median + (threshold * scale) / IGLEWICZ_HOAGLIN;
    if (b > best) best = b;
  });
  return best;
}
