import { describe, expect, it } from 'vitest';
import { applyLabelNoise, linearNoiseRates } from '../../src/data/label-noise.js';
import { partitionIid } from '../../src/data/partition.js';
import { sameBytes } from './_equal.js';

/**
 * Hoeffding: for X ~ Binomial(m, p), P(|X/m − p| ≥ t) ≤ 2·exp(−2mt²). With
 * t = √(ln(2/δ)/(2m)) and δ = 1e-6 each check below fails by chance with probability ≤ 1e-6.
 */
const hoeffding = (m: number, delta = 1e-6) => Math.sqrt(Math.log(2 / delta) / (2 * m));

describe('linearNoiseRates', () => {
  it('rises linearly from min to max (papers/003 §5.4: 0, 1/9, …, 1 for ten silos)', () => {
    const r = linearNoiseRates(10);
    expect(r[0]).toBe(0);
    expect(r[9]).toBe(1);
    for (let i = 0; i < 10; i++) expect(r[i]).toBeCloseTo(i / 9, 12);
    expect(Array.from(linearNoiseRates(3, 0.2, 0.4))).toEqual([0.2, 0.30000000000000004, 0.4]);
    expect(Array.from(linearNoiseRates(1, 0.3))).toEqual([0.3]);
    expect(() => linearNoiseRates(0)).toThrow(/^numSilos: /);
    expect(() => linearNoiseRates(3, -0.1)).toThrow(/^min: /);
    expect(() => linearNoiseRates(3, 0, 1.5)).toThrow(/^max: /);
  });
});

describe('applyLabelNoise', () => {
  const k = 10;
  const y = Int32Array.from({ length: 50_000 }, (_, i) => (i * 31) % k);
  const p = partitionIid(y, { numSilos: 10, seed: 1 }); // 5,000 examples per silo
  const rates = linearNoiseRates(10);

  it("realizes each silo's rate within the Hoeffding bound (mode 'uniform': changes at r(K−1)/K)", () => {
    const res = applyLabelNoise(y, p.silos, { numClasses: k, rates, seed: 3 });
    p.silos.forEach((s, i) => {
      const m = s.length;
      const t = hoeffding(m);
      expect(Math.abs(res.redrawn[i]! / m - rates[i]!)).toBeLessThan(t);
      expect(Math.abs(res.changed[i]! / m - (rates[i]! * (k - 1)) / k)).toBeLessThan(t);
      let diff = 0;
      for (const j of s) if (res.labels[j] !== y[j]) diff++;
      expect(diff).toBe(res.changed[i]);
    });
    expect(res.redrawn[0]).toBe(0);
    expect(res.redrawn[9]).toBe(5000);
    // Adjacent rates differ by 1/9 ≈ 0.111 > 2t ≈ 0.076 here, so the realized rates increase.
    for (let i = 1; i < 10; i++) expect(res.redrawn[i]!).toBeGreaterThan(res.redrawn[i - 1]!);
  });

  it("mode 'other' always changes a redrawn label, to a uniformly chosen other class", () => {
    const res = applyLabelNoise(y, p.silos, { numClasses: k, rates, seed: 4, mode: 'other' });
    expect(Array.from(res.changed)).toEqual(Array.from(res.redrawn));
    // In the fully noisy silo, new labels are uniform over the 9 other classes:
    // each (old → new) pair has probability 1/9 among the old label's examples.
    const s = p.silos[9]!;
    const pairCounts = new Map<string, number>();
    const oldCounts = new Int32Array(k);
    for (const j of s) {
      expect(res.labels[j]).not.toBe(y[j]);
      oldCounts[y[j]!]!++;
      const key = `${y[j]}>${res.labels[j]}`;
      pairCounts.set(key, (pairCounts.get(key) ?? 0) + 1);
    }
    for (const [key, count] of pairCounts) {
      const m = oldCounts[Number(key.split('>')[0])]!;
      expect(Math.abs(count / m - 1 / 9)).toBeLessThan(hoeffding(m));
    }
    expect(pairCounts.size).toBe(k * (k - 1));
  });

  it('is deterministic, per-silo independent of the other silos, and leaves non-silo labels alone', () => {
    const a = applyLabelNoise(y, p.silos, { numClasses: k, rates, seed: 5 });
    const b = applyLabelNoise(y, p.silos, { numClasses: k, rates, seed: 5 });
    const c = applyLabelNoise(y, p.silos, { numClasses: k, rates, seed: 6 });
    expect(sameBytes(a.labels, b.labels)).toBe(true);
    expect(sameBytes(a.labels, c.labels)).toBe(false);
    const only = applyLabelNoise(y, [p.silos[0]!, p.silos[4]!], {
      numClasses: k,
      rates: [0, rates[4]!],
      seed: 5,
    });
    // Indices in no silo (silo 5's here) keep their labels; a rate-0 silo is unchanged.
    for (const j of p.silos[0]!) expect(only.labels[j]).toBe(y[j]);
    for (const j of p.silos[5]!) expect(only.labels[j]).toBe(y[j]);
    // A silo's noise depends on the seed, its position and its own indices only.
    const same = applyLabelNoise(y, [p.silos[0]!, p.silos[1]!], {
      numClasses: k,
      rates: [0, rates[1]!],
      seed: 5,
    });
    for (const j of p.silos[1]!) expect(same.labels[j]).toBe(a.labels[j]);
  });

  it('rejects bad inputs naming the field', () => {
    expect(() => applyLabelNoise(y, p.silos, { numClasses: k, rates: [0.1], seed: 1 })).toThrow(
      /^rates: expected 10 rates/,
    );
    expect(() =>
      applyLabelNoise(y, p.silos, { numClasses: k, rates: rates.map((r) => r + 0.5), seed: 1 }),
    ).toThrow(/^rates\[5\]: /);
    expect(() =>
      applyLabelNoise(y, [Int32Array.of(1, 2), Int32Array.of(2)], { numClasses: k, rates: [0, 0], seed: 1 }),
    ).toThrow(/^silos: index 2 is held by two silos/);
    expect(() =>
      applyLabelNoise(y, p.silos, { numClasses: k, rates, seed: 1, mode: 'flip' as 'other' }),
    ).toThrow(/^mode: /);
  });
});
