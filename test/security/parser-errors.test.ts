/**
 * Finding 10 of the trust issue — errors raised below the routes had another shape.
 *
 * The attack as found: a bad Content-Length, bad chunking, oversized headers, an invalid method
 * or a malformed URL escape were answered by Node's HTTP parser or fastify's defaults as
 * `{"error":"Bad Request","message":"Client Error","statusCode":400}` (and the like) instead of the
 * catalogue's `{code, message}`. Against f5e8247 every answer below has that shape.
 *
 * Now every such answer is `{code, message}` with a code from src/consortium/error-codes.ts (documented in
 * docs/errors.md): `FEDSCORE_ERR_MALFORMED_REQUEST` (400), `FEDSCORE_ERR_HEADERS_TOO_LARGE` (431),
 * `FEDSCORE_ERR_REQUEST_TIMEOUT` (408, tested with the stalled requests in
 * unauthenticated-memory.test.ts) and, for a bad escape in a path, `FEDSCORE_ERR_VALIDATION`.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ERRORS } from '../../src/consortium/error-codes.js';
import { ADMIN, createConsortium, type Harness, harness } from '../server/_harness.js';
import { head, raw } from './_raw.js';

describe('parser-level errors come back in the catalogue’s shape', () => {
  let h: Harness;
  let base: string;
  beforeAll(async () => {
    h = await harness();
    await createConsortium(h);
    base = await h.app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(async () => h.close());

  const admin = { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' };

  const cases: [string, (string | number)[], number, keyof typeof ERRORS][] = [
    [
      'Content-Length not a number',
      [head('POST', '/v1/consortia', { ...admin, 'content-length': 'abc' })],
      400,
      'FEDSCORE_ERR_MALFORMED_REQUEST',
    ],
    [
      'two different Content-Lengths',
      [`POST /v1/consortia HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}`],
      400,
      'FEDSCORE_ERR_MALFORMED_REQUEST',
    ],
    [
      'Content-Length and chunked together',
      [
        head('POST', '/v1/consortia', { ...admin, 'content-length': 2, 'transfer-encoding': 'chunked' }),
        '{}',
      ],
      400,
      'FEDSCORE_ERR_MALFORMED_REQUEST',
    ],
    [
      'a chunk size that is not hex',
      [head('POST', '/v1/consortia', { ...admin, 'transfer-encoding': 'chunked' }), 'zz\r\n{}\r\n0\r\n\r\n'],
      400,
      'FEDSCORE_ERR_MALFORMED_REQUEST',
    ],
    [
      'an invalid method',
      ['FOO\x01 /health HTTP/1.1\r\nHost: x\r\n\r\n'],
      400,
      'FEDSCORE_ERR_MALFORMED_REQUEST',
    ],
    [
      'a header without a colon',
      ['GET /health HTTP/1.1\r\nHost: x\r\nnot a header\r\n\r\n'],
      400,
      'FEDSCORE_ERR_MALFORMED_REQUEST',
    ],
    [
      'headers over the size limit',
      [head('GET', '/health', { 'x-padding': 'a'.repeat(20_000) })],
      431,
      'FEDSCORE_ERR_HEADERS_TOO_LARGE',
    ],
    [
      'a bad escape in the path',
      [head('GET', '/v1/consortia/%zz/rounds', admin)],
      400,
      'FEDSCORE_ERR_VALIDATION',
    ],
  ];

  for (const [what, chunks, status, code] of cases)
    test(`${what} → ${status} ${code}`, async () => {
      const a = await raw(base, chunks, 2000);
      expect(a.status, a.body).toBe(status);
      expect(a.headers['content-type']).toMatch(/^application\/json/);
      const body = JSON.parse(a.body);
      expect(Object.keys(body).sort()).toEqual(['code', 'message']);
      expect(body.code).toBe(code);
      expect(body.message.startsWith(ERRORS[code].message)).toBe(true);
    });

  test('a well-formed request on the same server still works', async () => {
    const a = await raw(base, [head('GET', '/health')], 2000);
    expect(a.status).toBe(200);
    expect(JSON.parse(a.body)).toEqual({ status: 'ok' });
  });
});
