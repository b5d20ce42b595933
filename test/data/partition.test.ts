import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { classCounts } from '../../src/data/dataset.js';
import {
  type Partition,
  partitionDirichlet,
  partitionIid,
  partitionMixed,
  partitionProblem,
  partitionQuantitySkew,
  siloClassCounts,
} from '../../src/data/partition.js';

/** Labels with `perClass` examples of each of `k` classes, interleaved. */
function balancedLabels(k: number, perClass: number): Int32Array {
  const y = new Int32Array(k * perClass);
  for (let i = 0; i < y.length; i++) y[i] = i % k;
  return y;
}

/**
 * Mean over classes of v_c = (1/n) Σ_i (p̂_{c,i} − 1/n)², p̂_{c,i} the share of class c that
 * silo i got, and the standard error of that mean (classes are drawn independently).
 */
function shareVariance(p: Partition, y: Int32Array, k: number): { mean: number; se: number } {
  const n = p.silos.length;
  const counts = siloClassCounts(p, y, k);
  const total = classCounts(y, k);
  const v: number[] = [];
  for (let c = 0; c < k; c++) {
    let s = 0;
    for (let i = 0; i < n; i++) s += (counts[i]![c]! / total[c]! - 1 / n) ** 2;
    v.push(s / n);
  }
  const mean = v.reduce((a, b) => a + b, 0) / k;
  const sd = Math.sqrt(v.reduce((a, b) => a + (b - mean) ** 2, 0) / (k - 1));
  return { mean, se: sd / Math.sqrt(k) };
}

describe('partitionIid', () => {
  it('deals sizes that differ by at most one, disjoint and covering; seeded', () => {
    const y = balancedLabels(10, 101);
    const p = partitionIid(y, { numSilos: 7, seed: 3 });
    expect(partitionProblem(p, y.length)).toBeNull();
    const sizes = p.silos.map((s) => s.length);
    expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
    expect(partitionIid(y, { numSilos: 7, seed: 3 }).silos).toEqual(p.silos);
    expect(partitionIid(y, { numSilos: 7, seed: 4 }).silos).not.toEqual(p.silos);
    for (const s of p.silos) for (let k = 1; k < s.length; k++) expect(s[k]!).toBeGreaterThan(s[k - 1]!);
  });

  it('splits only the given pool', () => {
    const y = balancedLabels(2, 50);
    const pool = Int32Array.from({ length: 40 }, (_, i) => 2 * i + 1);
    const p = partitionIid(y, { numSilos: 3, seed: 1, indices: pool });
    expect(partitionProblem(p, y.length, pool)).toBeNull();
    expect(p.silos.flatMap((s) => Array.from(s)).every((i) => i % 2 === 1)).toBe(true);
  });
});

