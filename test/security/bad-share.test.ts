/**
 * Attack family: one bad Shamir share (trust issue, finding 3).
 *
 * A corrupt silo answers the Unmasking request with one wrong share (the y-bytes changed, the
 * x-coordinate kept, the message signed with its own key, so the server accepts the message).
 *  - A wrong seed share of a survivor: the old server reconstructed a wrong b_v from the first t
 *    responders and subtracted the wrong self mask; the weighted sum decoded to garbage, no error.
 *  - A wrong key share of a dropped silo: the reconstructed s_u^SK failed its s_u^PK check and
 *    the old server aborted the round, although 5 good shares of 6 were there.
 * Now every dealer signs a digest of each share it deals and a commitment to b_u in ShareKeys;
 * the server checks each revealed share against its digest, discards bad ones, names their
 * senders (BAD_SHARE) and reconstructs from t verified shares (protocol/reconstruct.ts).
 */
import { describe, expect, it } from 'vitest';
import { seedCommitment } from '../../protocol/_keys.js';
import type { ShareKeys, UnmaskResponse } from '../../protocol/messages.js';
import { serverHandle } from '../../protocol/server.js';
import { decodeWeightedSum, encodeWeightedInput, type WeightedEncoding } from '../../protocol/weighted.js';
import {
  type Party,
  parties,
  plainSum,
  resign,
  runHonestServer,
  shareKeysOf,
  type Tamper,
} from './_round.js';

const N = 7;
const T = 5; // ⌊(7 + 2)/2⌋ + 1 for the default n_C = 2
const D = 4;
const encoding: WeightedEncoding = { valueRange: 1, weightRange: 2, n: N };
const weights = [1, 1, 1, 2, 2, 1, 2]; // Σ = 10
const updates = weights.map((_, i) => Float64Array.from({ length: D }, (_, j) => ((i + 1) * (j - 1.5)) / 40));
const inputs = updates.map((u, i) => encodeWeightedInput(u, weights[i]!, encoding));
const config = { session: 'bad-share', round: 1, threshold: T, encoding };

/** Silo `liar` answers Unmasking with its share of each of `owners` (seed or key share) changed. */
function lie(p: Party, liar: number, owners: number[], kind: 'seedShares' | 'keyShares'): Tamper {
  return (stage, from, m) => {
    if (stage !== 'unmask' || from !== liar) return m;
    const r = m as UnmaskResponse;
    const shares = r[kind].map((s) => {
      if (!owners.includes(s.owner)) return s;
      const share = s.share.slice();
      share[0]! ^= 0x5a; // a wrong y-value; the x-coordinate (last byte) is kept
      return { owner: s.owner, share };
    });
    return resign(p, r, { [kind]: shares } as Partial<UnmaskResponse>);
  };
}

/** Both tampering hooks, in order. */
const both =
  (a: Tamper, b: Tamper): Tamper =>
  (stage, from, m) => {
    const x = a(stage, from, m);
    return x === null ? null : b(stage, from, x);
  };

