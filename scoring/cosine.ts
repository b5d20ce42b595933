/**
 * COS: cosine similarity between each silo's update and the aggregated update (papers/003 §5.1,
 * "each client is assigned a score based on the similarity between its local gradient and the
 * aggregated global gradient"; papers/002 uses the same idea in CGSV). The paper writes the
 * formula as CosSim(M0 + U_i, M) on models; on models the shared M0 dominates and every score is
 * ≈ 1, so fedscore follows the text and compares updates: COS(i) = cos(U_i, Σ_j U_j).
 */

/** cos(a, b) in float64; 0 when either vector is zero. */
export function cosineSimilarity(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length)
    throw new RangeError(`b: expected ${a.length} values to match a, got ${b.length}`);
  // Scale each vector by its largest magnitude first (as hypot does): tiny or huge entries would
  // otherwise underflow or overflow when squared.
  let sa = 0;
  let sb = 0;
  for (let k = 0; k < a.length; k++) {
    sa = Math.max(sa, Math.abs(a[k]!));
    sb = Math.max(sb, Math.abs(b[k]!));
  }
  if (!Number.isFinite(sa + sb)) throw new RangeError('a: vectors must be finite');
  if (sa === 0 || sb === 0) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let k = 0; k < a.length; k++) {
    const x = a[k]! / sa;
    const y = b[k]! / sb;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return Math.max(-1, Math.min(1, dot / (Math.sqrt(na) * Math.sqrt(nb))));
}

/**
 * COS score of every silo: cos(U_i, aggregate).
 * @param updates one update per silo (equal lengths).
 * @param aggregate the aggregated update (same length).
 * @throws RangeError naming the argument on a length mismatch or non-finite values.
 */
export function cosineScores(
  updates: readonly ArrayLike<number>[],
  aggregate: ArrayLike<number>,
): Float64Array {
  if (updates.length < 1) throw new RangeError('updates: expected at least one update');
  return Float64Array.from(updates, (u, i) => {
    if (u.length !== aggregate.length)
      throw new RangeError(`updates[${i}]: expected ${aggregate.length} values, got ${u.length}`);
    return cosineSimilarity(u, aggregate);
  });
}
