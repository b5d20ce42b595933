/**
 * X25519 Diffie–Hellman key agreement (RFC 7748), on node:crypto's OpenSSL when it reproduces
 * the RFC's vectors here (crypto/_openssl.ts: ≈15× faster), else via @noble/curves; both give
 * the same bytes.
 *
 * Bonawitz et al. 2017 (§4, "KA"): each user advertises two agreement keys per round — c^PK for
 * encrypting secret shares and s^PK for seeding pairwise masks. The raw X25519 output is never
 * used directly as a key; callers pass it through HKDF (crypto/kdf.ts) with a purpose label.
 */
import { x25519 } from '@noble/curves/ed25519.js';
import { opensslX25519 } from './_openssl.js';
import { checkBytes } from './check.js';

/** Byte length of X25519 secret keys, public keys and shared secrets. */
export const X25519_KEY_LENGTH = 32;

/** An X25519 key pair; the holder owns `secretKey` and must wipe it when done. */
export interface AgreementKeyPair {
  readonly secretKey: Uint8Array;
  readonly publicKey: Uint8Array;
}

/**
 * The X25519 key pair whose secret key is `seed` (RFC 7748 §5 clamps it when used).
 *
 * @param seed - 32 random bytes, e.g. from a RandomSource; copied.
 * @throws TypeError if `seed` is not a Uint8Array; RangeError if it is not 32 bytes.
 */
export function agreementKeyPairFromSeed(seed: Uint8Array): AgreementKeyPair {
  checkBytes('seed', seed, X25519_KEY_LENGTH);
  const secretKey = Uint8Array.from(seed);
  return { secretKey, publicKey: opensslX25519?.publicKey(secretKey) ?? x25519.getPublicKey(secretKey) };
}

/** The X25519 public key of `secretKey`. @throws TypeError / RangeError on a malformed key. */
export function agreementPublicKey(secretKey: Uint8Array): Uint8Array {
  checkBytes('secretKey', secretKey, X25519_KEY_LENGTH);
  return opensslX25519?.publicKey(secretKey) ?? x25519.getPublicKey(secretKey);
}

/**
 * The X25519 shared secret of `secretKey` and `peerPublicKey` (RFC 7748 §6.1).
 *
 * @returns 32 bytes owned by the caller (wipe after deriving keys from it).
 * @throws TypeError if an argument is not a Uint8Array; RangeError if a key is not 32 bytes or
 *   the peer key is a low-order point (all-zero shared secret, RFC 7748 §6.1 "check").
 */
export function agree(secretKey: Uint8Array, peerPublicKey: Uint8Array): Uint8Array {
  checkBytes('secretKey', secretKey, X25519_KEY_LENGTH);
  checkBytes('peerPublicKey', peerPublicKey, X25519_KEY_LENGTH);
  try {
    return (
      opensslX25519?.shared(secretKey, peerPublicKey) ?? x25519.getSharedSecret(secretKey, peerPublicKey)
    );
  } catch {
    throw new RangeError('peerPublicKey: low-order or invalid X25519 point');
  }
}
