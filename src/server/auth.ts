/**
 * Request authentication.
 *
 * Silos sign every request with their registered Ed25519 key (crypto/signature.ts) over
 *
 *   "fedscore/http-request/v1" ‖ LF ‖ METHOD ‖ LF ‖ path-with-query ‖ LF ‖ silo ‖ LF ‖
 *   timestamp ‖ LF ‖ nonce ‖ LF ‖ hex SHA-256 of the body (empty body: of zero bytes)
 *
 * and send `x-fedscore-silo`, `x-fedscore-timestamp` (ms since the epoch), `x-fedscore-nonce`
 * (16–64 characters of [A-Za-z0-9_-]), `x-fedscore-signature` (hex) and, when the request has a
 * body, `x-fedscore-content-sha256` (the digest the signature covers: the service verifies the
 * signature before reading the body, then checks the body against it; see access.ts). The
 * consortium is part of the path, so a request cannot be moved to another consortium, route, body
 * or silo; the timestamp must lie within the freshness window and the nonce must be new within it
 * (nonces are stored, so the check holds across server processes).
 *
 * The operator authenticates with `authorization: Bearer <admin token>`; the dashboard (and
 * whoever the operator gives it to) with `authorization: Bearer <viewer token>`, which only reads.
 *
 * The signing side lives in src/consortium/signing.ts (the silo client signs with it; src/client may
 * not import src/server, while the server may import src/client); this file parses and verifies.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { verify } from '../../crypto/signature.js';
import {
  CONTENT_DIGEST_HEADER,
  NONCE_HEADER,
  NONCE_PATTERN,
  type RequestToSign,
  requestSigningPayload,
  SIGNATURE_HEADER,
  SILO_HEADER,
  TIMESTAMP_HEADER,
} from '../consortium/signing.js';

export {
  bodyDigest,
  CONTENT_DIGEST_HEADER,
  NONCE_HEADER,
  type RequestToSign,
  requestSigningPayload,
  SIGNATURE_HEADER,
  SILO_HEADER,
  signRequest,
  TIMESTAMP_HEADER,
} from '../consortium/signing.js';

const NONCE = NONCE_PATTERN;
const SIGNATURE = /^[0-9a-f]{128}$/;
const DIGEST = /^[0-9a-f]{64}$/;
const INTEGER = /^(0|[1-9][0-9]{0,15})$/;

/** Parsed authentication headers, or the reason they are unusable. */
export type ParsedAuth =
  | {
      readonly ok: true;
      readonly silo: number;
      readonly timestamp: number;
      readonly nonce: string;
      readonly signature: Uint8Array;
      /** The declared body digest (`x-fedscore-content-sha256`), if sent. */
      readonly digest: string | undefined;
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
  const digest = headers[CONTENT_DIGEST_HEADER];
  if (digest !== undefined && (typeof digest !== 'string' || !DIGEST.test(digest)))
    return { ok: false, detail: `${CONTENT_DIGEST_HEADER} must be 64 lower-case hex digits` };
  return {
    ok: true,
    silo: Number(silo),
    timestamp: Number(timestamp),
    nonce,
    signature: new Uint8Array(Buffer.from(signature, 'hex')),
    digest,
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

/**
 * Whose bearer token `header` carries: 'admin', 'viewer', or undefined (no bearer header, or a
 * token that is neither). Both comparisons always run, in constant time.
 */
export function bearerRole(
  header: string | undefined,
  adminToken: string,
  viewerToken: string | undefined,
): 'admin' | 'viewer' | undefined {
  const admin = checkAdminToken(header, adminToken);
  const viewer = checkAdminToken(header, viewerToken ?? adminToken) && viewerToken !== undefined;
  return admin ? 'admin' : viewer ? 'viewer' : undefined;
}

/** Whether a request declares a body (a non-zero Content-Length, or any Transfer-Encoding). */
export function declaresBody(headers: Record<string, string | string[] | undefined>): boolean {
  const length = headers['content-length'];
  return headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}
