/**
 * Maverick-Shapley, MS-GTG (papers/000 Eq. 7–10, Alg. 1): GTG-Shapley on each class's utility
 * within `budget` evaluations per class, class difficulties at `temperature`, the class-wise values
 * accumulated over rounds with decay `alpha`. Cumulative by construction.
 */
import Type from 'typebox';
import { memoizeVector } from '../../../scoring/game.js';
import { gtgShapley } from '../../../scoring/gtg.js';
import { accumulateClassShapley, maverickScores, maverickShapleyRound } from '../../../scoring/maverick.js';
import { budget, options } from './_schema.js';
import { defineEstimator } from './estimator.js';

/** Carried between rounds: the accumulator S (silos × classes) and the latest class difficulties. */
interface MaverickState {
  accumulated: Float64Array;
  beta: Float64Array;
}

export const maverick = defineEstimator({
  name: 'maverick',
  title: 'Maverick-Shapley, MS-GTG (papers/000 Eq. 7–10, Alg. 1)',
  schema: options({
    /** GTG's evaluation budget, per class. */
    budget,
    /** Softmax temperature of the class difficulties (default 0.01). */
    temperature: Type.Optional(Type.Number({ exclusiveMinimum: 0 })),
    /** Decay of the class-wise accumulator (default 0.7). */
    alpha: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  }),
  // Historical value, frozen for reproducibility: the harness once seeded Maverick-Shapley with
  // deriveSeed(seed, round, 7).
  stream: [7],
  compare: 'cumulative',
  async run(input): Promise<{
    values: Float64Array;
    evaluations: number;
    cumulative: Float64Array;
    state: MaverickState;
  }> {
    const { config, budget, participants, numSilos, numClasses } = input;
    const state = input.state as MaverickState | undefined;
    const round = await maverickShapleyRound(
      memoizeVector(input.perClass),
      (g, ctx) => gtgShapley(g, { budget, rng: ctx.rng }),
      { temperature: config.temperature ?? 0.01, seed: input.seed },
    );
    const previous = state?.accumulated ?? new Float64Array(numSilos * numClasses);
    const accumulated = accumulateClassShapley(
      previous,
      numClasses,
      participants,
      round.phi,
      config.alpha ?? 0.7,
    );
    return {
      values: round.rewards,
      evaluations: round.evaluations,
      cumulative: maverickScores(accumulated, round.beta),
      state: { accumulated, beta: round.beta },
    };
  },
});
