/**
 * The server side of secure aggregation: Bonawitz et al., ACM CCS 2017, Fig. 4 (active model).
 *
 * Two kinds of step, both without I/O or clock:
 *  - {@link serverHandle}: one client message → accepted or rejected with a code (a rejected
 *    message leaves the state unchanged: a bad or replayed message cannot disturb the round);
 *  - {@link serverAdvance}: the current stage's deadline → the messages for the next stage, an
 *    abort (fewer than t participants), or, after Unmasking, the sum.
 * The transport decides when a stage's deadline has come (all expected messages arrived, or a
 * timeout); the state machine does not read a clock. A transport that keeps the round in storage
 * rather than memory (src/server) asks {@link stageProgress} whether everyone expected has sent,
 * {@link messagesRead} which stored messages a step needs, and {@link restoreServer} for the state.
 *
 * The server checks every client message against the roster (signature, session, round,
 * stage, sender, duplicate) so it cannot be tricked by a replay, and it only ever holds masked
 * vectors: y_u for u ∈ U_3 and the reconstructed masks, never an individual x_u.
 */
import { SHARE_LENGTH, shareIndex } from '../crypto/shamir.js';
import { verify } from '../crypto/signature.js';
import { sameIds } from './_keys.js';
import type { SecAggDeps } from './client.js';
import { signedPayload } from './codec.js';
import { checkRoundConfig, type RoundConfig } from './config.js';
import type { Fault, SecAggErrorCode } from './errors.js';
import {
  type AdvertiseKeys,
  type ClientMessage,
  type ConsistencyCheck,
  type MaskedInput,
  PROTOCOL_VERSION,
  type ServerMessage,
  type ShareKeys,
  type UnmaskResponse,
} from './messages.js';
import { unmaskSum } from './reconstruct.js';

/**
 * The stages that collect client messages, in protocol order (Bonawitz et al. 2017, rounds 0–4).
 * Each collects the client message of the same name (`ClientMessage['type']`).
 */
export const COLLECTING_STAGES = [
  'advertise',
  'share',
  'mask',
  'consistency',
  'unmask',
] as const satisfies readonly ClientMessage['type'][];

/** A stage that collects one kind of client message. */
export type CollectingStage = (typeof COLLECTING_STAGES)[number];

/** Stages of the server: the collecting stages, then done (the sum is known) or aborted. */
export type ServerStage = CollectingStage | 'done' | 'aborted';

/**
 * The server messages a closing stage sends its participants, in protocol order: the keys of U_1,
 * the relayed shares, U_3 and the unmasking request (Unmasking ends with the sum instead; an
 * abort notice is no stage's message).
 */
export const STAGE_MESSAGE_TYPES = [
  'keys',
  'shares',
  'survivors',
  'unmask-request',
] as const satisfies readonly ServerMessage['type'][];

/** The type of a server message a closing stage sends. */
export type StageMessageType = (typeof STAGE_MESSAGE_TYPES)[number];

/** Whether `stage` collects client messages (is neither done nor aborted). */
export function isCollectingStage(stage: string): stage is CollectingStage {
  return (COLLECTING_STAGES as readonly string[]).includes(stage);
}

/** The field of {@link ServerState} holding each collecting stage's accepted messages. */
const RECEIVED = {
  advertise: 'adverts',
  share: 'shares',
  mask: 'masked',
  consistency: 'checks',
  unmask: 'unmasks',
} as const satisfies Record<CollectingStage, keyof ServerState>;

function receivedIn(state: ServerState, stage: CollectingStage): ReadonlyMap<number, ClientMessage> {
  return state[RECEIVED[stage]] as ReadonlyMap<number, ClientMessage>;
}

/** Outcome of a completed round. */
export interface AggregationResult {
  /** Σ_{u ∈ U_3} x_u over Z_(2^32). */
  readonly sum: Uint32Array;
  /** U_3: the silos whose inputs are in the sum, ascending. */
  readonly survivors: readonly number[];
  /** U_2 ∖ U_3: silos that shared keys but dropped before sending their masked input. */
  readonly dropped: readonly number[];
  /** Participant sets of every stage (U_1 … U_5), for audit logs. */
  readonly sets: readonly (readonly number[])[];
  /**
   * Misbehaviour the server detected and survived: bad shares discarded (BAD_SHARE) and wrong
   * corrections replaced (BAD_CORRECTION), each naming its sender (protocol/reconstruct.ts).
   */
  readonly faults: readonly Fault[];
}

