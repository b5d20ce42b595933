/**
 * The client (silo) side of secure aggregation: Bonawitz et al., "Practical Secure Aggregation
 * for Privacy-Preserving Machine Learning", ACM CCS 2017, Fig. 4 (active security, with the
 * signature-based consistency check).
 *
 * Each handler is `(state, message, deps) → { state, reply }`: no I/O, no clock; randomness and
 * key generation come from `deps.random`, so a round replays exactly from seeded sources. A
 * client aborts — state `aborted` with a code — as soon as the server's message violates the
 * protocol; the reply then carries the code for the transport to report.
 *
 * Secret material owned by the state: the per-round X25519 secret keys, the self-mask seed b_u
 * and the shares held for peers. They are wiped when the client reaches `done` or `aborted`
 * (states are treated as linear: a caller must not reuse a state after passing it on).
 */

import { open, seal } from '../crypto/aead.js';
import { checkBytes, checkInt } from '../crypto/check.js';
import { type AgreementKeyPair, agree, agreementKeyPairFromSeed } from '../crypto/key-agreement.js';
import { type MaskTerm, maskVector } from '../crypto/prg.js';
import type { RandomSource } from '../crypto/random-bytes.js';
import { SHARE_LENGTH, shareIndex, splitSecret } from '../crypto/shamir.js';
import { sign, verify } from '../crypto/signature.js';
import {
  ascending,
  pairLabel,
  pairSign,
  sameBytes,
  sameIds,
  seedCommitment,
  selfLabel,
  shareBoxKey,
  shareDigest,
} from './_keys.js';
import { signedPayload } from './codec.js';
import { checkRoundConfig, type RoundConfig } from './config.js';
import type { SecAggErrorCode } from './errors.js';
import {
  type AdvertiseKeys,
  type ClientMessage,
  CONTEXT_DIGEST_LENGTH,
  type ConsistencyCheck,
  type KeyList,
  type MaskedInput,
  NO_CONTEXT,
  PROTOCOL_VERSION,
  type RoundContext,
  type ServerMessage,
  type ShareKeys,
  type ShareList,
  type SurvivorList,
  type UnmaskRequest,
  type UnmaskResponse,
  type UnsignedClientMessage,
} from './messages.js';

/** What a stage handler may use besides its state and message. */
export interface SecAggDeps {
  /** Source of key seeds, self-mask seeds, Shamir coefficients and AEAD nonces. */
  readonly random: RandomSource;
}

/** Stages of the client, in order; `done` and `aborted` are terminal. */
export type ClientStage = 'start' | 'advertised' | 'shared' | 'masked' | 'checked' | 'done' | 'aborted';

interface Peer {
  readonly cPK: Uint8Array;
  readonly sPK: Uint8Array;
}

interface HeldShares {
  readonly keyShare: Uint8Array;
  readonly seedShare: Uint8Array;
}

/** Client state (a closed union over `stage`; fields appear as the round advances). */
export interface ClientState {
  readonly stage: ClientStage;
  readonly config: RoundConfig;
  readonly id: number;
  /** Long-term Ed25519 secret key (owned by the caller, not wiped here). */
  readonly signingKey: Uint8Array;
  /** The quantized input x_u (owned by the caller; read in round 2, never modified). */
  readonly input: Uint32Array;
  /** What this client signs in AdvertiseKeys and ConsistencyCheck and requires of every peer. */
  readonly context: RoundContext;
  readonly cKeys?: AgreementKeyPair;
  readonly sKeys?: AgreementKeyPair;
  /** U_1 with the advertised keys. */
  readonly peers?: ReadonlyMap<number, Peer>;
  /** AEAD keys of the share boxes with each peer (the same key serves both directions). */
  readonly boxKeys?: ReadonlyMap<number, Uint8Array>;
  /** Self-mask seed b_u. */
  readonly selfSeed?: Uint8Array;
  /** U_2, ascending. */
  readonly u2?: readonly number[];
  /** Shares this client holds, by owner (its own included). */
  readonly held?: ReadonlyMap<number, HeldShares>;
  /** U_3 as signed in the consistency check. */
  readonly u3?: readonly number[];
  readonly error?: { readonly code: SecAggErrorCode; readonly detail: string };
}

