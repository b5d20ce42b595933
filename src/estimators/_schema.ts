/** Schema pieces shared by the estimators' configurations (internal; not re-exported). */

import Type, { type TProperties } from 'typebox';
import { PAPER000_DEFAULTS } from '../../scoring/maverick.js';

/**
 * An estimator's configuration object: closed, so a misspelt option is reported as an unknown key.
 * Give every option a `description`, and a `default` when it is a constant (docs/config.md is
 * generated from them).
 */
export const options = <P extends TProperties>(properties: P) =>
  Type.Object(properties, { additionalProperties: false });

/**
 * `budget`: what the estimator may spend per round (`what`, a sentence); absent, the harness
 * passes `defaultBudget(k)` (./estimator.ts).
 */
export const budget = (what = 'Maximum distinct coalition evaluations per round.') =>
  Type.Optional(
    Type.Integer({
      minimum: 1,
      description: `${what} Default: max(2 + 2(k + 1), 32k) for a round of k participants.`,
    }),
  );

/** papers/000 §5.1: "error threshold ε_b = ε_i = 0.001" (scoring/maverick.ts owns it). */
export const PAPER000_EPSILON = PAPER000_DEFAULTS.epsilon;

/** `epsilonB` and `epsilonI`: GTG's truncation thresholds, the paper's values by default. */
export const truncation = () => ({
  epsilonB: Type.Optional(
    Type.Number({
      minimum: 0,
      default: PAPER000_EPSILON,
      description:
        'ε_b, between-round truncation (papers/000 Alg. 1 line 7): a round whose |v(N) − v(∅)| ≤ ε_b is not valued (every value 0); §5.1 uses 0.001. For a class vector, the largest class change.',
    }),
  ),
  epsilonI: Type.Optional(
    Type.Number({
      minimum: 0,
      default: PAPER000_EPSILON,
      description:
        'ε_i, within-round truncation (papers/000 Alg. 1 lines 15–20): once |v(N) − v(prefix)| < ε_i the rest of a walk is not evaluated (marginals 0); §5.1 uses 0.001. For a class vector, the largest class gap.',
    }),
  ),
});
