/**
 * Issue 6, Acceptance (first bullet): on loopback, `fedscore serve` and five `fedscore client`
 * processes complete 3 rounds with one silo killed (SIGKILL) mid-round, and the scores equal
 * those of the in-process experiment engine (src/sim/experiment.ts → round-loop.ts) for the same
 * configuration and seed, with the killed silo configured there as a dropout at the same point.
 *
 * The kill point is made exact by a loopback proxy between the silos and the server: silo 3's
 * round-2 MaskedInput request is held (never forwarded) and the process is SIGKILLed while it
 * waits — so silo 3 sent AdvertiseKeys and ShareKeys and nothing after them, which is the
 * engine's `'after-share'` dropout. Once the four other masked inputs are accepted the test,
 * as the operator, closes the stage (POST …/advance) instead of waiting for the deadline, so no
 * timing decides who survives. Silo 3 is restarted for round 3 (`--first-round 3`), as it takes
 * part in round 3 in the engine.
 *
 * Equality is exact (toEqual on the numbers), not within a tolerance: both sides quantize the
 * same (ŵ_iΔ_i, ŵ_i) with the same clip, weight range and n, and a sum mod 2^32 of the same
 * integer vectors is the same whatever the masks, so M, every coalition model and every utility
 * are the same floats (src/fl/networked.ts lists the operations that must agree).
 *
 * Every silo pins the consortium file (trust issue, finding 1): `--consortium-file` and its
 * `--consortium-digest`; the consortium is created from that file.
 *
 * FEDSCORE_E2E_LOG=1 prints every process's progress lines with timestamps.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { signingKeyPairFromSeed } from '../../crypto/signature.js';
import { consortiumFileDigest } from '../../src/consortium/consortium-file.js';
import { PRIVATE_METHODS } from '../../src/consortium/private-scoring.js';
import { consortiumBodyOf, consortiumFileOf } from '../../src/fl/consortium-of-run.js';
import { createTfLearner } from '../../src/fl/learner/tf-learner.js';
import { initialModel, networkedLearner, networkedRun } from '../../src/fl/networked.js';
import type { ExperimentConfig } from '../../src/records/config.js';
import { runExperiment } from '../../src/sim/experiment.js';
import { CliProcesses, exited, until } from '../e2e/_processes.js';
import { SiloProxy } from '../e2e/_proxy.js';

const ADMIN = 'e2e-admin-token-0123456789';
const procs = new CliProcesses(ADMIN);
const VICTIM = 3;
const CID = 'e2e';

const config: ExperimentConfig = {
  name: 'e2e-networked',
  seed: 1,
  silos: 5,
  rounds: 3,
  data: {
    dataset: 'synthetic',
    trainSize: 400,
    testSize: 150,
    synthetic: { features: 16, classes: 3, separation: 0.8, examples: 800 },
  },
  // Unequal silo sizes, so the FedAvg weights (and their normalization) matter.
  partition: { kind: 'quantity-skew', beta: 2 },
  model: { kind: 'mlp', hidden: [16] },
  training: { optimizer: 'adam', learningRate: 0.01, epochs: 1, batchSize: 32 },
  secureAggregation: { dropouts: [{ round: 2, silo: VICTIM, at: 'after-share' }] },
  comparison: { estimators: { mrsv: {} }, trueShapley: false },
};

let proxy: SiloProxy | undefined;
const dir = mkdtempSync(join(tmpdir(), 'fedscore-e2e-'));

afterAll(async () => {
  procs.killAll();
  await proxy?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('networked consortium (server + 5 silo processes on loopback)', () => {
  it('completes 3 rounds with a silo SIGKILLed mid-round and scores exactly like the engine', async () => {
    writeFileSync(join(dir, 'config.json'), JSON.stringify(config));
    const keys = Array.from({ length: 5 }, (_, i) => signingKeyPairFromSeed(new Uint8Array(32).fill(i + 1)));
    keys.forEach((k, i) => {
      writeFileSync(join(dir, `silo-${i}.key`), `${Buffer.from(k.secretKey).toString('hex')}\n`);
    });

    // The proxy: forwards every request (once the server listens), except silo 3's round-2
    // masked input, which it holds while the test SIGKILLs silo 3.
    let victim: ChildProcess | undefined;
    const relay = new SiloProxy(
      (method, url, silo) =>
        method === 'POST' && silo === String(VICTIM) && url === `/v1/consortia/${CID}/rounds/2/mask`,
      () => victim!.kill('SIGKILL'),
    );
    proxy = relay;
    const { accepted } = relay;
    const proxyUrl = await relay.listen();

    // The consortium file every silo pins (fedscore consortium create writes the same).
    const run = networkedRun(config, 1);
    const learner = await networkedLearner(config, { backend: 'cpu' });
    const m0 = initialModel(run, learner);
    const pinned = consortiumFileOf(
      run,
      CID,
      keys.map((k) => Buffer.from(k.publicKey).toString('hex')),
      learner,
    );
    await learner.close();
    writeFileSync(join(dir, 'consortium.json'), JSON.stringify(pinned, null, 2));

    // The server (its evaluator built from the configuration) and the five silos start together;
    // the silos wait for the consortium to exist.
    const server = procs.start(
      [
        'serve',
        '--port',
        '0',
        '--db',
        join(dir, 'store.db'),
        '--config',
        join(dir, 'config.json'),
        '--backend',
        'cpu',
      ],
      'server',
    );
    const clientArgs = (i: number, extra: string[] = []) => [
      'client',
      '--server',
      proxyUrl,
      '--consortium',
      CID,
      '--silo',
      String(i),
      '--key',
      join(dir, `silo-${i}.key`),
      '--config',
      join(dir, 'config.json'),
      '--consortium-file',
      join(dir, 'consortium.json'),
      '--consortium-digest',
      consortiumFileDigest(pinned),
      '--backend',
      'cpu',
      // Compared with the engine's scores: the engine's training seeds (a real silo trains with
      // fresh randomness, src/client/training-seed.ts).
      '--deterministic-training',
      ...extra,
    ];
    const silos = [0, 1, 2, 3, 4].map((i) => procs.start(clientArgs(i), `silo-${i}`));
    victim = silos[VICTIM]!.child;
    const logs = () => [server, ...silos].flatMap((p) => p.lines).join('\n');

    // The in-process engine, as `fedscore experiment` runs it (worker-thread training included),
    // runs meanwhile in this process.
    const engineRun = (async () => {
      const engineLearner = await createTfLearner({
        inputShape: [1, 16, 1],
        numClasses: 3,
        model: config.model!,
        training: config.training!,
        backend: 'cpu',
      });
      try {
        return await runExperiment(config, { learner: engineLearner, seeds: [1], fedscoreVersion: 'test' });
      } finally {
        await engineLearner.close();
      }
    })();
    engineRun.catch(() => {}); // awaited below; this only keeps an early failure from going unhandled

    const serverUrl = await until(
      () => `the server to listen\n${logs()}`,
      () => {
        if (server.child.exitCode !== null) throw new Error(`server exited:\n${server.lines.join('\n')}`);
        const l = server.lines.find((x) => x.includes('listening on '));
        return l?.slice(l.indexOf('listening on ') + 13).trim();
      },
    );
    relay.forwardTo(serverUrl);

    const admin = async (method: string, path: string, body?: unknown) => {
      const binary = body instanceof Uint8Array;
      const r = await fetch(`${serverUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${ADMIN}`,
          ...(body === undefined
            ? {}
            : { 'content-type': binary ? 'application/octet-stream' : 'application/json' }),
        },
        ...(body === undefined ? {} : { body: binary ? body : JSON.stringify(body) }),
      });
      const text = await r.text();
      if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${text}`);
      return text ? (JSON.parse(text) as Record<string, unknown>) : {};
    };
    const long = 120_000; // no stage closes by deadline in this test; the operator closes round 2's mask stage
    await admin(
      'POST',
      '/v1/consortia',
      consortiumBodyOf(
        pinned,
        {
          advertise: long,
          share: long,
          mask: long,
          consistency: long,
          unmask: long,
          reporting: long,
        },
        { schedule: false },
      ), // this test opens the rounds by hand
    );
    await admin('PUT', `/v1/consortia/${CID}/model`, new Uint8Array(m0.buffer));

    const scored = (round: number) =>
      until(
        () => `round ${round} to be scored\n${logs()}`,
        async () => {
          const r = (await admin('GET', `/v1/consortia/${CID}/rounds/${round}`)) as { stage: string };
          if (r.stage === 'aborted' || r.stage === 'closed')
            throw new Error(`round ${round} ${r.stage}\n${logs()}`);
          return r.stage === 'scored' ? r : undefined;
        },
      );

    await admin('POST', `/v1/consortia/${CID}/rounds`);
    await scored(1);

    await admin('POST', `/v1/consortia/${CID}/rounds`);
    const masks = () =>
      accepted
        .filter((a) => a.url === `/v1/consortia/${CID}/rounds/2/mask` && a.status === 202)
        .map((a) => a.silo);
    await until(
      () => `silo ${VICTIM} held and killed, four masked inputs accepted\n${logs()}`,
      () => (relay.held && victim!.signalCode === 'SIGKILL' && masks().length === 4 ? true : undefined),
    );
    expect(masks().sort()).toEqual(['0', '1', '2', '4']);
    // Silo 3 comes back for round 3 (started now; it waits for round 3 to open).
    silos[VICTIM] = procs.start(clientArgs(VICTIM, ['--first-round', '3']), `silo-${VICTIM}-restarted`);
    const closed = await admin('POST', `/v1/consortia/${CID}/rounds/2/advance`, { stage: 'mask' });
    expect(closed.stage).toBe('consistency');
    const round2 = await scored(2);
    expect(round2).toMatchObject({ survivors: [0, 1, 2, 4], dropped: [VICTIM] });
    relay.held!.destroy();

    await admin('POST', `/v1/consortia/${CID}/rounds`);
    await scored(3);
    const codes = await Promise.all(silos.map((s) => exited(s.child)));
    expect(codes, logs()).toEqual([0, 0, 0, 0, 0]);

    if (process.env.FEDSCORE_E2E_LOG) console.log(logs());
    const served = (await admin('GET', `/v1/consortia/${CID}/scores`)) as unknown as {
      rounds: {
        round: number;
        utilities: { full: number; empty: number };
        withOnly: (number | null)[];
        without: (number | null)[];
        schemes: Record<string, (number | null)[]>;
      }[];
      cumulative: Record<string, number[]>;
    };

    const results = await engineRun;
    const engine = results.runs[0]!;
    const finite = (xs: (number | null)[]) => xs.map((v) => (v !== null && Number.isFinite(v) ? v : null));

    expect(served.rounds.map((r) => r.round)).toEqual([1, 2, 3]);
    for (const [k, rd] of engine.rounds.entries()) {
      const s = served.rounds[k]!;
      expect(s.utilities).toEqual({ full: rd.utilities.full, empty: rd.utilities.empty });
      expect(s.withOnly).toEqual(rd.utilities.withOnly);
      expect(s.without).toEqual(rd.utilities.without);
      for (const m of PRIVATE_METHODS)
        expect(s.schemes[m], `round ${rd.round} ${m}`).toEqual(finite(rd.scores[m]!));
    }
    expect(engine.rounds[1]!.dropped).toEqual([VICTIM]);
    for (const m of PRIVATE_METHODS)
      expect(served.cumulative[m], `cumulative ${m}`).toEqual(engine.cumulative[m]);
  }, 240_000);
});
