/**
 * Bad input on every endpoint: a 4xx with the whole coded body, never a 5xx, and the stored state
 * (every table but the request nonces) unchanged.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { seededRandomFromInts } from '../../crypto/random-bytes.js';
import { sign } from '../../crypto/signature.js';
import { clientStart } from '../../protocol/client.js';
import { encodeClientMessage, signedPayload } from '../../protocol/codec.js';
import type { MaskedInput } from '../../protocol/messages.js';
import { PROTOCOL_VERSION } from '../../protocol/messages.js';
import { signScoreReport } from '../../protocol/score-report.js';
import { ERRORS } from '../../src/consortium/error-codes.js';
import { signedReport } from '../../src/consortium/private-scoring.js';
import { signRequest } from '../../src/server/auth.js';
import {
  ADMIN,
  adminInject,
  consortiumBody,
  createConsortium,
  D,
  f32bytes,
  type Harness,
  harness,
  nonce,
  Silo,
  STEPS,
  siloInject,
} from './_harness.js';

/** Every stored row except nonces, blobs as hex. */
async function snapshot(h: Harness): Promise<unknown> {
  const out: Record<string, unknown> = {};
  for (const t of ['consortia', 'models', 'rounds', 'messages', 'outbox', 'reports'] as const) {
    const rows = await h.store.db.selectFrom(t).selectAll().execute();
    out[t] = rows
      .map((r) =>
        JSON.stringify(r, (_k, v) =>
          v && typeof v === 'object' && v.type === 'Buffer' ? Buffer.from(v.data).toString('hex') : v,
        ),
      )
      .sort();
  }
  return out;
}

type Res = Awaited<ReturnType<Harness['app']['inject']>>;
function expectError(res: Res, status: number, code: string, message: string) {
  expect({ status: res.statusCode, body: res.json() }).toEqual({ status, body: { code, message } });
}

/** Runs `fn` and checks the stored state did not change. */
async function unchanged(h: Harness, fn: () => Promise<void>) {
  const before = await snapshot(h);
  await fn();
  expect(await snapshot(h)).toEqual(before);
}

const R1 = '/v1/consortia/c1/rounds/1';

