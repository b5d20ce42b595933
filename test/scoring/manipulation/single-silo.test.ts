/** scoring/manipulation/single-silo.ts: what one misreporting silo can do alone. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { singleSiloBounds } from '../../../scoring/manipulation/single-silo.js';
import { everybodyElse } from '../../../scoring/private.js';
import { gridMax, lateRound, withReports } from './_rounds.js';

describe('EE-median', () => {
  it('single-silo bounds are exact: no grid point beats them and their reports attain them', () => {
    fc.assert(
      fc.property(lateRound(4, 7), fc.nat(), (u, k) => {
        const n = u.withOnly.length;
        const i = k % n;
        const v = (i + 1) % n;
        const b = singleSiloBounds('eeMedian', u)[i]!;
        expect(b.selfGain.unbounded).toBe(false);
        expect(b.selfGain.exact).toBe(true);
        expect(gridMax('eeMedian', u, i, i, 1, 40)).toBeLessThanOrEqual(b.selfGain.value + 1e-12);
        expect(gridMax('eeMedian', u, i, v, -1, 40)).toBeLessThanOrEqual(b.damage[v]!.value + 1e-12);
        const r = b.damage[v]!.reports![0]!;
        const at = everybodyElse(withReports(u, i, r.withOnly, r.without), { reduce: 'median' })[v]!;
        const honest = everybodyElse(u, { reduce: 'median' })[v]!;
        expect(honest - at).toBeCloseTo(b.damage[v]!.value, 12);
      }),
      { numRuns: 20 },
    );
  });
});

describe('input checks', () => {
  const u = { full: 1, empty: 0, withOnly: [0.5, 0.5], without: [0.5, 0.5] };
  it('name the parameter', () => {
    expect(() => singleSiloBounds('fp', u, { exactBudget: 0 })).toThrow(/^options\.exactBudget:/);
    expect(() => singleSiloBounds('fp', u, { undetectedBoxes: [] })).toThrow(/^options\.undetectedBoxes:/);
  });
});
