import { describe, expect, it } from 'vitest';
import { simulatedIdentities } from '../../protocol/simulate.js';
import {
  aggregatorOf,
  applyAverage,
  conventionOf,
  plaintextAggregator,
  secureAggregator,
} from '../../src/sim/aggregator.js';

const updates = [Float32Array.of(0.1, 0.2), Float32Array.of(0.3, -0.4), Float32Array.of(-0.2, 0.05)];
const input = { round: 2, selected: [1, 4, 6], updates, weights: [1, 3, 2], dim: 2 };
const identities = simulatedIdentities(7, 5);

describe('plaintextAggregator', () => {
  it('is plaintextAggregate over the silos that do not drop out in this round', async () => {
    const agg = plaintextAggregator({
      dropouts: [
        { round: 2, silo: 6, at: 'after-share' },
        { round: 3, silo: 1, at: 'before-advertise' },
      ],
    });
    expect(agg.secure).toBe(false);
    const r = await agg.aggregate(input);
    expect(r.survivors).toEqual([1, 4]);
    expect(r.dropped).toEqual([6]);
    expect(r.totalWeight).toBe(4);
    const mean = (j: number) => (1 * updates[0]![j]! + 3 * updates[1]![j]!) / 4;
    expect(Array.from(r.average)).toEqual([mean(0), mean(1)]);
  });
});

describe('secureAggregator', () => {
  it('sums what the plaintext aggregator sums, within the quantization bound, with the same survivors', async () => {
    const dropouts = [{ round: 2, silo: 6, at: 'after-share' as const }];
    // n_C = 1 of the 7 silos: a round of 4 then needs t = ⌊(4 + 1)/2⌋ + 1 = 3, so three survive a
    // dropout. (With the default n_C = ⌈7/3⌉ − 1 = 2, both corrupted silos may be among the 4
    // selected and t = 4: see the next test.)
    const secure = secureAggregator({
      session: 's',
      seed: 1,
      identities,
      clip: 1,
      corruptSilos: 1,
      dropouts,
    });
    expect(secure.secure).toBe(true);
    const four = {
      ...input,
      selected: [0, 1, 4, 6],
      updates: [...updates, Float32Array.of(0.5, 0.5)],
      weights: [1, 3, 2, 5],
    };
    const s = await secure.aggregate(four);
    const p = await plaintextAggregator({ dropouts }).aggregate(four);
    expect(s.dropped).toEqual([6]);
    expect(s.survivors).toEqual(p.survivors);
    expect(s.dropped).toEqual(p.dropped);
    expect(s.totalWeight).toBeCloseTo(p.totalWeight, 6);
    for (let j = 0; j < 2; j++) expect(s.average[j]!).toBeCloseTo(p.average[j]!, 6);
    expect(s.faults).toEqual([]);
  });

  it('a round of k < n silos tolerates min(n_C, k − 1) corrupted ones: with the default n_C a dropout of 4 aborts', async () => {
    const dropouts = [{ round: 2, silo: 6, at: 'after-share' as const }];
    const secure = secureAggregator({ session: 's', seed: 1, identities, clip: 1, dropouts });
    const four = {
      ...input,
      selected: [0, 1, 4, 6],
      updates: [...updates, Float32Array.of(0.5, 0.5)],
      weights: [1, 3, 2, 5],
    };
    await expect(secure.aggregate(four)).rejects.toMatchObject({
      name: 'SecureRoundAborted',
      code: 'BELOW_THRESHOLD',
    });
    await expect(secure.aggregate({ ...four, round: 3 })).resolves.toMatchObject({ survivors: [0, 1, 4, 6] });
  });
});

describe('aggregatorOf', () => {
  const run = { session: 's', seed: 1, identities };
  it('is secure by default and plaintext when secureAggregation.enabled is false', () => {
    expect(aggregatorOf({}, run).secure).toBe(true);
    expect(aggregatorOf({ secureAggregation: { clip: 2 } }, run).secure).toBe(true);
    expect(aggregatorOf({ secureAggregation: { enabled: false } }, run).secure).toBe(false);
  });
});

describe('applyAverage and conventionOf', () => {
  it('adds the average to the base as float32, in a new array', () => {
    const base = Float32Array.of(1, 2);
    const next = applyAverage(base, Float64Array.of(0.1, -0.5));
    expect(Array.from(next)).toEqual([Math.fround(1.1), 1.5]);
    expect(Array.from(base)).toEqual([1, 2]);
    expect(() => applyAverage(base, [1])).toThrow(/^average: expected 2 entries/);
  });
  it("defaults to FedAvg's coalition models", () => {
    expect(conventionOf({})).toBe('fedavg');
    expect(conventionOf({ aggregation: { convention: 'additive' } })).toBe('additive');
  });
});
