/** Key derivations shared by client.ts and server.ts (internal; never re-exported). */
import { encodeContext } from '../crypto/check.js';
import { sha256 } from '../crypto/digest.js';
import { hkdfSha256 } from '../crypto/kdf.js';
import { agree } from '../crypto/key-agreement.js';
import type { MaskLabel } from '../crypto/prg.js';

/**
 * The AEAD key for the share boxes between a and b: HKDF-SHA256 of X25519(c_a^SK, c_b^PK)
 * (Bonawitz et al. 2017, round 1: AE key = KA.agree(c_u^SK, c_v^PK)), bound to session, round
 * and the unordered pair.
 */
export function shareBoxKey(
  cSK: Uint8Array,
  peerCPK: Uint8Array,
  session: string,
  round: number,
  a: number,
  b: number,
): Uint8Array {
  const shared = agree(cSK, peerCPK);
  const info = encodeContext([
    'fedscore/secagg/v1/share-box',
    session,
    round,
    Math.min(a, b),
    Math.max(a, b),
  ]);
  const key = hkdfSha256(shared, new Uint8Array(0), info, 32);
  shared.fill(0);
  return key;
}

/**
 * The digest of one share: SHA-256(context ‖ share), the context naming the share's kind (the
 * key share of s^SK or the seed share of b), session, round, dealer and holder. A share's 32
 * y-bytes are uniform (t ≥ 2), so the digest hides them; collision resistance binds the dealer
 * and the holder to one share each (protocol/messages.ts ShareDigest).
 */
export function shareDigest(
  kind: 'key' | 'seed',
  session: string,
  round: number,
  dealer: number,
  holder: number,
  share: Uint8Array,
): Uint8Array {
  const context = encodeContext(['fedscore/secagg/v2/share-digest', kind, session, round, dealer, holder]);
  return sha256(context, share);
}

/**
 * The commitment to a self-mask seed b_u, signed in ShareKeys before any masked input exists:
 * SHA-256(context ‖ b_u). b_u is 32 uniform bytes, so the commitment hides it; the server checks
 * the b_u it reconstructs against it (protocol/reconstruct.ts).
 */
export function seedCommitment(session: string, round: number, owner: number, seed: Uint8Array): Uint8Array {
  return sha256(encodeContext(['fedscore/secagg/v2/self-seed', session, round, owner]), seed);
}

/** Vector index of the update vector in mask labels (one masked vector per round). */
export const UPDATE_VECTOR = 0;

/** The pairwise mask label of silos a and b. */
export function pairLabel(session: string, round: number, a: number, b: number): MaskLabel {
  return { kind: 'pair', session, round, a, b, vector: UPDATE_VECTOR };
}

/** The self-mask label of `owner`. */
export function selfLabel(session: string, round: number, owner: number): MaskLabel {
  return { kind: 'self', session, round, owner, vector: UPDATE_VECTOR };
}

/**
 * Bonawitz et al. 2017, round 2: Δ_{u,v} — user u adds PRG(s_{u,v}) when u < v and subtracts it
 * when u > v, so each pair's masks cancel in the sum.
 */
export function pairSign(self: number, peer: number): 1 | -1 {
  return self < peer ? 1 : -1;
}

/** Whether two byte strings are equal (not constant-time: for public values and digests). */
export function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Whether two id lists hold the same ids in the same order. */
export function sameIds(a: readonly number[], b: readonly number[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** Whether ids are strictly ascending (hence distinct) integers. */
export function ascending(ids: readonly number[]): boolean {
  for (let i = 1; i < ids.length; i++) if (!(ids[i]! > ids[i - 1]!)) return false;
  return true;
}
