/**
 * Bounded JSON nesting (issue 27, A5: a deeply nested consortium file crashed `fedscore client`
 * with "Maximum call stack size exceeded" in canonicalJson). Every JSON document fedscore reads
 * from a file or a server answer — consortium files, model.json, the service's answers — is
 * checked by `jsonTextDepth`, a linear scan without recursion, before it is parsed or walked
 * recursively; `canonicalJson` refuses a value nested deeper still.
 */

/** Deepest nesting of arrays and objects accepted (the deepest fedscore writes is < 20). */
export const MAX_JSON_DEPTH = 64;

/** A JSON document nested deeper than the limit. */
export class JsonDepthError extends RangeError {
  constructor(
    readonly where: string,
    readonly limit: number,
  ) {
    super(
      `${where}: JSON nested deeper than ${limit} levels (the limit of arrays and objects within each other)`,
    );
    this.name = 'JsonDepthError';
  }
}

/**
 * The nesting depth of JSON text (arrays and objects; brackets inside strings do not count),
 * scanning at most until it exceeds `limit`. Linear, no recursion; the text need not be valid.
 */
export function jsonTextDepth(text: string, limit = MAX_JSON_DEPTH): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let k = 0; k < text.length; k++) {
    const ch = text.charCodeAt(k);
    if (inString) {
      if (ch === 0x5c) k++;
      else if (ch === 0x22) inString = false;
    } else if (ch === 0x22) inString = true;
    else if (ch === 0x5b || ch === 0x7b) {
      if (++depth > max) {
        max = depth;
        if (max > limit) return max;
      }
    } else if (ch === 0x5d || ch === 0x7d) depth--;
  }
  return max;
}

/**
 * JSON.parse of `text` after the depth check.
 * @throws JsonDepthError (nested deeper than `limit`), SyntaxError (not JSON); both name `where`.
 */
export function parseBoundedJson(text: string, where: string, limit = MAX_JSON_DEPTH): unknown {
  if (jsonTextDepth(text, limit) > limit) throw new JsonDepthError(where, limit);
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new SyntaxError(`${where}: not JSON (${(e as Error).message})`);
  }
}
