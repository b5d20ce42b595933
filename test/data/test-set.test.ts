import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classCounts } from '../../src/data/dataset.js';
import { partitionDirichlet, partitionProblem } from '../../src/data/partition.js';
import { balancedTestSplit } from '../../src/data/test-set.js';

describe('balancedTestSplit', () => {
  const y = Int32Array.from({ length: 1000 }, (_, i) => (i < 600 ? i % 3 : 3));

  it('takes perClass of every class; test and rest partition the pool', () => {
    const { test, rest } = balancedTestSplit(y, { numClasses: 4, perClass: 50, seed: 2 });
    expect(Array.from(classCounts(y, 4, test))).toEqual([50, 50, 50, 50]);
    expect(test.length + rest.length).toBe(1000);
    const all = new Set([...test, ...rest]);
    expect(all.size).toBe(1000);
    const again = balancedTestSplit(y, { numClasses: 4, perClass: 50, seed: 2 });
    expect(again.test).toEqual(test);
    expect(balancedTestSplit(y, { numClasses: 4, perClass: 50, seed: 3 }).test).not.toEqual(test);
  });

  it('draws from a pool only', () => {
    const pool = Int32Array.from({ length: 500 }, (_, i) => 2 * i);
    const { test, rest } = balancedTestSplit(y, { numClasses: 4, perClass: 20, seed: 1, indices: pool });
    expect([...test, ...rest].every((i) => i % 2 === 0)).toBe(true);
    expect(test.length + rest.length).toBe(500);
  });

  it('refuses a class too small for perClass, naming it', () => {
    expect(() => balancedTestSplit(y, { numClasses: 5, perClass: 1, seed: 1 })).toThrow(
      'perClass: class 4 has only 0 examples in the pool, fewer than 1',
    );
    expect(() => balancedTestSplit(y, { numClasses: 4, perClass: 0, seed: 1 })).toThrow(/^perClass: /);
  });
});

describe('balancedTestSplit then a partition of the rest (fast-check)', () => {
  it('test, and the silos of the rest, are disjoint and cover the pool', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 5 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 0, max: 200 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer(),
        (k, perClass, extra, numSilos, seed) => {
          const n = k * perClass + extra;
          const labels = Int32Array.from({ length: n }, (_, i) => i % k);
          const { test, rest } = balancedTestSplit(labels, { numClasses: k, perClass, seed });
          expect(Array.from(classCounts(labels, k, test))).toEqual(new Array(k).fill(perClass));
          const p = partitionDirichlet(labels, { numSilos, numClasses: k, alpha: 0.5, seed, indices: rest });
          expect(partitionProblem(p, n, rest)).toBeNull();
          const withTest = { ...p, silos: [...p.silos, test] };
          expect(partitionProblem(withTest, n)).toBeNull();
        },
      ),
      { numRuns: 150 },
    );
  });
});
