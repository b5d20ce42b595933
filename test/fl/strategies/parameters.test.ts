/**
 * A strategy's parameters are written in its entry's `parameters` schema (docs/config.md is
 * generated from it) and the strategy reads exactly those: every key the schema declares, and no
 * other, with the declared defaults and bounds (src/fl/strategies/_params.ts checks each read).
 */
import Type from 'typebox';
import { describe, expect, it } from 'vitest';
import { defaultsOf, Params, readParameters } from '../../../src/fl/strategies/_params.js';
import { fedAvg } from '../../../src/fl/strategies/fedavg.js';
import {
  BUILT_IN_STRATEGIES,
  createStrategy,
  registerStrategy,
  STRATEGY_NAMES,
} from '../../../src/fl/strategies/registry.js';

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

describe('Params checks each read against the schema', () => {
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

  it('a read with another default, bounds, values or type throws', () => {
    expect(() => p().number('alpha', 0.4, { min: 0, max: 1 })).toThrow(
      "reads parameter 'alpha' with default 0.4, its parameters schema declares 0.5",
    );
    expect(() => p().number('alpha', 0.5, { min: 0, max: 1, maxOpen: true })).toThrow(
      'with bounds a number in [0, 1), its parameters schema declares a number in [0, 1]',
    );
    expect(() => p().optionalNumber('k', { min: 1 })).toThrow(/with bounds a number ≥ 1, .* an integer ≥ 1$/);
    expect(() => p().number('k', 1, { min: 1, integer: true })).toThrow(/with default 1, .* no default$/);
    expect(() => p().oneOf('mode', 'a', ['a', 'c'])).toThrow(/with values \["a","c"\]/);
    expect(() => p().boolean('mode', true)).toThrow(/with type boolean, .* enumeration$/);
    expect(() => p().string('on', 'x')).toThrow(/with type string, .* boolean$/);
  });

  it('reads that agree pass, and readParameters derives them from the schema', () => {
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
    expect(() => readParameters(new Params({ k: 0 }, 'test', schema), schema)).toThrow(
      new RangeError('strategy.k: expected an integer ≥ 1, got 0'),
    );
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
