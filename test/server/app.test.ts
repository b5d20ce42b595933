/** buildApp: options, health and readiness, request ids, the OpenAPI document and its UI. */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { buildApp } from '../../src/server/app.js';
import { ADMIN, type Harness, harness } from './_harness.js';

describe('buildApp', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness();
  });
  afterAll(async () => h.close());

  test('refuses bad options with errors naming them', async () => {
    await expect(buildApp({ store: h.store, adminToken: 'short' })).rejects.toThrow(/^options\.adminToken: /);
    await expect(buildApp({ store: h.store, adminToken: ADMIN, freshnessMs: -1 })).rejects.toThrow(
      /^options\.freshnessMs: /,
    );
    await expect(buildApp({ store: {} as never, adminToken: ADMIN })).rejects.toThrow(/^options\.store: /);
    await expect(buildApp({ store: h.store, adminToken: ADMIN, viewerToken: 'short' })).rejects.toThrow(
      /^options\.viewerToken: /,
    );
    await expect(buildApp({ store: h.store, adminToken: ADMIN, viewerToken: ADMIN })).rejects.toThrow(
      /^options\.viewerToken: must differ/,
    );
    await expect(
      buildApp({ store: h.store, adminToken: ADMIN, timeouts: { headersMs: 5000, requestMs: 1000 } }),
    ).rejects.toThrow(/^options\.timeouts\.requestMs: /);
    await expect(buildApp({ store: h.store, adminToken: ADMIN, timeouts: { idleMs: 0 } })).rejects.toThrow(
      /^options\.timeouts\.idleMs: /,
    );
  });

  test('health, readiness, and request ids echoed (given or generated)', async () => {
    const health = await h.app.inject({ method: 'GET', url: '/health' });
    expect(health.json()).toEqual({ status: 'ok' });
    expect(health.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const ready = await h.app.inject({ method: 'GET', url: '/ready', headers: { 'x-request-id': 'req-42' } });
    expect(ready.json()).toEqual({ status: 'ok' });
    expect(ready.headers['x-request-id']).toBe('req-42');
  });

  test('readiness fails with a coded 503 when the store is closed', async () => {
    const other = await harness();
    await other.store.close();
    const res = await other.app.inject({ method: 'GET', url: '/ready' });
    expect({ status: res.statusCode, body: res.json() }).toEqual({
      status: 503,
      body: {
        code: 'FEDSCORE_ERR_NOT_READY_FOR_SERVICE',
        message: 'the service is not ready (storage unavailable)',
      },
    });
    await other.app.close();
  });

  test('the OpenAPI document lists every route with its response schemas; the UI is served', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/docs/json' })).json();
    expect(doc.openapi).toMatch(/^3\./);
    const paths = Object.keys(doc.paths);
    for (const p of [
      '/health',
      '/ready',
      '/v1/consortia',
      '/v1/consortia/{cid}',
      '/v1/consortia/{cid}/model',
      '/v1/consortia/{cid}/models/{version}',
      '/v1/consortia/{cid}/rounds',
      '/v1/consortia/{cid}/rounds/{round}',
      '/v1/consortia/{cid}/rounds/{round}/advance',
      '/v1/consortia/{cid}/rounds/{round}/utilities',
      '/v1/consortia/{cid}/rounds/{round}/aggregate',
      '/v1/consortia/{cid}/rounds/{round}/aggregate/sum',
      '/v1/consortia/{cid}/rounds/{round}/advertise',
      '/v1/consortia/{cid}/rounds/{round}/share',
      '/v1/consortia/{cid}/rounds/{round}/mask',
      '/v1/consortia/{cid}/rounds/{round}/consistency',
      '/v1/consortia/{cid}/rounds/{round}/unmask',
      '/v1/consortia/{cid}/rounds/{round}/inbox/{kind}',
      '/v1/consortia/{cid}/rounds/{round}/reports',
      '/v1/consortia/{cid}/rounds/{round}/scores',
      '/v1/consortia/{cid}/scores',
    ])
      expect(paths, p).toContain(p);
    // Every /v1 operation documents its success and error responses.
    for (const [p, ops] of Object.entries(doc.paths) as [string, Record<string, { responses: object }>][])
      if (p.startsWith('/v1'))
        for (const [m, op] of Object.entries(ops)) {
          const codes = Object.keys(op.responses);
          expect(
            codes.some((c) => c.startsWith('2')),
            `${m} ${p}`,
          ).toBe(true);
          expect(
            codes.some((c) => c.startsWith('4')),
            `${m} ${p}`,
          ).toBe(true);
        }
    const mask = doc.paths['/v1/consortia/{cid}/rounds/{round}/mask'].post;
    expect(Object.keys(mask.requestBody.content)).toEqual(['application/octet-stream']);
    const ui = await h.app.inject({ method: 'GET', url: '/docs/' });
    expect(ui.statusCode).toBe(200);
    expect(ui.headers['content-type']).toMatch(/text\/html/);
  });
});
