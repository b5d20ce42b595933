/**
 * Attack R1 (c), issue 32: round replay to restarted silos, exact with minibatches.
 *
 * Round 1 runs through Unmasking (the server decodes S₀₁₂ = Σ_{0,1,2} w_iΔ_i(M0)); then the server
 * answers silos 1 and 2 with an error, and their processes stop. The operator restarts them with
 * `--first-round 1`, as docs/networked.md says to, and the server replays round 1 to them alone
 * (a fresh service with the same consortium): they train round 1 again from M0, and the server
 * decodes S₁₂. With training randomness taken from (seed, round, silo) alone the minibatch order
 * is the same, and S₀₁₂ − S₁₂ is w₀Δ₀.
 *
 * Against the old code (f7a4317) this file's first version (commit "test/security/replay-*: R1
 * (a)-(c) against the old code") ran the attack to the end and printed
 *   first run [ServiceResponseError …, ServiceResponseError …], restarted [["1:reported"],["1:reported"]];
 *   relative error of the attacker's Δ₀ 2.07e-6 (round mean 6.56e-1)
 * i.e. with minibatches of 8 the server recovered silo 0's update exactly.
 *
 * After the fix: the restarted silos open the same journal beside their key and refuse round 1
 * on M0 before training — FEDSCORE_ERR_BASE_ALREADY_UNMASKED naming round 1 and M0's digest. The
 * server holds no second sum; its best estimate of Δ₀ is the round mean. Their training
 * randomness was fresh and journaled: the decoded S₀₁₂ is the sum of the three updates trained with
 * the journaled seeds, and not the sum of those the public seed stream gives.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReplayRefusedError } from '../../src/client/replay-guard.js';
import type { Learner } from '../../src/fl/learner/learner.js';
import { localUpdate, networkedLearner, networkedRun } from '../../src/fl/networked.js';
import { paramsDigest } from '../../src/ml/layers-model.js';
import { adminInject } from '../server/_harness.js';
import {
  attackerEstimate,
  type Decoded,
  decodedSum,
  journaledSeed,
  json,
  kinds,
  openService,
  relativeError,
  replayConfig,
  roundMean,
  show,
  siloFolder,
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
  it('silos 1 and 2 stop after Unmasking and restart with --first-round 1: they refuse the replayed round 1 on M0', async () => {
    const first = await openService(run, learner);
    const replay = await openService(run, learner);
    const keys = siloFolder();
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
      const journals = [0, 1, 2].map((i) => keys.open(i));
      const round1 = [0, 1, 2].map((i) => startSilo(first, run, learner, i, cut, { journal: journals[i]! }));
      await until('round 1 decoded', async () => (await stageOf(first, 1)) === 'reporting');
      const s012 = (await decodedSum(first, 1))!;
      const before = await Promise.all(round1.slice(1));
      // The restarted silos 1 and 2 (same keys, same key folder) against the replayed round 1.
      const restarted = [1, 2].map((i) =>
        startSilo(replay, run, learner, i, {}, { journal: keys.open(i), firstRound: 1 }),
      );
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
      const seeds = journals.map((j) => journaledSeed(j, 1));
      const delta0 = await localUpdate(run, learner, 0, 1, first.m0, seeds[0]);
      const estimate = attackerEstimate([s012], s12 ? [s12] : []);
      const err = relativeError(estimate, delta0);
      const baseline = relativeError(roundMean(s012), delta0);
      console.log(
        `R1 (c): first run ${JSON.stringify(before.map(show))}, restarted ${JSON.stringify(outcomes.map(show))}; relative error of the attacker's Δ₀ ${err.toExponential(2)} (round mean ${baseline.toExponential(2)})`,
      );
      await Promise.all(round1);
      const m0 = paramsDigest(first.m0);
      outcomes.forEach((o, k) => {
        expect(o, `restarted silo ${k + 1}`).toBeInstanceOf(ReplayRefusedError);
        expect(o).toMatchObject({ code: 'FEDSCORE_ERR_BASE_ALREADY_UNMASKED', round: 1, base: m0 });
        expect(kinds(journals[k + 1]!)).toEqual(['1:trained', '1:masked', '1:unmasked']);
      });
      // The replayed round 1 got nothing: no second sum over M0.
      expect(replay.log.filter((x) => x.method === 'POST')).toEqual([]);
      expect(s12).toBeUndefined();
      expect(await decodedSum(replay, 1)).toBeUndefined();
      expect(err).toBeGreaterThanOrEqual(baseline);
      // Fresh, journaled training randomness: S₀₁₂ is Σ Δ_i trained with the journaled seeds (to the
      // quantization), not with the public stream deriveSeed(seed, 1, i).
      const sumOf = async (seedOf: (i: number) => number | undefined) => {
        const total = new Float64Array(delta0.length);
        for (const i of [0, 1, 2]) {
          const d = await localUpdate(run, learner, i, 1, first.m0, seedOf(i));
          d.forEach((x, j) => {
            total[j]! += x;
          });
        }
        return total;
      };
      const journaled = relativeError(s012.sum, await sumOf((i) => seeds[i]));
      const publicStream = relativeError(s012.sum, await sumOf(() => undefined));
      console.log(
        `R1 (c): S₀₁₂ against the journaled seeds' updates ${journaled.toExponential(2)}, against the public stream's ${publicStream.toExponential(2)}`,
      );
      expect(journaled).toBeLessThan(1e-4);
      expect(publicStream).toBeGreaterThan(1e-2);
    } finally {
      await first.close();
      await replay.close();
      keys.remove();
    }
  }, 60_000);
});
