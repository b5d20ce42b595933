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
