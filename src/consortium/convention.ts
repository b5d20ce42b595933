/**
 * The coalition conventions: how coalition models are formed from the updates (docs/architecture.md,
 * "One round, private mode"; `aggregation.convention` in a configuration, `convention` of a
 * consortium). Apart from coalition.ts so that configurations and the service can name them
 * without loading TensorFlow.js; every other module takes the names from here.
 *
 * - FedAvg (the default): M_S = M0 + Σ_{i∈S} wᵢΔᵢ / Σ_{i∈S} wᵢ.
 * - Additive, the papers' literal form: M_S = M0 + Σ_{i∈S} wᵢΔᵢ / Σ_all w (equal weights:
 *   Σ_{i∈S} Δᵢ / N).
 */

/** The conventions' names, the default first. */
export const CONVENTIONS = ['fedavg', 'additive'] as const;

/** How coalition models are formed from the updates. */
export type Convention = (typeof CONVENTIONS)[number];

/** FedAvg coalitions (a coalition's own weights normalize it) and the papers' additive ones. */
export const [FEDAVG_CONVENTION, ADDITIVE_CONVENTION] = CONVENTIONS;

/** The convention of a configuration or consortium that names none. */
export const DEFAULT_CONVENTION: Convention = FEDAVG_CONVENTION;

/**
 * The one owner of the coalition model's scale: M_S = M0 + s(S)·Σ_{i∈S} wᵢΔᵢ with
 *   FedAvg:   s(S) = 1 / Σ_{i∈S} wᵢ, and s = 0 for a coalition without weight (Σ_{i∈S} wᵢ ≤
 *             1e-12·Σ_all w, e.g. ∅ or a silo of weight 0 alone): M_S = M0;
 *   additive: s = 1 / Σ_all w for every S (0 when every weight is 0).
 * Full-visibility evaluation (coalition.ts, every coalition) and the silo's two private coalitions
 * (src/consortium/private-scoring.ts, M0 + U_i and M − U_i) both take it from here.
 */
export function coalitionScale(convention: Convention, coalitionWeight: number, totalWeight: number): number {
  if (convention === ADDITIVE_CONVENTION) return totalWeight > 0 ? 1 / totalWeight : 0;
  return coalitionWeight > 1e-12 * totalWeight && coalitionWeight > 0 ? 1 / coalitionWeight : 0;
}
