/**
 * A malicious server for the model-inconsistency attacks (test/security/model-inconsistency.test.ts,
 * Pasquini et al., CCS 2022): a real service and four real silos (src/client/silo.ts `runSilo`),
 * each reaching the service through its own fetch, which the attacker rewrites — the service's
 * answers are not signed, so a server that lies needs no more than this.
 */
import { SiloHttp } from '../../src/client/http.js';
import { type RoundOutcome, runSilo } from '../../src/client/silo.js';
import type { ConsortiumFile } from '../../src/consortium/consortium-file.js';
import { consortiumBodyOf, consortiumFileOf } from '../../src/fl/consortium-of-run.js';
import type { Learner } from '../../src/fl/learner/learner.js';
import { initialModel, type NetworkedRun } from '../../src/fl/networked.js';
import type { ExperimentConfig } from '../../src/records/config.js';
import { injectFetch } from '../client/_inject.js';
import { tempJournal } from '../client/_journal.js';
import { adminInject, type Harness, harness } from '../server/_harness.js';

/** 4 features, one hidden layer of 12, 3 classes: d = 4·12 + 12 + 12·3 + 3 = 99. */
export const SPLIT_CONFIG: ExperimentConfig = {
  silos: 4,
  rounds: 2,
  data: {
    dataset: 'synthetic',
    trainSize: 80,
    testSize: 30,
    synthetic: { features: 4, classes: 3, examples: 200 },
  },
  model: { kind: 'mlp', hidden: [12] },
  training: { epochs: 1, batchSize: 16, weightDecay: 0 },
};
/** Coordinates of the first layer (kernel 4×12, then its 12 biases). */
export const FIRST_LAYER = 4 * 12 + 12;

/**
 * `m` with its first layer's weights and biases 0: every ReLU is off for every input, so every
 * gradient but the output bias's is 0 (and, without weight decay, Adam's step with it).
 */
export function deadModel(m: Float32Array): Float32Array {
  const out = m.slice();
  out.fill(0, 0, FIRST_LAYER);
  return out;
}

/**
 * What the server answers silo `silo` in place of the service's answer to `method path`, or
 * undefined to pass the service's answer on.
 */
export type Lie = (
  silo: number,
  method: string,
  path: string,
  served: Response,
) => Promise<Response | undefined> | Response | undefined;

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

export interface SplitServer {
  h: Harness;
  file: ConsortiumFile;
  m0: Float32Array;
  /** The silos' runs (rejections are kept, not thrown). */
  silos: Promise<RoundOutcome[] | Error>[];
  close(): Promise<void>;
}

/** A JSON response. */
export function json(value: unknown, status = 200): Response {
  return new Response(JSON.stringify(value), { status, headers: { 'content-type': 'application/json' } });
}

/** Float32 little-endian bytes as a model response. */
export function modelResponse(m: Float32Array): Response {
  return new Response(new Uint8Array(m.buffer, m.byteOffset, m.byteLength).slice(), {
    status: 200,
    headers: { 'content-type': 'application/octet-stream' },
  });
}

/**
 * Consortium c1 of `run` (pinned by every silo unless `unpinned` names it), M0 uploaded, round 1
 * open; the four silos run rounds 1…`lastRound` through `lie`.
 */
export async function splitServer(
  run: NetworkedRun,
  learner: Learner,
  lie: Lie,
  o: { lastRound?: number; unpinned?: readonly number[] } = {},
): Promise<SplitServer> {
  const h = await harness({ n: 4 });
  const file = consortiumFileOf(
    run,
    'c1',
    h.keys.map((k) => hex(k.publicKey)),
    learner,
  );
  const created = await adminInject(
    h,
    'POST',
    '/v1/consortia',
    consortiumBodyOf(file, undefined, { schedule: false }),
  );
  if (created.statusCode !== 201) throw new Error(`create: ${created.body}`);
  const m0 = initialModel(run, learner);
  const put = await adminInject(h, 'PUT', '/v1/consortia/c1/model', new Uint8Array(m0.buffer.slice(0)));
  if (put.statusCode !== 204) throw new Error(`model: ${put.body}`);
  const open = await adminInject(h, 'POST', '/v1/consortia/c1/rounds');
  if (open.statusCode !== 201) throw new Error(`open: ${open.body}`);
  const adapter = injectFetch(h.app);
  const silos = [0, 1, 2, 3].map((silo) => {
    const fetchThrough: typeof fetch = async (input, init) => {
      const served = await adapter.fetch(input, init);
      const url = new URL(String(input));
      const lied = await lie(silo, init?.method ?? 'GET', url.pathname, served);
      return lied ?? served;
    };
    const http = new SiloHttp({
      server: 'http://service.test',
      consortium: 'c1',
      silo,
      secretKey: h.keys[silo]!.secretKey,
      fetch: fetchThrough,
      now: h.clock.now,
    });
    const unpinned = o.unpinned?.includes(silo) ?? false;
    return runSilo({
      journal: tempJournal(),
      http,
      run,
      learner,
      secretKey: h.keys[silo]!.secretKey,
      firstRound: 1,
      lastRound: o.lastRound ?? 1,
      poll: { initialMs: 5, maxMs: 20 },
      waitTimeoutMs: 20_000,
      ...(unpinned ? { insecureUnpinned: true } : { pinned: file }),
    }).catch((e: Error) => e);
  });
  return { h, file, m0, silos, close: () => h.close() };
}

/** The stage of round `r`. */
export async function stageOf(h: Harness, r: number): Promise<string> {
  return (await adminInject(h, 'GET', `/v1/consortia/c1/rounds/${r}`)).json().stage;
}

/** Waits until round `r` is in one of `stages`. */
export async function untilStage(h: Harness, r: number, stages: readonly string[]): Promise<string> {
  for (let k = 0; k < 4000; k++) {
    const s = await stageOf(h, r);
    if (stages.includes(s)) return s;
    await new Promise((done) => setTimeout(done, 10));
  }
  throw new Error(`round ${r} never reached ${stages.join('/')} (it is ${await stageOf(h, r)})`);
}

/** Σ w_iΔ_i of round `r` as the service published it. */
export async function weightedSumOf(h: Harness, r: number): Promise<Float64Array> {
  const got = await adminInject(h, 'GET', `/v1/consortia/c1/rounds/${r}/aggregate/sum`);
  if (got.statusCode !== 200) throw new Error(`sum: ${got.statusCode} ${got.body}`);
  return new Float64Array(Uint8Array.from(got.rawPayload).buffer);
}
