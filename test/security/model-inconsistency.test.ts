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
 * Against the old code (dc1119c) this file's first version printed, for (a),
 * ATTACK_RESULT_PLACEHOLDER
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RoundOutcome } from '../../src/client/silo.js';
import type { Learner } from '../../src/fl/learner.js';
import { localUpdate, networkedLearner, networkedRun } from '../../src/fl/networked.js';
import { adminInject } from '../server/_harness.js';
import {
  deadModel,
  json,
  matching,
  modelResponse,
  SPLIT_CONFIG,
  splitServer,
  untilStage,
  weightedSumOf,
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

/** Silo 0's weight as it sends it (ŵ_0 = w_0 / max w). */
const w0 = run.weights[TARGET]! / run.weightScale;

/** Rewrites a round view (or a list of them) for round `r`: baseModel → `base`. */
async function renumber(served: Response, r: number, base: number): Promise<Response> {
  const v = (await served.clone().json()) as Record<string, unknown> & { rounds?: Record<string, unknown>[] };
  const fix = (x: Record<string, unknown>) => (x.round === r ? { ...x, baseModel: base } : x);
  return json(v.rounds ? { ...v, rounds: v.rounds.map(fix) } : fix(v), served.status);
}

describe('security: model inconsistency (Pasquini et al. 2022)', () => {
  it('(a) round 1 renumbered: silos 1–3 get a dead MLP as "version 5"', async () => {
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
      const stage = await untilStage(s.h, 1, ['reporting', 'scored', 'aborted']);
      const outcomes = await Promise.all(s.silos);
      const sum = await weightedSumOf(s.h, 1);
      const update = await localUpdate(run, learner, TARGET, 1, s.m0);
      const hits = matching(sum, update, w0, 1e-6);
      console.log(
        '(a)',
        stage,
        JSON.stringify(outcomes.map(show)),
        `${hits}/${sum.length} coordinates equal ŵ_0Δ_0`,
      );
      expect(hits).toBeGreaterThanOrEqual(90);
    } finally {
      await s.close();
    }
  }, 120_000);

  it('(b) round 2 with the honest version number: silos 1–3 get a dead M_1', async () => {
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
      const stage = await untilStage(s.h, 2, ['reporting', 'scored', 'aborted']);
      const outcomes = await Promise.all(s.silos);
      const served1 = (await adminInject(s.h, 'GET', '/v1/consortia/c1/models/1')).rawPayload;
      const real1 = new Float32Array(Uint8Array.from(served1).buffer);
      const sum = await weightedSumOf(s.h, 2);
      const update = await localUpdate(run, learner, TARGET, 2, real1);
      const hits = matching(sum, update, w0, 1e-6);
      console.log(
        '(b)',
        stage,
        JSON.stringify(outcomes.map(show)),
        `${hits}/${sum.length} coordinates equal ŵ_0Δ_0`,
      );
      expect(hits).toBeGreaterThanOrEqual(90);
    } finally {
      await s.close();
    }
  }, 120_000);
});

function show(o: RoundOutcome[] | Error): unknown {
  return o instanceof Error ? `${o.name}: ${o.message}` : o.map((x) => `${x.round}:${x.status}`);
}
