/**
 * The public surface of `fedscore/client`: the signed HTTP client a silo uses to talk to a
 * fedscore service (`fedscore serve`) — every request signed with the silo's registered Ed25519
 * key, network failures, 5xx and 429 retried with backoff — and the request-signing scheme itself,
 * for silos written in another language or stack. Build the messages it carries with
 * `fedscore/protocol` (secure-aggregation messages, signed score reports). An explicit list: the
 * silo runtime (training, the round loop) stays internal (docs/api.md lists this surface).
 */

export {
  NONCE_HEADER,
  NONCE_PATTERN,
  type RequestToSign,
  randomNonce,
  requestSigningPayload,
  SIGNATURE_HEADER,
  SILO_HEADER,
  signRequest,
  TIMESTAMP_HEADER,
} from '../consortium/signing.js';
export {
  type Answer,
  DEFAULT_RETRY,
  errorOf,
  type RetryPolicy,
  ServiceResponseError,
  SiloHttp,
  type SiloHttpOptions,
  UnreachableError,
} from './http.js';
