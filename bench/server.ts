/**
 * Server benchmark (issue 6): the scoring service on loopback — a real fastify listening on
 * 127.0.0.1, driven over HTTP/1.1 keep-alive by this file's own loader (node:http) — on SQLite and,
 * when DATABASE_URL is set (scripts/ci-postgres.sh prints one), on PostgreSQL.
 *
 * (a) Report submission: signed `POST /v1/consortia/:cid/rounds/:round/reports` from the 19
 *     reporting silos of a 20-silo round (the 20th holds back its report, so the round stays in
 *     `reporting`). The first report of each silo is stored (201); every later request is the same
 *     report again with a fresh request signature and nonce — the service's idempotent-retry path
 *     (200) — which does the same request authentication (Ed25519 verify, nonce insert: a durable
 *     write), report verification (Ed25519) and stored-report comparison as a first submission,
 *     minus the report insert. Requests are signed before the clock starts (the loader shares the
 *     2 cores with the server). Throughput and latency percentiles per concurrency level.
 *
 * (b) A 20-silo secure-aggregation round with d = 10^6 over HTTP: open the round, AdvertiseKeys,
 *     ShareKeys, MaskedInputCollection (4 MB masked vectors), ConsistencyCheck, Unmasking, every
 *     silo downloads the aggregate (8 MB Σ w_iΔ_i), submits its signed report, and the operator
 *     posts v(M), v(M0) so the round is scored. The silos run in this process and, within a stage,
 *     one after the other, so nothing overlaps and every millisecond of the wall time is spent in
 *     exactly one of the timed parts:
 *       - crypto, clients: time inside protocol/client.ts (key generation, share encryption,
 *         X25519, masking with AES-CTR, signatures), the input's quantization, and the Ed25519
 *         signing of every HTTP request and report — summed over the 20 silos;
 *       - storage: the sum of Kysely's own per-query durations (`log` hook: every SELECT, INSERT,
 *         UPDATE, BEGIN and COMMIT, including SQLite's fsync at commit);
 *       - crypto + protocol, server: time from fastify's preValidation hook to its onSend hook
 *         (authentication, the service and protocol/server.ts, unmasking, JSON replies), minus
 *         the storage time and minus the server's codec time;
 *       - transport: each request's client-side wall time minus that server time (sockets, HTTP
 *         parsing, body streaming and copying), plus the binary codec (protocol/codec.ts) of
 *         client and server — the clients' encode/decode calls timed where they happen, the
 *         server's replayed on the same bytes (every client message is decoded twice by the
 *         service, on receipt and when its stage closes; every server message encoded once);
 *       - unaccounted: wall time minus the four parts (this file's own bookkeeping, GC pauses).
 *
 * Run: npx tsx bench/server.ts [--quick]   (--quick: d = 10^5 and fewer requests)
 */

import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import { seededRandomFromInts } from '../crypto/random.js';
import type { SigningKeyPair } from '../crypto/signature.js';
import { type ClientState, clientHandle, clientStart, createClient } from '../protocol/client.js';
import {
  decodeClientMessage,
  decodeServerMessage,
  encodeClientMessage,
  encodeServerMessage,
} from '../protocol/codec.js';
import type { ClientMessage } from '../protocol/messages.js';
import { simulatedIdentities } from '../protocol/simulate.js';
import { encodeWeightedInput } from '../protocol/weighted.js';
import { signedReport } from '../src/fl/private-scoring.js';
import { buildApp } from '../src/server/app.js';
import { signRequest } from '../src/server/auth.js';
import { openStore, type StoreHandle, type StoreLocation } from '../src/server/store/database.js';
import type { Database } from '../src/server/store/schema.js';

const quick = process.argv.includes('--quick');
const ADMIN = 'bench-admin-token-0123456789';
const N = 20;
const THRESHOLD = 14;
const ENCODING = { clip: 4, weightRange: 100 };
const INBOX = ['keys', 'shares', 'survivors', 'unmask-request'] as const;

