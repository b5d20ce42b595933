/**
 * The silo's HTTP client for the scoring service (node's global fetch).
 *
 * Every request on a consortium's endpoints — reads included: consortium data is for members —
 * is signed (signing.ts) with a fresh timestamp and nonce per attempt, so a retry is never
 * refused as a replay. Network failures (connection
 * refused or reset, timeouts), 5xx and 429 answers are retried with exponential backoff; the
 * service treats a repeated identical message as already accepted, so retrying a POST whose
 * answer was lost is safe. Any other answer is returned to the caller as it is.
 */
import { randomNonce, signRequest } from './signing.js';

/** An error answer of the service: its catalogue code (docs/errors.md) and message. */
export class ServiceResponseError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly request: string,
  ) {
    super(`${request}: HTTP ${status} ${code}: ${detail}`);
    this.name = 'ServiceResponseError';
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
    o: { body?: Uint8Array; signed?: boolean } = {},
  ): Promise<Answer> {
    const label = `${method} ${path}`;
    let last = '';
    for (let attempt = 1; attempt <= this.retry.attempts; attempt++) {
      if (attempt > 1) {
        this.onRetry?.(label, attempt, last);
        await this.sleep(Math.min(this.retry.maxDelayMs, this.retry.initialDelayMs * 2 ** (attempt - 2)));
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
      let response: Response;
      try {
        response = await this.doFetch(`${this.base}${path}`, {
          method,
          headers,
          ...(o.body ? { body: o.body } : {}),
          signal: AbortSignal.timeout(this.retry.timeoutMs),
        });
      } catch (e) {
        last = describeNetworkError(e);
        continue;
      }
      let bytes: Uint8Array;
      try {
        bytes = new Uint8Array(await response.arrayBuffer());
      } catch (e) {
        last = `reading the answer: ${describeNetworkError(e)}`;
        continue;
      }
      if (response.status >= 500 || response.status === 429) {
        last = `HTTP ${response.status} ${errorOf(bytes).code}`;
        continue;
      }
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
    o: { body?: Uint8Array; signed?: boolean } = {},
  ): Promise<Answer> {
    const a = await this.send(method, path, o);
    if (!ok.includes(a.status)) {
      const e = errorOf(a.bytes);
      throw new ServiceResponseError(a.status, e.code, e.message, `${method} ${path}`);
    }
    return a;
  }

  /** Signed GET of a JSON resource. */
  async getJson<T>(path: string): Promise<T> {
    const a = await this.expect('GET', path, [200]);
    return JSON.parse(new TextDecoder().decode(a.bytes)) as T;
  }
}

/** The `{ code, message }` of an error body (or a placeholder for a body that is not one). */
export function errorOf(bytes: Uint8Array): { code: string; message: string } {
  try {
    const v = JSON.parse(new TextDecoder().decode(bytes)) as { code?: unknown; message?: unknown };
    if (typeof v.code === 'string') return { code: v.code, message: String(v.message ?? '') };
  } catch {}
  return { code: 'UNKNOWN', message: new TextDecoder().decode(bytes.subarray(0, 200)) };
}

function describeNetworkError(e: unknown): string {
  const err = e as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (err?.name === 'TimeoutError') return 'timed out';
  return err?.cause?.code ?? err?.cause?.message ?? err?.message ?? String(e);
}
