/**
 * Test harness: drives honest clients and the server by hand, stage by stage, so a test can stop
 * at any point, tamper with a message and feed it to the party under test.
 */
import { seededRandomFromInts } from '../../crypto/random-bytes.js';
import type { SigningKeyPair } from '../../crypto/signature.js';
import {
  type ClientState,
  clientHandle,
  clientStart,
  createClient,
  type SecAggDeps,
} from '../../protocol/client.js';
import type { RoundConfig } from '../../protocol/config.js';
import type { ClientMessage, ServerMessage } from '../../protocol/messages.js';
import { createServer, type ServerState, serverAdvance, serverHandle } from '../../protocol/server.js';
import { simulatedIdentities } from '../../protocol/simulate.js';

export interface Harness {
  config: RoundConfig;
  ids: SigningKeyPair[];
  inputs: Uint32Array[];
  clients: ClientState[];
  deps: SecAggDeps[];
  server: ServerState;
  /** Last message each client sent. */
  sent: Map<number, ClientMessage>;
  /** Last message the server addressed to each client. */
  inbox: Map<number, ServerMessage>;
}

/**
 * n silos with threshold t and vectors of d words. The round tolerates the largest n_C that t
 * allows (t ≥ ⌊(n + n_C)/2⌋ + 1 ⇔ n_C ≤ 2t − n − 1, protocol/config.ts): these tests exercise
 * the protocol's mechanics, test/security the bound itself.
 */
export function makeHarness(n: number, t: number, d: number, round = 1, seed = 1): Harness {
  const ids = simulatedIdentities(n, seed);
  const config: RoundConfig = {
    session: 'test-session',
    round,
    threshold: t,
    length: d,
    roster: ids.map((k) => k.publicKey),
    corruptTolerated: Math.max(0, Math.min(n - 1, 2 * t - n - 1)),
  };
  const inputs = Array.from({ length: n }, (_, i) =>
    Uint32Array.from({ length: d }, (_, j) => (i + 1) * 1000 + j),
  );
  return {
    config,
    ids,
    inputs,
    clients: inputs.map((x, i) => createClient(config, i, ids[i]!.secretKey, x)),
    deps: inputs.map((_, i) => ({ random: seededRandomFromInts(seed, round, i) })),
    server: createServer(config),
    sent: new Map(),
    inbox: new Map(),
  };
}

function submit(h: Harness, i: number, m: ClientMessage): void {
  h.sent.set(i, m);
  const step = serverHandle(h.server, m);
  if (step.reply.type !== 'accepted') throw new Error(`harness: server rejected ${i}: ${step.reply.code}`);
  h.server = step.state;
}

/** Round 0 for the given clients (default all). */
export function advertise(h: Harness, who = h.clients.map((_, i) => i)): void {
  for (const i of who) {
    const s = clientStart(h.clients[i]!, h.deps[i]!);
    h.clients[i] = s.state;
    if (s.reply.type !== 'send') throw new Error('harness: client did not send');
    submit(h, i, s.reply.message);
  }
}

/** Close the server's stage and store what it sends. */
export async function close(h: Harness): Promise<void> {
  const r = await serverAdvance(h.server);
  h.server = r.state;
  if (r.output.type !== 'send') throw new Error(`harness: server output ${r.output.type}`);
  for (const { to, message } of r.output.messages) h.inbox.set(to, message);
}

/** Deliver the stored server message to each given client and submit its reply. */
export async function respond(h: Harness, who: number[]): Promise<void> {
  for (const i of who) {
    const s = await clientHandle(h.clients[i]!, h.inbox.get(i)!, h.deps[i]!);
    h.clients[i] = s.state;
    if (s.reply.type !== 'send') throw new Error(`harness: client ${i} replied ${JSON.stringify(s.reply)}`);
    submit(h, i, s.reply.message);
  }
}

export const all = (h: Harness) => h.clients.map((_, i) => i);
