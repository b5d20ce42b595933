/**
 * FedAvg (McMahan et al. 2017): a uniformly random set of silos per round, aggregated with weights
 * proportional to their example counts (papers/000 Eq. 3). The base every other strategy varies:
 * a variant is `fedAvgVariant({ ... })` with its parameters schema and the methods it overrides
 * (`init`, `select`, `aggregate`); FedAvg's checks of the setup and of each call, its random
 * selection and its example-count weights are written here once.
 */

import Type, { type TObject } from 'typebox';
import {
  checkAggregateContext,
  checkSelectContext,
  checkSetup,
  type RoundSize,
  requireFull,
  roundSize,
  uniformSample,
} from './_sampling.js';
import { defaultsOf, type ParamsOf, parameters, roundSizeParameters } from './_schema.js';
import { Params, readParameters } from './params.js';
import type {
  AggregateContext,
  Aggregation,
  BuiltInStrategyEntry,
  FullVisibility,
  NetworkedSupport,
  SelectContext,
  Strategy,
  StrategySetup,
} from './strategy.js';

/** A silo's FedAvg aggregation weight: its example count n_i, or 1. */
export type WeightMode = 'examples' | 'equal';

/** FedAvg's aggregation weight of a silo with `examples` training examples: n_i, or 1 for 'equal'. */
export function fedAvgWeight(examples: number, mode: WeightMode): number {
  return mode === 'equal' ? 1 : examples;
}

/** n_i (or 1) of each selected silo, in ctx.selected order. */
export function baseWeights(ctx: AggregateContext, mode: WeightMode): Float64Array {
  return Float64Array.from(ctx.selected, (s) => fedAvgWeight(ctx.setup.silos[s]!.examples, mode));
}

/** FedAvg's selection: roundSize(n) silos uniformly at random, whatever the state. */
export function randomSelection(ctx: SelectContext, size: RoundSize): number[] {
  const n = ctx.setup.numSilos;
  return uniformSample(ctx.rng, n, roundSize(n, size));
}

/**
 * What a variant's code reads: its schema's parameters (`ParamsOf`, ./_schema.ts), among them the
 * round size every variant declares (`roundSizeParameters`, checked by `fedAvgVariant`).
 */
export type VariantParams<T extends TObject> = ParamsOf<T> & RoundSize;

/** `aggregationWeights`' context for a variant that sees the round's updates (`ctx.full`, checked). */
export type FullContext = AggregateContext & { readonly full: FullVisibility };

/** What every variant declares: its registry entry's fields, and what it overrides of FedAvg. */
interface VariantCommon<T extends TObject, S> {
  /** The name configurations use (the registry entry's). */
  readonly name: string;
  /** One line for listings (the registry entry's). */
  readonly description: string;
  /** The one declaration of its parameters (./_schema.ts): the code reads `ParamsOf<T>`. */
  readonly parameters: T;
  /** Whether it runs over the network (./strategy.ts, `StrategyEntry.networked`). */
  readonly networked: NetworkedSupport;
  /** The engine trains the validation reference update Δ_val every round (./strategy.ts). */
  readonly needsReferenceUpdate?: true;
  /** The initial state, after FedAvg's checks of the setup. Default: stateless (null). */
  readonly init?: (setup: StrategySetup, o: VariantParams<T>) => S;
  /** Overrides FedAvg's random selection; the context is checked. */
  readonly select?: (state: S, ctx: SelectContext, o: VariantParams<T>) => number[];
}

/** A variant that reads public information only (private-mode safe). */
interface PublicVariant<T extends TObject, S> extends VariantCommon<T, S> {
  readonly requiresFullVisibility: false;
  /** Overrides FedAvg's weights (n_i, or 1 by a `weights` parameter); the context is checked. */
  readonly aggregate?: (state: S, ctx: AggregateContext, o: VariantParams<T>) => Promise<Aggregation<S>>;
}

/** A variant whose aggregation needs the round's updates and coalition game. */
interface FullVariant<T extends TObject, S> extends VariantCommon<T, S> {
  readonly requiresFullVisibility: true;
  /** Its weights; the context is checked, `ctx.full` against the selection too. */
  readonly aggregate: (state: S, ctx: FullContext, o: VariantParams<T>) => Promise<Aggregation<S>>;
}

