import { describe, expect, it } from 'vitest';
import { emptyHistory, recordRound } from '../../src/strategies/strategy.js';

describe('history', () => {
  it('counts selections per silo and keeps the old history unchanged', () => {
    const h0 = emptyHistory(4);
    const h1 = recordRound(h0, {
      round: 1,
      selected: [0, 2],
      dropped: [2],
      scores: { fp: [1, null, 2, null] },
    });
    const h2 = recordRound(h1, { round: 2, selected: [2, 3], scores: {} });
    expect(h0.participation).toEqual([0, 0, 0, 0]);
    expect(h0.rounds).toHaveLength(0);
    expect(h1.participation).toEqual([1, 0, 1, 0]);
    expect(h2.participation).toEqual([1, 0, 2, 1]);
    expect(h2.rounds.map((r) => r.round)).toEqual([1, 2]);
  });

  it('rejects bad inputs', () => {
    expect(() => emptyHistory(0)).toThrow(RangeError);
    expect(() => recordRound(emptyHistory(3), { round: 1, selected: [3], scores: {} })).toThrow(/not a silo/);
    expect(() => recordRound(emptyHistory(3), { round: 1, selected: [1, 1], scores: {} })).toThrow(/twice/);
  });
});
