/**
 * One secure-aggregation round over HTTP for bench/server.ts: creating the consortium, then all
 * silos through every stage, the aggregate and their reports, with the timings of each part.
 */
import type http from 'node:http';
import { seededRandomFromInts } from '../crypto/random-bytes.js';
import type { SigningKeyPair } from '../crypto/signature.js';
import { type ClientState, clientHandle, clientStart, createClient } from '../protocol/client.js';
import {
  decodeClientMessage,
  decodeServerMessage,
  encodeClientMessage,
  encodeServerMessage,
} from '../protocol/codec.js';
import type { ClientMessage } from '../protocol/messages.js';
import { STAGE_MESSAGE_TYPES as INBOX } from '../protocol/server.js';
import { encodeWeightedInput } from '../protocol/weighted.js';
import { signedReport } from '../src/consortium/private-scoring.js';
import { ADMIN, expectStatus, request, type serve, signedHeaders } from './_server-loader.js';

export const N = 20;
export const THRESHOLD = 14;
const ENCODING = { clip: 4, weightRange: 100 };

// ── one round over HTTP ──────────────────────────────────────────────────────────────────────

export interface RoundTimes {
  wallMs: number;
  clientCryptoMs: number;
  clientCodecMs: number;
  serverCodecMs: number;
  requestMs: number;
  serverMs: number;
  storageMs: number;
  requests: number;
  bytesUp: number;
  bytesDown: number;
}

/** The update of silo i: deterministic, inside the clip. */
function updateOf(i: number, d: number): Float32Array {
  const u = new Float32Array(d);
  for (let j = 0; j < d; j++) u[j] = Math.sin(1 + 7 * i + 3 * j) * 0.5;
  return u;
}

export async function createConsortium(
  s: Awaited<ReturnType<typeof serve>>,
  agent: http.Agent,
  cid: string,
  keys: readonly SigningKeyPair[],
  d: number,
) {
  const admin = { authorization: `Bearer ${ADMIN}` };
  const body = Buffer.from(
    JSON.stringify({
      id: cid,
      participants: keys.map((k) => ({ publicKey: Buffer.from(k.publicKey).toString('hex') })),
      threshold: THRESHOLD,
      model: { name: 'bench', parameters: d },
      testSetDigest: 'ab'.repeat(32),
      schemes: ['loo', 'ioi', 'fp', 'ee', 'eeMedian'],
      encoding: ENCODING,
    }),
  );
  expectStatus(
    await request(
      agent,
      s.base,
      'POST',
      '/v1/consortia',
      { ...admin, 'content-type': 'application/json' },
      body,
    ),
    201,
    'create consortium',
  );
  const model = new Uint8Array(new Float32Array(d).fill(0.25).buffer);
  expectStatus(
    await request(
      agent,
      s.base,
      'PUT',
      `/v1/consortia/${cid}/model`,
      { ...admin, 'content-type': 'application/octet-stream' },
      model,
    ),
    204,
    'initial model',
  );
}

/**
 * Runs round 1 of `cid` with all N silos, sequentially within each stage; `reporters` submit
 * their reports (the others hold back). Returns the timings and each silo's report body.
 */
