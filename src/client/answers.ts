/**
 * What an answer of the service may be, before the silo reads it (issue 27, A5: the client read
 * whole bodies with no cap, followed redirects to other ports with fresh signed headers, and
 * waited forever on a server dripping a byte every 20 s).
 *
 * Each endpoint's body has a cap from what it can legitimately hold (the registry below): a
 * model is 4·d bytes, the aggregate sum 8·d (d from the consortium; `maxVectorBytes` before it
 * is known), an inbox message and a JSON answer their documented caps, an error answer 64 KiB.
 * A declared Content-Length above the cap is refused before the body is read, a streamed body as
 * soon as it crosses it. The headers must come within `headersTimeoutMs` and the body may not
 * pause longer than `idleTimeoutMs` (besides the attempt's overall `timeoutMs`). Redirects are
 * never followed. JSON is depth-checked (MAX_JSON_DEPTH) before it is parsed.
 */
import { concatBytes } from '../../crypto/check.js';
import { jsonTextDepth, MAX_JSON_DEPTH } from '../schema/json-depth.js';

/** The caps and timeouts of answers (docs/threat-model.md, "Resource bounds"). */
export interface AnswerLimits {
  /** JSON answers (configuration, rounds, scores, aggregate metadata). */
  readonly maxJsonBytes: number;
  /** Binary protocol messages of the inbox (keys, shares, consistency, unmask lists). */
  readonly maxMessageBytes: number;
  /** A model or a sum while d is not known yet. */
  readonly maxVectorBytes: number;
  /** An error answer (any status other than 2xx). */
  readonly maxErrorBytes: number;
  /** The answer's headers must arrive within this many ms. */
  readonly headersTimeoutMs: number;
  /** The body may not pause longer than this many ms between two chunks. */
  readonly idleTimeoutMs: number;
}

const MIB = 1024 * 1024;

/** Defaults: 16 MiB JSON, 16 MiB messages, 128 MiB vectors before d is known, 64 KiB errors, 30 s. */
export const DEFAULT_ANSWER_LIMITS: AnswerLimits = {
  maxJsonBytes: 16 * MIB,
  maxMessageBytes: 16 * MIB,
  maxVectorBytes: 128 * MIB,
  maxErrorBytes: 64 * 1024,
  headersTimeoutMs: 30_000,
  idleTimeoutMs: 30_000,
};

/** Why an answer was refused (the reason code of {@link AnswerRefusedError}; docs/errors.md). */
export type AnswerRefusal =
  | 'FEDSCORE_CLIENT_ANSWER_TOO_LARGE'
  | 'FEDSCORE_CLIENT_REDIRECT_REFUSED'
  | 'FEDSCORE_CLIENT_JSON_TOO_DEEP'
  | 'FEDSCORE_CLIENT_MALFORMED_JSON';

/** The silo refused an answer of the service: too large, a redirect, or JSON it will not parse. */
export class AnswerRefusedError extends Error {
  constructor(
    readonly code: AnswerRefusal,
    readonly request: string,
    readonly detail: string,
  ) {
    super(`${request}: answer refused (${code}): ${detail}`);
    this.name = 'AnswerRefusedError';
  }
}

/** What an endpoint answers, by path (the registry; first match wins). */
type BodyKind = 'model' | 'sum' | 'message' | 'json';

const ENDPOINTS: readonly { readonly pattern: RegExp; readonly kind: BodyKind }[] = [
  { pattern: /^\/v1\/consortia\/[^/]+\/models\/[^/]+$/, kind: 'model' },
  { pattern: /^\/v1\/consortia\/[^/]+\/rounds\/[^/]+\/aggregate\/sum$/, kind: 'sum' },
  { pattern: /^\/v1\/consortia\/[^/]+\/rounds\/[^/]+\/inbox\/[^/]+$/, kind: 'message' },
];

/** Bytes per parameter of each vector endpoint: float32 models, float64 sums. */
const WORD: Record<'model' | 'sum', number> = { model: 4, sum: 8 };

/**
 * The largest 2xx body of `path`: 4·d for a model, 8·d for the sum (`parameters` = d when
 * known), the message or JSON cap otherwise.
 */
export function answerCap(path: string, limits: AnswerLimits, parameters: number | undefined): number {
  const bare = path.split('?')[0]!;
  const kind = ENDPOINTS.find((e) => e.pattern.test(bare))?.kind ?? 'json';
  if (kind === 'model' || kind === 'sum')
    return parameters === undefined ? limits.maxVectorBytes : WORD[kind] * parameters;
  return kind === 'message' ? limits.maxMessageBytes : limits.maxJsonBytes;
}

/** The answer's body could not be read in time (a network failure: retried). */
export class AnswerTimeoutError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AnswerTimeoutError';
  }
}

/**
 * The body of `response`, read chunk by chunk: refused (AnswerRefusedError) beyond `cap` bytes —
 * at once when Content-Length declares more — and AnswerTimeoutError when no chunk comes for
 * `idleMs` (`abort` then cancels the request).
 */
export async function readCapped(
  response: Response,
  cap: number,
  idleMs: number,
  request: string,
  abort: (reason: Error) => void,
): Promise<Uint8Array> {
  const tooLarge = (n: string) =>
    new AnswerRefusedError(
      'FEDSCORE_CLIENT_ANSWER_TOO_LARGE',
      request,
      `HTTP ${response.status} body of ${n} bytes, above the ${cap} bytes this endpoint can hold`,
    );
  const declared = response.headers.get('content-length');
  if (declared !== null && /^\d+$/.test(declared) && Number(declared) > cap) {
    const e = tooLarge(declared);
    abort(e);
    throw e;
  }
  if (response.body === null) return new Uint8Array(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const idle = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const e = new AnswerTimeoutError(`no data for ${idleMs} ms while reading the answer (idle timeout)`);
        abort(e);
        reject(e);
      }, idleMs);
    });
    let step: Awaited<ReturnType<typeof reader.read>>;
    try {
      step = await Promise.race([reader.read(), idle]);
    } finally {
      clearTimeout(timer);
    }
    if (step.done) break;
    total += step.value.length;
    if (total > cap) {
      const e = tooLarge(`more than ${cap}`);
      abort(e);
      await reader.cancel().catch(() => {});
      throw e;
    }
    chunks.push(step.value);
  }
  return concatBytes(...chunks);
}

/** JSON.parse of an answer, depth-checked first; AnswerRefusedError naming the request otherwise. */
export function parseAnswerJson(bytes: Uint8Array, request: string): unknown {
  const text = new TextDecoder().decode(bytes);
  if (jsonTextDepth(text) > MAX_JSON_DEPTH)
    throw new AnswerRefusedError(
      'FEDSCORE_CLIENT_JSON_TOO_DEEP',
      request,
      `JSON nested deeper than ${MAX_JSON_DEPTH} levels`,
    );
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new AnswerRefusedError(
      'FEDSCORE_CLIENT_MALFORMED_JSON',
      request,
      `not JSON (${(e as Error).message.slice(0, 200)})`,
    );
  }
}
