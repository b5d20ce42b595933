/**
 * The weighting step of the round pipeline (../round-loop.ts): the strategy's aggregation weights.
 * Under secure aggregation the weights get the consortium's floor and cap
 * (../../consortium/weight-floor.ts, issues 27 A1 and 32 W1: `capWeights`), as a networked silo's
 * plan does (../../strategies/networked-plan.ts): no selected silo's weight is
 * below f_k·max_j w_j, so the sum never is one silo's update alone. In the clear (secure
 * aggregation disabled) the server sees every update anyway, and the strategy's weights stand.
 * Private strategies read public history only; full-visibility ones also get the round's updates,
 * the coalition game over the selected silos (memoized, so its evaluations count the strategy's own
 * valuation cost, papers/004's budget parity) and, when they ask for it, Δ_val.
 */
import { type MemoGame, type MemoVectorGame, memoize, memoizeVector } from '../../../scoring/game.js';
import { createRng } from '../../../scoring/seeded-rng.js';
import { capWeights, weightBoundsOf } from '../../consortium/weight-floor.js';
import { deriveSeed, SEED_STREAMS } from '../../data/seed.js';
import type { FullVisibility } from '../../strategies/strategy.js';
import type { Run, RunState } from './setup.js';

/** The strategy's weights for the round, its next state and, in full visibility, its evaluations. */
export interface Weighing {
  /** One relative weight ≥ 0 per selected silo, in `selected` order (floored under secure aggregation). */
  weights: number[];
  /** The strategy's state after `aggregationWeights`. */
  strategy: unknown;
  /** Distinct coalitions the strategy evaluated (scalar and per-class games); undefined in private mode. */
  evaluations?: number;
}

/**
 * Asks the strategy for the round's weights (generator seeded `deriveSeed(seed, round, 0xa66)`).
 * The coalition games of a full-visibility strategy weigh the selected silos by their example counts.
 */
export async function weighStep(
  run: Run,
  state: RunState,
  round: number,
  selected: readonly number[],
  updates: readonly Float32Array[],
  referenceUpdate: Float32Array | undefined,
): Promise<Weighing> {
  let full: FullVisibility | undefined;
  let games: ReturnType<Run['learner']['coalitionGames']> | undefined;
  let memo: { game: MemoGame; perClass: MemoVectorGame } | undefined;
  if (run.strategy.requiresFullVisibility) {
    games = run.learner.coalitionGames({
      base: state.params,
      updates,
      weights: selected.map((s) => run.examples[s]!),
      convention: run.convention,
      test: run.test,
      utility: run.utility,
    });
    memo = { game: memoize(games.game), perClass: memoizeVector(games.perClass) };
    full = { updates, ...memo, ...(referenceUpdate ? { referenceUpdate } : {}) };
  }
  const aggregation = await run.strategy.aggregationWeights(state.strategy, {
    round,
    setup: run.setup,
    history: state.history,
    selected,
    rng: createRng(deriveSeed(run.seed, round, SEED_STREAMS.round.weights)),
    ...(full ? { full } : {}),
  });
  games?.dispose();
  const weights = Array.from(aggregation.weights);
  const secure = run.cfg.secureAggregation?.enabled !== false;
  return {
    weights: secure ? capWeights(weights, weightBoundsOf(run.cfg.secureAggregation)) : weights,
    strategy: aggregation.state,
    ...(memo ? { evaluations: memo.game.evaluations + memo.perClass.evaluations } : {}),
  };
}
