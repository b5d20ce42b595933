/** Schema pieces shared by the estimators' configurations (internal; not re-exported). */
import Type, { type TProperties } from 'typebox';

/** An estimator's configuration object: closed, so a misspelt option is reported as an unknown key. */
export const options = <P extends TProperties>(properties: P) =>
  Type.Object(properties, { additionalProperties: false });

/** `budget`: maximum distinct coalition evaluations per round (default `defaultBudget(k)`). */
export const budget = Type.Optional(Type.Integer({ minimum: 1 }));
