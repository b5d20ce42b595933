/**
 * FedTSV (papers/002 Alg. 2): FedAvg's random selection (line 3: "Server selects a subset of
 * clients"; the paper fixes no rule) with adaptive aggregation weights from the cumulative
 * Trajectory Shapley Value. Overrides `aggregationWeights` of FedAvg:
 *
 *   Δ_val^t      the server's K optimizer steps on its validation set, K = the round's mean local
 *                steps or `training.validationSteps` (lines 14–19; trained by the engine,
 *                ../sim/round/references.ts)
 *   φ_i(v^t)     per-round TSV of participant i, utility of Eq. 9–11 against Δ_val^t (line 22)
 *   φ_i^{t+1}    = φ_i^t + φ_i(v^t) for participants, unchanged otherwise (lines 20–26, Eq. 12)
 *   α_i^{t+1}    = max(0, φ_i^{t+1}) (line 27, Eq. 13)
 *   θ^{t+1}      = Σ_{i∈S_t} α_i^{t+1}/Σ_{j∈S_t} α_j^{t+1} · θ_i^{t+1} (line 29)
 *
 * The math is scoring/trajectory.ts (`updateGeometry`, `trajectoryShapley`, `accumulateTrajectory`,
 * `trajectoryWeights`, which falls back to uniform weights when every α is 0). Exact TSV for up to
 * 20 participants, permutation sampling beyond ("we employ a Monte Carlo approximation", §III); the
 * sampled budget has no value in the paper — ours is 100 permutations, 1 + 100·N utilities.
 */

import Type from 'typebox';
import {
  accumulateTrajectory,
  trajectoryShapley,
  trajectoryWeights,
  updateGeometry,
} from '../../scoring/trajectory.js';
import { type ParamsOf, parameters, roundSizeParameters } from './_schema.js';
import { fedAvgVariant } from './fedavg.js';
import type { BuiltInStrategyEntry, Strategy } from './strategy.js';

/** The parameters; defaults: every silo every round (the paper fixes no selection), TSV exact if possible. */
export const FEDTSV_PARAMETERS = parameters({
  ...roundSizeParameters(1),
  method: Type.Enum(['auto', 'exact', 'sampled'] as const, {
    default: 'auto',
    description:
      'Per-round Trajectory Shapley: exact up to 20 participants and sampled beyond (auto), always exact, or always sampled ("a Monte Carlo approximation", papers/002 §III).',
  }),
  permutations: Type.Integer({
    minimum: 1,
    default: 100,
    description:
      'Permutations when sampling: 1 + permutations·N utilities for N participants (no value in the paper).',
  }),
  coalitionWeights: Type.Enum(['equal', 'examples'] as const, {
    default: 'equal',
    description:
      "The coalition's mean update in papers/002 Eq. 9: plain (the paper) or weighted by example counts.",
  }),
});

/** Parameters of `fedTsv` (FEDTSV_PARAMETERS'). */
export type FedTsvParams = ParamsOf<typeof FEDTSV_PARAMETERS>;

/** FedTSV's state: the cumulative TSV φ_i of every silo (φ^0 = 0, Alg. 2 line 1). */
export interface FedTsvState {
  readonly cumulative: Float64Array;
}

const FEDTSV = fedAvgVariant<typeof FEDTSV_PARAMETERS, FedTsvState>({
  name: 'fedtsv',
  description: 'FedTSV: adaptive weights from Trajectory Shapley (papers/002 Alg. 2)',
  parameters: FEDTSV_PARAMETERS,
  networked: {
    refused:
      'its weights are Trajectory Shapley values computed from each silo’s individual update and the server’s reference update',
  },
  requiresFullVisibility: true,
  needsReferenceUpdate: true, // Δ_val of Eq. 10
  init: (setup) => ({ cumulative: new Float64Array(setup.numSilos) }),
  async aggregate(state, ctx, o) {
    const { full } = ctx;
    if (full.referenceUpdate === undefined)
      throw new TypeError(
        `ctx.full.referenceUpdate: ${FEDTSV.entry.name} needs the validation reference update Δ_val`,
      );
    const geometry = updateGeometry(full.updates, full.referenceUpdate); // Eq. 9–11 inputs
    const k = ctx.selected.length;
    const est = trajectoryShapley(geometry, {
      method: o.method,
      budget: 1 + o.permutations * k,
      rng: ctx.rng,
      ...(o.coalitionWeights === 'examples'
        ? { weights: ctx.selected.map((s) => ctx.setup.silos[s]!.examples) }
        : {}),
    }); // line 22
    const cumulative = accumulateTrajectory(state.cumulative, ctx.selected, est.values); // lines 20–26
    const weights = trajectoryWeights(cumulative, ctx.selected); // lines 27, 29
    return { weights, state: { cumulative }, values: est.values.slice() };
  },
});

/**
 * FedTSV adaptive aggregation. Needs full visibility: the round's updates and `referenceUpdate`.
 * @throws RangeError naming the parameter for a bad value.
 */
export const fedTsv: (params?: Partial<FedTsvParams>) => Strategy<FedTsvState> = FEDTSV.create;

/** The registry entry (./registry.ts): `fedTsv` from a JSON config. */
export const fedTsvEntry: BuiltInStrategyEntry = FEDTSV.entry;
