/**
 * Attack R1 (c), issue 32: round replay to restarted silos, exact with minibatches.
 *
 * Round 1 runs through Unmasking (the server decodes S₀₁₂ = Σ_{0,1,2} w_iΔ_i(M0)); then the server
 * answers silos 1 and 2 with an error, and their processes stop. The operator restarts them with
 * `--first-round 1`, as docs/networked.md says to, and the server replays round 1 to them alone
 * (a fresh service with the same consortium): they train round 1 again from M0, and the server
 * decodes S₁₂. With training randomness taken from (seed, round, silo) alone the minibatch order
 * is the same, and S₀₁₂ − S₁₂ is w₀Δ₀.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localUpdate, networkedLearner, networkedRun } from '../../src/engine/networked.js';
import type { Learner } from '../../src/learner/learner.js';
import { adminInject } from '../server/_harness.js';
import {
  attackerEstimate,
  type Decoded,
  decodedSum,
  json,
  openService,
  relativeError,
  replayConfig,
  roundMean,
  show,
  stageOf,
  startSilo,
  until,
} from './_replay.js';

const run = networkedRun(replayConfig(8), 1);
let learner: Learner;
beforeAll(async () => {
  learner = await networkedLearner(run.config, { backend: 'cpu' });
});
afterAll(async () => {
  await learner.close();
});

describe('security: round replay to restarted silos (R1 c)', () => {
  it('silos 1 and 2 stop after Unmasking, restart with --first-round 1, and round 1 is replayed to them alone', async () => {
    const first = await openService(run, learner);
    const replay = await openService(run, learner);
    const unmasked = new Set<number>();
    try {
      // After its Unmasking response, silo 1's and silo 2's next request gets an error: they stop.
      const cut = {
        before: async (silo: number, method: string, path: string) => {
          if (silo !== 0 && unmasked.has(silo))
            return json(
              { code: 'FEDSCORE_ERR_VALIDATION', message: 'the request does not match the schema' },
              400,
            );
          if (method === 'POST' && path === '/v1/consortia/c1/rounds/1/unmask') unmasked.add(silo);
          return undefined;
        },
      };
      const round1 = [0, 1, 2].map((i) => startSilo(first, run, learner, i, cut));
      await until('round 1 decoded', async () => (await stageOf(first, 1)) === 'reporting');
      const s012 = (await decodedSum(first, 1))!;
      const before = await Promise.all(round1.slice(1));
      // The restarted silos 1 and 2 (same keys, same key folder) against the replayed round 1.
      const restarted = [1, 2].map((i) => startSilo(replay, run, learner, i, {}, { firstRound: 1 }));
      const advertised = (s: number) =>
        replay.log.some(
          (x) => x.silo === s && x.path === '/v1/consortia/c1/rounds/1/advertise' && x.status === 202,
        );
      const settled = Promise.all(restarted);
      let done = false;
      settled.then(() => {
        done = true;
      });
      await until(
        'silos 1 and 2 to advertise again, or to stop',
        () => done || (advertised(1) && advertised(2)),
      );
      let s12: Decoded | undefined;
      if (!done) {
        expect(
          (await adminInject(replay.h, 'POST', '/v1/consortia/c1/rounds/1/advance', { stage: 'advertise' }))
            .statusCode,
        ).toBe(200);
        await until('the replayed round 1 decoded', async () =>
          ['reporting', 'scored', 'aborted'].includes(await stageOf(replay, 1)),
        );
        s12 = await decodedSum(replay, 1);
      }
      const outcomes = await settled;
      const delta0 = await localUpdate(run, learner, 0, 1, first.m0);
      const estimate = attackerEstimate([s012], s12 ? [s12] : []);
      const err = relativeError(estimate, delta0);
      const baseline = relativeError(roundMean(s012), delta0);
      console.log(
        `R1 (c): first run ${JSON.stringify(before.map(show))}, restarted ${JSON.stringify(outcomes.map(show))}; relative error of the attacker's Δ₀ ${err.toExponential(2)} (round mean ${baseline.toExponential(2)})`,
      );
      await Promise.all(round1);
      expect(err).toBeGreaterThanOrEqual(baseline);
    } finally {
      await first.close();
      await replay.close();
    }
  }, 60_000);
});
