/**
 * Attack family: roster substitution (trust issue, finding 1).
 *
 * A malicious server registers consortium c1 with the victim's genuine public key at its silo
 * id and keys it controls for every other silo, and serves that roster (and t) from its
 * unsigned `GET /v1/consortia/c1`. An unpinned silo checks only its own key, advertises, and
 * sends its Shamir shares of b_1 and s_1^SK encrypted to the fake peers: the server, holding
 * their secret keys, decrypts t shares of each, reconstructs both secrets and unmasks the
 * victim's masked input y_1 into x_1 — here checked against the victim's actual quantized
 * update. Bonawitz et al. 2017 §6 assume an authentic roster (a PKI); fedscore's is the
 * consortium file the silo pins (src/consortium/consortium-file.ts).
 *
 * Checked against the old client (src/client/silo.ts of main at 507f595, which took the
 * roster from the server): the first test's attack recovered x_1 exactly; with the pinned file
 * the silo now aborts after its one GET of the consortium, naming `participants[0].publicKey`,
 * and the server has received nothing from it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agree } from '../../crypto/key-agreement.js';
import { applyMask } from '../../crypto/prg.js';
import { systemRandom } from '../../crypto/random-bytes.js';
import { combineShares } from '../../crypto/shamir.js';
import { type SigningKeyPair, signingKeyPairFromSeed } from '../../crypto/signature.js';
import { type ClientState, clientHandle, clientStart, createClient } from '../../protocol/client.js';
import { decodeClientMessage, decodeServerMessage, encodeClientMessage } from '../../protocol/codec.js';
import type { RoundConfig } from '../../protocol/config.js';
import type { AdvertiseKeys, ClientMessage, MaskedInput, RoundContext } from '../../protocol/messages.js';
import { SiloHttp } from '../../src/client/http.js';
import { roundContextOf, runSilo } from '../../src/client/silo.js';
import { ConsortiumMismatchError } from '../../src/consortium/consortium-file.js';
import { consortiumBodyOf, consortiumFileOf } from '../../src/fl/consortium-of-run.js';
import type { Learner } from '../../src/fl/learner/learner.js';
import {
  initialModel,
  localUpdate,
  networkedLearner,
  networkedRun,
  siloInput,
} from '../../src/fl/networked.js';
import type { ExperimentConfig } from '../../src/records/config.js';
import { injectFetch } from '../client/_inject.js';
import { tempJournal } from '../client/_journal.js';
import { adminInject, type Harness, harness, siloInject } from '../server/_harness.js';

const config: ExperimentConfig = {
  silos: 4,
  rounds: 1,
  data: {
    dataset: 'synthetic',
    trainSize: 80,
    testSize: 30,
    synthetic: { features: 4, classes: 3, examples: 200 },
  },
  model: { kind: 'mlp', hidden: [4] },
  training: { epochs: 1, batchSize: 16 },
};
const VICTIM = 1;
const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');
const run = networkedRun(config, 1);
/** The keys the consortium agreed to out of band. */
const genuine = Array.from({ length: 4 }, (_, i) => signingKeyPairFromSeed(new Uint8Array(32).fill(i + 1)));

let learner: Learner;
beforeAll(async () => {
  learner = await networkedLearner(config, { backend: 'cpu' });
});
afterAll(async () => {
  await learner.close();
});

