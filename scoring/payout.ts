/**
 * The headline's weight, `payout` (issue 37, "a headline a consortium can pay out"): the weight
 * of papers/003 Eq. 4 built from the other silos' reports (EE-median, §5.3), gated by what the
 * silo's own update did against what a zero update would have done.
 *
 * A silo whose update is zero reports v(M0 + 0) = v(M0) and v(M − 0) = v(M): its own marginals
 * LOO_i = v(M) − v(M − U_i) and IOI_i = v(M0 + U_i) − v(M0) are both 0 (papers/003 Def. 2, Eq. 3).
 * The improvement over that silo is a_i = (LOO_i + IOI_i)/2 = α(i) (Eq. 3). The weight is
 *
 *   w_i = base_i · g_i · (1 + λ · clip(z_i, −1, 1)),
 *   base_i = (median_{j≠i} β_j + median_{j≠i} γ_j) / (2(N − 1))        (EE-median's weight)
 *   g_i    = 0 if a_i ≤ 0;  min(1, a_i / (τ · m_i)) with m_i = median_{j≠i} a_j > 0;  1 if m_i ≤ 0
 *   z_i    = (a_i − m_i) / s_i,  s_i = 1.2533 · mean_{j≠i} |a_j − m_i|  (0 when s_i = 0)
 *
 * base_i never reads silo i's reports (Property 5), so a silo moves its own weight only through
 * the gate, which saturates at 1 (a silo at least τ times the others' median gains nothing by
 * exaggerating), and the tie-break, bounded by the factor (1 + λ)/(1 − λ). A zero update gets
 * g = 0 whatever the others report; an update that made the model worse (a ≤ 0) too. The weight
 * has no normalizer, so a D ≤ 0 cannot reverse it. The variants measured for docs/findings.md
 * (base eeMedian/ee/trimmed, gate on α or LOO, τ, λ) are parameters of one function.
 */
import { medianOfOthers } from './_median.js';
import type { CheckedUtilities } from './private.js';

/** A variant of the weight (docs/findings.md, "The headline score": the candidates measured). */
export interface PayoutVariant {
  /** The others'-reports weight: EE-median's (median), EE's (mean) or a trimmed mean. */
  base: 'eeMedian' | 'ee' | 'trimmed';
  /** The own marginal the gate reads: α(i) (Eq. 3), LOO(i) (Def. 2), or none (g = 1). */
  gate: 'alpha' | 'loo' | 'none';
  /** τ: the fraction of the others' median at which the gate opens fully. */
  tau: number;
  /** λ: the tie-break's weight (0: none). */
  tie: number;
}

/** The headline's variant (chosen in docs/findings.md). */
export const DEFAULT_PAYOUT_VARIANT: PayoutVariant = Object.freeze({
  base: 'eeMedian',
  gate: 'alpha',
  tau: 0.5,
  tie: 0.1,
});

/** 1/√(2/π): the mean absolute deviation of a normal, scaled to its standard deviation. */
const MEAN_AD_TO_SD = 1.2533141373155;

/** Mean of the others' values with the lowest and highest left out (the mean when fewer than 4). */
function trimmedOfOthers(t: Float64Array): Float64Array {
  const n = t.length;
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const others = Array.from(t).filter((_, j) => j !== i);
    others.sort((x, y) => x - y);
    const kept = others.length >= 4 ? others.slice(1, -1) : others;
    out[i] = kept.reduce((s, x) => s + x, 0) / kept.length;
  }
  return out;
}

/** The base weight from the others' Eq. 5 terms (β_j = v(M) − v(M0 + U_j), γ_j = v(M − U_j) − v(M0)). */
function baseWeights(u: CheckedUtilities, base: PayoutVariant['base']): Float64Array {
  const { full, empty, withOnly, without, n } = u;
  const beta = withOnly.map((x) => full - x);
  const gamma = without.map((x) => x - empty);
  const out = new Float64Array(n);
  if (base === 'ee') {
    let sb = 0;
    let sg = 0;
    for (let j = 0; j < n; j++) {
      sb += beta[j]!;
      sg += gamma[j]!;
    }
    for (let i = 0; i < n; i++) out[i] = (sb - beta[i]! + sg - gamma[i]!) / (2 * (n - 1));
    return out;
  }
  const mb = base === 'eeMedian' ? medianOfOthers(beta) : trimmedOfOthers(beta);
  const mg = base === 'eeMedian' ? medianOfOthers(gamma) : trimmedOfOthers(gamma);
  for (let i = 0; i < n; i++) out[i] = (mb[i]! + mg[i]!) / 2;
  return out;
}

/**
 * The headline's weights w_i (see the module comment) on checked utilities.
 * @param u utilities as `checkUtilities` returns them (not checked again).
 * @param variant the variant; default the headline's.
 */
export function payoutWeights(
  u: CheckedUtilities,
  variant: PayoutVariant = DEFAULT_PAYOUT_VARIANT,
): Float64Array {
  const { full, empty, withOnly, without, n } = u;
  // EE's and EE-median's weights are on the scale of Eq. 5 (÷ (N−1)² and ÷ (N−1)); the base here
  // is the others' mean/median term itself ÷ (N − 1), EE-median's scale, for every variant.
  const base = baseWeights(u, variant.base).map((b) => b / (n - 1));
  if (variant.gate === 'none') return base;
  const a = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const loo = full - without[i]!; // Def. 2
    a[i] = variant.gate === 'loo' ? loo : (loo + (withOnly[i]! - empty)) / 2; // Eq. 3: α(i)
  }
  const m = medianOfOthers(a);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const ai = a[i]!;
    const mi = m[i]!;
    const gate = ai <= 0 ? 0 : mi <= 0 ? 1 : Math.min(1, ai / (variant.tau * mi));
    let tie = 0;
    if (variant.tie > 0) {
      let dev = 0;
      for (let j = 0; j < n; j++) if (j !== i) dev += Math.abs(a[j]! - mi);
      const s = (MEAN_AD_TO_SD * dev) / (n - 1);
      if (s > 0) tie = Math.max(-1, Math.min(1, (ai - mi) / s));
    }
    out[i] = base[i]! * gate * (1 + variant.tie * tie);
  }
  return out;
}
