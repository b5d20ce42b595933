/**
 * Internal: the detector's evidence reference (issue 37). Never re-exported.
 *
 * The reference sets of ./reference-z.ts judge a silo's marginal against the other silos'
 * marginals. In a round where one silo's update moves the model several times more than every
 * other's (the first rounds of the 50- and 58-silo Dirichlet(0.1) settings: IOI 0.095 and LOO 0.099
 * of one silo against ≤ 0.012 for the others, with v(M) − v(M0) = 0.11), that silo is an outlier
 * among them however honest it is, and the detector quarantined it. What sets it apart from a silo
 * that only claims to be it is the round's public improvement Δ = v(M) − v(M0) and the *other*
 * silos' leave-one-out reports LOO_k = v(M) − v(M − U_k):
 *
 *   IOI evidence  E_j = Δ − max(0, max_{k≠j} LOO_k)
 *   LOO evidence  F_j = Δ − Σ_{k≠j} max(0, LOO_k)
 *   (the maximum and the sum over the others but their `drop` largest LOO; below)
 *
 * E_j is how much every evaluated model that contains U_j — M itself and each M − U_k, k ≠ j —
 * improves on M0 at least (v(M − U_k) − v(M0) = Δ − LOO_k): a singleton model that claims about
 * that much is what those models show. F_j is the part of Δ that the other silos' losses do not
 * account for: what removing U_j can cost when the losses add up. A marginal within about its
 * evidence is what the round's own numbers account for: the detector adds one reference per silo
 * and marginal, centred at the evidence with scale max(floor, {@link EVIDENCE_SCALE} × the
 * evidence), and z is the smallest over all references as before (with z > 3.5 flagged, a marginal
 * up to about 1.52 × its evidence passes).
 *
 * Colluders, as in the reference sets: the maximum and the sum leave out the largest `drop` of the
 * others' LOO (as many as a reference set leaves out), so
 * - a pair cannot take an honest silo's evidence away by claiming the round's improvement itself:
 *   with the pair's two values left out, what is left is at most what the honest reports alone
 *   give, so the evidence is at least the honest one and the pair bound of ./reference-z.ts (an
 *   honest silo's z is at most its z against the honest reports alone) holds as before;
 * - nor raise its own: Δ is computed by the server and a silo's own reports are not in its
 *   evidence, and adding a colluder's value to the others can only raise an order statistic of
 *   them and the sum of all but the largest `drop`, i.e. lower the evidence. It is at most what the
 *   honest silos' reports allow with their `drop` largest LOO left out.
 * The cost: since the two largest of the others' LOO are left out, a dominant honest silo's large
 * LOO does not shrink a third silo's evidence, so in a round with one or two dominant silos any
 * silo may claim up to about 1.5 × what the others but those two leave unexplained
 * (docs/audit.md, "What the detector catches"). The evidence only lowers z (one more reference in
 * a minimum): it never flags what the reference sets accept.
 */
import { MIN_REFERENCE } from './reference-z.js';

/**
 * The evidence reference's scale relative to the evidence: with threshold 3.5 a marginal up to
 * about 1.52 × its evidence passes (a silo's singleton model can beat the aggregate it is averaged
 * into: the dominant honest silos of the recorded runs reach 1.36 × theirs). Calibrated on the honest
 * runs of every example configuration (docs/audit.md, "False flags"; `scripts/false-flags.ts`).
 */
export const EVIDENCE_SCALE = 0.1;

/** The evidence of every silo's IOI and LOO, in the units of `loo` and `gain`. */
export interface Evidence {
  /** E_j = gain − max(0, the largest of the others' LOO after leaving out their `drop` largest). */
  ioi: Float64Array;
  /** F_j = gain − Σ max(0, LOO_k) over the others but their `drop` largest. */
  loo: Float64Array;
}

/**
 * The evidence of every silo.
 * @param loo every silo's LOO marginal (in the detector's units).
 * @param gain the round's public improvement v(M) − v(M0) in the same units.
 * @param drop how many of the others' largest LOO are left out (fewer when fewer than
 *   {@link MIN_REFERENCE} others would stay, as in the reference sets).
 */
export function evidenceOf(loo: ArrayLike<number>, gain: number, drop: number): Evidence {
  const n = loo.length;
  const m = Math.max(0, Math.min(drop, n - 1 - MIN_REFERENCE));
  // positions with a positive LOO, largest first (N is tens at most)
  const order = Array.from({ length: n }, (_, k) => k)
    .filter((k) => loo[k]! > 0)
    .sort((a, b) => loo[b]! - loo[a]! || a - b);
  let total = 0;
  for (const k of order) total += loo[k]!;
  const ioi = new Float64Array(n);
  const out = new Float64Array(n);
  for (let j = 0; j < n; j++) {
    // the others' positive LOO, largest first: the top m are left out
    let left = 0;
    let top = 0;
    let next = 0; // the largest one that stays
    for (const k of order) {
      if (k === j) continue;
      if (left < m) {
        left++;
        top += loo[k]!;
      } else {
        next = loo[k]!;
        break;
      }
    }
    const rest = total - Math.max(0, loo[j]!) - top;
    ioi[j] = gain - next;
    out[j] = gain - Math.max(0, rest);
  }
  return { ioi, loo: out };
}

/** The evidence reference's scale, or null when there is no positive evidence (no reference). */
export function evidenceScale(e: number, floor: number): number | null {
  return e > 0 ? Math.max(floor, EVIDENCE_SCALE * e) : null;
}
