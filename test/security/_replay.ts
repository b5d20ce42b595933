/**
 * A malicious server for the round-replay attacks R1 (issue 32; test/security/replay-*.test.ts):
 * the real service and three real silos (src/client/silo.ts `runSilo`), 3 silos, n_C = 0, t = 2 —
 * what `fedscore init` writes for three silos — each silo reaching the service through its own
 * fetch, which the attacker may hold (`before`) or rewrite (`after`). The service's answers are not
 * signed, so a server that lies needs no more than this. The attacker decodes every sum the
 * service decodes (the admin reads of `…/aggregate` and `…/aggregate/sum`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SiloHttp } from '../../src/client/http.js';
import { journalPathOf, SiloJournal } from '../../src/client/journal.js';
import { type RoundOutcome, runSilo, type SiloOptions } from '../../src/client/silo.js';
import type { ConsortiumFile } from '../../src/consortium/consortium-file.js';
import { consortiumBodyOf, consortiumFileOf } from '../../src/fl/consortium-of-run.js';
import type { Learner } from '../../src/fl/learner/learner.js';
import { initialModel, type NetworkedRun } from '../../src/fl/networked.js';
import type { ExperimentConfig } from '../../src/records/config.js';
import { injectFetch } from '../client/_inject.js';
import { adminInject, type Harness, harness } from '../server/_harness.js';

/**
 * 3 silos of 20 examples (equal FedAvg weights), 4 features, one hidden layer of 8, 3 classes
 * (d = 4·8 + 8 + 8·3 + 3 = 67), t = 2 and n_C = 0 as `fedscore init` writes for three silos.
 * `batchSize` 32 trains on the full batch (no randomness in training); 8 on minibatches.
 */
export function replayConfig(batchSize: number): ExperimentConfig {
  return {
    silos: 3,
    rounds: 2,
    data: {
      dataset: 'synthetic',
      trainSize: 60,
      testSize: 30,
      synthetic: { features: 4, classes: 3, examples: 120 },
    },
    model: { kind: 'mlp', hidden: [8] },
    training: { epochs: 2, batchSize, weightDecay: 0 },
    secureAggregation: { threshold: 2, corruptSilos: 0 },
  };
}

/** What the server answers instead of forwarding (`before`) or instead of the service's answer (`after`). */
export interface Layer {
  before?(silo: number, method: string, path: string): Promise<Response | undefined> | undefined;
  after?(
    silo: number,
    method: string,
    path: string,
    served: Response,
  ): Promise<Response | undefined> | Response | undefined;
}

