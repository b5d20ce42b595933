/**
 * The open side of the strategy registry (registry.ts): user modules register strategies by name.
 * registry.test.ts covers the built-ins and parameter validation.
 */
import { describe, expect, it } from 'vitest';
import { fedAvg } from '../../src/strategies/fedavg.js';
import {
  createStrategy,
  DEFAULT_STRATEGY,
  describeStrategy,
  registerStrategy,
  STRATEGY_NAMES,
  strategyNames,
} from '../../src/strategies/registry.js';

const renamed = (name: string) => ({ ...fedAvg(), name });

describe('registerStrategy', () => {
  it('adds a strategy that createStrategy builds with its parameters; the built-ins come first', () => {
    registerStrategy({
      name: 'user-fedavg',
      create: (p) => ({
        ...fedAvg({ fraction: p.number('fraction', 1, { min: 0, max: 1 }) }),
        name: 'user-fedavg',
      }),
      description: 'FedAvg under another name',
    });
    expect(strategyNames()).toEqual([...STRATEGY_NAMES, 'user-fedavg']);
    expect(STRATEGY_NAMES).not.toContain('user-fedavg');
    expect(createStrategy({ name: 'user-fedavg', fraction: 0.5 }).name).toBe('user-fedavg');
    expect(describeStrategy('user-fedavg')).toBe('FedAvg under another name');
    expect(() => createStrategy({ name: 'user-fedavg', fraction: 2 })).toThrow(/^strategy\.fraction: /);
    expect(() => createStrategy({ name: 'user-fedavg', other: 1 })).toThrow(
      /^strategy\.other: unknown parameter of 'user-fedavg'/,
    );
  });

  it('refuses a duplicate name, built-in or not', () => {
    const again = (name: string) => ({ name, create: () => renamed(name), description: 'again' });
    expect(() => registerStrategy(again('fedavg'))).toThrow(
      new RangeError("entry.name: strategy 'fedavg' is already registered"),
    );
    registerStrategy({ name: 'user-twice', create: () => renamed('user-twice'), description: 'once' });
    expect(() => registerStrategy(again('user-twice'))).toThrow(RangeError);
    expect(describeStrategy('user-twice')).toBe('once');
  });

  it('checks its arguments', () => {
    expect(() => registerStrategy({ name: '', create: () => renamed(''), description: '' })).toThrow(
      /^entry\.name: expected a non-empty string/,
    );
    expect(() => registerStrategy(null as never)).toThrow(/^entry: /);
    expect(() => registerStrategy({ name: 'user-bad', description: 'x' } as never)).toThrow(/^entry: /);
    expect(() => registerStrategy({ name: 'user-bad', create: () => renamed('user-bad') } as never)).toThrow(
      /^entry\.description: /,
    );
    expect(() =>
      registerStrategy({
        name: 'user-bad',
        create: () => renamed('user-bad'),
        description: 'x',
        parameters: { type: 'string' } as never,
      }),
    ).toThrow(/^entry\.parameters: /);
    expect(strategyNames()).not.toContain('user-bad');
  });

  it('lists every registered name for an unknown one', () => {
    expect(() => createStrategy({ name: 'fedprox' })).toThrow(
      new RangeError(
        `strategy.name: unknown strategy 'fedprox' (expected one of ${strategyNames()
          .map((s) => `'${s}'`)
          .join(', ')})`,
      ),
    );
    expect(() => describeStrategy('fedprox')).toThrow(RangeError);
  });

  it('refuses a factory that builds a strategy under another name', () => {
    registerStrategy({ name: 'user-liar', create: () => renamed('someone-else'), description: 'lies' });
    expect(() => createStrategy({ name: 'user-liar' })).toThrow(
      /^strategy\.name: 'user-liar' built a strategy named 'someone-else'/,
    );
  });

  it('defaults to FedAvg over every silo', () => {
    expect(createStrategy(DEFAULT_STRATEGY).name).toBe('fedavg');
  });
});
