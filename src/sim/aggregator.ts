/**
 * Aggregation behind one interface: the round engine hands the selected silos' updates and weights
 * to an `Aggregator` chosen once per run from the configuration, and gets back the sum over the
 * survivors and the FedAvg step. Secure: the Bonawitz et al. 2017 protocol in process
 * (./secure-round.ts, `secureAggregate`), the server side learning only Σ w_iΔ_i and Σ w_i.
 * Plaintext (`secureAggregation.enabled: false`): the same sum without the protocol
 * (`plaintextAggregate`). The retraining game (./retraining-game.ts) aggregates with the plaintext one.
 */
import type { SigningKeyPair } from '../../crypto/signature.js';
import { type CorrectionMode, defaultCorruptTolerated } from '../../protocol/config.js';
import type { Fault } from '../../protocol/errors.js';
import type { DropPoint } from '../../protocol/simulate.js';
import { type Convention, DEFAULT_CONVENTION } from '../consortium/convention.js';
import type { ExperimentConfig } from '../records/config.js';
import { plaintextAggregate, secureAggregate } from './secure-round.js';

/** One round's input to an aggregator; `updates[k]` and `weights[k]` belong to `selected[k]`. */
export interface AggregationInput {
  /** 1-based round index. */
  round: number;
  /** Global ids of the selected silos, in order. */
  selected: readonly number[];
  updates: readonly Float32Array[];
  /** Relative weights ≥ 0 (normalized over the survivors). */
  weights: readonly number[];
  /** Length of the parameter vector. */
  dim: number;
}

/** What the server side learns from one round's aggregation. */
export interface AggregateSum {
  /** Global ids whose inputs are in the sum, and those selected but not in it. */
  survivors: number[];
  dropped: number[];
  /** Σ_{survivors} w_iΔ_i. */
  weightedSum: Float64Array;
  /** Σ_{survivors} w_i. */
  totalWeight: number;
  /** Σ w_iΔ_i / Σ w_i (all zeros when every weight is 0: "aggregate nothing"). */
  average: Float64Array;
  /** Misbehaviour the secure-aggregation server detected and survived (none in plaintext). */
  faults?: readonly Fault[];
}

/** Sums a round's weighted updates (secure or plaintext; the caller cannot tell). */
export interface Aggregator {
  /** True when the sum is computed under secure aggregation. */
  readonly secure: boolean;
  aggregate(input: AggregationInput): Promise<AggregateSum>;
}

/** Simulated dropouts: silo `silo` vanishes in round `round` at point `at` of the protocol. */
export interface Dropout {
  round: number;
  silo: number;
  at: DropPoint;
}

function dropoutsIn(dropouts: readonly Dropout[], round: number): Map<number, DropPoint> {
  const out = new Map<number, DropPoint>();
  for (const d of dropouts) if (d.round === round) out.set(d.silo, d.at);
  return out;
}

/** Options of `secureAggregator` (see `SecureRoundOptions` in ./secure-round.ts). */
export interface SecureAggregatorOptions {
  session: string;
  seed: number;
  /** Every silo's long-term signing key, by global id. */
  identities: readonly SigningKeyPair[];
  clip: number;
  threshold?: number;
  /** n_C of the consortium (default ⌈n/3⌉ − 1 of the identities). */
  corruptSilos?: number;
  weakThreshold?: boolean;
  corrections?: CorrectionMode;
  dropouts?: readonly Dropout[];
}

/**
 * Aggregation by the secure-aggregation protocol (`secureAggregate`); a silo dropping out at any
 * point is left out of the sum.
 * @throws SecureRoundAborted (from `aggregate`) when fewer than t silos survive a stage.
 */
export function secureAggregator(o: SecureAggregatorOptions): Aggregator {
  return {
    secure: true,
    async aggregate(input) {
      const sum = await secureAggregate({
        session: o.session,
        round: input.round,
        seed: o.seed,
        selected: input.selected,
        updates: input.updates,
        weights: input.weights,
        identities: o.identities,
        clip: o.clip,
        ...(o.threshold !== undefined ? { threshold: o.threshold } : {}),
        ...(o.corruptSilos !== undefined ? { corruptSilos: o.corruptSilos } : {}),
        ...(o.weakThreshold !== undefined ? { weakThreshold: o.weakThreshold } : {}),
        ...(o.corrections !== undefined ? { corrections: o.corrections } : {}),
        dropouts: dropoutsIn(o.dropouts ?? [], input.round),
      });
      const { survivors, dropped, weightedSum, totalWeight, average, faults } = sum;
      return { survivors, dropped, weightedSum, totalWeight, average, faults };
    },
  };
}

/**
 * Aggregation in the clear (`plaintextAggregate`): a silo configured to drop out in a round, at
 * whatever point, is left out of that round's sum.
 * @throws RangeError (from `aggregate`) when a weight is negative or not finite.
 */
export function plaintextAggregator(o: { dropouts?: readonly Dropout[] } = {}): Aggregator {
  return {
    secure: false,
    async aggregate(input) {
      const dropouts = dropoutsIn(o.dropouts ?? [], input.round);
      const survivors = input.selected.filter((s) => !dropouts.has(s));
      const dropped = input.selected.filter((s) => dropouts.has(s));
      const sum = plaintextAggregate(input.selected, survivors, input.updates, input.weights, input.dim);
      return { survivors, dropped, ...sum };
    },
  };
}

/**
 * The run's aggregator from `cfg.secureAggregation` (default: enabled, clip 1, the default
 * threshold and n_C, corrections off, no dropouts).
 */
export function aggregatorOf(
  cfg: Pick<ExperimentConfig, 'secureAggregation'>,
  run: { session: string; seed: number; identities: readonly SigningKeyPair[] },
): Aggregator {
  const sa = cfg.secureAggregation ?? {};
  const dropouts = sa.dropouts ?? [];
  if (!(sa.enabled ?? true)) return plaintextAggregator({ dropouts });
  return secureAggregator({
    ...run,
    clip: sa.clip ?? 1,
    ...(sa.threshold !== undefined ? { threshold: sa.threshold } : {}),
    corruptSilos: sa.corruptSilos ?? defaultCorruptTolerated(run.identities.length),
    ...(sa.weakThreshold !== undefined ? { weakThreshold: sa.weakThreshold } : {}),
    ...(sa.corrections !== undefined ? { corrections: sa.corrections } : {}),
    dropouts,
  });
}

/** The run's coalition-model convention (`aggregation.convention`; src/consortium/convention.ts). */
export function conventionOf(cfg: Pick<ExperimentConfig, 'aggregation'>): Convention {
  return cfg.aggregation?.convention ?? DEFAULT_CONVENTION;
}

/**
 * The next global model M = M0 + Σ w_iΔ_i / Σ w_i, as float32 (a new array).
 * @throws RangeError when the lengths differ.
 */
export function applyAverage(base: Float32Array, average: ArrayLike<number>): Float32Array {
  if (average.length !== base.length)
    throw new RangeError(`average: expected ${base.length} entries, got ${average.length}`);
  const next = new Float32Array(base.length);
  for (let j = 0; j < base.length; j++) next[j] = base[j]! + average[j]!;
  return next;
}
