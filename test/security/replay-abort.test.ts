/**
 * Attack R1 (a), issue 32: round replay on one base model after a visible abort.
 *
 * The server runs round 1 through Unmasking — it decodes S₀₁₂ = Σ_{0,1,2} w_iΔ_i(M0) — then tells
 * the silos the round aborted (RECONSTRUCTION_FAILED, no result). Round 2 starts from M0 again; the
 * server holds silo 0's advertisement until the stage closes (a "late" dropout) and decodes S₁₂.
 * With full-batch training S₀₁₂ − S₁₂ is w₀Δ₀.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { localUpdate, networkedLearner, networkedRun } from '../../src/engine/networked.js';
import type { Learner } from '../../src/learner/learner.js';
import { adminInject } from '../server/_harness.js';
import {
  attackerEstimate,
  type Decoded,
  decodedSum,
  openService,
  relativeError,
  replayConfig,
  rewriteHistory,
  roundMean,
  show,
  stageOf,
  startSilo,
  until,
} from './_replay.js';

const run = networkedRun(replayConfig(32), 1);
let learner: Learner;
beforeAll(async () => {
  learner = await networkedLearner(run.config, { backend: 'cpu' });
});
afterAll(async () => {
  await learner.close();
});

describe('security: round replay after a visible abort (R1 a)', () => {
  it('the server decodes round 1, says it aborted, and replays M0 without silo 0', async () => {
    const svc = await openService(run, learner);
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    const layer = {
      before: async (silo: number, method: string, path: string) => {
        // Silo 0's round-2 advertisement is held until the stage has closed without it.
        if (silo === 0 && method === 'POST' && path === '/v1/consortia/c1/rounds/2/advertise') await released;
        return undefined;
      },
      after: (_silo: number, method: string, path: string, served: Response) =>
        method === 'GET' ? rewriteHistory(path, served) : undefined,
    };
    try {
      const silos = [0, 1, 2].map((i) => startSilo(svc, run, learner, i, layer, { lastRound: 2 }));
      // Round 1 runs through Unmasking: the service decodes S₀₁₂.
      await until('round 1 decoded', async () => (await stageOf(svc, 1)) === 'reporting');
      const s012 = (await decodedSum(svc, 1))!;
      // The operator side closes round 1 and opens round 2 (the silos see round 1 aborted).
      expect(
        (await adminInject(svc.h, 'POST', '/v1/consortia/c1/rounds/1/advance', { stage: 'reporting' }))
          .statusCode,
      ).toBe(200);
      expect((await adminInject(svc.h, 'POST', '/v1/consortia/c1/rounds')).statusCode).toBe(201);
      const advertised = (s: number) =>
        svc.log.some(
          (x) => x.silo === s && x.path === '/v1/consortia/c1/rounds/2/advertise' && x.status === 202,
        );
      const settled = Promise.all(silos);
      let done = false;
      settled.then(() => {
        done = true;
      });
      await until(
        'silos 1 and 2 to advertise in round 2, or every silo to stop',
        () => done || (advertised(1) && advertised(2)),
      );
      let s12: Decoded | undefined;
      if (!done) {
        expect(
          (await adminInject(svc.h, 'POST', '/v1/consortia/c1/rounds/2/advance', { stage: 'advertise' }))
            .statusCode,
        ).toBe(200);
        release();
        await until('round 2 decoded', async () =>
          ['reporting', 'scored', 'aborted'].includes(await stageOf(svc, 2)),
        );
        s12 = await decodedSum(svc, 2);
      }
      release();
      const outcomes = await settled;
      // What the attacker holds: S₀₁₂ and, if it got it, S₁₂, both over M0.
      const delta0 = await localUpdate(run, learner, 0, 1, svc.m0);
      const estimate = attackerEstimate([s012], s12 ? [s12] : []);
      const err = relativeError(estimate, delta0);
      const baseline = relativeError(roundMean(s012), delta0);
      console.log(
        `R1 (a): outcomes ${JSON.stringify(outcomes.map(show))}; relative error of the attacker's Δ₀ ${err.toExponential(2)} (round mean ${baseline.toExponential(2)})`,
      );
      expect(err).toBeGreaterThanOrEqual(baseline);
    } finally {
      release();
      await svc.close();
    }
  }, 60_000);
});
