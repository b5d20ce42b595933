/**
 * The audit's hand-written rounds, one owner for the scripts and tests that replay them
 * (scripts/unflagged-gains.ts, scripts/false-flags.ts, test/security/s1-framing.test.ts): the
 * 5-silo example of issue 27 (v(M) = 0.86, v(M0) = 0.85), with three honest LOO_j tied at 0.003
 * and without ties, and round 3 of the quickstart's seed 1 (9 silos).
 */
export interface AuditRound {
  full: number;
  empty: number;
  withOnly: number[];
  without: number[];
}

/** Issue 27's example: three honest LOO_j tie at 0.003. */
export const ISSUE_27_TIES: AuditRound = {
  full: 0.86,
  empty: 0.85,
  withOnly: [0.854, 0.854, 0.855, 0.853, 0.855],
  without: [0.857, 0.857, 0.858, 0.856, 0.857],
};

/** Issue 27's example with honest reports that do not tie. */
export const ISSUE_27_NO_TIES: AuditRound = {
  full: 0.86,
  empty: 0.85,
  withOnly: [0.854, 0.856, 0.855, 0.853, 0.852],
  without: [0.857, 0.855, 0.858, 0.856, 0.854],
};

/** Round 3 of the quickstart's seed 1 (9 silos). */
export const QUICKSTART_ROUND_3: AuditRound = {
  full: 0.652,
  empty: 0.6245,
  withOnly: [0.264, 0.4505, 0.467, 0.572, 0.672, 0.457, 0.5865, 0.484, 0.623],
  without: [0.653, 0.6635, 0.639, 0.634, 0.653, 0.658, 0.625, 0.624, 0.6365],
};
