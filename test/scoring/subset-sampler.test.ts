/**
 * The subset sampler Owen sampling and Data Banzhaf (MSR) share (scoring/subset-sampler.ts): each
 * player joins with probability q on its own draw of the generator, in player order.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { has, members, size } from '../../scoring/coalition.js';
import { createRng, type Rng } from '../../scoring/seeded-rng.js';
import { bernoulliSubsets, uniformSubsets } from '../../scoring/subset-sampler.js';
import { DELTA, hoeffding } from './_oracles.js';

/** A generator that records every draw it hands out. */
function recording(seed: number): { rng: Rng; draws: number[] } {
  const inner = createRng(seed);
  const draws: number[] = [];
  return {
    draws,
    rng: {
      next() {
        const x = inner.next();
        draws.push(x);
        return x;
      },
    } as Rng,
  };
}

describe('bernoulliSubsets', () => {
  it('player i joins exactly when its draw (the i-th of the coalition) is below q', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 70 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.integer({ min: 1, max: 4 }),
        (n, q, seed, count) => {
          const { rng, draws } = recording(seed);
          const it = bernoulliSubsets(q)(n, rng);
          for (let c = 0; c < count; c++) {
            const S = it.next().value!;
            expect(draws).toHaveLength((c + 1) * n); // one draw per player, no more
            for (let i = 0; i < n; i++) expect(has(S, i)).toBe(draws[c * n + i]! < q);
            expect(members(S).every((i) => i < n)).toBe(true);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('q = 0 gives the empty coalition and q = 1 the grand one', () => {
    const rng = createRng(3);
    expect(size(bernoulliSubsets(0)(40, rng).next().value!)).toBe(0);
    expect(size(bernoulliSubsets(1)(40, rng).next().value!)).toBe(40);
  });

  it('uniformSubsets includes each player with frequency ½ (Hoeffding, δ = 1e-6 per player)', () => {
    const n = 12;
    const k = 4000;
    const counts = new Array<number>(n).fill(0);
    const it = uniformSubsets(n, createRng(11));
    for (let s = 0; s < k; s++) {
      const S = it.next().value!;
      for (let i = 0; i < n; i++) if (has(S, i)) counts[i]! += 1;
    }
    for (const c of counts) expect(Math.abs(c / k - 0.5)).toBeLessThan(hoeffding(1, k, DELTA));
  });

  it('rejects a q outside [0, 1], and a bad n or rng when drawing', () => {
    expect(() => bernoulliSubsets(1.5)).toThrow(
      new RangeError('q: expected a probability in [0, 1], got 1.5'),
    );
    expect(() => bernoulliSubsets(Number.NaN)).toThrow(RangeError);
    expect(() => uniformSubsets(0, createRng(1)).next()).toThrow(RangeError);
    expect(() => uniformSubsets(3, {} as Rng).next()).toThrow(TypeError);
  });
});
