/** Schema pieces shared by the estimators' configurations (internal; not re-exported). */
import Type, { type TProperties } from 'typebox';

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
