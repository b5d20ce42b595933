/**
 * Whole rounds through the HTTP API with in-process protocol clients (protocol/client.ts): the
 * published sum equals the plaintext sum of the survivors' inputs exactly, the new model is
 * M0 + Σ w_iΔ_i / Σ w_i, and the scores are the private scores of the silos' signed reports.
 */
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { decodeWeightedSum, valueErrorBound } from '../../protocol/weighted.js';
import { leaveOneOut } from '../../scoring/private.js';
import { scoreReports, signedReport, siloCoalitionModels } from '../../src/consortium/private-scoring.js';
import {
  adminInject,
  createConsortium,
  D,
  ENCODING,
  evaluate,
  type Harness,
  harness,
  INITIAL,
  Silo,
  STEPS,
  siloInject,
  updateOf,
} from './_harness.js';

/** An operator's read (consortium data is not public). */
const get = async (h: Harness, url: string) => {
  const r = await adminInject(h, 'GET', url);
  const isJson = String(r.headers['content-type']).startsWith('application/json');
  return {
    status: r.statusCode,
    json: r.statusCode === 200 && isJson ? r.json() : undefined,
    raw: r.rawPayload,
    r,
  };
};

/** Drives one round with `active` silos; `stopAfter[i]` = index in STEPS after which silo i vanishes. */
async function driveRound(
  h: Harness,
  round: number,
  active: number[],
  stopAfter = new Map<number, number>(),
) {
  const silos = active.map((i) => new Silo(h, 'c1', round, i, 3));
  for (const s of silos) await s.start();
  for (let k = 0; k < STEPS.length; k++) {
    const live = silos.filter((s) => (stopAfter.get(s.id) ?? 99) >= k);
    const round_ = (await get(h, `/v1/consortia/c1/rounds/${round}`)).json;
    if (round_.stage !== ['share', 'mask', 'consistency', 'unmask'][k]) {
      // Some silos vanished: the stage closes at its deadline.
      h.clock.advance(10 * 60_000);
    }
    for (const s of live) await s.step(STEPS[k]!);
  }
  return silos;
}

function plainSum(silos: readonly Silo[], ids: readonly number[]): Uint32Array {
  const sum = new Uint32Array(D + 1);
  for (const s of silos) if (ids.includes(s.id)) for (let j = 0; j <= D; j++) sum[j]! += s.input[j]!;
  return sum;
}

/** Each survivor's report, computed as a silo would (src/consortium/private-scoring.ts). */
async function reportsOf(h: Harness, round: number, survivors: number[], base: Float32Array) {
  const agg = await get(h, `/v1/consortia/c1/rounds/${round}/aggregate`);
  const sum = await get(h, `/v1/consortia/c1/rounds/${round}/aggregate/sum`);
  const weightedSum = new Float64Array(new Uint8Array(sum.raw).buffer);
  return survivors.map((i) => {
    const own = updateOf(i, round);
    const models = siloCoalitionModels(base, weightedSum, agg.json.totalWeight, own, 'fedavg');
    return { silo: i, models };
  });
}

