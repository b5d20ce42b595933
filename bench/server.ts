/**
 * Server benchmark (issue 6): the scoring service on loopback — a real fastify listening on
 * 127.0.0.1, driven over HTTP/1.1 keep-alive by this file's own loader (node:http) — on SQLite and,
 * when DATABASE_URL is set (scripts/ci-postgres.sh prints one), on PostgreSQL.
 *
 * Each store starts empty: SQLite in a new file, PostgreSQL in a new database on DATABASE_URL's
 * server (dropped at the end), so that no run inherits the rounds of the runs before it.
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
 *       - crypto + protocol, server: time from fastify's onRequest hook to its preParsing hook
 *         (authentication, which runs before the body is read) plus from its preValidation hook
 *         to its onSend hook (the service and protocol/server.ts, unmasking, JSON replies), minus
 *         the storage time and minus the server's codec time;
 *       - transport: each request's client-side wall time minus that server time (sockets, HTTP
 *         parsing, body streaming and copying), plus the binary codec (protocol/codec.ts) of
 *         client and server — the clients' encode/decode calls timed where they happen, the
 *         server's replayed on the same bytes (every client message is decoded twice by the
 *         service, on receipt and when its stage closes; every server message encoded once);
 *       - unaccounted: wall time minus the four parts (this file's own bookkeeping, GC pauses).
 *
 * The round runs three times per store, the stores taking turns round by round; the table shows
 * each store's median round and the ratio table each PostgreSQL round's wall time over the SQLite
 * round just before it (JSON `serverRound`: the median round's parts, `wallsS` and
 * `ratioToSQLite`, the median of those ratios).
 *
 * Run: npx tsx bench/server.ts [--quick]   (--quick: d = 10^5, fewer requests, one round per store)
 *
 * `--load [--minutes N] [--consortia C] [--silos S] [--store sqlite|postgres]` runs instead the load row of issue 34: C
 * consortia (8) × S silos (32) running rounds concurrently on one service for N minutes (10) per
 * store — rounds per minute, p50/p99 per route, peak RSS in minute 1 and the last minute, 5xx
 * (bench/_server-load.ts).
 *
 * The timed server and the HTTP loader are in bench/_server-loader.ts, the round driver in
 * bench/_server-round.ts; this file runs the two measurements and prints the tables.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { simulatedIdentities } from '../protocol/simulate.js';
import type { StoreLocation } from '../src/server/store/database.js';
import { report } from './_json.js';
import { type LoadResult, runLoad } from './_server-load.js';
import { freshPostgres, request, serve, signedHeaders } from './_server-loader.js';
import { createConsortium, N, runRound, THRESHOLD } from './_server-round.js';

const quick = process.argv.includes('--quick');

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

/** Rounds per store, interleaved store by store (the median's row is shown; noise is per run). */
const REPEATS = quick ? 1 : 3;

/** One timed round on `s`: its times and its costliest statements. */
async function timedRound(s: Awaited<ReturnType<typeof serve>>, d: number, rep: number) {
  const cid = `bench-round-${process.pid}-${Date.now().toString(36)}-${rep}`;
  const keys = simulatedIdentities(N, 9);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  await createConsortium(s, agent, cid, keys, d);
  const { times } = await runRound(
    s,
    agent,
    cid,
    keys,
    d,
    keys.map((_, i) => i),
  );
  agent.destroy();
  const statements = [...s.timing.statements].sort((x, y) => y[1].ms - x[1].ms).slice(0, 6);
  return { times, statements };
}

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** A `--name <n>` flag's value (a positive number), or `fallback`. */
function numberFlag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = Number(process.argv[i + 1]);
  if (!(v > 0)) throw new RangeError(`--${name}: expected a positive number, got '${process.argv[i + 1]}'`);
  return v;
}

/** The live heap (after V8's own full GCs) of the first and the last minute that had one. */
function liveHeapSpan(r: LoadResult): string {
  const live = r.memoryPerMinute.flatMap((h) => (h.liveHeapMiB === null ? [] : [h.liveHeapMiB]));
  return live.length === 0 ? '–' : `${live[0]!.toFixed(1)} → ${live.at(-1)!.toFixed(1)}`;
}

