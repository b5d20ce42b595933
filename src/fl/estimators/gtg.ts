/**
 * GTG-Shapley (papers/000 Alg. 1, Eq. 11): guided permutations, within-round truncation and the
 * convergence rule, on the round's coalition game within an explicit evaluation budget. Compared
 * per round.
 */
import { gtgShapley } from '../../../scoring/gtg.js';
import { budget, options } from './_schema.js';
import { defineEstimator } from './estimator.js';

export const gtg = defineEstimator({
  name: 'gtg',
  title: 'GTG-Shapley (papers/000 Alg. 1, Eq. 11)',
  schema: options({ budget: budget() }),
  // Historical value, frozen for reproducibility: the stream the harness once derived from the
  // name (length 3, 'g' = 103).
  stream: [3, 103],
  compare: 'round',
  async run({ game, budget, rng }) {
    const est = await gtgShapley(game, { budget, rng });
    return { values: est.values, evaluations: game.evaluations };
  },
});
