/**
 * The strategy registry: a plain JSON config `{ name, ...params }` → a `Strategy`. Every parameter is
 * validated here; an unknown name or key and a bad value throw with the field's path
 * (`strategy.epsilon: expected a number in [0, 1], got 2`): TypeError for a wrong type, RangeError
 * for a value out of range or an unknown key/name.
 *
 * Parameters and defaults (each strategy's file documents them and their sources):
 * - all: `fraction` ∈ (0, 1] or `clientsPerRound` (integer ≥ 1), silos per round.
 * - `fedavg`: fraction 1, weights 'examples' | 'equal'.
 * - `score-weighted` (papers/003 §5.4): fraction 1, score 'fp', accumulate 'cumulative' | 'latest',
 *   weights 'equal' | 'examples'.
 * - `fedemd` (papers/001 Alg. 1): fraction 0.1, alpha 0.15, beta 0.0015.
 * - `fedowen` (papers/004 §3.4–3.5): fraction 0.1, epsilon 0.1, confidence 0.1, floor 0,
 *   lowGainScale 0.1, exploit 'sample' | 'top-k', samples 4, levels 2, eta 0.
 * - `fedtsv` (papers/002 Alg. 2): fraction 1, method 'auto' | 'exact' | 'sampled', permutations 100,
 *   coalitionWeights 'equal' | 'examples'.
 * - `fedms` (papers/000 Alg. 2): fraction 0.1, temperature 0.01, alpha 0.6, epsilonB 0.001,
 *   epsilonI 0.001, estimator 'gtg' | 'exact', budget 1000, firstRoundAll true, discardDivergent true,
 *   epsilonDStart 3, epsilonDEnd 0.1.
 * - `s-fedavg`: fraction 0.1, alpha 0.7.
 * - `greedyfed`: fraction 0.1, alpha 0.7, accumulation 'ema' | 'mean', budget 1000, epsilonB 0.001,
 *   epsilonI 0.001.
 */

import { Params } from './_params.js';
import { fedAvg, readFedAvgParams } from './fedavg.js';
import { fedEmd, readFedEmdParams } from './fedemd.js';
import { fedMs, readFedMsParams } from './fedms.js';
import { fedOwen, readFedOwenParams } from './fedowen.js';
import { fedTsv, readFedTsvParams } from './fedtsv.js';
import { greedyFed, readGreedyFedParams } from './greedyfed.js';
import { readSFedAvgParams, sFedAvg } from './s-fedavg.js';
import { readScoreWeightedParams, scoreWeighted } from './score-weighted.js';
import type { Strategy, StrategyName } from './strategy.js';

/** A strategy's JSON configuration. */
export interface StrategyConfig {
  name: string;
  [param: string]: unknown;
}

const BUILDERS: Record<StrategyName, (p: Params) => Strategy<unknown>> = {
  fedavg: (p) => fedAvg(readFedAvgParams(p)) as Strategy<unknown>,
  'score-weighted': (p) => scoreWeighted(readScoreWeightedParams(p)) as Strategy<unknown>,
  fedemd: (p) => fedEmd(readFedEmdParams(p)) as Strategy<unknown>,
  fedowen: (p) => fedOwen(readFedOwenParams(p)) as Strategy<unknown>,
  fedtsv: (p) => fedTsv(readFedTsvParams(p)) as Strategy<unknown>,
  fedms: (p) => fedMs(readFedMsParams(p)) as Strategy<unknown>,
  's-fedavg': (p) => sFedAvg(readSFedAvgParams(p)) as Strategy<unknown>,
  greedyfed: (p) => greedyFed(readGreedyFedParams(p)) as Strategy<unknown>,
};

/** The names `createStrategy` accepts. */
export const STRATEGY_NAMES = Object.keys(BUILDERS) as StrategyName[];

/**
 * Builds the strategy a config names, with its parameters validated (see the module comment).
 * @throws TypeError when config is not an object or a parameter has the wrong type; RangeError naming
 *   the field for an unknown name, an unknown parameter or a value out of range.
 */
export function createStrategy(config: StrategyConfig): Strategy<unknown> {
  if (typeof config !== 'object' || config === null || Array.isArray(config))
    throw new TypeError('strategy: expected an object { name, ...params }');
  const { name } = config;
  if (typeof name !== 'string') throw new TypeError(`strategy.name: expected a string, got ${typeof name}`);
  if (!Object.hasOwn(BUILDERS, name))
    throw new RangeError(
      `strategy.name: unknown strategy '${name}' (expected one of ${STRATEGY_NAMES.map((s) => `'${s}'`).join(', ')})`,
    );
  const params = new Params(config, name);
  const strategy = BUILDERS[name as StrategyName](params);
  params.done();
  return strategy;
}