describe('operator endpoints', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await harness({ app: { maxBodyBytes: 2048 } });
    await createConsortium(h);
  });
  afterEach(async () => h.close());

  test('POST /v1/consortia: malformed JSON, wrong types, unknown fields, invalid config, duplicates, auth, size, media type', async () => {
    const url = '/v1/consortia';
    const body = consortiumBody(h.keys, 'c2');
    await unchanged(h, async () => {
      const raw = (payload: string, headers: Record<string, string> = {}) =>
        h.app.inject({
          method: 'POST',
          url,
          payload,
          headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json', ...headers },
        });
      expectError(
        await raw('{"id": "c2",'),
        400,
        'FEDSCORE_ERR_MALFORMED_JSON',
        'the request body is not valid JSON',
      );
      expectError(await raw(''), 400, 'FEDSCORE_ERR_MALFORMED_JSON', 'the request body is not valid JSON');
      const typed = await adminInject(h, 'POST', url, { ...body, threshold: '3' });
      expect(typed.statusCode).toBe(400);
      expect(typed.json().code).toBe('FEDSCORE_ERR_VALIDATION');
      expect(typed.json().message).toMatch(/^the request does not match the schema: body\/threshold /);
      const extra = await adminInject(h, 'POST', url, { ...body, admin: true });
      expect(extra.json().code).toBe('FEDSCORE_ERR_VALIDATION');
      const badKey = await adminInject(h, 'POST', url, {
        ...body,
        participants: [{ publicKey: 'zz' }, ...body.participants],
      });
      expect(badKey.json().code).toBe('FEDSCORE_ERR_VALIDATION');
      expectError(
        await adminInject(h, 'POST', url, { ...body, threshold: 2 }),
        400,
        'FEDSCORE_ERR_INVALID_CONSORTIUM',
        'the consortium configuration is invalid: config.threshold: 2 must exceed n/2 = 2 (active security)',
      );
      expectError(
        await adminInject(h, 'POST', url, {
          ...body,
          participants: [body.participants[0], ...body.participants.slice(0, 3)],
        }),
        400,
        'FEDSCORE_ERR_INVALID_CONSORTIUM',
        'the consortium configuration is invalid: participants[1]: repeated public key',
      );
      expectError(
        await adminInject(h, 'POST', url, { ...body, id: 'c1' }),
        409,
        'FEDSCORE_ERR_CONSORTIUM_EXISTS',
        'a consortium with this id already exists: c1',
      );
      const noToken = await h.app.inject({ method: 'POST', url, payload: body });
      expectError(noToken, 401, 'FEDSCORE_ERR_ADMIN_TOKEN', 'operator endpoints need a valid admin token');
      const wrongToken = await raw(JSON.stringify(body), { authorization: `Bearer ${ADMIN}x` });
      expectError(wrongToken, 401, 'FEDSCORE_ERR_ADMIN_TOKEN', 'operator endpoints need a valid admin token');
      const big = await adminInject(h, 'POST', url, {
        ...body,
        model: { name: 'x'.repeat(4000), parameters: D },
      });
      expectError(big, 413, 'FEDSCORE_ERR_BODY_TOO_LARGE', 'the request body exceeds the size limit');
      const text = await raw('hello', { 'content-type': 'text/plain' });
      expect(text.statusCode).toBe(415);
      expect(text.json().code).toBe('FEDSCORE_ERR_UNSUPPORTED_MEDIA_TYPE');
    });
  });

  test('model upload: wrong length, wrong media type, too large, unknown consortium, locked after a round opened', async () => {
    await unchanged(h, async () => {
      expectError(
        await adminInject(h, 'PUT', '/v1/consortia/c1/model', new Uint8Array(4 * D - 4)),
        400,
        'FEDSCORE_ERR_WRONG_MODEL_LENGTH',
        `the model does not have the configured number of parameters: ${4 * D - 4} bytes, expected ${4 * D}`,
      );
      expectError(
        await adminInject(h, 'PUT', '/v1/consortia/c1/model', { params: [1, 2] }),
        415,
        'FEDSCORE_ERR_UNSUPPORTED_MEDIA_TYPE',
        'the request body has a content type this endpoint does not accept: expected application/octet-stream',
      );
      expectError(
        await adminInject(h, 'PUT', '/v1/consortia/c1/model', new Uint8Array(4 * D + 64)),
        413,
        'FEDSCORE_ERR_BODY_TOO_LARGE',
        'the request body exceeds the size limit',
      );
      expectError(
        await adminInject(h, 'PUT', '/v1/consortia/zz/model', f32bytes(new Float32Array(D))),
        404,
        'FEDSCORE_ERR_CONSORTIUM_NOT_FOUND',
        'no such consortium: zz',
      );
      const anonymous = await h.app.inject({
        method: 'PUT',
        url: '/v1/consortia/c1/model',
        payload: Buffer.alloc(4 * D),
        headers: { 'content-type': 'application/octet-stream' },
      });
      expectError(anonymous, 401, 'FEDSCORE_ERR_ADMIN_TOKEN', 'operator endpoints need a valid admin token');
    });
    expect((await adminInject(h, 'POST', '/v1/consortia/c1/rounds')).statusCode).toBe(201);
    await unchanged(h, async () => {
      expectError(
        await adminInject(h, 'PUT', '/v1/consortia/c1/model', f32bytes(new Float32Array(D))),
        409,
        'FEDSCORE_ERR_MODEL_LOCKED',
        'the initial model cannot change once a round has opened',
      );
    });
  });

  test('rounds: no model yet, round still open, unknown ids, bad path parameters, wrong stage for utilities', async () => {
    await adminInject(h, 'POST', '/v1/consortia', consortiumBody(h.keys, 'nomodel'));
    await unchanged(h, async () => {
      expectError(
        await adminInject(h, 'POST', '/v1/consortia/nomodel/rounds'),
        409,
        'FEDSCORE_ERR_MODEL_MISSING',
        'the consortium has no initial model',
      );
    });
    await adminInject(h, 'POST', '/v1/consortia/c1/rounds');
    await unchanged(h, async () => {
      expectError(
        await adminInject(h, 'POST', '/v1/consortia/c1/rounds'),
        409,
        'FEDSCORE_ERR_ROUND_OPEN',
        'the previous round has not finished: round 1 is advertise',
      );
      expectError(
        await adminInject(h, 'GET', '/v1/consortia/c1/rounds/7'),
        404,
        'FEDSCORE_ERR_ROUND_NOT_FOUND',
        'no such round: round 7 of c1',
      );
      expectError(
        await adminInject(h, 'GET', '/v1/consortia/c9/rounds/1'),
        404,
        'FEDSCORE_ERR_CONSORTIUM_NOT_FOUND',
        'no such consortium: c9',
      );
      for (const url of [
        '/v1/consortia/c1/rounds/abc',
        '/v1/consortia/c1/rounds/0',
        '/v1/consortia/C_1/rounds/1',
      ]) {
        const res = await adminInject(h, 'GET', url);
        expect(res.statusCode, url).toBe(400);
        expect(res.json().code, url).toBe('FEDSCORE_ERR_VALIDATION');
      }
      expectError(
        await adminInject(h, 'PUT', `${R1}/utilities`, { full: -0.5, empty: -0.1 }),
        409,
        'FEDSCORE_ERR_NOT_REPORTING',
        'the round does not take score reports now: round 1 is advertise',
      );
      const typed = await adminInject(h, 'PUT', `${R1}/utilities`, { full: '0.5', empty: 0.1 });
      expect(typed.json().code).toBe('FEDSCORE_ERR_VALIDATION');
      expectError(
        await h.app.inject({ method: 'POST', url: `${R1}/advance` }),
        401,
        'FEDSCORE_ERR_ADMIN_TOKEN',
        'operator endpoints need a valid admin token',
      );
      for (const path of ['scores', 'aggregate', 'aggregate/sum']) {
        const res = await adminInject(h, 'GET', `${R1}/${path}`);
        expectError(
          res,
          409,
          'FEDSCORE_ERR_NOT_READY',
          'not available yet at this stage of the round: round 1 is advertise',
        );
      }
      expectError(
        await adminInject(h, 'GET', '/v1/consortia/c1/models/5'),
        404,
        'FEDSCORE_ERR_MODEL_NOT_FOUND',
        'no such model version: version 5',
      );
      expectError(
        await h.app.inject({ method: 'DELETE', url: '/v1/consortia/c1' }),
        404,
        'FEDSCORE_ERR_ROUTE_NOT_FOUND',
        'no such route: DELETE /v1/consortia/c1',
      );
    });
  });
});

