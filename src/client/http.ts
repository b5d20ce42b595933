/**
 * The silo's HTTP client for the scoring service (node's global fetch).
 *
 * Every request on a consortium's endpoints — reads included: consortium data is for members —
 * is signed (signing.ts) with a fresh timestamp and nonce per attempt, so a retry is never
 * refused as a replay. Network failures (connection
 * refused or reset, timeouts), 5xx and 429 answers are retried with exponential backoff (after a
 * 429 no sooner than its retry-after, at most 120 s); the
 * service treats a repeated identical message as already accepted, so retrying a POST whose
 * answer was lost is safe. Any other answer is returned to the caller as it is.
 *
 * Answers are bounded (answers.ts; issue 27, A5): each endpoint's body has a cap (a model 4·d
 * bytes, the sum 8·d, JSON and messages documented caps; `maxBytes` of a call overrides it),
 * headers and body have timeouts, a redirect is refused, not followed (it would carry a fresh
 * signature elsewhere), and JSON is depth-checked before it is parsed. A refused answer throws
 * {@link AnswerRefusedError} at once (not retried); a timeout is a network failure (retried).
 */

import type { ErrorCode } from '../consortium/error-codes.js';
import { inertText } from '../consortium/inert-text.js';
import { randomNonce, signRequest } from '../consortium/signing.js';
import {
  type AnswerLimits,
  AnswerRefusedError,
  AnswerTimeoutError,
  answerCap,
  DEFAULT_ANSWER_LIMITS,
  parseAnswerJson,
  readCapped,
} from './answers.js';

export { type AnswerLimits, AnswerRefusedError, DEFAULT_ANSWER_LIMITS } from './answers.js';

/** An error answer of the service: its catalogue code (docs/errors.md) and message. */
export class ServiceResponseError extends Error {
  /** The service's code and message, made inert (issue 32, T1): they are printed. */
  readonly code: string;
  readonly detail: string;
  constructor(
    readonly status: number,
    code: string,
    detail: string,
    readonly request: string,
  ) {
    super(`${request}: HTTP ${status} ${inertText(code)}: ${inertText(detail)}`);
    this.name = 'ServiceResponseError';
    this.code = inertText(code);
    this.detail = inertText(detail);
  }

  /** Whether the service answered with `code` (a catalogue code: a misspelt one does not compile). */
  is(code: ErrorCode): boolean {
    return this.code === code;
  }
}

/** The service could not be reached after every retry. */
export class UnreachableError extends Error {
  constructor(
    readonly request: string,
    readonly attempts: number,
    readonly lastError: string,
  ) {
    super(`${request}: no answer after ${attempts} attempt(s) (${lastError})`);
    this.name = 'UnreachableError';
  }
}

/** A decoded answer. */
export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly bytes: Uint8Array;
}

/** Retry policy for network failures, 5xx and 429. */
export interface RetryPolicy {
  /** Attempts in all (≥ 1). */
  readonly attempts: number;
  /** First backoff in ms; doubles per attempt up to `maxDelayMs`. */
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
  /** Abort one attempt after this many ms. */
  readonly timeoutMs: number;
}

/** Default policy: 8 attempts, 100 ms doubling to 5 s, 120 s per attempt (uploads of large vectors). */
export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 8,
  initialDelayMs: 100,
  maxDelayMs: 5_000,
  timeoutMs: 120_000,
};

/** Options of {@link SiloHttp}. */
export interface SiloHttpOptions {
  /** The service's base URL, e.g. `http://127.0.0.1:8080`. */
  readonly server: string;
  readonly consortium: string;
  readonly silo: number;
  /** The silo's Ed25519 secret key (32 bytes; owned by the caller). */
  readonly secretKey: Uint8Array;
  readonly retry?: Partial<RetryPolicy>;
  /** Caps and timeouts of answers (default DEFAULT_ANSWER_LIMITS). */
  readonly limits?: Partial<AnswerLimits>;
  /**
   * d, the model's parameter count, for the caps of models (4·d) and sums (8·d); when absent it
   * is taken from the first consortium configuration read (`GET /v1/consortia/<id>`).
   */
  readonly parameters?: number;
  /** Injected for tests. */
  readonly fetch?: typeof fetch;
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
  /** Called before each retry with the reason. */
  readonly onRetry?: (request: string, attempt: number, reason: string) => void;
}

const sleeper = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Signed requests of one silo to one consortium.
 *
 * @throws TypeError / RangeError (constructor) naming a bad option.
 */