/** What the transport should do after a step. */
export type ClientReply =
  | { readonly type: 'send'; readonly message: ClientMessage }
  | { readonly type: 'abort'; readonly code: SecAggErrorCode; readonly detail: string }
  | { readonly type: 'none' };

/** Result of a client step. */
export interface ClientStep {
  readonly state: ClientState;
  readonly reply: ClientReply;
}

/**
 * A client before round 0.
 *
 * @param input - the quantized vector x_u of `config.length` words (see crypto/quantize.ts and
 *   protocol/weighted.ts); kept by reference, not modified.
 * @throws TypeError / RangeError naming the bad argument.
 */
export function createClient(
  config: RoundConfig,
  id: number,
  signingKey: Uint8Array,
  input: Uint32Array,
  context: RoundContext = NO_CONTEXT,
): ClientState {
  checkRoundConfig(config);
  checkInt('id', id, 0, config.roster.length - 1);
  checkBytes('signingKey', signingKey, 32);
  if (!(input instanceof Uint32Array)) throw new TypeError('input: expected Uint32Array');
  if (input.length !== config.length)
    throw new RangeError(`input: length ${input.length} differs from config.length ${config.length}`);
  checkBytes('context.model', context.model, CONTEXT_DIGEST_LENGTH);
  checkBytes('context.weights', context.weights, CONTEXT_DIGEST_LENGTH);
  return { stage: 'start', config, id, signingKey, input, context };
}

/**
 * Whether a peer's signed round context differs from this client's: the abort naming what
 * differs (the model first), or null (issue 27; Pasquini et al., CCS 2022).
 */
function contextMismatch(
  state: ClientState,
  peer: number,
  theirs: RoundContext,
  where: string,
): ClientStep | null {
  if (!sameBytes(theirs.model, state.context.model))
    return abort(
      state,
      'MODEL_MISMATCH',
      `silo ${peer} signed model digest ${hexOf(theirs.model)} in ${where}, this silo trained on ${hexOf(state.context.model)}`,
    );
  if (!sameBytes(theirs.weights, state.context.weights))
    return abort(
      state,
      'WEIGHTS_MISMATCH',
      `silo ${peer} signed weight-vector digest ${hexOf(theirs.weights)} in ${where}, this silo's is ${hexOf(state.context.weights)}`,
    );
  return null;
}

const hexOf = (b: Uint8Array) => Buffer.from(b).toString('hex');

/** Whether `c` is a round context of two 32-byte digests. */
function wellFormedContext(c: RoundContext | undefined): boolean {
  return (
    c !== undefined &&
    c.model instanceof Uint8Array &&
    c.model.length === CONTEXT_DIGEST_LENGTH &&
    c.weights instanceof Uint8Array &&
    c.weights.length === CONTEXT_DIGEST_LENGTH
  );
}

function signed<M extends ClientMessage>(state: ClientState, body: Omit<M, 'signature'>): M {
  const payload = signedPayload(body as UnsignedClientMessage);
  return { ...body, signature: sign(state.signingKey, payload) } as M;
}

function header(state: ClientState) {
  return {
    version: PROTOCOL_VERSION,
    session: state.config.session,
    round: state.config.round,
    sender: state.id,
  };
}

function wipeState(s: ClientState): void {
  s.cKeys?.secretKey.fill(0);
  s.sKeys?.secretKey.fill(0);
  s.selfSeed?.fill(0);
  for (const k of s.boxKeys?.values() ?? []) k.fill(0);
  for (const h of s.held?.values() ?? []) {
    h.keyShare.fill(0);
    h.seedShare.fill(0);
  }
}

function abort(state: ClientState, code: SecAggErrorCode, detail: string): ClientStep {
  wipeState(state);
  const { cKeys: _c, sKeys: _s, selfSeed: _b, held: _h, ...rest } = state;
  return {
    state: { ...rest, stage: 'aborted', error: { code, detail } },
    reply: { type: 'abort', code, detail },
  };
}

/**
 * Round 0 (AdvertiseKeys): generate (c_u^PK, c_u^SK) and (s_u^PK, s_u^SK) from `deps.random`
 * and send both public keys, signed.
 */
