/**
 * Who may call what, decided before a request's body is read (docs/threat-model.md).
 *
 * - Silo routes (secure-aggregation messages, the inbox, score reports) take a request signed by a
 *   silo of the consortium in the path. Everything is checked from the request line and headers,
 *   in `onRequest`: the signature headers, the path parameters, the consortium, that the silo is
 *   in its roster, the round, the timestamp, the signature — over the body digest the silo
 *   declares in `x-fedscore-content-sha256` — and the nonce. Only then is the body read, under a
 *   limit that follows the consortium's d (_limits.ts), and checked against the signed digest.
 * - Reads of consortium data take a signed member request, the admin token, or — where the
 *   dashboard needs them — the read-only viewer token.
 * - Operator routes take the admin token (app.ts `requireAdmin`).
 *
 * The hooks are built here and decorated onto the app by app.ts; the route plugins use them.
 */
import { Transform } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import { type UploadKind, uploadLimit } from './_limits.js';
import {
  bearerRole,
  bodyDigest,
  CONTENT_DIGEST_HEADER,
  declaresBody,
  parseAuthHeaders,
  verifyRequest,
} from './auth.js';
import { ServiceError } from './errors.js';
import type { Bucket, SiloLimiter } from './rate-limits.js';
import type { ScoringService } from './service/scoring-service.js';

/** Who a request was admitted as. */
export type Reader = 'admin' | 'viewer' | 'silo';

/** What the hooks need from the app. */
export interface AccessContext {
  readonly service: ScoringService;
  readonly now: () => number;
  readonly freshnessMs: number;
  readonly adminToken: string;
  readonly viewerToken: string | undefined;
  readonly maxBodyBytes: number;
  readonly maxVectorBytes: number;
  /** The per-silo request limits (rate-limits.ts), checked before a nonce is stored. */
  readonly limiter: SiloLimiter;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated silo id (−1 unless a silo signed the request). */
    silo: number;
    /** Who the request was admitted as (undefined on public routes). */
    reader: Reader | undefined;
    /** The body digest the silo signed (silo requests only). */
    signedDigest: string | undefined;
  }
  interface FastifyContextConfig {
    /** A read of a vector (a model, an aggregate sum): counted against `maxVectorReads` too. */
    vectorRead?: boolean;
  }
}

/** The counters a signed request is counted on: its write route, or reads (of a vector). */
function bucketOf(request: FastifyRequest): Bucket {
  if (request.method === 'GET' || request.method === 'HEAD')
    return { kind: 'read', vector: request.routeOptions.config.vectorRead === true };
  return { kind: 'write', route: `${request.method} ${request.routeOptions.url}` };
}

const CID = /^[a-z0-9][a-z0-9-]{0,62}$/;
/** A path integer in its one canonical decimal form (no sign, leading zero, point or space). */
export const CANONICAL_INTEGER = /^(0|[1-9][0-9]{0,15})$/;
/** The validation message for a non-canonical integer path parameter `name`. */
export const canonicalMessage = (name: string) =>
  `params/${name} must be a decimal integer without sign, leading zeros, point or spaces`;

/** The consortium id and, on round routes, the round number of the path, checked. */
function pathOf(request: FastifyRequest): { cid: string; round: number | undefined } {
  const params = request.params as { cid?: string; round?: string };
  const cid = params.cid ?? '';
  if (!CID.test(cid))
    throw new ServiceError(
      'FEDSCORE_ERR_VALIDATION',
      'params/cid must match pattern "^[a-z0-9][a-z0-9-]{0,62}$"',
    );
  if (params.round === undefined) return { cid, round: undefined };
  const round = Number(params.round);
  if (!CANONICAL_INTEGER.test(params.round))
    throw new ServiceError('FEDSCORE_ERR_VALIDATION', canonicalMessage('round'));
  if (round < 1 || round > 0xffffffff)
    throw new ServiceError('FEDSCORE_ERR_VALIDATION', 'params/round must be in [1, 4294967295]');
  return { cid, round };
}

/**
 * A silo's signed request, before its body: sets `request.silo` and `request.signedDigest`.
 * @throws ServiceError UNAUTHENTICATED, VALIDATION, CONSORTIUM_NOT_FOUND, BAD_REQUEST_SIGNATURE,
 *   ROUND_NOT_FOUND, STALE_REQUEST, RATE_LIMITED (rate-limits.ts), REPLAYED_REQUEST.
 */
