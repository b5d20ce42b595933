import { describe, expect, it } from 'vitest';
import { seededRandomFromInts } from '../../crypto/random-bytes.js';
import {
  checkWeightedEncoding,
  checkWeightedSum,
  decodeWeightedSum,
  encodeWeightedInput,
  GUARD_BITS,
  valueErrorBound,
  weightErrorBound,
} from '../../protocol/weighted.js';

describe('protocol/weighted', () => {
  it('Σ of encoded (wΔ, w) decodes to Σ wΔ and Σ w within n·ε', () => {
    const enc = { valueRange: 10, weightRange: 100, n: 3 };
    const updates = [
      Float32Array.from([1, -2, 0.5]),
      Float32Array.from([0.25, 0.125, -1]),
      Float32Array.from([-0.5, 3, 2]),
    ];
    const w = [10, 30, 60];
    const sum = new Uint32Array(4);
    updates.forEach((u, i) => {
      const x = encodeWeightedInput(u, w[i]!, enc);
      expect(x.length).toBe(4);
      for (let j = 0; j < 4; j++) sum[j]! += x[j]!;
    });
    const agg = decodeWeightedSum(sum, enc);
    const ev = valueErrorBound(enc);
    const ew = weightErrorBound(enc);
    expect(Math.abs(agg.totalWeight - 100)).toBeLessThanOrEqual(3 * ew);
    // w·Δ is clipped to ±10: 30·0.25 = 7.5 fits, 60·3 = 180 → 10, 10·(−2) = −20 → −10
    const clipped = (x: number) => Math.max(-10, Math.min(10, x));
    for (let j = 0; j < 3; j++) {
      const exact = updates.reduce((s, u, i) => s + clipped(w[i]! * u[j]!), 0);
      expect(Math.abs(agg.weightedSum[j]! - exact)).toBeLessThanOrEqual(3 * ev);
      expect(agg.average[j]).toBeCloseTo(agg.weightedSum[j]! / agg.totalWeight, 12);
    }
  });

  it('validates the weight and the encoding', () => {
    const enc = { valueRange: 1, weightRange: 5, n: 2 };
    const u = new Float32Array(2);
    expect(() => encodeWeightedInput(u, 6, enc)).toThrow(/^weight/);
    expect(() => encodeWeightedInput(u, -1, enc)).toThrow(/^weight/);
    expect(() => encodeWeightedInput(u, Number.NaN, enc)).toThrow(/^weight/);
    expect(() => encodeWeightedInput(u, 1, { ...enc, valueRange: 0 })).toThrow(/^range/);
    expect(() => encodeWeightedInput([1] as unknown as Float32Array, 1, enc)).toThrow(/^update/);
    expect(() => decodeWeightedSum(new Uint32Array(0), enc)).toThrow(/^sum/);
  });

  it('guard bits: a uniformly random sum fails the range check (a corrupted sum cannot pass as one of n inputs)', () => {
    const enc = { valueRange: 1, weightRange: 1, n: 5 };
    const random = seededRandomFromInts(0x9a4d);
    let passed = 0;
    let wordsPassed = 0;
    for (let k = 0; k < 2000; k++) {
      const b = random(4 * 9);
      const sum = new Uint32Array(b.buffer, b.byteOffset, 9);
      if (checkWeightedSum(sum, enc, 5) === null) passed++;
      const one = new Uint32Array([sum[0]!, encodeWeightedInput(new Float64Array(0), 1, enc)[0]! * 5]);
      if (checkWeightedSum(one, enc, 5) === null) wordsPassed++;
    }
    expect(passed).toBe(0); // ≤ 2^(−4·9) each
    // one value word passes with probability ≈ 2^−GUARD_BITS = 1/16
    expect(wordsPassed / 2000).toBeGreaterThan(1 / 32);
    expect(wordsPassed / 2000).toBeLessThan(1 / 8);
    expect(GUARD_BITS).toBe(4);
  });

  it('checks the encoding: n ≤ 4095, 0 ≤ minWeight ≤ weightRange; a weight below minWeight is refused', () => {
    expect(() => checkWeightedEncoding('e', { valueRange: 1, weightRange: 1, n: 4096 })).toThrow(/^e\.n/);
    expect(() => checkWeightedEncoding('e', { valueRange: 1, weightRange: 1, n: 3, minWeight: 2 })).toThrow(
      /^e\.minWeight/,
    );
    expect(() =>
      encodeWeightedInput(new Float32Array(1), 0.1, { valueRange: 1, weightRange: 1, n: 3, minWeight: 0.2 }),
    ).toThrow(/^weight: 0\.1 is outside \[minWeight = 0\.2/);
  });
});
