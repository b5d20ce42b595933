/**
 * Reports-only consortia (`secureAggregation: "external"`, src/server/service/external.ts) over
 * HTTP, on SQLite and — with DATABASE_URL — PostgreSQL: the operator's utilities open a round, the
 * silos' signed reports score it, and the published scores equal scoring/private.ts on the same
 * utilities; every trust check of the report route applies and bad inputs get their codes.
 */
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import { signingKeyPairFromSeed } from '../../crypto/signature.js';
import { keptUtilities, quarantineReports } from '../../scoring/manipulation/quarantine.js';
import { SCHEMES, scoreScheme } from '../../scoring/private.js';
import { signedReport } from '../../src/consortium/private-scoring.js';
import { signRequest } from '../../src/server/auth.js';
import type { StoreLocation } from '../../src/server/store/database.js';
import {
  adminInject,
  consortiumBody,
  createConsortium,
  type Harness,
  harness,
  nonce,
  siloInject,
} from './_harness.js';

const VIEWER = 'viewer-token-0123456789abcdef';
const C = '/v1/consortia/ext';
/** A reports-only consortium of the harness's four keys, reporting accuracy. */
const externalBody = (h: Harness) => ({
  ...consortiumBody(h.keys, 'ext'),
  utility: { name: 'accuracy' as const },
  secureAggregation: 'external' as const,
});

/** A deterministic pseudo-random accuracy in [0.05, 0.95] (xorshift, no Math.random). */
function accuracies(seed: number) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return 0.05 + 0.9 * ((x >>> 0) / 2 ** 32);
  };
}

function expectError(r: { statusCode: number; json(): unknown }, status: number, code: string) {
  expect({ status: r.statusCode, code: (r.json() as { code: string }).code }).toEqual({ status, code });
}

const stores: { name: string; location?: () => Promise<StoreLocation> }[] = [{ name: 'SQLite' }];
const url = process.env.DATABASE_URL;
let pgAdmin: pg.Client | undefined;
const created: string[] = [];
if (url)
  stores.push({
    name: 'PostgreSQL',
    location: async () => {
      const name = `fedscore_ext_${process.pid}_${created.length}_${Math.random().toString(36).slice(2, 8)}`;
      await pgAdmin!.query(`CREATE DATABASE ${name}`);
      created.push(name);
      const u = new URL(url);
      u.pathname = `/${name}`;
      return { postgres: u.toString() };
    },
  });
else console.warn('external.test.ts: PostgreSQL part skipped — no DATABASE_URL');

beforeAll(async () => {
  if (!url) return;
  pgAdmin = new pg.Client({ connectionString: url });
  await pgAdmin.connect();
});
afterAll(async () => {
  for (const db of created) await pgAdmin?.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
  await pgAdmin?.end();
});

