/**
 * Test harness for the service: an app over a fresh SQLite file (or a given store), a fake
 * clock, simulated silo identities, signed requests, and an in-process silo that drives
 * protocol/client.ts over the HTTP API.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seededRandomFromInts } from '../../crypto/random-bytes.js';
import type { SigningKeyPair } from '../../crypto/signature.js';
import { type ClientState, clientHandle, clientStart, createClient } from '../../protocol/client.js';
import { decodeServerMessage, encodeClientMessage } from '../../protocol/codec.js';
import type { RoundConfig } from '../../protocol/config.js';
import type { ClientMessage } from '../../protocol/messages.js';
import { simulatedIdentities } from '../../protocol/simulate.js';
import { encodeWeightedInput } from '../../protocol/weighted.js';
import { type App, type BuildAppOptions, buildApp } from '../../src/server/app.js';
import { signRequest } from '../../src/server/auth.js';
import type { Evaluator } from '../../src/server/service/scoring-service.js';
import { openStore, type StoreHandle, type StoreLocation } from '../../src/server/store/database.js';

export const ADMIN = 'admin-token-0123456789abcdef';
export const T0 = 1_800_000_000_000;

/** A fake clock. */
export class Clock {
  constructor(public ms = T0) {}
  now = () => this.ms;
  advance(ms: number): void {
    this.ms += ms;
  }
}

/**
 * A toy utility: v(p) = −mean((p − target)²), target = 0.5 everywhere — a negative loss, so the
 * test consortia declare `utility: { name: 'negLoss', maxLoss: TOY_MAX_LOSS }`.
 */
export const evaluate: Evaluator = async (_c, p) => {
  let s = 0;
  for (const x of p) s += (x - 0.5) ** 2;
  return -s / p.length;
};

export interface Harness {
  app: App;
  store: StoreHandle;
  clock: Clock;
  keys: SigningKeyPair[];
  /** Closes the app and the store (and deletes the temp dir if the harness made one). */
  close(): Promise<void>;
  location: StoreLocation;
}

/** A temp directory with a SQLite file path inside. */
export function tempSqlite(): { location: StoreLocation; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'fedscore-server-'));
  return { location: { sqlite: join(dir, 'store.db') }, dir };
}

/** Builds an app over `location` (default: a fresh SQLite file). */
export async function harness(
  o: {
    location?: StoreLocation;
    clock?: Clock;
    n?: number;
    app?: Partial<BuildAppOptions>;
    keepDir?: boolean;
  } = {},
): Promise<Harness & { dir?: string }> {
  const temp = o.location ? undefined : tempSqlite();
  const location = o.location ?? temp!.location;
  const store = await openStore(location);
  const clock = o.clock ?? new Clock();
  const app = await buildApp({ store, adminToken: ADMIN, now: clock.now, evaluate, ...o.app });
  await app.ready();
  return {
    app,
    store,
    clock,
    location,
    keys: simulatedIdentities(o.n ?? 4, 11),
    ...(temp ? { dir: temp.dir } : {}),
    async close() {
      await app.close();
      await store.close();
      if (temp && !o.keepDir) rmSync(temp.dir, { recursive: true, force: true });
    },
  };
}

let nonceCounter = 0;
/** A fresh request nonce. */
export function nonce(): string {
  nonceCounter += 1;
  return `n${process.pid}x${nonceCounter}x${Math.random().toString(36).slice(2, 10)}`.padEnd(16, '0');
}

/** Injects a request signed by `silo`. */
export function siloInject(
  h: Pick<Harness, 'app' | 'clock' | 'keys'>,
  silo: number,
  method: 'GET' | 'POST',
  url: string,
  body?: Uint8Array,
  o: { timestamp?: number; nonce?: string; as?: number; headers?: Record<string, string> } = {},
) {
  const headers = signRequest(h.keys[o.as ?? silo]!.secretKey, {
    method,
    path: url,
    silo,
    timestamp: o.timestamp ?? h.clock.now(),
    nonce: o.nonce ?? nonce(),
    ...(body ? { body } : {}),
  });
  return h.app.inject({
    method,
    url,
    headers: { ...headers, ...(body ? { 'content-type': 'application/octet-stream' } : {}), ...o.headers },
    ...(body ? { payload: Buffer.from(body) } : {}),
  });
}

