/**
 * The consortium setting `emptyCoalition` (scoring/empty-coalition.ts): stored with the consortium
 * (default 'initialModel'; a consortium stored before the setting existed reads as that), and
 * applied when the service scores a round and when it audits it. The stored v(M0) stays what was
 * measured.
 */
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { scoreReports, signedReport, siloCoalitionModels } from '../../src/consortium/private-scoring.js';
import { ScoringService } from '../../src/server/service/scoring-service.js';
import {
  adminInject,
  consortiumBody,
  evaluate,
  f32bytes,
  type Harness,
  harness,
  INITIAL,
  Silo,
  STEPS,
  siloInject,
  updateOf,
} from './_harness.js';
import { consortiumInput, fixture } from './service/_service.js';

const get = async (h: Harness, url: string) => (await adminInject(h, 'GET', url)).json();

/** One round of all four silos of consortium `id`, reports included. */
async function scoredRound(h: Harness, id: string) {
  expect((await adminInject(h, 'POST', `/v1/consortia/${id}/rounds`)).statusCode).toBe(201);
  const silos = [0, 1, 2, 3].map((i) => new Silo(h, id, 1, i, 3));
  for (const s of silos) await s.start();
  for (const step of STEPS) for (const s of silos) await s.step(step);
  const round = await get(h, `/v1/consortia/${id}/rounds/1`);
  const agg = await adminInject(h, 'GET', `/v1/consortia/${id}/rounds/1/aggregate/sum`);
  const weightedSum = new Float64Array(new Uint8Array(agg.rawPayload).buffer);
  const reports: Uint8Array[] = [];
  const withOnly: number[] = [];
  for (const i of [0, 1, 2, 3]) {
    const m = siloCoalitionModels(INITIAL, weightedSum, round.totalWeight, updateOf(i, 1), 'fedavg');
    const single = await evaluate({} as never, m.singleton);
    withOnly.push(single);
    const report = signedReport(id, 1, i, single, await evaluate({} as never, m.complement), h.keys[i]!);
    reports.push(report);
    expect((await siloInject(h, i, 'POST', `/v1/consortia/${id}/rounds/1/reports`, report)).statusCode).toBe(
      201,
    );
  }
  return { round, reports, withOnly, scores: await get(h, `/v1/consortia/${id}/rounds/1/scores`) };
}

describe('consortium setting emptyCoalition', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await harness();
  });
  afterEach(async () => h.close());

  test("'zero': the service scores with v(∅) = 0, records v(M0) as measured, and audits the same way", async () => {
    const created = await adminInject(h, 'POST', '/v1/consortia', {
      ...consortiumBody(h.keys, 'cz'),
      emptyCoalition: 'zero',
    });
    expect(created.statusCode).toBe(201);
    expect(created.json().emptyCoalition).toBe('zero');
    expect((await adminInject(h, 'PUT', '/v1/consortia/cz/model', f32bytes(INITIAL))).statusCode).toBe(204);
    expect((await get(h, '/v1/consortia/cz')).emptyCoalition).toBe('zero');

    const { round, reports, withOnly, scores } = await scoredRound(h, 'cz');
    expect(round.utilities.empty).toBe(await evaluate({} as never, INITIAL)); // measured, not 0
    expect(round.utilities.empty).not.toBe(0);
    const roster = h.keys.map((k) => k.publicKey);
    const ref = scoreReports('cz', 1, reports, roster, round.utilities.full, round.utilities.empty, {
      emptyCoalition: 'zero',
    });
    for (const m of ['loo', 'ioi', 'fp', 'ee', 'eeMedian'] as const)
      expect(scores.schemes[m]).toEqual(Array.from(ref.scores[m]));
    expect(scores.schemes.ioi).toEqual(withOnly); // IOI(i) = v({i}) − 0

    const audit = (await adminInject(h, 'GET', '/v1/consortia/cz/audit')).json();
    const ra = audit.runs[0].rounds[0];
    expect(ra.utilities.empty).toBe(0);
    for (const m of ['loo', 'ioi', 'fp', 'ee', 'eeMedian'])
      expect(ra.schemes[m].recordedScoresMaxAbsDiff).toBeLessThan(1e-12);
  });

  test("default 'initialModel': IOI(i) = v({i}) − v(M0)", async () => {
    expect((await adminInject(h, 'POST', '/v1/consortia', consortiumBody(h.keys, 'ci'))).statusCode).toBe(
      201,
    );
    expect((await adminInject(h, 'PUT', '/v1/consortia/ci/model', f32bytes(INITIAL))).statusCode).toBe(204);
    expect((await get(h, '/v1/consortia/ci')).emptyCoalition).toBe('initialModel');
    const { round, withOnly, scores } = await scoredRound(h, 'ci');
    expect(scores.schemes.ioi).toEqual(withOnly.map((w) => w - round.utilities.empty));
  });

  test('an unknown value is refused', async () => {
    const r = await adminInject(h, 'POST', '/v1/consortia', {
      ...consortiumBody(h.keys, 'cx'),
      emptyCoalition: 'none',
    });
    expect(r.statusCode).toBe(400);
  });

  test("a consortium stored before the setting existed reads as 'initialModel' (no migration)", async () => {
    const f = await fixture({ consortium: false });
    try {
      const created = await f.service.createConsortium(consortiumInput(f.keys));
      const { emptyCoalition, ...before } = created;
      expect(emptyCoalition).toBe('initialModel');
      await f.store.db
        .updateTable('consortia')
        .set({ config: JSON.stringify(before) })
        .where('id', '=', 'c1')
        .execute();
      const fresh = new ScoringService({ store: f.store }); // no cached copy
      expect(await fresh.consortium('c1')).toEqual(created);
    } finally {
      await f.close();
    }
  });
});
