/**
 * Internal: the pieces a strategy's parameters schema is built from, and the parameter type a
 * strategy's code reads, derived from that schema (`Static<T>`) so that the schema is the one
 * declaration of a strategy's parameters (as the estimators' schemas are, ../estimators/_schema.ts).
 * Never re-exported.
 */

import Type, { type Static, type TObject, type TOptional, type TSchema } from 'typebox';

/**
 * A strategy's parameters object schema: every parameter optional (a configuration may leave it
 * out), none other allowed. Give each a `description` and, unless absence means something, a
 * `default`; numbers may have bounds, strings an `enum`. docs/config.md is generated from it.
 */
export const parameters = <P extends Record<string, TSchema>>(properties: P) =>
  Type.Object(
    Object.fromEntries(Object.entries(properties).map(([k, s]) => [k, Type.Optional(s)])) as {
      [K in keyof P]: TOptional<P[K]>;
    },
    { additionalProperties: false },
  );

/**
 * What a strategy's code reads from its schema `T`: every parameter set (absent ones take their
 * declared defaults), except the keys `NoDefault`, which the schema declares without a default.
 */
export type ParamsOf<T extends TObject, NoDefault extends string = 'clientsPerRound'> = Required<
  Omit<Static<T>, NoDefault>
> &
  Partial<Pick<Static<T>, NoDefault & keyof Static<T>>>;

/**
 * `fraction` (default `fraction`) and `clientsPerRound`: how many silos a round takes
 * (`roundSize` in ./_sampling.ts).
 */
export function roundSizeParameters(fraction: number) {
  return {
    fraction: Type.Number({
      exclusiveMinimum: 0,
      maximum: 1,
      default: fraction,
      description:
        'Fraction of the silos per round: k = round(fraction·n), at least min(2, n) (the private scores need two survivors).',
    }),
    clientsPerRound: Type.Integer({
      minimum: 1,
      description: 'Silos per round k, capped at n; overrides `fraction`. Default: from `fraction`.',
    }),
  };
}

/**
 * `alpha`: papers/000's decay α of a running value, `what` ← α·`what` + (1 − α)·φ, 0.7 by default
 * (§5.1: "chosen from {0.6, 0.7, 0.8}" for the selection baselines). `of` names the value.
 */
export const decayParameter = (of: string, what: string) =>
  Type.Number({
    minimum: 0,
    maximum: 1,
    default: 0.7,
    description: `α, decay of ${of} ${what} ← α·${what} + (1 − α)·φ (papers/000 §5.1: 0.7, chosen from {0.6, 0.7, 0.8}).`,
  });

/** The part of a parameter's JSON schema the readers use. */
export interface ParameterSchema {
  type?: string;
  enum?: readonly unknown[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
}

/** The parameters of an object schema, by key, in declaration order. */
export function propertiesOf(schema: TObject): [string, ParameterSchema][] {
  return Object.entries(schema.properties as Record<string, ParameterSchema>);
}

/** The defaults a parameters schema declares, by key (keys without a default are left out). */
export function defaultsOf<P>(schema: TObject): P {
  const out: Record<string, unknown> = {};
  for (const [key, s] of propertiesOf(schema)) if (s.default !== undefined) out[key] = s.default;
  return out as P;
}
