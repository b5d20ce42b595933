/**
 * What a selfish silo can send (papers/003 §3.2 threat model): a silo trains honestly but reports
 * selfishly, and its only lever is the pair it reports, (v(M0 + U_i), v(M − U_i)) — `withOnly` and
 * `without` — each anywhere in the utility's range [lo, hi] (accuracy: [0, 1]). v(M) and v(M0)
 * are computed by the server and fixed. The scores those reports produce are scoring/private.ts's.
 */

/** The range a reported utility may take, [lo, hi] (accuracy: { lo: 0, hi: 1 }). */
export interface UtilityRange {
  /** Smallest reportable utility. */
  lo: number;
  /** Largest reportable utility. */
  hi: number;
}

/** Reports of one silo: its claimed v(M0 + U_i) and v(M − U_i). */
export interface SiloReports {
  /** Claimed v(M0 + U_i): the utility of its singleton model. */
  withOnly: number;
  /** Claimed v(M − U_i): the utility of the aggregate without it. */
  without: number;
}

/** A box of feasible reports for one attacker: withOnly ∈ [withOnlyLo, withOnlyHi], without ∈ [withoutLo, withoutHi]. */
export interface ReportBox {
  withOnlyLo: number;
  withOnlyHi: number;
  withoutLo: number;
  withoutHi: number;
}
