/**
 * Attack harness for test/security: drives honest clients and the honest server state machines
 * stage by stage (as test/protocol/_harness.ts does) and lets a test act as a corrupt silo — it
 * holds every silo's signing key, so it can rewrite a corrupt silo's message and sign it again —
 * or as a malicious server, by writing the server's messages itself.
 */
import { seededRandomFromInts } from '../../crypto/random-bytes.js';
import { type SigningKeyPair, sign } from '../../crypto/signature.js';
import {
  type ClientState,
  clientHandle,
  clientStart,
  createClient,
  type SecAggDeps,
} from '../../protocol/client.js';
import { signedPayload } from '../../protocol/codec.js';
import type { RoundConfig } from '../../protocol/config.js';
import type {
  ClientMessage,
  RoundContext,
  ServerMessage,
  ShareKeys,
  UnsignedClientMessage,
} from '../../protocol/messages.js';
import {
  COLLECTING_STAGES,
  createServer,
  type ServerOutput,
  type ServerState,
  serverAdvance,
  serverHandle,
} from '../../protocol/server.js';
import { simulatedIdentities } from '../../protocol/simulate.js';

export interface Party {
  config: RoundConfig;
  ids: SigningKeyPair[];
  clients: ClientState[];
  deps: SecAggDeps[];
  server: ServerState;
}

/** n silos with the given inputs (index = silo id) and round configuration fields. */
export function parties(
  inputs: readonly Uint32Array[],
  config: Omit<RoundConfig, 'roster' | 'length'>,
  seed = 7,
  /** Each silo's signed round context (default: none, equal for all). */
  contexts?: readonly RoundContext[],
): Party {
  const ids = simulatedIdentities(inputs.length, seed);
  const full: RoundConfig = { ...config, length: inputs[0]!.length, roster: ids.map((k) => k.publicKey) };
  return {
    config: full,
    ids,
    clients: inputs.map((x, i) => createClient(full, i, ids[i]!.secretKey, x, contexts?.[i])),
    deps: inputs.map((_, i) => ({ random: seededRandomFromInts(seed, config.round, i) })),
    server: createServer(full),
  };
}

/** `m` with its body changed by its (corrupt) sender and signed again with the sender's key. */
export function resign<M extends ClientMessage>(p: Party, m: M, change: Partial<Omit<M, 'signature'>>): M {
  const { signature: _s, ...body } = { ...m, ...change };
  return {
    ...body,
    signature: sign(p.ids[m.sender]!.secretKey, signedPayload(body as UnsignedClientMessage)),
  } as M;
}

/**
 * Tampering hook: the message silo `from` sends in `stage`, before the server sees it; return it
 * (possibly rewritten with {@link resign}) or null to withhold it (the silo drops).
 */
export type Tamper = (stage: string, from: number, m: ClientMessage) => ClientMessage | null;

/** How an honest round run by {@link runHonestServer} ended. */
export type Outcome =
  | {
      kind: 'result';
      output: Extract<ServerOutput, { type: 'result' }>;
      server: ServerState;
      rejected: string[];
    }
  | { kind: 'server-abort'; output: Extract<ServerOutput, { type: 'abort' }>; server: ServerState }
  | { kind: 'client-abort'; silo: number; code: string; detail: string };

/**
 * Runs a whole round with the honest server; `drop` maps a silo to the last stage index it sends
 * (0 = AdvertiseKeys … 3 = ConsistencyCheck); `tamper` rewrites messages of corrupt silos.
 */
export async function runHonestServer(
  p: Party,
  o: { drop?: ReadonlyMap<number, number>; tamper?: Tamper } = {},
): Promise<Outcome> {
  const rejected: string[] = [];
  const last = (i: number) => o.drop?.get(i) ?? COLLECTING_STAGES.length - 1;
  const up = (stage: string, from: number, m: ClientMessage) => {
    const sent = o.tamper ? o.tamper(stage, from, m) : m;
    if (sent === null) return;
    const step = serverHandle(p.server, sent);
    p.server = step.state;
    if (step.reply.type === 'rejected') rejected.push(`${from}:${step.reply.code}`);
  };
  for (let i = 0; i < p.clients.length; i++) {
    if (last(i) < 0) continue;
    const s = clientStart(p.clients[i]!, p.deps[i]!);
    p.clients[i] = s.state;
    if (s.reply.type === 'send') up('advertise', i, s.reply.message);
  }
  for (let k = 0; k < COLLECTING_STAGES.length; k++) {
    const adv = await serverAdvance(p.server);
    p.server = adv.state;
    if (adv.output.type === 'abort') return { kind: 'server-abort', output: adv.output, server: p.server };
    if (adv.output.type === 'result')
      return { kind: 'result', output: adv.output, server: p.server, rejected };
    for (const { to, message } of adv.output.messages) {
      if (last(to) < k + 1) continue;
      const s = await clientHandle(p.clients[to]!, message as ServerMessage, p.deps[to]!);
      p.clients[to] = s.state;
      if (s.reply.type === 'abort')
        return { kind: 'client-abort', silo: to, code: s.reply.code, detail: s.reply.detail };
      if (s.reply.type === 'send') up(COLLECTING_STAGES[k + 1]!, to, s.reply.message);
    }
  }
  throw new Error('unreachable');
}

/**
 * Every silo advertises and the server closes AdvertiseKeys; returns silo `i`'s ShareKeys, not
 * yet sent (the server is then collecting ShareKeys).
 */
export async function shareKeysOf(p: Party, i: number): Promise<ShareKeys> {
  for (let j = 0; j < p.clients.length; j++) {
    const s = clientStart(p.clients[j]!, p.deps[j]!);
    p.clients[j] = s.state;
    if (s.reply.type === 'send') p.server = serverHandle(p.server, s.reply.message).state;
  }
  const adv = await serverAdvance(p.server);
  p.server = adv.state;
  if (adv.output.type !== 'send') throw new Error('expected the key list');
  const keys = adv.output.messages.find((m) => m.to === i)!.message;
  const s = await clientHandle(p.clients[i]!, keys, p.deps[i]!);
  p.clients[i] = s.state;
  if (s.reply.type !== 'send' || s.reply.message.type !== 'share') throw new Error('expected ShareKeys');
  return s.reply.message;
}

/** Σ of the given silos' inputs over Z_(2^32). */
export function plainSum(inputs: readonly Uint32Array[], silos: readonly number[]): Uint32Array {
  const out = new Uint32Array(inputs[0]!.length);
  for (const i of silos) for (let j = 0; j < out.length; j++) out[j]! += inputs[i]![j]!;
  return out;
}
