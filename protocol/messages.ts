/**
 * Typed, versioned messages of the secure-aggregation round (Bonawitz et al. 2017, Fig. 4,
 * active model). Client messages are signed by the sender's registered Ed25519 key over their
 * binary encoding (protocol/codec.ts), which starts with the version, the message type, the
 * session, the round and the sender: a message cannot be moved to another session, round,
 * stage or sender without its signature failing. Server messages are not signed — the server
 * is not trusted — but everything in them that matters is signed by clients or authenticated
 * by AEAD, and clients check it.
 */
import type { SecAggErrorCode } from './errors.js';

/**
 * Wire format version (first byte after the magic). 2: ShareKeys carries the dealer's signed
 * share digests and self-seed commitment, relayed boxes carry the recipient's two digests.
 * 3: AdvertiseKeys and ConsistencyCheck carry the sender's signed {@link RoundContext}, and the
 * key list and the unmasking request relay it with each signature.
 */
export const PROTOCOL_VERSION = 3;

/** Length of each digest of a {@link RoundContext}. */
export const CONTEXT_DIGEST_LENGTH = 32;

/**
 * What every silo of a round must have in common besides the round itself (issue 27; against
 * model inconsistency, Pasquini et al., CCS 2022, and weights that isolate a silo): SHA-256
 * digests, domain-separated by the caller, of the model the silo trained on and of the round's
 * weight vector. Each silo signs its own in AdvertiseKeys and in ConsistencyCheck; every silo
 * compares every peer's with its own and aborts on a difference (MODEL_MISMATCH /
 * WEIGHTS_MISMATCH). The protocol does not interpret the digests.
 */
export interface RoundContext {
  readonly model: Uint8Array;
  readonly weights: Uint8Array;
}

/** The context of a round whose caller binds none (both digests zero): all such silos agree. */
export const NO_CONTEXT: RoundContext = Object.freeze({
  model: new Uint8Array(CONTEXT_DIGEST_LENGTH),
  weights: new Uint8Array(CONTEXT_DIGEST_LENGTH),
});

interface Header {
  readonly version: number;
  readonly session: string;
  readonly round: number;
}

interface Signed extends Header {
  /** The sending silo's id (index in the roster). */
  readonly sender: number;
  /** Ed25519 signature over the encoding of everything else (codec.signedPayload). */
  readonly signature: Uint8Array;
}

/**
 * Round 0 (AdvertiseKeys): the two per-round X25519 public keys c^PK and s^PK, and the sender's
 * round context (signed with them: a peer holds this silo's shares only if it saw the context).
 */
export interface AdvertiseKeys extends Signed {
  readonly type: 'advertise';
  readonly cPK: Uint8Array;
  readonly sPK: Uint8Array;
  readonly context: RoundContext;
}

/** One encrypted pair of shares (key share ‖ seed share) for `receiver`. */
export interface ShareBox {
  readonly receiver: number;
  readonly box: Uint8Array;
}

/**
 * The dealer's commitment to the two shares it gives `holder`: SHA-256 digests of the key share
 * and of the seed share, each bound to session, round, dealer and holder (protocol/_keys.ts
 * `shareDigest`). The holder checks them when it opens its box; the server checks every share
 * revealed in Unmasking against them (protocol/reconstruct.ts).
 */
export interface ShareDigest {
  readonly holder: number;
  readonly key: Uint8Array;
  readonly seed: Uint8Array;
}

/**
 * Round 1 (ShareKeys): e_{u,v} for every other v ∈ U_1, and — signed with them, before any masked
 * input exists — the commitments that make Unmasking verifiable (fedscore's extension of
 * Bonawitz et al. 2017, round 1): a digest of each share for every holder in U_1 (the sender
 * included) and a commitment to the self-mask seed b_u (protocol/_keys.ts `seedCommitment`).
 */
export interface ShareKeys extends Signed {
  readonly type: 'share';
  readonly boxes: readonly ShareBox[];
  /** One entry per holder of U_1, ascending (the sender's own shares included). */
  readonly digests: readonly ShareDigest[];
  /** SHA-256 commitment to b_u (32 bytes). */
  readonly seedCommitment: Uint8Array;
}