/** An admin request. */
export function adminInject(
  h: Pick<Harness, 'app'>,
  method: 'GET' | 'POST' | 'PUT',
  url: string,
  payload?: unknown,
) {
  const binary = payload instanceof Uint8Array;
  return h.app.inject({
    method,
    url,
    headers: {
      authorization: `Bearer ${ADMIN}`,
      ...(binary ? { 'content-type': 'application/octet-stream' } : {}),
    },
    ...(payload === undefined ? {} : { payload: binary ? Buffer.from(payload) : (payload as object) }),
  });
}

export const D = 6;
/** The bound of the toy utility's loss the test consortia declare (its values are far inside it). */
export const TOY_MAX_LOSS = 10;
export const ENCODING = { clip: 4, weightRange: 100 };

/** A consortium body for `keys`. */
export function consortiumBody(keys: readonly SigningKeyPair[], id = 'c1', threshold = 3) {
  return {
    id,
    participants: keys.map((k) => ({ publicKey: Buffer.from(k.publicKey).toString('hex') })),
    threshold,
    model: { name: 'toy', parameters: D },
    testSetDigest: 'ab'.repeat(32),
    schemes: ['loo', 'ioi', 'fp', 'ee', 'eeMedian'],
    encoding: ENCODING,
    utility: { name: 'negLoss' as const, maxLoss: TOY_MAX_LOSS },
  };
}

/** Float32 little-endian bytes of a vector. */
export function f32bytes(values: ArrayLike<number>): Uint8Array {
  return new Uint8Array(Float32Array.from(values as number[]).buffer);
}

/** The initial model of the tests. */
export const INITIAL = Float32Array.from({ length: D }, (_, j) => 0.1 * j);

/** Silo i's update and weight in round r. */
export function updateOf(i: number, r: number): { update: Float32Array; weight: number } {
  return {
    update: Float32Array.from({ length: D }, (_, j) => Math.sin(1 + i * 7 + j * 3 + r) * 0.5),
    weight: 1 + 0.5 * i, // w·Δ stays inside the clip (4)
  };
}

/** Creates the consortium and uploads the initial model. */
export async function createConsortium(h: Harness, id = 'c1', threshold = 3): Promise<void> {
  const c = await adminInject(h, 'POST', '/v1/consortia', consortiumBody(h.keys, id, threshold));
  if (c.statusCode !== 201) throw new Error(`create: ${c.statusCode} ${c.body}`);
  const m = await adminInject(h, 'PUT', `/v1/consortia/${id}/model`, f32bytes(INITIAL));
  if (m.statusCode !== 204) throw new Error(`model: ${m.statusCode} ${m.body}`);
}

/** The client side of one silo in one round, talking HTTP. */
export class Silo {
  state: ClientState;
  readonly deps;
  readonly input: Uint32Array;
  constructor(
    /** The service it talks to (tests may point it at a restarted app). */
    public h: Pick<Harness, 'app' | 'clock' | 'keys'>,
    readonly cid: string,
    readonly round: number,
    readonly id: number,
    threshold: number,
  ) {
    const config: RoundConfig = {
      session: cid,
      round,
      threshold,
      length: D + 1,
      roster: h.keys.map((k) => k.publicKey),
    };
    const { update, weight } = updateOf(id, round);
    this.input = encodeWeightedInput(update, weight, {
      valueRange: ENCODING.clip,
      weightRange: ENCODING.weightRange,
      n: h.keys.length,
    });
    this.state = createClient(config, id, h.keys[id]!.secretKey, this.input);
    this.deps = { random: seededRandomFromInts(0x7e57, round, id) };
  }

