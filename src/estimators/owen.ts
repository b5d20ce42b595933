/**
 * Owen sampling with η-truncation (papers/004 Alg. 1) on the round's coalition game within an
 * explicit evaluation budget. Compared per round.
 */
import { owenShapley } from '../../scoring/owen.js';
import { budget, options } from './_schema.js';
import { defineEstimator } from './estimator.js';

export const owen = defineEstimator({
  name: 'owen',
  family: 'shapley',
  title: 'Owen sampling with η-truncation (papers/004 Alg. 1)',
  schema: options({ budget: budget() }),
  // Historical value, frozen for reproducibility: the stream the harness once derived from the
  // name (length 4, 'o' = 111).
  stream: [4, 111],
  compare: 'round',
  async run({ game, budget, rng }) {
    const est = await owenShapley(game, { budget, rng });
    return { values: est.values, evaluations: game.evaluations };
  },
});