/** `--load`: the load row (bench/_server-load.ts) on each store, as tables. */
async function loadMain(): Promise<void> {
  const o = {
    minutes: numberFlag('minutes', 10),
    consortia: numberFlag('consortia', 8),
    silos: numberFlag('silos', 32),
  };
  const i = process.argv.indexOf('--store');
  const only = i < 0 ? undefined : process.argv[i + 1];
  if (only !== undefined && only !== 'sqlite' && only !== 'postgres')
    throw new RangeError(`--store: expected 'sqlite' or 'postgres', got '${only}'`);
  const url = process.env.DATABASE_URL;
  if (only === 'postgres' && !url)
    throw new Error('--store postgres: DATABASE_URL is not set (scripts/ci-postgres.sh starts a PostgreSQL)');
  const dir = mkdtempSync(join(tmpdir(), 'fedscore-bench-load-'));
  const postgres = url && only !== 'sqlite' ? await freshPostgres(url) : undefined;
  const results: LoadResult[] = [];
  try {
    if (only !== 'postgres') results.push(await runLoad('SQLite', { sqlite: join(dir, 'store.db') }, o));
    if (postgres) results.push(await runLoad('PostgreSQL', { postgres: postgres.postgres }, o));
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await postgres?.drop();
  }
  report('serverLoad', results as unknown as Record<string, unknown>[]);
  const mib = (x: number) => x.toFixed(0);
  console.log(
    `\n## Load held: ${o.consortia} consortia × ${o.silos} silos running rounds concurrently on one service (d = 1000), ${o.minutes} min per store\n`,
  );
  console.log(
    table(
      [
        'store',
        'minutes',
        'rounds',
        'rounds/min',
        'requests',
        '5xx',
        'other unexpected',
        'peak RSS min 1 MiB',
        'peak RSS last min MiB',
        'RSS growth',
        'warm-up min',
        'peak RSS after warm-up MiB',
        'growth after warm-up',
        'live heap first → last min MiB',
      ],
      results.map((r) => [
        r.store,
        r.minutes.toFixed(1),
        String(r.rounds),
        r.roundsPerMinute.toFixed(1),
        String(r.requests),
        String(r.errors5xx),
        String(r.unexpected),
        mib(r.rssMinute1MiB),
        mib(r.rssLastMinuteMiB),
        `${((100 * (r.rssLastMinuteMiB - r.rssMinute1MiB)) / r.rssMinute1MiB).toFixed(1)} %`,
        r.warmupMinutes.toFixed(1),
        mib(r.rssAfterWarmupMiB),
        `${((100 * (r.rssLastMinuteMiB - r.rssAfterWarmupMiB)) / r.rssAfterWarmupMiB).toFixed(1)} %`,
        liveHeapSpan(r),
      ]),
    ),
  );
  console.log('\nPeak RSS of each minute (MiB):\n');
  for (const r of results) console.log(`${r.store}: ${r.rssPerMinuteMiB.map(mib).join(' ')}`);
  console.log('\nLowest RSS of each minute (MiB; a leak lifts these with the peaks):\n');
  for (const r of results) console.log(`${r.store}: ${r.rssMinPerMinuteMiB.map(mib).join(' ')}`);
  const forced = results.some((r) => r.memoryPerMinute.some((h) => h.rssAfterForcedGcMiB !== undefined));
  console.log(
    "\nThe service's memory at the end of each minute (MiB): RSS; the live heap after the last full GC V8 ran by itself in the minute (a leak lifts it), and how many ran; the committed heap now (peak of the minute), new and old space; external; the audit thread's heap used / committed" +
      (forced ? '; with FEDSCORE_BENCH_HEAP=1, RSS and heap used after a forced full GC' : '') +
      ':\n',
  );
  console.log(
    table(
      [
        'store',
        'minute',
        'RSS',
        'live heap',
        'full GCs',
        'heap (peak)',
        'new space',
        'old space',
        'external',
        'audit thread heap',
        ...(forced ? ['RSS after forced GC', 'heap used after forced GC'] : []),
      ],
      results.flatMap((r) =>
        r.memoryPerMinute.map((h) => [
          r.store,
          String(h.minute),
          mib(h.rssMiB),
          h.liveHeapMiB === null ? '–' : h.liveHeapMiB.toFixed(1),
          String(h.fullGcs),
          `${mib(h.heapTotalMiB)} (${mib(h.peakHeapTotalMiB)})`,
          mib(h.newSpaceMiB),
          mib(h.oldSpaceMiB),
          h.externalMiB.toFixed(1),
          `${mib(h.workerHeapUsedMiB)} / ${mib(h.workerHeapTotalMiB)}`,
          ...(forced
            ? [
                h.rssAfterForcedGcMiB === undefined ? '–' : mib(h.rssAfterForcedGcMiB),
                h.heapUsedAfterForcedGcMiB === undefined ? '–' : h.heapUsedAfterForcedGcMiB.toFixed(1),
              ]
            : []),
        ]),
      ),
    ),
  );
  for (const r of results)
    if (r.snapshots !== undefined && r.snapshots.length > 0)
      console.log(`\n${r.store} heap snapshots: ${r.snapshots.join(', ')} (npx tsx bench/heap-diff.ts A B)`);
  console.log('\nLatency per route (client side, ms):\n');
  console.log(
    table(
      ['store', 'route', 'requests', 'p50 ms', 'p99 ms'],
      results.flatMap((r) =>
        r.routes.map((x) => [r.store, x.route, String(x.requests), x.p50.toFixed(1), x.p99.toFixed(1)]),
      ),
    ),
  );
}

