/**
 * Trajectory Shapley (papers/002 Eq. 9–13): each round's updates scored against the server's
 * validation reference update, within `budget` samples; cumulative by construction.
 */
import { accumulateTrajectory, trajectoryShapley, updateGeometry } from '../../scoring/trajectory.js';
import { budget, options } from './_schema.js';
import { defineEstimator } from './estimator.js';

export const tsv = defineEstimator({
  name: 'tsv',
  title: 'Trajectory Shapley (papers/002 Eq. 9–13)',
  schema: options({
    budget: budget(
      'Utilities per round when the Trajectory Shapley value is sampled (more than 20 participants): ⌊(budget − 1)/k⌋ permutations.',
    ),
  }),
  // Historical value, frozen for reproducibility: the stream the harness once derived from the
  // name (length 3, 't' = 116).
  stream: [3, 116],
  compare: 'cumulative',
  needs: { referenceUpdate: true },
  // Carried between rounds: the cumulative values, one per silo.
  initialState: ({ numSilos }): Float64Array => new Float64Array(numSilos),
  async run({ updates, referenceUpdate, budget, rng, participants, state }) {
    const est = trajectoryShapley(updateGeometry(updates, referenceUpdate!), { budget, rng });
    const cumulative = accumulateTrajectory(state, participants, est.values);
    return { values: est.values, evaluations: est.evaluations, cumulative, state: cumulative };
  },
});