describe.each(stores)('reports-only consortia on $name', ({ location }) => {
  let h: Harness;
  beforeEach(async () => {
    h = await harness({
      ...(location ? { location: await location() } : {}),
      app: { viewerToken: VIEWER },
    });
    const r = await adminInject(h, 'POST', '/v1/consortia', externalBody(h));
    expect(r.statusCode, r.body).toBe(201);
    expect(r.json().secureAggregation).toBe('external');
  });
  afterEach(async () => h.close());

  const report = (round: number, silo: number, singleton: number, complement: number, as = silo) =>
    siloInject(
      h,
      silo,
      'POST',
      `${C}/rounds/${round}/reports`,
      signedReport('ext', round, silo, singleton, complement, h.keys[as]!),
    );

  test('three rounds — all report, the deadline, the operator closes — score as scoring/private.ts', async () => {
    const next = accuracies(20261124);
    const expected: Record<string, (number | null)[]>[] = [];
    // Round 1: every member reports (scored by the last report); round 2: three report and the
    // reporting deadline passes; round 3: two report and the operator closes the round.
    const plans = [
      { reporters: [0, 1, 2, 3], close: 'none' },
      { reporters: [2, 0, 3], close: 'deadline' },
      { reporters: [1, 3], close: 'operator' },
    ] as const;
    for (const [k, plan] of plans.entries()) {
      const round = k + 1;
      const full = next();
      const empty = next();
      const opened = await adminInject(h, 'POST', `${C}/rounds/${round}/utilities`, { full, empty });
      expect(opened.statusCode, opened.body).toBe(201);
      expect(opened.json()).toMatchObject({
        round,
        stage: 'reporting',
        survivors: [0, 1, 2, 3],
        utilities: { full, empty },
      });
      const withOnly: number[] = [];
      const without: number[] = [];
      for (const [j, silo] of plan.reporters.entries()) {
        withOnly.push(next());
        without.push(next());
        const r = await report(round, silo, withOnly[j]!, without[j]!);
        expect(r.statusCode, r.body).toBe(201);
        const last = j === plan.reporters.length - 1 && plan.close === 'none';
        expect(r.json().stage).toBe(last ? 'scored' : 'reporting');
      }
      if (plan.close === 'deadline') {
        h.clock.advance(600_001); // the default reporting deadline
      } else if (plan.close === 'operator') {
        const closed = await adminInject(h, 'POST', `${C}/rounds/${round}/advance`, { stage: 'reporting' });
        expect(closed.statusCode, closed.body).toBe(200);
        expect(closed.json().stage).toBe('scored');
      }
      // scoring/private.ts on the same utilities, reports in silo order as the service orders them,
      // less the reports the detector quarantines (random utilities are not honest reports).
      const reported = [...plan.reporters].map((s, j) => ({ s, j })).sort((a, b) => a.s - b.s);
      const all = {
        full,
        empty,
        withOnly: reported.map((o) => withOnly[o.j]!),
        without: reported.map((o) => without[o.j]!),
      };
      const { kept } = quarantineReports(all);
      const order = kept.map((k) => reported[k]!);
      const u = keptUtilities(all, kept);
      const spread = (values: ArrayLike<number>) => {
        const out: (number | null)[] = [null, null, null, null];
        order.forEach((o, k) => {
          out[o.s] = values[k]!;
        });
        return out;
      };
      expected.push(Object.fromEntries(SCHEMES.map((m) => [m, spread(scoreScheme(m, u).scores)])));
      const scores = await adminInject(h, 'GET', `${C}/rounds/${round}/scores`);
      expect(scores.statusCode, scores.body).toBe(200);
      expect(scores.json().silos).toEqual(order.map((o) => o.s));
      expect(scores.json().quarantined.map((q: { silo: number }) => q.silo)).toEqual(
        reported.filter((_, k) => !kept.includes(k)).map((o) => o.s),
      );
      expect(scores.json().utilities).toEqual({ full, empty });
      expect(scores.json().schemes).toEqual(expected[k]);
    }
    // Cumulative scores, the viewer token's read, the dashboard and the audit see the three rounds.
    const cumulative = await h.app.inject({
      method: 'GET',
      url: `${C}/scores`,
      headers: { authorization: `Bearer ${VIEWER}` },
    });
    expect(cumulative.statusCode).toBe(200);
    expect(cumulative.json().rounds.map((r: { round: number }) => r.round)).toEqual([1, 2, 3]);
    for (const m of SCHEMES)
      cumulative.json().cumulative[m].forEach((v: number, i: number) => {
        expect(v).toBeCloseTo(
          expected.reduce((acc, r) => acc + (r[m]![i] ?? 0), 0),
          12,
        );
      });
    const charts = await h.app.inject({
      method: 'GET',
      url: '/dashboard/ext/charts',
      headers: { authorization: `Bearer ${VIEWER}` },
    });
    expect(charts.statusCode).toBe(200);
    expect(charts.json().rounds).toEqual([1, 2, 3]);
    const audit = await adminInject(h, 'GET', `${C}/audit`);
    expect(audit.statusCode, audit.body).toBe(200);
    expect(audit.json().runs.length).toBeGreaterThan(0);
    // A member reads the scores with a signed request; nobody reads them without credentials.
    expect((await siloInject(h, 2, 'GET', `${C}/scores`)).statusCode).toBe(200);
    expectError(
      await h.app.inject({ method: 'GET', url: `${C}/scores` }),
      401,
      'FEDSCORE_ERR_CREDENTIALS_REQUIRED',
    );
  });

  test('a round with fewer than two reports at its deadline is closed without scores', async () => {
    await adminInject(h, 'POST', `${C}/rounds/1/utilities`, { full: 0.8, empty: 0.1 });
    expect((await report(1, 0, 0.5, 0.7)).statusCode).toBe(201);
    h.clock.advance(600_001);
    const r = await adminInject(h, 'GET', `${C}/rounds/1`);
    expect(r.json()).toMatchObject({ stage: 'closed', error: { code: 'TOO_FEW_REPORTS' } });
    // The next round opens now that round 1 is over.
    expect(
      (await adminInject(h, 'POST', `${C}/rounds/2/utilities`, { full: 0.8, empty: 0.1 })).statusCode,
    ).toBe(201);
  });

  test('bad inputs are refused with their codes and change nothing', async () => {
    // Utilities: the admin token only, the consortium's range, the next round only, once.
    const body = { full: 0.8, empty: 0.1 };
    expectError(
      await h.app.inject({ method: 'POST', url: `${C}/rounds/1/utilities`, payload: body }),
      401,
      'FEDSCORE_ERR_ADMIN_TOKEN',
    );
    expectError(
      await h.app.inject({
        method: 'POST',
        url: `${C}/rounds/1/utilities`,
        payload: body,
        headers: { authorization: `Bearer ${VIEWER}` },
      }),
      401,
      'FEDSCORE_ERR_ADMIN_TOKEN',
    );
    // A member's signed request is no operator's.
    expectError(await siloInject(h, 0, 'POST', `${C}/rounds/1/utilities`), 401, 'FEDSCORE_ERR_ADMIN_TOKEN');
    expectError(
      await adminInject(h, 'POST', `${C}/rounds/1/utilities`, { full: 1.5, empty: 0.1 }),
      400,
      'FEDSCORE_ERR_UTILITY_OUT_OF_RANGE',
    );
    expectError(
      await adminInject(h, 'POST', `${C}/rounds/1/utilities`, { full: '0.8', empty: 0.1 }),
      400,
      'FEDSCORE_ERR_VALIDATION',
    );
    expectError(
      await adminInject(h, 'POST', `${C}/rounds/2/utilities`, body),
      409,
      'FEDSCORE_ERR_ROUND_NUMBER',
    );
    // PUT is for rounds the service ran: a reports-only consortium is told to POST (it answered
    // FEDSCORE_ERR_ROUND_NOT_FOUND, which sent operators looking for a round that was never opened).
    const put = await adminInject(h, 'PUT', `${C}/rounds/1/utilities`, body);
    expectError(put, 409, 'FEDSCORE_ERR_EXTERNAL_AGGREGATION');
    expect(put.json().message).toContain('POST /v1/consortia/');
    expect((await adminInject(h, 'GET', `${C}/rounds`)).json().rounds).toEqual([]);
    expect((await adminInject(h, 'POST', `${C}/rounds/1/utilities`, body)).statusCode).toBe(201);
    expect((await adminInject(h, 'POST', `${C}/rounds/1/utilities`, body)).statusCode).toBe(200); // retry
    expectError(
      await adminInject(h, 'POST', `${C}/rounds/1/utilities`, { full: 0.9, empty: 0.1 }),
      409,
      'FEDSCORE_ERR_UTILITIES_SET',
    );
    expectError(
      await adminInject(h, 'POST', `${C}/rounds/2/utilities`, body),
      409,
      'FEDSCORE_ERR_ROUND_OPEN',
    );
    expectError(await adminInject(h, 'POST', `${C}/rounds`), 409, 'FEDSCORE_ERR_EXTERNAL_AGGREGATION');

    // Masked vectors and other secure-aggregation messages have no place here.
    for (const stage of ['advertise', 'mask'])
      expectError(
        await siloInject(h, 0, 'POST', `${C}/rounds/1/${stage}`, new Uint8Array(64).fill(7)),
        409,
        'FEDSCORE_ERR_EXTERNAL_AGGREGATION',
      );

    // Reports: from outside the consortium, out of range, replayed, moved to another round.
    const outsider = signingKeyPairFromSeed(new Uint8Array(32).fill(9));
    const outsiderBytes = signedReport('ext', 1, 1, 0.5, 0.5, outsider);
    expectError(
      await siloInject(h, 4, 'POST', `${C}/rounds/1/reports`, outsiderBytes, { as: 0 }),
      401,
      'FEDSCORE_ERR_BAD_REQUEST_SIGNATURE',
    ); // silo 4 is not in the roster of four
    expectError(
      await h.app.inject({
        method: 'POST',
        url: `${C}/rounds/1/reports`,
        payload: Buffer.from(outsiderBytes),
        headers: {
          'content-type': 'application/octet-stream',
          ...signRequest(outsider.secretKey, {
            method: 'POST',
            path: `${C}/rounds/1/reports`,
            silo: 1,
            timestamp: h.clock.now(),
            nonce: nonce(),
            body: outsiderBytes,
          }),
        },
      }),
      401,
      'FEDSCORE_ERR_BAD_REQUEST_SIGNATURE',
    ); // an outsider's key posing as silo 1
    expectError(
      await siloInject(h, 1, 'POST', `${C}/rounds/1/reports`, outsiderBytes),
      400,
      'FEDSCORE_ERR_REPORT_BAD_SIGNATURE',
    ); // silo 1's request carrying a report the outsider signed
    const unknownSilo = signedReport('ext', 1, 7, 0.5, 0.5, h.keys[1]!);
    expectError(
      await siloInject(h, 1, 'POST', `${C}/rounds/1/reports`, unknownSilo),
      400,
      'FEDSCORE_ERR_REPORT_MISMATCH',
    );
    expectError(await report(1, 0, 1.2, 0.5), 400, 'FEDSCORE_ERR_UTILITY_OUT_OF_RANGE');
    expectError(await report(1, 0, 0.5, -0.01), 400, 'FEDSCORE_ERR_UTILITY_OUT_OF_RANGE');
    expectError(
      await siloInject(
        h,
        0,
        'POST',
        `${C}/rounds/1/reports`,
        signedReport('ext', 2, 0, 0.5, 0.5, h.keys[0]!),
      ),
      400,
      'FEDSCORE_ERR_REPORT_MISMATCH',
    );
    expectError(
      await siloInject(h, 0, 'POST', `${C}/rounds/1/reports`, signedReport('c1', 1, 0, 0.5, 0.5, h.keys[0]!)),
      400,
      'FEDSCORE_ERR_REPORT_MISMATCH',
    );
    expectError(
      await siloInject(
        h,
        0,
        'POST',
        `${C}/rounds/1/reports`,
        signedReport('ext', 1, 1, 0.5, 0.5, h.keys[1]!),
      ),
      403,
      'FEDSCORE_ERR_FORBIDDEN',
    ); // silo 0 submitting silo 1's report
    const bytes = signedReport('ext', 1, 0, 0.5, 0.6, h.keys[0]!);
    const fixedNonce = nonce();
    const first = await siloInject(h, 0, 'POST', `${C}/rounds/1/reports`, bytes, { nonce: fixedNonce });
    expect(first.statusCode, first.body).toBe(201);
    expectError(
      await siloInject(h, 0, 'POST', `${C}/rounds/1/reports`, bytes, { nonce: fixedNonce }),
      401,
      'FEDSCORE_ERR_REPLAYED_REQUEST',
    );
    expectError(
      await siloInject(h, 0, 'POST', `${C}/rounds/1/reports`, bytes, { timestamp: h.clock.now() - 600_000 }),
      401,
      'FEDSCORE_ERR_STALE_REQUEST',
    );
    expect((await siloInject(h, 0, 'POST', `${C}/rounds/1/reports`, bytes)).json().duplicate).toBe(true);
    expectError(await report(1, 0, 0.5, 0.7), 409, 'FEDSCORE_ERR_REPORT_CONFLICT');
    expectError(await report(2, 0, 0.5, 0.7), 404, 'FEDSCORE_ERR_ROUND_NOT_FOUND');

    // Nothing of the refused reports was stored: round 1 still waits for silos 1–3.
    const round = (await adminInject(h, 'GET', `${C}/rounds/1`)).json();
    expect(round).toMatchObject({ stage: 'reporting', utilities: body });
    expectError(await adminInject(h, 'GET', `${C}/rounds/1/scores`), 409, 'FEDSCORE_ERR_NOT_READY');
  });

  test('the OpenAPI document shows the route and the consortium field', async () => {
    const doc = (await h.app.inject({ method: 'GET', url: '/docs/json' })).json();
    const op = doc.paths['/v1/consortia/{cid}/rounds/{round}/utilities'].post;
    expect(op.security).toEqual([{ admin: [] }]);
    expect(Object.keys(op.responses)).toEqual(expect.arrayContaining(['200', '201', '400', '401', '409']));
    expect(op.requestBody.content['application/json'].schema.required).toEqual(['full', 'empty']);
    const input = doc.paths['/v1/consortia'].post.requestBody.content['application/json'].schema;
    expect(input.properties.secureAggregation.enum).toEqual(['fedscore', 'external']);
  });

  test('a consortium running fedscore’s secure aggregation refuses the reports-only route', async () => {
    await createConsortium(h, 'c1');
    expect((await adminInject(h, 'GET', '/v1/consortia/c1')).json().secureAggregation).toBe('fedscore');
    expectError(
      await adminInject(h, 'POST', '/v1/consortia/c1/rounds/1/utilities', { full: -0.5, empty: -0.1 }),
      409,
      'FEDSCORE_ERR_NOT_EXTERNAL',
    );
    expectError(
      await adminInject(h, 'POST', '/v1/consortia', {
        ...externalBody(h),
        id: 'x2',
        secureAggregation: 'elsewhere',
      }),
      400,
      'FEDSCORE_ERR_VALIDATION',
    );
  });
});