describe('partitionDirichlet', () => {
  const k = 100;
  const y = balancedLabels(k, 1000);
  const n = 10;

  // Dir(α·1_n) marginals are Beta(α, (n−1)α): Var p_{c,i} = (1/n)(1 − 1/n)/(nα + 1). The
  // empirical v̄ must lie within 5 standard errors (estimated from the 100 independent classes).
  it.each([0.1, 0.5, 1, 10])('per-class shares have the Dirichlet(%f) variance', (alpha) => {
    const p = partitionDirichlet(y, { numSilos: n, numClasses: k, alpha, seed: 11 });
    expect(partitionProblem(p, y.length)).toBeNull();
    const { mean, se } = shareVariance(p, y, k);
    const expected = ((1 / n) * (1 - 1 / n)) / (n * alpha + 1);
    expect(Math.abs(mean - expected)).toBeLessThan(5 * se);
    // 5·SE is under half the expected value, so α and 2α (variance ratio ≈ 2) are told apart.
    expect(5 * se).toBeLessThan(expected / 2);
  });

  it('a larger concentration gives silo label distributions closer to the global one', () => {
    const y10 = balancedLabels(10, 500);
    const tv = (alpha: number) => {
      const p = partitionDirichlet(y10, { numSilos: 8, numClasses: 10, alpha, seed: 2 });
      const counts = siloClassCounts(p, y10, 10);
      let sum = 0;
      let silos = 0;
      for (const c of counts) {
        const m = c.reduce((a, b) => a + b, 0);
        if (m === 0) continue;
        let d = 0;
        for (let j = 0; j < 10; j++) d += Math.abs(c[j]! / m - 0.1);
        sum += d / 2;
        silos++;
      }
      return sum / silos;
    };
    const [t01, t1, t100] = [tv(0.1), tv(1), tv(100)];
    expect(t01).toBeGreaterThan(t1);
    expect(t1).toBeGreaterThan(t100);
    expect(t01).toBeGreaterThan(0.5);
    expect(t100).toBeLessThan(0.1);
  });

  it('redraws until minSize holds, and says when it cannot', () => {
    const y10 = balancedLabels(10, 30);
    const p = partitionDirichlet(y10, { numSilos: 10, numClasses: 10, alpha: 0.5, seed: 1, minSize: 10 });
    expect(Math.min(...p.silos.map((s) => s.length))).toBeGreaterThanOrEqual(10);
    expect(p.params.draws).toBeGreaterThanOrEqual(1);
    expect(() =>
      partitionDirichlet(y10, {
        numSilos: 10,
        numClasses: 10,
        alpha: 0.01,
        seed: 1,
        minSize: 29,
        maxDraws: 5,
      }),
    ).toThrow(/^minSize: no Dirichlet\(0\.01\) split/);
    expect(() =>
      partitionDirichlet(y10, { numSilos: 10, numClasses: 10, alpha: 1, seed: 1, minSize: 31 }),
    ).toThrow(/^minSize: 31 per silo × 10 silos exceeds the pool of 300/);
  });

  it('rejects bad parameters with RangeError naming the field', () => {
    const y10 = balancedLabels(10, 3);
    const base = { numSilos: 3, numClasses: 10, alpha: 1, seed: 1 };
    expect(() => partitionDirichlet(y10, { ...base, alpha: 0 })).toThrow(RangeError);
    expect(() => partitionDirichlet(y10, { ...base, alpha: 0 })).toThrow(/^alpha: /);
    expect(() => partitionDirichlet(y10, { ...base, alpha: Number.NaN })).toThrow(/^alpha: /);
    expect(() => partitionDirichlet(y10, { ...base, numSilos: 0 })).toThrow(/^numSilos: /);
    expect(() => partitionDirichlet(y10, { ...base, numClasses: 5 })).toThrow(/^labels: label 5/);
    expect(() => partitionDirichlet(y10, { ...base, seed: Number.NaN })).toThrow(/^seed: /);
    expect(() => partitionDirichlet(y10, { ...base, indices: Int32Array.of(0, 30) })).toThrow(/^indices: /);
  });
});

describe('partitionQuantitySkew', () => {
  it('sizes follow explicit fractions; labels stay IID', () => {
    const y = balancedLabels(4, 1000);
    const p = partitionQuantitySkew(y, { numSilos: 3, seed: 1, fractions: [0.5, 0.3, 0.2] });
    expect(partitionProblem(p, y.length)).toBeNull();
    expect(p.silos.map((s) => s.length)).toEqual([2000, 1200, 800]);
    // Class counts in the 2000-example silo: hypergeometric, sd ≈ √(2000·¼·¾·½) ≈ 13.7.
    for (const c of siloClassCounts(p, y, 4)[0]!) expect(Math.abs(c - 500)).toBeLessThan(6 * 13.7);
  });

  it('Dir(β) size shares have variance (1/n)(1 − 1/n)/(nβ + 1)', () => {
    const y = balancedLabels(1, 100_000);
    const n = 200;
    for (const beta of [0.5, 5]) {
      const p = partitionQuantitySkew(y, { numSilos: n, seed: 4, beta, minSize: 0 });
      expect(partitionProblem(p, y.length)).toBeNull();
      const shares = p.silos.map((s) => s.length / y.length);
      const dev = shares.map((s) => (s - 1 / n) ** 2);
      const mean = dev.reduce((a, b) => a + b, 0) / n;
      const sd = Math.sqrt(dev.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1));
      const expected = ((1 / n) * (1 - 1 / n)) / (n * beta + 1);
      // Shares within one draw are nearly independent for n = 200 (correlation −1/(n−1)).
      expect(Math.abs(mean - expected)).toBeLessThan(5 * (sd / Math.sqrt(n)));
    }
  });

  it('rejects bad parameters naming the field', () => {
    const y = balancedLabels(2, 10);
    expect(() => partitionQuantitySkew(y, { numSilos: 2, seed: 1 })).toThrow(/^beta: give exactly one/);
    expect(() => partitionQuantitySkew(y, { numSilos: 2, seed: 1, beta: 1, fractions: [0.5, 0.5] })).toThrow(
      /^beta: /,
    );
    expect(() => partitionQuantitySkew(y, { numSilos: 2, seed: 1, fractions: [0.5, 0.6] })).toThrow(
      /^fractions: /,
    );
    expect(() => partitionQuantitySkew(y, { numSilos: 2, seed: 1, fractions: [1] })).toThrow(/^fractions: /);
    expect(() => partitionQuantitySkew(y, { numSilos: 2, seed: 1, beta: -1 })).toThrow(/^beta: /);
  });
});