/** Server state: the messages accepted per stage and the participant sets of closed stages. */
export interface ServerState {
  readonly stage: ServerStage;
  readonly config: RoundConfig;
  readonly adverts: ReadonlyMap<number, AdvertiseKeys>;
  readonly shares: ReadonlyMap<number, ShareKeys>;
  readonly masked: ReadonlyMap<number, MaskedInput>;
  readonly checks: ReadonlyMap<number, ConsistencyCheck>;
  readonly unmasks: ReadonlyMap<number, UnmaskResponse>;
  /** U_1 … U_k of the stages closed so far, ascending. */
  readonly sets: readonly (readonly number[])[];
  readonly result?: AggregationResult;
  readonly error?: {
    readonly code: SecAggErrorCode;
    readonly detail: string;
    /** Silos named as the cause of the abort (bad shares, bad dealing), ascending. */
    readonly culprits?: readonly number[];
  };
}

/** Reply to one client message. */
export type ServerAck =
  | { readonly type: 'accepted' }
  | { readonly type: 'rejected'; readonly code: SecAggErrorCode; readonly detail: string };

/** What the transport should do when a stage closes. */
export type ServerOutput =
  | {
      readonly type: 'send';
      readonly messages: readonly { readonly to: number; readonly message: ServerMessage }[];
    }
  | {
      readonly type: 'abort';
      readonly code: SecAggErrorCode;
      readonly detail: string;
      readonly to: readonly number[];
      /** Silos named as the cause (empty for a dropout or an unattributable aggregate). */
      readonly culprits: readonly number[];
      /** Misbehaviour detected before the abort (protocol/reconstruct.ts). */
      readonly faults: readonly Fault[];
    }
  | { readonly type: 'result'; readonly result: AggregationResult };

/** A server at the start of round 0. @throws TypeError / RangeError naming the bad config field. */
export function createServer(config: RoundConfig): ServerState {
  checkRoundConfig(config);
  const empty = new Map();
  return {
    stage: 'advertise',
    config,
    adverts: empty,
    shares: empty,
    masked: empty,
    checks: empty,
    unmasks: empty,
    sets: [],
  };
}

function reject(
  state: ServerState,
  code: SecAggErrorCode,
  detail: string,
): { state: ServerState; reply: ServerAck } {
  return { state, reply: { type: 'rejected', code, detail } };
}

/**
 * Accepts or rejects one client message (the server's single transition check).
 *
 * Checks, in order: version, session, round, registered sender, signature, stage
 * (OUT_OF_ORDER), first message of this sender in this stage (DUPLICATE), sender in the previous
 * stage's set (NOT_A_PARTICIPANT), then the content (receivers, vector length, survivor set,
 * requested shares).
 */
export function serverHandle(
  state: ServerState,
  message: ClientMessage,
  _deps?: SecAggDeps,
): { state: ServerState; reply: ServerAck } {
  const { config } = state;
  if (message.version !== PROTOCOL_VERSION)
    return reject(state, 'UNSUPPORTED_VERSION', `version ${message.version}`);
  if (message.session !== config.session) return reject(state, 'WRONG_SESSION', `session ${message.session}`);
  if (message.round !== config.round) return reject(state, 'WRONG_ROUND', `round ${message.round}`);
  const from = message.sender;
  if (!Number.isInteger(from) || from < 0 || from >= config.roster.length)
    return reject(state, 'UNKNOWN_SENDER', `sender ${from}`);
  if (config.participants !== undefined && !config.participants.includes(from))
    return reject(state, 'UNKNOWN_SENDER', `sender ${from} is not a participant of round ${config.round}`);
  let payload: Uint8Array;
  try {
    payload = signedPayload(message);
  } catch (e) {
    return reject(state, 'MALFORMED', (e as Error).message);
  }
  if (!(message.signature instanceof Uint8Array) || !verify(config.roster[from]!, payload, message.signature))
    return reject(state, 'BAD_SIGNATURE', `message of ${from} is not signed by its registered key`);
  if (state.stage !== message.type)
    return reject(
      state,
      'OUT_OF_ORDER',
      `${message.type} while collecting ${isCollectingStage(state.stage) ? state.stage : 'nothing'}`,
    );
  const key = RECEIVED[message.type];
  const current = receivedIn(state, message.type);
  if (current.has(from)) return reject(state, 'DUPLICATE', `second ${message.type} from ${from}`);
  const previous = state.sets[state.sets.length - 1];
  if (previous !== undefined && !previous.includes(from))
    return reject(state, 'NOT_A_PARTICIPANT', `${from} is not in the previous stage's set`);
  const bad = checkContent(state, message);
  if (bad) return reject(state, bad[0], bad[1]);
  const next = new Map(current).set(from, message);
  return { state: { ...state, [key]: next }, reply: { type: 'accepted' } };
}

