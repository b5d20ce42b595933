/**
 * The server under measurement for bench/server.ts: the app over a store whose every query is
 * timed (Kysely's `log` hook), listening on 127.0.0.1 with fastify hooks that time each request
 * server-side; and a minimal HTTP/1.1 keep-alive loader (node:http) with signed silo requests.
 */
import http from 'node:http';
import SQLite from 'better-sqlite3';
import { Kysely, PostgresDialect, SqliteDialect } from 'kysely';
import pg from 'pg';
import type { SigningKeyPair } from '../crypto/signature.js';
import { buildApp } from '../src/server/app.js';
import { signRequest } from '../src/server/auth.js';
import { openStore, type StoreHandle, type StoreLocation } from '../src/server/store/database.js';
import type { Database } from '../src/server/store/schema.js';

export const ADMIN = 'bench-admin-token-0123456789';

// ── storage with timing ──────────────────────────────────────────────────────────────────────

/**
 * A new, empty database on the PostgreSQL server of `url`, dropped by `drop()`: the SQLite store
 * is a new file in every run, and a database that kept every earlier run's rounds (8 MB
 * aggregates, 4 MB models, dead masked vectors awaiting vacuum) would make each run slower than
 * the one before. Falls back to `url` itself, saying so, when the role may not create databases.
 */
export async function freshPostgres(url: string): Promise<{ postgres: string; drop(): Promise<void> }> {
  const name = `fedscore_bench_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
  const admin = new pg.Client({ connectionString: url });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } catch (e) {
    await admin.end();
    console.log(
      `(PostgreSQL: cannot create a database for the run (${(e as Error).message}); using ${url} as it is)`,
    );
    return { postgres: url, drop: async () => {} };
  }
  const u = new URL(url);
  u.pathname = `/${name}`;
  return {
    postgres: u.toString(),
    drop: async () => {
      try {
        await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await admin.end();
      }
    },
  };
}

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

export interface Timing {
  storageMs: number;
  /** Storage time per SQL statement (its first 90 characters). */
  statements: Map<string, { ms: number; count: number }>;
  /** Σ (onRequest → preParsing) + (preValidation → onSend) over requests. */
  serverMs: number;
  requests: number;
}

/** The app over `location`, listening on 127.0.0.1, with the server-side timing hooks. */
export async function serve(location: StoreLocation) {
  const timing: Timing = { storageMs: 0, statements: new Map(), serverMs: 0, requests: 0 };
  const store = await timedStore(location, timing);
  const app = await buildApp({
    store,
    adminToken: ADMIN,
    rateLimit: { max: 1e9, windowMs: 60_000 },
  });
  // Server time: onRequest → preParsing (authentication, which runs before the body is read) plus
  // preValidation → onSend (the service); the body's transfer in between is transport.
  const received = new WeakMap<object, number>();
  const authenticated = new WeakMap<object, number>();
  const started = new WeakMap<object, number>();
  app.addHook('onRequest', async (request) => {
    received.set(request, performance.now());
  });
  app.addHook('preParsing', async (request) => {
    const t0 = received.get(request);
    if (t0 !== undefined) authenticated.set(request, performance.now() - t0);
  });
  app.addHook('preValidation', async (request) => {
    started.set(request, performance.now());
  });
  app.addHook('onSend', async (request) => {
    const t0 = started.get(request);
    if (t0 !== undefined) {
      timing.serverMs += performance.now() - t0 + (authenticated.get(request) ?? 0);
      timing.requests += 1;
    }
  });
  const base = await app.listen({ host: '127.0.0.1', port: 0 });
  return { app, store, timing, base: new URL(base) };
}

// ── a minimal HTTP loader ────────────────────────────────────────────────────────────────────

export interface Response {
  status: number;
  body: Buffer;
  ms: number;
}

export function request(
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

export function signedHeaders(
  key: SigningKeyPair,
  silo: number,
  method: string,
  path: string,
  body?: Uint8Array,
) {
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

export function expectStatus(r: Response, status: number, what: string): Response {
  if (r.status !== status) throw new Error(`${what}: HTTP ${r.status} ${r.body.toString().slice(0, 300)}`);
  return r;
}
