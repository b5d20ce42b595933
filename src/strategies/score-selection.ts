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
import { SCHEMES } from '../../scoring/private.js';
import { roundSize } from './_sampling.js';
import { parameters, roundSizeParameters } from './_schema.js';
import { fedAvgVariant } from './fedavg.js';
import { currentScores, DEFAULT_STRATEGY_SCHEME } from './score-weighted.js';
import type { BuiltInStrategyEntry } from './strategy.js';

/** The parameters: half the silos per round by cumulative EE-median (the smallest unflagged self-gain, docs/audit.md), example-count weights, unless configured. */
export const SCORE_SELECTION_PARAMETERS = parameters({
  ...roundSizeParameters(0.5),
  score: Type.String({
    minLength: 1,
    default: DEFAULT_STRATEGY_SCHEME,
    description: `Score scheme whose published scores rank the silos (${SCHEMES.join(', ')}).`,
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

const SCORE_SELECTION = fedAvgVariant({
  name: 'score-selection',
  description: 'selection of the k silos with the largest cumulative private score, FedAvg weights',
  parameters: SCORE_SELECTION_PARAMETERS,
  networked: 'fixed-weights',
  requiresFullVisibility: false,
  select: (_state, ctx, o) =>
    topScored(currentScores(ctx.history, o.score, o.accumulate), roundSize(ctx.setup.numSilos, o)),
});

/** The registry entry (./registry.ts): selection by cumulative private scores with FedAvg's weights, from a JSON config. */
export const scoreSelectionEntry: BuiltInStrategyEntry = SCORE_SELECTION.entry;
