/**
 * src/client/http.ts: every attempt is signed afresh, network failures, 5xx and 429 are retried
 * with backoff, other answers are returned (or raised as coded errors), bad options are named.
 */
import { describe, expect, it } from 'vitest';
import { signingKeyPairFromSeed } from '../../crypto/signature.js';
import { retryAfterMs, ServiceResponseError, SiloHttp, UnreachableError } from '../../src/client/http.js';
import { parseAuthHeaders, verifyRequest } from '../../src/server/auth.js';

const key = signingKeyPairFromSeed(new Uint8Array(32).fill(5));
const NOW = 1_800_000_000_000;

interface Call {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: Uint8Array;
}

function fakeFetch(answers: (() => Response)[]) {
  const calls: Call[] = [];
  const f = async (input: string | URL | Request, init?: RequestInit) => {
    calls.push({
      url: String(input),
      method: init?.method ?? 'GET',
      headers: { ...(init?.headers as Record<string, string>) },
      ...(init?.body instanceof Uint8Array ? { body: init.body } : {}),
    });
    const next = answers.shift();
    if (!next) throw new Error('no more answers');
    return next();
  };
  return { fetch: f as typeof fetch, calls };
}

const networkError = () => {
  throw new TypeError('fetch failed', {
    cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
  });
};
const json = (status: number, body: unknown) => () =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

function client(f: typeof fetch, retried: string[] = [], attempts = 4) {
  return new SiloHttp({
    server: 'http://127.0.0.1:9/',
    consortium: 'c1',
    silo: 2,
    secretKey: key.secretKey,
    fetch: f,
    now: () => NOW,
    sleep: async () => {},
    retry: { attempts },
    onRetry: (_r, attempt, reason) => retried.push(`${attempt}:${reason}`),
  });
}

