/**
 * Idempotent retries: a silo whose answers are lost (the request reached the service, the
 * answer did not) re-sends the same bytes with a fresh signature, and the service accepts the
 * repeat as already done — at every secure-aggregation stage and for the score report, whether
 * or not the stage has closed meanwhile. A different message for the same stage is still refused.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { seededRandomFromInts } from '../../crypto/random-bytes.js';
import { type ClientState, clientHandle, clientStart, createClient } from '../../protocol/client.js';
import { decodeServerMessage, encodeClientMessage } from '../../protocol/codec.js';
import { signScoreReport } from '../../protocol/score-report.js';
import { encodeWeightedInput } from '../../protocol/weighted.js';
import { SiloHttp } from '../../src/client/http.js';
import {
  adminInject,
  createConsortium,
  D,
  ENCODING,
  type Harness,
  harness,
  siloInject,
  updateOf,
} from '../server/_harness.js';
import { injectFetch } from './_inject.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function storedMessages(x: Harness): Promise<{ stage: string; silo: number }[]> {
  return x.store.db
    .selectFrom('messages')
    .select(['stage', 'silo'])
    .orderBy('stage')
    .orderBy('silo')
    .execute();
}

describe('idempotent retries against the service', () => {
  it('an identical message re-posted is accepted, before and after its stage closed; a different one is not', async () => {
    h = await harness({ n: 4 });
    await createConsortium(h);
    await adminInject(h, 'POST', '/v1/consortia/c1/rounds');
    const config = {
      session: 'c1',
      round: 1,
      threshold: 3,
      length: D + 1,
      roster: h.keys.map((k) => k.publicKey),
    };
    const adverts = h.keys.map((k, i) => {
      const s = createClient(config, i, k.secretKey, new Uint32Array(D + 1));
      const step = clientStart(s, { random: seededRandomFromInts(1, i) });
      if (step.reply.type !== 'send') throw new Error('no advert');
      return encodeClientMessage(step.reply.message);
    });
    const url = '/v1/consortia/c1/rounds/1/advertise';
    expect((await siloInject(h, 0, 'POST', url, adverts[0])).json()).toEqual({
      accepted: true,
      stage: 'advertise',
    });
    expect((await siloInject(h, 0, 'POST', url, adverts[0])).json()).toEqual({
      accepted: true,
      stage: 'advertise',
    });
    for (const i of [1, 2, 3]) expect((await siloInject(h, i, 'POST', url, adverts[i])).statusCode).toBe(202);
    // The stage closed with the fourth advert: the repeat is still "accepted", nothing is stored twice.
    const late = await siloInject(h, 3, 'POST', url, adverts[3]);
    expect(late.json()).toEqual({ accepted: true, stage: 'share' });
    expect((await storedMessages(h)).filter((m) => m.stage === 'advertise')).toHaveLength(4);
    const other = clientStart(createClient(config, 0, h.keys[0]!.secretKey, new Uint32Array(D + 1)), {
      random: seededRandomFromInts(2, 0),
    });
    if (other.reply.type !== 'send') throw new Error('no advert');
    const different = await siloInject(h, 0, 'POST', url, encodeClientMessage(other.reply.message));
    expect(different.statusCode).toBe(409);
    expect(different.json().code).toBe('FEDSCORE_ERR_SECAGG_OUT_OF_ORDER');
  });

  it('a silo whose first answer at every stage is lost completes the round through SiloHttp retries', async () => {
    const x = await harness({ n: 4 });
    h = x;
    await createConsortium(x);
    await adminInject(x, 'POST', '/v1/consortia/c1/rounds');
    const lost: string[] = [];
    const adapter = injectFetch(x.app, {
      lose: (method, path, count) => {
        const drop = method === 'POST' && count === 1;
        if (drop) lost.push(path);
        return drop;
      },
    });
    const config = {
      session: 'c1',
      round: 1,
      threshold: 3,
      length: D + 1,
      roster: x.keys.map((k) => k.publicKey),
    };
    const silos = x.keys.map((k, i) => {
      const { update, weight } = updateOf(i, 1);
      const input = encodeWeightedInput(update, weight, {
        valueRange: ENCODING.clip,
        weightRange: ENCODING.weightRange,
        n: 4,
      });
      return {
        http: new SiloHttp({
          server: 'http://service.test',
          consortium: 'c1',
          silo: i,
          secretKey: k.secretKey,
          fetch: adapter.fetch,
          now: x.clock.now,
          sleep: async () => {},
        }),
        state: createClient(config, i, k.secretKey, input) as ClientState,
        deps: { random: seededRandomFromInts(0x7e57, 1, i) },
      };
    });
    const base = '/v1/consortia/c1/rounds/1';
    for (const s of silos) {
      const step = clientStart(s.state, s.deps);
      s.state = step.state;
      if (step.reply.type !== 'send') throw new Error('no advert');
      await s.http.expect('POST', `${base}/advertise`, [202], {
        body: encodeClientMessage(step.reply.message),
      });
    }
    for (const kind of ['keys', 'shares', 'survivors', 'unmask-request'] as const)
      for (const s of silos) {
        const got = await s.http.expect('GET', `${base}/inbox/${kind}`, [200]);
        const step = await clientHandle(s.state, decodeServerMessage(Uint8Array.from(got.bytes)), s.deps);
        s.state = step.state;
        if (step.reply.type !== 'send') throw new Error(`${kind}: ${JSON.stringify(step.reply)}`);
        await s.http.expect('POST', `${base}/${step.reply.message.type}`, [202], {
          body: encodeClientMessage(step.reply.message),
        });
      }
    for (const [i, s] of silos.entries()) {
      const report = signScoreReport(
        { session: 'c1', round: 1, silo: i, singleton: -0.1 * i, complement: -0.2 },
        x.keys[i]!.secretKey,
      );
      await s.http.expect('POST', `${base}/reports`, [200, 201], { body: report });
    }
    // Every POST lost its first answer, and every silo's message of every stage is stored once.
    expect(lost).toHaveLength(4 * 6);
    expect(new Set(lost).size).toBe(6);
    const round = await adminInject(x, 'GET', base);
    expect(round.json().stage).toBe('scored');
    const reports = await x.store.db.selectFrom('reports').select('silo').execute();
    expect(reports.map((r) => r.silo).sort()).toEqual([0, 1, 2, 3]);
    const stored = await storedMessages(x);
    // Masked inputs are deleted once the sum is known; every other stage holds one message per silo.
    for (const stage of ['advertise', 'share', 'consistency', 'unmask'])
      expect(
        stored.filter((m) => m.stage === stage).map((m) => m.silo),
        stage,
      ).toEqual([0, 1, 2, 3]);
  });
});
