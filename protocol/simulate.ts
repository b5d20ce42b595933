/**
 * In-process driver: runs one whole secure-aggregation round over n clients and a server, all
 * driving the same state machines (client.ts, server.ts) the networked service uses, with
 * optional dropouts at given points. Messages go through the binary codec by default, so the
 * simulation also exercises the wire format and counts its bytes.
 *
 * This is what the round engine (src/sim) calls in private mode:
 *
 *   const r = await simulateRound({ session, round, threshold, inputs, signingKeys, seed });
 *   if (r.ok) dequantize(r.result.sum) …   else r.code (e.g. 'BELOW_THRESHOLD')
 */
import { checkBytes, checkInt, checkString } from '../crypto/check.js';
import type { RandomSource } from '../crypto/random-bytes.js';
import { seededRandomFromInts } from '../crypto/random-bytes.js';
import { type SigningKeyPair, signingKeyPairFromSeed } from '../crypto/signature.js';
import { type ClientState, type ClientStep, clientHandle, clientStart, createClient } from './client.js';
import {
  decodeClientMessage,
  decodeServerMessage,
  encodeClientMessage,
  encodeServerMessage,
} from './codec.js';
import type { CorrectionMode, RoundConfig } from './config.js';
import type { SecAggErrorCode } from './errors.js';
import type { ClientMessage, RoundContext, ServerMessage } from './messages.js';
import {
  type AggregationResult,
  createServer,
  type ServerStage,
  type ServerState,
  COLLECTING_STAGES as STAGES,
  serverAdvance,
  serverHandle,
} from './server.js';
import { simulationRandom } from './simulation-random.js';
import type { WeightedEncoding } from './weighted.js';

/** Where a silo vanishes: it sends the named stage's message and nothing after it. */
export type DropPoint =
  | 'before-advertise'
  | 'after-advertise'
  | 'after-share'
  | 'after-mask'
  | 'after-consistency';

const DROP_INDEX: Record<DropPoint, number> = {
  'before-advertise': -1,
  'after-advertise': 0,
  'after-share': 1,
  'after-mask': 2,
  'after-consistency': 3,
};

/** A message seen on the simulated wire (for transcripts and statistical tests). */
export type WireEvent =
  | {
      readonly direction: 'up';
      readonly from: number;
      readonly message: ClientMessage;
      readonly bytes: number;
    }
  | {
      readonly direction: 'down';
      readonly to: number;
      readonly message: ServerMessage;
      readonly bytes: number;
    };

/** Hooks called around each party's steps (the bench times them; protocol/ reads no clock). */
export interface StepHooks {
  readonly before?: (party: number | 'server', stage: ServerStage) => void;
  readonly after?: (party: number | 'server', stage: ServerStage) => void;
  /** The server state about to close `stage` (states are immutable: it may be replayed). */
  readonly serverState?: (stage: ServerStage, state: ServerState) => void;
  /** Silo `party`'s state and the server message it is about to handle at `stage` (replayable). */
  readonly clientState?: (
    party: number,
    stage: ServerStage,
    state: ClientState,
    message: ServerMessage,
  ) => void;
}