describe('SiloHttp', () => {
  it('signs each request over method, path and body with the silo key', async () => {
    const { fetch, calls } = fakeFetch([json(202, { accepted: true, stage: 'share' })]);
    const body = Uint8Array.of(9, 8, 7);
    const a = await client(fetch).send('POST', '/v1/consortia/c1/rounds/1/advertise', { body });
    expect(a.status).toBe(202);
    expect(calls[0]!.url).toBe('http://127.0.0.1:9/v1/consortia/c1/rounds/1/advertise');
    expect(calls[0]!.headers['content-type']).toBe('application/octet-stream');
    const parsed = parseAuthHeaders(calls[0]!.headers);
    if (!parsed.ok) throw new Error(parsed.detail);
    expect(parsed.silo).toBe(2);
    expect(parsed.timestamp).toBe(NOW);
    const signed = {
      method: 'POST',
      path: '/v1/consortia/c1/rounds/1/advertise',
      silo: 2,
      timestamp: NOW,
      nonce: parsed.nonce,
    };
    expect(verifyRequest(key.publicKey, { ...signed, body }, parsed.signature)).toBe(true);
    expect(verifyRequest(key.publicKey, { ...signed, body: Uint8Array.of(9, 8, 6) }, parsed.signature)).toBe(
      false,
    );
  });

  it('reads are signed too (consortium data is for members); `signed: false` sends no silo headers', async () => {
    const { fetch, calls } = fakeFetch([json(200, { id: 'c1' }), json(200, { status: 'ok' })]);
    expect(await client(fetch).getJson('/v1/consortia/c1')).toEqual({ id: 'c1' });
    const parsed = parseAuthHeaders(calls[0]!.headers);
    if (!parsed.ok) throw new Error(parsed.detail);
    expect(
      verifyRequest(
        key.publicKey,
        { method: 'GET', path: '/v1/consortia/c1', silo: 2, timestamp: NOW, nonce: parsed.nonce },
        parsed.signature,
      ),
    ).toBe(true);
    await client(fetch).send('GET', '/health', { signed: false });
    expect(Object.keys(calls[1]!.headers)).toEqual([]);
  });

  it('retries network errors, 5xx and 429 with a fresh nonce, then returns the answer', async () => {
    const retried: string[] = [];
    const { fetch, calls } = fakeFetch([
      networkError,
      json(503, { code: 'FEDSCORE_ERR_NOT_READY_FOR_SERVICE', message: 'x' }),
      json(429, { code: 'FEDSCORE_ERR_RATE_LIMITED', message: 'retry in 1 s' }),
      json(202, { accepted: true, stage: 'mask' }),
    ]);
    const a = await client(fetch, retried).send('POST', '/v1/consortia/c1/rounds/1/share', {
      body: Uint8Array.of(1),
    });
    expect(a.status).toBe(202);
    expect(retried).toEqual([
      '2:ECONNREFUSED',
      '3:HTTP 503 FEDSCORE_ERR_NOT_READY_FOR_SERVICE',
      '4:HTTP 429 FEDSCORE_ERR_RATE_LIMITED',
    ]);
    const nonces = calls.map((c) => c.headers['x-fedscore-nonce']);
    expect(new Set(nonces).size).toBe(4);
    expect(calls.every((c) => c.body?.[0] === 1)).toBe(true);
  });

  it("waits out a 429's retry-after before the next attempt (capped at 120 s), not only its backoff", async () => {
    const slept: number[] = [];
    const limited = (after: string) => () =>
      new Response(JSON.stringify({ code: 'FEDSCORE_ERR_RATE_LIMITED', message: 'x' }), {
        status: 429,
        headers: { 'content-type': 'application/json', 'retry-after': after },
      });
    const { fetch } = fakeFetch([limited('7'), limited('99999'), limited('soon'), json(200, { ok: true })]);
    const http = new SiloHttp({
      server: 'http://127.0.0.1:9/',
      consortium: 'c1',
      silo: 2,
      secretKey: key.secretKey,
      fetch,
      now: () => NOW,
      sleep: async (ms) => {
        slept.push(ms);
      },
      retry: { attempts: 4, initialDelayMs: 100, maxDelayMs: 5000 },
    });
    expect((await http.send('GET', '/v1/consortia/c1/rounds/1/aggregate/sum')).status).toBe(200);
    // 7 s from the header; 99999 s capped at 120 s; an unreadable header falls back to the backoff.
    expect(slept).toEqual([7000, 120_000, 400]);
    expect(retryAfterMs(null)).toBe(0);
    expect(retryAfterMs(' 3 ')).toBe(3000);
  });

  it('gives up after the configured attempts with UnreachableError', async () => {
    const { fetch, calls } = fakeFetch([networkError, networkError, networkError]);
    const p = client(fetch, [], 3).send('GET', '/v1/consortia/c1/rounds/1/inbox/keys');
    await expect(p).rejects.toThrow(UnreachableError);
    await expect(p).rejects.toThrow(
      'GET /v1/consortia/c1/rounds/1/inbox/keys: no answer after 3 attempt(s) (ECONNREFUSED)',
    );
    expect(calls).toHaveLength(3);
  });

  it('does not retry a 4xx; expect() raises it with its code', async () => {
    const { fetch, calls } = fakeFetch([json(409, { code: 'FEDSCORE_ERR_NOT_READY', message: 'not yet' })]);
    const p = client(fetch).expect('GET', '/v1/consortia/c1/rounds/1/inbox/keys', [200]);
    await expect(p).rejects.toThrow(ServiceResponseError);
    await expect(p).rejects.toMatchObject({ status: 409, code: 'FEDSCORE_ERR_NOT_READY', detail: 'not yet' });
    expect(calls).toHaveLength(1);
  });

  it('names bad options', () => {
    const o = { server: 'http://h:1', consortium: 'c1', silo: 0, secretKey: key.secretKey };
    expect(() => new SiloHttp({ ...o, server: 'ftp://h' })).toThrow(/^server: /);
    expect(() => new SiloHttp({ ...o, server: 'not a url' })).toThrow(/^server: /);
    expect(() => new SiloHttp({ ...o, consortium: 'C 1' })).toThrow(/^consortium: /);
    expect(() => new SiloHttp({ ...o, silo: 255 })).toThrow(/^silo: /);
    expect(() => new SiloHttp({ ...o, silo: 1.5 })).toThrow(/^silo: /);
    expect(() => new SiloHttp({ ...o, secretKey: new Uint8Array(31) })).toThrow(/^secretKey: /);
    expect(() => new SiloHttp({ ...o, retry: { attempts: 0 } })).toThrow(/^retry.attempts: /);
  });
});
