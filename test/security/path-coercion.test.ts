/**
 * Finding 8 of the trust issue — path parameters were coerced.
 *
 * The attack as found: `/rounds/1.5`, `/true`, `/+1`, `/01` and `/%201` all resolved to round 1
 * (the TypeBox validator converts path parameters whatever ajv's `coerceTypes: false` says), and
 * `POST …/rounds/1.5/advance` advanced round 1. Against f5e8247 the reads below answer 200 and the
 * advance closes round 1's advertise stage.
 *
 * Now a numeric path parameter is the canonical decimal form (no sign, no leading zero, no point,
 * exponent or space) or the request is refused with `FEDSCORE_ERR_VALIDATION` (400), before
 * anything is read or changed — on operator, silo and read routes alike.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { adminInject, createConsortium, type Harness, harness, siloInject } from '../server/_harness.js';

const ALIASES = ['1.5', 'true', '+1', '01', '%201', '1%20', '1e0', '0x1', '1.0', '%2B1', '-0', '1_0'];

describe('numeric path parameters are taken literally', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await harness();
    await createConsortium(h);
    await adminInject(h, 'POST', '/v1/consortia/c1/rounds');
  });
  afterAll(async () => h.close());

  const expect400 = (r: { statusCode: number; json(): { code: string; message: string } }, what: string) => {
    expect(r.statusCode, what).toBe(400);
    expect(r.json().code, what).toBe('FEDSCORE_ERR_VALIDATION');
  };

  test('aliases of round 1 are refused on reads, the operator’s advance and silo routes', async () => {
    for (const a of ALIASES) {
      expect400(await adminInject(h, 'GET', `/v1/consortia/c1/rounds/${a}`), `GET round ${a}`);
      expect400(await adminInject(h, 'POST', `/v1/consortia/c1/rounds/${a}/advance`), `advance ${a}`);
      expect400(await siloInject(h, 0, 'GET', `/v1/consortia/c1/rounds/${a}/inbox/keys`), `inbox ${a}`);
    }
    const message = (await adminInject(h, 'GET', '/v1/consortia/c1/rounds/01')).json().message;
    expect(message).toBe(
      'the request does not match the schema: params/round must be a decimal integer without sign, leading zeros, point or spaces',
    );
    // Round 1 was not advanced by any of them.
    const round = (await adminInject(h, 'GET', '/v1/consortia/c1/rounds/1')).json();
    expect(round).toMatchObject({ round: 1, stage: 'advertise', sets: [] });
  });

  test('model versions too: /models/00, /models/0.0, /models/+0 are not version 0', async () => {
    expect((await adminInject(h, 'GET', '/v1/consortia/c1/models/0')).statusCode).toBe(200);
    for (const a of ['00', '0.0', '+0', 'false', '%200'])
      expect400(await adminInject(h, 'GET', `/v1/consortia/c1/models/${a}`), `model ${a}`);
  });

  test('the canonical form still works, and out-of-range numbers are refused, not wrapped', async () => {
    expect((await adminInject(h, 'GET', '/v1/consortia/c1/rounds/1')).statusCode).toBe(200);
    expect((await adminInject(h, 'GET', '/v1/consortia/c1/rounds/2')).statusCode).toBe(404);
    for (const a of ['0', '4294967296', '99999999999999999999'])
      expect400(await adminInject(h, 'GET', `/v1/consortia/c1/rounds/${a}`), `round ${a}`);
  });
});
