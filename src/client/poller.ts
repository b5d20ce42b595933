/** How the silo runtime waits for the service (./silo.ts): polling with backoff, and reading an error answer. */
import { parseAnswerJson } from './answers.js';
import { ServiceResponseError, type SiloHttp } from './http.js';

/** The options of {@link poller} (a subset of the silo's options). */
export interface PollOptions {
  readonly http: Pick<SiloHttp, 'silo'>;
  readonly log?: (line: string) => void;
  readonly poll?: { readonly initialMs: number; readonly maxMs: number };
  readonly heartbeatMs?: number;
  readonly waitTimeoutMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
}

/** The service's error answer `a` to `request` as a {@link ServiceResponseError} (code and message, if it has them). */
export function responseError(
  a: { status: number; bytes: Uint8Array },
  request: string,
): ServiceResponseError {
  let code = 'UNKNOWN';
  let message = '';
  try {
    const v = parseAnswerJson(a.bytes, request) as { code?: string; message?: string };
    code = v.code ?? code;
    message = v.message ?? '';
  } catch {}
  return new ServiceResponseError(a.status, code, message, request);
}

/**
 * Polls `probe` with backoff (default 20 ms growing ×1.5 to 500 ms) until it returns something
 * other than undefined, logging a heartbeat line while it waits.
 * @throws Error when `waitTimeoutMs` (default 1 h) passes first.
 */
export function poller(o: PollOptions) {
  const initial = o.poll?.initialMs ?? 20;
  const max = o.poll?.maxMs ?? 500;
  const timeout = o.waitTimeoutMs ?? 3_600_000;
  const sleep = o.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const heartbeat = o.heartbeatMs ?? 5000;
  return async <T>(what: string, probe: () => Promise<T | undefined>): Promise<T> => {
    const start = Date.now();
    let delay = initial;
    let beat = start;
    for (;;) {
      const v = await probe();
      if (v !== undefined) return v;
      if (Date.now() - start > timeout) throw new Error(`timed out after ${timeout} ms waiting for ${what}`);
      if (Date.now() - beat >= heartbeat) {
        beat = Date.now();
        o.log?.(`silo ${o.http.silo}: waiting for ${what} (${Math.round((beat - start) / 1000)} s)`);
      }
      await sleep(delay);
      delay = Math.min(max, delay * 1.5);
    }
  };
}
