/**
 * Data Banzhaf by maximum sample reuse (MSR; papers/004 App. C) on the round's coalition game
 * within an explicit evaluation budget. Compared per round.
 */
import { msrBanzhaf } from '../../scoring/banzhaf-msr.js';
import { budget, options } from './_schema.js';
import { defineEstimator } from './estimator.js';

export const banzhaf = defineEstimator({
  name: 'banzhaf',
  family: 'shapley',
  title: 'Data Banzhaf, maximum sample reuse (MSR; papers/004 App. C)',
  schema: options({ budget: budget() }),
  // Historical value, frozen for reproducibility: the stream the harness once derived from the
  // name (length 7, 'b' = 98).
  stream: [7, 98],
  compare: 'round',
  async run({ game, budget, rng }) {
    const est = await msrBanzhaf(game, { budget, rng });
    return { values: est.values, evaluations: game.evaluations };
  },
});
