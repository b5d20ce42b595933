/**
 * Attack family: model inconsistency (issue 27, A2; Pasquini et al., CCS 2022, "Eluding Secure
 * Aggregation in Federated Learning via Model Inconsistency").
 *
 * A malicious server serves the target silo 0 the true model and silos 1–3 a "dead" MLP (its
 * first layer's weights and biases 0: every ReLU is off, every gradient but the output bias is
 * 0, and Adam's step is 0): secure aggregation then sums silo 0's update with three updates that
 * are 0 on 96 of the 99 coordinates, and the published Σ w_iΔ_i is silo 0's update.
 *  (a) round 1: the server says round 1's base model is version 5 and serves the dead model as
 *      version 5 to silos 1–3 (the old silo checked the pinned digest only for version 0);
 *  (b) round 2: the honest version number (1) with other bytes (the old silo never checked M_r
 *      for r ≥ 2).
 *
 * Against the old code (dc1119c) this file's first version (commit "test/security/model-
 * inconsistency: A2 … against dc1119c") ran both forms to the end and printed
 *   (a) reporting [["1:reported"],["1:reported"],["1:reported"],["1:reported"]] 96/99 coordinates equal ŵ_0Δ_0
 *   (b) reporting [[…"2:reported"] ×4] 96/99 coordinates equal ŵ_0Δ_0
 * i.e. every silo reported normally and the published Σ w_iΔ_i equalled silo 0's weighted update
 * (recomputed offline) to 1e-6 on every coordinate but the 3 output biases.
 *
 * After the fix (src/client/model-chain.ts, protocol/round-context.ts):
 *  (a) silos 1–3 refuse round 1 before advertising: BASE_MODEL_RENUMBERED naming round 1;
 *  (b) silos 1–3 derive M_1 = M_0 + Σ w_iΔ_i / Σ w_i of round 1 themselves and refuse the served
 *      bytes: MODEL_NOT_IN_CHAIN naming round 2;
 *  (c) silos that pass their own check on different models (here silos 1–3 run unpinned and are
 *      served the dead model as M_0) sign different model digests in AdvertiseKeys: every silo
 *      aborts round 1 with MODEL_MISMATCH naming a peer, before any share is dealt;
 *  (d) the same split caught in ConsistencyCheck, in process (protocol/client.ts): a silo whose
 *      key list carries only peers with its own context but whose unmasking request relays a
 *      consistency signature over another model digest aborts with MODEL_MISMATCH.
 * In none of them is a sum published.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConsistencyCheck, RoundContext } from '../../protocol/messages.js';
import { modelContextDigest, roundContext } from '../../protocol/round-context.js';
import { ModelChainError } from '../../src/client/model-chain.js';
import type { RoundOutcome } from '../../src/client/silo.js';
import type { Learner } from '../../src/fl/learner/learner.js';
import { networkedLearner, networkedRun } from '../../src/fl/networked.js';
import { adminInject } from '../server/_harness.js';
import { parties, resign, runHonestServer } from './_round.js';
import {
  deadModel,
  json,
  modelResponse,
  SPLIT_CONFIG,
  splitServer,
  untilStage,
  type weightedSumOf,
} from './_split-model.js';

const run = networkedRun(SPLIT_CONFIG, 1);
const TARGET = 0;
const FAKE_VERSION = 5;
let learner: Learner;
beforeAll(async () => {
  learner = await networkedLearner(SPLIT_CONFIG, { backend: 'cpu' });
});
afterAll(async () => {
  await learner.close();
});

/** Rewrites a round view (or a list of them) for round `r`: baseModel → `base`. */
async function renumber(served: Response, r: number, base: number): Promise<Response> {
  const v = (await served.clone().json()) as Record<string, unknown> & { rounds?: Record<string, unknown>[] };
  const fix = (x: Record<string, unknown>) => (x.round === r ? { ...x, baseModel: base } : x);
  return json(v.rounds ? { ...v, rounds: v.rounds.map(fix) } : fix(v), served.status);
}

/** The round's aggregate is not published. */
async function noSum(s: { h: Parameters<typeof weightedSumOf>[0] }, r: number) {
  const got = await adminInject(s.h, 'GET', `/v1/consortia/c1/rounds/${r}/aggregate/sum`);
  expect(got.statusCode).not.toBe(200);
}

/** Closes round r's collecting stage by hand (the operator's advance): with < t silos it aborts. */
async function advance(s: { h: Parameters<typeof weightedSumOf>[0] }, r: number) {
  const a = await adminInject(s.h, 'POST', `/v1/consortia/c1/rounds/${r}/advance`, { stage: 'advertise' });
  expect(a.statusCode, a.body).toBe(200);
}