describe('a whole round over HTTP', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await harness();
    await createConsortium(h);
  });
  afterEach(async () => h.close());

  test('all four silos: exact sum, new model, reports, scores, cumulative', async () => {
    expect((await adminInject(h, 'POST', '/v1/consortia/c1/rounds')).statusCode).toBe(201);
    const silos = await driveRound(h, 1, [0, 1, 2, 3]);
    const round = (await get(h, '/v1/consortia/c1/rounds/1')).json;
    expect(round).toMatchObject({
      stage: 'reporting',
      survivors: [0, 1, 2, 3],
      dropped: [],
      sets: [
        [0, 1, 2, 3],
        [0, 1, 2, 3],
        [0, 1, 2, 3],
        [0, 1, 2, 3],
        [0, 1, 2, 3],
      ],
      resultModel: 1,
    });

    // The published Σ w_iΔ_i is exactly the decoding of the plaintext modular sum.
    const encoding = { valueRange: ENCODING.clip, weightRange: ENCODING.weightRange, n: 4 };
    const expected = decodeWeightedSum(plainSum(silos, [0, 1, 2, 3]), encoding);
    const sum = await get(h, '/v1/consortia/c1/rounds/1/aggregate/sum');
    expect(sum.r.headers['content-type']).toBe('application/octet-stream');
    expect(Array.from(new Float64Array(new Uint8Array(sum.raw).buffer))).toEqual(
      Array.from(expected.weightedSum),
    );
    expect(round.totalWeight).toBe(expected.totalWeight);
    // … and within the quantizer's bound of the true Σ w_iΔ_i.
    const bound = valueErrorBound(encoding) * 4 * 1.01;
    for (let j = 0; j < D; j++) {
      let truth = 0;
      for (let i = 0; i < 4; i++) truth += updateOf(i, 1).weight * updateOf(i, 1).update[j]!;
      expect(Math.abs(expected.weightedSum[j]! - truth)).toBeLessThanOrEqual(bound);
    }

    // The new model is M0 + average, in Float32.
    const model = await get(h, '/v1/consortia/c1/model');
    expect(model.r.headers['x-fedscore-model-version']).toBe('1');
    const m1 = new Float32Array(new Uint8Array(model.raw).buffer);
    expect(Array.from(m1)).toEqual(Array.from(INITIAL, (b, j) => Math.fround(b + expected.average[j]!)));
    expect(round.utilities).toEqual({
      full: await evaluate({} as never, m1),
      empty: await evaluate({} as never, INITIAL),
    });

    // Scores are not published before every survivor reported.
    expect((await get(h, '/v1/consortia/c1/rounds/1/scores')).status).toBe(409);

    const computed = await reportsOf(h, 1, [0, 1, 2, 3], INITIAL);
    const reports: Uint8Array[] = [];
    for (const { silo, models } of computed) {
      const report = signedReport(
        'c1',
        1,
        silo,
        await evaluate({} as never, models.singleton),
        await evaluate({} as never, models.complement),
        h.keys[silo]!,
      );
      reports.push(report);
      const res = await siloInject(h, silo, 'POST', '/v1/consortia/c1/rounds/1/reports', report);
      expect(res.statusCode).toBe(201);
      expect(res.json()).toEqual({ silo, duplicate: false, stage: silo === 3 ? 'scored' : 'reporting' });
    }
    // An idempotent retry of the same report is a 200, not a second report — also after the
    // round was scored (the silo whose report scored it may have lost the answer).
    const retry = await siloInject(h, 3, 'POST', '/v1/consortia/c1/rounds/1/reports', reports[3]!);
    expect(retry.statusCode).toBe(200);
    expect(retry.json()).toEqual({ silo: 3, duplicate: true, stage: 'scored' });

    const scores = (await get(h, '/v1/consortia/c1/rounds/1/scores')).json;
    const roster = h.keys.map((k) => k.publicKey);
    const ref = scoreReports('c1', 1, reports, roster, round.utilities.full, round.utilities.empty);
    expect(scores.silos).toEqual([0, 1, 2, 3]);
    for (const m of ['loo', 'ioi', 'fp', 'ee', 'eeMedian'] as const)
      expect(scores.schemes[m]).toEqual(Array.from(ref.scores[m]));
    // An independent check of one scheme from its definition: LOO(i) = v(M) − v(M − U_i).
    const without = await Promise.all(computed.map((c) => evaluate({} as never, c.models.complement)));
    expect(scores.schemes.loo).toEqual(without.map((w) => round.utilities.full - w));
    expect(
      Array.from(leaveOneOut({ full: round.utilities.full, empty: 0, withOnly: without, without })),
    ).toEqual(scores.schemes.loo);

    const cumulative = (await get(h, '/v1/consortia/c1/scores')).json;
    expect(cumulative.rounds).toEqual([scores]);
    expect(cumulative.cumulative.loo).toEqual(scores.schemes.loo);

    // The operator's manipulation audit of the scored rounds (issue 7).
    expect((await h.app.inject({ method: 'GET', url: '/v1/consortia/c1/audit' })).statusCode).toBe(401);
    const audited = await adminInject(h, 'GET', '/v1/consortia/c1/audit');
    expect(audited.statusCode).toBe(200);
    const audit = audited.json();
    expect(audit.schemes).toEqual(['loo', 'ioi', 'fp', 'ee', 'eeMedian']);
    const ra = audit.runs[0].rounds[0];
    expect(ra.silos).toEqual([0, 1, 2, 3]);
    expect(ra.schemes.loo.scores).toEqual(scores.schemes.loo); // recomputed from the stored reports
    ra.schemes.ee.influence.forEach((row: number[], i: number) => {
      expect(row[i]).toBe(0); // EE: a silo's own reports do not enter its weight
    });
  });

  test('a silo that vanishes after ShareKeys is a dropout: the sum covers the other three exactly', async () => {
    await adminInject(h, 'POST', '/v1/consortia/c1/rounds');
    // Silo 3 handles 'keys' (sends ShareKeys) and then vanishes before sending its masked input.
    const silos = await driveRound(h, 1, [0, 1, 2, 3], new Map([[3, 0]]));
    const round = (await get(h, '/v1/consortia/c1/rounds/1')).json;
    expect(round.stage).toBe('reporting');
    expect(round.survivors).toEqual([0, 1, 2]);
    expect(round.dropped).toEqual([3]);
    const encoding = { valueRange: ENCODING.clip, weightRange: ENCODING.weightRange, n: 4 };
    const expected = decodeWeightedSum(plainSum(silos, [0, 1, 2]), encoding);
    const sum = await get(h, '/v1/consortia/c1/rounds/1/aggregate/sum');
    expect(Array.from(new Float64Array(new Uint8Array(sum.raw).buffer))).toEqual(
      Array.from(expected.weightedSum),
    );
    // The dropout may not report.
    const late = await siloInject(
      h,
      3,
      'POST',
      '/v1/consortia/c1/rounds/1/reports',
      signedReport('c1', 1, 3, 0, 0, h.keys[3]!),
    );
    expect(late.json()).toEqual({
      code: 'FEDSCORE_ERR_NOT_A_SURVIVOR',
      message: 'the silo is not in this round’s aggregate: silo 3',
    });
  });

  test('fewer than t silos advertise: the round aborts at the deadline and the inbox says so', async () => {
    await adminInject(h, 'POST', '/v1/consortia/c1/rounds');
    for (const i of [0, 1]) await new Silo(h, 'c1', 1, i, 3).start();
    h.clock.advance(61_000);
    const round = (await get(h, '/v1/consortia/c1/rounds/1')).json;
    expect(round.stage).toBe('aborted');
    expect(round.error).toEqual({ code: 'BELOW_THRESHOLD', detail: '2 < t = 3 at advertise' });
    const inbox = await siloInject(h, 0, 'GET', '/v1/consortia/c1/rounds/1/inbox/keys');
    expect(inbox.statusCode).toBe(409);
    expect(inbox.json()).toEqual({
      code: 'FEDSCORE_ERR_SECAGG_ABORTED',
      message: 'secure aggregation: the round was aborted: BELOW_THRESHOLD',
    });
    // The next round may open, from the unchanged model.
    const next = await adminInject(h, 'POST', '/v1/consortia/c1/rounds');
    expect(next.statusCode).toBe(201);
    expect(next.json()).toMatchObject({ round: 2, baseModel: 0, stage: 'advertise' });
  });

  test('two rounds: the second starts from the first one’s model and cumulative scores add up', async () => {
    const utilitiesOf = async (round: number) =>
      (await get(h, `/v1/consortia/c1/rounds/${round}`)).json.utilities;
    for (const r of [1, 2]) {
      expect((await adminInject(h, 'POST', '/v1/consortia/c1/rounds')).json()).toMatchObject({
        round: r,
        baseModel: r - 1,
      });
      await driveRound(h, r, [0, 1, 2, 3]);
      const base = new Float32Array(
        new Uint8Array((await get(h, `/v1/consortia/c1/models/${r - 1}`)).raw).buffer,
      );
      for (const { silo, models } of await reportsOf(h, r, [0, 1, 2, 3], base)) {
        const report = signedReport(
          'c1',
          r,
          silo,
          await evaluate({} as never, models.singleton),
          await evaluate({} as never, models.complement),
          h.keys[silo]!,
        );
        expect(
          (await siloInject(h, silo, 'POST', `/v1/consortia/c1/rounds/${r}/reports`, report)).statusCode,
        ).toBe(201);
      }
      expect(await utilitiesOf(r)).not.toBeNull();
    }
    const all = (await get(h, '/v1/consortia/c1/scores')).json;
    expect(all.rounds.map((s: { round: number }) => s.round)).toEqual([1, 2]);
    for (const m of ['loo', 'fp'])
      expect(all.cumulative[m]).toEqual(
        [0, 1, 2, 3].map((i) => all.rounds[0].schemes[m][i] + all.rounds[1].schemes[m][i]),
      );
  });
});