export function clientStart(state: ClientState, deps: SecAggDeps): ClientStep {
  if (state.stage !== 'start') return abort(state, 'OUT_OF_ORDER', `start in stage ${state.stage}`);
  const cSeed = deps.random(32);
  const sSeed = deps.random(32);
  const cKeys = agreementKeyPairFromSeed(cSeed);
  const sKeys = agreementKeyPairFromSeed(sSeed);
  cSeed.fill(0);
  sSeed.fill(0);
  const message = signed<AdvertiseKeys>(state, {
    ...header(state),
    type: 'advertise',
    cPK: cKeys.publicKey,
    sPK: sKeys.publicKey,
    context: state.context,
  });
  return { state: { ...state, stage: 'advertised', cKeys, sKeys }, reply: { type: 'send', message } };
}

/** Header checks every server message must pass. */
function checkHeader(state: ClientState, m: ServerMessage): [SecAggErrorCode, string] | null {
  if (m.version !== PROTOCOL_VERSION) return ['UNSUPPORTED_VERSION', `version ${m.version}`];
  if (m.session !== state.config.session) return ['WRONG_SESSION', `session ${m.session}`];
  if (m.round !== state.config.round) return ['WRONG_ROUND', `round ${m.round}`];
  return null;
}

const EXPECTED: Partial<Record<ClientStage, ServerMessage['type']>> = {
  advertised: 'keys',
  shared: 'shares',
  masked: 'survivors',
  checked: 'unmask-request',
};

/**
 * Handles one server message in the current stage (the single transition check of the client).
 *
 * @returns the next state and what to send; on any violation the state is `aborted` and the
 *   reply carries the code (OUT_OF_ORDER for a message of another stage).
 */
export async function clientHandle(
  state: ClientState,
  message: ServerMessage,
  deps: SecAggDeps,
): Promise<ClientStep> {
  if (state.stage === 'done' || state.stage === 'aborted')
    return {
      state,
      reply: { type: 'abort', code: 'OUT_OF_ORDER', detail: `message ${message.type} after the round ended` },
    };
  const bad = checkHeader(state, message);
  if (bad) return abort(state, bad[0], bad[1]);
  if (message.type === 'abort') return abort(state, 'ABORTED', `server aborted: ${message.code}`);
  if (EXPECTED[state.stage] !== message.type)
    return abort(state, 'OUT_OF_ORDER', `${message.type} in stage ${state.stage}`);
  switch (message.type) {
    case 'keys':
      return onKeys(state, message, deps);
    case 'shares':
      return onShares(state, message);
    case 'survivors':
      return onSurvivors(state, message);
    case 'unmask-request':
      return onUnmaskRequest(state, message);
  }
}