// ── storage with timing ──────────────────────────────────────────────────────────────────────

/**
 * The store as store/database.ts opens it (migrations applied by openStore first), reopened with
 * Kysely's `log` hook so that every query's duration is added to `timing.storageMs`. The SQLite
 * pragmas are those of store/database.ts.
 */
async function timedStore(
  location: StoreLocation,
  timing: { storageMs: number; statements: Map<string, { ms: number; count: number }> },
): Promise<StoreHandle> {
  await (await openStore(location)).close();
  const log = (event: { queryDurationMillis: number; query: { sql: string } }) => {
    timing.storageMs += event.queryDurationMillis;
    const key = event.query.sql.replace(/\s+/g, ' ').slice(0, 90);
    const entry = timing.statements.get(key) ?? { ms: 0, count: 0 };
    entry.ms += event.queryDurationMillis;
    entry.count += 1;
    timing.statements.set(key, entry);
  };
  let db: Kysely<Database>;
  if ('sqlite' in location) {
    const file = new SQLite(location.sqlite);
    file.pragma('journal_mode = WAL');
    file.pragma('synchronous = FULL');
    file.pragma('busy_timeout = 5000');
    file.pragma('foreign_keys = ON');
    db = new Kysely<Database>({ dialect: new SqliteDialect({ database: file }), log });
  } else {
    const pool = new pg.Pool({ connectionString: location.postgres, max: 10 });
    db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log });
  }
  return { db, dialect: 'sqlite' in location ? 'sqlite' : 'postgres', close: () => db.destroy() };
}

interface Timing {
  storageMs: number;
  /** Storage time per SQL statement (its first 90 characters). */
  statements: Map<string, { ms: number; count: number }>;
  /** Σ preValidation → onSend over requests. */
  serverMs: number;
  requests: number;
}

/** The app over `location`, listening on 127.0.0.1, with the server-side timing hooks. */
async function serve(location: StoreLocation) {
  const timing: Timing = { storageMs: 0, statements: new Map(), serverMs: 0, requests: 0 };
  const store = await timedStore(location, timing);
  const app = await buildApp({
    store,
    adminToken: ADMIN,
    rateLimit: { max: 1e9, windowMs: 60_000 },
  });
  const started = new WeakMap<object, number>();
  app.addHook('preValidation', async (request) => {
    started.set(request, performance.now());
  });
  app.addHook('onSend', async (request) => {
    const t0 = started.get(request);
    if (t0 !== undefined) {
      timing.serverMs += performance.now() - t0;
      timing.requests += 1;
    }
  });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, store, timing, base: new URL(base) };
}

// ── a minimal HTTP loader ────────────────────────────────────────────────────────────────────

interface Response {
  status: number;
  body: Buffer;
  ms: number;
}

function request(
  agent: http.Agent,
  base: URL,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: Uint8Array,
): Promise<Response> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: base.hostname,
        port: base.port,
        method,
        path,
        agent,
        headers: body ? { ...headers, 'content-length': String(body.byteLength) } : headers,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks), ms: performance.now() - t0 }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body ? Buffer.from(body.buffer, body.byteOffset, body.byteLength) : undefined);
  });
}

let nonceCounter = 0;
function nonce(): string {
  nonceCounter += 1;
  return `bench-${process.pid}-${String(nonceCounter).padStart(10, '0')}`;
}

function signedHeaders(key: SigningKeyPair, silo: number, method: string, path: string, body?: Uint8Array) {
  const h = signRequest(key.secretKey, {
    method,
    path,
    silo,
    timestamp: Date.now(),
    nonce: nonce(),
    ...(body ? { body } : {}),
  });
  return body ? { ...h, 'content-type': 'application/octet-stream' } : { ...h };
}

function expectStatus(r: Response, status: number, what: string): Response {
  if (r.status !== status) throw new Error(`${what}: HTTP ${r.status} ${r.body.toString().slice(0, 300)}`);
  return r;
}

