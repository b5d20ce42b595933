/**
 * Property test of protocol/simulate.ts (split from simulate.test.ts so the two run in parallel):
 * the recovered sum equals the plaintext sum of the quantized inputs for random n ∈ [3, 30],
 * random d and random t. The long sweep with random dropouts is simulate.slow.test.ts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { seededRandomFromInts } from '../../crypto/random-bytes.js';
import { simulatedIdentities, simulateRound } from '../../protocol/simulate.js';
import { plainSum, randomInputs, tolerated } from './_inputs.js';

describe('protocol/simulate (property)', () => {
  it('recovers the exact sum for random n ∈ [3, 30], random d and t (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 3, max: 30 }).chain((n) =>
          fc.record({
            n: fc.constant(n),
            t: fc.integer({ min: Math.floor(n / 2) + 1, max: n }),
            d: fc.integer({ min: 1, max: 2000 }),
            seed: fc.integer({ min: 0, max: 1e6 }),
          }),
        ),
        async ({ n, t, d, seed }) => {
          const inputs = randomInputs(n, d, seed);
          const r = await simulateRound({
            session: 'fc',
            round: seed,
            threshold: t,
            corruptTolerated: tolerated(n, t),
            inputs,
            signingKeys: simulatedIdentities(n, seed),
            random: (i) => seededRandomFromInts(seed, i),
          });
          expect(r.ok).toBe(true);
          if (!r.ok) return;
          expect(r.result.survivors).toEqual([...Array(n).keys()]);
          expect(r.result.sum).toEqual(plainSum(inputs, r.result.survivors, d));
          expect(r.rejected).toEqual([]);
        },
      ),
      // 5 runs here (each n = 30 round costs seconds of pure-JS Ed25519/X25519); the slow suite runs 40.
      { numRuns: 5, seed: 42 },
    );
  }, 240_000); // ~17 s alone; several times that on a loaded machine
});
