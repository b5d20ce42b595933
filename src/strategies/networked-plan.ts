/**
 * Strategies over the network: what fits secure aggregation runs networked, with the same
 * selection and weights as the in-process engine (engine.ts) given the same seed.
 *
 * A round's plan — the selected silos and their aggregation weights — is a pure function of public
 * information: the strategy configuration, the public seed, the number of silos, the example counts
 * (the setup every process derives from the configuration) and the history the service publishes
 * (each earlier round's selection, survivors and private scores). The server computes the
 * selection when it opens a round (and refuses messages from a silo it did not select); every silo
 * computes the whole plan, takes part only when selected and scales its own update by its own
 * weight before masking, so the server learns only Σ w_iΔ_i and Σ w_i (papers/003 §5.4).
 *
 * The engine's random streams are reused exactly: `select` gets `createRng(deriveSeed(seed, r,
 * 0x5e1))` (round/select.ts), `aggregationWeights` `createRng(deriveSeed(seed, r, SEED_STREAMS.round.weights))`
 * (round/weigh.ts), and the strategy's state is replayed from `init` through every earlier round's
 * `aggregationWeights` and `observe` with the history as it then was (round/record.ts).
 *
 * The plan's weights carry the consortium's weight floor (../consortium/weight-floor.ts, issue 27 A1), applied
 * by the same function as the engine's weigh step: whatever scores the service publishes, no
 * selected silo's weight is below f_k·max_j w_j, so the sum is never one silo's update alone.
 *
 * Strategies that need individual updates (the coalition game over the selected silos, or label
 * histograms) are refused by their registry entry's `networked` (strategies/strategy.ts), with the
 * reason; a `score` parameter must name a private score, the only scores a networked run publishes.
 */
import { createRng } from '../../scoring/seeded-rng.js';
import { PRIVATE_METHODS } from '../consortium/private-scoring.js';
import { capWeights, DEFAULT_WEIGHT_BOUNDS, type WeightBounds } from '../consortium/weight-floor.js';
import { deriveSeed, SEED_STREAMS } from '../data/seed.js';
import { createStrategy, DEFAULT_STRATEGY, networkedSupport, type StrategyConfig } from './registry.js';
import {
  emptyHistory,
  type History,
  type RoundOutcome,
  recordRound,
  type Strategy,
  type StrategySetup,
} from './strategy.js';

/** What the service publishes of an earlier round (GET …/rounds and …/scores). */
export interface PublishedRound {
  readonly round: number;
  /** The silos selected for it (null: every silo). */
  readonly selected: readonly number[] | null;
  /** The silos whose input is in its sum (null: none, the round aborted before the sum). */
  readonly survivors: readonly number[] | null;
  /** Its private scores by scheme, silo-indexed (null: not scored). */
  readonly scores: Readonly<Record<string, readonly (number | null)[]>> | null;
}

/** A round's plan: who takes part and with which relative weight (engine: select and weigh steps). */
export interface RoundPlan {
  readonly round: number;
  /** Selected silos, increasing. */
  readonly selected: readonly number[];
  /**
   * One relative weight > 0 per selected silo (in `selected` order), the strategy's with the weight
   * floor applied; absent when not asked for.
   */
  readonly weights?: readonly number[];
}

/**
 * The strategy a networked consortium runs (the default: FedAvg over every silo), checked.
 * @throws RangeError naming `strategy.name` and why when the strategy cannot run networked
 *   (it needs individual updates), `strategy.score` when it reads a score a networked run does not
 *   publish, and whatever the registry throws for a bad name or parameter.
 */
export function networkedStrategy(config: StrategyConfig | undefined): Strategy {
  const c = config ?? DEFAULT_STRATEGY;
  const strategy = createStrategy({ ...c });
  const support = networkedSupport(c.name);
  if (typeof support === 'object')
    throw new RangeError(`strategy.name: '${c.name}' cannot run networked: ${support.refused}`);
  if (strategy.requiresFullVisibility)
    throw new RangeError(
      `strategy.name: '${c.name}' cannot run networked: it needs full visibility of the round's updates`,
    );
  if ('score' in c && !(PRIVATE_METHODS as readonly unknown[]).includes(c.score))
    throw new RangeError(
      `strategy.score: a networked run publishes only the private scores (${PRIVATE_METHODS.join(', ')}), got ${JSON.stringify(c.score)}`,
    );
  return strategy;
}

