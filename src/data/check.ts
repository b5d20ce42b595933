/**
 * Input checks shared by src/data (internal; never re-exported). A wrong type throws TypeError,
 * a wrong range RangeError, and the message starts with the parameter's name (docs/architecture.md, "Conventions").
 */

/** Throws RangeError unless v is an integer in [min, max]. */
export function checkInt(
  name: string,
  v: unknown,
  min = Number.MIN_SAFE_INTEGER,
  max = Number.MAX_SAFE_INTEGER,
): number {
  if (typeof v !== 'number') throw new TypeError(`${name}: expected a number, got ${typeof v}`);
  if (!Number.isInteger(v) || v < min || v > max)
    throw new RangeError(`${name}: expected an integer in [${min}, ${max}], got ${v}`);
  return v;
}

/** Throws RangeError unless v is a finite number in [min, max] (open ends when `open`). */
export function checkNumber(
  name: string,
  v: unknown,
  min = Number.NEGATIVE_INFINITY,
  max = Number.POSITIVE_INFINITY,
  open: { min?: boolean; max?: boolean } = {},
): number {
  if (typeof v !== 'number') throw new TypeError(`${name}: expected a number, got ${typeof v}`);
  const lo = open.min ? v > min : v >= min;
  const hi = open.max ? v < max : v <= max;
  if (Number.isNaN(v) || !lo || !hi) {
    const range = `${open.min ? '(' : '['}${min}, ${max}${open.max ? ')' : ']'}`;
    throw new RangeError(`${name}: expected a number in ${range}, got ${v}`);
  }
  return v;
}

/** Throws RangeError unless seed is a finite number (it is truncated to an integer). */
export function checkSeed(name: string, v: unknown): number {
  if (typeof v !== 'number') throw new TypeError(`${name}: expected a number, got ${typeof v}`);
  if (!Number.isFinite(v)) throw new RangeError(`${name}: expected a finite number, got ${v}`);
  return v;
}

/** Throws TypeError unless labels is an Int32Array or Uint8Array, RangeError on a label outside [0, numClasses). */
export function checkLabels(name: string, labels: unknown, numClasses: number): Int32Array | Uint8Array {
  if (!(labels instanceof Int32Array) && !(labels instanceof Uint8Array))
    throw new TypeError(`${name}: expected an Int32Array or Uint8Array`);
  for (let i = 0; i < labels.length; i++) {
    const c = labels[i]!;
    if (c < 0 || c >= numClasses)
      throw new RangeError(`${name}: label ${c} at index ${i} is outside [0, ${numClasses})`);
  }
  return labels;
}

/**
 * Throws RangeError unless every entry of indices is in [0, n) and, when `unique` (pools to
 * partition), no index repeats.
 */
export function checkIndices(name: string, indices: unknown, n: number, unique = false): Int32Array {
  if (!(indices instanceof Int32Array)) throw new TypeError(`${name}: expected an Int32Array`);
  const seen = unique ? new Uint8Array(n) : null;
  for (let i = 0; i < indices.length; i++) {
    const v = indices[i]!;
    if (v < 0 || v >= n) throw new RangeError(`${name}: index ${v} at position ${i} is outside [0, ${n})`);
    if (seen) {
      if (seen[v]) throw new RangeError(`${name}: index ${v} appears twice (at position ${i} again)`);
      seen[v] = 1;
    }
  }
  return indices;
}
