/**
 * Canonical JSON: object keys sorted at every level, no spaces, `undefined` members left out — the
 * text fedscore hashes wherever two processes must agree on a digest of a structured value (a
 * model's topology, a trainer's layout, a sweep's configuration, the consortium file's pinned
 * parts). Bounded like every JSON walk of fedscore (./json-depth.ts).
 */
import { JsonDepthError, MAX_JSON_DEPTH } from './json-depth.js';

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * JSON with object keys sorted at every level, no spaces.
 * @throws JsonDepthError when `v` nests deeper than MAX_JSON_DEPTH (./json-depth.ts), before the
 *   recursion could exhaust the stack.
 */
export function canonicalJson(v: unknown): string {
  return canonical(v, 0);
}

function canonical(v: unknown, depth: number): string {
  if (depth > MAX_JSON_DEPTH) throw new JsonDepthError('canonicalJson', MAX_JSON_DEPTH);
  if (Array.isArray(v)) return `[${v.map((e) => canonical(e, depth + 1)).join(',')}]`;
  if (isObject(v))
    return `{${Object.keys(v)
      .sort()
      .filter((k) => v[k] !== undefined)
      .map((k) => `${JSON.stringify(k)}:${canonical(v[k], depth + 1)}`)
      .join(',')}}`;
  return JSON.stringify(v);
}