export class SiloHttp {
  readonly base: string;
  readonly consortium: string;
  readonly silo: number;
  private readonly secretKey: Uint8Array;
  private readonly retry: RetryPolicy;
  private readonly doFetch: typeof fetch;
  private readonly now: () => number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly onRetry: SiloHttpOptions['onRetry'];
  readonly limits: AnswerLimits;
  private parameters: number | undefined;

  constructor(o: SiloHttpOptions) {
    let url: URL;
    try {
      url = new URL(o.server);
    } catch {
      throw new RangeError(`server: expected an http(s) URL, got '${o.server}'`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new RangeError(`server: expected an http(s) URL, got '${o.server}'`);
    if (!/^[a-z0-9][a-z0-9-]{0,62}$/.test(o.consortium))
      throw new RangeError(
        `consortium: expected lower-case letters, digits and dashes, got '${o.consortium}'`,
      );
    if (!Number.isInteger(o.silo) || o.silo < 0 || o.silo > 254)
      throw new RangeError(`silo: expected an integer in [0, 254], got ${o.silo}`);
    if (!(o.secretKey instanceof Uint8Array) || o.secretKey.length !== 32)
      throw new TypeError('secretKey: expected 32 bytes');
    this.base = url.href.replace(/\/+$/, '');
    this.consortium = o.consortium;
    this.silo = o.silo;
    this.secretKey = o.secretKey;
    this.retry = { ...DEFAULT_RETRY, ...o.retry };
    if (!(Number.isInteger(this.retry.attempts) && this.retry.attempts >= 1))
      throw new RangeError(`retry.attempts: expected an integer ≥ 1, got ${this.retry.attempts}`);
    this.doFetch = o.fetch ?? fetch;
    this.now = o.now ?? Date.now;
    this.sleep = o.sleep ?? sleeper;
    this.onRetry = o.onRetry;
    this.limits = { ...DEFAULT_ANSWER_LIMITS, ...o.limits };
    for (const [k, v] of Object.entries(this.limits))
      if (!(Number.isSafeInteger(v) && v > 0))
        throw new RangeError(`limits.${k}: expected a positive integer, got ${v}`);
    if (o.parameters !== undefined && !(Number.isSafeInteger(o.parameters) && o.parameters > 0))
      throw new RangeError(`parameters: expected a positive integer, got ${o.parameters}`);
    this.parameters = o.parameters;
  }

  /** d as known for the vector caps (the option, or the consortium's configuration once read). */
  private learnParameters(path: string, status: number, bytes: Uint8Array): void {
    if (this.parameters !== undefined || status !== 200 || path !== this.path()) return;
    try {
      const d = (JSON.parse(new TextDecoder().decode(bytes)) as { model?: { parameters?: unknown } })?.model
        ?.parameters;
      if (typeof d === 'number' && Number.isSafeInteger(d) && d > 0 && 8 * d <= this.limits.maxVectorBytes)
        this.parameters = d;
    } catch {}
  }

  /** `/v1/consortia/<id>` + `rest`. */
  path(rest = ''): string {
    return `/v1/consortia/${this.consortium}${rest}`;
  }

  /**
   * One request, retried on network failures, 5xx and 429; `signed` adds the silo's signature.
   * @returns the first answer that is not retried (any status).
   * @throws UnreachableError when every attempt failed.
   */
  async send(
    method: 'GET' | 'POST',
    path: string,
    o: { body?: Uint8Array; signed?: boolean; maxBytes?: number } = {},
  ): Promise<Answer> {
    const label = `${method} ${path}`;
    const cap = o.maxBytes ?? answerCap(path, this.limits, this.parameters);
    let last = '';
    // A 429's retry-after (the seconds until the service's rate window ends): the next attempt
    // waits at least that long, up to MAX_RETRY_AFTER_MS, instead of spending its retries early.
    let notBefore = 0;
    for (let attempt = 1; attempt <= this.retry.attempts; attempt++) {
      if (attempt > 1) {
        this.onRetry?.(label, attempt, last);
        const backoff = Math.min(this.retry.maxDelayMs, this.retry.initialDelayMs * 2 ** (attempt - 2));
        await this.sleep(Math.max(backoff, notBefore));
        notBefore = 0;
      }
      const headers: Record<string, string> = {};
      if (o.signed !== false)
        Object.assign(
          headers,
          signRequest(this.secretKey, {
            method,
            path,
            silo: this.silo,
            timestamp: this.now(),
            nonce: randomNonce(),
            ...(o.body ? { body: o.body } : {}),
          }),
        );
      if (o.body) headers['content-type'] = 'application/octet-stream';
      const control = new AbortController();
      const abort = (reason: Error) => control.abort(reason);
      const headersTimer = setTimeout(
        () =>
          abort(
            new AnswerTimeoutError(
              `no answer headers within ${this.limits.headersTimeoutMs} ms (headers timeout)`,
            ),
          ),
        this.limits.headersTimeoutMs,
      );
      let response: Response;
      try {
        response = await this.doFetch(`${this.base}${path}`, {
          method,
          headers,
          redirect: 'manual',
          ...(o.body ? { body: o.body } : {}),
          signal: AbortSignal.any([control.signal, AbortSignal.timeout(this.retry.timeoutMs)]),
        });
      } catch (e) {
        last = describeNetworkError(control.signal.reason ?? e);
        continue;
      } finally {
        clearTimeout(headersTimer);
      }
      if (response.status >= 300 && response.status < 400) {
        await response.body?.cancel().catch(() => {});
        throw new AnswerRefusedError(
          'FEDSCORE_CLIENT_REDIRECT_REFUSED',
          label,
          `HTTP ${response.status} redirect to ${JSON.stringify(response.headers.get('location') ?? '')} not followed (the service answers at ${this.base} only)`,
        );
      }
      const ok = response.status >= 200 && response.status < 300;
      let bytes: Uint8Array;
      try {
        bytes = await readCapped(
          response,
          ok ? cap : this.limits.maxErrorBytes,
          this.limits.idleTimeoutMs,
          label,
          abort,
        );
      } catch (e) {
        if (e instanceof AnswerRefusedError) throw e;
        last = `reading the answer: ${describeNetworkError(control.signal.reason ?? e)}`;
        continue;
      }
      if (response.status >= 500 || response.status === 429) {
        last = `HTTP ${response.status} ${errorOf(bytes).code}`;
        if (response.status === 429) notBefore = retryAfterMs(response.headers.get('retry-after'));
        continue;
      }
      this.learnParameters(path, response.status, bytes);
      return { status: response.status, headers: response.headers, bytes };
    }
    throw new UnreachableError(label, this.retry.attempts, last);
  }

  /**
   * Like {@link send}, but an answer outside `ok` becomes a {@link ServiceResponseError}.
   */
  async expect(
    method: 'GET' | 'POST',
    path: string,
    ok: readonly number[],
    o: { body?: Uint8Array; signed?: boolean; maxBytes?: number } = {},
  ): Promise<Answer> {
    const a = await this.send(method, path, o);
    if (!ok.includes(a.status)) {
      const e = errorOf(a.bytes);
      throw new ServiceResponseError(a.status, e.code, e.message, `${method} ${path}`);
    }
    return a;
  }

  /**
   * Signed GET of a JSON resource.
   * @throws AnswerRefusedError when the answer is not JSON or nests deeper than MAX_JSON_DEPTH.
   */
  async getJson<T>(path: string, o: { maxBytes?: number } = {}): Promise<T> {
    const a = await this.expect('GET', path, [200], o);
    return parseAnswerJson(a.bytes, `GET ${path}`) as T;
  }
}

/** The `{ code, message }` of an error body (or a placeholder for a body that is not one). */
export function errorOf(bytes: Uint8Array): { code: string; message: string } {
  // The server's words, made inert where they are read (issue 32, T1): they end up on a terminal.
  try {
    const v = JSON.parse(new TextDecoder().decode(bytes)) as { code?: unknown; message?: unknown };
    if (typeof v.code === 'string')
      return { code: inertText(v.code), message: inertText(String(v.message ?? '')) };
  } catch {}
  return { code: 'UNKNOWN', message: inertText(new TextDecoder().decode(bytes.subarray(0, 200))) };
}

function describeNetworkError(e: unknown): string {
  const err = e as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (err instanceof AnswerTimeoutError) return err.message;
  if (err?.name === 'TimeoutError') return 'timed out';
  return err?.cause?.code ?? err?.cause?.message ?? err?.message ?? String(e);
}

/** The longest a 429's retry-after is honoured (the service's rate window is 60 s by default). */
const MAX_RETRY_AFTER_MS = 120_000;

/** A retry-after header in delay-seconds as ms (0 when absent or not a number), capped. */
export function retryAfterMs(header: string | null): number {
  if (header === null || !/^\d{1,9}$/.test(header.trim())) return 0;
  return Math.min(MAX_RETRY_AFTER_MS, Number(header.trim()) * 1000);
}