/** Options of {@link simulateRound}. */
export interface SimulationOptions {
  readonly session: string;
  readonly round: number;
  /** Threshold t (protocol/config.ts: at least ⌊(n + n_C)/2⌋ + 1 unless `weakThreshold`). */
  readonly threshold: number;
  /** RoundConfig.corruptTolerated: n_C (default ⌈n/3⌉ − 1). */
  readonly corruptTolerated?: number;
  /** RoundConfig.weakThreshold: the explicit opt-in to a threshold below the bound. */
  readonly weakThreshold?: boolean;
  /** RoundConfig.encoding: the inputs are weighted; the server checks the aggregate. */
  readonly encoding?: WeightedEncoding;
  /** Quantized inputs x_i, all of the same length; index = silo id. Not modified. */
  readonly inputs: readonly Uint32Array[];
  /** Ed25519 secret keys of the silos (index = silo id); the roster is their public keys. */
  readonly signingKeys: readonly SigningKeyPair[];
  /**
   * Each silo's round context (the digests of its model and of the round's weight vector, signed
   * in AdvertiseKeys and ConsistencyCheck; index = silo id); default NO_CONTEXT for every silo.
   * Honest silos of one round have identical contexts; a difference aborts the round
   * (MODEL_MISMATCH / WEIGHTS_MISMATCH).
   */
  readonly contexts?: readonly RoundContext[];
  /**
   * Random source of each silo. Give either this or `seed`. A stream must never be reused across
   * rounds: equal keys and seeds in two rounds would let the server collect the key shares of a
   * silo in one round and its seed shares in another, and unmask it.
   */
  readonly random?: (silo: number) => RandomSource;
  /**
   * Simulation seed: silo i then draws from simulationRandom(seed, round, i)
   * (./simulation-random.ts — public-seed randomness, for simulations only).
   */
  readonly seed?: number;
  /** Silos that drop out, and where. */
  readonly dropouts?: ReadonlyMap<number, DropPoint>;
  /** RoundConfig.corrections (default 'off'). */
  readonly corrections?: CorrectionMode;
  /** Send messages through the binary codec (default true). */
  readonly wire?: boolean;
  /** Called for every message on the wire. */
  readonly observe?: (event: WireEvent) => void;
  readonly hooks?: StepHooks;
}

/** Outcome of a simulated round. */
export type SimulationResult =
  | {
      readonly ok: true;
      readonly result: AggregationResult;
      readonly bytesUp: number;
      readonly bytesDown: number;
      /** Client messages the server rejected (none in an honest run). */
      readonly rejected: readonly { readonly from: number; readonly code: SecAggErrorCode }[];
    }
  | {
      readonly ok: false;
      readonly code: SecAggErrorCode;
      readonly detail: string;
      /** Stage at which the round stopped. */
      readonly stage: ServerStage;
      /** Silo whose client aborted, when it was a client (undefined for a server abort). */
      readonly silo?: number;
      /** Silos the server named as the cause of its abort. */
      readonly culprits?: readonly number[];
    };

/**
 * Deterministic signing identities for simulations: silo i's Ed25519 key from (seed, i).
 *
 * @throws RangeError if n is not in [2, 255] or seed not in [0, 2^32).
 */
export function simulatedIdentities(n: number, seed: number): SigningKeyPair[] {
  checkInt('n', n, 2, 255);
  checkInt('seed', seed, 0, 0xffffffff);
  return Array.from({ length: n }, (_, i) => signingKeyPairFromSeed(seededRandomFromInts(0x1d, seed, i)(32)));
}

/**
 * Runs one secure-aggregation round in process. Every stage closes as soon as all silos that
 * are still present have answered (the simulated deadline).
 *
 * @returns `{ ok: true, result }` with Σ_{u ∈ U_3} x_u, or `{ ok: false, code }` — BELOW_THRESHOLD
 *   when dropouts leave fewer than t silos at some stage.
 * @throws TypeError / RangeError naming the bad option.
 */
