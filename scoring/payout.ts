/**
 * The headline's weight, `payout` (issue 37, "a headline a consortium can pay out"): the weight
 * of papers/003 Eq. 4 built from the other silos' reports (EE-median, §5.3), gated by what the
 * silo's own update did against what a zero update would have done.
 *
 * A silo whose update is zero reports v(M0 + 0) = v(M0) and v(M − 0) = v(M): its own marginals
 * LOO_i = v(M) − v(M − U_i) and IOI_i = v(M0 + U_i) − v(M0) are both 0 (papers/003 Def. 2, Eq. 3).
 * The improvement over that silo is a_i = (LOO_i + IOI_i)/2 = α(i) (Eq. 3). The weight is
 *
 *   w_i = G_i · (c_i · r_i + 1 − c_i) · (1 + λ · clip(z_i, −1, 1)),   G_i = min(base_i⁺, even)
 *   base_i = (median_{j≠i} β_j + median_{j≠i} γ_j) / (2(N − 1))        (EE-median's weight)
 *   even   = max(0, v(M) − v(M0)) / (N − 1)          (the round's gain, equal parts at EE-median's scale)
 *   r_i    = 0 if a_i ≤ 0;  min(1, a_i / (τ · m_i)) with m_i = median_{j≠i} a_j > 0;  1 if m_i ≤ 0
 *   c_i    = 0 if m_i⁺ ≤ 0;  else min(1, m_i⁺ / (κ · σ_i))
 *   z_i    = (a_i − m_i) / s_i,  s_i = 1.2533 · mean_{j≠i} |a_j − m_i|  (0 when s_i = 0)
 *   τ = 0.5, κ = 1, λ = 0.05
 *
 * m_i⁺ is the median of the others' a_j with their 2 lowest left out and σ_i = 1.4826 · the MAD of
 * the others' a_j about m_i⁺ with the 2 largest deviations left out (1.2533 · their MeanAD when
 * the MAD is 0; c_i = 1 when that is 0 too; at least 3 values stay, so small rounds trim fewer).
 *
 * c_i is the round's signal as the *other* silos show it: how clearly their improvements over a
 * zero update exceed zero, against their own spread. Where they do (c_i = 1: every round of a file
 * like issue 37's, the first rounds of a trained run) the gate r_i decides: a free rider (a_i = 0)
 * gets 0, a silo at least τ times the others' median the full G_i, which there is EE-median's
 * weight (base_i ≤ even whenever the others' a_j are mostly above zero). Where they do not — the
 * later rounds of a non-IID run, where every singleton model is worse than M0 (IOI < 0) and α is
 * noise around or below zero — the gate cannot tell a contributor from a free rider, and it was a
 * lever: a silo whose honest gate was shut opened it by overstating α within what the detector
 * lets through, and a pair of one open and one shut silo doubled its weight (×2.21 in the
 * quickstart's round 5, docs/audit.md). Such a round pays every silo G_i, which there is the
 * round's gain in equal parts (`even`, read from no silo's report), ordered only by the
 * tie-break; c_i blends the two in between. The cap G_i = min(base_i⁺, even) in both parts is
 * what keeps c_i from being a lever itself: c_i changes only how much of G_i a shut gate keeps,
 * never G_i, so a silo whose gate is open (r_i = 1) gains nothing when colluders move c_i; and the
 * trimming leaves out the values colluders would report to lower it (a low a_j, a far one).
 *
 * base_i, c_i and `even` never read silo i's reports (Property 5), so a silo moves its own weight
 * only through r_i, which saturates at 1 (a silo at least τ times the others' median gains nothing
 * by exaggerating), and the tie-break, bounded by the factor (1 + λ)/(1 − λ). A zero update gets
 * r = 0 whatever the others report; an update that made the model worse (a ≤ 0) too.
 * The weight has no normalizer, so a D ≤ 0 cannot reverse it, and it is never negative; a round
 * that made the model worse (v(M) < v(M0)) pays nothing. The variants measured for docs/findings.md (base
 * eeMedian/ee/trimmed, gate on α or LOO, τ, λ, the signal blend and what a round without signal
 * pays) are parameters of one function.
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
  /**
   * κ: the gated part is blended with a round-without-signal part by the others' signal
   * c_i = clip(m_i⁺ / (κ σ_i), 0, 1) (see the module comment). Absent: no blend (issue 37's first
   * version: the gate alone, 1 for any a_i > 0 when m_i ≤ 0).
   */
  signal?: number;
  /** A factor on the round-without-signal part (with `signal`). Default 1. */
  quiet?: number;
  /**
   * What a round without signal pays (with `signal`): 'eeMedian' (default) the base above,
   * 'even' the round's improvement in equal parts, max(0, v(M) − v(M0)) / (N − 1), read from no
   * silo's reports; 'evenCapped' that, with the gated base capped at it too (so a colluder that
   * moves the signal cannot trade a round's even part for a larger EE-median weight); 'capped'
   * min(base_i⁺, even) in both parts, so that c_i matters only to a silo whose gate is not open.
   */
  quietBase?: 'eeMedian' | 'even' | 'evenCapped' | 'capped';
  /** How many of the others' lowest α (and farthest deviations) c_i leaves out. Default 0. */
  trim?: number;
}

