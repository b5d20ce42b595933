/** Long randomized sweep of whole rounds (excluded from the default run: `npx vitest run test/protocol/simulate.slow.test.ts`). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { seededRandomFromInts } from '../../crypto/random-bytes.js';
import { type DropPoint, simulatedIdentities, simulateRound } from '../../protocol/simulate.js';
import { plainSum, tolerated } from './_inputs.js';

const POINTS: DropPoint[] = [
  'before-advertise',
  'after-advertise',
  'after-share',
  'after-mask',
  'after-consistency',
];
const INDEX: Record<DropPoint, number> = {
  'before-advertise': -1,
  'after-advertise': 0,
  'after-share': 1,
  'after-mask': 2,
  'after-consistency': 3,
};

describe('protocol/simulate (slow sweep)', () => {
  it('random n ∈ [3, 30], d ∈ [1, 20000], t, and random dropouts: exact sum or BELOW_THRESHOLD exactly when due', async () => {
    const outcomes = { ok: 0, aborted: 0 };
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 3, max: 30 }).chain((n) =>
          fc.record({
            n: fc.constant(n),
            t: fc.integer({ min: Math.floor(n / 2) + 1, max: n }),
            d: fc.integer({ min: 1, max: 20000 }),
            seed: fc.integer({ min: 0, max: 1e6 }),
            // each silo drops with probability 1/5, at a uniformly chosen point
            drops: fc.array(
              fc.oneof(
                { arbitrary: fc.constant(null), weight: 4 },
                { arbitrary: fc.constantFrom(...POINTS), weight: 1 },
              ),
              { minLength: n, maxLength: n },
            ),
          }),
        ),
        async ({ n, t, d, seed, drops }) => {
          const r0 = seededRandomFromInts(seed, 999)(4 * n * d);
          const inputs = Array.from(
            { length: n },
            (_, i) => new Uint32Array(r0.buffer, r0.byteOffset + 4 * i * d, d),
          );
          const dropouts = new Map<number, DropPoint>();
          drops.forEach((p, i) => {
            if (p !== null) dropouts.set(i, p);
          });
          const r = await simulateRound({
            session: 'sweep',
            round: seed,
            threshold: t,
            corruptTolerated: tolerated(n, t),
            inputs,
            signingKeys: simulatedIdentities(n, seed),
            random: (i) => seededRandomFromInts(seed, i),
            dropouts,
          });
          // expected participant count per stage: silo i takes part in stages 0..last(i)
          const last = (i: number) => (dropouts.has(i) ? INDEX[dropouts.get(i)!] : 4);
          const counts = [0, 1, 2, 3, 4].map((k) => [...Array(n).keys()].filter((i) => last(i) >= k).length);
          const fails = counts.findIndex((c) => c < t);
          if (fails >= 0) {
            outcomes.aborted++;
            expect(r.ok).toBe(false);
            if (!r.ok) expect(r.code).toBe('BELOW_THRESHOLD');
            return;
          }
          outcomes.ok++;
          expect(r.ok).toBe(true);
          if (!r.ok) return;
          const survivors = [...Array(n).keys()].filter((i) => last(i) >= 2);
          expect(r.result.survivors).toEqual(survivors);
          expect(r.result.sum).toEqual(plainSum(inputs, survivors, d));
        },
      ),
      { numRuns: 40, seed: 7 },
    );
    // both branches were exercised
    expect(outcomes.ok).toBeGreaterThanOrEqual(10);
    expect(outcomes.aborted).toBeGreaterThanOrEqual(3);
  }, 1_800_000);
});