/** One service instance of the attacker (its own database, the consortium of `run`, M0 uploaded, round 1 open). */
export interface Service {
  h: Harness;
  file: ConsortiumFile;
  m0: Float32Array;
  /** Every request the service handled, per silo: method, path, status. */
  log: { silo: number; method: string; path: string; status: number }[];
  close(): Promise<void>;
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** A JSON response. */
export function json(value: unknown, status = 200): Response {
  return new Response(JSON.stringify(value), { status, headers: { 'content-type': 'application/json' } });
}

/** Opens a service for `run` with consortium c1 (created from the consortium file), M0 and round 1. */
export async function openService(run: NetworkedRun, learner: Learner): Promise<Service> {
  const h = await harness({ n: 3 });
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
  return { h, file, m0, log: [], close: () => h.close() };
}

/**
 * The silos' key folder: each silo's journal beside its key (`silo-<i>.key.journal`); `open(i)`
 * opens it as a (re)started silo process does. `remove` deletes the folder.
 */
export function siloFolder(): { dir: string; open(i: number): SiloJournal; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), 'fedscore-replay-'));
  return {
    dir,
    open: (i) => SiloJournal.open(journalPathOf(join(dir, `silo-${i}.key`))),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** The training seed silo journal `j` recorded for round `r`. */
export function journaledSeed(j: SiloJournal, r: number): number {
  const e = j.all().find((x) => x.kind === 'trained' && x.round === r);
  if (e?.seed === undefined) throw new Error(`no training seed journaled for round ${r}`);
  return e.seed;
}

/** The journal's entries, short: `round:kind`. */
export function kinds(j: SiloJournal): string[] {
  j.reload();
  return j.all().map((e) => `${e.round}:${e.kind}`);
}

/** Runs silo `silo` against `svc` through `layer` (a rejection is kept, not thrown). */
export function startSilo(
  svc: Service,
  run: NetworkedRun,
  learner: Learner,
  silo: number,
  layer: Layer,
  o: Partial<SiloOptions> & { journal: SiloJournal },
): Promise<RoundOutcome[] | Error> {
  const adapter = injectFetch(svc.h.app);
  const fetchThrough: typeof fetch = async (input, init) => {
    const url = new URL(String(input));
    const method = init?.method ?? 'GET';
    const held = await layer.before?.(silo, method, url.pathname);
    if (held) return held;
    const served = await adapter.fetch(input, init);
    svc.log.push({ silo, method, path: url.pathname, status: served.status });
    return (await layer.after?.(silo, method, url.pathname, served)) ?? served;
  };
  const http = new SiloHttp({
    server: 'http://service.test',
    consortium: 'c1',
    silo,
    secretKey: svc.h.keys[silo]!.secretKey,
    fetch: fetchThrough,
    now: svc.h.clock.now,
    retry: { attempts: 1 },
  });
  return runSilo({
    http,
    run,
    learner,
    secretKey: svc.h.keys[silo]!.secretKey,
    firstRound: 1,
    lastRound: 1,
    poll: { initialMs: 5, maxMs: 20 },
    waitTimeoutMs: 20_000,
    scoreWaitMs: 50,
    pinned: svc.file,
    ...o,
  }).catch((e: Error) => e);
}

/** The stage of round `r` on `svc`. */
export async function stageOf(svc: Service, r: number): Promise<string> {
  const got = await adminInject(svc.h, 'GET', `/v1/consortia/c1/rounds/${r}`);
  return got.statusCode === 200 ? got.json().stage : `(${got.statusCode})`;
}

/** Waits until `cond` holds (polling every 10 ms, at most 20 s). */
export async function until(what: string, cond: () => Promise<boolean> | boolean): Promise<void> {
  for (let k = 0; k < 2000; k++) {
    if (await cond()) return;
    await new Promise((done) => setTimeout(done, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A sum the attacker decoded: Σ w_iΔ_i and Σ w_i of a round. */
export interface Decoded {
  readonly sum: Float64Array;
  readonly totalWeight: number;
}

/** Round `r`'s decoded sum on `svc`, or undefined when the service holds none. */
export async function decodedSum(svc: Service, r: number): Promise<Decoded | undefined> {
  const got = await adminInject(svc.h, 'GET', `/v1/consortia/c1/rounds/${r}/aggregate/sum`);
  if (got.statusCode !== 200) return undefined;
  const agg = await adminInject(svc.h, 'GET', `/v1/consortia/c1/rounds/${r}/aggregate`);
  return {
    sum: new Float64Array(Uint8Array.from(got.rawPayload).buffer),
    totalWeight: agg.json().totalWeight as number,
  };
}

/**
 * The attacker's best estimate of the target's update Δ from every sum it decoded over one base
 * model, `withTarget` the sums known to contain the target: the difference of a sum with the target
 * and one without, divided by the difference of their weights (exact when the other silos' updates
 * are the same in both), else the round mean Σ w_iΔ_i / Σ w_i of a sum with the target — all a
 * single sum should reveal.
 */
export function attackerEstimate(withTarget: readonly Decoded[], without: readonly Decoded[]): Float64Array {
  const a = withTarget[0];
  if (a === undefined) throw new Error('the attacker decoded no sum with the target');
  const b = without[0];
  if (b === undefined) return a.sum.map((x) => x / a.totalWeight);
  const w = a.totalWeight - b.totalWeight;
  return a.sum.map((x, j) => (x - b.sum[j]!) / w);
}

/** The round mean Σ w_iΔ_i / Σ w_i of a decoded sum. */
export function roundMean(d: Decoded): Float64Array {
  return d.sum.map((x) => x / d.totalWeight);
}

/** ‖estimate − truth‖ / ‖truth‖. */
export function relativeError(estimate: ArrayLike<number>, truth: ArrayLike<number>): number {
  let num = 0;
  let den = 0;
  for (let j = 0; j < truth.length; j++) {
    num += (estimate[j]! - truth[j]!) ** 2;
    den += truth[j]! ** 2;
  }
  return Math.sqrt(num / den);
}

/** Cosine of two vectors. */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let j = 0; j < a.length; j++) {
    ab += a[j]! * b[j]!;
    aa += a[j]! ** 2;
    bb += b[j]! ** 2;
  }
  return ab / Math.sqrt(aa * bb);
}

/** A round view rewritten: the round has no result (its sum "was never decoded") and is aborted. */
export function asAborted(x: Record<string, unknown>): Record<string, unknown> {
  return {
    ...x,
    stage: 'aborted',
    resultModel: null,
    survivors: null,
    error: {
      code: 'FEDSCORE_ERR_SECAGG_RECONSTRUCTION_FAILED',
      message: 'secure aggregation: reconstruction failed',
    },
  };
}

/** Stages of a round whose sum the service has decoded. */
const DECODED = ['reporting', 'scored', 'closed'];

/**
 * The history the attacker serves: round 1, once its sum is decoded, shows no result (aborted) and
 * round 2 starts from version 0 again — on `GET …/rounds` and on `GET …/rounds/1|2`.
 */
export async function rewriteHistory(path: string, served: Response): Promise<Response | undefined> {
  const fix = (x: Record<string, unknown>) =>
    x.round === 1 && DECODED.includes(x.stage as string)
      ? asAborted(x)
      : x.round === 2
        ? { ...x, baseModel: 0 }
        : x;
  if (path === '/v1/consortia/c1/rounds') {
    const v = (await served.clone().json()) as { rounds: Record<string, unknown>[] };
    return json({ ...v, rounds: v.rounds.map(fix) }, served.status);
  }
  if ((path === '/v1/consortia/c1/rounds/1' || path === '/v1/consortia/c1/rounds/2') && served.status === 200)
    return json(fix((await served.clone().json()) as Record<string, unknown>), served.status);
  return undefined;
}

/** The outcomes of a silo's run, short: `round:status`, or the error's name and message. */
export function show(o: RoundOutcome[] | Error): unknown {
  return o instanceof Error ? `${o.name}: ${o.message}` : o.map((x) => `${x.round}:${x.status}`);
}
