/**
 * Selection by cumulative private scores: each round takes the k silos with the largest current
 * score (the sum of their published per-round private scores, or the latest one), silos never
 * scored first so that every silo is scored before the ranking decides, ties to the lower id.
 * Aggregation stays FedAvg's (n_i, or 1). Overrides `select` of FedAvg.
 *
 * It is the private-mode counterpart of the Shapley-ranked selections (GreedyFed's "pick
 * top-contributing clients", papers/004 §2): the ranking reads only the scores the service
 * publishes (FP, EE, EE-median, LOO, IOI; papers/003 §3), so every silo and the server compute the
 * same selection from public information and no update is ever seen individually. The choices
 * (unscored first, ties to the lower id, no exploration after the first visit) are ours.
 */

import Type from 'typebox';
import { defaultsOf, Params, parameters, readParameters, roundSizeParameters } from './_params.js';
import {
  checkAggregateContext,
  checkSelectContext,
  checkSetup,
  type RoundSize,
  roundSize,
} from './_sampling.js';
import { baseWeights, checkRoundSize } from './fedavg.js';
import { currentScores } from './score-weighted.js';
import type { BuiltInStrategyEntry, Strategy, StrategyParams } from './strategy.js';

/** Parameters of `scoreSelection` (SCORE_SELECTION_PARAMETERS documents them). */
export interface ScoreSelectionParams extends RoundSize {
  /** Private score scheme read from the history (`fp`, `ee`, `eeMedian`, `loo`, `ioi`). */
  score: string;
  /** 'cumulative' (sum of per-round scores) or 'latest' (the most recent one). */
  accumulate: 'cumulative' | 'latest';
  /** FedAvg's aggregation weight: 'examples' (n_i) or 'equal'. */
  weights: 'examples' | 'equal';
}

/** The parameters: half the silos per round by cumulative EE-median (the smallest unflagged self-gain, docs/audit.md), example-count weights, unless configured. */
export const SCORE_SELECTION_PARAMETERS = parameters({
  ...roundSizeParameters(0.5),
  score: Type.String({
    minLength: 1,
    default: 'eeMedian',
    description: 'Score scheme whose published scores rank the silos (fp, ee, eeMedian, loo, ioi).',
  }),
  accumulate: Type.Enum(['cumulative', 'latest'] as const, {
    default: 'cumulative',
    description: "A silo's current score: the sum of its per-round scores so far, or its most recent one.",
  }),
  weights: Type.Enum(['examples', 'equal'] as const, {
    default: 'examples',
    description: "A silo's aggregation weight: its example count n_i (FedAvg) or 1.",
  }),
});

/** Defaults (SCORE_SELECTION_PARAMETERS'). */
export const SCORE_SELECTION_DEFAULTS = defaultsOf<ScoreSelectionParams>(SCORE_SELECTION_PARAMETERS);

/** Reads the parameters from a strategy config (SCORE_SELECTION_PARAMETERS). */
export function readScoreSelectionParams(p: StrategyParams): ScoreSelectionParams {
  return readParameters(p, SCORE_SELECTION_PARAMETERS);
}

/**
 * The k silos of largest current score, unscored silos first, ties to the lower id; increasing.
 * @param current one score per silo, null for a silo never scored.
 */
export function topScored(current: readonly (number | null)[], k: number): number[] {
  const rank = current.map((v, i) => ({ i, v: v === null ? Number.POSITIVE_INFINITY : v }));
  rank.sort((a, b) => (a.v !== b.v ? b.v - a.v : a.i - b.i));
  return rank
    .slice(0, k)
    .map((e) => e.i)
    .sort((x, y) => x - y);
}

/**
 * Selection by cumulative private scores with FedAvg's weights.
 * @throws RangeError for a bad round size, accumulate or weights.
 */
export function scoreSelection(params: Partial<ScoreSelectionParams> = {}): Strategy<null> {
  const o = { ...SCORE_SELECTION_DEFAULTS, ...params };
  readScoreSelectionParams(new Params({ ...o }, scoreSelectionEntry.name, SCORE_SELECTION_PARAMETERS));
  checkRoundSize(o);
  return {
    name: scoreSelectionEntry.name,
    requiresFullVisibility: false,
    init(setup) {
      checkSetup(setup);
      return null;
    },
    select(_state, ctx) {
      checkSelectContext(ctx);
      const n = ctx.setup.numSilos;
      return topScored(currentScores(ctx.history, o.score, o.accumulate), roundSize(n, o));
    },
    async aggregationWeights(state, ctx) {
      checkAggregateContext(ctx);
      return { weights: baseWeights(ctx, o.weights), state };
    },
    observe: (state) => state,
  };
}

/** The registry entry (./registry.ts): `scoreSelection` from a JSON config. */
export const scoreSelectionEntry: BuiltInStrategyEntry = {
  name: 'score-selection',
  description: 'selection of the k silos with the largest cumulative private score, FedAvg weights',
  parameters: SCORE_SELECTION_PARAMETERS,
  networked: 'fixed-weights',
  create: (p) => scoreSelection(readScoreSelectionParams(p)),
};
