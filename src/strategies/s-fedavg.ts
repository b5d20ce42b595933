/**
 * S-FedAvg (Nagalapatti & Narayanam 2021, "Game of Gradients"), the Shapley-based selection baseline
 * of papers/000 §5.1 and papers/004 §2. Overrides `select` of FedAvg (aggregation stays FedAvg, n_i),
 * and values each round's participants in `aggregationWeights` (which returns FedAvg's weights).
 *
 * What our papers say of it: it "combines FedAvg with SV estimation to favor clients with higher
 * estimated contributions" (000 §2), "adopts MR" and computes the "SV of all permutations (without
 * using the Monte-Carlo sampling)" (000 §5.1), with decay α = 0.7 chosen from {0.6, 0.7, 0.8}
 * (000 §5.1). The rest is our reconstruction, in the form papers/000 uses for FedMS, since the
 * original paper is not among ours:
 *   φ_i      exact Shapley value of participant i in the round's coalition game (MR's per-round SV)
 *   S_i      ← α·S_i + (1 − α)·φ_i for participants (the decay form of papers/000 Eq. 8), S = 0 at first
 *   P_i      = exp(S_i)/Σ_j exp(S_j); k silos drawn without replacement by P (as papers/000 Eq. 12)
 * The original names the relevance update s_i ← α·s_i + β·φ_i with two constants and uses Monte Carlo
 * estimates; papers/000 replaced the estimator by MR, and we tie β to 1 − α.
 */

import { exactShapleyOfGame } from '../../scoring/shapley.js';
import { roundSize, softmax, weightedSample } from './_sampling.js';
import { decayParameter, type ParamsOf, parameters, roundSizeParameters } from './_schema.js';
import { baseWeights, fedAvgVariant } from './fedavg.js';
import type { BuiltInStrategyEntry, Strategy } from './strategy.js';

/** Largest round S-FedAvg values exactly (2^k coalitions). */
export const S_FEDAVG_MAX_PARTICIPANTS = 20;

/** The parameters; defaults: 10 % of the silos (papers/000's 50-silo setting), α = 0.7. */
export const S_FEDAVG_PARAMETERS = parameters({
  ...roundSizeParameters(0.1),
  alpha: decayParameter('the relevance scores', 'S'),
});

/** Parameters of `sFedAvg` (S_FEDAVG_PARAMETERS'). */
export type SFedAvgParams = ParamsOf<typeof S_FEDAVG_PARAMETERS>;

/** S-FedAvg's state: the relevance score S_i of every silo. */
export interface SFedAvgState {
  readonly relevance: Float64Array;
}

const S_FEDAVG = fedAvgVariant<typeof S_FEDAVG_PARAMETERS, SFedAvgState>({
  name: 's-fedavg',
  description: 'S-FedAvg: exact-Shapley selection baseline (Nagalapatti & Narayanam 2021)',
  parameters: S_FEDAVG_PARAMETERS,
  networked: {
    refused:
      'it values silos by exact Shapley values of the coalition game over the selected silos, which needs each silo’s individual update',
  },
  requiresFullVisibility: true,
  init: (setup) => ({ relevance: new Float64Array(setup.numSilos) }),
  select: (state, ctx, o) =>
    weightedSample(ctx.rng, softmax(state.relevance), roundSize(ctx.setup.numSilos, o)),
  async aggregate(state, ctx, o) {
    if (ctx.selected.length > S_FEDAVG_MAX_PARTICIPANTS)
      throw new RangeError(
        `ctx.selected: ${S_FEDAVG.entry.name} values at most ${S_FEDAVG_MAX_PARTICIPANTS} participants exactly, got ${ctx.selected.length}`,
      );
    const phi = (await exactShapleyOfGame(ctx.full.game)).values;
    const relevance = state.relevance.slice();
    ctx.selected.forEach((s, b) => {
      relevance[s] = o.alpha * relevance[s]! + (1 - o.alpha) * phi[b]!;
    });
    return { weights: baseWeights(ctx, 'examples'), state: { relevance }, values: phi.slice() };
  },
});

/**
 * S-FedAvg: softmax selection on decayed per-round exact Shapley values, FedAvg aggregation.
 * Needs full visibility (the coalition game).
 * @throws RangeError naming the parameter for a bad value.
 */
export const sFedAvg: (params?: Partial<SFedAvgParams>) => Strategy<SFedAvgState> = S_FEDAVG.create;

/** The registry entry (./registry.ts): `sFedAvg` from a JSON config. */
export const sFedAvgEntry: BuiltInStrategyEntry = S_FEDAVG.entry;