/** Round 2 (MaskedInputCollection): y_u = x_u + PRG(b_u) + Σ_v ±PRG(s_{u,v}) over Z_(2^32). */
export interface MaskedInput extends Signed {
  readonly type: 'mask';
  readonly masked: Uint32Array;
}

/** Round 3 (ConsistencyCheck): the client's signature on the survivor set U_3 it was sent and its round context. */
export interface ConsistencyCheck extends Signed {
  readonly type: 'consistency';
  /** U_3, ascending. */
  readonly survivors: readonly number[];
  readonly context: RoundContext;
}

/** A share of `owner`'s secret. */
export interface OwnedShare {
  readonly owner: number;
  readonly share: Uint8Array;
}

/** Round 4 (Unmasking): key shares of dropped peers, seed shares of survivors. */
export interface UnmaskResponse extends Signed {
  readonly type: 'unmask';
  readonly keyShares: readonly OwnedShare[];
  readonly seedShares: readonly OwnedShare[];
  /**
   * The sender v's pairwise masks with the dropped silos D = U_2 ∖ U_3, as its masked input
   * carries them: Σ_{u ∈ D} Δ_{v,u}·PRG(s_{v,u}) over Z_(2^32). Present when D is non-empty and
   * the round's `config.corrections` is not 'off'; the server verifies it or subtracts it instead
   * of regenerating those |D| masks itself from the reconstructed s_u^SK (fedscore's extension
   * of Bonawitz et al. 2017, round 4; protocol/config.ts `CorrectionMode`; see
   * protocol/server.ts for why it reveals nothing new).
   */
  readonly correction?: Uint32Array;
}

/** Any client → server message. */
export type ClientMessage = AdvertiseKeys | ShareKeys | MaskedInput | ConsistencyCheck | UnmaskResponse;

/** A client message before signing (distributes over the union). */
export type UnsignedClientMessage = ClientMessage extends infer M
  ? M extends ClientMessage
    ? Omit<M, 'signature'>
    : never
  : never;

/** A relayed advertisement: enough for a client to rebuild and verify the signed message. */
export interface KeyEntry {
  readonly id: number;
  readonly cPK: Uint8Array;
  readonly sPK: Uint8Array;
  readonly context: RoundContext;
  readonly signature: Uint8Array;
}

/** Server → clients after round 0: the advertised keys of U_1. */
export interface KeyList extends Header {
  readonly type: 'keys';
  readonly entries: readonly KeyEntry[];
}

/**
 * A relayed encrypted share: `sender`'s box for the recipient, with the digests `sender` signed
 * for the recipient's two shares (ShareKeys.digests), which the recipient checks on opening.
 */
export interface RelayedBox {
  readonly sender: number;
  readonly box: Uint8Array;
  readonly keyDigest: Uint8Array;
  readonly seedDigest: Uint8Array;
}

/** Server → one client after round 1: the boxes addressed to it (their senders form U_2 ∖ {it}). */
export interface ShareList extends Header {
  readonly type: 'shares';
  readonly boxes: readonly RelayedBox[];
}

/** Server → clients after round 2: U_3, the silos whose masked input arrived. */
export interface SurvivorList extends Header {
  readonly type: 'survivors';
  readonly survivors: readonly number[];
}

/** A relayed consistency signature, with the context its signer signed. */
export interface RelayedSignature {
  readonly id: number;
  readonly context: RoundContext;
  readonly signature: Uint8Array;
}

/** Server → clients after round 3: the unmasking request with the consistency signatures of U_4. */
export interface UnmaskRequest extends Header {
  readonly type: 'unmask-request';
  /** U_3: seed shares are requested for these. */
  readonly survivors: readonly number[];
  /** U_2 ∖ U_3: key shares are requested for these. */
  readonly dropped: readonly number[];
  readonly signatures: readonly RelayedSignature[];
}

/** Server → clients: the round is aborted. */
export interface AbortNotice extends Header {
  readonly type: 'abort';
  readonly code: SecAggErrorCode;
}

/** Any server → client message. */
export type ServerMessage = KeyList | ShareList | SurvivorList | UnmaskRequest | AbortNotice;
