/**
 * A utilities file of issue 37's kind: 6 silos over 5 rounds whose true contributions are clearly
 * ordered, and a free rider (v(M0 + U_i) = v(M0), v(M − U_i) = v(M) in every round). Generated,
 * deterministic (a fixed xorshift stream), shared by scripts/headline-candidates.ts and
 * test/records/headline-separation.test.ts.
 *
 * Round r (1…5): v(M0) = 0.55 + 0.06 r, a scale f_r = 0.75^(r−1); honest silo i with true
 * contribution c_i (0.078, 0.057, 0.041, 0.039, 0.030) has LOO_i = c_i f_r (1 + ε) and
 * IOI_i = 1.6 c_i f_r (1 + ε′), ε, ε′ uniform in ±`noise`; v(M) = v(M0) + 1.1 · Σ_i LOO_i.
 */

/** The honest silos' true contributions, best first; the free rider (last) contributes 0. */
export const TRUE_CONTRIBUTIONS = [0.078, 0.057, 0.041, 0.039, 0.03, 0] as const;

/** One round in the utilities-file format (docs/utilities.md). */
export interface SeparationRound {
  round: number;
  full: number;
  empty: number;
  withOnly: number[];
  without: number[];
}

/** The 5 rounds, with relative noise `noise` (default 0.1) from a stream seeded by `seed`. */
export function separationRounds(seed = 1, noise = 0.1): SeparationRound[] {
  let s = (seed * 2654435761) >>> 0 || 1;
  const uniform = () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 32;
  };
  const rounds: SeparationRound[] = [];
  for (let r = 1; r <= 5; r++) {
    const empty = 0.55 + 0.06 * r;
    const f = 0.75 ** (r - 1);
    const loo = TRUE_CONTRIBUTIONS.map((c) => c * f * (1 + noise * (2 * uniform() - 1)));
    const ioi = TRUE_CONTRIBUTIONS.map((c) => 1.6 * c * f * (1 + noise * (2 * uniform() - 1)));
    const full = empty + 1.1 * loo.reduce((a, b) => a + b, 0);
    const round = (x: number) => Math.round(x * 1e6) / 1e6;
    rounds.push({
      round: r,
      full: round(full),
      empty: round(empty),
      withOnly: ioi.map((x) => round(empty + x)),
      without: loo.map((x) => round(full - x)),
    });
  }
  return rounds;
}
