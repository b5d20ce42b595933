import { describe, expect, it } from 'vitest';
import { headlineLeaderboard, rankLabel, sharesOf } from '../../scoring/leaderboard.js';

/** Round k: silos 0–2 contribute, silo 3 is a free rider (v(M0 + U_3) = v(M0), v(M − U_3) = v(M)). */
const round = (k: number) => {
  const empty = 0.6 + 0.01 * k;
  const full = empty + 0.1;
  return {
    full,
    empty,
    withOnly: [0.04, 0.03, 0.02].map((d) => empty + d).concat([empty]),
    without: [0.05, 0.035, 0.02].map((d) => full - d).concat([full]),
  };
};

describe('headlineLeaderboard', () => {
  const rounds = [1, 2, 3, 4].map(round);
  it('is deterministic with its seed, shares sum to 1, intervals hold, ranks sit in their ranges', () => {
    const a = headlineLeaderboard(4, [rounds], { seed: 3 });
    expect(headlineLeaderboard(4, [rounds], { seed: 3 })).toEqual(a);
    expect(a.reduce((t, e) => t + e.share!, 0)).toBeCloseTo(1, 12);
    for (const e of a) {
      expect(e.share!).toBeGreaterThanOrEqual(0);
      expect(e.interval[0]).toBeLessThanOrEqual(e.interval[1]);
      expect(e.rankRange[0]).toBeLessThanOrEqual(e.rank);
      expect(e.rankRange[1]).toBeGreaterThanOrEqual(e.rank);
    }
    // silo 3 is a free rider (v(M0 + U_3) = v(M0), v(M − U_3) = v(M)): weight 0, share 0, last
    expect(a[3]!.headline).toBe(0);
    expect(a[3]!.share).toBe(0);
    expect(a[3]!.rank).toBe(4);
  });
  it('a silo never selected gets share null; near-ties print as a range', () => {
    const a = headlineLeaderboard(4, [rounds], { selected: [true, true, true, false] });
    expect(a[3]!.share).toBeNull();
    expect(a.reduce((t, e) => t + (e.share ?? 0), 0)).toBeCloseTo(1, 12);
    expect(rankLabel({ rank: 2, rankRange: [2, 3] })).toBe('2–3');
    expect(rankLabel({ rank: 2, rankRange: [2, 2] })).toBe('2');
  });
  it('equal shares when no headline is positive; bad input names the parameter', () => {
    expect(sharesOf([-1, 0], [true, true])).toEqual([0.5, 0.5]);
    expect(() => headlineLeaderboard(0, [])).toThrow(/^n:/);
    expect(() => headlineLeaderboard(2, [], { resamples: 0 })).toThrow(/^options\.resamples:/);
  });
});
