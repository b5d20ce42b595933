/**
 * Load held (issue 34), `npm run bench -- server --load [--minutes N] [--consortia C] [--silos S] [--store sqlite|postgres]`:
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
 *
 * Memory: the peak RSS of every minute (minute 1 and the last are the figures), the lowest
 * (the troughs of the garbage collector's saw-tooth), and at each minute's end what it is made of,
 * found without disturbing the service ({@link MemoryMinute}): the live JavaScript heap after the
 * last full collection V8 ran by itself in the minute (a leak of objects lifts it round after
 * round; heap sizing does not), the committed heap, external memory, the audit thread's heap.
 * Opt-in: `FEDSCORE_BENCH_HEAP=1` forces a full collection at each minute's end and adds the RSS
 * and live heap after it (it changes what follows a little, a heap shrunk once a minute: not for
 * the acceptance row's peaks); `FEDSCORE_BENCH_SNAPSHOT=<dir>` writes V8 heap snapshots of the
 * service at minute 2 and at the last minute, for bench/heap-diff.ts (writing one takes as much
 * memory again: the RSS after it is not the service's).
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { seededRandomFromInts } from '../crypto/random-bytes.js';
import type { SigningKeyPair } from '../crypto/signature.js';
import { type ClientState, clientHandle, clientStart, createClient } from '../protocol/client.js';
import { decodeServerMessage, encodeClientMessage } from '../protocol/codec.js';
import { STAGE_MESSAGE_TYPES as INBOX } from '../protocol/server.js';
import { simulatedIdentities } from '../protocol/simulate.js';
import { encodeWeightedInput } from '../protocol/weighted.js';
import { signedReport } from '../src/consortium/private-scoring.js';
import type { StoreLocation } from '../src/server/store/database.js';
import type { MemorySample } from './_server-child.js';
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
  /** Peak RSS of each minute of the run (MiB), minute 1 first: whether memory plateaus or climbs. */
  rssPerMinuteMiB: number[];
  /**
   * Minutes until every consortium had scored its first round (the warm-up: before it, the service
   * has not yet held a whole round's state), and the peak RSS of the minute after it (MiB). Minute
   * 1 is the reference; on a machine where a first round takes longer than a minute it is
   * still warm-up, and this is the steady-state reference beside it.
   */
  warmupMinutes: number;
  rssAfterWarmupMiB: number;
  /**
   * Lowest RSS of each minute (MiB): the troughs of the collector's saw-tooth. A leak lifts the
   * troughs with the peaks; a heap that only breathes leaves them flat.
   */
  rssMinPerMinuteMiB: number[];
  /** What the service's memory is made of at the end of each minute (see {@link MemoryMinute}). */
  memoryPerMinute: MemoryMinute[];
  /** With FEDSCORE_BENCH_SNAPSHOT=<dir>: the heap snapshots written (minute 2 and the last). */
  snapshots?: string[];
  routes: { route: string; requests: number; p50: number; p99: number }[];
}

/**
 * The service's memory at the end of a minute (MiB), found without disturbing it (bench/_server-child.ts
 * `MemorySample`) — except the two `…AfterForcedGc` fields, present with FEDSCORE_BENCH_HEAP=1 only.
 */
