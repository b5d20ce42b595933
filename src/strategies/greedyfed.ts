/**
 * GreedyFed (Singhal, Pandey & Popovski 2024, "Greedy Shapley Client Selection"), the GTG-based
 * selection baseline of papers/000 §5.1 and papers/004 §2. Overrides `select` of FedAvg (aggregation
 * stays FedAvg, n_i) and values each round's participants by GTG-Shapley in `aggregationWeights`.
 *
 * What our papers say of it: it "selects clients using a fast SV approximation method known as GTG"
 * (000 §2), "uses a biased, fast Shapley approximation to pick top-contributing clients" (004 §2),
 * with decay α = 0.7 chosen from {0.6, 0.7, 0.8} (000 §5.1). The rest is our reconstruction (the
 * original paper is not among ours):
 *   exploration   rounds 1..⌈N/k⌉ visit every silo once, k at a time, in an order fixed by the seed
 *                 (round-robin; the last block wraps around to the start of the order);
 *   valuation     φ_i by GTG-Shapley (scoring/gtg.ts, papers/000 Alg. 1) on the round's game;
 *   accumulation  u_i ← α·u_i + (1 − α)·φ_i for participants ('ema', default) or the running mean of
 *                 φ_i over i's valuations ('mean');
 *   selection     afterwards the k silos with the largest u_i, greedily (ties to the lower id).
 * GTG tolerances default to papers/000's ε_b = ε_i = 0.001; its evaluation cap (1000) is ours.
 */

import Type from 'typebox';
import { gtgShapley } from '../../scoring/gtg.js';
import { createRng, randomPermutation } from '../../scoring/seeded-rng.js';
import { roundSize } from './_sampling.js';
import { decayParameter, type ParamsOf, parameters, roundSizeParameters } from './_schema.js';
import { baseWeights, fedAvgVariant } from './fedavg.js';
import type { BuiltInStrategyEntry, Strategy } from './strategy.js';

/** The parameters; defaults: 10 % of the silos, α = 0.7 (papers/000 §5.1), GTG with ε_b = ε_i = 0.001. */
export const GREEDYFED_PARAMETERS = parameters({
  ...roundSizeParameters(0.1),
  alpha: decayParameter("a silo's accumulated value", 'u'),
  accumulation: Type.Enum(['ema', 'mean'] as const, {
    default: 'ema',
    description: "How a silo's GTG values accumulate: decay by alpha, or their running mean.",
  }),
  budget: Type.Integer({
    minimum: 2,
    default: 1000,
    description: "GTG-Shapley's evaluation cap per round (ours).",
  }),
  epsilonB: Type.Number({
    minimum: 0,
    default: 0.001,
    description: 'ε_b, between-round truncation of GTG-Shapley (papers/000 Alg. 1; §5.1: 0.001).',
  }),
  epsilonI: Type.Number({
    minimum: 0,
    default: 0.001,
    description: 'ε_i, within-round truncation of GTG-Shapley (papers/000 Alg. 1; §5.1: 0.001).',
  }),
});

/** Parameters of `greedyFed` (GREEDYFED_PARAMETERS'). */
export type GreedyFedParams = ParamsOf<typeof GREEDYFED_PARAMETERS>;

/** GreedyFed's state. */
export interface GreedyFedState {
  /** Accumulated GTG value u_i of every silo. */
  readonly value: Float64Array;
  /** Valuations of every silo so far (for 'mean'). */
  readonly valuations: Float64Array;
  /** Exploration order of the silos (fixed at init from the seed). */
  readonly order: readonly number[];
}

/** The k silos with the largest values, ties to the lower id; increasing ids. */
export function topK(values: ArrayLike<number>, k: number): number[] {
  return Array.from({ length: values.length }, (_, i) => i)
    .sort((a, b) => values[b]! - values[a]! || a - b)
    .slice(0, k)
    .sort((a, b) => a - b);
}

const GREEDYFED = fedAvgVariant<typeof GREEDYFED_PARAMETERS, GreedyFedState>({
  name: 'greedyfed',
  description: 'GreedyFed: GTG-Shapley greedy selection baseline (Singhal et al. 2024)',
  parameters: GREEDYFED_PARAMETERS,
  networked: {
    refused:
      'it values silos by GTG-Shapley on the coalition game over the selected silos, which needs each silo’s individual update',
  },
  requiresFullVisibility: true,
  init(setup) {
    const n = setup.numSilos;
    return {
      value: new Float64Array(n),
      valuations: new Float64Array(n),
      order: Array.from(randomPermutation(createRng(setup.seed), n)),
    };
  },
  select(state, ctx, o) {
    const n = ctx.setup.numSilos;
    const k = roundSize(n, o);
    const explorationRounds = Math.ceil(n / k);
    if (ctx.round <= explorationRounds) {
      const start = (ctx.round - 1) * k;
      const picked = new Set<number>();
      for (let j = 0; j < k; j++) picked.add(state.order[(start + j) % n]!);
      return [...picked].sort((a, b) => a - b);
    }
    return topK(state.value, k);
  },
  async aggregate(state, ctx, o) {
    const est = await gtgShapley(ctx.full.game, {
      budget: o.budget,
      rng: ctx.rng,
      betweenRoundTolerance: o.epsilonB,
      withinRoundTolerance: o.epsilonI,
    });
    const value = state.value.slice();
    const valuations = state.valuations.slice();
    ctx.selected.forEach((s, b) => {
      const phi = est.values[b]!;
      valuations[s]! += 1;
      value[s] =
        o.accumulation === 'ema'
          ? o.alpha * value[s]! + (1 - o.alpha) * phi
          : value[s]! + (phi - value[s]!) / valuations[s]!;
    });
    return {
      weights: baseWeights(ctx, 'examples'),
      state: { value, valuations, order: state.order },
      values: est.values.slice(),
    };
  },
});

/**
 * GreedyFed: round-robin exploration, then greedy top-k by accumulated GTG-Shapley value.
 * Needs full visibility (the coalition game).
 * @throws RangeError naming the parameter for a bad value.
 */
export const greedyFed: (params?: Partial<GreedyFedParams>) => Strategy<GreedyFedState> = GREEDYFED.create;

/** The registry entry (./registry.ts): `greedyFed` from a JSON config. */
export const greedyFedEntry: BuiltInStrategyEntry = GREEDYFED.entry;
