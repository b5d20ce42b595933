/**
 * src/client/model-chain.ts on a real service: the chain a silo rebuilds when it joins late or
 * restarts (`--first-round k`) is the service's model numbering — round 1's result is version 1,
 * an aborted round leaves the model unchanged — and its bytes are the service's bit for bit
 * (protocol/weighted.ts `stepModel`, shared); a renumbered base or other bytes are refused
 * naming the round. History only grows (issue 32, R1 b): a result the silo accepted that
 * disappears, or a base version going back, is HISTORY_REGRESSION — never a silent reset.
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

  /** The service's `GET …/rounds` with round 1 shown without a result (as aborted). */
  async function withoutRound1(x: Harness): Promise<(path: string) => Response | undefined> {
    const listed = (await adminInject(x, 'GET', '/v1/consortia/c1/rounds')).json() as {
      rounds: Record<string, unknown>[];
    };
    const rounds = listed.rounds.map((r) =>
      r.round === 1 ? { ...r, stage: 'aborted', resultModel: null } : r,
    );
    return (path) =>
      path === '/v1/consortia/c1/rounds'
        ? new Response(JSON.stringify({ ...listed, rounds }), {
            status: 200,
            headers: { 'content-type': 'application/json' },
          })
        : undefined;
  }

  it('refuses a base version going back (HISTORY_REGRESSION), never a silent reset to M_0', async () => {
    h = await threeRounds();
    let lie: ((path: string) => Response | undefined) | undefined;
    const chain = new ModelChain(
      client(h, (p) => lie?.(p)),
      D,
      paramsDigest(INITIAL),
    );
    await chain.baseOf(3, 1);
    lie = await withoutRound1(h);
    const e = await chain.baseOf(3, 0).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ModelChainError);
    expect(e).toMatchObject({ code: 'HISTORY_REGRESSION', round: 3 });
    expect((e as Error).message).toBe(
      'HISTORY_REGRESSION: round 3: the base model would go back to version 0; this silo’s chain is at version 1; refusing a rewritten history (it would let the server replay an earlier base model)'.replace(
        '’',
        "'",
      ),
    );
  });

  it('a restarted silo refuses a history without a result it accepted before (its journal), and one whose aggregate changed', async () => {
    h = await threeRounds();
    const m1 = paramsDigest(await served(h, 1));
    const gone = new ModelChain(
      client(h, await withoutRound1(h)),
      D,
      paramsDigest(INITIAL),
      new Map([[1, m1]]),
    );
    await expect(gone.baseOf(3, 0)).rejects.toMatchObject({
      code: 'HISTORY_REGRESSION',
      round: 3,
      message: expect.stringMatching(
        /^HISTORY_REGRESSION: round 3: round 1's result, which this silo accepted, is no longer listed/,
      ),
    });
    const changed = new ModelChain(client(h), D, paramsDigest(INITIAL), new Map([[1, 'ab'.repeat(32)]]));
    await expect(changed.baseOf(3, 1)).rejects.toMatchObject({
      code: 'HISTORY_REGRESSION',
      message: expect.stringContaining(
        `round 1's published aggregate gives M_1 digest ${m1}; this silo accepted ${'ab'.repeat(32)}`,
      ),
    });
    // The same accepted result, listed as accepted: the chain goes on.
    const same = new ModelChain(client(h), D, paramsDigest(INITIAL), new Map([[1, m1]]));
    expect(paramsDigest(await same.baseOf(3, 1))).toBe(m1);
  });

  it('accept(r, …) is the step the service stores version r with, bit for bit', async () => {
    h = await threeRounds();
    const chain = new ModelChain(client(h), D, paramsDigest(INITIAL));
    const base = await chain.baseOf(1, 0);
    const agg = (await adminInject(h, 'GET', '/v1/consortia/c1/rounds/1/aggregate')).json();
    const sum = new Float64Array(
      Uint8Array.from((await adminInject(h, 'GET', '/v1/consortia/c1/rounds/1/aggregate/sum')).rawPayload)
        .buffer,
    );
    expect(chain.accept(1, base, sum, agg.totalWeight)).toBe(paramsDigest(await served(h, 1)));
    // Version 1 is now the chain's: round 3 (base 1) needs no step, and its bytes match.
    expect(paramsDigest(await chain.baseOf(3, 1))).toBe(paramsDigest(await served(h, 1)));
  });
});
