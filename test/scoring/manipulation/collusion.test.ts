/** scoring/manipulation/collusion.ts: bounds for coalitions of colluding silos. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { collusionBounds } from '../../../scoring/manipulation/collusion.js';
import { singleSiloBounds } from '../../../scoring/manipulation/single-silo.js';
import { type PrivateUtilities, SCHEMES } from '../../../scoring/private.js';
import { earlyRound, lateRound, privateScores, sum, withReports } from './_rounds.js';

describe('collusion', () => {
  it('a member gains at least as much with the coalition as alone; reports attain the values', () => {
    fc.assert(
      fc.property(earlyRound(4, 6), (u) => {
        for (const s of SCHEMES) {
          const single = singleSiloBounds(s, u);
          for (const c of collusionBounds(s, u, 2)) {
            c.members.forEach((m, q) => {
              expect(c.memberGain[q]!.value).toBeGreaterThanOrEqual(single[m]!.selfGain.value - 1e-12);
            });
            expect(c.totalGain.value).toBeGreaterThanOrEqual(0);
            if (!c.totalGain.unbounded) {
              let v: PrivateUtilities = u;
              c.members.forEach((m, q) => {
                v = withReports(v, m, c.totalGain.reports![q]!.withOnly, c.totalGain.reports![q]!.without);
              });
              const honest = privateScores(s, u);
              const at = privateScores(s, v);
              expect(sum(c.members.map((m) => at[m]! - honest[m]!))).toBeCloseTo(c.totalGain.value, 12);
            }
          }
        }
      }),
      { numRuns: 10 },
    );
  });

  it('EE-median coordinate search (k = 3) never beats the exact candidate grid and is marked inexact', () => {
    fc.assert(
      fc.property(lateRound(5, 6), (u) => {
        const exact = collusionBounds('eeMedian', u, 3);
        const search = collusionBounds('eeMedian', u, 3, { exactBudget: 1 });
        exact.forEach((c, q) => {
          expect(search[q]!.totalGain.exact).toBe(false);
          expect(search[q]!.totalGain.method).toBe('coordinate-search');
          expect(c.totalGain.method).toBe('breakpoints');
          // The grid is the supremum unless it met the normalizer's margin (issue 32): then both
          // are lower bounds of a gain the range ±|v(M)|/κ holds.
          if (c.totalGain.exact)
            expect(search[q]!.totalGain.value).toBeLessThanOrEqual(c.totalGain.value + 1e-12);
          else expect(c.totalGain.unbounded || search[q]!.totalGain.unbounded).toBe(false);
        });
      }),
      { numRuns: 5 },
    );
  });
});

describe('input checks', () => {
  const u = { full: 1, empty: 0, withOnly: [0.5, 0.5], without: [0.5, 0.5] };
  it('name the parameter', () => {
    expect(() => collusionBounds('ee', u, 3)).toThrow(/^k:/);
  });
});
