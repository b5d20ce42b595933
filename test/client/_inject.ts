/**
 * A `fetch` over `app.inject()` for client tests: the silo client talks to an in-process app
 * without a port. `lose` makes the adapter run a request on the app and then throw a network
 * error instead of answering (the answer is lost on the way back).
 */
import type { App } from '../../src/server/app.js';

export interface InjectFetch {
  fetch: typeof fetch;
  /** Every request the app handled: method, path, status. */
  log: { method: string; path: string; status: number }[];
}

export function injectFetch(
  app: App,
  /** `count`: how many times this silo has sent this method and path, this one included. */
  o: { lose?: (method: string, path: string, count: number) => boolean } = {},
): InjectFetch {
  const log: InjectFetch['log'] = [];
  const seen = new Map<string, number>();
  const f = async (input: string | URL | Request, init?: RequestInit) => {
    const url = new URL(String(input));
    const path = url.pathname + url.search;
    const method = init?.method ?? 'GET';
    const body = init?.body instanceof Uint8Array ? Buffer.from(init.body) : undefined;
    const res = await app.inject({
      method: method as 'GET' | 'POST',
      url: path,
      headers: (init?.headers ?? {}) as Record<string, string>,
      ...(body ? { payload: body } : {}),
    });
    log.push({ method, path, status: res.statusCode });
    const silo = (init?.headers as Record<string, string> | undefined)?.['x-fedscore-silo'] ?? '';
    const key = `${silo} ${method} ${path}`;
    const count = (seen.get(key) ?? 0) + 1;
    seen.set(key, count);
    if (o.lose?.(method, path, count))
      throw new TypeError('fetch failed', {
        cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
      });
    const headers = new Headers();
    for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headers.set(k, v);
    const empty = res.statusCode === 204 || res.rawPayload.length === 0;
    return new Response(empty ? null : new Uint8Array(res.rawPayload), { status: res.statusCode, headers });
  };
  return { fetch: f as typeof fetch, log };
}
