/**
 * The consortium contract's error catalogue, shared by the service and the silo: the service's one error catalogue (docs/architecture.md, "Conventions": one error catalogue of code,
 * message template and HTTP status). Every error body the service sends is `{ code, message }` with a code
 * from this table; docs/errors.md documents each code (a test checks it).
 *
 * The core of the service (src/server/service/) throws {@link ServiceError} with a code and,
 * optionally, a detail; the HTTP edge (app.ts's error handler) maps it to the status and body.
 * Rejections of the secure-aggregation state machine (protocol/errors.ts) map one-to-one onto
 * `FEDSCORE_ERR_SECAGG_<CODE>`.
 */
import { SECAGG_ERRORS, type SecAggErrorCode } from '../../protocol/errors.js';

export interface ErrorEntry {
  readonly status: number;
  readonly message: string;
}

const BASE = {
  FEDSCORE_ERR_VALIDATION: { status: 400, message: 'the request does not match the schema' },
  FEDSCORE_ERR_MALFORMED_REQUEST: { status: 400, message: 'the request is not well-formed HTTP' },
  FEDSCORE_ERR_HEADERS_TOO_LARGE: { status: 431, message: 'the request headers exceed the size limit' },
  FEDSCORE_ERR_REQUEST_TIMEOUT: { status: 408, message: 'the request did not arrive in time' },
  FEDSCORE_ERR_MALFORMED_JSON: { status: 400, message: 'the request body is not valid JSON' },
  FEDSCORE_ERR_UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    message: 'the request body has a content type this endpoint does not accept',
  },
  FEDSCORE_ERR_BODY_TOO_LARGE: { status: 413, message: 'the request body exceeds the size limit' },
  FEDSCORE_ERR_ROUTE_NOT_FOUND: { status: 404, message: 'no such route' },
  FEDSCORE_ERR_UNAUTHENTICATED: { status: 401, message: 'the request is not signed' },
  FEDSCORE_ERR_BAD_REQUEST_SIGNATURE: {
    status: 401,
    message: "the request signature does not verify under the silo's registered key",
  },
  FEDSCORE_ERR_STALE_REQUEST: {
    status: 401,
    message: 'the request timestamp is outside the accepted window',
  },
  FEDSCORE_ERR_REPLAYED_REQUEST: { status: 401, message: 'the request nonce was already used' },
  FEDSCORE_ERR_ADMIN_TOKEN: { status: 401, message: 'operator endpoints need a valid admin token' },
  FEDSCORE_ERR_CREDENTIALS_REQUIRED: {
    status: 401,
    message:
      'reading consortium data needs credentials: a signed silo request, the admin token or the viewer token',
  },
  FEDSCORE_ERR_NOT_PERMITTED: { status: 403, message: 'these credentials may not read this resource' },
  FEDSCORE_ERR_FORBIDDEN: { status: 403, message: 'a silo may act only as itself' },
  FEDSCORE_ERR_RATE_LIMITED: { status: 429, message: 'too many requests from this silo' },
  FEDSCORE_ERR_CONSORTIUM_NOT_FOUND: { status: 404, message: 'no such consortium' },
  FEDSCORE_ERR_CONSORTIUM_EXISTS: { status: 409, message: 'a consortium with this id already exists' },
  FEDSCORE_ERR_INVALID_CONSORTIUM: { status: 400, message: 'the consortium configuration is invalid' },
  FEDSCORE_ERR_TOO_FEW_SILOS: {
    status: 400,
    message: 'a round would select fewer than 3 silos (the sum would show each the others’ updates)',
  },
  FEDSCORE_ERR_ROUND_NOT_FOUND: { status: 404, message: 'no such round' },
  FEDSCORE_ERR_ROUND_OPEN: { status: 409, message: 'the previous round has not finished' },
  FEDSCORE_ERR_SCHEDULE_DONE: {
    status: 409,
    message: "the consortium's schedule of rounds is over",
  },
  FEDSCORE_ERR_NOT_SELECTED: {
    status: 403,
    message: "the consortium's strategy did not select this silo for the round",
  },
  FEDSCORE_ERR_ROUND_CLOSED: {
    status: 409,
    message: 'the round no longer takes secure-aggregation messages',
  },
  FEDSCORE_ERR_STAGE_MISMATCH: {
    status: 409,
    message: 'the round is not in the stage the operator asked to close',
  },
  FEDSCORE_ERR_WRONG_MESSAGE_TYPE: {
    status: 400,
    message: 'the message type does not match the stage endpoint it was posted to',
  },
  FEDSCORE_ERR_NOT_READY: { status: 409, message: 'not available yet at this stage of the round' },
  FEDSCORE_ERR_MODEL_MISSING: { status: 409, message: 'the consortium has no initial model' },
  FEDSCORE_ERR_MODEL_LOCKED: {
    status: 409,
    message: 'the initial model cannot change once a round has opened',
  },
  FEDSCORE_ERR_MODEL_NOT_FOUND: { status: 404, message: 'no such model version' },
  FEDSCORE_ERR_WRONG_MODEL_LENGTH: {
    status: 400,
    message: 'the model does not have the configured number of parameters',
  },
  FEDSCORE_ERR_NOT_REPORTING: { status: 409, message: 'the round does not take score reports now' },
  FEDSCORE_ERR_NOT_A_SURVIVOR: { status: 409, message: 'the silo is not in this round’s aggregate' },
  FEDSCORE_ERR_REPORT_INVALID: { status: 400, message: 'the score report is malformed' },
  FEDSCORE_ERR_REPORT_MISMATCH: {
    status: 400,
    message: 'the score report belongs to another consortium, round or silo',
  },
  FEDSCORE_ERR_REPORT_BAD_SIGNATURE: {
    status: 400,
    message: "the score report is not signed by the silo's registered key",
  },
  FEDSCORE_ERR_UTILITY_OUT_OF_RANGE: {
    status: 400,
    message: "a utility lies outside the consortium's declared range",
  },
  FEDSCORE_ERR_REPORT_CONFLICT: {
    status: 409,
    message: 'the silo already submitted a different report for this round',
  },
  FEDSCORE_ERR_UTILITIES_SET: { status: 409, message: 'the round utilities are already set' },
  FEDSCORE_ERR_NOT_QUARANTINED: {
    status: 409,
    message: 'the silo’s report of this round is not quarantined',
  },
  FEDSCORE_ERR_EXTERNAL_AGGREGATION: {
    status: 409,
    message: 'the consortium is reports-only: its secure aggregation runs outside fedscore',
  },
  FEDSCORE_ERR_NOT_EXTERNAL: {
    status: 409,
    message: 'only a reports-only consortium (secureAggregation: external) takes this request',
  },
  FEDSCORE_ERR_ROUND_NUMBER: { status: 409, message: 'the round number is not the next round' },
  FEDSCORE_ERR_NOT_READY_FOR_SERVICE: {
    status: 503,
    message: 'the service is not ready (storage unavailable)',
  },
  FEDSCORE_ERR_INTERNAL: { status: 500, message: 'internal error' },
} as const satisfies Record<string, ErrorEntry>;

