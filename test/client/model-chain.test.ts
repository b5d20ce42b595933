/**
 * src/client/model-chain.ts on a real service: the chain a silo rebuilds when it joins late or
 * restarts (`--first-round k`) is the service's model numbering — round 1's result is version 1,
 * an aborted round leaves the model unchanged — and its bytes are the service's bit for bit
 * (protocol/weighted.ts `stepModel`, shared); a renumbered base or other bytes are refused
 * naming the round.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SiloHttp } from '../../src/client/http.js';
import { ModelChain, ModelChainError } from '../../src/client/model-chain.js';
import { paramsDigest } from '../../src/ml/layers-model.js';
import { roundInReporting } from '../security/_service-round.js';
import { adminInject, D, type Harness, harness, INITIAL } from '../server/_harness.js';
import { injectFetch } from './_inject.js';

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** Round 1 with a result (scored), round 2 aborted, round 3 open: its base is version 1. */
async function threeRounds(): Promise<Harness> {
  const x = await harness({ n: 4 });
  await roundInReporting(x);
  expect(
    (await adminInject(x, 'POST', '/v1/consortia/c1/rounds/1/advance', { stage: 'reporting' })).statusCode,
  ).toBe(200);
  expect((await adminInject(x, 'POST', '/v1/consortia/c1/rounds')).statusCode).toBe(201);
  expect(
    (await adminInject(x, 'POST', '/v1/consortia/c1/rounds/2/advance', { stage: 'advertise' })).json().stage,
  ).toBe('aborted');
  const r3 = await adminInject(x, 'POST', '/v1/consortia/c1/rounds');
  expect(r3.json()).toMatchObject({ round: 3, baseModel: 1 });
  return x;
}

/** A silo's signed client over the app, with `lie` rewriting answers. */
function client(x: Harness, lie?: (path: string) => Response | undefined): SiloHttp {
  const adapter = injectFetch(x.app);
  return new SiloHttp({
    server: 'http://service.test',
    consortium: 'c1',
    silo: 1,
    secretKey: x.keys[1]!.secretKey,
    fetch: async (input, init) => lie?.(new URL(String(input)).pathname) ?? adapter.fetch(input, init),
    now: x.clock.now,
  });
}

const served = async (x: Harness, v: number) =>
  new Float32Array(
    Uint8Array.from((await adminInject(x, 'GET', `/v1/consortia/c1/models/${v}`)).rawPayload).buffer,
  );

describe('the model chain', () => {
  it('a silo joining at round 3 rebuilds M_1 from M_0 and round 1’s aggregate, skipping the aborted round 2: the service’s bytes exactly', async () => {
    h = await threeRounds();
    const chain = new ModelChain(client(h), D, paramsDigest(INITIAL));
    const m = await chain.baseOf(3, 1);
    expect(Buffer.from(m.buffer)).toEqual(Buffer.from((await served(h, 1)).buffer));
    expect(Array.from(m)).not.toEqual(Array.from(INITIAL));
  });

  it('refuses round 3 said to start from version 0 (BASE_MODEL_RENUMBERED, round 3)', async () => {
    h = await threeRounds();
    const chain = new ModelChain(client(h), D, paramsDigest(INITIAL));
    await expect(chain.baseOf(3, 0)).rejects.toMatchObject({
      name: 'ModelChainError',
      code: 'BASE_MODEL_RENUMBERED',
      round: 3,
    });
  });

  it('refuses served M_1 bytes that are not M_0 + the published step (MODEL_NOT_IN_CHAIN, round 3)', async () => {
    h = await threeRounds();
    const other = (await served(h, 1)).map((v, j) => (j === 0 ? v + 1e-3 : v));
    const lie = (path: string) =>
      path === '/v1/consortia/c1/models/1'
        ? new Response(new Uint8Array(other.buffer), { status: 200 })
        : undefined;
    const chain = new ModelChain(client(h, lie), D, paramsDigest(INITIAL));
    const e = await chain.baseOf(3, 1).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ModelChainError);
    expect(e).toMatchObject({ code: 'MODEL_NOT_IN_CHAIN', round: 3 });
  });

  it('refuses an M_0 that is not the pinned one before deriving anything', async () => {
    h = await threeRounds();
    const chain = new ModelChain(client(h), D, 'ab'.repeat(32));
    await expect(chain.baseOf(3, 1)).rejects.toMatchObject({
      name: 'SiloSetupError',
      field: 'model.initialWeightsDigest',
    });
  });
});