export async function main(): Promise<void> {
  if (process.argv.includes('--load')) return loadMain();
  const dir = mkdtempSync(join(tmpdir(), 'fedscore-bench-server-'));
  const targets: { label: string; location: StoreLocation }[] = [
    { label: 'SQLite', location: { sqlite: join(dir, 'store.db') } },
  ];
  const url = process.env.DATABASE_URL;
  const postgres = url ? await freshPostgres(url) : undefined;
  if (postgres) targets.push({ label: 'PostgreSQL', location: { postgres: postgres.postgres } });
  else console.log('\n(DATABASE_URL not set: SQLite only; scripts/ci-postgres.sh starts a PostgreSQL)');
  const d = quick ? 100_000 : 1_000_000;
  const loadRows: string[][] = [];
  const roundRows: string[][] = [];
  const statementRows: string[][] = [];
  const ratioRows: string[][] = [];
  const servers: Awaited<ReturnType<typeof serve>>[] = [];
  try {
    for (const { location } of targets) servers.push(await serve(location));
    for (const [k, { label }] of targets.entries()) await reportLoad(servers[k]!, label, loadRows);
    // The stores take turns round by round, so that a slow spell of the machine hits both.
    const runs = targets.map(() => [] as Awaited<ReturnType<typeof timedRound>>[]);
    for (let rep = 0; rep < REPEATS; rep++)
      for (const k of targets.keys()) runs[k]!.push(await timedRound(servers[k]!, d, rep));
    for (const [k, { label }] of targets.entries()) {
      const walls = runs[k]!.map((r) => r.times.wallMs);
      const { times: t, statements } = runs[k]!.find((r) => r.times.wallMs === median(walls))!;
      for (const [sql, { ms, count }] of statements)
        statementRows.push([label, `\`${sql.replaceAll('|', '/')}\``, String(count), (ms / 1000).toFixed(2)]);
      const serverCrypto = t.serverMs - t.storageMs - t.serverCodecMs;
      const transport = t.requestMs - t.serverMs + t.clientCodecMs + t.serverCodecMs;
      const other = t.wallMs - transport - t.clientCryptoMs - serverCrypto - t.storageMs;
      const cell = (ms: number) => `${(ms / 1000).toFixed(2)} (${((100 * ms) / t.wallMs).toFixed(0)} %)`;
      report('serverRound', [
        {
          store: label,
          wallS: t.wallMs / 1000,
          storageS: t.storageMs / 1000,
          transportS: transport / 1000,
          clientCryptoS: t.clientCryptoMs / 1000,
          serverCryptoS: serverCrypto / 1000,
          requests: t.requests,
          wallsS: walls.map((w) => w / 1000),
          ratioToSQLite: k === 0 ? 1 : median(walls.map((w, i) => w / runs[0]![i]!.times.wallMs)),
        },
      ]);
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
      if (k > 0)
        ratioRows.push([
          `${label} / ${targets[0]!.label}`,
          ...walls.map((w, i) => (w / runs[0]![i]!.times.wallMs).toFixed(2)),
          median(walls.map((w, i) => w / runs[0]![i]!.times.wallMs)).toFixed(2),
        ]);
    }
  } finally {
    for (const s of servers) {
      await s.app.close();
      await s.store.close();
    }
    rmSync(dir, { recursive: true, force: true });
    await postgres?.drop();
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
    '\nserver ms/request: fastify onRequest→preParsing (authentication, before the body) + preValidation→onSend (report verification, store); ' +
      'storage: Σ Kysely per-query durations (SQLite commits are fsynced: synchronous = FULL). ' +
      'With concurrent requests these per-request times overlap (they include waiting for row locks, ' +
      'the connection pool and the event loop). p50/p99 are client-side, over the 200 responses.',
  );
  console.log(
    `\n## One ${N}-silo secure-aggregation round over HTTP, d = ${d.toLocaleString('en')} (t = ${THRESHOLD}, no dropouts; ` +
      `the median of ${REPEATS} rounds per store, the stores taking turns)\n`,
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
      'storage = Σ Kysely per-query durations; server = fastify onRequest→preParsing + preValidation→onSend per request minus ' +
      'storage minus the server codec; transport = Σ client-side request time minus that server time, ' +
      'plus the binary codec (client side timed in place, server side replayed on the same bytes); ' +
      'client crypto = Σ time in protocol/client.ts, request and report signing over the 20 silos ' +
      '(on separate machines it would run in parallel, ~1/20 of it on the critical path).',
  );
  if (ratioRows.length > 0) {
    console.log(`\nWall time of each round against the ${targets[0]!.label} round run just before it:\n`);
    console.log(
      table(['stores', ...Array.from({ length: REPEATS }, (_, i) => `round ${i + 1}`), 'median'], ratioRows),
    );
  }
  console.log("\nWhere the median round's storage time goes (the 6 costliest statements per store):\n");
  console.log(table(['store', 'statement', 'executions', 'total s'], statementRows));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
