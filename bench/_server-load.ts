/**
 * Load held (issue 34), `npm run bench -- server --load [--minutes N] [--consortia C] [--silos S]`:
 * C consortia (default 8) of S silos (default 32) run secure-aggregation rounds concurrently on one
 * service for N minutes (default 10), on SQLite and — when DATABASE_URL is set — on PostgreSQL.
 *
 * The service runs in its own process (./_server-child.ts: buildApp over the store, listening on
 * 127.0.0.1), so its resident memory is its own: sampled every second from /proc/<pid>/status
 * (Linux), the peak of minute 1 and of the last minute reported. This process drives the silos:
 * each consortium loops over rounds — the operator opens round r, the silos post each stage's
 * message concurrently (AdvertiseKeys … Unmasking), read the aggregate, post their signed reports,
 * and the operator posts v(M), v(M0) so the round is scored — until the time is up; the round in
 * flight then finishes. Every request's status and client-side latency is recorded per route
 * (the path with its ids as `:cid`, `:round`, …): rounds per minute, p50/p99 per route, and the
 * count of 5xx answers (a 5xx, or any status a round does not expect, is counted and the round
 * goes on with the next one).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { seededRandomFromInts } from '../crypto/random-bytes.js';
import type { SigningKeyPair } from '../crypto/signature.js';
import { type ClientState, clientHandle, clientStart, createClient } from '../protocol/client.js';
import { decodeServerMessage, encodeClientMessage } from '../protocol/codec.js';
import { STAGE_MESSAGE_TYPES as INBOX } from '../protocol/server.js';
import { simulatedIdentities } from '../protocol/simulate.js';
import { encodeWeightedInput } from '../protocol/weighted.js';
import { signedReport } from '../src/consortium/private-scoring.js';
import type { StoreLocation } from '../src/server/store/database.js';
import { ADMIN, request, signedHeaders } from './_server-loader.js';

const ENCODING = { clip: 4, weightRange: 100 };
/** Model size of the load: small, so that the load is requests, not bytes. */
const D = 1000;

export interface LoadOptions {
  minutes: number;
  consortia: number;
  silos: number;
}

