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

/** The options a configuration leaves out (the schema documents them as defaults). */
const DEFAULTS = { temperature: 0.01, alpha: 0.7 } as const;

export const maverick = defineEstimator({
  name: 'maverick',
  title: 'Maverick-Shapley, MS-GTG (papers/000 Eq. 7–10, Alg. 1)',
  schema: options({
    budget: budget("GTG-Shapley's evaluation budget per class and round."),
    temperature: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        default: DEFAULTS.temperature,
        description: 'Softmax temperature of the class difficulties (papers/000 Eq. 10).',
      }),
    ),
    alpha: Type.Optional(
      Type.Number({
        minimum: 0,
        maximum: 1,
        default: DEFAULTS.alpha,
        description: 'Decay of the class-wise accumulator S ← α·S + (1 − α)·φ (papers/000 Eq. 8).',
      }),
    ),
  }),
  // Historical value, frozen for reproducibility: the harness once seeded Maverick-Shapley with
  // deriveSeed(seed, round, 7).
  stream: [7],
  compare: 'cumulative',
  // Carried between rounds: the class-wise accumulator S (silos × classes, silo-major).
  initialState: ({ numSilos, numClasses }): Float64Array => new Float64Array(numSilos * numClasses),
  async run(input) {
    const { config, budget, participants, numClasses, state } = input;
    const round = await maverickShapleyRound(
      memoizeVector(input.perClass),
      (g, ctx) => gtgShapley(g, { budget, rng: ctx.rng }),
      { temperature: config.temperature ?? DEFAULTS.temperature, seed: input.seed },
    );
    const accumulated = accumulateClassShapley(
      state,
      numClasses,
      participants,
      round.phi,
      config.alpha ?? DEFAULTS.alpha,
    );
    return {
      values: round.rewards,
      evaluations: round.evaluations,
      cumulative: maverickScores(accumulated, round.beta),
      state: accumulated,
    };
  },
});
