import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classCounts } from '../../src/data/dataset.js';
import { longTailed } from '../../src/data/long-tail.js';

describe('longTailed (papers/004 App. A)', () => {
  const y = Int32Array.from({ length: 10_000 }, (_, i) => i % 10); // 1,000 per class

  it('keeps ⌊n_max·IF^(r/(C−1))⌋ of the class at rank r', () => {
    for (const imbalance of [0.01, 0.05, 0.1]) {
      const { indices, counts } = longTailed(y, { numClasses: 10, imbalance, seed: 1 });
      const want = Array.from({ length: 10 }, (_, r) => Math.floor(1000 * imbalance ** (r / 9)));
      expect(Array.from(counts)).toEqual(want);
      expect(Array.from(classCounts(y, 10, indices))).toEqual(want);
      expect(counts[0]).toBe(1000);
      expect(counts[9]).toBe(Math.floor(1000 * imbalance));
      expect(new Set(indices).size).toBe(indices.length);
    }
  });

  it("'random' order permutes which class is the head; imbalance 1 keeps everything", () => {
    const r = longTailed(y, { numClasses: 10, imbalance: 0.01, seed: 4, order: 'random' });
    expect(r.counts[r.order[0]!]).toBe(1000);
    expect(r.counts[r.order[9]!]).toBe(10);
    expect(Array.from(r.order).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(longTailed(y, { numClasses: 10, imbalance: 1, seed: 1 }).indices.length).toBe(10_000);
  });

  it('caps at what a class has, and validates', () => {
    const skew = Int32Array.from({ length: 300 }, (_, i) => (i < 200 ? 0 : i < 290 ? 1 : 2));
    const { counts } = longTailed(skew, { numClasses: 3, imbalance: 0.25, seed: 1 });
    // n_max = 200: targets 200, 100, 50; class 1 has 90, class 2 has 10.
    expect(Array.from(counts)).toEqual([200, 90, 10]);
    expect(() => longTailed(y, { numClasses: 10, imbalance: 0, seed: 1 })).toThrow(/^imbalance: /);
    expect(() => longTailed(y, { numClasses: 10, imbalance: 1.5, seed: 1 })).toThrow(/^imbalance: /);
  });
});

describe('longTailed invariants (fast-check)', () => {
  it('keeps a subset of the pool, without repeats, with non-increasing targets along the order', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 0, max: 300 }),
        fc.double({ min: 0.001, max: 1, noNaN: true }),
        fc.integer(),
        fc.boolean(),
        (k, n, imbalance, seed, random) => {
          const labels = Int32Array.from({ length: n }, (_, i) => i % k);
          const pool = Int32Array.from({ length: Math.floor(n / 2) }, (_, i) => 2 * i);
          const r = longTailed(labels, {
            numClasses: k,
            imbalance,
            seed,
            indices: pool,
            order: random ? 'random' : 'index',
          });
          expect(new Set(r.indices).size).toBe(r.indices.length);
          expect([...r.indices].every((i) => i % 2 === 0 && i < n)).toBe(true);
          expect(Array.from(classCounts(labels, k, r.indices))).toEqual(Array.from(r.counts));
          const avail = classCounts(labels, k, pool);
          for (let c = 0; c < k; c++) expect(r.counts[c]!).toBeLessThanOrEqual(avail[c]!);
          // Equal class counts in the pool → counts non-increasing along the order.
          if (avail.every((v) => v === avail[0]))
            for (let j = 1; j < k; j++)
              expect(r.counts[r.order[j]!]!).toBeLessThanOrEqual(r.counts[r.order[j - 1]!]!);
        },
      ),
      { numRuns: 150 },
    );
  });
});