/** Round 1 (ShareKeys): check U_1, share s_u^SK and b_u, encrypt each peer's pair of shares. */
async function onKeys(state: ClientState, m: KeyList, deps: SecAggDeps): Promise<ClientStep> {
  const { config, id } = state;
  const t = config.threshold;
  const peers = new Map<number, Peer>();
  const seenKeys = new Set<string>();
  for (const e of m.entries) {
    if (!Number.isInteger(e.id) || e.id < 0 || e.id >= config.roster.length)
      return abort(state, 'UNKNOWN_SENDER', `advertisement from unregistered id ${e.id}`);
    if (peers.has(e.id)) return abort(state, 'INCONSISTENT_SET', `id ${e.id} listed twice`);
    const rebuilt: Omit<AdvertiseKeys, 'signature'> = {
      version: PROTOCOL_VERSION,
      session: config.session,
      round: config.round,
      sender: e.id,
      type: 'advertise',
      cPK: e.cPK,
      sPK: e.sPK,
      context: e.context,
    };
    if (
      e.cPK.length !== 32 ||
      e.sPK.length !== 32 ||
      !wellFormedContext(e.context) ||
      !verify(config.roster[e.id]!, signedPayload(rebuilt), e.signature)
    )
      return abort(state, 'BAD_SIGNATURE', `advertisement of ${e.id} is not signed by its registered key`);
    // Every peer this client deals shares to trained on its model with its weights (issue 27):
    // a peer on another model could help unmask this client's input in a split view.
    const differs = contextMismatch(state, e.id, e.context, 'AdvertiseKeys');
    if (differs) return differs;
    // Bonawitz et al. 2017, round 1: "assert that all the public key pairs are different".
    for (const k of [e.cPK, e.sPK]) {
      const h = Buffer.from(k).toString('hex');
      if (seenKeys.has(h))
        return abort(state, 'DUPLICATE_KEYS', `key of ${e.id} repeats another advertised key`);
      seenKeys.add(h);
    }
    peers.set(e.id, { cPK: e.cPK, sPK: e.sPK });
  }
  const me = peers.get(id);
  if (
    me === undefined ||
    !sameBytes(me.cPK, state.cKeys!.publicKey) ||
    !sameBytes(me.sPK, state.sKeys!.publicKey)
  )
    return abort(state, 'INCONSISTENT_SET', 'U_1 does not carry this client with its own keys');
  if (peers.size < t) return abort(state, 'BELOW_THRESHOLD', `|U_1| = ${peers.size} < t = ${t}`);

  const selfSeed = deps.random(32);
  const n = config.roster.length; // share x = id + 1 for every rostered id
  const keyShares = await splitSecret(state.sKeys!.secretKey, n, t, deps.random);
  const seedShares = await splitSecret(selfSeed, n, t, deps.random);
  const boxes = [];
  const boxKeys = new Map<number, Uint8Array>();
  for (const v of [...peers.keys()].sort((a, b) => a - b)) {
    if (v === id) continue;
    const key = shareBoxKey(state.cKeys!.secretKey, peers.get(v)!.cPK, config.session, config.round, id, v);
    boxKeys.set(v, key);
    const plaintext = new Uint8Array(2 * SHARE_LENGTH);
    plaintext.set(keyShares[v]!, 0);
    plaintext.set(seedShares[v]!, SHARE_LENGTH);
    const box = seal(key, deps.random(24), plaintext, {
      sender: id,
      receiver: v,
      session: config.session,
      round: config.round,
    });
    key.fill(0);
    plaintext.fill(0);
    boxes.push({ receiver: v, box });
  }
  // fedscore's extension of round 1: commit, in this signed message, to every share dealt (one
  // digest per holder of U_1, this client included) and to b_u, so that Unmasking is verifiable.
  const digests = [...peers.keys()]
    .sort((a, b) => a - b)
    .map((holder) => ({
      holder,
      key: shareDigest('key', config.session, config.round, id, holder, keyShares[holder]!),
      seed: shareDigest('seed', config.session, config.round, id, holder, seedShares[holder]!),
    }));
  const commitment = seedCommitment(config.session, config.round, id, selfSeed);
  const held = new Map<number, HeldShares>([[id, { keyShare: keyShares[id]!, seedShare: seedShares[id]! }]]);
  for (let i = 0; i < n; i++) {
    if (i === id) continue;
    keyShares[i]!.fill(0);
    seedShares[i]!.fill(0);
  }
  const message = signed<ShareKeys>(state, {
    ...header(state),
    type: 'share',
    boxes,
    digests,
    seedCommitment: commitment,
  });
  return {
    state: { ...state, stage: 'shared', peers, selfSeed, held, boxKeys },
    reply: { type: 'send', message },
  };
}