/**
 * The setup the server knows: the number of silos, the rounds and the seed; no data (its `select`
 * must not read the silos' examples or histograms — what `networked: true` promises).
 */
export function publicSetup(numSilos: number, rounds: number, seed: number): StrategySetup {
  return {
    numSilos,
    numClasses: 1,
    rounds,
    seed,
    silos: Array.from({ length: numSilos }, () => ({ examples: 0, labelHistogram: [0] })),
  };
}

/** The engine's outcome of a published round: selected, dropped = selected − survivors, scores. */
function outcomeOf(p: PublishedRound, numSilos: number): RoundOutcome {
  const selected = p.selected ? [...p.selected] : Array.from({ length: numSilos }, (_, i) => i);
  const survivors = new Set(p.survivors ?? []);
  return {
    round: p.round,
    selected,
    dropped: selected.filter((s) => !survivors.has(s)),
    scores: p.scores ?? {},
  };
}

/**
 * The plan of round `round` from the published rounds before it (1 … round − 1, in order).
 * `weights: false` (the server) replays only `select` and `observe`; the silos ask for the weights,
 * floored with `bounds` (default: the protected defaults of ../consortium/weight-floor.ts) as the engine's
 * weigh step floors them (round/weigh.ts); earlier rounds' weights only replay the strategy's state.
 * @throws RangeError when `published` is not rounds 1 … round − 1, or the strategy's own errors.
 */
export async function planRound(o: {
  readonly strategy: Strategy;
  readonly setup: StrategySetup;
  readonly seed: number;
  readonly round: number;
  readonly published: readonly PublishedRound[];
  readonly weights: boolean;
  readonly bounds?: WeightBounds;
}): Promise<RoundPlan> {
  const { strategy, setup, seed, round } = o;
  if (!Number.isInteger(round) || round < 1)
    throw new RangeError(`round: expected an integer ≥ 1, got ${round}`);
  const before = o.published.filter((p) => p.round < round);
  before.forEach((p, k) => {
    if (p.round !== k + 1)
      throw new RangeError(
        `published: expected rounds 1 … ${round - 1} in order, got round ${p.round} at ${k}`,
      );
  });
  if (before.length !== round - 1)
    throw new RangeError(`published: expected rounds 1 … ${round - 1}, got ${before.length}`);
  let state = strategy.init(setup);
  let history: History = emptyHistory(setup.numSilos);
  const step = async (r: number, selected: readonly number[] | undefined) => {
    const chosen =
      selected ??
      strategy.select(state, {
        round: r,
        setup,
        history,
        rng: createRng(deriveSeed(seed, r, SEED_STREAMS.round.selection)),
      });
    let weights: number[] | undefined;
    if (o.weights) {
      const a = await strategy.aggregationWeights(state, {
        round: r,
        setup,
        history,
        selected: chosen,
        rng: createRng(deriveSeed(seed, r, SEED_STREAMS.round.weights)),
      });
      state = a.state;
      weights = Array.from(a.weights);
    }
    return { chosen, weights };
  };
  for (const p of before) {
    const outcome = outcomeOf(p, setup.numSilos);
    // The state a round leaves is its aggregationWeights' (round/weigh.ts), then observe's.
    if (o.weights) await step(p.round, outcome.selected);
    history = recordRound(history, outcome);
    state = strategy.observe(state, outcome);
  }
  const { chosen, weights } = await step(round, undefined);
  if (!o.weights) return { round, selected: [...chosen] };
  return { round, selected: [...chosen], weights: capWeights(weights!, o.bounds ?? DEFAULT_WEIGHT_BOUNDS) };
}

/** The largest weight of a plan (the engine divides by it before quantization), or 1 when all are 0. */
export function planScale(plan: RoundPlan): number {
  return Math.max(...(plan.weights ?? [])) || 1;
}