function checkContent(state: ServerState, m: ClientMessage): [SecAggErrorCode, string] | null {
  const { config } = state;
  const sets = state.sets;
  switch (m.type) {
    case 'advertise':
      return null;
    case 'share': {
      const expected = sets[0]!.filter((v) => v !== m.sender);
      const got = m.boxes.map((b) => b.receiver);
      if (!sameIds(got, expected))
        return ['INCONSISTENT_SET', 'boxes must address U_1 ∖ {sender}, ascending'];
      if (
        !Array.isArray(m.digests) ||
        !sameIds(
          m.digests.map((d) => d.holder),
          sets[0]!,
        )
      )
        return ['INCONSISTENT_SET', 'share digests must cover U_1, ascending'];
      const is32 = (b: unknown) => b instanceof Uint8Array && b.length === 32;
      if (!m.digests.every((d) => is32(d.key) && is32(d.seed)) || !is32(m.seedCommitment))
        return ['MALFORMED', 'share digests and the seed commitment are 32 bytes each'];
      return null;
    }
    case 'mask':
      if (m.masked.length !== config.length)
        return ['WRONG_LENGTH', `masked vector has ${m.masked.length} words, expected ${config.length}`];
      return null;
    case 'consistency':
      if (!sameIds(m.survivors, sets[2]!))
        return ['CONSISTENCY_MISMATCH', 'signed survivor set differs from U_3'];
      return null;
    case 'unmask': {
      const u3 = sets[2]!;
      const dropped = sets[1]!.filter((v) => !u3.includes(v));
      if (
        !sameIds(
          m.keyShares.map((s) => s.owner),
          dropped,
        )
      )
        return ['INCONSISTENT_SET', 'key shares must cover U_2 ∖ U_3'];
      if (
        !sameIds(
          m.seedShares.map((s) => s.owner),
          u3,
        )
      )
        return ['INCONSISTENT_SET', 'seed shares must cover U_3'];
      for (const s of [...m.keyShares, ...m.seedShares])
        if (s.share.length !== SHARE_LENGTH || shareIndex(s.share) !== m.sender + 1)
          return ['MALFORMED', `share of ${s.owner} is not at x = ${m.sender + 1}`];
      if (m.correction !== undefined) {
        if ((config.corrections ?? 'off') === 'off')
          return ['MALFORMED', "correction sent although config.corrections is 'off'"];
        if (dropped.length === 0) return ['MALFORMED', 'correction sent although no silo dropped'];
        if (m.correction.length !== config.length)
          return ['WRONG_LENGTH', `correction has ${m.correction.length} words, expected ${config.length}`];
      }
      return null;
    }
  }
}

function header(config: RoundConfig) {
  return { version: PROTOCOL_VERSION, session: config.session, round: config.round };
}

function abortAll(
  state: ServerState,
  code: SecAggErrorCode,
  detail: string,
  to: readonly number[],
  culprits: readonly number[] = [],
  faults: readonly Fault[] = [],
) {
  return {
    state: { ...state, stage: 'aborted' as const, error: { code, detail, culprits } },
    output: { type: 'abort' as const, code, detail, to, culprits, faults },
  };
}

/**
 * Closes the current stage (its deadline has come) and produces the next stage's messages.
 * Aborts with BELOW_THRESHOLD when fewer than t silos completed the stage. After Unmasking it
 * reconstructs s_u^SK of each dropped u and b_v of each survivor v from verified shares and
 * returns Σ_{v ∈ U_3} x_v = Σ y_v − Σ PRG(b_v) − Σ_{u dropped, v ∈ U_3} Δ_{v,u}·PRG(s_{u,v})
 * (protocol/reconstruct.ts: bad shares are discarded and their senders named in
 * `result.faults`; corrections are used as `config.corrections` says; with `config.encoding`
 * the aggregate is checked). It aborts, naming `culprits`, with RECONSTRUCTION_FAILED (fewer
 * than t verified shares of a secret), BAD_DEALING (a dealer's shares do not reconstruct its
 * committed secret) or AGGREGATE_OUT_OF_RANGE.
 *
 * The corrections add no leakage: each is a function of s_u^SK (u ∈ D), which the server
 * reconstructs anyway, and of the sender's own s^SK.
 */