describe('security: one bad share in Unmasking', () => {
  it('a wrong seed share is discarded and its sender named (BAD_SHARE); the sum is exact', async () => {
    // Old behaviour (commit f34f0a2): the round completed with total weight −12.19 instead of 10.
    const p = parties(inputs, config);
    const r = await runHonestServer(p, { tamper: lie(p, 1, [0], 'seedShares') });
    expect(r.kind).toBe('result');
    if (r.kind !== 'result') return;
    const { result } = r.output;
    expect(result.faults).toEqual([
      { silo: 1, code: 'BAD_SHARE', detail: '1 revealed a wrong seed share of 0' },
    ]);
    expect(result.sum).toEqual(plainSum(inputs, [...Array(N).keys()]));
    expect(decodeWeightedSum(result.sum, encoding, N).totalWeight).toBeCloseTo(10, 6);
  });

  it('a wrong key share of a dropped silo: 5 verified shares of 6 complete the round, the sender is named', async () => {
    // Old behaviour (commit f34f0a2): the round aborted with RECONSTRUCTION_FAILED.
    const p = parties(inputs, config);
    const r = await runHonestServer(p, { drop: new Map([[6, 1]]), tamper: lie(p, 2, [6], 'keyShares') });
    expect(r.kind).toBe('result');
    if (r.kind !== 'result') return;
    expect(r.output.result.dropped).toEqual([6]);
    expect(r.output.result.faults).toEqual([
      { silo: 2, code: 'BAD_SHARE', detail: '2 revealed a wrong key share of 6' },
    ]);
    expect(r.output.result.sum).toEqual(plainSum(inputs, [0, 1, 2, 3, 4, 5]));
  });

  it('several liars, several secrets: all named, the round completes while t verified shares remain', async () => {
    const p = parties(inputs, config);
    const tamper = both(lie(p, 0, [3, 4], 'seedShares'), lie(p, 5, [0], 'seedShares'));
    const r = await runHonestServer(p, { tamper });
    expect(r.kind).toBe('result');
    if (r.kind !== 'result') return;
    expect(r.output.result.faults.map((f) => [f.silo, f.code])).toEqual([
      [0, 'BAD_SHARE'],
      [5, 'BAD_SHARE'],
    ]);
    expect(r.output.result.faults[0]!.detail).toBe(
      '0 revealed a wrong seed share of 3, a wrong seed share of 4',
    );
    expect(r.output.result.sum).toEqual(plainSum(inputs, [...Array(N).keys()]));
  });

  it('fewer than t verified shares: the round aborts with RECONSTRUCTION_FAILED naming the senders', async () => {
    const p = parties(inputs, config);
    // 6 responders, t = 5: two bad key shares of the dropped silo 6 leave 4
    const tamper = both(lie(p, 1, [6], 'keyShares'), lie(p, 3, [6], 'keyShares'));
    const r = await runHonestServer(p, { drop: new Map([[6, 1]]), tamper });
    expect(r.kind).toBe('server-abort');
    if (r.kind !== 'server-abort') return;
    expect(r.output.code).toBe('RECONSTRUCTION_FAILED');
    expect(r.output.culprits).toEqual([1, 3]);
    expect(r.output.detail).toBe('s^SK of 6: 4 verified shares < t = 5; bad shares from 1, 3');
    expect(r.output.faults.map((f) => [f.silo, f.code])).toEqual([
      [1, 'BAD_SHARE'],
      [3, 'BAD_SHARE'],
    ]);
    expect(r.server.error).toMatchObject({ code: 'RECONSTRUCTION_FAILED', culprits: [1, 3] });
  });

  it('a dealer whose shares do not reconstruct the seed it committed to is named (BAD_DEALING)', async () => {
    const p = parties(inputs, config);
    // Silo 4 signs a commitment to another seed than the one it shared (and masked with).
    const tamper: Tamper = (stage, from, m) =>
      stage === 'share' && from === 4
        ? resign(p, m as ShareKeys, {
            seedCommitment: seedCommitment(config.session, config.round, 4, new Uint8Array(32).fill(7)),
          })
        : m;
    const r = await runHonestServer(p, { tamper });
    expect(r.kind).toBe('server-abort');
    if (r.kind !== 'server-abort') return;
    expect(r.output.code).toBe('BAD_DEALING');
    expect(r.output.culprits).toEqual([4]);
    expect(r.output.faults).toEqual([
      {
        silo: 4,
        code: 'BAD_DEALING',
        detail: 'b of 4: t shares matching its signed digests do not reconstruct its committed seed',
      },
    ]);
  });

  it('a holder whose share does not match the digest its dealer signed aborts with BAD_SHARE naming the dealer', async () => {
    // Without this check a corrupt dealer could sign a wrong digest and get an honest holder named.
    const p = parties(inputs, config);
    const tamper: Tamper = (stage, from, m) => {
      if (stage !== 'share' || from !== 3) return m;
      const s = m as ShareKeys;
      const digests = s.digests.map((d) => (d.holder === 0 ? { ...d, seed: new Uint8Array(32) } : d));
      return resign(p, s, { digests });
    };
    const r = await runHonestServer(p, { tamper });
    expect(r).toEqual({
      kind: 'client-abort',
      silo: 0,
      code: 'BAD_SHARE',
      detail: 'shares from 3 do not match the digests it signed in ShareKeys',
    });
  });

  it('the server refuses ShareKeys whose digests do not cover U_1 (INCONSISTENT_SET) or are malformed', async () => {
    const p = parties(inputs, config);
    const share = await shareKeysOf(p, 0);
    const short = resign(p, share, { digests: share.digests.slice(1) });
    expect(serverHandle(p.server, short).reply).toMatchObject({ code: 'INCONSISTENT_SET' });
    const malformed = { ...share, seedCommitment: new Uint8Array(31) };
    expect(serverHandle(p.server, malformed).reply).toMatchObject({ code: 'MALFORMED' });
    expect(serverHandle(p.server, share).reply).toEqual({ type: 'accepted' });
  });
});
