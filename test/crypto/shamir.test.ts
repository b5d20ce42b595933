import fc from 'fast-check';
import { combine, split } from 'shamir-secret-sharing';
import { describe, expect, it } from 'vitest';
import { seededRandomFromInts } from '../../crypto/random-bytes.js';
import { combineShares, shareIndex, splitSecret } from '../../crypto/shamir.js';

const params = fc
  .record({
    n: fc.integer({ min: 2, max: 40 }),
    seed: fc.integer({ min: 0, max: 2 ** 31 }),
    secret: fc.uint8Array({ minLength: 32, maxLength: 32 }),
  })
  .chain((p) =>
    fc.record({
      p: fc.constant(p),
      t: fc.integer({ min: 2, max: p.n }),
      order: fc.shuffledSubarray([...Array(p.n).keys()], { minLength: p.n, maxLength: p.n }),
    }),
  );

describe('crypto/shamir', () => {
  it('any t shares reconstruct the secret; any t − 1 do not (fast-check)', async () => {
    await fc.assert(
      fc.asyncProperty(params, async ({ p, t, order }) => {
        const shares = await splitSecret(p.secret, p.n, t, seededRandomFromInts(p.seed));
        expect(shares.map(shareIndex)).toEqual([...Array(p.n).keys()].map((i) => i + 1));
        const pick = order.slice(0, t).map((i) => shares[i]!);
        expect(await combineShares(pick)).toEqual(p.secret);
        if (t - 1 >= 2) {
          // t − 1 shares interpolate a value independent of the secret (equal with prob. 2^-256).
          expect(await combineShares(pick.slice(0, t - 1))).not.toEqual(p.secret);
        }
      }),
      { numRuns: 60, seed: 20240601 },
    );
  });

  it('is interoperable with the package: its split → our combine, our split → its combine', async () => {
    const secret = Uint8Array.from({ length: 32 }, (_, i) => (i * 37) & 255);
    const theirs = await split(secret, 7, 4);
    expect(await combineShares([theirs[6]!, theirs[1]!, theirs[3]!, theirs[0]!])).toEqual(secret);
    const ours = await splitSecret(secret, 7, 4, seededRandomFromInts(2));
    expect(await combine([ours[5]!, ours[2]!, ours[4]!, ours[0]!])).toEqual(secret);
  });

  it('is deterministic in its random source', async () => {
    const secret = new Uint8Array(32).fill(1);
    const a = await splitSecret(secret, 5, 3, seededRandomFromInts(9));
    const b = await splitSecret(secret, 5, 3, seededRandomFromInts(9));
    const c = await splitSecret(secret, 5, 3, seededRandomFromInts(10));
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
  });

  it('validates its inputs', async () => {
    const r = seededRandomFromInts(0);
    const s = new Uint8Array(32);
    await expect(splitSecret(new Uint8Array(31), 3, 2, r)).rejects.toThrow(/^secret/);
    await expect(splitSecret(s, 3, 1, r)).rejects.toThrow(/^t/);
    await expect(splitSecret(s, 3, 4, r)).rejects.toThrow(/^t/);
    await expect(splitSecret(s, 256, 2, r)).rejects.toThrow(/^n/);
    const shares = await splitSecret(s, 3, 2, r);
    await expect(combineShares([shares[0]!])).rejects.toThrow(/^shares\.length/);
    await expect(combineShares([shares[0]!, shares[0]!])).rejects.toThrow(/duplicate/);
    await expect(combineShares([shares[0]!, new Uint8Array(33)])).rejects.toThrow(/^shares\[1\]/);
  });
});