/** Round 2 (MaskedInputCollection): open the boxes from U_2, then send y_u. */
async function onShares(state: ClientState, m: ShareList): Promise<ClientStep> {
  const { config, id } = state;
  const peers = state.peers!;
  const held = new Map(state.held!);
  for (const b of m.boxes) {
    const peer = peers.get(b.sender);
    if (peer === undefined || b.sender === id)
      return abort(state, 'INCONSISTENT_SET', `box from ${b.sender}, who is not another member of U_1`);
    if (held.has(b.sender)) return abort(state, 'INCONSISTENT_SET', `two boxes from ${b.sender}`);
    const key = shareBoxKey(state.cKeys!.secretKey, peer.cPK, config.session, config.round, id, b.sender);
    const pt = open(key, b.box, {
      sender: b.sender,
      receiver: id,
      session: config.session,
      round: config.round,
    });
    key.fill(0);
    if (pt === null || pt.length !== 2 * SHARE_LENGTH)
      return abort(state, 'BAD_CIPHERTEXT', `box from ${b.sender} does not authenticate`);
    const keyShare = pt.slice(0, SHARE_LENGTH);
    const seedShare = pt.slice(SHARE_LENGTH);
    pt.fill(0);
    if (shareIndex(keyShare) !== id + 1 || shareIndex(seedShare) !== id + 1)
      return abort(state, 'BAD_CIPHERTEXT', `shares from ${b.sender} are not for x = ${id + 1}`);
    // The dealer signed these digests in ShareKeys and the server will check the shares this
    // client reveals against them: a mismatch now means the dealer (or the relaying server) lies,
    // and going on would get this client named for a bad share in Unmasking.
    const digestOk = (kind: 'key' | 'seed', share: Uint8Array, digest: unknown) =>
      digest instanceof Uint8Array &&
      sameBytes(shareDigest(kind, config.session, config.round, b.sender, id, share), digest);
    if (!digestOk('key', keyShare, b.keyDigest) || !digestOk('seed', seedShare, b.seedDigest)) {
      keyShare.fill(0);
      seedShare.fill(0);
      return abort(
        { ...state, held },
        'BAD_SHARE',
        `shares from ${b.sender} do not match the digests it signed in ShareKeys`,
      );
    }
    held.set(b.sender, { keyShare, seedShare });
  }
  const u2 = [...held.keys()].sort((a, b) => a - b);
  if (u2.length < config.threshold)
    return abort({ ...state, held }, 'BELOW_THRESHOLD', `|U_2| = ${u2.length} < t = ${config.threshold}`);

  // y_u = x_u + PRG(b_u) + Σ_{v ∈ U_2∖{u}} Δ_{u,v}·PRG(s_{u,v})  (Bonawitz et al. 2017, round 2),
  // every mask added chunk by chunk in one pass (crypto/prg.ts maskVector).
  const pairs: MaskTerm[] = u2
    .filter((v) => v !== id)
    .map((v) => ({
      seed: agree(state.sKeys!.secretKey, peers.get(v)!.sPK),
      label: pairLabel(config.session, config.round, id, v),
      sign: pairSign(id, v),
    }));
  let masked: Uint32Array;
  try {
    const self: MaskTerm = {
      seed: state.selfSeed!,
      label: selfLabel(config.session, config.round, id),
      sign: 1,
    };
    masked = maskVector(state.input, [self, ...pairs]);
  } finally {
    for (const p of pairs) p.seed.fill(0);
  }
  const message = signed<MaskedInput>(state, { ...header(state), type: 'mask', masked });
  for (const k of state.boxKeys!.values()) k.fill(0);
  const { boxKeys: _k, ...rest } = state;
  return { state: { ...rest, stage: 'masked', held, u2 }, reply: { type: 'send', message } };
}

/** Round 3 (ConsistencyCheck): sign U_3 after checking U_3 ⊆ U_2, u ∈ U_3 and |U_3| ≥ t. */
function onSurvivors(state: ClientState, m: SurvivorList): ClientStep {
  const { config, id } = state;
  const u2 = new Set(state.u2!);
  if (!ascending(m.survivors)) return abort(state, 'MALFORMED', 'U_3 is not strictly ascending');
  if (!m.survivors.every((v) => u2.has(v)))
    return abort(state, 'INCONSISTENT_SET', 'U_3 is not a subset of U_2');
  if (!m.survivors.includes(id))
    return abort(state, 'INCONSISTENT_SET', 'U_3 omits this client, which sent its input');
  if (m.survivors.length < config.threshold)
    return abort(state, 'BELOW_THRESHOLD', `|U_3| = ${m.survivors.length} < t = ${config.threshold}`);
  const u3 = [...m.survivors];
  const message = signed<ConsistencyCheck>(state, {
    ...header(state),
    type: 'consistency',
    survivors: u3,
    context: state.context,
  });
  return { state: { ...state, stage: 'checked', u3 }, reply: { type: 'send', message } };
}

/**
 * Σ_{u ∈ dropped} Δ_{id,u}·PRG(s_{id,u}): the pairwise masks with the dropped silos that this
 * client's y carries (round 2), which the server would otherwise rebuild from s_u^SK. It is a
 * function of the key shares of `dropped` this very response reveals, so it tells the server
 * nothing it could not compute once it holds t of them; with fewer than t responses, x_id stays
 * hidden behind the self mask PRG(b_id) in any case.
 */
