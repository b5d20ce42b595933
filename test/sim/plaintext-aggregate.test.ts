import { describe, expect, it } from 'vitest';
import { plaintextAggregate } from '../../src/sim/secure-round.js';

describe('plaintextAggregate (secureAggregation.enabled: false)', () => {
  const updates = [Float32Array.of(1, 2), Float32Array.of(3, -4), Float32Array.of(100, 100)];

  it('is the weighted mean over the survivors', () => {
    const r = plaintextAggregate([2, 5, 7], [2, 5], updates, [1, 3, 9], 2);
    expect(r.totalWeight).toBe(4);
    expect(Array.from(r.weightedSum)).toEqual([10, -10]);
    expect(Array.from(r.average)).toEqual([2.5, -2.5]);
  });

  it('aggregates nothing when every weight is 0 (FedMS discarding its coreset): zeros, not NaN', () => {
    const r = plaintextAggregate([0, 1, 2], [0, 1, 2], updates, [0, 0, 0], 2);
    expect(r.totalWeight).toBe(0);
    expect(Array.from(r.average)).toEqual([0, 0]);
    expect(Array.from(r.weightedSum)).toEqual([0, 0]);
  });

  it('rejects a negative or non-finite weight, naming it', () => {
    expect(() => plaintextAggregate([0, 1], [0, 1], updates, [1, -1], 2)).toThrow(/weights\[1\]/);
    expect(() => plaintextAggregate([0, 1], [0, 1], updates, [Number.NaN, 1], 2)).toThrow(/weights\[0\]/);
  });
});
