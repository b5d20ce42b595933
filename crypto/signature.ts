/**
 * Ed25519 signatures (RFC 8032), via @noble/curves.
 *
 * Bonawitz et al. 2017, §4 "Signature scheme" (active security): each silo holds a long-term
 * signing key registered in the consortium configuration; it signs its advertised keys and its
 * consistency-check message, and fedscore additionally signs every client message.
 */
import { ed25519 } from '@noble/curves/ed25519.js';
import { opensslEd25519Sign } from './_openssl.js';
import { checkBytes } from './check.js';

/** Byte length of Ed25519 secret keys (seeds) and public keys. */
export const ED25519_KEY_LENGTH = 32;
/** Byte length of an Ed25519 signature. */
export const ED25519_SIGNATURE_LENGTH = 64;

/** A long-term Ed25519 signing identity; the holder owns `secretKey`. */
export interface SigningKeyPair {
  readonly secretKey: Uint8Array;
  readonly publicKey: Uint8Array;
}

/**
 * The Ed25519 key pair with secret key (RFC 8032 §5.1.5 seed) `seed`.
 *
 * @throws TypeError if `seed` is not a Uint8Array; RangeError if it is not 32 bytes.
 */
export function signingKeyPairFromSeed(seed: Uint8Array): SigningKeyPair {
  checkBytes('seed', seed, ED25519_KEY_LENGTH);
  const secretKey = Uint8Array.from(seed);
  return { secretKey, publicKey: ed25519.getPublicKey(secretKey) };
}

/**
 * Signs `message` with `secretKey` (deterministic, RFC 8032 §5.1.6): on node:crypto's OpenSSL
 * when it reproduces RFC 8032's vector here (crypto/_openssl.ts), else via @noble/curves — the
 * same bytes. Verification stays on noble (its strict, non-malleable checks).
 *
 * @throws TypeError if an argument is not a Uint8Array; RangeError if the key is not 32 bytes.
 */
export function sign(secretKey: Uint8Array, message: Uint8Array): Uint8Array {
  checkBytes('secretKey', secretKey, ED25519_KEY_LENGTH);
  checkBytes('message', message);
  return opensslEd25519Sign?.(secretKey, message) ?? ed25519.sign(message, secretKey);
}

/**
 * Whether `signature` is a valid Ed25519 signature of `message` under `publicKey`
 * (RFC 8032 §5.1.7, strict encodings: noble's default `zip215: true` is turned off so that
 * non-canonical encodings are refused and signatures are not malleable).
 *
 * @returns false for any invalid signature, including malformed points.
 * @throws TypeError if an argument is not a Uint8Array; RangeError on wrong key/signature length.
 */
export function verify(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  checkBytes('publicKey', publicKey, ED25519_KEY_LENGTH);
  checkBytes('message', message);
  checkBytes('signature', signature, ED25519_SIGNATURE_LENGTH);
  try {
    return ed25519.verify(signature, message, publicKey, { zip215: false });
  } catch {
    return false;
  }
}

/**
 * Why `publicKey` cannot be a silo's registered Ed25519 key, or undefined when it can: it must be
 * the canonical encoding of a curve point (RFC 8032 §5.1.3, y < p) in the prime-order subgroup —
 * as every A = [a]B is. A small-order key (the all-zero encoding, the identity, the points of
 * order 2, 4 and 8) carries no secret, and a key with a torsion component is no honest key.
 *
 * @throws TypeError if `publicKey` is not a Uint8Array; RangeError if it is not 32 bytes.
 */
export function publicKeyProblem(publicKey: Uint8Array): string | undefined {
  checkBytes('publicKey', publicKey, ED25519_KEY_LENGTH);
  let point: ReturnType<typeof ed25519.Point.fromBytes>;
  try {
    point = ed25519.Point.fromBytes(publicKey, false);
  } catch {
    return 'not a valid point encoding (not on the curve or not canonical)';
  }
  if (point.isSmallOrder()) return 'a point of small order (it has no secret key)';
  if (!point.isTorsionFree()) return 'not in the prime-order subgroup (it has a torsion component)';
  return undefined;
}
