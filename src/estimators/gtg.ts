/**
 * GTG-Shapley (papers/000 Alg. 1, Eq. 11): guided permutations, between- and within-round
 * truncation (ε_b = ε_i = 0.001 by default, §5.1) and the convergence rule, on the round's
 * coalition game within an explicit evaluation budget. Compared per round.
 */
import { gtgShapley } from '../../scoring/gtg.js';
import { budget, options, PAPER000_EPSILON, truncation } from './_schema.js';
import { defineEstimator } from './estimator.js';

export const gtg = defineEstimator({
  name: 'gtg',
  family: 'shapley',
  title: 'GTG-Shapley (papers/000 Alg. 1, Eq. 11)',
  schema: options({ budget: budget(), ...truncation() }),
  // Historical value, frozen for reproducibility: the stream the harness once derived from the
  // name (length 3, 'g' = 103).
  stream: [3, 103],
  compare: 'round',
  async run({ config, game, budget, rng }) {
    const est = await gtgShapley(game, {
      budget,
      rng,
      betweenRoundTolerance: config.epsilonB ?? PAPER000_EPSILON,
      withinRoundTolerance: config.epsilonI ?? PAPER000_EPSILON,
    });
    return { values: est.values, evaluations: game.evaluations };
  },
});
