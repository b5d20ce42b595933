/**
 * Monte Carlo permutation sampling of the Shapley value (papers/004 App. C) on the round's
 * coalition game within an explicit evaluation budget. Compared per round.
 */
import { monteCarloShapley } from '../../scoring/monte-carlo.js';
import { budget, options } from './_schema.js';
import { defineEstimator } from './estimator.js';

export const mc = defineEstimator({
  name: 'mc',
  family: 'shapley',
  title: 'Monte Carlo permutation sampling (papers/004 App. C)',
  schema: options({ budget: budget() }),
  // Historical value, frozen for reproducibility: the stream the harness once derived from the
  // name (length 2, 'm' = 109).
  stream: [2, 109],
  compare: 'round',
  async run({ game, budget, rng }) {
    const est = await monteCarloShapley(game, { budget, rng });
    return { values: est.values, evaluations: game.evaluations };
  },
});
