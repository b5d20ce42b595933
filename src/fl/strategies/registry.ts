/**
 * The strategy registry: a name → a factory from plain JSON parameters to a `Strategy`. The
 * built-in strategies register below, one line each; a user module adds its own with
 * `registerStrategy` before the run, and `createStrategy({ name, ...params })` builds any of them.
 * The round engine only ever sees the `Strategy` interface (./strategy.ts).
 *
 * Every parameter is validated by the factory through `StrategyParams`; an unknown name or key and a
 * bad value throw with the field's path (`strategy.epsilon: expected a number in [0, 1], got 2`):
 * TypeError for a wrong type, RangeError for a value out of range or an unknown key/name.
 *
 * Parameters and defaults of the built-ins (each strategy's file documents them and their sources):
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
import { fedAvgEntry } from './fedavg.js';
import { fedEmdEntry } from './fedemd.js';
import { fedMsEntry } from './fedms.js';
import { fedOwenEntry } from './fedowen.js';
import { fedTsvEntry } from './fedtsv.js';
import { greedyFedEntry } from './greedyfed.js';
import { sFedAvgEntry } from './s-fedavg.js';
import { scoreWeightedEntry } from './score-weighted.js';
import type { Strategy, StrategyEntry } from './strategy.js';

export type { StrategyEntry } from './strategy.js';

/** A strategy's JSON configuration. */
export interface StrategyConfig {
  name: string;
  [param: string]: unknown;
}

/** The configuration a run without `strategy` uses: FedAvg over every silo, example-count weights. */
export const DEFAULT_STRATEGY: Readonly<StrategyConfig> = Object.freeze({ name: 'fedavg' });

const REGISTRY = new Map<string, StrategyEntry>();

/**
 * Registers a strategy under `name`, for `createStrategy({ name, ... })`.
 * @throws TypeError when name is not a non-empty string or entry lacks `create` or `description`;
 *   RangeError when the name is already registered.
 */
export function registerStrategy(name: string, entry: StrategyEntry): void {
  if (typeof name !== 'string' || name.length === 0)
    throw new TypeError(`name: expected a non-empty string, got ${JSON.stringify(name) ?? typeof name}`);
  if (typeof entry !== 'object' || entry === null || typeof entry.create !== 'function')
    throw new TypeError('entry: expected an object { create(params), description }');
  if (typeof entry.description !== 'string')
    throw new TypeError(`entry.description: expected a string, got ${typeof entry.description}`);
  if (REGISTRY.has(name)) throw new RangeError(`name: strategy '${name}' is already registered`);
  REGISTRY.set(name, { create: entry.create, description: entry.description });
}

/** The built-in strategies, one line each. */
const BUILT_IN: [string, StrategyEntry][] = [
  ['fedavg', fedAvgEntry],
  ['score-weighted', scoreWeightedEntry],
  ['fedemd', fedEmdEntry],
  ['fedowen', fedOwenEntry],
  ['fedtsv', fedTsvEntry],
  ['fedms', fedMsEntry],
  ['s-fedavg', sFedAvgEntry],
  ['greedyfed', greedyFedEntry],
];
for (const [name, entry] of BUILT_IN) registerStrategy(name, entry);

/** The built-in strategies' names (registration order); `strategyNames()` includes user ones. */
export const STRATEGY_NAMES: string[] = BUILT_IN.map(([name]) => name);

/** Every registered name, built-ins first, then in registration order. */
export function strategyNames(): string[] {
  return [...REGISTRY.keys()];
}

/** The one-line description a strategy registered with. @throws RangeError for an unknown name. */
export function describeStrategy(name: string): string {
  return entryOf(name).description;
}

function entryOf(name: string): StrategyEntry {
  const entry = REGISTRY.get(name);
  if (entry === undefined)
    throw new RangeError(
      `strategy.name: unknown strategy '${name}' (expected one of ${strategyNames()
        .map((s) => `'${s}'`)
        .join(', ')})`,
    );
  return entry;
}

/**
 * Builds the strategy a config names, with its parameters validated (see the module comment).
 * @throws TypeError when config is not an object or a parameter has the wrong type; RangeError naming
 *   the field for an unknown name, an unknown parameter or a value out of range, or when the factory
 *   builds a strategy under another name.
 */
export function createStrategy(config: StrategyConfig): Strategy<unknown> {
  if (typeof config !== 'object' || config === null || Array.isArray(config))
    throw new TypeError('strategy: expected an object { name, ...params }');
  const { name } = config;
  if (typeof name !== 'string') throw new TypeError(`strategy.name: expected a string, got ${typeof name}`);
  const entry = entryOf(name);
  const params = new Params(config, name);
  const strategy = entry.create(params);
  params.done();
  if (strategy?.name !== name)
    throw new RangeError(`strategy.name: '${name}' built a strategy named '${String(strategy?.name)}'`);
  return strategy;
}
