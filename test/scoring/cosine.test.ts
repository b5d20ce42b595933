import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cosineScores, cosineSimilarity } from '../../scoring/cosine.js';

describe('COS', () => {
  it('known values', () => {
    expect(cosineSimilarity([1, 0], [0, 1])).toBe(0);
    expect(cosineSimilarity([1, 1], [2, 2])).toBeCloseTo(1, 15);
    expect(cosineSimilarity([1, 0], [-3, 0])).toBe(-1);
    expect(cosineSimilarity([0, 0], [1, 2])).toBe(0); // a free rider's zero update
    const s = cosineScores(
      [
        [1, 0],
        [0, 1],
        [1, 1],
      ],
      [2, 1],
    );
    expect(s[0]).toBeCloseTo(2 / Math.sqrt(5), 15);
    expect(s[1]).toBeCloseTo(1 / Math.sqrt(5), 15);
  });

  it('is scale invariant and bounded by 1 (Cauchy–Schwarz)', () => {
    const v = fc.array(fc.double({ min: -10, max: 10, noNaN: true }), { minLength: 5, maxLength: 5 });
    fc.assert(
      fc.property(v, v, fc.double({ min: 0.01, max: 100, noNaN: true }), (a, b, k) => {
        const c = cosineSimilarity(a, b);
        expect(Math.abs(c)).toBeLessThanOrEqual(1 + 1e-12);
        expect(
          cosineSimilarity(
            a.map((x) => x * k),
            b,
          ),
        ).toBeCloseTo(c, 9);
      }),
    );
  });

  it('does not underflow on tiny vectors (a fast-check counterexample)', () => {
    const a = [0, 0, 0, 1.5717277847026288e-162, 0];
    expect(cosineSimilarity(a, a)).toBe(1);
    expect(
      cosineSimilarity(
        a.map((x) => x * 0.01),
        a,
      ),
    ).toBe(1);
    expect(cosineSimilarity([1e200, 1e200], [1e200, 1e200])).toBeCloseTo(1, 15);
  });

  it('names the bad argument', () => {
    expect(() => cosineScores([[1, 2, 3]], [1, 2])).toThrow(/^updates\[0\]: expected 2 values/);
    expect(() => cosineScores([], [1])).toThrow(/^updates: /);
  });
});
