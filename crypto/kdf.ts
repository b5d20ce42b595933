/**
 * HKDF-SHA256 key derivation (RFC 5869), via @noble/hashes.
 *
 * Every key in fedscore's secure aggregation — AEAD keys from X25519 secrets, PRG keys for
 * pairwise and self masks — is derived here with an `info` string that names its purpose and
 * binds it to the session and round, so no key material is ever used for two purposes.
 */
import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { checkBytes, checkInt } from './check.js';

/** Largest output HKDF-SHA256 allows: 255 blocks of 32 bytes (RFC 5869 §2.3). */
export const HKDF_SHA256_MAX_LENGTH = 255 * 32;

/**
 * HKDF-SHA256(ikm, salt, info) truncated to `length` bytes (RFC 5869 §2.2–2.3).
 *
 * @param ikm - input keying material (not modified; the caller still owns and wipes it).
 * @param salt - optional salt; an empty array means "no salt" (RFC 5869 §2.2: HashLen zeros).
 * @param info - context and purpose label.
 * @param length - output length in bytes, 1..8160.
 * @returns a fresh buffer owned by the caller.
 * @throws TypeError if a byte argument is not a Uint8Array; RangeError if `length` is out of range.
 */
export function hkdfSha256(ikm: Uint8Array, salt: Uint8Array, info: Uint8Array, length: number): Uint8Array {
  checkBytes('ikm', ikm);
  checkBytes('salt', salt);
  checkBytes('info', info);
  checkInt('length', length, 1, HKDF_SHA256_MAX_LENGTH);
  return hkdf(sha256, ikm, salt.length === 0 ? undefined : salt, info, length);
}
