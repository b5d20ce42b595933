/**
 * Attack family: one bad Shamir share (trust issue, finding 3).
 *
 * A corrupt silo answers the Unmasking request with one wrong share (the y-bytes changed, the
 * x-coordinate kept, the message signed with its own key, so the server accepts it).
 *  - A wrong seed share of a survivor: the server reconstructs a wrong b_v and subtracts the
 *    wrong self mask; the weighted sum decodes to garbage.
 *  - A wrong key share of a dropped silo: the reconstructed s_u^SK fails its s_u^PK check.
 */
import { describe, expect, it } from 'vitest';
import type { UnmaskResponse } from '../../protocol/messages.js';
import { decodeWeightedSum, encodeWeightedInput, type WeightedEncoding } from '../../protocol/weighted.js';
import { parties, resign, runHonestServer, type Tamper } from './_round.js';

const N = 7;
const T = 5;
const D = 4;
const encoding: WeightedEncoding = { valueRange: 1, weightRange: 2, n: N };
const weights = [1, 1, 1, 2, 2, 1, 2]; // Σ = 10
const updates = weights.map((_, i) => Float64Array.from({ length: D }, (_, j) => ((i + 1) * (j - 1.5)) / 40));
const inputs = updates.map((u, i) => encodeWeightedInput(u, weights[i]!, encoding));

/** Silo `liar` answers Unmasking with its share of `owner` (seed or key share) changed. */
function lie(
  liar: number,
  owner: number,
  kind: 'seedShares' | 'keyShares',
  p: ReturnType<typeof parties>,
): Tamper {
  return (stage, from, m) => {
    if (stage !== 'unmask' || from !== liar) return m;
    const r = m as UnmaskResponse;
    const shares = r[kind].map((s) => {
      if (s.owner !== owner) return s;
      const share = s.share.slice();
      share[0]! ^= 0x5a; // a wrong y-value; the x-coordinate (last byte) is kept
      return { owner: s.owner, share };
    });
    return resign(p, r, { [kind]: shares } as Partial<UnmaskResponse>);
  };
}

describe('security: one bad share in Unmasking', () => {
  it('old behaviour: one wrong seed share garbles the sum without an error', async () => {
    const p = parties(inputs, { session: 'bad-share', round: 1, threshold: T });
    const r = await runHonestServer(p, { tamper: lie(1, 0, 'seedShares', p) });
    expect(r.kind).toBe('result');
    if (r.kind !== 'result') return;
    const sum = decodeWeightedSum(r.output.result.sum, encoding);
    expect(sum.totalWeight).toBeCloseTo(-12.192189, 5); // the honest total is 10
  });

  it('old behaviour: one wrong key share aborts the round although 5 good shares of 6 exist', async () => {
    const p = parties(inputs, { session: 'bad-share', round: 1, threshold: T });
    const r = await runHonestServer(p, { drop: new Map([[6, 1]]), tamper: lie(2, 6, 'keyShares', p) });
    expect(r.kind).toBe('server-abort');
    if (r.kind === 'server-abort') expect(r.output.code).toBe('RECONSTRUCTION_FAILED');
  });
});