function droppedMasks(state: ClientState, dropped: readonly number[]): Uint32Array {
  const { config, id } = state;
  const terms: MaskTerm[] = dropped.map((u) => ({
    seed: agree(state.sKeys!.secretKey, state.peers!.get(u)!.sPK),
    label: pairLabel(config.session, config.round, id, u),
    sign: pairSign(id, u),
  }));
  try {
    const acc = new Uint32Array(config.length);
    return maskVector(acc, terms, acc);
  } finally {
    for (const t of terms) t.seed.fill(0);
  }
}

/**
 * Round 4 (Unmasking). An honest client refuses — and aborts — when the request asks for both
 * shares of one peer, when its survivor set differs from the set this client signed, when fewer
 * than t consistency signatures on that set verify, when a signer's round context differs from
 * its own (MODEL_MISMATCH / WEIGHTS_MISMATCH), or when a "dropped" id is not in U_2 ∖ U_3.
 * Otherwise it reveals key shares of the dropped and seed shares of the survivors, once, and
 * (when `config.corrections` is not 'off') its summed pairwise masks with the dropped.
 */
function onUnmaskRequest(state: ClientState, m: UnmaskRequest): ClientStep {
  const { config } = state;
  const u3 = state.u3!;
  const survivors = new Set(m.survivors);
  // A "dropped" id that is a survivor — in this request or in the set this client signed — would
  // have its seed share revealed (now, or by the clients that received the signed set) as well as
  // its key share: the server would learn both b_v and s_v^SK and could unmask x_v.
  const both = m.dropped.filter((v) => survivors.has(v) || u3.includes(v));
  if (both.length > 0)
    return abort(
      state,
      'BOTH_SHARES_REQUESTED',
      `key and seed shares of ${both.join(', ')} requested together`,
    );
  if (!sameIds(m.survivors, u3))
    return abort(state, 'CONSISTENCY_MISMATCH', 'survivor set differs from the signed consistency set');
  if (m.survivors.length < config.threshold)
    return abort(state, 'BELOW_THRESHOLD', `|U_3| = ${m.survivors.length} < t = ${config.threshold}`);
  const u2 = new Set(state.u2!);
  if (!ascending(m.dropped) || !m.dropped.every((v) => u2.has(v)))
    return abort(state, 'INCONSISTENT_SET', 'dropped set is not a subset of U_2 ∖ U_3');
  // Bonawitz et al. 2017, round 4: verify SIG.ver(d_v^PK, U_3, σ'_v) for all v ∈ U_4, |U_4| ≥ t.
  const signers = new Set<number>();
  for (const s of m.signatures) {
    if (!survivors.has(s.id))
      return abort(state, 'INCONSISTENT_SET', `consistency signer ${s.id} is not in U_3`);
    if (signers.has(s.id)) return abort(state, 'INCONSISTENT_SET', `signer ${s.id} listed twice`);
    const body: Omit<ConsistencyCheck, 'signature'> = {
      version: PROTOCOL_VERSION,
      session: config.session,
      round: config.round,
      sender: s.id,
      type: 'consistency',
      survivors: u3,
      context: s.context,
    };
    if (!wellFormedContext(s.context) || !verify(config.roster[s.id]!, signedPayload(body), s.signature))
      return abort(state, 'BAD_SIGNATURE', `consistency signature of ${s.id} does not verify on U_3`);
    const differs = contextMismatch(state, s.id, s.context, 'ConsistencyCheck');
    if (differs) return differs;
    signers.add(s.id);
  }
  if (signers.size < config.threshold)
    return abort(state, 'BELOW_THRESHOLD', `|U_4| = ${signers.size} < t = ${config.threshold}`);
  const held = state.held!;
  const keyShares = m.dropped.map((v) => ({ owner: v, share: held.get(v)!.keyShare.slice() }));
  const seedShares = m.survivors.map((v) => ({ owner: v, share: held.get(v)!.seedShare.slice() }));
  const correction =
    m.dropped.length > 0 && (config.corrections ?? 'off') !== 'off'
      ? { correction: droppedMasks(state, m.dropped) }
      : {};
  const message = signed<UnmaskResponse>(state, {
    ...header(state),
    type: 'unmask',
    keyShares,
    seedShares,
    ...correction,
  });
  wipeState(state);
  const { cKeys: _c, sKeys: _s, selfSeed: _b, held: _h, boxKeys: _k, ...rest } = state;
  return { state: { ...rest, stage: 'done' }, reply: { type: 'send', message } };
}