describe('secure-aggregation endpoints', () => {
  let h: Harness;
  let silos: Silo[];
  beforeEach(async () => {
    h = await harness({ app: { maxVectorBytes: 4096, rateLimit: { max: 40, windowMs: 60_000 } } });
    await createConsortium(h);
    await adminInject(h, 'POST', '/v1/consortia/c1/rounds');
    silos = [0, 1, 2, 3].map((i) => new Silo(h, 'c1', 1, i, 3));
    for (const s of silos.slice(0, 3)) await s.start();
  });
  afterEach(async () => h.close());

  /** Silo 3's advertisement, signed and encoded but not yet posted. */
  const advert = async () => {
    const step = clientStart(silos[3]!.state, silos[3]!.deps);
    if (step.reply.type !== 'send') throw new Error('no advert');
    return encodeClientMessage(step.reply.message);
  };

  test('authentication: unsigned, forged, tampered, stale, replayed, unregistered silo', async () => {
    const body = await advert();
    const url = `${R1}/advertise`;
    await unchanged(h, async () => {
      const unsigned = await h.app.inject({
        method: 'POST',
        url,
        payload: Buffer.from(body),
        headers: { 'content-type': 'application/octet-stream' },
      });
      expectError(
        unsigned,
        401,
        'FEDSCORE_ERR_UNAUTHENTICATED',
        'the request is not signed: missing x-fedscore-silo, x-fedscore-timestamp, x-fedscore-nonce, x-fedscore-signature',
      );
      const forged = await siloInject(h, 3, 'POST', url, body, { as: 2 });
      expectError(
        forged,
        401,
        'FEDSCORE_ERR_BAD_REQUEST_SIGNATURE',
        "the request signature does not verify under the silo's registered key",
      );
      const headers = signRequest(h.keys[3]!.secretKey, {
        method: 'POST',
        path: url,
        silo: 3,
        timestamp: h.clock.now(),
        nonce: nonce(),
        body,
      });
      const tampered = Buffer.from(body);
      tampered[tampered.length - 70]! ^= 1;
      const res = await h.app.inject({
        method: 'POST',
        url,
        payload: tampered,
        headers: { ...headers, 'content-type': 'application/octet-stream' },
      });
      expect(res.json().code).toBe('FEDSCORE_ERR_BAD_REQUEST_SIGNATURE');
      const otherPath = await h.app.inject({
        method: 'POST',
        url: `${R1}/share`,
        payload: Buffer.from(body),
        headers: { ...headers, 'content-type': 'application/octet-stream' },
      });
      expect(otherPath.json().code).toBe('FEDSCORE_ERR_BAD_REQUEST_SIGNATURE');
      const stale = await siloInject(h, 3, 'POST', url, body, { timestamp: h.clock.now() - 301_000 });
      expectError(
        stale,
        401,
        'FEDSCORE_ERR_STALE_REQUEST',
        'the request timestamp is outside the accepted window',
      );
      const future = await siloInject(h, 3, 'POST', url, body, { timestamp: h.clock.now() + 301_000 });
      expect(future.json().code).toBe('FEDSCORE_ERR_STALE_REQUEST');
      const stranger = await siloInject(h, 9, 'POST', url, body, { as: 3 });
      expectError(
        stranger,
        401,
        'FEDSCORE_ERR_BAD_REQUEST_SIGNATURE',
        "the request signature does not verify under the silo's registered key: silo 9 is not registered in c1",
      );
      const badHeader = await siloInject(h, 3, 'POST', url, body, {
        headers: { 'x-fedscore-nonce': 'short' },
      });
      expectError(
        badHeader,
        401,
        'FEDSCORE_ERR_UNAUTHENTICATED',
        'the request is not signed: x-fedscore-nonce must be 16–64 characters of [A-Za-z0-9_-]',
      );
    });
    // A replay of an accepted request is refused and changes nothing.
    const n = nonce();
    const first = await siloInject(h, 3, 'POST', url, body, { nonce: n });
    expect(first.statusCode).toBe(202);
    await unchanged(h, async () => {
      const replay = await siloInject(h, 3, 'POST', url, body, { nonce: n });
      expectError(replay, 401, 'FEDSCORE_ERR_REPLAYED_REQUEST', 'the request nonce was already used');
    });
  });

  test('messages: garbage, wrong endpoint, another silo’s message, wrong stage, duplicate, JSON body, unknown round', async () => {
    const body = await advert();
    await unchanged(h, async () => {
      expectError(
        await siloInject(h, 3, 'POST', `${R1}/advertise`, new Uint8Array([1, 2, 3])),
        400,
        'FEDSCORE_ERR_SECAGG_MALFORMED',
        'secure aggregation: the message could not be decoded or has an invalid field: MALFORMED: bad magic',
      );
      expectError(
        await siloInject(h, 3, 'POST', `${R1}/share`, body),
        400,
        'FEDSCORE_ERR_WRONG_MESSAGE_TYPE',
        'the message type does not match the stage endpoint it was posted to: advertise message posted to share',
      );
      expectError(
        await siloInject(h, 2, 'POST', `${R1}/advertise`, body),
        403,
        'FEDSCORE_ERR_FORBIDDEN',
        'a silo may act only as itself: silo 2 sent a message as silo 3',
      );
      const json = await h.app.inject({
        method: 'POST',
        url: `${R1}/advertise`,
        payload: { hello: 1 },
        headers: signRequest(h.keys[3]!.secretKey, {
          method: 'POST',
          path: `${R1}/advertise`,
          silo: 3,
          timestamp: h.clock.now(),
          nonce: nonce(),
        }),
      });
      expectError(
        json,
        415,
        'FEDSCORE_ERR_UNSUPPORTED_MEDIA_TYPE',
        'the request body has a content type this endpoint does not accept: silo endpoints take application/octet-stream',
      );
      expectError(
        await siloInject(h, 3, 'POST', '/v1/consortia/c1/rounds/2/advertise', body),
        404,
        'FEDSCORE_ERR_ROUND_NOT_FOUND',
        'no such round: round 2 of c1',
      );
      expectError(
        await siloInject(h, 3, 'POST', '/v1/consortia/c7/rounds/1/advertise', body),
        404,
        'FEDSCORE_ERR_CONSORTIUM_NOT_FOUND',
        'no such consortium: c7',
      );
    });
    // Silo 0 already advertised: a second, different advertisement (other keys) is a duplicate.
    // (Re-posting the identical advertisement is an idempotent retry: test/client/retry.test.ts.)
    const fresh = new Silo(h, 'c1', 1, 0, 3);
    const again = clientStart(fresh.state, { random: seededRandomFromInts(0xbad, 1, 0) });
    if (again.reply.type !== 'send') throw new Error('no advert');
    const againBytes = encodeClientMessage(again.reply.message);
    await unchanged(h, async () => {
      expectError(
        await siloInject(h, 0, 'POST', `${R1}/advertise`, againBytes),
        409,
        'FEDSCORE_ERR_SECAGG_DUPLICATE',
        'secure aggregation: the sender already sent this stage (replay within the round): second advertise from 0',
      );
    });
    // The last advertisement closes the stage; a late advertisement is then out of order.
    expect((await siloInject(h, 3, 'POST', `${R1}/advertise`, body)).json()).toEqual({
      accepted: true,
      stage: 'share',
    });
    await unchanged(h, async () => {
      expectError(
        await siloInject(h, 0, 'POST', `${R1}/advertise`, againBytes),
        409,
        'FEDSCORE_ERR_SECAGG_OUT_OF_ORDER',
        'secure aggregation: the message does not belong to the current stage: advertise while collecting share',
      );
      expectError(
        await siloInject(h, 0, 'GET', `${R1}/inbox/shares`),
        409,
        'FEDSCORE_ERR_NOT_READY',
        'not available yet at this stage of the round: no shares message for silo 0 in round 1 (share)',
      );
      const kind = await siloInject(h, 0, 'GET', `${R1}/inbox/everything`);
      expect(kind.statusCode).toBe(400);
      expect(kind.json().code).toBe('FEDSCORE_ERR_VALIDATION');
    });
  });

  test('masked inputs: wrong vector length, forged message signature, another round, oversize body', async () => {
    // A round where silo 3 has not sent its masked input yet.
    const h2 = await harness({ app: { maxVectorBytes: 4096 } });
    try {
      await createConsortium(h2);
      await adminInject(h2, 'POST', '/v1/consortia/c1/rounds');
      const s2 = [0, 1, 2, 3].map((i) => new Silo(h2, 'c1', 1, i, 3));
      for (const s of s2) await s.start();
      for (const s of s2) await s.step('keys');
      for (const s of s2.slice(0, 3)) await s.step('shares');
      const masked = (words: number, round = 1, key = h2.keys[3]!.secretKey): Uint8Array => {
        const m: Omit<MaskedInput, 'signature'> = {
          version: PROTOCOL_VERSION,
          session: 'c1',
          round,
          sender: 3,
          type: 'mask',
          masked: new Uint32Array(words).fill(7),
        };
        return encodeClientMessage({ ...m, signature: sign(key, signedPayload(m)) });
      };
      const url = `${R1}/mask`;
      await unchanged(h2, async () => {
        expectError(
          await siloInject(h2, 3, 'POST', url, masked(D)),
          400,
          'FEDSCORE_ERR_SECAGG_WRONG_LENGTH',
          `secure aggregation: the masked vector does not have the configured length: masked vector has ${D} words, expected ${D + 1}`,
        );
        expectError(
          await siloInject(h2, 3, 'POST', url, masked(D + 1, 1, h2.keys[0]!.secretKey)),
          400,
          'FEDSCORE_ERR_SECAGG_BAD_SIGNATURE',
          "secure aggregation: the signature does not verify under the sender's registered key: message of 3 is not signed by its registered key",
        );
        expectError(
          await siloInject(h2, 3, 'POST', url, masked(D + 1, 2)),
          400,
          'FEDSCORE_ERR_SECAGG_WRONG_ROUND',
          'secure aggregation: the message belongs to another round (replay across rounds): round 2',
        );
        expectError(
          await siloInject(h2, 3, 'POST', url, masked(2000)),
          413,
          'FEDSCORE_ERR_BODY_TOO_LARGE',
          'the request body exceeds the size limit',
        );
      });
    } finally {
      await h2.close();
    }
  });

  test('per-silo rate limit: the 41st request in the window is refused, other silos are not affected', async () => {
    for (let i = 0; i < 40; i++)
      expect((await siloInject(h, 0, 'GET', `${R1}/inbox/keys`)).statusCode).toBe(409);
    const limited = await siloInject(h, 0, 'GET', `${R1}/inbox/keys`);
    expect(limited.statusCode).toBe(429);
    expect(limited.json().code).toBe('FEDSCORE_ERR_RATE_LIMITED');
    expect(limited.json().message).toMatch(/^too many requests from this silo: retry in /);
    expect((await siloInject(h, 1, 'GET', `${R1}/inbox/keys`)).statusCode).toBe(409);
  });
});

