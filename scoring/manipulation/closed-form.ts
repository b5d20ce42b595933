/**
 * Closed forms of what one misreporting silo can do (papers/003 Def. 2–4, Eq. 2–5, Property 5).
 *
 * Every scheme is score_i = w_i / D · v(M) (scoring/private.ts). Two identities drive the
 * findings (Δ = v(M) − v(M0), A = Σ_j α(j), t_j = [v(M) − withOnly_j] + [without_j − v(M0)], the
 * sum of silo j's two Eq. 5 terms):
 *   t_j = 2(Δ − α(j))  — the term silo j gives everybody else is its own α read backwards, and
 *   EE(i) = [(N−1)Δ − A + α(i)] / [(N−1)(NΔ − A)] · v(M)   (mean form)
 *         = Σ_{j≠i} t_j / ((N−1) Σ_j t_j) · v(M).
 * Silo i's reports never enter w_i (Property 5 holds for the weight), but they enter the common
 * normalizer Σ_j t_j = 2(NΔ − A): inflating its own α(i) lowers NΔ − A and raises EE(i) by the
 * ratio of normalizers. When the report range lets NΔ − A reach 0 the self-gain is unbounded.
 */
import {
  checkUtilities,
  everybodyElseTerms,
  type PrivateUtilities,
  schemeScores,
  schemeWeights,
} from '../private.js';
import { checkRange, checkSilo, replaceReports } from './_checks.js';
import type { UtilityRange } from './reports.js';

/** A closed-form supremum of a silo's self-gain. */
export interface ClosedForm {
  /** The largest increase of the silo's own score (score units); +Infinity when unbounded. */
  value: number;
  /** true when the reports can drive the normalizer D to zero (the gain has no bound). */
  unbounded: boolean;
}

/**
 * LOO self-gain: LOO(i) = v(M) − without_i (papers/003 Def. 2) is largest at without_i = lo, so
 * the gain over the honest report is max(0, without_i − lo).
 * @param utilities the round's honest utilities.
 * @param silo the misreporting silo.
 * @param range the range of a report.
 * @throws RangeError/TypeError naming the parameter on bad input.
 */
export function looSelfGain(utilities: PrivateUtilities, silo: number, range: UtilityRange): ClosedForm {
  const u = checkUtilities(utilities, 'utilities');
  checkSilo('silo', silo, u.n);
  const { lo } = checkRange(range);
  return { value: Math.max(0, u.without[silo]! - lo), unbounded: false };
}

/**
 * IOI self-gain: IOI(i) = withOnly_i − v(M0) (papers/003 Eq. 3, second term) is largest at
 * withOnly_i = hi: max(0, hi − withOnly_i).
 * @param utilities the round's honest utilities.
 * @param silo the misreporting silo.
 * @param range the range of a report.
 * @throws RangeError/TypeError naming the parameter on bad input.
 */
export function ioiSelfGain(utilities: PrivateUtilities, silo: number, range: UtilityRange): ClosedForm {
  const u = checkUtilities(utilities, 'utilities');
  checkSilo('silo', silo, u.n);
  const { hi } = checkRange(range);
  return { value: Math.max(0, hi - u.withOnly[silo]!), unbounded: false };
}

/**
 * FP self-gain (papers/003 Eq. 2–3). With R = Σ_{j≠i} α(j) fixed, FP(i) = v(M) α/(α + R) is
 * monotone in α = α(i) on each side of the pole α = −R, and α ranges over [α at (withOnly, without)
 * = (lo, hi), α at (hi, lo)]. If α + R can reach 0 on that interval the gain is unbounded;
 * otherwise it is max(0, max over the two ends − FP_honest(i)).
 * @param utilities the round's honest utilities.
 * @param silo the misreporting silo.
 * @param range the range of a report.
 * @throws RangeError/TypeError naming the parameter on bad input.
 */
export function fpSelfGain(utilities: PrivateUtilities, silo: number, range: UtilityRange): ClosedForm {
  const u = checkUtilities(utilities, 'utilities');
  checkSilo('silo', silo, u.n);
  const { lo, hi } = checkRange(range);
  const alpha = schemeWeights('fp', u);
  const rest = alpha.reduce((s, x) => s + x, 0) - alpha[silo]!;
  // α(i) (Eq. 3) is increasing in withOnly_i and decreasing in without_i
  const alphaAt = (withOnly: number, without: number) =>
    schemeWeights('fp', replaceReports(u, silo, withOnly, without))[silo]!;
  const alphaMin = alphaAt(lo, hi);
  const alphaMax = alphaAt(hi, lo);
  if (alphaMin + rest <= 0 && alphaMax + rest >= 0)
    return { value: Number.POSITIVE_INFINITY, unbounded: true };
  const honest = schemeScores('fp', u)[silo]!;
  const best = Math.max((u.full * alphaMin) / (alphaMin + rest), (u.full * alphaMax) / (alphaMax + rest)); // Eq. 2
  return { value: Math.max(0, best - honest), unbounded: false };
}

