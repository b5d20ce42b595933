/**
 * One round of secure aggregation in process: each selected silo quantizes x_i = (w_i·Δ_i, w_i)
 * (protocol/weighted.ts) and the real Bonawitz et al. 2017 state machines sum them
 * (protocol/simulate.ts). The server side learns Σ w_iΔ_i and Σ w_i over the survivors only.
 *
 * Simulation only: every silo's protocol randomness is derived from the public experiment seed
 * (protocol/simulation-random.ts), so this module must never be on a networked path (the silo
 * and the service import nothing that reaches it; test/arch/layers.ts checks).
 */
import type { SigningKeyPair } from '../../crypto/signature.js';
import {
  type CorrectionMode,
  defaultCorruptTolerated,
  roundCorruptTolerated,
  roundThreshold,
} from '../../protocol/config.js';
import type { Fault } from '../../protocol/errors.js';
import { NO_CONTEXT, type RoundContext } from '../../protocol/messages.js';
import { modelContextDigest, weightsContextDigest } from '../../protocol/round-context.js';
import { type DropPoint, simulateRound } from '../../protocol/simulate.js';
import { experimentRandom } from '../../protocol/simulation-random.js';
import { decodeWeightedSum, encodeWeightedInput, type WeightedEncoding } from '../../protocol/weighted.js';

/** What one secure round returns to the server side. */
export interface SecureSum {
  /** Σ_{survivors} w_iΔ_i / Σ_{survivors} w_i (FedAvg step), decoded from Z_(2^32). */
  average: Float64Array;
  /** Σ_{survivors} w_iΔ_i. */
  weightedSum: Float64Array;
  totalWeight: number;
  /** Global silo ids whose inputs are in the sum. */
  survivors: number[];
  /** Global silo ids that were selected but are not in the sum. */
  dropped: number[];
  bytesUp: number;
  bytesDown: number;
  /** Misbehaviour the protocol server detected and survived (none among simulated honest silos). */
  faults: readonly Fault[];
}

/**
 * A round that could not complete: fewer than t survivors at some stage, or a coded failure
 * naming `culprits` (protocol/reconstruct.ts), or an aggregate out of range.
 */
export class SecureRoundAborted extends Error {
  constructor(
    readonly code: string,
    readonly round: number,
    detail: string,
    readonly culprits: readonly number[] = [],
  ) {
    super(`round ${round}: secure aggregation aborted (${code}): ${detail}`);
    this.name = 'SecureRoundAborted';
  }
}

export interface SecureRoundOptions {
  session: string;
  round: number;
  seed: number;
  /** Global ids of the selected silos, in order; `updates[k]` and `weights[k]` belong to `selected[k]`. */
  selected: readonly number[];
  updates: readonly Float32Array[];
  /** Relative weights (any positive scale; normalized to max 1 before quantization). */
  weights: readonly number[];
  /** Every silo's long-term signing key, by global id. */
  identities: readonly SigningKeyPair[];
  /** Clipping bound of each coordinate of w·Δ after normalization. */
  clip: number;
  /** Configured threshold (protocol/config.ts `roundThreshold` derives the round's from it). */
  threshold?: number;
  /** n_C of the whole consortium (default ⌈silos/3⌉ − 1 of the identities). */
  corruptSilos?: number;
  /** The explicit opt-in to thresholds below the active-security bound. */
  weakThreshold?: boolean;
  /** RoundConfig.corrections (default 'off'). */
  corrections?: CorrectionMode;
  /** Dropouts by global silo id. */
  dropouts?: ReadonlyMap<number, DropPoint>;
  /**
   * The round's base model: its digest is part of every silo's signed round context with the
   * digest of (selected, weights) (protocol/round-context.ts); without it the model digest is 0.
   */
  base?: Float32Array;
}

/** Aggregation weights must be finite and ≥ 0. @throws RangeError naming the weight. */
function checkWeights(weights: readonly number[]): void {
  for (const [j, w] of weights.entries())
    if (!(Number.isFinite(w) && w >= 0))
      throw new RangeError(`weights[${j}]: expected a finite number ≥ 0, got ${w}`);
}

