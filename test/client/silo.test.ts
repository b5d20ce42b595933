/**
 * src/client/silo.ts before any round: a silo refuses a consortium whose test set digest is not
 * its own test set's (it would report utilities on other data), whose registered key for its id
 * is not its key, or whose model size differs — and sends nothing signed before refusing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { SiloHttp } from '../../src/client/http.js';
import { runSilo, SiloSetupError } from '../../src/client/silo.js';
import type { Learner } from '../../src/fl/learner/learner.js';
import { networkedRun } from '../../src/fl/networked.js';
import type { ExperimentConfig } from '../../src/records/config.js';
import { adminInject, consortiumBody, D, type Harness, harness } from '../server/_harness.js';
import { injectFetch } from './_inject.js';
import { tempJournal } from './_journal.js';

const cfg: ExperimentConfig = {
  silos: 4,
  rounds: 1,
  data: {
    dataset: 'synthetic',
    trainSize: 80,
    testSize: 30,
    synthetic: { features: 4, classes: 3, examples: 200 },
  },
};
const run = networkedRun(cfg, 1);

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

async function attempt(
  digest: string,
  o: {
    key?: number;
    parameters?: number;
    utility?: { name: string; maxLoss?: number };
    encoding?: Record<string, number>;
  } = {},
) {
  h = await harness({ n: 4 });
  // The configuration scores accuracy (the harness's toy consortia declare negLoss).
  const body = {
    ...consortiumBody(h.keys),
    utility: o.utility ?? { name: 'accuracy' },
    testSetDigest: digest,
    ...(o.encoding ? { encoding: { ...consortiumBody(h.keys).encoding, ...o.encoding } } : {}),
  };
  expect((await adminInject(h, 'POST', '/v1/consortia', body)).statusCode).toBe(201);
  const adapter = injectFetch(h.app);
  const secretKey = h.keys[o.key ?? 1]!.secretKey;
  const http = new SiloHttp({
    server: 'http://service.test',
    consortium: 'c1',
    silo: 1,
    secretKey,
    fetch: adapter.fetch,
    now: h.clock.now,
  });
  const learner = { parameterCount: o.parameters ?? D } as Learner;
  // These checks hold with or without a pinned consortium file: unpinned here.
  const result = runSilo({
    journal: tempJournal(),
    http,
    run,
    learner,
    secretKey,
    firstRound: 1,
    lastRound: 1,
    waitTimeoutMs: 1000,
    insecureUnpinned: true,
  });
  return { result, log: adapter.log };
}

describe('runSilo checks the consortium first', () => {
  it('without a pinned consortium file and without the explicit opt-in it refuses before any request', async () => {
    h = await harness({ n: 4 });
    const adapter = injectFetch(h.app);
    const secretKey = h.keys[1]!.secretKey;
    const http = new SiloHttp({
      server: 'http://service.test',
      consortium: 'c1',
      silo: 1,
      secretKey,
      fetch: adapter.fetch,
      now: h.clock.now,
    });
    const learner = { parameterCount: D } as Learner;
    const result = runSilo({
      http,
      run,
      learner,
      secretKey,
      firstRound: 1,
      lastRound: 1,
      journal: tempJournal(),
    });
    await expect(result).rejects.toMatchObject({ name: 'SiloSetupError', field: 'consortium-file' });
    expect(adapter.log).toEqual([]);
  });

  it('refuses a test set digest that is not its own, naming testSetDigest, and posts nothing', async () => {
    const { result, log } = await attempt('cd'.repeat(32));
    await expect(result).rejects.toThrow(SiloSetupError);
    await expect(result).rejects.toMatchObject({ field: 'testSetDigest' });
    await expect(result).rejects.toThrow(
      `testSetDigest: the consortium's test set is ${'cd'.repeat(32)}, the local one is ${run.testSetDigest}; refusing to report utilities on another test set`,
    );
    expect(log).toEqual([{ method: 'GET', path: '/v1/consortia/c1', status: 200 }]);
  });

  it('started before the consortium exists, it waits for it, then checks it', async () => {
    h = await harness({ n: 4 });
    const x = h;
    const adapter = injectFetch(x.app);
    const secretKey = x.keys[1]!.secretKey;
    const http = new SiloHttp({
      server: 'http://service.test',
      consortium: 'c1',
      silo: 1,
      secretKey,
      fetch: adapter.fetch,
      now: x.clock.now,
    });
    const learner = { parameterCount: D } as Learner;
    const result = runSilo({
      journal: tempJournal(),
      http,
      run,
      learner,
      secretKey,
      firstRound: 1,
      lastRound: 1,
      poll: { initialMs: 5, maxMs: 20 },
      insecureUnpinned: true,
    });
    while (adapter.log.length < 3) await new Promise((r) => setTimeout(r, 5));
    expect(adapter.log.every((l) => l.path === '/v1/consortia/c1' && l.status === 404)).toBe(true);
    await adminInject(x, 'POST', '/v1/consortia', {
      ...consortiumBody(x.keys),
      utility: { name: 'accuracy' },
      testSetDigest: 'ef'.repeat(32),
    });
    await expect(result).rejects.toMatchObject({ name: 'SiloSetupError', field: 'testSetDigest' });
  });

  it('a consortium answer nested 100,000 deep is one clear error naming the request (issue 27 A5)', async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const secretKey = new Uint8Array(32).fill(7);
    const http = new SiloHttp({
      server: 'http://service.test',
      consortium: 'c1',
      silo: 1,
      secretKey,
      fetch: (async () => new Response(deep, { status: 200 })) as typeof fetch,
      retry: { attempts: 1 },
    });
    const learner = { parameterCount: D } as Learner;
    const result = runSilo({
      journal: tempJournal(),
      http,
      run,
      learner,
      secretKey,
      firstRound: 1,
      lastRound: 1,
      insecureUnpinned: true,
    });
    await expect(result).rejects.toMatchObject({ code: 'FEDSCORE_CLIENT_JSON_TOO_DEEP' });
    await expect(result).rejects.toThrow('GET /v1/consortia/c1');
  });

  it('refuses a key that is not the registered one for its silo id', async () => {
    const { result } = await attempt(run.testSetDigest, { key: 2 });
    await expect(result).rejects.toMatchObject({ name: 'SiloSetupError', field: 'key' });
  });

  it('refuses a consortium that scores another utility', async () => {
    const { result } = await attempt(run.testSetDigest, { utility: { name: 'negLoss', maxLoss: 5 } });
    await expect(result).rejects.toMatchObject({ name: 'SiloSetupError', field: 'utility' });
  });

  it('refuses a model of another size', async () => {
    const { result } = await attempt(run.testSetDigest, { parameters: D + 1 });
    await expect(result).rejects.toMatchObject({ name: 'SiloSetupError', field: 'model.parameters' });
  });

  it('refuses a consortium whose weight floor or largest share is not its own (issue 27 A1)', async () => {
    const lower = await attempt(run.testSetDigest, { encoding: { weightFloor: 1e-6 } });
    await expect(lower.result).rejects.toMatchObject({
      name: 'WeightBoundsError',
      code: 'FEDSCORE_ERR_WEIGHT_BOUNDS',
      field: 'encoding.weightFloor',
    });
    await h?.close();
    const share = await attempt(run.testSetDigest, { encoding: { maxWeightShare: 0.99 } });
    await expect(share.result).rejects.toThrow(
      /^encoding\.maxWeightShare: FEDSCORE_ERR_WEIGHT_BOUNDS: the consortium's maxWeightShare is 0\.99, this silo's 0\.5/,
    );
    expect(share.log.filter((l) => l.method !== 'GET')).toEqual([]);
    await h?.close();
    // Issue 32 W1: the effective number of participants is pinned too.
    const effective = await attempt(run.testSetDigest, { encoding: { minEffectiveSilos: 2 } });
    await expect(effective.result).rejects.toThrow(
      /^encoding\.minEffectiveSilos: FEDSCORE_ERR_WEIGHT_BOUNDS: the consortium's minEffectiveSilos is 2, this silo's 3/,
    );
    expect(effective.log.filter((l) => l.method !== 'GET')).toEqual([]);
  });

  it('with a matching consortium it goes on to wait for the first round', async () => {
    const { result, log } = await attempt(run.testSetDigest);
    await expect(result).rejects.toThrow('timed out after 1000 ms waiting for round 1 to open');
    expect(log[0]).toEqual({ method: 'GET', path: '/v1/consortia/c1', status: 200 });
    expect(log.slice(1).every((l) => l.path === '/v1/consortia/c1/rounds/1' && l.status === 404)).toBe(true);
  });
});