/**
 * EE (mean) self-gain through the normalizer. EE(i) = T₋ᵢ / ((N−1) T) · v(M) with
 * T₋ᵢ = Σ_{j≠i} t_j fixed and T = T₋ᵢ + t_i, t_i = [v(M) − withOnly_i] + [without_i − v(M0)]
 * ∈ [Δ − (hi − lo), Δ + (hi − lo)] (papers/003 Eq. 4–5). If T can reach 0 the gain is unbounded;
 * otherwise max(0, max over the two ends of t_i − EE_honest(i)). Own reports never enter w_i,
 * only T: EE'(i) / EE(i) = T / T'.
 * @param utilities the round's honest utilities.
 * @param silo the misreporting silo.
 * @param range the range of a report.
 * @throws RangeError/TypeError naming the parameter on bad input.
 */
export function eeSelfGain(utilities: PrivateUtilities, silo: number, range: UtilityRange): ClosedForm {
  const u = checkUtilities(utilities, 'utilities');
  checkSilo('silo', silo, u.n);
  const { lo, hi } = checkRange(range);
  const { beta, gamma } = everybodyElseTerms(u);
  const t = beta.map((b, j) => b + gamma[j]!);
  const rest = t.reduce((s, x) => s + x, 0) - t[silo]!;
  const delta = u.full - u.empty;
  const tMin = delta - (hi - lo);
  const tMax = delta + (hi - lo);
  if (rest + tMin <= 0 && rest + tMax >= 0) return { value: Number.POSITIVE_INFINITY, unbounded: true };
  const honest = schemeScores('ee', u)[silo]!;
  const at = (ti: number) => (rest / ((u.n - 1) * (rest + ti))) * u.full;
  return { value: Math.max(0, Math.max(at(tMin), at(tMax)) - honest), unbounded: false };
}

/**
 * An upper bound on the damage one silo can do to another under EE-median (papers/003 §5.3), from
 * the spread of the honest reports alone. For every scored silo k ≠ attacker, the median of the
 * N−1 values {β_j : j ≠ k} holds one free value (the attacker's) and N−2 honest ones
 * h_(1) ≤ … ≤ h_(N−2); a single value can move the median only between the neighbouring order
 * statistics: [h_(m), h_(m+1)] for N−1 = 2m+1 values, [(h_(m−1)+h_(m))/2, (h_(m)+h_(m+1))/2] for
 * N−1 = 2m (computed by putting the free value at ∓∞). Same for γ. This gives intervals for every
 * w_k and, with the attacker's fixed w, for D = Σ_k w_k; then
 *   damage ≤ EEmed_honest(victim) − min{ v(M) w / D : w ∈ [w_victim], D ∈ [D] }.
 * Infinity when the interval of D contains 0 or N < 4 (a median of 2 values moves freely).
 * @param utilities the round's honest utilities.
 * @param attacker the misreporting silo.
 * @param victim the silo whose score falls.
 * @throws RangeError/TypeError naming the parameter on bad input or attacker = victim.
 */
export function eeMedianDamageBound(utilities: PrivateUtilities, attacker: number, victim: number): number {
  const u = checkUtilities(utilities, 'utilities');
  checkSilo('attacker', attacker, u.n);
  checkSilo('victim', victim, u.n);
  if (attacker === victim) throw new RangeError('victim: expected a silo other than the attacker');
  const { n } = u;
  if (n < 4) return Number.POSITIVE_INFINITY;
  const weightsAt = (withOnly: number, without: number) =>
    schemeWeights('eeMedian', replaceReports(u, attacker, withOnly, without));
  // β = v(M) − withOnly: withOnly = +∞ puts β at −∞; γ = without − v(M0): without = −∞ puts γ at −∞.
  const low = weightsAt(Number.MAX_VALUE / 4, -Number.MAX_VALUE / 4);
  const high = weightsAt(-Number.MAX_VALUE / 4, Number.MAX_VALUE / 4);
  const honest = schemeWeights('eeMedian', u);
  let normalizerLo = honest[attacker]!;
  let normalizerHi = honest[attacker]!;
  for (let k = 0; k < n; k++)
    if (k !== attacker) {
      normalizerLo += Math.min(low[k]!, high[k]!);
      normalizerHi += Math.max(low[k]!, high[k]!);
    }
  if (
    !Number.isFinite(normalizerLo) ||
    !Number.isFinite(normalizerHi) ||
    (normalizerLo <= 0 && normalizerHi >= 0)
  )
    return Number.POSITIVE_INFINITY;
  const weightLo = Math.min(low[victim]!, high[victim]!);
  const weightHi = Math.max(low[victim]!, high[victim]!);
  let min = Number.POSITIVE_INFINITY;
  for (const w of [weightLo, weightHi])
    for (const d of [normalizerLo, normalizerHi]) min = Math.min(min, (u.full * w) / d);
  return schemeScores('eeMedian', u)[victim]! - min;
}