export async function runRound(
  s: Awaited<ReturnType<typeof serve>>,
  agent: http.Agent,
  cid: string,
  keys: readonly SigningKeyPair[],
  d: number,
  reporters: readonly number[],
): Promise<{ times: RoundTimes; reports: Uint8Array[] }> {
  const t: RoundTimes = {
    wallMs: 0,
    clientCryptoMs: 0,
    clientCodecMs: 0,
    serverCodecMs: 0,
    requestMs: 0,
    serverMs: 0,
    storageMs: 0,
    requests: 0,
    bytesUp: 0,
    bytesDown: 0,
  };
  const clientBodies: Uint8Array[] = [];
  const serverBodies: Uint8Array[] = [];
  const timed = <T>(f: () => T, into: 'clientCryptoMs' | 'clientCodecMs'): T => {
    const t0 = performance.now();
    const r = f();
    t[into] += performance.now() - t0;
    return r;
  };
  const timedAsync = async <T>(f: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    const r = await f();
    t.clientCryptoMs += performance.now() - t0;
    return r;
  };
  const call = async (silo: number, method: string, path: string, body?: Uint8Array) => {
    const headers = timed(() => signedHeaders(keys[silo]!, silo, method, path, body), 'clientCryptoMs');
    const r = await request(agent, s.base, method, path, headers, body);
    t.requestMs += r.ms;
    t.requests += 1;
    t.bytesUp += body?.byteLength ?? 0;
    t.bytesDown += r.body.byteLength;
    return r;
  };
  const adminCall = async (method: string, path: string, body?: unknown) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const headers: Record<string, string> = { authorization: `Bearer ${ADMIN}` };
    if (payload) headers['content-type'] = 'application/json';
    const r = await request(agent, s.base, method, path, headers, payload);
    t.requestMs += r.ms;
    t.requests += 1;
    return r;
  };
  const base = `/v1/consortia/${cid}/rounds/1`;
  const config = {
    session: cid,
    round: 1,
    threshold: THRESHOLD,
    length: d + 1,
    roster: keys.map((k) => k.publicKey),
  };

  // Inputs are quantized before the clock starts (the silo's training output, not the round).
  const inputs = keys.map((_, i) =>
    encodeWeightedInput(updateOf(i, d), 1 + i / N, {
      valueRange: ENCODING.clip,
      weightRange: ENCODING.weightRange,
      n: N,
    }),
  );
  const server0 = { ...s.timing };
  s.timing.statements.clear();
  const wall0 = performance.now();

  expectStatus(await adminCall('POST', `/v1/consortia/${cid}/rounds`), 201, 'open round');
  const states: ClientState[] = [];
  const deps = keys.map((_, i) => ({ random: seededRandomFromInts(0xbe7c, 1, i) }));
  const post = async (silo: number, message: ClientMessage) => {
    const bytes = timed(() => encodeClientMessage(message), 'clientCodecMs');
    clientBodies.push(bytes);
    expectStatus(await call(silo, 'POST', `${base}/${message.type}`, bytes), 202, `${message.type} ${silo}`);
  };
  for (let i = 0; i < N; i++) {
    const step = timed(
      () => clientStart(createClient(config, i, keys[i]!.secretKey, inputs[i]!), deps[i]!),
      'clientCryptoMs',
    );
    states[i] = step.state;
    if (step.reply.type !== 'send') throw new Error('advertise: no message');
    await post(i, step.reply.message);
  }
  for (const kind of INBOX) {
    for (let i = 0; i < N; i++) {
      const got = expectStatus(await call(i, 'GET', `${base}/inbox/${kind}`), 200, `inbox ${kind} ${i}`);
      const bytes = new Uint8Array(got.body);
      serverBodies.push(bytes);
      const message = timed(() => decodeServerMessage(bytes), 'clientCodecMs');
      const step = await timedAsync(() => clientHandle(states[i]!, message, deps[i]!));
      states[i] = step.state;
      if (step.reply.type !== 'send') throw new Error(`${kind} ${i}: ${JSON.stringify(step.reply)}`);
      await post(i, step.reply.message);
    }
  }
  const reports: Uint8Array[] = [];
  for (let i = 0; i < N; i++) {
    const agg = expectStatus(await call(i, 'GET', `${base}/aggregate`), 200, 'aggregate');
    expectStatus(await call(i, 'GET', `${base}/aggregate/sum`), 200, 'aggregate sum');
    if (JSON.parse(agg.body.toString()).survivors.length !== N) throw new Error('a silo dropped');
    // The silo's two utilities would come from evaluating its coalition models (src/consortium/private-scoring.ts); fixed here.
    reports[i] = timed(
      () => signedReport(cid, 1, i, 0.5 + i / 1000, 0.6 - i / 1000, keys[i]!),
      'clientCryptoMs',
    );
  }
  for (const i of reporters)
    expectStatus(await call(i, 'POST', `${base}/reports`, reports[i]!), 201, `report ${i}`);
  if (reporters.length === N) {
    expectStatus(await adminCall('PUT', `${base}/utilities`, { full: 0.7, empty: 0.4 }), 200, 'utilities');
    const round = JSON.parse((await adminCall('GET', base)).body.toString());
    if (round.stage !== 'scored') throw new Error(`round ended in ${round.stage}`);
  }
  t.wallMs = performance.now() - wall0;
  t.serverMs = s.timing.serverMs - server0.serverMs;
  t.storageMs = s.timing.storageMs - server0.storageMs;
  if (s.timing.requests - server0.requests !== t.requests)
    throw new Error(`timing hooks saw ${s.timing.requests - server0.requests} of ${t.requests} requests`);

  // The server's codec work, replayed on the same bytes (see the header).
  const c0 = performance.now();
  for (const b of clientBodies) {
    decodeClientMessage(b);
    decodeClientMessage(b);
  }
  const decoded = serverBodies.map((b) => decodeServerMessage(b));
  const c1 = performance.now();
  for (const m of decoded) encodeServerMessage(m);
  t.serverCodecMs = c1 - c0 + (performance.now() - c1);
  return { times: t, reports };
}