/** A fake peer the server drives with a key it controls. */
class FakePeer {
  state: ClientState;
  readonly deps = { random: systemRandom() };
  advert?: AdvertiseKeys;
  constructor(
    readonly h: Pick<Harness, 'app' | 'clock' | 'keys'>,
    readonly id: number,
    roundConfig: RoundConfig,
    context: RoundContext,
  ) {
    // The attacker's peers sign the victim's round context (the server knows M0 and the
    // weights), so the victim's check of its peers' contexts (issue 27) passes.
    this.state = createClient(
      roundConfig,
      id,
      h.keys[id]!.secretKey,
      new Uint32Array(roundConfig.length),
      context,
    );
  }
  async post(m: ClientMessage) {
    const r = await siloInject(
      this.h,
      this.id,
      'POST',
      `/v1/consortia/c1/rounds/1/${m.type}`,
      encodeClientMessage(m),
    );
    if (r.statusCode !== 202) throw new Error(`${m.type}: ${r.statusCode} ${r.body}`);
  }
  async start() {
    const s = clientStart(this.state, this.deps);
    this.state = s.state;
    if (s.reply.type !== 'send') throw new Error('no advert');
    this.advert = s.reply.message as AdvertiseKeys;
    await this.post(s.reply.message);
  }
  async step(kind: 'keys' | 'shares') {
    const got = await siloInject(this.h, this.id, 'GET', `/v1/consortia/c1/rounds/1/inbox/${kind}`);
    if (got.statusCode !== 200) throw new Error(`inbox ${kind}: ${got.statusCode} ${got.body}`);
    const s = await clientHandle(this.state, decodeServerMessage(new Uint8Array(got.rawPayload)), this.deps);
    this.state = s.state;
    if (s.reply.type !== 'send') throw new Error(`${kind}: ${JSON.stringify(s.reply)}`);
    await this.post(s.reply.message);
  }
}

async function stageOf(h: Harness): Promise<string> {
  return (await adminInject(h, 'GET', '/v1/consortia/c1/rounds/1')).json().stage;
}
async function untilStage(h: Harness, stage: string) {
  for (let k = 0; k < 2000; k++) {
    if ((await stageOf(h)) === stage) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`round 1 never reached ${stage} (it is ${await stageOf(h)})`);
}

/**
 * The malicious server: consortium c1 with the victim's key at its id and its own keys
 * elsewhere; round 1 open. Starts the victim (pinned to the genuine file, or unpinned).
 */
async function maliciousServer(pinned: boolean, o: { genuineRoster?: boolean; m0?: Float32Array } = {}) {
  const h0 = await harness({ n: 4 });
  // The served roster: the attacker's keys (the harness's) except the victim's genuine one.
  const served: SigningKeyPair[] = o.genuineRoster
    ? genuine
    : h0.keys.map((k, i) => (i === VICTIM ? genuine[VICTIM]! : k));
  const h = { ...h0, keys: served };
  const file = consortiumFileOf(
    run,
    'c1',
    genuine.map((k) => hex(k.publicKey)),
    learner,
  );
  const forged = { ...file, participants: served.map((k) => ({ publicKey: hex(k.publicKey) })) };
  const created = await adminInject(
    h0,
    'POST',
    '/v1/consortia',
    consortiumBodyOf(forged, undefined, { schedule: false }),
  );
  expect(created.statusCode, created.body).toBe(201);
  const m0 = o.m0 ?? initialModel(run, learner);
  expect((await adminInject(h0, 'PUT', '/v1/consortia/c1/model', new Uint8Array(m0.buffer))).statusCode).toBe(
    204,
  );
  expect((await adminInject(h0, 'POST', '/v1/consortia/c1/rounds')).statusCode).toBe(201);

  const adapter = injectFetch(h0.app);
  const sentMasks: Uint8Array[] = [];
  const fetchSpy: typeof fetch = async (input, init) => {
    if (
      init?.method === 'POST' &&
      String(input).endsWith('/rounds/1/mask') &&
      init.body instanceof Uint8Array
    )
      sentMasks.push(Uint8Array.from(init.body));
    return adapter.fetch(input, init);
  };
  const http = new SiloHttp({
    server: 'http://service.test',
    consortium: 'c1',
    silo: VICTIM,
    secretKey: genuine[VICTIM]!.secretKey,
    fetch: fetchSpy,
    now: h0.clock.now,
  });
  const victim = runSilo({
    journal: tempJournal(),
    http,
    run,
    learner,
    secretKey: genuine[VICTIM]!.secretKey,
    // The test recomputes the victim's update offline, with the engine's seed.
    deterministicTraining: true,
    firstRound: 1,
    lastRound: 1,
    poll: { initialMs: 5, maxMs: 20 },
    waitTimeoutMs: 20_000,
    ...(pinned ? { pinned: file } : { insecureUnpinned: true }),
  });
  victim.catch(() => {});
  const roundConfig: RoundConfig = {
    session: 'c1',
    round: 1,
    threshold: file.threshold,
    length: file.parameters + 1,
    roster: served.map((k) => k.publicKey),
    corruptTolerated: file.corruptSilos,
  };
  const peers = [0, 2, 3].map((i) => new FakePeer(h, i, roundConfig, roundContextOf(run, m0)));
  return { h0, file, victim, adapter, sentMasks, peers, m0 };
}

