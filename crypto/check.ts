/**
 * Input checks and byte helpers shared by crypto/, protocol/ and the silo client (src/client): not
 * `_`-prefixed because other folders import it (a `_` file is private to its folder,
 * test/arch/layers.test.ts), yet not part of `fedscore/crypto`'s public surface either.
 *
 * A wrong type throws TypeError, a wrong range RangeError; every message starts with the
 * parameter name, as in noble-curves' `abytes`/`anumber` helpers.
 */

/** Throws TypeError unless `value` is a Uint8Array (of `length` bytes when given, else RangeError). */
export function checkBytes(name: string, value: unknown, length?: number): Uint8Array {
  if (!(value instanceof Uint8Array)) throw new TypeError(`${name}: expected Uint8Array`);
  if (length !== undefined && value.length !== length)
    throw new RangeError(`${name}: expected ${length} bytes, got ${value.length}`);
  return value;
}

/** Throws TypeError unless `value` is an integer number, RangeError unless min ≤ value ≤ max. */
export function checkInt(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value))
    throw new TypeError(`${name}: expected an integer, got ${String(value)}`);
  if (value < min || value > max) throw new RangeError(`${name}: ${value} is outside [${min}, ${max}]`);
  return value;
}

/** Throws TypeError unless `value` is a finite number. */
export function checkFinite(name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw new TypeError(`${name}: expected a finite number, got ${String(value)}`);
  return value;
}

/** Throws TypeError unless `value` is a string, RangeError unless its UTF-8 form has 1..maxBytes bytes. */
export function checkString(name: string, value: unknown, maxBytes: number): string {
  if (typeof value !== 'string') throw new TypeError(`${name}: expected a string`);
  const n = new TextEncoder().encode(value).length;
  if (n < 1 || n > maxBytes) throw new RangeError(`${name}: UTF-8 length ${n} is outside [1, ${maxBytes}]`);
  return value;
}

/** Concatenation of byte arrays into a fresh buffer owned by the caller. */
export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Uint8Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

const enc = new TextEncoder();

/**
 * Unambiguous encoding of a labelled context: each part is prefixed with its 4-byte big-endian
 * length, so no two different part lists encode to the same bytes (HKDF `info`, AEAD associated
 * data and signature payloads rely on this).
 */
export function encodeContext(parts: (string | number | Uint8Array)[]): Uint8Array {
  const bytes = parts.map((p) => {
    if (typeof p === 'string') return enc.encode(p);
    if (typeof p === 'number') {
      const b = new Uint8Array(4);
      new DataView(b.buffer).setUint32(0, p >>> 0, false);
      return b;
    }
    return p;
  });
  const out = new Uint8Array(bytes.reduce((s, b) => s + 4 + b.length, 0));
  const dv = new DataView(out.buffer);
  let o = 0;
  for (const b of bytes) {
    dv.setUint32(o, b.length, false);
    out.set(b, o + 4);
    o += 4 + b.length;
  }
  return out;
}
