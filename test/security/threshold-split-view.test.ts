/**
 * Attack family: thresholds below the active-security bound (trust issue, finding 2).
 *
 * A malicious server and one corrupt silo (silo 4) of n = 5. After every silo has sent its
 * masked input, the server shows two survivor sets: U_3 = {0, 1, 4} to silos 0–1 and
 * U_3 = {2, 3, 4} to silos 2–3. The corrupt silo signs both. With t = 3 each view gathers t
 * consistency signatures, so silos 0–1 reveal the seed shares of {0, 1, 4} and the key shares of
 * the "dropped" {2, 3}, and silos 2–3 the seed shares of {2, 3, 4} and the key shares of {0, 1};
 * with the corrupt silo's own shares the server then holds t seed shares AND t key shares of
 * every honest silo, and unmasks all four inputs.
 *
 * Bonawitz et al. 2017, §6 (active model) needs t > (n + n_C)/2 (protocol/config.ts); fedscore
 * now refuses a lower t (WEAK_THRESHOLD) unless the configuration opts in explicitly.
 */
import { describe, expect, it } from 'vitest';
import { agree } from '../../crypto/key-agreement.js';
import { applyMask } from '../../crypto/prg.js';
import { combineShares } from '../../crypto/shamir.js';
import { sign, signingKeyPairFromSeed } from '../../crypto/signature.js';
import { clientHandle } from '../../protocol/client.js';
import { signedPayload } from '../../protocol/codec.js';
import {
  defaultCorruptTolerated,
  defaultThreshold,
  isWeakRound,
  minimumThreshold,
  roundThreshold,
} from '../../protocol/config.js';
import { WeakThresholdError } from '../../protocol/errors.js';
import type {
  ConsistencyCheck,
  MaskedInput,
  ServerMessage,
  UnmaskResponse,
} from '../../protocol/messages.js';
import { NO_CONTEXT, PROTOCOL_VERSION } from '../../protocol/messages.js';
import { serverAdvance, serverHandle } from '../../protocol/server.js';
import { checkConsortium } from '../../src/client/silo.js';
import { networkedRun } from '../../src/fl/networked.js';
import type { ExperimentConfig } from '../../src/records/config.js';
import { consortiumInput, fixture } from '../server/service/_service.js';
import { type Party, parties } from './_round.js';

const siloConfig: ExperimentConfig = {
  silos: 4,
  rounds: 1,
  data: {
    dataset: 'synthetic',
    trainSize: 80,
    testSize: 30,
    synthetic: { features: 4, classes: 3, examples: 200 },
  },
};

const N = 5;
const CORRUPT = 4;
const D = 8;
const inputs = Array.from({ length: N }, (_, i) =>
  Uint32Array.from({ length: D }, (_, j) => 1000 * (i + 1) + j),
);

type AttackResult = { recovered: Map<number, Uint32Array> } | { aborted: { silo: number; code: string } };