export async function serverAdvance(
  state: ServerState,
  _deps?: SecAggDeps,
): Promise<{ state: ServerState; output: ServerOutput }> {
  const { config } = state;
  const t = config.threshold;
  const stage = state.stage;
  if (stage === 'done' || stage === 'aborted') {
    return {
      state,
      output: {
        type: 'abort',
        code: 'OUT_OF_ORDER',
        detail: `round already ${stage}`,
        to: [],
        culprits: [],
        faults: [],
      },
    };
  }
  const received = receivedIn(state, stage);
  const set = [...received.keys()].sort((a, b) => a - b);
  const everyone = state.sets[0] ?? set;
  if (set.length < t)
    return abortAll(state, 'BELOW_THRESHOLD', `${set.length} < t = ${t} at ${stage}`, everyone);
  const sets = [...state.sets, set];
  const h = header(config);
  switch (stage) {
    case 'advertise': {
      const entries = set.map((id) => {
        const a = state.adverts.get(id)!;
        return { id, cPK: a.cPK, sPK: a.sPK, context: a.context, signature: a.signature };
      });
      const message: ServerMessage = { ...h, type: 'keys', entries };
      return {
        state: { ...state, stage: 'share', sets },
        output: { type: 'send', messages: set.map((to) => ({ to, message })) },
      };
    }
    case 'share': {
      const messages = set.map((to) => {
        const boxes = set
          .filter((u) => u !== to)
          .map((u) => {
            const m = state.shares.get(u)!;
            const digest = m.digests.find((d) => d.holder === to)!;
            const box = m.boxes.find((b) => b.receiver === to)!.box;
            return { sender: u, box, keyDigest: digest.key, seedDigest: digest.seed };
          });
        return { to, message: { ...h, type: 'shares', boxes } as ServerMessage };
      });
      return { state: { ...state, stage: 'mask', sets }, output: { type: 'send', messages } };
    }
    case 'mask': {
      const message: ServerMessage = { ...h, type: 'survivors', survivors: set };
      return {
        state: { ...state, stage: 'consistency', sets },
        output: { type: 'send', messages: set.map((to) => ({ to, message })) },
      };
    }
    case 'consistency': {
      const u3 = sets[2]!;
      const dropped = sets[1]!.filter((v) => !u3.includes(v));
      const signatures = set.map((id) => {
        const c = state.checks.get(id)!;
        return { id, context: c.context, signature: c.signature };
      });
      const message: ServerMessage = { ...h, type: 'unmask-request', survivors: u3, dropped, signatures };
      return {
        state: { ...state, stage: 'unmask', sets },
        output: { type: 'send', messages: set.map((to) => ({ to, message })) },
      };
    }
    case 'unmask':
      return unmask(state, sets);
  }
}

async function unmask(state: ServerState, sets: (readonly number[])[]) {
  const u3 = sets[2]!;
  const dropped = sets[1]!.filter((v) => !u3.includes(v));
  const outcome = await unmaskSum({
    config: state.config,
    survivors: u3,
    dropped,
    responders: sets[4]!,
    adverts: state.adverts,
    shares: state.shares,
    masked: state.masked,
    unmasks: state.unmasks,
  });
  if (!outcome.ok)
    return abortAll(
      { ...state, sets },
      outcome.code,
      outcome.detail,
      sets[0]!,
      outcome.culprits,
      outcome.faults,
    );
  const result: AggregationResult = {
    sum: outcome.sum,
    survivors: u3,
    dropped,
    sets,
    faults: outcome.faults,
  };
  return {
    state: { ...state, stage: 'done' as const, sets, result },
    output: { type: 'result' as const, result },
  };
}

// ── for transports that store the round between steps ─────────────────────────────────────────

/** Who has sent a collecting stage's message and who has not, from {@link stageProgress}. */
export interface StageProgress {
  /** Senders whose message of the stage the state holds, ascending. */
  readonly received: readonly number[];
  /** Expected senders without one, ascending: the roster for AdvertiseKeys, else U_k of the stage before. */
  readonly missing: readonly number[];
  /** Every expected sender's message is in (the transport may close the stage without waiting). */
  readonly complete: boolean;
}

/**
 * Who has sent `stage`'s message and who is missing, from the messages `state` holds.
 *
 * The expected senders of AdvertiseKeys are every roster id; those of a later stage are the
 * previous stage's participant set (serverHandle rejects anyone else: NOT_A_PARTICIPANT), so a
 * stage is complete when each of them sent its message. For a closed stage `missing` is its
 * dropouts — provided the state still holds the stage's messages (see {@link messagesRead}).
 *
 * @throws RangeError when `stage` is not a collecting stage, or a stage before it is still open.
 */
