/**
 * Finding 7 of the trust issue — everything was public.
 *
 * The attack as found: without credentials anyone read every model version, Σ w_iΔ_i, each
 * silo's v(M0+U_i) and v(M−U_i), the scores, the survivor sets and Σ w_i (whose differences
 * across rounds gave a dropped silo's relative data size: 3.00000003 against a true 3). Against
 * f5e8247 every anonymous read below answers 200 with the data.
 *
 * Now consortium data is for its members and its operator: a silo reads with a request signed by
 * its registered key (of that consortium), the operator with the admin token, and the dashboard
 * with a read-only viewer token (the consortium, its rounds without Σ w_i, and the scores — not
 * the models, the aggregate or the audit). Only health, readiness, the API docs, the dashboard's
 * HTML, its index and its scripts stay public; the dashboard page serves every well-formed id
 * alike, so it does not tell whether a consortium exists.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { simulatedIdentities } from '../../protocol/simulate.js';
import { signedReport } from '../../src/consortium/private-scoring.js';
import { signRequest } from '../../src/server/auth.js';
import { ADMIN, adminInject, Clock, type Harness, harness, nonce, siloInject } from '../server/_harness.js';
import { roundInReporting } from './_service-round.js';

const VIEWER = 'viewer-token-0123456789abcdef';
const C = '/v1/consortia/c1';

/** Every read of consortium data, and whether the viewer token may read it. */
const READS: [string, boolean][] = [
  [C, true],
  [`${C}/rounds`, true],
  [`${C}/rounds/1`, true],
  [`${C}/rounds/1/scores`, true],
  [`${C}/scores`, true],
  ['/dashboard/c1/charts', true],
  [`${C}/model`, false],
  [`${C}/models/0`, false],
  [`${C}/models/1`, false],
  [`${C}/rounds/1/aggregate`, false],
  [`${C}/rounds/1/aggregate/sum`, false],
];

describe('reads need credentials', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness({ clock: new Clock(), app: { evaluate: undefined, viewerToken: VIEWER } as never });
    await roundInReporting(h, 'c1', { utility: undefined });
    for (const i of [0, 1, 2, 3])
      await siloInject(
        h,
        i,
        'POST',
        `${C}/rounds/1/reports`,
        signedReport('c1', 1, i, 0.5 + i / 100, 0.6, h.keys[i]!),
      );
    await adminInject(h, 'PUT', `${C}/rounds/1/utilities`, { full: 0.7, empty: 0.3 });
  });
  afterAll(async () => h.close());

  const get = (url: string, headers: Record<string, string> = {}) =>
    h.app.inject({ method: 'GET', url, headers });

  test('anonymous reads of consortium data are refused with a coded 401', async () => {
    for (const [url] of READS) {
      const r = await get(url);
      expect({ url, status: r.statusCode, body: r.json() }).toEqual({
        url,
        status: 401,
        body: {
          code: 'FEDSCORE_ERR_CREDENTIALS_REQUIRED',
          message:
            'reading consortium data needs credentials: a signed silo request, the admin token or the viewer token',
        },
      });
    }
    // A wrong bearer token is no better; the audit stays the operator's.
    expect((await get(C, { authorization: 'Bearer not-the-token-0123456789' })).json().code).toBe(
      'FEDSCORE_ERR_CREDENTIALS_REQUIRED',
    );
    expect((await get(`${C}/audit`)).json().code).toBe('FEDSCORE_ERR_ADMIN_TOKEN');
  });

  test('health, readiness, the API docs and the dashboard’s page, index and scripts stay public', async () => {
    for (const url of ['/health', '/ready', '/docs/json', '/dashboard', '/dashboard/_assets/vega.min.js'])
      expect((await get(url)).statusCode, url).toBe(200);
    expect((await get('/docs/')).statusCode).toBeLessThan(400);
    const page = await get('/dashboard/c1');
    const unknown = await get('/dashboard/does-not-exist');
    expect([page.statusCode, unknown.statusCode]).toEqual([200, 200]); // existence is not revealed
    expect(page.body).not.toContain('"participants"');
  });

  test('the operator reads everything with the admin token', async () => {
    for (const [url] of READS)
      expect((await get(url, { authorization: `Bearer ${ADMIN}` })).statusCode, url).toBe(200);
    expect((await get(`${C}/audit`, { authorization: `Bearer ${ADMIN}` })).statusCode).toBe(200);
    expect(
      (await get(`${C}/rounds/1`, { authorization: `Bearer ${ADMIN}` })).json().totalWeight,
    ).toBeGreaterThan(0);
  });

  test('the viewer token reads what the dashboard shows, without Σ w_i, and nothing else', async () => {
    const auth = { authorization: `Bearer ${VIEWER}` };
    for (const [url, allowed] of READS) {
      const r = await get(url, auth);
      if (allowed) expect(r.statusCode, url).toBe(200);
      else
        expect({ url, status: r.statusCode, body: r.json() }).toEqual({
          url,
          status: 403,
          body: {
            code: 'FEDSCORE_ERR_NOT_PERMITTED',
            message: 'these credentials may not read this resource',
          },
        });
    }
    expect((await get(`${C}/rounds/1`, auth)).json().totalWeight).toBeNull();
    expect(
      (await get(`${C}/rounds`, auth)).json().rounds.map((r: { totalWeight: unknown }) => r.totalWeight),
    ).toEqual([null]);
    // …and it is no admin token.
    expect((await get(`${C}/audit`, auth)).json().code).toBe('FEDSCORE_ERR_ADMIN_TOKEN');
    expect((await h.app.inject({ method: 'POST', url: `${C}/rounds`, headers: auth })).json().code).toBe(
      'FEDSCORE_ERR_ADMIN_TOKEN',
    );
  });

  test('a member silo reads with a signed request; a key of another consortium, a replay or a forgery do not', async () => {
    for (const [url] of READS.filter(([u]) => u.startsWith('/v1')))
      expect((await siloInject(h, 2, 'GET', url)).statusCode, url).toBe(200);
    const r = await siloInject(h, 2, 'GET', `${C}/rounds/1`);
    expect(r.json().totalWeight).toBeGreaterThan(0); // members need Σ w_i for their coalition models
    const stranger = simulatedIdentities(5, 99)[4]!;
    const foreign = await h.app.inject({
      method: 'GET',
      url: `${C}/scores`,
      headers: signRequest(stranger.secretKey, {
        method: 'GET',
        path: `${C}/scores`,
        silo: 0,
        timestamp: h.clock.now(),
        nonce: nonce(),
      }),
    });
    expect(foreign.statusCode).toBe(401);
    expect(foreign.json().code).toBe('FEDSCORE_ERR_BAD_REQUEST_SIGNATURE');
    const n = nonce();
    expect((await siloInject(h, 1, 'GET', `${C}/scores`, undefined, { nonce: n })).statusCode).toBe(200);
    expect((await siloInject(h, 1, 'GET', `${C}/scores`, undefined, { nonce: n })).json().code).toBe(
      'FEDSCORE_ERR_REPLAYED_REQUEST',
    );
    // A signature for one resource does not open another.
    const headers = signRequest(h.keys[1]!.secretKey, {
      method: 'GET',
      path: `${C}/scores`,
      silo: 1,
      timestamp: h.clock.now(),
      nonce: nonce(),
    });
    const moved = await h.app.inject({ method: 'GET', url: `${C}/rounds/1/aggregate/sum`, headers });
    expect(moved.json().code).toBe('FEDSCORE_ERR_BAD_REQUEST_SIGNATURE');
  });
});