/** The malicious server's split-view attack; returns the inputs it unmasked or the first honest abort. */
async function splitView(p: Party): Promise<AttackResult> {
  const { config } = p;
  const h = { version: PROTOCOL_VERSION, session: config.session, round: config.round };
  // Rounds 0–2 run honestly: everyone advertises, shares and sends its masked input.
  for (let i = 0; i < N; i++) {
    const { clientStart } = await import('../../protocol/client.js');
    const s = clientStart(p.clients[i]!, p.deps[i]!);
    p.clients[i] = s.state;
    if (s.reply.type === 'send') p.server = serverHandle(p.server, s.reply.message).state;
  }
  const masked = new Map<number, Uint32Array>();
  for (let k = 0; k < 2; k++) {
    const adv = await serverAdvance(p.server);
    p.server = adv.state;
    if (adv.output.type !== 'send') throw new Error('expected messages');
    for (const { to, message } of adv.output.messages) {
      const s = await clientHandle(p.clients[to]!, message, p.deps[to]!);
      p.clients[to] = s.state;
      if (s.reply.type === 'abort') return { aborted: { silo: to, code: s.reply.code } };
      if (s.reply.type !== 'send') throw new Error('expected a reply');
      if (s.reply.message.type === 'mask') masked.set(to, (s.reply.message as MaskedInput).masked);
      p.server = serverHandle(p.server, s.reply.message).state;
    }
  }
  // Round 3: two views of U_3, each completed by the corrupt silo's signature.
  const views = [
    { silos: [0, 1], survivors: [0, 1, CORRUPT], dropped: [2, 3] },
    { silos: [2, 3], survivors: [2, 3, CORRUPT], dropped: [0, 1] },
  ];
  const corruptSignature = (survivors: number[]) => {
    const body: Omit<ConsistencyCheck, 'signature'> = {
      ...h,
      sender: CORRUPT,
      type: 'consistency',
      survivors,
      context: NO_CONTEXT,
    };
    return sign(p.ids[CORRUPT]!.secretKey, signedPayload(body));
  };
  const seedShares = new Map<number, Uint8Array[]>();
  const keyShares = new Map<number, Uint8Array[]>();
  const keep = (into: Map<number, Uint8Array[]>, owner: number, share: Uint8Array) =>
    into.set(owner, [...(into.get(owner) ?? []), share]);
  for (const view of views) {
    const signatures = [{ id: CORRUPT, context: NO_CONTEXT, signature: corruptSignature(view.survivors) }];
    for (const i of view.silos) {
      const m: ServerMessage = { ...h, type: 'survivors', survivors: view.survivors };
      const s = await clientHandle(p.clients[i]!, m, p.deps[i]!);
      p.clients[i] = s.state;
      if (s.reply.type === 'abort') return { aborted: { silo: i, code: s.reply.code } };
      if (s.reply.type !== 'send') throw new Error('expected a signature');
      signatures.push({ id: i, context: NO_CONTEXT, signature: s.reply.message.signature });
    }
    signatures.sort((a, b) => a.id - b.id);
    for (const i of view.silos) {
      const m: ServerMessage = {
        ...h,
        type: 'unmask-request',
        survivors: view.survivors,
        dropped: view.dropped,
        signatures,
      };
      const s = await clientHandle(p.clients[i]!, m, p.deps[i]!);
      p.clients[i] = s.state;
      if (s.reply.type === 'abort') return { aborted: { silo: i, code: s.reply.code } };
      if (s.reply.type !== 'send') throw new Error('expected shares');
      const r = s.reply.message as UnmaskResponse;
      for (const x of r.seedShares) keep(seedShares, x.owner, x.share);
      for (const x of r.keyShares) keep(keyShares, x.owner, x.share);
    }
  }
  // The corrupt silo hands over every share it holds.
  for (const [owner, held] of p.clients[CORRUPT]!.held!) {
    keep(seedShares, owner, held.seedShare);
    keep(keyShares, owner, held.keyShare);
  }
  const recovered = new Map<number, Uint32Array>();
  for (const v of [0, 1, 2, 3]) {
    const b = await combineShares(seedShares.get(v)!.slice(0, config.threshold));
    const sk = await combineShares(keyShares.get(v)!.slice(0, config.threshold));
    const x = masked.get(v)!.slice();
    applyMask(x, b, { kind: 'self', session: config.session, round: config.round, owner: v, vector: 0 }, -1);
    for (let u = 0; u < N; u++) {
      if (u === v) continue;
      const seed = agree(sk, p.server.adverts.get(u)!.sPK);
      const label = {
        kind: 'pair' as const,
        session: config.session,
        round: config.round,
        a: v,
        b: u,
        vector: 0,
      };
      applyMask(x, seed, label, v < u ? -1 : 1);
    }
    recovered.set(v, x);
  }
  return { recovered };
}

