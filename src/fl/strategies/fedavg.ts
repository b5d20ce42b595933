/**
 * FedAvg (McMahan et al. 2017): a uniformly random set of silos per round, aggregated with weights
 * proportional to their example counts (papers/000 Eq. 3). The base every other strategy varies: the
 * variants in this folder spread `fedAvg(...)` and override `select` or `aggregationWeights`.
 */

import Type from 'typebox';
import { defaultsOf, parameters, readParameters, roundSizeParameters } from './_params.js';
import {
  checkAggregateContext,
  checkSelectContext,
  checkSetup,
  type RoundSize,
  roundSize,
  uniformSample,
} from './_sampling.js';
import type {
  AggregateContext,
  BuiltInStrategyEntry,
  SelectContext,
  Strategy,
  StrategyParams,
} from './strategy.js';

/** Parameters of `fedAvg` (FEDAVG_PARAMETERS documents them). */
export interface FedAvgParams extends RoundSize {
  /** 'examples' (FedAvg, n_i) or 'equal' (uniform aggregation). */
  weights: 'examples' | 'equal';
}

/** FedAvg's parameters: every silo every round, example-count weights, unless configured. */
export const FEDAVG_PARAMETERS = parameters({
  ...roundSizeParameters(1),
  weights: Type.Enum(['examples', 'equal'] as const, {
    default: 'examples',
    description: "A silo's aggregation weight: its example count n_i (FedAvg, papers/000 Eq. 3) or 1.",
  }),
});

/** Defaults of `fedAvg` (FEDAVG_PARAMETERS'). */
export const FEDAVG_DEFAULTS = defaultsOf<FedAvgParams>(FEDAVG_PARAMETERS);

/** Reads FedAvg's parameters from a strategy config (FEDAVG_PARAMETERS). */
export function readFedAvgParams(p: StrategyParams): FedAvgParams {
  return readParameters(p, FEDAVG_PARAMETERS);
}

/** FedAvg's aggregation weight of a silo with `examples` training examples: n_i, or 1 for 'equal'. */
export function fedAvgWeight(examples: number, mode: 'examples' | 'equal'): number {
  return mode === 'equal' ? 1 : examples;
}

/** n_i (or 1) of each selected silo, in ctx.selected order. */
export function baseWeights(ctx: AggregateContext, mode: 'examples' | 'equal'): Float64Array {
  return Float64Array.from(ctx.selected, (s) => fedAvgWeight(ctx.setup.silos[s]!.examples, mode));
}

/** FedAvg's selection: roundSize(n) silos uniformly at random, whatever the state. */
export function randomSelection(size: RoundSize): (state: unknown, ctx: SelectContext) => number[] {
  return (_state, ctx) => {
    checkSelectContext(ctx);
    const n = ctx.setup.numSilos;
    return uniformSample(ctx.rng, n, roundSize(n, size));
  };
}

/** Checks a round size given in code (the registry's reader checks configs). */
export function checkRoundSize(size: RoundSize): void {
  if (!(size.fraction > 0 && size.fraction <= 1))
    throw new RangeError(`strategy.fraction: expected a number in (0, 1], got ${size.fraction}`);
  if (
    size.clientsPerRound !== undefined &&
    !(Number.isInteger(size.clientsPerRound) && size.clientsPerRound >= 1)
  )
    throw new RangeError(`strategy.clientsPerRound: expected an integer ≥ 1, got ${size.clientsPerRound}`);
}

/**
 * The FedAvg strategy (stateless). `select` draws roundSize(n) silos uniformly without replacement;
 * `aggregationWeights` returns example counts (or 1s). Private-mode safe.
 * @throws RangeError when fraction is outside (0, 1] or clientsPerRound is not a positive integer.
 */
export function fedAvg(params: Partial<FedAvgParams> = {}): Strategy<null> {
  const { weights, ...size } = { ...FEDAVG_DEFAULTS, ...params };
  checkRoundSize(size);
  if (weights !== 'examples' && weights !== 'equal')
    throw new RangeError(`strategy.weights: expected 'examples' or 'equal', got ${String(weights)}`);
  return {
    name: fedAvgEntry.name,
    requiresFullVisibility: false,
    init(setup) {
      checkSetup(setup);
      return null;
    },
    select: randomSelection(size),
    async aggregationWeights(state, ctx) {
      checkAggregateContext(ctx);
      return { weights: baseWeights(ctx, weights), state };
    },
    observe: (state) => state,
  };
}

/** The registry entry (./registry.ts): `fedAvg` from a JSON config. */
export const fedAvgEntry: BuiltInStrategyEntry = {
  name: 'fedavg',
  description: 'FedAvg: random selection, example-count weights (McMahan et al. 2017)',
  parameters: FEDAVG_PARAMETERS,
  networked: 'fixed-weights',
  create: (p) => fedAvg(readFedAvgParams(p)),
};
