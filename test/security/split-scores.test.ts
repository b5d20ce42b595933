/**
 * Attack family: split views of the scores (issue 27, A1 (ii), the agreement half). With
 * score-weighted aggregation each silo computes every selected silo's weight from the published
 * `GET …/scores`, which the server does not sign. A malicious server serves the target silo 0
 * the true scores and silos 1–3 scores where silo 0 leads and everyone else ties last: each of
 * silos 1–3 then computes weight (s − min)/mean = 0 for itself, while silo 0 sees nothing
 * unusual — and the published Σ w_iΔ_i is silo 0's weighted update alone.
 *
 * Against the old code (dc1119c) this file's attack, run with `expect(hits).toBe(99)` in place
 * of the abort checks, printed
 *   OLD reporting [["1:reported","2:reported"] ×4] Σw = 1 99/99 coordinates equal Σw·Δ_0
 * i.e. every silo reported, silos 1–3 had sent weight 0, and the published Σ w_iΔ_i was silo 0's
 * update (recomputed offline) on all 99 coordinates to 1e-6.
 * After the fix each silo signs the digest of the round's weight vector (the plan's selected ids
 * and weights, protocol/round-context.ts) in AdvertiseKeys and ConsistencyCheck: every silo
 * aborts round 2 at the key list with WEIGHTS_MISMATCH naming a peer, and no sum is published.
 * (What the same lie served to every silo does — weights that agree and still isolate a silo —
 * is the weight floor's part of issue 27.)
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RoundOutcome } from '../../src/client/silo.js';
import type { Learner } from '../../src/fl/learner/learner.js';
import { networkedLearner, networkedRun } from '../../src/fl/networked.js';
import type { ExperimentConfig } from '../../src/records/config.js';
import { adminInject } from '../server/_harness.js';
import { json, SPLIT_CONFIG, splitServer, untilStage } from './_split-model.js';

const config: ExperimentConfig = {
  ...SPLIT_CONFIG,
  strategy: { name: 'score-weighted', score: 'ee', clientsPerRound: 4 } as ExperimentConfig['strategy'],
};
const run = networkedRun(config, 1);
const TARGET = 0;
let learner: Learner;
beforeAll(async () => {
  learner = await networkedLearner(config, { backend: 'cpu' });
});
afterAll(async () => {
  await learner.close();
});

/** Every scheme's scores of every round: the target leads, the others tie last. */
async function isolating(served: Response): Promise<Response> {
  const v = (await served.clone().json()) as { rounds: { schemes: Record<string, (number | null)[]> }[] };
  for (const r of v.rounds)
    for (const k of Object.keys(r.schemes))
      r.schemes[k] = r.schemes[k]!.map((_, i) => (i === TARGET ? 1 : 0));
  return json(v, served.status);
}

describe('security: split views of the scores (issue 27, A1 (ii))', () => {
  it('silos 1–3 served scores that zero their own weights: every silo aborts round 2 with WEIGHTS_MISMATCH', async () => {
    const s = await splitServer(
      run,
      learner,
      (silo, method, path, served) =>
        silo !== TARGET && method === 'GET' && path === '/v1/consortia/c1/scores'
          ? isolating(served)
          : undefined,
      { lastRound: 2 },
    );
    try {
      await untilStage(s.h, 1, ['scored']);
      expect((await adminInject(s.h, 'POST', '/v1/consortia/c1/rounds')).statusCode).toBe(201);
      const outcomes = await Promise.all(s.silos);
      outcomes.forEach((o) => {
        expect(o).not.toBeInstanceOf(Error);
        const [r1, r2] = o as RoundOutcome[];
        expect(r1).toMatchObject({ round: 1, status: 'reported' });
        expect(r2).toMatchObject({ round: 2, status: 'aborted' });
        expect((r2 as { detail: string }).detail).toMatch(
          /^this silo aborted: WEIGHTS_MISMATCH \(silo \d signed weight-vector digest [0-9a-f]{64} in AdvertiseKeys, this silo's is [0-9a-f]{64}\)$/,
        );
      });
      const sum = await adminInject(s.h, 'GET', '/v1/consortia/c1/rounds/2/aggregate/sum');
      expect(sum.statusCode).not.toBe(200);
    } finally {
      await s.close();
    }
  }, 120_000);
});