/**
 * Runs the protocol over the selected silos and decodes the weighted sum.
 * @throws SecureRoundAborted when the protocol aborts (e.g. BELOW_THRESHOLD).
 */
export async function secureAggregate(o: SecureRoundOptions): Promise<SecureSum> {
  const k = o.selected.length;
  checkWeights(o.weights);
  // All weights 0 (FedMS discarding its coreset) means "aggregate nothing": the sum decodes to zeros.
  const maxWeight = Math.max(...o.weights) || 1;
  // The weights are public to the engine: the smallest one bounds the total weight from below
  // (protocol/weighted.ts checkWeightedSum), so a silo cannot shrink Σw to amplify the step.
  const minWeight = Math.min(...o.weights.map((w) => w / maxWeight));
  const encoding: WeightedEncoding = { valueRange: o.clip, weightRange: 1, n: k, minWeight };
  const inputs = o.updates.map((u, j) => encodeWeightedInput(u, o.weights[j]! / maxWeight, encoding));
  const dropouts = new Map<number, DropPoint>();
  for (const [silo, at] of o.dropouts ?? []) {
    const local = o.selected.indexOf(silo);
    if (local >= 0) dropouts.set(local, at);
  }
  const corruptSilos = o.corruptSilos ?? defaultCorruptTolerated(o.identities.length);
  const weak = o.weakThreshold === true;
  const threshold = roundThreshold(k, { threshold: o.threshold, corruptSilos, weakThreshold: weak });
  const context: RoundContext = {
    model: o.base ? modelContextDigest(o.base) : NO_CONTEXT.model,
    weights: weightsContextDigest(o.selected, o.weights),
  };
  const r = await simulateRound({
    session: o.session,
    round: o.round,
    threshold,
    corruptTolerated: roundCorruptTolerated(k, corruptSilos),
    ...(weak ? { weakThreshold: true } : {}),
    corrections: o.corrections ?? 'off',
    encoding,
    inputs,
    signingKeys: o.selected.map((s) => o.identities[s]!),
    // In process every silo has the same view: one context for all (issue 27).
    contexts: o.selected.map(() => context),
    random: (local) => experimentRandom(o.seed, o.round, o.selected[local]!),
    dropouts,
  });
  if (!r.ok)
    throw new SecureRoundAborted(
      r.code,
      o.round,
      r.detail,
      (r.culprits ?? []).map((l) => o.selected[l]!),
    );
  const sum = decodeWeightedSum(r.result.sum, encoding, r.result.survivors.length);
  const survivors = r.result.survivors.map((l) => o.selected[l]!);
  return {
    average: sum.average,
    weightedSum: sum.weightedSum.map((x) => x * maxWeight),
    totalWeight: sum.totalWeight * maxWeight,
    survivors,
    dropped: o.selected.filter((s) => !survivors.includes(s)),
    bytesUp: r.bytesUp,
    bytesDown: r.bytesDown,
    faults: r.result.faults.map((f) => ({ ...f, silo: o.selected[f.silo]! })),
  };
}

/**
 * The same sum without the protocol (`secureAggregation.enabled: false`): Σ w_iΔ_i over the
 * survivors, Σ w_i, and the average, which is all zeros when every weight is 0 (FedMS discarding its
 * coreset: "aggregate nothing"), as in the secure path.
 * @throws RangeError when a weight is negative or not finite.
 */
export function plaintextAggregate(
  selected: readonly number[],
  survivors: readonly number[],
  updates: readonly Float32Array[],
  weights: readonly number[],
  dim: number,
): { weightedSum: Float64Array; totalWeight: number; average: Float64Array } {
  checkWeights(weights);
  const weightedSum = new Float64Array(dim);
  let totalWeight = 0;
  selected.forEach((s, b) => {
    if (!survivors.includes(s)) return;
    totalWeight += weights[b]!;
    const u = updates[b]!;
    for (let j = 0; j < u.length; j++) weightedSum[j]! += weights[b]! * u[j]!;
  });
  const average = totalWeight > 0 ? weightedSum.map((x) => x / totalWeight) : new Float64Array(dim);
  return { weightedSum, totalWeight, average };
}