export async function authenticateSilo(a: AccessContext, request: FastifyRequest): Promise<void> {
  const parsed = parseAuthHeaders(request.headers);
  if (!parsed.ok) throw new ServiceError('FEDSCORE_ERR_UNAUTHENTICATED', parsed.detail);
  const { cid, round } = pathOf(request);
  const key = (await a.service.roster(cid))[parsed.silo];
  if (key === undefined)
    throw new ServiceError(
      'FEDSCORE_ERR_BAD_REQUEST_SIGNATURE',
      `silo ${parsed.silo} is not registered in ${cid}`,
    );
  if (round !== undefined && !(await a.service.roundExists(cid, round)))
    throw new ServiceError('FEDSCORE_ERR_ROUND_NOT_FOUND', `round ${round} of ${cid}`);
  if (Math.abs(a.now() - parsed.timestamp) > a.freshnessMs)
    throw new ServiceError('FEDSCORE_ERR_STALE_REQUEST');
  let digest = parsed.digest;
  if (digest === undefined) {
    if (declaresBody(request.headers))
      throw new ServiceError(
        'FEDSCORE_ERR_UNAUTHENTICATED',
        `missing ${CONTENT_DIGEST_HEADER} (the request has a body)`,
      );
    digest = bodyDigest();
  }
  const signed = {
    method: request.method,
    path: request.url,
    silo: parsed.silo,
    timestamp: parsed.timestamp,
    nonce: parsed.nonce,
    bodyDigest: digest,
  };
  if (!verifyRequest(key, signed, parsed.signature))
    throw new ServiceError('FEDSCORE_ERR_BAD_REQUEST_SIGNATURE');
  // counted only once signed by the silo, refused before its nonce takes a row
  a.limiter.take(cid, parsed.silo, bucketOf(request));
  if (!(await a.service.useNonce(cid, parsed.silo, parsed.nonce, parsed.timestamp + a.freshnessMs)))
    throw new ServiceError('FEDSCORE_ERR_REPLAYED_REQUEST');
  request.silo = parsed.silo;
  request.reader = 'silo';
  request.signedDigest = digest;
}

/**
 * After the body: a silo's body must be bytes and match the digest it signed.
 * @throws ServiceError UNSUPPORTED_MEDIA_TYPE, BAD_REQUEST_SIGNATURE.
 */
export function checkSignedBody(request: FastifyRequest): void {
  if (request.reader !== 'silo') return;
  const body = request.body;
  if (body !== undefined && body !== null && !Buffer.isBuffer(body))
    throw new ServiceError(
      'FEDSCORE_ERR_UNSUPPORTED_MEDIA_TYPE',
      'silo endpoints take application/octet-stream',
    );
  if (bodyDigest(Buffer.isBuffer(body) ? body : undefined) !== request.signedDigest)
    throw new ServiceError('FEDSCORE_ERR_BAD_REQUEST_SIGNATURE', 'the body does not match its signed digest');
}

/**
 * A read of consortium data: the admin token, the viewer token (when `viewer`), or a request
 * signed by a silo of the consortium.
 * @throws ServiceError CREDENTIALS_REQUIRED, NOT_PERMITTED, and those of {@link authenticateSilo}.
 */
export async function authenticateReader(
  a: AccessContext,
  request: FastifyRequest,
  viewer: boolean,
): Promise<void> {
  const authorization = request.headers.authorization;
  if (typeof authorization === 'string' && authorization.startsWith('Bearer ')) {
    const role = bearerRole(authorization, a.adminToken, a.viewerToken);
    if (role === undefined)
      throw new ServiceError(
        'FEDSCORE_ERR_CREDENTIALS_REQUIRED',
        "the bearer token is not one of the service's tokens",
      );
    if (role === 'viewer' && !viewer) throw new ServiceError('FEDSCORE_ERR_NOT_PERMITTED');
    request.reader = role;
    return;
  }
  if (Object.keys(request.headers).some((h) => h.startsWith('x-fedscore-')))
    return authenticateSilo(a, request);
  throw new ServiceError('FEDSCORE_ERR_CREDENTIALS_REQUIRED');
}

/**
 * The body limit of an upload of `kind` to the consortium in the path (_limits.ts). A declared
 * length above it is refused at once; a streamed body is cut off as it crosses it.
 * @throws ServiceError BODY_TOO_LARGE, CONSORTIUM_NOT_FOUND.
 */
export async function limitBody(
  a: AccessContext,
  kind: UploadKind,
  request: FastifyRequest,
  payload: NodeJS.ReadableStream,
): Promise<NodeJS.ReadableStream> {
  const { cid } = pathOf(request);
  const c = await a.service.consortium(cid);
  const limit = uploadLimit(
    kind,
    { id: c.id, parameters: c.model.parameters, silos: c.participants.length },
    a,
  );
  if (Number(request.headers['content-length']) > limit)
    throw new ServiceError('FEDSCORE_ERR_BODY_TOO_LARGE');
  let seen = 0;
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen > limit) done(new ServiceError('FEDSCORE_ERR_BODY_TOO_LARGE'));
      else done(null, chunk);
    },
  });
  payload.pipe(counted);
  return counted;
}