/** A strategy as a variant of FedAvg. */
export type FedAvgVariantSpec<T extends TObject, S> = PublicVariant<T, S> | FullVariant<T, S>;

/** A variant built: its registry entry, and its factory for code (parameters checked as a config's). */
export interface FedAvgVariant<T extends TObject, S> {
  readonly entry: BuiltInStrategyEntry;
  readonly create: (params?: Partial<VariantParams<T>>) => Strategy<S>;
}

/**
 * Builds a strategy from FedAvg and what `spec` overrides. The factory fills absent parameters with
 * the schema's defaults and checks them as a configuration's (errors name the field); the strategy
 * checks its setup and every call's context, then runs the override or FedAvg's method.
 */
export function fedAvgVariant<T extends TObject, S = null>(
  spec: FedAvgVariantSpec<T, S>,
): FedAvgVariant<T, S> {
  for (const key of ['fraction', 'clientsPerRound'])
    if (!(key in spec.parameters.properties))
      throw new TypeError(
        `parameters.${key}: a FedAvg variant declares the round size (roundSizeParameters)`,
      );
  const defaults = defaultsOf<VariantParams<T>>(spec.parameters);
  const create = (params: Partial<VariantParams<T>> = {}): Strategy<S> => {
    const o = { ...defaults, ...params } as VariantParams<T>;
    new Params({ ...o }, spec.name, spec.parameters); // the checks of a configuration
    return {
      name: spec.name,
      requiresFullVisibility: spec.requiresFullVisibility,
      ...(spec.needsReferenceUpdate ? { needsReferenceUpdate: true } : {}),
      init(setup) {
        checkSetup(setup);
        return spec.init ? spec.init(setup, o) : (null as S);
      },
      select(state, ctx) {
        checkSelectContext(ctx);
        return spec.select ? spec.select(state, ctx, o) : randomSelection(ctx, o);
      },
      async aggregationWeights(state, ctx) {
        checkAggregateContext(ctx);
        if (spec.requiresFullVisibility)
          return spec.aggregate(state, { ...ctx, full: requireFull(spec.name, ctx) }, o);
        if (spec.aggregate) return spec.aggregate(state, ctx, o);
        const mode = (o as { weights?: WeightMode }).weights ?? 'examples';
        return { weights: baseWeights(ctx, mode), state };
      },
      observe: (state) => state,
    };
  };
  const { name, description, parameters, networked } = spec;
  return {
    entry: {
      name,
      description,
      parameters,
      networked,
      create: (p) => create(readParameters(p, parameters)) as Strategy<unknown>,
    },
    create,
  };
}

/** FedAvg's parameters: every silo every round, example-count weights, unless configured. */
export const FEDAVG_PARAMETERS = parameters({
  ...roundSizeParameters(1),
  weights: Type.Enum(['examples', 'equal'] as const, {
    default: 'examples',
    description: "A silo's aggregation weight: its example count n_i (FedAvg, papers/000 Eq. 3) or 1.",
  }),
});

/** Parameters of `fedAvg` (FEDAVG_PARAMETERS'). */
export type FedAvgParams = ParamsOf<typeof FEDAVG_PARAMETERS>;

const FEDAVG = fedAvgVariant({
  name: 'fedavg',
  description: 'FedAvg: random selection, example-count weights (McMahan et al. 2017)',
  parameters: FEDAVG_PARAMETERS,
  networked: 'fixed-weights',
  requiresFullVisibility: false,
});

/**
 * The FedAvg strategy (stateless). `select` draws roundSize(n) silos uniformly without replacement;
 * `aggregationWeights` returns example counts (or 1s). Private-mode safe.
 * @throws RangeError when fraction is outside (0, 1] or clientsPerRound is not a positive integer.
 */
export const fedAvg: (params?: Partial<FedAvgParams>) => Strategy<null> = FEDAVG.create;

/** The registry entry (./registry.ts): `fedAvg` from a JSON config. */
export const fedAvgEntry: BuiltInStrategyEntry = FEDAVG.entry;