describe('partition invariants (fast-check)', () => {
  const arbCase = fc.record({
    k: fc.integer({ min: 1, max: 6 }),
    n: fc.integer({ min: 0, max: 300 }),
    numSilos: fc.integer({ min: 1, max: 12 }),
    alpha: fc.double({ min: 0.01, max: 100, noNaN: true }),
    seed: fc.integer(),
    labelSeed: fc.integer({ min: 0, max: 1000 }),
  });
  const labelsOf = (n: number, k: number, s: number) =>
    Int32Array.from({ length: n }, (_, i) => (i * 7 + s) % k);

  it('IID, Dirichlet and quantity skew cover every index exactly once, deterministically', () => {
    fc.assert(
      fc.property(arbCase, ({ k, n, numSilos, alpha, seed, labelSeed }) => {
        const y = labelsOf(n, k, labelSeed);
        const parts = [
          partitionIid(y, { numSilos, seed }),
          partitionDirichlet(y, { numSilos, numClasses: k, alpha, seed }),
          partitionQuantitySkew(y, { numSilos, seed, beta: alpha, minSize: 0 }),
        ];
        for (const p of parts) {
          expect(p.silos).toHaveLength(numSilos);
          expect(partitionProblem(p, n)).toBeNull();
        }
        expect(partitionDirichlet(y, { numSilos, numClasses: k, alpha, seed }).silos).toEqual(
          parts[1]!.silos,
        );
      }),
      { numRuns: 200 },
    );
  });

  it('partitionProblem itself detects duplicates and gaps', () => {
    const p: Partition = { silos: [Int32Array.of(0, 1), Int32Array.of(1)], kind: 'x', params: {} };
    expect(partitionProblem(p, 3)).toBe('silo 1: index 1 is in two silos (or twice in one)');
    const q: Partition = { silos: [Int32Array.of(0), Int32Array.of(2)], kind: 'x', params: {} };
    expect(partitionProblem(q, 3)).toBe('pool index 1 is in no silo');
  });
});

describe('pools', () => {
  it('a pool with a repeated index is rejected, naming the field', () => {
    const y = Int32Array.of(0, 1, 0, 1);
    expect(() => partitionIid(y, { numSilos: 2, seed: 1, indices: Int32Array.of(0, 1, 1) })).toThrow(
      'indices: index 1 appears twice (at position 2 again)',
    );
  });
});

describe('partitionMixed (papers/002 §IV.A)', () => {
  it('the first silos keep their IID deal; the last nonIid split the rest of the pool by label skew', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 8 }),
        fc.integer({ min: 0, max: 1000 }),
        fc.double({ min: 0.05, max: 5, noNaN: true }),
        (numSilos, seed, alpha) => {
          const labels = Int32Array.from({ length: 400 }, (_, i) => i % 5);
          const indices = Int32Array.from({ length: 300 }, (_, i) => i + 50);
          const nonIid = 1 + (seed % (numSilos - 1));
          const base = { numSilos, seed, indices };
          const p = partitionMixed(labels, { ...base, nonIid, alpha, numClasses: 5 });
          const iid = partitionIid(labels, base);
          expect(p.silos).toHaveLength(numSilos);
          for (let s = 0; s < numSilos - nonIid; s++) expect(p.silos[s]).toEqual(iid.silos[s]);
          const skewed = p.silos
            .slice(numSilos - nonIid)
            .flatMap((a) => [...a])
            .sort((a, b) => a - b);
          const dealt = iid.silos
            .slice(numSilos - nonIid)
            .flatMap((a) => [...a])
            .sort((a, b) => a - b);
          expect(skewed).toEqual(dealt);
          expect(p.params).toEqual({ numSilos, nonIid, alpha, seed, pool: 300 });
        },
      ),
      { numRuns: 50 },
    );
  });

  it('names partition.nonIid when it is not an integer in [1, numSilos − 1]', () => {
    const labels = Int32Array.from({ length: 40 }, (_, i) => i % 2);
    const o = {
      numSilos: 4,
      seed: 1,
      indices: Int32Array.from({ length: 40 }, (_, i) => i),
      alpha: 1,
      numClasses: 2,
    };
    expect(() => partitionMixed(labels, { ...o, nonIid: 4 })).toThrow(
      new RangeError('partition.nonIid: expected an integer in [1, 3], got 4'),
    );
    expect(() => partitionMixed(labels, { ...o, nonIid: 0 })).toThrow(/^partition\.nonIid/);
  });
});