/** HTTP status of each secure-aggregation rejection the server state machine can return. */
const SECAGG_STATUS: Readonly<Record<SecAggErrorCode, number>> = {
  MALFORMED: 400,
  UNSUPPORTED_VERSION: 400,
  WRONG_SESSION: 400,
  WRONG_ROUND: 400,
  UNKNOWN_SENDER: 400,
  BAD_SIGNATURE: 400,
  OUT_OF_ORDER: 409,
  DUPLICATE: 409,
  NOT_A_PARTICIPANT: 409,
  WRONG_LENGTH: 400,
  DUPLICATE_KEYS: 400,
  BAD_CIPHERTEXT: 400,
  INCONSISTENT_SET: 400,
  BELOW_THRESHOLD: 409,
  BOTH_SHARES_REQUESTED: 400,
  CONSISTENCY_MISMATCH: 400,
  RECONSTRUCTION_FAILED: 400,
  ABORTED: 409,
  WEAK_THRESHOLD: 400,
  BAD_SHARE: 400,
  BAD_DEALING: 400,
  BAD_CORRECTION: 400,
  AGGREGATE_OUT_OF_RANGE: 409,
  MODEL_MISMATCH: 409,
  WEIGHTS_MISMATCH: 409,
};

/** A secure-aggregation rejection's service code. */
export type SecAggServiceCode = `FEDSCORE_ERR_SECAGG_${SecAggErrorCode}`;

/** Every error code the service sends. */
export type ErrorCode = keyof typeof BASE | SecAggServiceCode;

/** The catalogue: code → HTTP status and message. */
export const ERRORS: Readonly<Record<ErrorCode, ErrorEntry>> = {
  ...BASE,
  ...(Object.fromEntries(
    (Object.keys(SECAGG_ERRORS) as SecAggErrorCode[]).map((c) => [
      `FEDSCORE_ERR_SECAGG_${c}`,
      { status: SECAGG_STATUS[c], message: `secure aggregation: ${SECAGG_ERRORS[c]}` },
    ]),
  ) as Record<SecAggServiceCode, ErrorEntry>),
};

/** The service code of a protocol rejection. */
export function secAggCode(code: SecAggErrorCode): SecAggServiceCode {
  return `FEDSCORE_ERR_SECAGG_${code}`;
}

/** The JSON body of an error response. */
export interface ErrorBody {
  readonly code: ErrorCode;
  readonly message: string;
}

/** The body for `code` with an optional detail (the same text as {@link ServiceError}'s message). */
export function errorBody(code: ErrorCode, detail?: string): ErrorBody {
  const base = ERRORS[code].message;
  return { code, message: detail === undefined ? base : `${base}: ${detail}` };
}

/**
 * The silo's own codes (src/client): refusals and faults a silo reports in its errors, outcomes
 * and log, never answers of the service. docs/errors.md, "Silo-side refusals", documents each (a
 * test checks it).
 */
export const SILO_CODES = {
  FEDSCORE_ERR_WEIGHT_BOUNDS: "the round's weights break the consortium's weight floor or largest share",
  FEDSCORE_ERR_BASE_ALREADY_UNMASKED:
    'this silo already sent an Unmasking response for a round on this base model',
  FEDSCORE_ERR_ABORT_AFTER_UNMASKING:
    "the server ended the round after this silo's Unmasking response (a fault of the server)",
  FEDSCORE_ERR_JOURNAL: "the silo's masking journal cannot be read or written",
} as const satisfies Record<string, string>;

/** A silo-side code. */
export type SiloCode = keyof typeof SILO_CODES;
