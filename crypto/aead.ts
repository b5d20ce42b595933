/**
 * XChaCha20-Poly1305 authenticated encryption (draft-irtf-cfrg-xchacha, libsodium's
 * `crypto_aead_xchacha20poly1305_ietf_*`), with the routing of a secret share bound into the
 * associated data.
 *
 * Bonawitz et al. 2017, round 1 (ShareKeys): user u encrypts its shares for v as
 * e_{u,v} = AE.enc(KA.agree(c_u^SK, c_v^PK), u ‖ v ‖ shares). Here u, v, the session and the
 * round are associated data instead of plaintext: the server relaying e_{u,v} cannot redirect
 * it to another user, swap its sender, or replay it in another session or round without the
 * decryption failing.
 */
import sodium from 'libsodium-wrappers';
import { checkBytes, checkInt, checkString, encodeContext } from './check.js';

await sodium.ready;

/** Key length of XChaCha20-Poly1305. */
export const AEAD_KEY_LENGTH = 32;
/** Nonce length of XChaCha20-Poly1305 (192 bits: random nonces are safe). */
export const AEAD_NONCE_LENGTH = 24;
/** Length of the Poly1305 tag appended to each ciphertext. */
export const AEAD_TAG_LENGTH = 16;

/** Who sent a sealed message to whom, in which session and round. */
export interface AeadContext {
  /** Sender's silo id (integer in [0, 2^32)). */
  readonly sender: number;
  /** Receiver's silo id (integer in [0, 2^32)). */
  readonly receiver: number;
  /** Session identifier (1..255 UTF-8 bytes). */
  readonly session: string;
  /** Round number (integer in [0, 2^32)). */
  readonly round: number;
}

function associatedData(ctx: AeadContext): Uint8Array {
  if (typeof ctx !== 'object' || ctx === null) throw new TypeError('context: expected an object');
  checkInt('context.sender', ctx.sender, 0, 0xffffffff);
  checkInt('context.receiver', ctx.receiver, 0, 0xffffffff);
  checkString('context.session', ctx.session, 255);
  checkInt('context.round', ctx.round, 0, 0xffffffff);
  return encodeContext(['fedscore/aead/v1', ctx.session, ctx.round, ctx.sender, ctx.receiver]);
}

/**
 * Encrypts and authenticates `plaintext` under `key`, binding `context` as associated data.
 *
 * @param nonce - 24 bytes; must never repeat under one key (draw it from a RandomSource).
 * @returns nonce ‖ ciphertext ‖ tag, a fresh buffer owned by the caller.
 * @throws TypeError / RangeError on a malformed key, nonce, plaintext or context field.
 */
export function seal(
  key: Uint8Array,
  nonce: Uint8Array,
  plaintext: Uint8Array,
  context: AeadContext,
): Uint8Array {
  checkBytes('key', key, AEAD_KEY_LENGTH);
  checkBytes('nonce', nonce, AEAD_NONCE_LENGTH);
  checkBytes('plaintext', plaintext);
  const ad = associatedData(context);
  const ct = sodium.crypto_aead_xchacha20poly1305_ietf_encrypt(plaintext, ad, null, nonce, key);
  const out = new Uint8Array(AEAD_NONCE_LENGTH + ct.length);
  out.set(nonce, 0);
  out.set(ct, AEAD_NONCE_LENGTH);
  return out;
}

/**
 * Decrypts a box produced by {@link seal} with the same key and context.
 *
 * @returns the plaintext (owned by the caller), or `null` if the box was tampered with, was
 *   sealed under another key, or for another sender, receiver, session or round.
 * @throws TypeError / RangeError on a malformed key or context field.
 */
export function open(key: Uint8Array, box: Uint8Array, context: AeadContext): Uint8Array | null {
  checkBytes('key', key, AEAD_KEY_LENGTH);
  checkBytes('box', box);
  const ad = associatedData(context);
  if (box.length < AEAD_NONCE_LENGTH + AEAD_TAG_LENGTH) return null;
  try {
    return sodium.crypto_aead_xchacha20poly1305_ietf_decrypt(
      null,
      box.subarray(AEAD_NONCE_LENGTH),
      ad,
      box.subarray(0, AEAD_NONCE_LENGTH),
      key,
    );
  } catch {
    return null;
  }
}