export interface MemoryMinute {
  minute: number;
  rssMiB: number;
  /** Full collections V8 ran by itself in the minute, and the live heap after the last of them. */
  fullGcs: number;
  liveHeapMiB: number | null;
  /** The committed main heap now, the largest a collection of the minute started from, and by space now. */
  heapTotalMiB: number;
  peakHeapTotalMiB: number;
  newSpaceMiB: number;
  oldSpaceMiB: number;
  externalMiB: number;
  arrayBuffersMiB: number;
  /** V8's malloc'ed memory outside the heap (main isolate). */
  mallocedMiB: number;
  /** The worker threads' heaps (the audit thread), used and committed, as found. */
  workerHeapUsedMiB: number;
  workerHeapTotalMiB: number;
  /** With FEDSCORE_BENCH_HEAP=1: RSS and the main heap's objects after a forced full collection. */
  rssAfterForcedGcMiB?: number;
  heapUsedAfterForcedGcMiB?: number;
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

/** Whether a full collection is forced before each minute's sample (`FEDSCORE_BENCH_HEAP=1`). */
const HEAP = process.env.FEDSCORE_BENCH_HEAP === '1';
/** Where heap snapshots go, when set (`FEDSCORE_BENCH_SNAPSHOT=<dir>`): minute 2 and the last minute. */
const SNAPSHOTS = process.env.FEDSCORE_BENCH_SNAPSHOT;

/** The service in a child process over `location`. */
async function startService(location: StoreLocation) {
  const child = spawn(
    process.execPath,
    [
      ...(HEAP || SNAPSHOTS !== undefined ? ['--expose-gc'] : []),
      '--import',
      'tsx',
      new URL('./_server-child.ts', import.meta.url).pathname,
      JSON.stringify(location),
    ],
    { stdio: ['pipe', 'pipe', 'inherit'] },
  );
  // The child's stdout, line by line: `listening <url>`, then one answer per command (in order).
  const answers: ((line: string) => void)[] = [];
  let listening: ((url: URL) => void) | undefined;
  const base = new Promise<URL>((resolve, reject) => {
    listening = resolve;
    child.once('exit', (code) => reject(new Error(`service exited ${code}`)));
  });
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const m = /^listening (\S+)/.exec(line);
    if (m && listening) {
      listening(new URL(m[1]!));
      listening = undefined;
    } else answers.shift()?.(line);
  });
  const command = (line: string) =>
    new Promise<string>((resolve) => {
      answers.push(resolve);
      child.stdin!.write(`${line}\n`);
    });
  const rssMiB = () => {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : Number.NaN;
  };
  return {
    base: await base,
    rssMiB,
    /** What the child's memory is made of (after a forced full collection with `force`). */
    async sample(force: boolean): Promise<MemorySample> {
      const line = await command(force ? 'sample gc' : 'sample');
      if (!line.startsWith('sample ')) throw new Error(`service: ${line}`);
      return JSON.parse(line.slice('sample '.length)) as MemorySample;
    },
    /** Writes a heap snapshot of the child to `file`. */
    async snapshot(file: string): Promise<void> {
      const line = await command(`snapshot ${file}`);
      if (line !== `snapshot ${file}`) throw new Error(`service: ${line}`);
    },
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

/** A sample in MiB, as reported per minute. */
function memoryMinute(minute: number, h: MemorySample): MemoryMinute {
  const mib = (b: number) => b / 1024 / 1024;
  return {
    minute,
    rssMiB: mib(h.rss),
    fullGcs: h.fullGcs,
    liveHeapMiB: h.liveAfterFullGc === null ? null : mib(h.liveAfterFullGc),
    heapTotalMiB: mib(h.heapTotal),
    peakHeapTotalMiB: mib(h.peakHeapTotal),
    newSpaceMiB: mib(h.spaces.new_space ?? 0),
    oldSpaceMiB: mib(h.spaces.old_space ?? 0),
    externalMiB: mib(h.external),
    arrayBuffersMiB: mib(h.arrayBuffers),
    mallocedMiB: mib(h.malloced),
    workerHeapUsedMiB: mib(h.workers.reduce((s, w) => s + w.heapUsed, 0)),
    workerHeapTotalMiB: mib(h.workers.reduce((s, w) => s + w.heapTotal, 0)),
    ...(h.rssAfterGc === null
      ? {}
      : { rssAfterForcedGcMiB: mib(h.rssAfterGc), heapUsedAfterForcedGcMiB: mib(h.heapUsed) }),
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
  let rounds = 0;
  let warmed = 0;
  let warmAt = Number.NaN;
  let minute = 0;
  const memoryPerMinute: MemoryMinute[] = [];
  const snapshots: string[] = [];
  const lastMinute = Math.max(2, Math.round(o.minutes));
  if (SNAPSHOTS !== undefined) mkdirSync(SNAPSHOTS, { recursive: true });
  /** The end of minute m: its progress line with the memory sample, and a snapshot when asked for. */
  const minuteDone = async (m: number) => {
    const mib = (x: number | null | undefined) => (x === null || x === undefined ? '–' : x.toFixed(0));
    const h = memoryMinute(m, await service.sample(HEAP));
    memoryPerMinute.push(h);
    let heap =
      `; live heap ${mib(h.liveHeapMiB)} MiB after ${h.fullGcs} full GCs, heap ${mib(h.heapTotalMiB)} (peak ${mib(h.peakHeapTotalMiB)};` +
      ` new ${mib(h.newSpaceMiB)}, old ${mib(h.oldSpaceMiB)}), external ${mib(h.externalMiB)},` +
      ` audit thread heap ${mib(h.workerHeapUsedMiB)} of ${mib(h.workerHeapTotalMiB)}`;
    if (HEAP)
      heap += `; forced GC: RSS ${mib(h.rssAfterForcedGcMiB)} MiB, heap used ${mib(h.heapUsedAfterForcedGcMiB)}`;
    if (SNAPSHOTS !== undefined && (m === 2 || m === lastMinute)) {
      const file = join(SNAPSHOTS, `${label}-minute-${m}.heapsnapshot`);
      await service.snapshot(file);
      snapshots.push(file);
      heap += `; heap snapshot ${file}`;
    }
    // Progress on long work: one line a minute on stderr (the tables go to stdout).
    process.stderr.write(
      `load ${label}: minute ${m}, ${rounds} rounds scored, ${requests} requests, ${errors5xx} 5xx, RSS ${mib(rss.at(-1)!.mib)} MiB${heap}\n`,
    );
  };
  // One minute's sample at a time, in order (a snapshot can take seconds).
  let diagnosing: Promise<void> = Promise.resolve();
  const sampler = setInterval(() => {
    const t = performance.now() - t0;
    rss.push({ t, mib: service.rssMiB() });
    if (t >= (minute + 1) * 60_000) {
      minute++;
      const m = minute;
      diagnosing = diagnosing.then(() => minuteDone(m));
    }
  }, 1000);
  await Promise.all(
    consortia.map(async (c) => {
      for (let r = 1; performance.now() < end; r++) {
        try {
          await round(c, r);
          rounds++;
          if (r === 1 && ++warmed === consortia.length) warmAt = performance.now() - t0;
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
  // A last sample, so that the last (part of a) minute has one even when the run ends just after a
  // minute's boundary, before the sampler's next tick.
  const tEnd = performance.now() - t0;
  rss.push({ t: tEnd, mib: service.rssMiB() });
  const elapsedMin = tEnd / 60_000;
  while (minute < Math.ceil(elapsedMin)) {
    minute++;
    const m = minute;
    diagnosing = diagnosing.then(() => minuteDone(m));
  }
  await diagnosing;
  agent.destroy();
  await service.stop();
  const inWindow = (from: number, to: number) => rss.filter((s) => s.t >= from && s.t < to).map((s) => s.mib);
  const peak = (from: number, to: number) => Math.max(...inWindow(from, to), Number.NEGATIVE_INFINITY);
  const trough = (from: number, to: number) => Math.min(...inWindow(from, to), Number.POSITIVE_INFINITY);
  const minutes = Array.from({ length: Math.ceil(elapsedMin) }, (_, m) => m);
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
    warmupMinutes: warmAt / 60_000,
    rssAfterWarmupMiB: Number.isNaN(warmAt) ? Number.NaN : peak(warmAt, warmAt + 60_000),
    rssPerMinuteMiB: minutes.map((m) => peak(m * 60_000, (m + 1) * 60_000)),
    rssMinPerMinuteMiB: minutes.map((m) => trough(m * 60_000, (m + 1) * 60_000)),
    memoryPerMinute,
    ...(SNAPSHOTS !== undefined ? { snapshots } : {}),
    routes: [...latencies.entries()]
      .map(([route, ms]) => {
        const s = [...ms].sort((a, b) => a - b);
        return { route, requests: s.length, p50: percentile(s, 50), p99: percentile(s, 99) };
      })
      .sort((a, b) => a.route.localeCompare(b.route)),
  };
}