export async function simulateRound(options: SimulationOptions): Promise<SimulationResult> {
  const o = options;
  checkString('session', o.session, 255);
  if (!Array.isArray(o.inputs)) throw new TypeError('inputs: expected an array of Uint32Array');
  if (!Array.isArray(o.signingKeys) || o.signingKeys.length !== o.inputs.length)
    throw new RangeError('signingKeys: expected one key pair per input');
  if (o.random !== undefined && typeof o.random !== 'function')
    throw new TypeError('random: expected a function of the silo id');
  if ((o.random === undefined) === (o.seed === undefined))
    throw new TypeError('random: give exactly one of random and seed');
  if (o.seed !== undefined) checkInt('seed', o.seed, 0, 0xffffffff);
  checkInt('round', o.round, 0, 0xffffffff);
  const randomOf = o.random ?? ((i: number) => simulationRandom(o.seed!, o.round, i));
  const n = o.inputs.length;
  const length = o.inputs[0]?.length ?? 0;
  o.signingKeys.forEach((k, i) => {
    checkBytes(`signingKeys[${i}].publicKey`, k.publicKey, 32);
  });
  const config: RoundConfig = {
    session: o.session,
    round: o.round,
    threshold: o.threshold,
    length,
    roster: o.signingKeys.map((k) => k.publicKey),
    ...(o.corrections === undefined ? {} : { corrections: o.corrections }),
    ...(o.corruptTolerated === undefined ? {} : { corruptTolerated: o.corruptTolerated }),
    ...(o.weakThreshold === undefined ? {} : { weakThreshold: o.weakThreshold }),
    ...(o.encoding === undefined ? {} : { encoding: o.encoding }),
  };
  const wire = o.wire ?? true;
  /** Index of the last stage silo i takes part in (4 = Unmasking, i.e. it never drops). */
  const drop = (i: number) => {
    const p = o.dropouts?.get(i);
    return p === undefined ? STAGES.length - 1 : DROP_INDEX[p];
  };
  for (const [i, p] of o.dropouts ?? []) {
    checkInt('dropouts key', i, 0, n - 1);
    if (!(p in DROP_INDEX)) throw new RangeError(`dropouts: unknown drop point ${String(p)}`);
  }

  let server: ServerState = createServer(config);
  if (o.contexts !== undefined && (!Array.isArray(o.contexts) || o.contexts.length !== n))
    throw new RangeError('contexts: expected one round context per input');
  const clients: ClientState[] = o.inputs.map((x, i) =>
    createClient(config, i, o.signingKeys[i]!.secretKey, x, o.contexts?.[i]),
  );
  const deps = o.inputs.map((_, i) => ({ random: randomOf(i) }));
  let bytesUp = 0;
  let bytesDown = 0;
  const rejected: { from: number; code: SecAggErrorCode }[] = [];

  const up = (from: number, m: ClientMessage) => {
    let msg = m;
    let size = 0;
    if (wire) {
      const b = encodeClientMessage(m);
      size = b.length;
      bytesUp += size;
      msg = decodeClientMessage(b);
    }
    o.observe?.({ direction: 'up', from, message: msg, bytes: size });
    const step = serverHandle(server, msg);
    server = step.state;
    if (step.reply.type === 'rejected') rejected.push({ from, code: step.reply.code });
  };
  const down = (to: number, m: ServerMessage): ServerMessage => {
    if (!wire) {
      o.observe?.({ direction: 'down', to, message: m, bytes: 0 });
      return m;
    }
    const b = encodeServerMessage(m);
    bytesDown += b.length;
    const msg = decodeServerMessage(b);
    o.observe?.({ direction: 'down', to, message: msg, bytes: b.length });
    return msg;
  };
  const clientFailed = (i: number, step: ClientStep): SimulationResult | null =>
    step.reply.type === 'abort'
      ? { ok: false, code: step.reply.code, detail: step.reply.detail, stage: server.stage, silo: i }
      : null;

  for (let i = 0; i < n; i++) {
    if (drop(i) < 0) continue;
    o.hooks?.before?.(i, 'advertise');
    const step = clientStart(clients[i]!, deps[i]!);
    o.hooks?.after?.(i, 'advertise');
    clients[i] = step.state;
    const failed = clientFailed(i, step);
    if (failed) return failed;
    if (step.reply.type === 'send') up(i, step.reply.message);
  }
  for (let k = 0; k < STAGES.length; k++) {
    const stage = STAGES[k]!;
    o.hooks?.serverState?.(stage, server);
    o.hooks?.before?.('server', stage);
    const adv = await serverAdvance(server);
    o.hooks?.after?.('server', stage);
    server = adv.state;
    const out = adv.output;
    if (out.type === 'abort')
      return { ok: false, code: out.code, detail: out.detail, stage, culprits: out.culprits };
    if (out.type === 'result') return { ok: true, result: out.result, bytesUp, bytesDown, rejected };
    const next = STAGES[k + 1]!;
    for (const { to, message } of out.messages) {
      if (drop(to) < k + 1) continue; // vanished after stage k
      const msg = down(to, message);
      o.hooks?.clientState?.(to, next, clients[to]!, msg);
      o.hooks?.before?.(to, next);
      const step = await clientHandle(clients[to]!, msg, deps[to]!);
      o.hooks?.after?.(to, next);
      clients[to] = step.state;
      const failed = clientFailed(to, step);
      if (failed) return failed;
      if (step.reply.type === 'send') up(to, step.reply.message);
    }
  }
  throw new Error('unreachable: the server returns a result or an abort after Unmasking');
}
