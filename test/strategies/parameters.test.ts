/**
 * A strategy's parameters are written once, in its entry's `parameters` schema (docs/config.md is
 * generated from it; the code's parameter type is derived from it), and the strategy reads exactly
 * those: every key the schema declares, and no other, with the declared defaults and bounds
 * (src/strategies/params.ts checks the configuration against the schema before any read).
 */
import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { defaultsOf, parameters } from '../../src/strategies/_schema.js';
import { fedAvg, fedAvgVariant } from '../../src/strategies/fedavg.js';
import { fedOwen } from '../../src/strategies/fedowen.js';
import { Params, readParameters } from '../../src/strategies/params.js';
import {
  BUILT_IN_STRATEGIES,
  createStrategy,
  registerStrategy,
  STRATEGY_NAMES,
} from '../../src/strategies/registry.js';

interface ParameterSchema {
  type?: string;
  enum?: unknown[];
  default?: unknown;
  minimum?: number;
  exclusiveMinimum?: number;
  description?: string;
}
const propertiesOf = (schema: { properties: object }) =>
  Object.entries(schema.properties) as [string, ParameterSchema][];

/** A valid value for a parameter without a default (only numbers may have none). */
const someValue = (s: ParameterSchema) => (s.minimum ?? s.exclusiveMinimum ?? 0) + 1;

describe('built-in strategy parameters', () => {
  it('every built-in has a closed schema and documents every parameter', () => {
    expect(BUILT_IN_STRATEGIES.map((e) => e.name)).toEqual(STRATEGY_NAMES);
    for (const entry of BUILT_IN_STRATEGIES) {
      expect(entry.parameters.type, entry.name).toBe('object');
      expect((entry.parameters as { additionalProperties?: unknown }).additionalProperties).toBe(false);
      expect(entry.parameters.required ?? [], entry.name).toEqual([]);
      for (const [key, s] of propertiesOf(entry.parameters)) {
        expect(s.description, `${entry.name}.${key}`).toMatch(/\S/);
        if (s.type !== 'number' && s.type !== 'integer')
          expect(s.default, `${entry.name}.${key}`).toBeDefined();
      }
    }
  });

  it('a strategy builds from its documented defaults, and reads every key its schema declares', () => {
    for (const entry of BUILT_IN_STRATEGIES) {
      const config: Record<string, unknown> = { name: entry.name };
      for (const [key, s] of propertiesOf(entry.parameters)) config[key] = s.default ?? someValue(s);
      // createStrategy calls Params.done(): a declared key the strategy never read would be unknown.
      expect(createStrategy(config as { name: string }).name).toBe(entry.name);
      const p = new Params(config, entry.name, entry.parameters);
      entry.create(p);
      expect(() => p.done()).not.toThrow();
    }
  });

  it('the documented defaults are what a strategy reads when the configuration sets nothing', () => {
    for (const entry of BUILT_IN_STRATEGIES)
      expect(readParameters(new Params({}, entry.name, entry.parameters), entry.parameters)).toEqual(
        defaultsOf(entry.parameters),
      );
  });
});

describe('Params holds every read to the schema', () => {
  const schema = Type.Object(
    {
      alpha: Type.Optional(Type.Number({ minimum: 0, maximum: 1, default: 0.5, description: 'a' })),
      mode: Type.Optional(Type.Enum(['a', 'b'] as const, { default: 'a', description: 'm' })),
      k: Type.Optional(Type.Integer({ minimum: 1, description: 'k' })),
      on: Type.Optional(Type.Boolean({ default: true, description: 'o' })),
    },
    { additionalProperties: false },
  );
  const p = () => new Params({}, 'test', schema);

  it('reading a key the schema does not declare throws', () => {
    expect(() => p().number('beta', 1)).toThrow(
      new Error("strategy 'test' reads parameter 'beta', which its parameters schema does not declare"),
    );
    expect(() => p().boolean('off', false)).toThrow(/reads parameter 'off', which its parameters schema/);
  });

  it('the configuration is checked against the schema before anything is read', () => {
    expect(() => new Params({ alpha: 2 }, 'test', schema)).toThrow(
      new RangeError('strategy.alpha: expected a number in [0, 1], got 2'),
    );
    expect(() => new Params({ k: 1.5 }, 'test', schema)).toThrow(
      new RangeError('strategy.k: expected an integer ≥ 1, got 1.5'),
    );
    expect(() => new Params({ mode: 'c' }, 'test', schema)).toThrow(
      new RangeError("strategy.mode: expected one of 'a', 'b', got 'c'"),
    );
    expect(() => new Params({ on: 1 }, 'test', schema)).toThrow(
      new TypeError('strategy.on: expected true or false, got number'),
    );
  });

  it('an absent key reads as the default the schema declares, whatever the reader passes', () => {
    expect(p().number('alpha', 0.4, { min: 0, max: 1 })).toBe(0.5);
    expect(p().oneOf('mode', 'b', ['a', 'b'])).toBe('a');
    expect(p().boolean('on', false)).toBe(true);
    expect(p().optionalNumber('k')).toBeUndefined();
  });

  it('reads return the configured values, and readParameters derives them from the schema', () => {
    const q = new Params({ alpha: 0.25, k: 3 }, 'test', schema);
    expect(q.number('alpha', 0.5, { min: 0, max: 1 })).toBe(0.25);
    expect(q.optionalNumber('k', { min: 1, integer: true })).toBe(3);
    expect(q.oneOf('mode', 'a', ['a', 'b'])).toBe('a');
    expect(q.boolean('on', true)).toBe(true);
    expect(readParameters(new Params({ mode: 'b' }, 'test', schema), schema)).toEqual({
      alpha: 0.5,
      mode: 'b',
      on: true,
    });
  });

  it('a variant built in code checks its parameters as a configuration, with the same message', () => {
    let fromConfig = '';
    try {
      createStrategy({ name: 'fedowen', epsilon: 2 });
    } catch (e) {
      fromConfig = (e as Error).message;
    }
    expect(fromConfig).toBe('strategy.epsilon: expected a number in [0, 1], got 2');
    expect(() => fedOwen({ epsilon: 2 })).toThrow(new RangeError(fromConfig));
    expect(() => fedAvg({ weights: 'both' as never })).toThrow(
      new RangeError("strategy.weights: expected one of 'examples', 'equal', got 'both'"),
    );
  });

  it('a FedAvg variant must declare the round size its default selection reads', () => {
    expect(() =>
      fedAvgVariant({
        name: 'no-size',
        description: 'x',
        parameters: parameters({ alpha: Type.Number({ default: 1, description: 'a' }) }),
        networked: 'fixed-weights',
        requiresFullVisibility: false,
      }),
    ).toThrow(/^parameters\.fraction: a FedAvg variant declares the round size/);
  });

  it("createStrategy holds a user strategy to its entry's schema", () => {
    registerStrategy({
      name: 'user-undeclared',
      description: 'reads a key its schema lacks',
      parameters: Type.Object({}, { additionalProperties: false }),
      create: (q) => ({
        ...fedAvg({ fraction: q.number('fraction', 1, { min: 0, max: 1 }) }),
        name: 'user-undeclared',
      }),
    });
    expect(() => createStrategy({ name: 'user-undeclared' })).toThrow(
      "strategy 'user-undeclared' reads parameter 'fraction', which its parameters schema does not declare",
    );
  });
});
