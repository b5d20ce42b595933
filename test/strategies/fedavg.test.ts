import { describe, expect, it } from 'vitest';
import { fedAvg } from '../../src/strategies/fedavg.js';
import { aggregateContext, hoeffding, makeSetup, selectContext } from './_fixtures.js';

describe('fedAvg', () => {
  const setup = makeSetup(10, { examples: [5, 10, 15, 20, 25, 30, 35, 40, 45, 50] });

  it('selects round(fraction·n) distinct silos in increasing order, at least 2', () => {
    const s = fedAvg({ fraction: 0.3 });
    const sel = s.select(null, selectContext(setup, 1, 3));
    expect(sel).toHaveLength(3);
    expect(new Set(sel).size).toBe(3);
    expect([...sel].sort((a, b) => a - b)).toEqual(sel);
    expect(fedAvg({ fraction: 0.01 }).select(null, selectContext(setup, 1, 3))).toHaveLength(2);
    expect(fedAvg().select(null, selectContext(setup, 1, 3))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(fedAvg({ clientsPerRound: 20 }).select(null, selectContext(setup, 1, 3))).toHaveLength(10);
  });

  it('is determined by the seed', () => {
    const s = fedAvg({ fraction: 0.3 });
    const a = Array.from({ length: 20 }, (_, r) => s.select(null, selectContext(setup, r + 1, 100 + r)));
    const b = Array.from({ length: 20 }, (_, r) => s.select(null, selectContext(setup, r + 1, 100 + r)));
    const c = Array.from({ length: 20 }, (_, r) => s.select(null, selectContext(setup, r + 1, 200 + r)));
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
  });

  it('selects every silo with probability k/n (Hoeffding, δ = 1e-9 per silo)', () => {
    const s = fedAvg({ clientsPerRound: 3 });
    const trials = 20000;
    const counts = new Array(10).fill(0);
    for (let t = 0; t < trials; t++) for (const i of s.select(null, selectContext(setup, 1, t))) counts[i]++;
    const bound = hoeffding(trials, 1e-9);
    for (const c of counts) expect(Math.abs(c / trials - 0.3)).toBeLessThan(bound);
  });

  it('weights by example counts, or equally', async () => {
    const ctx = aggregateContext(setup, 1, [1, 4, 9], 0);
    expect(Array.from((await fedAvg().aggregationWeights(null, ctx)).weights)).toEqual([10, 25, 50]);
    expect(Array.from((await fedAvg({ weights: 'equal' }).aggregationWeights(null, ctx)).weights)).toEqual([
      1, 1, 1,
    ]);
  });

  it('checks its inputs', async () => {
    expect(() => fedAvg({ fraction: 1.5 })).toThrow(/^strategy\.fraction/);
    expect(() => fedAvg().init({ ...setup, numSilos: 0 })).toThrow(/^setup\.numSilos/);
    expect(() => fedAvg().select(null, selectContext(setup, 0, 1))).toThrow(/^ctx\.round/);
    await expect(fedAvg().aggregationWeights(null, aggregateContext(setup, 1, [1, 1], 0))).rejects.toThrow(
      /twice/,
    );
    await expect(fedAvg().aggregationWeights(null, aggregateContext(setup, 1, [10], 0))).rejects.toThrow(
      /not a silo/,
    );
  });
});