/** The headline's variant (chosen in docs/findings.md). */
export const DEFAULT_PAYOUT_VARIANT: PayoutVariant = Object.freeze({
  base: 'eeMedian',
  gate: 'alpha',
  tau: 0.5,
  tie: 0.05,
  signal: 1,
  quiet: 1,
  quietBase: 'capped',
  trim: 2,
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

/** 1.4826: MAD to the standard deviation of a normal. */
const MAD_TO_SD = 1.482602218505602;

/**
 * c_i = clip(m_i⁺ / (κ σ_i), 0, 1) from the others' α only: m_i⁺ their median with their `trim`
 * lowest left out, σ_i their MAD about m_i⁺ with the `trim` largest deviations left out (MeanAD
 * of those when the MAD is 0; c_i = 1 when both are 0). Trimmed so that colluders among the
 * others, who would lower c_i by reporting a low α or a far one, are the values left out; at
 * least 3 values stay (fewer trimmed in small rounds).
 */
function signalOfOthers(a: Float64Array, kappa: number, trim: number): Float64Array {
  const n = a.length;
  const out = new Float64Array(n);
  const k = Math.max(0, Math.min(trim, n - 1 - 3));
  const sorted = Float64Array.from(a).sort();
  const others = new Float64Array(n - 1);
  const dev = new Float64Array(n - 1);
  for (let i = 0; i < n; i++) {
    // the others' values in order: the sorted values with one copy of a_i left out
    for (let p = 0, q = 0, skipped = false; p < n; p++) {
      if (!skipped && sorted[p] === a[i]) skipped = true;
      else others[q++] = sorted[p]!;
    }
    const mi = sortedMedian(others.subarray(k));
    if (mi <= 0) continue;
    for (let q = 0; q < n - 1; q++) dev[q] = Math.abs(others[q]! - mi);
    const kept = dev.sort().subarray(0, n - 1 - k);
    let sd = MAD_TO_SD * sortedMedian(kept);
    if (sd === 0) sd = (MEAN_AD_TO_SD * kept.reduce((s, x) => s + x, 0)) / kept.length;
    out[i] = sd === 0 ? 1 : Math.min(1, mi / (kappa * sd));
  }
  return out;
}

/** Median of values already in ascending order. */
function sortedMedian(s: Float64Array): number {
  const m = s.length >>> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
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
  const even = Math.max(0, full - empty) / (n - 1);
  const m = medianOfOthers(a);
  const sig = variant.signal === undefined ? undefined : signalOfOthers(a, variant.signal, variant.trim ?? 0);
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const ai = a[i]!;
    const mi = m[i]!;
    const ramp = ai <= 0 ? 0 : mi <= 0 ? 1 : Math.min(1, ai / (variant.tau * mi));
    const c = sig === undefined ? 1 : sig[i]!;
    const qb = variant.quietBase ?? 'eeMedian';
    const capped = Math.min(Math.max(0, base[i]!), even);
    const quietPart =
      (1 - c) * (variant.quiet ?? 1) * (qb === 'eeMedian' ? base[i]! : qb === 'capped' ? capped : even);
    const gated = qb === 'eeMedian' || qb === 'even' ? base[i]! : capped;
    const paid = c * gated * ramp + quietPart;
    let tie = 0;
    if (variant.tie > 0) {
      let dev = 0;
      for (let j = 0; j < n; j++) if (j !== i) dev += Math.abs(a[j]! - mi);
      const s = (MEAN_AD_TO_SD * dev) / (n - 1);
      if (s > 0) tie = Math.max(-1, Math.min(1, (ai - mi) / s));
    }
    out[i] = paid * (1 + variant.tie * tie);
  }
  return out;
}
