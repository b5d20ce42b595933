/**
 * Request authentication.
 *
 * Silos sign every request with their registered Ed25519 key (crypto/signature.ts) over
 *
 *   "fedscore/http-request/v1" ‖ LF ‖ METHOD ‖ LF ‖ path-with-query ‖ LF ‖ silo ‖ LF ‖
 *   timestamp ‖ LF ‖ nonce ‖ LF ‖ hex SHA-256 of the body (empty body: of zero bytes)
 *
 * and send `x-fedscore-silo`, `x-fedscore-timestamp` (ms since the epoch), `x-fedscore-nonce`
 * (16–64 characters of [A-Za-z0-9_-]) and `x-fedscore-signature` (hex). The consortium is part of
 * the path, so a request cannot be moved to another consortium, route, body or silo; the
 * timestamp must lie within the freshness window and the nonce must be new within it (nonces are
 * stored, so the check holds across server processes).
 *
 * The operator authenticates with `authorization: Bearer <admin token>`.
 *
 * The signing helpers here are pure so that the silo client can share them; the layering rule
 * (src/client may not import src/server) means they should move to protocol/ when the client is
 * written.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { sign, verify } from '../../crypto/signature.js';

/** Header names. */
export const SILO_HEADER = 'x-fedscore-silo';
export const TIMESTAMP_HEADER = 'x-fedscore-timestamp';
export const NONCE_HEADER = 'x-fedscore-nonce';
export const SIGNATURE_HEADER = 'x-fedscore-signature';

const TAG = 'fedscore/http-request/v1';
const NONCE = /^[A-Za-z0-9_-]{16,64}$/;
const SIGNATURE = /^[0-9a-f]{128}$/;
const INTEGER = /^(0|[1-9][0-9]{0,15})$/;

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
}

/** The bytes a silo signs for `r`. */
export function requestSigningPayload(r: RequestToSign): Uint8Array {
  const digest = createHash('sha256')
    .update(r.body ?? new Uint8Array(0))
    .digest('hex');
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
 * The authentication headers of a silo request.
 *
 * @throws RangeError on a nonce outside [A-Za-z0-9_-]{16,64}; signature errors for a bad key.
 */
export function signRequest(secretKey: Uint8Array, r: RequestToSign): Record<string, string> {
  if (!NONCE.test(r.nonce)) throw new RangeError('nonce: expected 16–64 characters of [A-Za-z0-9_-]');
  const signature = sign(secretKey, requestSigningPayload(r));
  return {
    [SILO_HEADER]: String(r.silo),
    [TIMESTAMP_HEADER]: String(r.timestamp),
    [NONCE_HEADER]: r.nonce,
    [SIGNATURE_HEADER]: Buffer.from(signature).toString('hex'),
  };
}

/** Parsed authentication headers, or the reason they are unusable. */
export type ParsedAuth =
  | {
      readonly ok: true;
      readonly silo: number;
      readonly timestamp: number;
      readonly nonce: string;
      readonly signature: Uint8Array;
    }
  | { readonly ok: false; readonly detail: string };

/** Reads the four headers (format only; nothing is verified). */
export function parseAuthHeaders(headers: Record<string, string | string[] | undefined>): ParsedAuth {
  const get = (name: string) => {
    const v = headers[name];
    return typeof v === 'string' ? v : undefined;
  };
  const silo = get(SILO_HEADER);
  const timestamp = get(TIMESTAMP_HEADER);
  const nonce = get(NONCE_HEADER);
  const signature = get(SIGNATURE_HEADER);
  if (silo === undefined || timestamp === undefined || nonce === undefined || signature === undefined)
    return {
      ok: false,
      detail: `missing ${[SILO_HEADER, TIMESTAMP_HEADER, NONCE_HEADER, SIGNATURE_HEADER].filter((h) => get(h) === undefined).join(', ')}`,
    };
  if (!INTEGER.test(silo) || Number(silo) > 254)
    return { ok: false, detail: `${SILO_HEADER} is not a silo id` };
  if (!INTEGER.test(timestamp)) return { ok: false, detail: `${TIMESTAMP_HEADER} is not an integer` };
  if (!NONCE.test(nonce))
    return { ok: false, detail: `${NONCE_HEADER} must be 16–64 characters of [A-Za-z0-9_-]` };
  if (!SIGNATURE.test(signature)) return { ok: false, detail: `${SIGNATURE_HEADER} must be 128 hex digits` };
  return {
    ok: true,
    silo: Number(silo),
    timestamp: Number(timestamp),
    nonce,
    signature: new Uint8Array(Buffer.from(signature, 'hex')),
  };
}

/** Whether the signature verifies under `publicKey`. */
export function verifyRequest(publicKey: Uint8Array, r: RequestToSign, signature: Uint8Array): boolean {
  return verify(publicKey, requestSigningPayload(r), signature);
}

/** Constant-time comparison of a bearer header with the admin token (both hashed first). */
export function checkAdminToken(header: string | undefined, token: string): boolean {
  if (typeof header !== 'string' || !header.startsWith('Bearer ')) return false;
  const a = createHash('sha256').update(header.slice(7)).digest();
  const b = createHash('sha256').update(token).digest();
  return timingSafeEqual(a, b);
}