  private base(): string {
    return `/v1/consortia/${this.cid}/rounds/${this.round}`;
  }

  /** Posts a client message to its stage endpoint; returns the response. */
  post(message: ClientMessage) {
    return siloInject(
      this.h,
      this.id,
      'POST',
      `${this.base()}/${message.type}`,
      encodeClientMessage(message),
    );
  }

  /** Round 0: advertise. */
  async start(): Promise<ClientMessage> {
    const step = clientStart(this.state, this.deps);
    this.state = step.state;
    if (step.reply.type !== 'send') throw new Error('start did not send');
    const res = await this.post(step.reply.message);
    if (res.statusCode !== 202) throw new Error(`advertise: ${res.statusCode} ${res.body}`);
    return step.reply.message;
  }

  /** Round 0 again, locally, without posting (a silo restoring its state after a server crash). */
  replayStart(): void {
    this.state = clientStart(this.state, this.deps).state;
  }

  /**
   * Handles the inbox message of `kind` without posting the reply (the server already has it, or
   * the test posts it itself); returns the reply.
   */
  replayStep(kind: InboxKind): Promise<ClientMessage> {
    return this.handle(kind);
  }

  private async handle(kind: InboxKind): Promise<ClientMessage> {
    const got = await siloInject(this.h, this.id, 'GET', `${this.base()}/inbox/${kind}`);
    if (got.statusCode !== 200) throw new Error(`inbox ${kind}: ${got.statusCode} ${got.body}`);
    const step = await clientHandle(
      this.state,
      decodeServerMessage(new Uint8Array(got.rawPayload)),
      this.deps,
    );
    this.state = step.state;
    if (step.reply.type !== 'send') throw new Error(`${kind}: client replied ${JSON.stringify(step.reply)}`);
    return step.reply.message;
  }

  /** Reads the inbox message of `kind`, handles it and posts the reply. */
  async step(kind: InboxKind): Promise<ClientMessage> {
    const message = await this.handle(kind);
    const res = await this.post(message);
    if (res.statusCode !== 202) throw new Error(`${message.type}: ${res.statusCode} ${res.body}`);
    return message;
  }
}

type InboxKind = 'keys' | 'shares' | 'survivors' | 'unmask-request';

/** The stages after advertise, with the inbox kind each one answers. */
export const STEPS = ['keys', 'shares', 'survivors', 'unmask-request'] as const;

/**
 * Starts the service in a child process (`_child.ts`) over `kind` storage at `target`, lets it
 * acknowledge messages, and kills it with SIGKILL as soon as the first ShareKeys message is
 * acknowledged (mid-stage). Returns the acknowledgement lines it printed.
 */
export async function runChildUntilMidShare(
  kind: 'sqlite' | 'postgres',
  target: string,
  clock: Clock,
): Promise<string[]> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', new URL('./_child.ts', import.meta.url).pathname, kind, target],
    {
      env: { ...process.env, FEDSCORE_TEST_CLOCK: String(clock.ms), FEDSCORE_TEST_ADMIN: ADMIN },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const acked: string[] = [];
  await new Promise<void>((resolve, reject) => {
    let buf = '';
    child.stdout!.on('data', (d: Buffer) => {
      buf += d.toString();
      const lines = buf.split('\n');
      buf = lines.pop()!;
      for (const l of lines) {
        if (l.startsWith('acked')) acked.push(l);
        if (l === 'acked share 1' || l === 'ready') {
          child.kill('SIGKILL');
          resolve();
        }
      }
    });
    child.on('exit', (code, signal) =>
      signal === 'SIGKILL' ? resolve() : reject(new Error(`child exited ${code}`)),
    );
  });
  if (child.exitCode === null && child.signalCode === null) await new Promise((r) => child.once('exit', r));
  return acked;
}