// ── one round over HTTP ──────────────────────────────────────────────────────────────────────

interface RoundTimes {
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

async function createConsortium(
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
async function runRound(
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
    // The silo's two utilities would come from evaluating its coalition models (src/fl); fixed here.
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

// ── (a) report throughput ───────────────────────────────────────────────────────────────────

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function reportLoad(s: Awaited<ReturnType<typeof serve>>, label: string, rows: string[][]) {
  const cid = `bench-load-${process.pid}-${Date.now().toString(36)}`;
  const keys = simulatedIdentities(N, 7);
  const setupAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  await createConsortium(s, setupAgent, cid, keys, 16);
  const reporters = Array.from({ length: N - 1 }, (_, i) => i);
  const { reports } = await runRound(s, setupAgent, cid, keys, 16, []);
  setupAgent.destroy();
  const path = `/v1/consortia/${cid}/rounds/1/reports`;
  const levels = quick ? [1, 16] : [1, 4, 16, 64];
  const total = quick ? 400 : 1500;
  let first = true;
  for (const c of levels) {
    // Pre-signed requests: the first level's first 19 are the silos' first submissions (201).
    const batch = Array.from({ length: total }, (_, k) => {
      const silo = reporters[k % reporters.length]!;
      return { silo, headers: signedHeaders(keys[silo]!, silo, 'POST', path, reports[silo]!) };
    });
    const agent = new http.Agent({ keepAlive: true, maxSockets: c });
    const latencies: number[] = [];
    const firstLatencies: number[] = [];
    const statuses = new Map<number, number>();
    let next = 0;
    const server0 = { ...s.timing };
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: c }, async () => {
        while (next < batch.length) {
          const k = next++;
          const { silo, headers } = batch[k]!;
          const r = await request(agent, s.base, 'POST', path, headers, reports[silo]!);
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
          (r.status === 201 ? firstLatencies : latencies).push(r.ms);
        }
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    const perRequest = (ms: number) => (ms / (s.timing.requests - server0.requests)).toFixed(2);
    const serverMs = perRequest(s.timing.serverMs - server0.serverMs);
    const storageMs = perRequest(s.timing.storageMs - server0.storageMs);
    agent.destroy();
    const ok = (statuses.get(200) ?? 0) + (statuses.get(201) ?? 0);
    if (ok !== total)
      throw new Error(`report load: statuses ${JSON.stringify(Object.fromEntries(statuses))} of ${total}`);
    if (first && firstLatencies.length !== reporters.length)
      throw new Error(`expected ${reporters.length} first submissions, got ${firstLatencies.length}`);
    latencies.sort((a, b) => a - b);
    rows.push([
      label,
      String(c),
      String(total),
      (total / seconds).toFixed(0),
      percentile(latencies, 50).toFixed(2),
      percentile(latencies, 99).toFixed(2),
      serverMs,
      storageMs,
      first
        ? `${firstLatencies.length} × 201 (p50 ${percentile(
            firstLatencies.sort((a, b) => a - b),
            50,
          ).toFixed(2)} ms), rest 200`
        : 'all 200 (idempotent retries)',
    ]);
    first = false;
  }
}

// ── main ────────────────────────────────────────────────────────────────────────────────────

function table(head: string[], rows: string[][]): string {
  return [
    `| ${head.join(' | ')} |`,
    `|${head.map((_, i) => (i === 0 ? '---' : '---:')).join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

export async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'fedscore-bench-server-'));
  const targets: { label: string; location: StoreLocation }[] = [
    { label: 'SQLite', location: { sqlite: join(dir, 'store.db') } },
  ];
  const url = process.env.DATABASE_URL;
  if (url) targets.push({ label: 'PostgreSQL', location: { postgres: url } });
  else console.log('\n(DATABASE_URL not set: SQLite only; scripts/ci-postgres.sh starts a PostgreSQL)');
  const d = quick ? 100_000 : 1_000_000;
  const loadRows: string[][] = [];
  const roundRows: string[][] = [];
  const statementRows: string[][] = [];
  try {
    for (const { label, location } of targets) {
      const s = await serve(location);
      try {
        await reportLoad(s, label, loadRows);
        const cid = `bench-round-${process.pid}-${Date.now().toString(36)}`;
        const keys = simulatedIdentities(N, 9);
        const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
        await createConsortium(s, agent, cid, keys, d);
        const { times: t } = await runRound(
          s,
          agent,
          cid,
          keys,
          d,
          keys.map((_, i) => i),
        );
        agent.destroy();
        const top = [...s.timing.statements].sort((x, y) => y[1].ms - x[1].ms).slice(0, 4);
        for (const [sql, { ms, count }] of top)
          statementRows.push([
            label,
            `\`${sql.replaceAll('|', '/')}\``,
            String(count),
            (ms / 1000).toFixed(2),
          ]);
        const serverCrypto = t.serverMs - t.storageMs - t.serverCodecMs;
        const transport = t.requestMs - t.serverMs + t.clientCodecMs + t.serverCodecMs;
        const other = t.wallMs - transport - t.clientCryptoMs - serverCrypto - t.storageMs;
        const cell = (ms: number) => `${(ms / 1000).toFixed(2)} (${((100 * ms) / t.wallMs).toFixed(0)} %)`;
        roundRows.push([
          label,
          (t.wallMs / 1000).toFixed(2),
          cell(transport),
          cell(t.clientCryptoMs),
          cell(serverCrypto),
          cell(t.storageMs),
          cell(other),
          `${t.requests} / ${(t.bytesUp / 2 ** 20).toFixed(0)} MiB up, ${(t.bytesDown / 2 ** 20).toFixed(0)} MiB down`,
        ]);
      } finally {
        await s.app.close();
        await s.store.close();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  console.log(
    `\n## Report submission on loopback (${N}-silo consortium, ${N - 1} silos posting signed reports; ` +
      'latency of the 200s = idempotent retries)\n',
  );
  console.log(
    table(
      [
        'store',
        'concurrent requests',
        'requests',
        'requests/s',
        'p50 ms',
        'p99 ms',
        'server ms/request',
        'of it storage ms',
        'statuses',
      ],
      loadRows,
    ),
  );
  console.log(
    '\nserver ms/request: fastify preValidation→onSend (authentication, report verification, store); ' +
      'storage: Σ Kysely per-query durations (SQLite commits are fsynced: synchronous = FULL). ' +
      'With concurrent requests these per-request times overlap (they include waiting for row locks, ' +
      'the connection pool and the event loop). p50/p99 are client-side, over the 200 responses.',
  );
  console.log(
    `\n## One ${N}-silo secure-aggregation round over HTTP, d = ${d.toLocaleString('en')} (t = ${THRESHOLD}, no dropouts)\n`,
  );
  console.log(
    table(
      [
        'store',
        'wall s',
        'transport s',
        `crypto, ${N} clients s`,
        'crypto + protocol, server s',
        'storage s',
        'unaccounted s',
        'requests / bytes',
      ],
      roundRows,
    ),
  );
  console.log(
    '\nSplit measured by timing, silos one after another within each stage (nothing overlaps): ' +
      'storage = Σ Kysely per-query durations; server = fastify preValidation→onSend per request minus ' +
      'storage minus the server codec; transport = Σ client-side request time minus that server time, ' +
      'plus the binary codec (client side timed in place, server side replayed on the same bytes); ' +
      'client crypto = Σ time in protocol/client.ts, request and report signing over the 20 silos ' +
      '(on separate machines it would run in parallel, ~1/20 of it on the critical path).',
  );
  console.log("\nWhere the round's storage time goes (the 4 costliest statements per store):\n");
  console.log(table(['store', 'statement', 'executions', 'total s'], statementRows));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
