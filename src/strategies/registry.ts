/**
 * The strategy registry: a name → a factory from plain JSON parameters to a `Strategy`. The
 * built-in strategies register below, one line each; each entry carries its name, its parameters
 * schema and its factory (./strategy.ts, `StrategyEntry`). A user module adds its own with
 * `registerStrategy(entry)` before the run, and `createStrategy({ name, ...params })` builds any of
 * them. The round engine only ever sees the `Strategy` interface (./strategy.ts).
 *
 * Every parameter is validated by the factory through `StrategyParams`; an unknown name or key and a
 * bad value throw with the field's path (`strategy.epsilon: expected a number in [0, 1], got 2`):
 * TypeError for a wrong type, RangeError for a value out of range or an unknown key/name.
 *
 * The built-ins' parameters, defaults and sources are their entries' `parameters` schemas (each
 * strategy's file cites the papers), rendered in docs/config.md, "strategy".
 */

import { DEFAULT_STRATEGY_NAME } from '../consortium/defaults.js';
import { fedAvgEntry } from './fedavg.js';
import { fedEmdEntry } from './fedemd.js';
import { fedMsEntry } from './fedms.js';
import { fedOwenEntry } from './fedowen.js';
import { fedTsvEntry } from './fedtsv.js';
import { greedyFedEntry } from './greedyfed.js';
import { Params } from './params.js';
import { sFedAvgEntry } from './s-fedavg.js';
import { scoreSelectionEntry } from './score-selection.js';
import { scoreWeightedEntry } from './score-weighted.js';
import { withSelectionGroups } from './selection-groups.js';
import type { BuiltInStrategyEntry, NetworkedSupport, Strategy, StrategyEntry } from './strategy.js';

export type { BuiltInStrategyEntry, NetworkedSupport, StrategyEntry } from './strategy.js';

/** A strategy's JSON configuration. */
export interface StrategyConfig {
  name: string;
  [param: string]: unknown;
}

/**
 * The configuration a run without `strategy` uses: FedAvg over every silo, example-count weights
 * (the contract's name, src/consortium/defaults.ts; test/strategies/registry.test.ts checks it is registered).
 */
export const DEFAULT_STRATEGY: Readonly<StrategyConfig> = Object.freeze({ name: DEFAULT_STRATEGY_NAME });

const REGISTRY = new Map<string, StrategyEntry>();

/**
 * Registers a strategy under `entry.name`, for `createStrategy({ name, ... })`.
 * @throws TypeError when entry is not an object with a non-empty string `name`, a `create` function,
 *   a string `description` and, if any, an object schema as `parameters`; RangeError when the name
 *   is already registered.
 */
export function registerStrategy(entry: StrategyEntry): void {
  if (typeof entry !== 'object' || entry === null || typeof entry.create !== 'function')
    throw new TypeError('entry: expected an object { name, description, parameters?, create(params) }');
  const { name, description, parameters } = entry;
  if (typeof name !== 'string' || name.length === 0)
    throw new TypeError(
      `entry.name: expected a non-empty string, got ${JSON.stringify(name) ?? typeof name}`,
    );
  if (typeof description !== 'string')
    throw new TypeError(`entry.description: expected a string, got ${typeof description}`);
  if (
    parameters !== undefined &&
    (typeof parameters !== 'object' || parameters === null || parameters.type !== 'object')
  )
    throw new TypeError('entry.parameters: expected a TypeBox object schema (Type.Object)');
  if (REGISTRY.has(name)) throw new RangeError(`entry.name: strategy '${name}' is already registered`);
  REGISTRY.set(name, { ...entry });
}

/** The built-in strategies, one line each, in registration order. */
export const BUILT_IN_STRATEGIES: readonly BuiltInStrategyEntry[] = [
  fedAvgEntry,
  scoreWeightedEntry,
  scoreSelectionEntry,
  fedEmdEntry,
  fedOwenEntry,
  fedTsvEntry,
  fedMsEntry,
  sFedAvgEntry,
  greedyFedEntry,
];
for (const entry of BUILT_IN_STRATEGIES) registerStrategy(entry);

/** The built-in strategies' names (registration order); `strategyNames()` includes user ones. */
export const STRATEGY_NAMES: string[] = BUILT_IN_STRATEGIES.map((e) => e.name);

/** Every registered name, built-ins first, then in registration order. */
export function strategyNames(): string[] {
  return [...REGISTRY.keys()];
}

/** The one-line description a strategy registered with. @throws RangeError for an unknown name. */
export function describeStrategy(name: string): string {
  return entryOf(name).description;
}

/**
 * Whether the named strategy runs over the network (its entry's `networked`; see ./strategy.ts):
 * 'fixed-weights' or 'score-weights', or why not. A strategy that does not declare it is refused.
 * @throws RangeError for an unknown name.
 */
export function networkedSupport(name: string): NetworkedSupport {
  return (
    entryOf(name).networked ?? {
      refused:
        'it does not declare that it runs under secure aggregation alone (its entry has no `networked`)',
    }
  );
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
 *   builds a strategy under another name; Error when the factory reads a parameter otherwise than
 *   the entry's `parameters` schema declares it (a bug in the strategy).
 */
export function createStrategy(config: StrategyConfig): Strategy<unknown> {
  if (typeof config !== 'object' || config === null || Array.isArray(config))
    throw new TypeError('strategy: expected an object { name, ...params }');
  const { name } = config;
  if (typeof name !== 'string') throw new TypeError(`strategy.name: expected a string, got ${typeof name}`);
  const entry = entryOf(name);
  // `selectionGroups`, reserved for every strategy: select in fixed groups (./selection-groups.ts).
  const { selectionGroups, ...own } = config as StrategyConfig & { selectionGroups?: unknown };
  const params = new Params(own, name, entry.parameters);
  const strategy = entry.create(params);
  params.done();
  if (strategy?.name !== name)
    throw new RangeError(`strategy.name: '${name}' built a strategy named '${String(strategy?.name)}'`);
  if (selectionGroups === undefined) return strategy;
  if (typeof selectionGroups !== 'number')
    throw new TypeError(`strategy.selectionGroups: expected an integer ≥ 3, got ${typeof selectionGroups}`);
  return withSelectionGroups(strategy, selectionGroups);
}