describe('security: roster substitution by a malicious server', () => {
  it('an unpinned silo (--insecure-unpinned, the old behaviour) sends shares to fake peers and the server unmasks its input', async () => {
    const { h0, file, sentMasks, peers, m0 } = await maliciousServer(false);
    try {
      for (const p of peers) await p.start();
      await untilStage(h0, 'share');
      for (const p of peers) await p.step('keys');
      await untilStage(h0, 'mask');
      for (const p of peers) await p.step('shares');
      for (let k = 0; k < 2000 && sentMasks.length === 0; k++) await new Promise((r) => setTimeout(r, 10));
      expect(sentMasks).toHaveLength(1);
      const y = (decodeClientMessage(sentMasks[0]!) as MaskedInput).masked;

      // The fake peers decrypted the victim's shares: t of b_1 and t of s_1^SK.
      const held = peers.map((p) => p.state.held!.get(VICTIM)!);
      expect(held).toHaveLength(file.threshold);
      const b = await combineShares(held.map((x) => x.seedShare));
      const sk = await combineShares(held.map((x) => x.keyShare));
      const x = y.slice();
      applyMask(x, b, { kind: 'self', session: 'c1', round: 1, owner: VICTIM, vector: 0 }, -1);
      for (const p of peers) {
        const seed = agree(sk, p.advert!.sPK);
        const label = { kind: 'pair' as const, session: 'c1', round: 1, a: VICTIM, b: p.id, vector: 0 };
        applyMask(x, seed, label, VICTIM < p.id ? -1 : 1);
      }
      // The victim's actual input x_1 = (ŵ_1Δ_1, ŵ_1), recomputed from its data.
      const update = await localUpdate(run, learner, VICTIM, 1, m0);
      const truth = siloInput(run, VICTIM, update, { ...file.encoding, n: 4 });
      expect(x).toEqual(truth);
    } finally {
      await h0.close();
    }
  }, 60_000);

  it('a pinned silo compares the roster with its consortium file and aborts before sending anything', async () => {
    const { h0, victim, adapter, sentMasks } = await maliciousServer(true);
    try {
      await expect(victim).rejects.toThrow(ConsortiumMismatchError);
      await expect(victim).rejects.toMatchObject({ field: 'participants[0].publicKey' });
      await expect(victim).rejects.toThrow(
        /^consortium file mismatch at participants\[0\]\.publicKey: the pinned consortium file says "[0-9a-f]{64}", the server serves "[0-9a-f]{64}"; refusing to take part \(nothing was sent\)$/,
      );
      // One signed read of the consortium; no round read, no advertisement, no share, no input.
      expect(adapter.log).toEqual([{ method: 'GET', path: '/v1/consortia/c1', status: 200 }]);
      expect(sentMasks).toEqual([]);
      expect(await stageOf(h0)).toBe('advertise');
    } finally {
      await h0.close();
    }
  });

  it('with the genuine roster but another initial model, the pinned silo refuses round 1 before training or sending', async () => {
    const other = initialModel(run, learner).map((x) => x + 0.5);
    const { h0, victim, adapter } = await maliciousServer(true, { genuineRoster: true, m0: other });
    try {
      await expect(victim).rejects.toMatchObject({
        name: 'SiloSetupError',
        field: 'model.initialWeightsDigest',
      });
      expect(adapter.log.map((l) => `${l.method} ${l.path}`)).toEqual([
        'GET /v1/consortia/c1',
        'GET /v1/consortia/c1/rounds/1',
        'GET /v1/consortia/c1/models/0',
      ]);
    } finally {
      await h0.close();
    }
  });
});