export function stageProgress(state: ServerState, stage: CollectingStage): StageProgress {
  const k = COLLECTING_STAGES.indexOf(stage);
  if (k < 0)
    throw new RangeError(`stage: expected one of ${COLLECTING_STAGES.join(', ')}, got ${String(stage)}`);
  if (k > state.sets.length)
    throw new RangeError(`stage: ${stage} has not started (the server is at ${state.stage})`);
  const everyone = state.config.participants ?? state.config.roster.map((_, i) => i);
  const expected = k === 0 ? [...everyone] : state.sets[k - 1]!;
  const got = receivedIn(state, stage);
  const received = [...got.keys()].sort((a, b) => a - b);
  const missing = expected.filter((id) => !got.has(id));
  return { received, missing, complete: missing.length === 0 };
}

/**
 * The stages whose messages serverAdvance reads when it closes each stage: its own and, for
 * Unmasking, the advertised keys, the share commitments and the masked inputs it unmasks.
 */
const ADVANCE_READS: Readonly<Record<CollectingStage, readonly CollectingStage[]>> = {
  advertise: ['advertise'],
  share: ['share'],
  mask: ['mask'],
  consistency: ['consistency'],
  unmask: ['advertise', 'share', 'mask', 'unmask'],
};

/**
 * The collecting stages whose accepted messages a step reads while the server is at `stage`.
 * Everything else it needs is in `state.sets`, so a transport that stores messages can rebuild
 * (with {@link restoreServer}) a state holding only these and get the same step:
 *  - `'handle'` ({@link serverHandle}): the stage's own messages (the DUPLICATE check);
 *  - `'advance'` ({@link serverAdvance}): the stage's own (its set, relayed keys, boxes and
 *    signatures) and, for Unmasking, the advertised s^PK, the share digests and seed
 *    commitments of ShareKeys, and the masked inputs it unmasks.
 * Large vectors (masked inputs of d words per silo) then need not be read back for every step.
 *
 * @throws RangeError when `step` or `stage` is unknown.
 */
export function messagesRead(step: 'handle' | 'advance', stage: CollectingStage): readonly CollectingStage[] {
  if (!isCollectingStage(stage))
    throw new RangeError(`stage: expected one of ${COLLECTING_STAGES.join(', ')}, got ${String(stage)}`);
  if (step === 'handle') return [stage];
  if (step === 'advance') return ADVANCE_READS[stage];
  throw new RangeError(`step: expected 'handle' or 'advance', got ${String(step)}`);
}

/** What a transport keeps of a server between steps, besides the accepted messages. */
export interface ServerSnapshot {
  readonly config: RoundConfig;
  /** The stage being collected. */
  readonly stage: CollectingStage;
  /** U_1 … U_k of the stages closed so far (`state.sets`); k is the stage's index. */
  readonly sets: readonly (readonly number[])[];
}

/**
 * Rebuilds a server state from a snapshot and messages it accepted earlier (any order; a subset
 * is enough for one step, see {@link messagesRead}). The messages are not verified again: pass
 * only messages that {@link serverHandle} accepted for this round.
 *
 * @throws TypeError / RangeError naming the bad config field, a stage that does not collect
 *   messages, sets that do not match the stage, or two messages of one sender and stage.
 */
export function restoreServer(snapshot: ServerSnapshot, messages: Iterable<ClientMessage>): ServerState {
  if (typeof snapshot !== 'object' || snapshot === null) throw new TypeError('snapshot: expected an object');
  const { config, stage, sets } = snapshot;
  checkRoundConfig(config);
  if (!isCollectingStage(stage))
    throw new RangeError(
      `snapshot.stage: expected one of ${COLLECTING_STAGES.join(', ')}, got ${String(stage)}`,
    );
  if (!Array.isArray(sets)) throw new TypeError('snapshot.sets: expected an array of id arrays');
  if (sets.length !== COLLECTING_STAGES.indexOf(stage))
    throw new RangeError(`snapshot.sets: ${sets.length} closed stage(s) before ${stage}`);
  const received: Record<string, Map<number, ClientMessage>> = {};
  for (const s of COLLECTING_STAGES) received[RECEIVED[s]] = new Map();
  for (const m of messages) {
    const type = (m as { type?: unknown } | null)?.type;
    if (typeof type !== 'string' || !isCollectingStage(type))
      throw new TypeError(`messages: expected client messages, got type ${String(type)}`);
    const map = received[RECEIVED[m.type]]!;
    if (map.has(m.sender)) throw new RangeError(`messages: two ${m.type} messages from ${m.sender}`);
    map.set(m.sender, m);
  }
  const fields = received as unknown as Pick<ServerState, (typeof RECEIVED)[CollectingStage]>;
  return { stage, config, ...fields, sets };
}
