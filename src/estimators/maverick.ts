/**
 * Maverick-Shapley, MS-GTG (papers/000 Eq. 7–10, Alg. 1): GTG-Shapley on the class-wise utility —
 * by default Alg. 1's joint sampler (scoring/ms-gtg.ts: one permutation stream for all classes,
 * truncation on the class vector, Eq. 11 on the β-weighted φ) within `budget` evaluations, or GTG
 * run per class within `budget` each —, truncation ε_b = ε_i = 0.001 (§5.1), class difficulties at
 * `temperature`, the class-wise values accumulated over rounds with decay `alpha`. Cumulative by
 * construction.
 */
import Type from 'typebox';
import { memoizeVector } from '../../scoring/game.js';
import { gtgShapley } from '../../scoring/gtg.js';
import {
  accumulateClassShapley,
  type ClassEstimator,
  type JointClassEstimator,
  maverickScores,
  maverickShapleyRound,
  PAPER000_DEFAULTS,
} from '../../scoring/maverick.js';
import { msGtg } from '../../scoring/ms-gtg.js';
import { budget, options, PAPER000_EPSILON, truncation } from './_schema.js';
import { defineEstimator } from './estimator.js';

/** The options a configuration leaves out (the schema documents them as defaults). */
const DEFAULTS = { ...PAPER000_DEFAULTS, sampler: 'joint' } as const;

export const maverick = defineEstimator({
  name: 'maverick',
  title: 'Maverick-Shapley, MS-GTG (papers/000 Eq. 7–10, Alg. 1)',
  schema: options({
    budget: budget(
      "GTG-Shapley's evaluation budget per round: over all classes for the joint sampler, per class for 'perClass'.",
    ),
    sampler: Type.Optional(
      Type.Enum(['joint', 'perClass'] as const, {
        default: DEFAULTS.sampler,
        description:
          "'joint': papers/000 Alg. 1 as written, one guided permutation stream for all classes, truncation on the class vector, Eq. 11 on the β-weighted φ (scoring/ms-gtg.ts); 'perClass': GTG run once per class on the same seed (the earlier harness; the classes may truncate and stop at different walks).",
      }),
    ),
    ...truncation(),
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
    const withinRoundTolerance = config.epsilonI ?? PAPER000_EPSILON;
    const estimator: ClassEstimator | JointClassEstimator =
      (config.sampler ?? DEFAULTS.sampler) === 'joint'
        ? msGtg({ budget, withinRoundTolerance })
        : (g, ctx) => gtgShapley(g, { budget, rng: ctx.rng, withinRoundTolerance });
    const round = await maverickShapleyRound(memoizeVector(input.perClass), estimator, {
      temperature: config.temperature ?? DEFAULTS.temperature,
      seed: input.seed,
      betweenRoundEpsilon: config.epsilonB ?? PAPER000_EPSILON,
    });
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