describe('security: model inconsistency (Pasquini et al. 2022)', () => {
  it('(a) round 1 renumbered: silos 1–3 refuse the base model version 5 (BASE_MODEL_RENUMBERED, round 1) before advertising', async () => {
    let dead: Float32Array | undefined;
    const s = await splitServer(run, learner, async (silo, method, path, served) => {
      if (silo === TARGET || method !== 'GET') return undefined;
      if (path === '/v1/consortia/c1/rounds/1' || path === '/v1/consortia/c1/rounds')
        return renumber(served, 1, FAKE_VERSION);
      if (path === `/v1/consortia/c1/models/${FAKE_VERSION}`) return modelResponse(dead!);
      return undefined;
    });
    dead = deadModel(s.m0);
    try {
      const refused = await Promise.all(s.silos.slice(1));
      for (const e of refused) {
        expect(e).toBeInstanceOf(ModelChainError);
        expect(e).toMatchObject({ code: 'BASE_MODEL_RENUMBERED', round: 1 });
        expect((e as Error).message).toBe(
          'BASE_MODEL_RENUMBERED: round 1: the service says the base model is version 5; the published rounds make it version 0 (the latest round before 1 with a sum, or 0)',
        );
      }
      // Only silo 0 advertised; the operator closes the stage and the round aborts below t.
      await advance(s, 1);
      expect(await untilStage(s.h, 1, ['aborted'])).toBe('aborted');
      const target = await s.silos[TARGET]!;
      // The silo's outcome: no key list came, the round is aborted.
      expect(show(target)).toEqual([expect.stringMatching(/^1:(dropped|aborted)$/)]);
      await noSum(s, 1);
    } finally {
      await s.close();
    }
  }, 120_000);

  it('(b) round 2 with the honest version number: silos 1–3 derive M_1 and refuse other bytes (MODEL_NOT_IN_CHAIN, round 2)', async () => {
    let m1: Float32Array | undefined;
    const s = await splitServer(
      run,
      learner,
      async (silo, method, path, served) => {
        if (silo === TARGET || method !== 'GET' || path !== '/v1/consortia/c1/models/1') return undefined;
        m1 ??= new Float32Array(Uint8Array.from(new Uint8Array(await served.clone().arrayBuffer())).buffer);
        return modelResponse(deadModel(m1));
      },
      { lastRound: 2 },
    );
    try {
      await untilStage(s.h, 1, ['scored']);
      expect((await adminInject(s.h, 'POST', '/v1/consortia/c1/rounds')).statusCode).toBe(201);
      const refused = await Promise.all(s.silos.slice(1));
      for (const e of refused) {
        expect(e).toBeInstanceOf(ModelChainError);
        expect(e).toMatchObject({ code: 'MODEL_NOT_IN_CHAIN', round: 2 });
        expect((e as Error).message).toMatch(
          /^MODEL_NOT_IN_CHAIN: round 2: the served model version 1 \(digest [0-9a-f]{64}\) is not the one derived from M_0 and the published aggregates \(digest [0-9a-f]{64}\); refusing to train on it$/,
        );
      }
      await advance(s, 2);
      expect(await untilStage(s.h, 2, ['aborted'])).toBe('aborted');
      // Dropped or aborted, depending on whether its poll of the inbox saw the stage close or the
      // round abort first; either way no sum exists (noSum).
      expect(show(await s.silos[TARGET]!)).toEqual([
        '1:reported',
        expect.stringMatching(/^2:(dropped|aborted)$/),
      ]);
      await noSum(s, 2);
    } finally {
      await s.close();
    }
  }, 120_000);

  it('(c) a split view each silo accepts (silos 1–3 unpinned, served a dead M_0): every silo aborts round 1 with MODEL_MISMATCH at the key list', async () => {
    let dead: Float32Array | undefined;
    const s = await splitServer(
      run,
      learner,
      (silo, method, path) =>
        silo !== TARGET && method === 'GET' && path === '/v1/consortia/c1/models/0'
          ? modelResponse(dead!)
          : undefined,
      { unpinned: [1, 2, 3] },
    );
    dead = deadModel(s.m0);
    try {
      const outcomes = await Promise.all(s.silos);
      const dTrue = Buffer.from(modelContextDigest(s.m0)).toString('hex');
      const dDead = Buffer.from(modelContextDigest(dead)).toString('hex');
      outcomes.forEach((o, silo) => {
        expect(o).not.toBeInstanceOf(Error);
        const [r1] = o as RoundOutcome[];
        expect(r1).toMatchObject({ round: 1, status: 'aborted' });
        const mine = silo === TARGET ? dTrue : dDead;
        const theirs = silo === TARGET ? dDead : dTrue;
        expect((r1 as { detail: string }).detail).toMatch(
          new RegExp(
            `^this silo aborted: MODEL_MISMATCH \\(silo \\d signed model digest ${theirs} in AdvertiseKeys, this silo trained on ${mine}\\)$`,
          ),
        );
      });
      // Nobody dealt a share: the round never got past ShareKeys.
      expect(await adminInject(s.h, 'GET', '/v1/consortia/c1/rounds/1').then((x) => x.json().stage)).toBe(
        'share',
      );
      await noSum(s, 1);
    } finally {
      await s.close();
    }
  }, 120_000);

  it('(d) in ConsistencyCheck: a relayed signature over another model digest aborts the silo with MODEL_MISMATCH', async () => {
    const x = Uint32Array.from([1, 2, 3, 4]);
    const mine = roundContext(Float32Array.from([1, 2, 3]), [0, 1, 2, 3], [1, 1, 1, 1]);
    const other: RoundContext = { ...mine, model: modelContextDigest(Float32Array.from([0, 0, 3])) };
    const p = parties([x, x, x, x], { session: 'c1', round: 1, threshold: 3 }, 7, [mine, mine, mine, mine]);
    // Silo 3 (corrupt, with the server) advertised the round's context, so every key list passes,
    // and signs another model digest in its consistency check, which the server relays.
    const outcome = await runHonestServer(p, {
      tamper: (stage, from, m) =>
        stage === 'consistency' && from === 3 ? resign(p, m as ConsistencyCheck, { context: other }) : m,
    });
    expect(outcome).toMatchObject({ kind: 'client-abort', code: 'MODEL_MISMATCH' });
    expect((outcome as { detail: string }).detail).toMatch(
      /^silo 3 signed model digest [0-9a-f]{64} in ConsistencyCheck/,
    );
  });
});

function show(o: RoundOutcome[] | Error): unknown {
  return o instanceof Error ? `${o.name}: ${o.message}` : o.map((x) => `${x.round}:${x.status}`);
}
