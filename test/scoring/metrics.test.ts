import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { averageRanks, kendallTau, normalizedL2, pearson, spearman } from '../../scoring/metrics.js';

// Scores on a grid of 1e-3 in [−100, 100]: distinct values stay distinct under the transforms below.
const vec = (n: number) =>
  fc.array(
    fc.integer({ min: -100_000, max: 100_000 }).map((k) => k / 1000),
    { minLength: n, maxLength: n },
  );
const pair = fc.integer({ min: 3, max: 30 }).chain((n) => fc.tuple(vec(n), vec(n)));

describe('known answers (values from scipy.stats documentation examples)', () => {
  it('spearmanr([1,2,3,4,5], [5,6,7,8,7]) = 0.8207826816681233', () => {
    expect(spearman([1, 2, 3, 4, 5], [5, 6, 7, 8, 7])).toBeCloseTo(0.8207826816681233, 14);
  });
  it('kendalltau([12,2,1,12,2], [1,4,7,1,0]) = −0.47140452079103173 (tau-b, with ties)', () => {
    expect(kendallTau([12, 2, 1, 12, 2], [1, 4, 7, 1, 0])).toBeCloseTo(-0.47140452079103173, 14);
  });
  it('average ranks of ties', () => {
    expect(Array.from(averageRanks([10, 20, 10, 30, 20, 20]))).toEqual([1.5, 4, 1.5, 6, 4, 4]);
  });
  it('normalized L2 of the paper 003 §5 example vectors', () => {
    // a − min = (0, 0.01, 0.96), mean 0.97/3; b − min = (0, 0.01, 0.03), mean 0.04/3.
    const a = [0, 0.01, 0.96].map((x) => x / (0.97 / 3));
    const b = [0, 0.01, 0.03].map((x) => x / (0.04 / 3));
    const expected = Math.hypot(a[0]! - b[0]!, a[1]! - b[1]!, a[2]! - b[2]!);
    expect(normalizedL2([0.01, 0.02, 0.97], [0.32, 0.33, 0.35])).toBeCloseTo(expected, 12);
    expect(spearman([0.01, 0.02, 0.97], [0.32, 0.33, 0.35])).toBeCloseTo(1, 14);
  });
});

describe('properties', () => {
  it('each correlation is in [−1, 1] and symmetric', () => {
    fc.assert(
      fc.property(pair, ([a, b]) => {
        for (const f of [pearson, spearman, kendallTau]) {
          const r = f(a, b);
          if (Number.isNaN(r)) continue;
          expect(Math.abs(r)).toBeLessThanOrEqual(1 + 1e-12);
          expect(f(b, a)).toBeCloseTo(r, 12);
        }
      }),
    );
  });

  it('rank correlations are invariant under strictly increasing transforms; reversal flips the sign', () => {
    fc.assert(
      fc.property(pair, ([a, b]) => {
        const t = b.map((x) => x ** 3 + 2 * x + 1); // strictly increasing, injective on the grid
        const s = spearman(a, b);
        const k = kendallTau(a, b);
        if (Number.isNaN(s)) return;
        expect(spearman(a, t)).toBeCloseTo(s, 10);
        expect(kendallTau(a, t)).toBeCloseTo(k, 10);
        expect(
          spearman(
            a,
            b.map((x) => -x),
          ),
        ).toBeCloseTo(-s, 10);
        expect(
          kendallTau(
            a,
            b.map((x) => -x),
          ),
        ).toBeCloseTo(-k, 10);
      }),
    );
  });

  it('a vector against itself: correlations 1, distance 0; distance invariant to positive affine maps', () => {
    fc.assert(
      fc.property(
        vec(8),
        fc.double({ min: 0.1, max: 10, noNaN: true }),
        fc.double({ min: -5, max: 5, noNaN: true }),
        (a, s, c) => {
          fc.pre(new Set(a).size === a.length);
          expect(pearson(a, a)).toBeCloseTo(1, 12);
          expect(spearman(a, a)).toBeCloseTo(1, 12);
          expect(kendallTau(a, a)).toBe(1);
          expect(
            normalizedL2(
              a,
              a.map((x) => s * x + c),
            ),
          ).toBeLessThan(1e-9);
        },
      ),
    );
  });

  it('undefined correlations are NaN, never a made-up number', () => {
    expect(pearson([1, 1, 1], [1, 2, 3])).toBeNaN();
    expect(spearman([2, 2, 2], [1, 2, 3])).toBeNaN();
    expect(kendallTau([2, 2, 2], [1, 2, 3])).toBeNaN();
  });
});

describe('bad input', () => {
  it('throws RangeError naming the argument', () => {
    expect(() => spearman([1, 2, 3], [1, 2])).toThrow(/^b: expected 3 values/);
    expect(() => kendallTau([1], [1])).toThrow(/^a: expected at least 2/);
    expect(() => pearson([1, Number.NaN], [1, 2])).toThrow(/^a\[1\]: expected a finite number/);
    expect(() => normalizedL2([1, 2], [1, Number.POSITIVE_INFINITY])).toThrow(RangeError);
  });
});
