/**
 * Attack R1 (b), issue 32: round replay on one base model without a visible abort.
 *
 * Round 1 completes and is scored (the server holds S₀₁₂ = Σ_{0,1,2} w_iΔ_i(M0)). In round 2 the
 * served history shows no result for round 1 and round 2 starting from version 0 (M0) again; the
 * server holds silo 0's advertisement until the stage closes (a "late" dropout) and decodes S₁₂
 * over M0. With full-batch training S₀₁₂ − S₁₂ is w₀Δ₀.
 *
 * Against the old code (f7a4317) this file's first version (commit "test/security/replay-*: R1
 * (a)-(c) against the old code") ran the attack to the end and printed
 *   outcomes [["1:reported","2:dropped"],["1:reported","2:reported"],["1:reported","2:reported"]];
 *   relative error of the attacker's Δ₀ 2.94e-6 (round mean 7.02e-1)
 * i.e. every silo reported both rounds and the server recovered silo 0's update exactly.
 *
 * After the fix (src/client/model-chain.ts, ./journal.ts): each silo accepted round 1's result when
 * it reported (chain and journal); a history without it is fatal — every silo stops before
 * training round 2 with ModelChainError HISTORY_REGRESSION naming round 2 (and, were the chain
 * check passed, the journal's Unmasking response for M0 would refuse the round:
 * FEDSCORE_ERR_BASE_ALREADY_UNMASKED, test/client/replay-guard.test.ts). The server holds no
 * second sum; its best estimate of Δ₀ is the round mean.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelChainError } from '../../src/client/model-chain.js';
import type { Learner } from '../../src/fl/learner/learner.js';
import { localUpdate, networkedLearner, networkedRun } from '../../src/fl/networked.js';
import { adminInject } from '../server/_harness.js';
import {
  attackerEstimate,
  type Decoded,
  decodedSum,
  journaledSeed,
  kinds,
  openService,
  relativeError,
  replayConfig,
  rewriteHistory,
  roundMean,
  show,
  siloFolder,
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

describe('security: round replay after a history reset (R1 b)', () => {
  it('round 1 is scored, then the served history drops its result: every silo stops with HISTORY_REGRESSION before round 2', async () => {
    const svc = await openService(run, learner);
    const keys = siloFolder();
    let release!: () => void;
    const released = new Promise<void>((r) => {
      release = r;
    });
    let rewriting = false;
    const layer = {
      before: async (silo: number, method: string, path: string) => {
        if (silo === 0 && method === 'POST' && path === '/v1/consortia/c1/rounds/2/advertise') await released;
        return undefined;
      },
      after: (_silo: number, method: string, path: string, served: Response) =>
        rewriting && method === 'GET' ? rewriteHistory(path, served) : undefined,
    };
    try {
      const journals = [0, 1, 2].map((i) => keys.open(i));
      const silos = [0, 1, 2].map((i) =>
        startSilo(svc, run, learner, i, layer, { journal: journals[i]!, lastRound: 2 }),
      );
      await until('round 1 scored', async () => (await stageOf(svc, 1)) === 'scored');
      const s012 = (await decodedSum(svc, 1))!;
      // From now on the history the silos read has no result for round 1.
      rewriting = true;
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
      const delta0 = await localUpdate(run, learner, 0, 1, svc.m0, journaledSeed(journals[0]!, 1));
      const estimate = attackerEstimate([s012], s12 ? [s12] : []);
      const err = relativeError(estimate, delta0);
      const baseline = relativeError(roundMean(s012), delta0);
      console.log(
        `R1 (b): outcomes ${JSON.stringify(outcomes.map(show))}; relative error of the attacker's Δ₀ ${err.toExponential(2)} (round mean ${baseline.toExponential(2)})`,
      );
      outcomes.forEach((o, i) => {
        expect(o, `silo ${i}`).toBeInstanceOf(ModelChainError);
        expect(o).toMatchObject({ code: 'HISTORY_REGRESSION', round: 2 });
        expect((o as Error).message).toBe(
          "HISTORY_REGRESSION: round 2: round 1's result, which this silo accepted, is no longer listed with a result; refusing a rewritten history (it would let the server replay an earlier base model)",
        );
        expect(kinds(journals[i]!)).toEqual(['1:trained', '1:masked', '1:unmasked', '1:accepted']);
      });
      // No silo advertised in round 2: the server holds no second sum over M0.
      expect(svc.log.filter((x) => x.path.startsWith('/v1/consortia/c1/rounds/2/'))).toEqual([]);
      expect(s12).toBeUndefined();
      expect(await decodedSum(svc, 2)).toBeUndefined();
      expect(err).toBeGreaterThanOrEqual(baseline);
    } finally {
      release();
      await svc.close();
      keys.remove();
    }
  }, 60_000);
});
