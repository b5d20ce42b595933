/**
 * The service's refusals as one sentence naming what was refused and the catalogue code
 * (`the consortium 'hospitals' already exists on http://…`), for the operator's commands.
 */

/** What a refused request turns into: printed without a stack, exit code 1 (src/cli/program.ts). */
export class ServiceRefused extends RangeError {}

/** The codes of a refused token. */
const TOKEN_REFUSED = new Set([
  'FEDSCORE_ERR_ADMIN_TOKEN',
  'FEDSCORE_ERR_CREDENTIALS_REQUIRED',
  'FEDSCORE_ERR_NOT_PERMITTED',
]);

/** The sentence for an HTTP answer `status` with body `text` to `what` (e.g. "creating consortium 'x'"). */
export function refusalSentence(o: {
  server: string;
  consortium: string;
  what: string;
  status: number;
  text: string;
}): string {
  let body: { code?: string; message?: string } = {};
  try {
    body = JSON.parse(o.text) as typeof body;
  } catch {}
  const code = body.code ?? `HTTP ${o.status}`;
  if (body.code === 'FEDSCORE_ERR_CONSORTIUM_EXISTS')
    return `the consortium '${o.consortium}' already exists on ${o.server} (${code})`;
  if (body.code !== undefined && TOKEN_REFUSED.has(body.code))
    return `the service at ${o.server} refused the admin token (${code}): check FEDSCORE_ADMIN_TOKEN`;
  if (body.code === 'FEDSCORE_ERR_CONSORTIUM_NOT_FOUND')
    return `the service at ${o.server} has no consortium '${o.consortium}' (${code})`;
  const detail = (body.message ?? o.text).trim().replace(/\s+/g, ' ').slice(0, 500);
  return `the service at ${o.server} refused ${o.what} (${code}${detail ? `: ${detail}` : ''})`;
}

/** `fetch`, with an unreachable service as one sentence. @throws ServiceRefused */
export async function reach(server: string, url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (e) {
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    throw new ServiceRefused(
      `cannot reach the service at ${server}: ${cause?.code ?? cause?.message ?? (e as Error).message}`,
    );
  }
}
