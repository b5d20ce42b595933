/**
 * Coded errors of the secure-aggregation protocol (docs/architecture.md, "Conventions": core errors carry a
 * code from a string-literal union; one table at the edge maps codes to HTTP statuses and text).
 * Stage handlers return these codes in their replies; helpers that cannot return a reply
 * (decoders, report verification) throw a {@link SecAggError}.
 */

/** Every way a secure-aggregation message or round can fail. */
export type SecAggErrorCode =
  | 'MALFORMED'
  | 'UNSUPPORTED_VERSION'
  | 'WRONG_SESSION'
  | 'WRONG_ROUND'
  | 'UNKNOWN_SENDER'
  | 'BAD_SIGNATURE'
  | 'OUT_OF_ORDER'
  | 'DUPLICATE'
  | 'NOT_A_PARTICIPANT'
  | 'WRONG_LENGTH'
  | 'DUPLICATE_KEYS'
  | 'BAD_CIPHERTEXT'
  | 'INCONSISTENT_SET'
  | 'BELOW_THRESHOLD'
  | 'BOTH_SHARES_REQUESTED'
  | 'CONSISTENCY_MISMATCH'
  | 'RECONSTRUCTION_FAILED'
  | 'ABORTED'
  | 'WEAK_THRESHOLD'
  | 'BAD_SHARE'
  | 'BAD_DEALING'
  | 'BAD_CORRECTION'
  | 'AGGREGATE_OUT_OF_RANGE'
  | 'MODEL_MISMATCH'
  | 'WEIGHTS_MISMATCH';

/** Human text for each code (the HTTP edge adds statuses). */
export const SECAGG_ERRORS: Readonly<Record<SecAggErrorCode, string>> = {
  MALFORMED: 'the message could not be decoded or has an invalid field',
  UNSUPPORTED_VERSION: 'the message uses a protocol version this implementation does not speak',
  WRONG_SESSION: 'the message belongs to another session',
  WRONG_ROUND: 'the message belongs to another round (replay across rounds)',
  UNKNOWN_SENDER: 'the sender is not registered in the consortium roster',
  BAD_SIGNATURE: "the signature does not verify under the sender's registered key",
  OUT_OF_ORDER: 'the message does not belong to the current stage',
  DUPLICATE: 'the sender already sent this stage (replay within the round)',
  NOT_A_PARTICIPANT: 'the sender did not complete the previous stage of this round',
  WRONG_LENGTH: 'the masked vector does not have the configured length',
  DUPLICATE_KEYS: 'two participants advertised the same public key',
  BAD_CIPHERTEXT: 'an encrypted share failed authentication or carries the wrong share index',
  INCONSISTENT_SET: 'a participant set is not a subset of the previous stage set, or misses the client',
  BELOW_THRESHOLD: 'fewer than t participants remain: the round aborts',
  BOTH_SHARES_REQUESTED: 'the server asked for both the key share and the seed share of one peer',
  CONSISTENCY_MISMATCH: 'the survivor set differs from the one the client signed in the consistency check',
  RECONSTRUCTION_FAILED:
    'fewer than t verified shares of a secret remain: the round aborts, naming the silos whose shares were bad',
  ABORTED: 'the round was aborted',
  WEAK_THRESHOLD:
    'the threshold is below the active-security bound ⌊(n + n_C)/2⌋ + 1 and weak thresholds were not allowed',
  BAD_SHARE:
    'a share does not match the digest its dealer signed in ShareKeys: it is discarded and its sender named',
  BAD_DEALING:
    "a silo's shares, each matching its signed digest, do not reconstruct the secret it committed to: the dealer is named",
  BAD_CORRECTION:
    "a survivor's Unmasking correction differs from the one recomputed from the dropped silos' keys: it is discarded and its sender named",
  AGGREGATE_OUT_OF_RANGE:
    'the decoded aggregate is outside what the m survivors can sum to (a coordinate beyond m·clip, or a total weight outside m·[minWeight, weightRange])',
  MODEL_MISMATCH:
    "a peer signed another digest of the round's model than this silo's (a split view of the model, Pasquini et al. 2022): the silo aborts the round, naming the peer",
  WEIGHTS_MISMATCH:
    "a peer signed another digest of the round's weight vector than this silo's (a split view of the scores or the plan): the silo aborts the round, naming the peer",
};

/** A protocol misbehaviour the server detected and survived (or aborted on): who, how, what. */
export interface Fault {
  /** The silo named: the sender of a bad share or correction, or the dealer of bad shares. */
  readonly silo: number;
  readonly code: 'BAD_SHARE' | 'BAD_DEALING' | 'BAD_CORRECTION';
  readonly detail: string;
}

/**
 * A round configuration whose threshold is below the active-security bound (protocol/config.ts):
 * a RangeError naming `config.threshold`, with the code an honest party reports.
 */
export class WeakThresholdError extends RangeError {
  readonly code = 'WEAK_THRESHOLD' as const;
  constructor(message: string) {
    super(message);
    this.name = 'WeakThresholdError';
  }
}

/** An error carrying a {@link SecAggErrorCode}. */
export class SecAggError extends Error {
  readonly code: SecAggErrorCode;
  constructor(code: SecAggErrorCode, detail?: string) {
    super(detail === undefined ? `${code}: ${SECAGG_ERRORS[code]}` : `${code}: ${detail}`);
    this.name = 'SecAggError';
    this.code = code;
  }
}
