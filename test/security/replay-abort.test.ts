/**
 * Attack R1 (a), issue 32: round replay on one base model after a visible abort.
 *
 * The server runs round 1 through Unmasking — it decodes S₀₁₂ = Σ_{0,1,2} w_iΔ_i(M0) — then tells
 * the silos the round aborted (RECONSTRUCTION_FAILED, no result). Round 2 starts from M0 again; the
 * server holds silo 0's advertisement until the stage closes (a "late" dropout) and decodes S₁₂.
 * With full-batch training S₀₁₂ − S₁₂ is w₀Δ₀.
 *
 * Against the old code (f7a4317) this file's first version (commit "test/security/replay-*: R1
 * (a)-(c) against the old code") ran the attack to the end and printed
 *   outcomes [["1:aborted","2:dropped"],["1:aborted","2:reported"],["1:aborted","2:reported"]];
 *   relative error of the attacker's Δ₀ 2.94e-6 (round mean 7.02e-1)
 * i.e. the server recovered silo 0's update exactly while every silo saw only `aborted`/`dropped`.
 *
 * After the fix (src/client/replay-guard.ts, ./journal.ts): each silo journals its Unmasking
 * response for base M0 before sending it; round 1's abort after it is recorded as a fault of the
 * server (FEDSCORE_ERR_ABORT_AFTER_UNMASKING, journal and log); in round 2 every silo refuses
 * before training, FEDSCORE_ERR_BASE_ALREADY_UNMASKED naming round 2 and M0's digest. The server
 * holds no second sum; its best estimate of Δ₀ is the round mean.
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

describe('security: round replay after a visible abort (R1 a)', () => {
  it('the server decodes round 1 and says it aborted: every silo records the fault and refuses round 2 on M0', async () => {
    const svc = await openService(run, learner);
    const keys = siloFolder();
    const lines: string[] = [];
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
      const journals = [0, 1, 2].map((i) => keys.open(i));
      const silos = [0, 1, 2].map((i) =>
        startSilo(svc, run, learner, i, layer, {
          journal: journals[i]!,
          lastRound: 2,
          log: (l) => lines.push(l),
        }),
      );
      // Round 1 runs through Unmasking: the service decodes S₀₁₂.
      await until('round 1 decoded', async () => (await stageOf(svc, 1)) === 'reporting');
      const s012 = (await decodedSum(svc, 1))!;
      // The operator side closes round 1 and opens round 2 (the silos see round 1 aborted).
      const close = await adminInject(svc.h, 'POST', '/v1/consortia/c1/rounds/1/advance', {
        stage: 'reporting',
      });
      expect(close.statusCode).toBe(200);
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
        const a = await adminInject(svc.h, 'POST', '/v1/consortia/c1/rounds/2/advance', {
          stage: 'advertise',
        });
        expect(a.statusCode).toBe(200);
        release();
        await until('round 2 decoded', async () =>
          ['reporting', 'scored', 'aborted'].includes(await stageOf(svc, 2)),
        );
        s12 = await decodedSum(svc, 2);
      }
      release();
      const outcomes = await settled;
      // The attacker's best estimate of Δ₀ from what it holds (silo 0's own training seed, from its journal).
      const delta0 = await localUpdate(run, learner, 0, 1, svc.m0, journaledSeed(journals[0]!, 1));
      const err = relativeError(attackerEstimate([s012], s12 ? [s12] : []), delta0);
      const baseline = relativeError(roundMean(s012), delta0);
      console.log(
        `R1 (a): outcomes ${JSON.stringify(outcomes.map(show))}; relative error of the attacker's Δ₀ ${err.toExponential(2)} (round mean ${baseline.toExponential(2)})`,
      );
      const m0 = paramsDigest(svc.m0);
      outcomes.forEach((o, i) => {
        // Every silo refuses round 2 before it trains, naming the round and the base.
        expect(o, `silo ${i}`).toBeInstanceOf(ReplayRefusedError);
        expect(o).toMatchObject({ code: 'FEDSCORE_ERR_BASE_ALREADY_UNMASKED', round: 2, base: m0 });
        expect((o as Error).message).toMatch(
          new RegExp(
            `^FEDSCORE_ERR_BASE_ALREADY_UNMASKED: round 2: base model ${m0} is the base of round 1 \\(attempt 1\\), for which this silo already sent its Unmasking response on `,
          ),
        );
        // Its journal: round 1 trained, masked, unmasked, then the server's fault; nothing of round 2.
        expect(kinds(journals[i]!)).toEqual(['1:trained', '1:masked', '1:unmasked', '1:server-fault']);
        expect(lines).toContainEqual(
          expect.stringMatching(
            new RegExp(
              `^silo ${i} round 1: aborted \\(FEDSCORE_ERR_ABORT_AFTER_UNMASKING: round 1: the server reported the round aborted \\(FEDSCORE_ERR_SECAGG_RECONSTRUCTION_FAILED\\) after this silo's Unmasking response`,
            ),
          ),
        );
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