describe('security: split survivor views against a threshold below (n + n_C)/2', () => {
  // Old behaviour (commit f34f0a2, protocol/config.ts accepting any t > n/2): with n = 5, t = 3
  // and one corrupt silo the attack below returned all four honest inputs exactly.
  it('n = 5, t = 3, n_C = 1 (the default): every honest party refuses the round with WEAK_THRESHOLD', () => {
    let error: unknown;
    try {
      parties(inputs, { session: 'split', round: 1, threshold: 3 });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(WeakThresholdError);
    expect(error).toBeInstanceOf(RangeError);
    expect((error as WeakThresholdError).code).toBe('WEAK_THRESHOLD');
    expect((error as Error).message).toMatch(/^config\.threshold: t = 3 is below ⌊\(n \+ n_C\)\/2⌋ \+ 1 = 4/);
  });

  it('t = 4 (the bound for n_C = 1, and the default ⌊2n/3⌋ + 1): the attack aborts — an honest silo sees BELOW_THRESHOLD', async () => {
    const r = await splitView(parties(inputs, { session: 'split', round: 1, threshold: 4 }));
    expect(r).toEqual({ aborted: { silo: 0, code: 'BELOW_THRESHOLD' } });
  });

  it('with the explicit weakThreshold opt-in t = 3 runs, and the attack succeeds: the opt-in is exactly this risk', async () => {
    const weak = parties(inputs, { session: 'split', round: 1, threshold: 3, weakThreshold: true });
    expect(isWeakRound(weak.config)).toBe(true);
    const r = await splitView(weak);
    expect('recovered' in r).toBe(true);
    if (!('recovered' in r)) return;
    for (const v of [0, 1, 2, 3]) expect(r.recovered.get(v)).toEqual(inputs[v]);
  });

  it('t = 3 of 5 is accepted when the round declares n_C = 0 (it then tolerates no corrupted silo)', async () => {
    const p = parties(inputs, { session: 'split', round: 1, threshold: 3, corruptTolerated: 0 });
    expect(isWeakRound(p.config)).toBe(false);
    expect(minimumThreshold(5, 0)).toBe(3);
  });

  it('the bound is tight: two disjoint honest groups, each completed by the n_C corrupt silos, reach t iff t ≤ (n + n_C)/2', () => {
    for (let n = 2; n <= 60; n++)
      for (let corrupt = 0; corrupt < n; corrupt++) {
        const tMin = minimumThreshold(n, corrupt);
        // the split needs two disjoint honest groups of t − n_C each among the n − n_C honest silos
        const splittable = (t: number) => t > corrupt && 2 * (t - corrupt) <= n - corrupt;
        expect(splittable(tMin)).toBe(false);
        if (tMin - 1 > corrupt) expect(splittable(tMin - 1)).toBe(true);
        expect(tMin).toBeGreaterThan(corrupt); // the corrupted silos alone never reach t
      }
  });

  it('defaults: n_C = ⌈n/3⌉ − 1 and t = ⌊2n/3⌋ + 1 meet the bound for every n', () => {
    for (let n = 2; n <= 255; n++) {
      const corrupt = defaultCorruptTolerated(n);
      expect(3 * corrupt).toBeLessThan(n);
      expect(3 * (corrupt + 1)).toBeGreaterThanOrEqual(n);
      expect(defaultThreshold(n)).toBeGreaterThanOrEqual(minimumThreshold(n, corrupt));
    }
  });

  it('a round of k < n participants tolerates min(n_C, k − 1) of them and raises t to its bound', () => {
    // n = 10 silos, n_C = 3: a round of 5 selected silos may hold all 3 corrupted ones
    expect(roundThreshold(5, { corruptSilos: 3 })).toBe(5); // ⌊(5 + 3)/2⌋ + 1
    expect(roundThreshold(5, { corruptSilos: 3, weakThreshold: true })).toBe(4); // ⌊2·5/3⌋ + 1, ≥ majority
    expect(roundThreshold(10, { corruptSilos: 3 })).toBe(7);
    expect(roundThreshold(3, { threshold: 2, corruptSilos: 3 })).toBe(3); // n_C(3) = 2 → t = 3
    expect(roundThreshold(10, { threshold: 9, corruptSilos: 3 })).toBe(9);
  });

  it('the service refuses such a consortium (INVALID_CONSORTIUM, WEAK_THRESHOLD text) unless allowWeakThreshold, then shows it', async () => {
    const f = await fixture({ consortium: false });
    try {
      // n = 4 with n_C = 2 needs t ≥ ⌊(4 + 2)/2⌋ + 1 = 4
      const body = { ...consortiumInput(f.keys, 3), corruptSilos: 2 };
      await expect(f.service.createConsortium(body)).rejects.toMatchObject({
        code: 'FEDSCORE_ERR_INVALID_CONSORTIUM',
        detail: expect.stringMatching(
          /^threshold: t = 3 is below ⌊\(n \+ n_C\)\/2⌋ \+ 1 = 4 .*\(allowWeakThreshold\)$/,
        ),
      });
      const weak = await f.service.createConsortium({ ...body, allowWeakThreshold: true });
      expect(weak).toMatchObject({ threshold: 3, corruptSilos: 2, minimumThreshold: 4, weakThreshold: true });
      const safe = await f.service.createConsortium({ ...consortiumInput(f.keys, 3), id: 'c2' });
      expect(safe).toMatchObject({
        threshold: 3,
        corruptSilos: 1,
        minimumThreshold: 3,
        weakThreshold: false,
      });
    } finally {
      await f.close();
    }
  });

  it('a silo checks the threshold against its own n_C, not the server’s word (SiloSetupError threshold)', () => {
    const run = networkedRun(siloConfig, 1);
    const key = new Uint8Array(32).fill(9);
    const view = {
      id: 'c1',
      participants: Array.from({ length: 4 }, (_, i) => ({
        publicKey: Buffer.from(
          signingKeyPairFromSeed(i === 0 ? key : new Uint8Array(32).fill(i)).publicKey,
        ).toString('hex'),
      })),
      threshold: 2,
      corruptSilos: 0, // the server claims n_C = 0, which would allow t = 3 … and t = 2 is still refused
      model: { name: 'mlp', parameters: 10 },
      testSetDigest: run.testSetDigest,
      encoding: { clip: 1, weightRange: 1 },
      convention: 'fedavg' as const,
    };
    expect(() => checkConsortium(view, run, 0, key, 10)).toThrow(
      /^threshold: t = 2 is below ⌊\(n \+ n_C\)\/2⌋ \+ 1 = 3/,
    );
    expect(() => checkConsortium({ ...view, threshold: 3 }, run, 0, key, 10)).not.toThrow();
    const weakRun = networkedRun(
      { ...siloConfig, secureAggregation: { threshold: 3, weakThreshold: true } },
      1,
    );
    expect(weakRun.weakThreshold).toBe(true);
    expect(() => checkConsortium(view, weakRun, 0, key, 10)).not.toThrow();
  });
});
