/**
 * src/consortium/signing.ts: what the silo signs is exactly what src/server/auth.ts verifies, and
 * any change to method, path, body, silo, timestamp or nonce breaks the signature; the declared
 * body digest lets the server verify before reading the body.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { signingKeyPairFromSeed } from '../../crypto/signature.js';
import {
  NONCE_PATTERN,
  randomNonce,
  requestSigningPayload,
  signRequest,
} from '../../src/consortium/signing.js';
import { parseAuthHeaders, verifyRequest } from '../../src/server/auth.js';

const key = signingKeyPairFromSeed(new Uint8Array(32).fill(7));
const other = signingKeyPairFromSeed(new Uint8Array(32).fill(8));
const base = {
  method: 'POST',
  path: '/v1/consortia/c1/rounds/1/mask',
  silo: 3,
  timestamp: 1_800_000_000_000,
  nonce: 'abcdefghijklmnop',
  body: Uint8Array.of(1, 2, 3),
};

describe('request signing (client) against verification (server)', () => {
  it('headers parse and verify under the registered key only', () => {
    const headers = signRequest(key.secretKey, base);
    const parsed = parseAuthHeaders(headers);
    if (!parsed.ok) throw new Error(parsed.detail);
    expect(parsed).toMatchObject({ silo: 3, timestamp: base.timestamp, nonce: base.nonce });
    expect(verifyRequest(key.publicKey, base, parsed.signature)).toBe(true);
    expect(verifyRequest(other.publicKey, base, parsed.signature)).toBe(false);
  });

  it('any changed field fails verification', () => {
    const parsed = parseAuthHeaders(signRequest(key.secretKey, base));
    if (!parsed.ok) throw new Error(parsed.detail);
    const changes = [
      { method: 'GET' },
      { path: '/v1/consortia/c2/rounds/1/mask' },
      { path: `${base.path}?x=1` },
      { silo: 2 },
      { timestamp: base.timestamp + 1 },
      { nonce: 'abcdefghijklmnoq' },
      { body: Uint8Array.of(1, 2, 4) },
      { body: undefined },
    ];
    for (const c of changes)
      expect(verifyRequest(key.publicKey, { ...base, ...c }, parsed.signature)).toBe(false);
  });

  it('a GET without a body signs the digest of zero bytes (same as an empty body)', () => {
    const get = { ...base, method: 'GET', body: undefined };
    const parsed = parseAuthHeaders(signRequest(key.secretKey, get));
    if (!parsed.ok) throw new Error(parsed.detail);
    expect(verifyRequest(key.publicKey, { ...get, body: new Uint8Array(0) }, parsed.signature)).toBe(true);
  });

  it('the declared body digest lets the server verify before the body arrives; the canonical form is unchanged', () => {
    const headers = signRequest(key.secretKey, base);
    const digest = createHash('sha256').update(base.body).digest('hex');
    expect(headers['x-fedscore-content-sha256']).toBe(digest);
    const parsed = parseAuthHeaders(headers);
    if (!parsed.ok) throw new Error(parsed.detail);
    expect(parsed.digest).toBe(digest);
    const { body: _, ...withoutBody } = base;
    expect(verifyRequest(key.publicKey, { ...withoutBody, bodyDigest: digest }, parsed.signature)).toBe(true);
    // The payload is the same text as before the digest header existed.
    expect(new TextDecoder().decode(requestSigningPayload(base))).toBe(
      ['fedscore/http-request/v1', 'POST', base.path, '3', String(base.timestamp), base.nonce, digest].join(
        '\n',
      ),
    );
    expect(parseAuthHeaders({ ...headers, 'x-fedscore-content-sha256': 'ABC' })).toEqual({
      ok: false,
      detail: 'x-fedscore-content-sha256 must be 64 lower-case hex digits',
    });
  });

  it('refuses a malformed nonce, naming it', () => {
    expect(() => signRequest(key.secretKey, { ...base, nonce: 'short' })).toThrow(/^nonce: /);
    expect(() => signRequest(key.secretKey, { ...base, nonce: `${'x'.repeat(15)}!` })).toThrow(RangeError);
  });

  it('random nonces have the accepted format and do not repeat', () => {
    const seen = new Set<string>();
    fc.assert(
      fc.property(fc.constant(null), () => {
        const n = randomNonce();
        expect(n).toMatch(NONCE_PATTERN);
        expect(seen.has(n)).toBe(false);
        seen.add(n);
      }),
      { numRuns: 200 },
    );
  });
});