export interface LoadResult {
  store: string;
  minutes: number;
  rounds: number;
  roundsPerMinute: number;
  requests: number;
  errors5xx: number;
  unexpected: number;
  rssMinute1MiB: number;
  rssLastMinuteMiB: number;
  routes: { route: string; requests: number; p50: number; p99: number }[];
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** The route of a path: ids replaced by their names. */
function routeOf(method: string, path: string): string {
  return `${method} ${path
    .replace(/^\/v1\/consortia\/[^/]+/, '/v1/consortia/:cid')
    .replace(/\/rounds\/\d+/, '/rounds/:round')
    .replace(/\/inbox\/[\w-]+$/, '/inbox/:kind')}`;
}

/** The service in a child process over `location`. */
async function startService(location: StoreLocation) {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', new URL('./_server-child.ts', import.meta.url).pathname, JSON.stringify(location)],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const base = await new Promise<URL>((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const m = /listening (\S+)/.exec(buf);
      if (m) resolve(new URL(m[1]!));
    });
    child.once('exit', (code) => reject(new Error(`service exited ${code}`)));
  });
  const rssMiB = () => {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : Number.NaN;
  };
  return {
    base,
    rssMiB,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

/** Runs the load on one store. */
export async function runLoad(label: string, location: StoreLocation, o: LoadOptions): Promise<LoadResult> {
  const service = await startService(location);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const latencies = new Map<string, number[]>();
  let errors5xx = 0;
  let unexpected = 0;
  let requests = 0;
  const call = async (
    method: string,
    path: string,
    headers: Record<string, string>,
    expected: number[],
    body?: Uint8Array,
  ) => {
    const r = await request(agent, service.base, method, path, headers, body);
    requests++;
    const route = routeOf(method, path);
    const list = latencies.get(route) ?? [];
    if (list.length === 0) latencies.set(route, list);
    list.push(r.ms);
    if (r.status >= 500) errors5xx++;
    if (!expected.includes(r.status)) {
      unexpected++;
      throw new Error(`${method} ${path}: HTTP ${r.status} ${r.body.toString().slice(0, 200)}`);
    }
    return r;
  };
  const admin = (method: string, path: string, body: unknown, expected: number[]) => {
    const payload =
      body === undefined
        ? undefined
        : body instanceof Uint8Array
          ? body
          : new Uint8Array(Buffer.from(JSON.stringify(body)));
    const headers: Record<string, string> = { authorization: `Bearer ${ADMIN}` };
    if (payload)
      headers['content-type'] = body instanceof Uint8Array ? 'application/octet-stream' : 'application/json';
    return call(method, path, headers, expected, payload);
  };
  const silo = (
    key: SigningKeyPair,
    i: number,
    method: string,
    path: string,
    expected: number[],
    body?: Uint8Array,
  ) => call(method, path, signedHeaders(key, i, method, path, body), expected, body);

  const threshold = Math.floor((2 * o.silos) / 3) + 1;
  const consortia = Array.from({ length: o.consortia }, (_, c) => ({
    cid: `load-${process.pid}-${c}`,
    keys: simulatedIdentities(o.silos, 100 + c),
  }));
  for (const { cid, keys } of consortia) {
    await admin(
      'POST',
      '/v1/consortia',
      {
        id: cid,
        participants: keys.map((k) => ({ publicKey: Buffer.from(k.publicKey).toString('hex') })),
        threshold,
        model: { name: 'load', parameters: D },
        testSetDigest: 'ab'.repeat(32),
        schemes: ['loo', 'ioi', 'fp', 'ee', 'eeMedian'],
        encoding: ENCODING,
        // Stages close when every silo has sent, long before these: the load measures the
        // service, not a loader that falls behind on a busy machine (a missed deadline would
        // abort the round).
        deadlines: Object.fromEntries(
          ['advertise', 'share', 'mask', 'consistency', 'unmask', 'reporting'].map((k) => [k, 30 * 60_000]),
        ),
      },
      [201],
    );
    await admin(
      'PUT',
      `/v1/consortia/${cid}/model`,
      new Uint8Array(new Float32Array(D).fill(0.25).buffer),
      [204],
    );
  }

  /** One round r of consortium c, every silo taking part. */
  const round = async (c: (typeof consortia)[number], r: number) => {
    const { cid, keys } = c;
    const base = `/v1/consortia/${cid}/rounds/${r}`;
    await admin('POST', `/v1/consortia/${cid}/rounds`, undefined, [201]);
    const config = { session: cid, round: r, threshold, length: D + 1, roster: keys.map((k) => k.publicKey) };
    const states: ClientState[] = [];
    const deps = keys.map((_, i) => ({ random: seededRandomFromInts(0x10ad, r, i) }));
    await Promise.all(
      keys.map(async (key, i) => {
        const update = Float32Array.from({ length: D }, (_, j) => Math.sin(1 + 7 * i + 3 * j + r) * 0.5);
        const input = encodeWeightedInput(update, 1, {
          valueRange: ENCODING.clip,
          weightRange: ENCODING.weightRange,
          n: keys.length,
        });
        const step = clientStart(createClient(config, i, key.secretKey, input), deps[i]!);
        states[i] = step.state;
        if (step.reply.type !== 'send') throw new Error('advertise: no message');
        const m = step.reply.message;
        await silo(key, i, 'POST', `${base}/${m.type}`, [202], encodeClientMessage(m));
      }),
    );
    for (const kind of INBOX)
      await Promise.all(
        keys.map(async (key, i) => {
          const got = await silo(key, i, 'GET', `${base}/inbox/${kind}`, [200]);
          const step = await clientHandle(
            states[i]!,
            decodeServerMessage(new Uint8Array(got.body)),
            deps[i]!,
          );
          states[i] = step.state;
          if (step.reply.type !== 'send') throw new Error(`${kind} ${i}: ${JSON.stringify(step.reply)}`);
          const m = step.reply.message;
          await silo(key, i, 'POST', `${base}/${m.type}`, [202], encodeClientMessage(m));
        }),
      );
    await Promise.all(
      keys.map(async (key, i) => {
        await silo(key, i, 'GET', `${base}/aggregate`, [200]);
        await silo(key, i, 'GET', `${base}/aggregate/sum`, [200]);
        const report = signedReport(cid, r, i, 0.5 + i / 1000 + r / 1e4, 0.6 - i / 1000, key);
        await silo(key, i, 'POST', `${base}/reports`, [201], report);
      }),
    );
    await admin('PUT', `${base}/utilities`, { full: 0.7, empty: 0.4 }, [200]);
    await admin('GET', base, undefined, [200]);
  };

  const t0 = performance.now();
  const end = t0 + o.minutes * 60_000;
  const rss: { t: number; mib: number }[] = [];
  const sampler = setInterval(() => rss.push({ t: performance.now() - t0, mib: service.rssMiB() }), 1000);
  let rounds = 0;
  await Promise.all(
    consortia.map(async (c) => {
      for (let r = 1; performance.now() < end; r++) {
        try {
          await round(c, r);
          rounds++;
        } catch (e) {
          // Counted above (unexpected status); the round is left to its deadline: a new consortium
          // round cannot open before it ends, so this consortium stops here.
          process.stderr.write(`load: ${c.cid} round ${r}: ${(e as Error).message}\n`);
          return;
        }
      }
    }),
  );
  clearInterval(sampler);
  const elapsedMin = (performance.now() - t0) / 60_000;
  agent.destroy();
  await service.stop();
  const peak = (from: number, to: number) =>
    Math.max(...rss.filter((s) => s.t >= from && s.t < to).map((s) => s.mib), Number.NEGATIVE_INFINITY);
  const lastFrom = Math.max(0, (Math.ceil(elapsedMin) - 1) * 60_000);
  return {
    store: label,
    minutes: elapsedMin,
    rounds,
    roundsPerMinute: rounds / elapsedMin,
    requests,
    errors5xx,
    unexpected,
    rssMinute1MiB: peak(0, 60_000),
    rssLastMinuteMiB: peak(lastFrom, Number.POSITIVE_INFINITY),
    routes: [...latencies.entries()]
      .map(([route, ms]) => {
        const s = [...ms].sort((a, b) => a - b);
        return { route, requests: s.length, p50: percentile(s, 50), p99: percentile(s, 99) };
      })
      .sort((a, b) => a.route.localeCompare(b.route)),
  };
}