describe('reports and scores', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ app: { evaluate: undefined } as never });
    await createConsortium(h);
    await adminInject(h, 'POST', '/v1/consortia/c1/rounds');
    const silos = [0, 1, 2, 3].map((i) => new Silo(h, 'c1', 1, i, 3));
    for (const s of silos) await s.start();
    for (const k of STEPS) for (const s of silos) await s.step(k);
  });
  afterAll(async () => h.close());
  const url = `${R1}/reports`;

  test('malformed, mismatched, forged and foreign reports', async () => {
    await unchanged(h, async () => {
      expectError(
        await siloInject(h, 0, 'POST', url, new Uint8Array(10)),
        400,
        'FEDSCORE_ERR_REPORT_INVALID',
        'the score report is malformed: MALFORMED: truncated report',
      );
      expectError(
        await siloInject(h, 0, 'POST', url, signedReport('c1', 2, 0, -0.5, -0.4, h.keys[0]!)),
        400,
        'FEDSCORE_ERR_REPORT_MISMATCH',
        'the score report belongs to another consortium, round or silo: WRONG_ROUND: round 2',
      );
      expectError(
        await siloInject(h, 0, 'POST', url, signedReport('c2', 1, 0, -0.5, -0.4, h.keys[0]!)),
        400,
        'FEDSCORE_ERR_REPORT_MISMATCH',
        'the score report belongs to another consortium, round or silo: WRONG_SESSION: session c2',
      );
      expectError(
        await siloInject(
          h,
          0,
          'POST',
          url,
          signScoreReport(
            { session: 'c1', round: 1, silo: 0, singleton: 1, complement: 0 },
            h.keys[1]!.secretKey,
          ),
        ),
        400,
        'FEDSCORE_ERR_REPORT_BAD_SIGNATURE',
        "the score report is not signed by the silo's registered key: BAD_SIGNATURE: report is not signed by silo 0",
      );
      expectError(
        await siloInject(h, 0, 'POST', url, signedReport('c1', 1, 1, -0.5, -0.4, h.keys[1]!)),
        403,
        'FEDSCORE_ERR_FORBIDDEN',
        'a silo may act only as itself: silo 0 submitted the report of silo 1',
      );
      expectError(
        await adminInject(h, 'GET', `${R1}/scores`),
        409,
        'FEDSCORE_ERR_NOT_READY',
        'not available yet at this stage of the round: round 1 is reporting',
      );
      // A new advertisement (other keys; re-posting the accepted one would be an idempotent retry).
      const late = clientStart(new Silo(h, 'c1', 1, 0, 3).state, {
        random: seededRandomFromInts(0xbad, 1, 0),
      });
      if (late.reply.type !== 'send') throw new Error('no advert');
      expectError(
        await siloInject(h, 0, 'POST', `${R1}/advertise`, encodeClientMessage(late.reply.message)),
        409,
        'FEDSCORE_ERR_ROUND_CLOSED',
        'the round no longer takes secure-aggregation messages: round 1 is reporting',
      );
    });
  });

  test('idempotent retry, conflicting second report, utilities set twice (no evaluator)', async () => {
    const report = signedReport('c1', 1, 0, -0.5, -0.4, h.keys[0]!);
    expect((await siloInject(h, 0, 'POST', url, report)).statusCode).toBe(201);
    await unchanged(h, async () => {
      const retry = await siloInject(h, 0, 'POST', url, report);
      expect({ status: retry.statusCode, body: retry.json() }).toEqual({
        status: 200,
        body: { silo: 0, duplicate: true, stage: 'reporting' },
      });
      expectError(
        await siloInject(h, 0, 'POST', url, signedReport('c1', 1, 0, -0.9, -0.4, h.keys[0]!)),
        409,
        'FEDSCORE_ERR_REPORT_CONFLICT',
        'the silo already submitted a different report for this round: silo 0',
      );
    });
    // This app has no evaluator: the operator posts v(M) and v(M0), once.
    const set = await adminInject(h, 'PUT', `${R1}/utilities`, { full: -0.5, empty: -0.1 });
    expect(set.json()).toMatchObject({ stage: 'reporting', utilities: { full: -0.5, empty: -0.1 } });
    await unchanged(h, async () => {
      expectError(
        await adminInject(h, 'PUT', `${R1}/utilities`, { full: -0.5, empty: -0.1 }),
        409,
        'FEDSCORE_ERR_UTILITIES_SET',
        'the round utilities are already set: round 1',
      );
    });
  });
});

