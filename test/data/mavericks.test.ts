import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classCounts } from '../../src/data/dataset.js';
import { partitionMavericks } from '../../src/data/mavericks.js';
import { partitionProblem, siloClassCounts } from '../../src/data/partition.js';

describe('partitionMavericks', () => {
  const k = 10;
  const y = Int32Array.from({ length: 10_000 }, (_, i) => (i * 3) % k); // 1,000 per class
  const total = classCounts(y, k);

  it('exclusive: each Maverick owns its classes entirely; nobody else holds them', () => {
    const p = partitionMavericks(y, {
      numSilos: 5,
      numClasses: k,
      numMavericks: 2,
      mode: 'exclusive',
      seed: 1,
    });
    expect(partitionProblem(p, y.length)).toBeNull();
    expect(p.mavericks).toEqual([3, 4]);
    expect(p.rareClasses).toHaveLength(2);
    const counts = siloClassCounts(p, y, k);
    p.rareClasses.forEach((c, j) => {
      const owner = p.mavericks[j]!;
      expect(p.owners[c]).toEqual([owner]);
      for (let s = 0; s < 5; s++) expect(counts[s]![c]).toBe(s === owner ? total[c] : 0);
    });
    // Default maverickCommonShare 0: a Maverick holds only its class (papers/001 Def. 3.1, q = 1) …
    for (const s of p.mavericks) expect(counts[s]!.filter((v) => v > 0)).toHaveLength(1);
    // … and the non-Mavericks split the common classes equally (alpha = ∞): 1000/3 each.
    for (let c = 0; c < k; c++) {
      if (p.rareClasses.includes(c)) continue;
      for (let s = 0; s < 3; s++) expect(Math.abs(counts[s]![c]! - 1000 / 3)).toBeLessThanOrEqual(1);
    }
  });

  it('shared: the Mavericks split the shared class evenly; others hold none', () => {
    const p = partitionMavericks(y, {
      numSilos: 6,
      numClasses: k,
      numMavericks: 3,
      mode: 'shared',
      rareClasses: [5],
      seed: 2,
    });
    expect(partitionProblem(p, y.length)).toBeNull();
    expect(p.owners[5]).toEqual([3, 4, 5]);
    const counts = siloClassCounts(p, y, k);
    expect([counts[3]![5], counts[4]![5], counts[5]![5]]).toEqual([334, 333, 333]);
    for (let s = 0; s < 3; s++) expect(counts[s]![5]).toBe(0);
  });

  it('maverickCommonShare gives Mavericks round(s·n_c/numSilos) of every common class', () => {
    const p = partitionMavericks(y, {
      numSilos: 5,
      numClasses: k,
      numMavericks: 1,
      mode: 'exclusive',
      classesPerMaverick: 2,
      rareClasses: [5, 8],
      maverickCommonShare: 0.5,
      alpha: 1,
      seed: 3,
    });
    expect(partitionProblem(p, y.length)).toBeNull();
    const counts = siloClassCounts(p, y, k);
    for (let c = 0; c < k; c++) {
      if (c === 5 || c === 8) {
        expect(counts[4]![c]).toBe(1000);
        for (let s = 0; s < 4; s++) expect(counts[s]![c]).toBe(0);
      } else expect(counts[4]![c]).toBe(100);
    }
  });

  it('with Dir(alpha) for common classes, smaller alpha spreads non-Mavericks more unevenly', () => {
    const spread = (alpha: number) => {
      const p = partitionMavericks(y, {
        numSilos: 11,
        numClasses: k,
        numMavericks: 1,
        mode: 'exclusive',
        alpha,
        seed: 9,
      });
      expect(partitionProblem(p, y.length)).toBeNull();
      const counts = siloClassCounts(p, y, k);
      let v = 0;
      for (let c = 0; c < k; c++) {
        if (p.rareClasses.includes(c)) continue;
        for (let s = 0; s < 10; s++) v += (counts[s]![c]! / 1000 - 0.1) ** 2;
        expect(counts[10]![c]).toBe(0);
      }
      return v;
    };
    expect(spread(0.1)).toBeGreaterThan(5 * spread(10));
  });

  it('covers the pool exactly once for any parameters (fast-check)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 8 }),
        fc.integer({ min: 3, max: 8 }),
        fc.integer({ min: 0, max: 400 }),
        fc.boolean(),
        fc.double({ min: 0.05, max: 50, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer(),
        (numSilos, numClasses, n, shared, alpha, share, seed) => {
          const labels = Int32Array.from({ length: n }, (_, i) => (i * 5 + 1) % numClasses);
          const numMavericks = Math.min(
            numSilos - 1,
            shared ? 2 : Math.max(1, Math.floor((numClasses - 1) / 2)),
          );
          const p = partitionMavericks(labels, {
            numSilos,
            numClasses,
            numMavericks,
            mode: shared ? 'shared' : 'exclusive',
            alpha,
            maverickCommonShare: share,
            seed,
          });
          expect(p.silos).toHaveLength(numSilos);
          expect(partitionProblem(p, n)).toBeNull();
          const counts = siloClassCounts(p, labels, numClasses);
          for (const c of p.rareClasses)
            for (let s = 0; s < numSilos; s++) if (!p.mavericks.includes(s)) expect(counts[s]![c]).toBe(0);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('rejects bad parameters naming the field', () => {
    const base = { numSilos: 4, numClasses: k, numMavericks: 1, mode: 'exclusive' as const, seed: 1 };
    expect(() => partitionMavericks(y, { ...base, numMavericks: 4 })).toThrow(/^numMavericks: /);
    expect(() => partitionMavericks(y, { ...base, numMavericks: 0 })).toThrow(/^numMavericks: /);
    expect(() => partitionMavericks(y, { ...base, numMavericks: 3, classesPerMaverick: 4 })).toThrow(
      /^classesPerMaverick: 12 rare classes leave no common class/,
    );
    expect(() => partitionMavericks(y, { ...base, rareClasses: [1, 2] })).toThrow(/^rareClasses: expected 1/);
    expect(() => partitionMavericks(y, { ...base, rareClasses: [10] })).toThrow(/^rareClasses\[0\]: /);
    expect(() => partitionMavericks(y, { ...base, alpha: 0 })).toThrow(/^alpha: /);
    expect(() => partitionMavericks(y, { ...base, maverickCommonShare: 2 })).toThrow(
      /^maverickCommonShare: /,
    );
    expect(() => partitionMavericks(y, { ...base, mode: 'both' as 'shared' })).toThrow(/^mode: /);
  });
});
