/**
 * Internal: medians for the robust Everybody-Else score (papers/003 §5.3: the mean over the other
 * silos replaced by a median) and for the robust-z detector. Never re-exported.
 *
 * N is the number of silos (tens at most), so the indices are sorted once by insertion sort and
 * every silo's "median of the others" is read off that one order (no per-silo sort, no closures
 * on the hot path of the manipulation audit).
 */

/** Median of x (the mean of the two middle values for an even length). */
export function median(x: ArrayLike<number>): number {
  const s = Float64Array.from(x).sort();
  const m = s.length >>> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/**
 * Sorts 0..n−1 by (t value, index): returns one buffer holding the order in [0, n) and each
 * index's position in [n, 2n) (buffer[n + order[p]] = p).
 */
function sortIndices(t: Float64Array): Int32Array {
  const n = t.length;
  const order = new Int32Array(2 * n);
  for (let k = 0; k < n; k++) {
    let q = k;
    while (q > 0 && t[order[q - 1]!]! > t[k]!) {
      order[q] = order[q - 1]!;
      q--;
    }
    order[q] = k;
  }
  for (let p = 0; p < n; p++) order[n + order[p]!] = p;
  return order;
}

/**
 * For each silo i, the median of the N−1 values t_j, j ≠ i, into `out` (a new array by default).
 * The others' q-th smallest value is the q-th of the full order when q < i's position, else the (q+1)-th.
 */
export function medianOfOthers(
  t: Float64Array,
  out: Float64Array = new Float64Array(t.length),
): Float64Array {
  const n = t.length;
  const order = sortIndices(t);
  const m = n - 1;
  for (let i = 0; i < n; i++) {
    const p = order[n + i]!;
    if (m % 2 === 1) {
      const q = (m - 1) / 2;
      out[i] = t[order[q < p ? q : q + 1]!]!;
    } else {
      const q1 = m / 2 - 1;
      const q2 = m / 2;
      out[i] = (t[order[q1 < p ? q1 : q1 + 1]!]! + t[order[q2 < p ? q2 : q2 + 1]!]!) / 2;
    }
  }
  return out;
}

/**
 * Who holds each silo's median of the others (ties broken by silo index): calls
 * visit(i, owner, share) for the one silo (share 1) or the two silos (share 1/2 each) whose
 * values form the median of {t_j : j ≠ i}.
 */
export function medianOwners(
  t: Float64Array,
  visit: (i: number, owner: number, share: number) => void,
): void {
  const n = t.length;
  const order = sortIndices(t);
  const m = n - 1;
  const at = (q: number, p: number) => order[q < p ? q : q + 1]!;
  for (let i = 0; i < n; i++) {
    const p = order[n + i]!;
    if (m % 2 === 1) visit(i, at((m - 1) / 2, p), 1);
    else {
      visit(i, at(m / 2 - 1, p), 0.5);
      visit(i, at(m / 2, p), 0.5);
    }
  }
}
