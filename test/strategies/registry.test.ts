import { describe, expect, it } from 'vitest';
import { DEFAULT_STRATEGY_NAME } from '../../src/consortium/defaults.js';
import { createStrategy, DEFAULT_STRATEGY, STRATEGY_NAMES } from '../../src/strategies/registry.js';

describe('createStrategy', () => {
  it("the default is the contract's name, a registered FedAvg", () => {
    expect(DEFAULT_STRATEGY).toEqual({ name: DEFAULT_STRATEGY_NAME });
    expect(STRATEGY_NAMES).toContain(DEFAULT_STRATEGY_NAME);
    expect(createStrategy(DEFAULT_STRATEGY).name).toBe('fedavg');
  });

  it('builds every named strategy with its defaults and visibility flag', () => {
    const full = new Set(['fedms', 'fedowen', 'fedtsv', 's-fedavg', 'greedyfed']);
    expect(STRATEGY_NAMES.sort()).toEqual(
      [
        'fedavg',
        'fedemd',
        'fedms',
        'fedowen',
        'fedtsv',
        'greedyfed',
        's-fedavg',
        'score-weighted',
        'score-selection',
      ].sort(),
    );
    for (const name of STRATEGY_NAMES) {
      const s = createStrategy({ name });
      expect(s.name).toBe(name);
      expect(s.requiresFullVisibility).toBe(full.has(name));
    }
  });

  it('names the field of a value out of range', () => {
    expect(() => createStrategy({ name: 'fedowen', epsilon: 2 })).toThrow(
      new RangeError('strategy.epsilon: expected a number in [0, 1], got 2'),
    );
    expect(() => createStrategy({ name: 'fedavg', fraction: 0 })).toThrow(
      new RangeError('strategy.fraction: expected a number in (0, 1], got 0'),
    );
    expect(() => createStrategy({ name: 'fedms', temperature: -1 })).toThrow(/^strategy\.temperature: /);
    expect(() => createStrategy({ name: 'greedyfed', clientsPerRound: 1.5 })).toThrow(
      /^strategy\.clientsPerRound: expected an integer ≥ 1/,
    );
    expect(() => createStrategy({ name: 'fedtsv', method: 'magic' })).toThrow(
      new RangeError("strategy.method: expected one of 'auto', 'exact', 'sampled', got 'magic'"),
    );
  });

  it('throws TypeError for a wrong type, RangeError for unknown names and keys', () => {
    expect(() => createStrategy({ name: 'fedowen', epsilon: '0.1' })).toThrow(TypeError);
    expect(() => createStrategy({ name: 'fedowen', epsilon: '0.1' })).toThrow(/^strategy\.epsilon: /);
    expect(() => createStrategy({ name: 'fedprox' })).toThrow(/^strategy\.name: unknown strategy 'fedprox'/);
    expect(() => createStrategy({ name: 'fedemd', gamma: 1 })).toThrow(
      /^strategy\.gamma: unknown parameter of 'fedemd'/,
    );
    expect(() => createStrategy(null as never)).toThrow(TypeError);
    expect(() => createStrategy({ name: 3 } as never)).toThrow(/^strategy\.name: expected a string/);
  });

  it('passes parameters through (a parameter changes behaviour)', async () => {
    const { makeSetup, selectContext } = await import('./_fixtures.js');
    const setup = makeSetup(10);
    const s = createStrategy({ name: 'fedavg', clientsPerRound: 4 });
    expect(s.select(s.init(setup), selectContext(setup, 1, 5))).toHaveLength(4);
    const t = createStrategy({ name: 'fedavg', fraction: 0.5 });
    expect(t.select(t.init(setup), selectContext(setup, 1, 5))).toHaveLength(5);
  });
});