describe('no endpoint answers 5xx to junk', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness();
    await createConsortium(h);
    await adminInject(h, 'POST', '/v1/consortia/c1/rounds');
  });
  afterAll(async () => h.close());

  const routes: [string, string][] = [
    ['POST', '/v1/consortia'],
    ['GET', '/v1/consortia/c1'],
    ['PUT', '/v1/consortia/c1/model'],
    ['GET', '/v1/consortia/c1/model'],
    ['GET', '/v1/consortia/c1/models/0'],
    ['POST', '/v1/consortia/c1/rounds'],
    ['GET', '/v1/consortia/c1/rounds'],
    ['GET', R1],
    ['POST', `${R1}/advance`],
    ['PUT', `${R1}/utilities`],
    ['POST', `${R1}/utilities`],
    ['GET', `${R1}/aggregate`],
    ['GET', `${R1}/aggregate/sum`],
    ...['advertise', 'share', 'mask', 'consistency', 'unmask', 'reports'].map(
      (s) => ['POST', `${R1}/${s}`] as [string, string],
    ),
    ['GET', `${R1}/inbox/keys`],
    ['GET', `${R1}/scores`],
    ['GET', '/v1/consortia/c1/scores'],
  ];
  const payloads: { type: string; body: string | Buffer }[] = [
    { type: 'application/json', body: '{"x":' },
    { type: 'application/json', body: 'null' },
    { type: 'application/json', body: '[1,2,3]' },
    { type: 'application/octet-stream', body: Buffer.from([0x46, 0x53, 0x41, 1, 3, 0xff]) },
    { type: 'text/plain', body: 'hi' },
  ];

  test('every route × junk bodies (with and without the admin token) → a catalogued 4xx', async () => {
    await unchanged(h, async () => {
      for (const [method, url] of routes)
        for (const p of payloads)
          for (const auth of [{}, { authorization: `Bearer ${ADMIN}` }]) {
            const res = await h.app.inject({
              method: method as 'GET',
              url,
              headers: { 'content-type': p.type, ...auth },
              ...(method === 'GET' ? {} : { payload: p.body }),
            });
            if (res.statusCode < 400) continue; // e.g. GETs ignore bodies
            expect(res.statusCode, `${method} ${url} ${p.type}`).toBeLessThan(500);
            expect(Object.keys(ERRORS)).toContain(res.json().code);
          }
    });
  });
});
