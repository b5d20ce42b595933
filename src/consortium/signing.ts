/**
 * Request signing shared by the silo client and the service (src/server/auth.ts verifies what
 * this signs; the server may import src/client, the client may not import src/server).
 *
 * A silo signs every request — reads included — with its registered Ed25519 key
 * (crypto/signature.ts) over
 *
 *   "fedscore/http-request/v1" ‖ LF ‖ METHOD ‖ LF ‖ path-with-query ‖ LF ‖ silo ‖ LF ‖
 *   timestamp ‖ LF ‖ nonce ‖ LF ‖ hex SHA-256 of the body (empty body: of zero bytes)
 *
 * and sends `x-fedscore-silo`, `x-fedscore-timestamp` (ms since the epoch), `x-fedscore-nonce`
 * (16–64 characters of [A-Za-z0-9_-]), `x-fedscore-signature` (hex) and
 * `x-fedscore-content-sha256`, the body's digest that the signature covers. The digest header
 * changes nothing in what is signed; it lets the service verify the signature before it reads
 * the body (and then check the body against the digest), so an unauthenticated upload is refused
 * before a byte of it is buffered.
 */
import { createHash, randomBytes } from 'node:crypto';
import { sign } from '../../crypto/signature.js';

/** Header names. */
export const SILO_HEADER = 'x-fedscore-silo';
export const TIMESTAMP_HEADER = 'x-fedscore-timestamp';
export const NONCE_HEADER = 'x-fedscore-nonce';
export const SIGNATURE_HEADER = 'x-fedscore-signature';
export const CONTENT_DIGEST_HEADER = 'x-fedscore-content-sha256';

const TAG = 'fedscore/http-request/v1';
/** Accepted request nonces. */
export const NONCE_PATTERN = /^[A-Za-z0-9_-]{16,64}$/;

/** What a silo signs. */
export interface RequestToSign {
  readonly method: string;
  /** Path and query exactly as sent (e.g. `/v1/consortia/c1/rounds/1/mask`). */
  readonly path: string;
  readonly silo: number;
  readonly timestamp: number;
  readonly nonce: string;
  /** The body bytes (none for GET). */
  readonly body?: Uint8Array;
  /** The body's hex SHA-256 in place of `body` (the service, before it has read the body). */
  readonly bodyDigest?: string;
}

/** Hex SHA-256 of a request body (of zero bytes when there is none). */
export function bodyDigest(body?: Uint8Array): string {
  return createHash('sha256')
    .update(body ?? new Uint8Array(0))
    .digest('hex');
}

/** The bytes a silo signs for `r`. */
export function requestSigningPayload(r: RequestToSign): Uint8Array {
  const digest = r.bodyDigest ?? bodyDigest(r.body);
  const text = [
    TAG,
    r.method.toUpperCase(),
    r.path,
    String(r.silo),
    String(r.timestamp),
    r.nonce,
    digest,
  ].join('\n');
  return new TextEncoder().encode(text);
}

/**
 * The authentication headers of a silo request (the four above and the body's digest).
 *
 * @throws RangeError on a nonce outside [A-Za-z0-9_-]{16,64}; signature errors for a bad key.
 */
export function signRequest(secretKey: Uint8Array, r: RequestToSign): Record<string, string> {
  if (!NONCE_PATTERN.test(r.nonce)) throw new RangeError('nonce: expected 16–64 characters of [A-Za-z0-9_-]');
  const digest = r.bodyDigest ?? bodyDigest(r.body);
  const signature = sign(secretKey, requestSigningPayload({ ...r, bodyDigest: digest }));
  return {
    [SILO_HEADER]: String(r.silo),
    [TIMESTAMP_HEADER]: String(r.timestamp),
    [NONCE_HEADER]: r.nonce,
    [SIGNATURE_HEADER]: Buffer.from(signature).toString('hex'),
    [CONTENT_DIGEST_HEADER]: digest,
  };
}

/** A fresh random request nonce (24 base64url characters, 144 bits). */
export function randomNonce(): string {
  return randomBytes(18).toString('base64url');
}
