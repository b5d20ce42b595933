import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dequantizeSum, MAX_SUMMANDS, quantize, quantizer } from '../../crypto/quantize.js';
import { loadVectors } from './_vectors.js';

interface QCase {
  name: string;
  range: number;
  n: number;
  levels: number;
  values: number[];
  levelsOut: number[];
  uint32: number[];
}
const kat = loadVectors<{
  cases: QCase[];
  sum: {
    range: number;
    n: number;
    vectors: number[][];
    sumInt: number[];
    sumUint32: number[];
    exactSumOverScale: string[];
  };
}>('crypto-quantize/quantize-kat.json');

/** p/q (a decimal fraction string from Python's Fraction) as a number. */
const frac = (s: string) => {
  const [p, q] = s.split('/');
  return Number(p) / Number(q ?? '1');
};

describe('crypto/quantize', () => {
  it.each(kat.cases.map((c) => [c.name, c] as const))('matches the exact-arithmetic vector: %s', (_n, c) => {
    const q = quantizer(c);
    expect(q.levels).toBe(c.levels);
    expect(Array.from(quantize(Float32Array.from(c.values), c))).toEqual(c.uint32);
  });

  it('sums n extreme vectors without wrapping and dequantizes the exact integer sum', () => {
    const s = kat.sum;
    const acc = new Uint32Array(3);
    for (const v of s.vectors) {
      const q = quantize(Float32Array.from(v), s);
      for (let i = 0; i < 3; i++) acc[i]! += q[i]!;
    }
    expect(Array.from(acc)).toEqual(s.sumUint32);
    expect(Array.from(acc, (w) => w | 0)).toEqual(s.sumInt);
    const deq = dequantizeSum(acc, s);
    s.exactSumOverScale.forEach((f, i) => {
      expect(Math.abs(deq[i]! - frac(f))).toBeLessThanOrEqual(Math.abs(frac(f)) * 2 ** -52);
    });
  });

  it('the per-element error bound of the doc comment holds (fast-check, incl. half-level inputs)', () => {
    const cfg = fc.record({
      range: fc.double({ min: 1e-6, max: 1e6, noNaN: true }),
      n: fc.integer({ min: 1, max: MAX_SUMMANDS }),
    });
    fc.assert(
      fc.property(
        cfg,
        fc.array(fc.double({ min: -2, max: 2, noNaN: true }), { maxLength: 20 }),
        fc.integer(),
        (c, rel, k) => {
          const q = quantizer(c);
          // values near c·rel, plus one exactly on a half level: (k + 1/2)/s
          const half = ((k % q.levels) + 0.5) / q.scale;
          const xs = [...rel.map((r) => r * c.range), half, c.range, -c.range];
          const out = dequantizeSum(quantize(xs, c), c);
          xs.forEach((x, i) => {
            const clipped = Math.min(c.range, Math.max(-c.range, x));
            expect(Math.abs(out[i]! - clipped)).toBeLessThanOrEqual(q.errorBound);
          });
        },
      ),
      { numRuns: 300, seed: 7 },
    );
  });

  it('the error bound is tight to half a level (it is not vacuous)', () => {
    const c = { range: 1, n: 1 };
    const q = quantizer(c);
    const x = 0.49999 / q.scale; // just below half a level: rounds to 0, error ≈ 0.49999 level
    const err = Math.abs(dequantizeSum(quantize([x], c), c)[0]! - x);
    expect(err).toBeGreaterThan(0.49 / q.scale);
    expect(err).toBeLessThanOrEqual(q.errorBound);
  });

  it('rounding is deterministic and symmetric: q(−x) = −q(x)', () => {
    const c = { range: 3, n: 5 };
    const xs = Float64Array.from({ length: 200 }, (_, i) => (i - 100) * 0.0371);
    const a = quantize(xs, c);
    const b = quantize(
      xs.map((x) => -x),
      c,
    );
    expect(a).toEqual(quantize(xs, c));
    for (let i = 0; i < xs.length; i++) expect(b[i]! | 0).toBe(-(a[i]! | 0) | 0);
  });

  it('throws RangeError naming the field for invalid configurations and TypeError for bad inputs', () => {
    expect(() => quantizer({ range: 0, n: 3 })).toThrow(/^range/);
    expect(() => quantizer({ range: -1, n: 3 })).toThrow(RangeError);
    expect(() => quantizer({ range: Number.POSITIVE_INFINITY, n: 3 })).toThrow(/^range/);
    // A scale K/range of ∞ (every value would encode to 0), or subnormal levels.
    for (const tiny of [1e-320, 5e-324, 1e-300, 2 ** -1000])
      expect(() => quantizer({ range: tiny, n: 3 })).toThrow(/^range: .* is too small/);
    expect(quantizer({ range: 1e-290, n: 3 }).scale).toBeLessThan(Number.POSITIVE_INFINITY);
    expect(() => quantizer({ range: 1, n: 0 })).toThrow(/^n/);
    expect(() => quantizer({ range: 1, n: MAX_SUMMANDS + 1 })).toThrow(RangeError);
    expect(() => quantizer({ range: 1, n: MAX_SUMMANDS + 1 })).toThrow(/^n/);
    expect(() => quantizer({ range: 1, n: 2.5 })).toThrow(TypeError);
    expect(() => quantize([Number.NaN], { range: 1, n: 1 })).toThrow(/^values\[0\]/);
    expect(() => quantize('abc' as unknown as number[], { range: 1, n: 1 })).toThrow(TypeError);
    expect(() => dequantizeSum([1] as unknown as Uint32Array, { range: 1, n: 1 })).toThrow(/^sum/);
  });
});
