import { describe, expect, it } from 'vitest';
import {
  decodeWeightedSum,
  encodeWeightedInput,
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
});
