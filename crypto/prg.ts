/**
 * Mask PRG: AES-128-CTR keystreams (NIST SP 800-38A §6.5) from node:crypto, keyed per
 * (session, round, pair-or-self, vector) through HKDF-SHA256, added to or subtracted from a
 * Uint32 accumulator in chunks.
 *
 * Bonawitz et al. 2017, round 2 (MaskedInputCollection): y_u = x_u + PRG(b_u)
 * + Σ_{v} Δ_{u,v}·PRG(s_{u,v}) over Z_(2^32). Each PRG output here is read as little-endian
 * uint32 words; mask element i is keystream bytes [4i, 4i + 4). The full mask never exists in
 * memory: at most one chunk of keystream (CHUNK_WORDS words) is alive at a time. The add loop is a
 * small WebAssembly SIMD routine (crypto/_add32.ts) with a plain JavaScript fallback, because a
 * JavaScript loop alone is slower than AES-NI.
 *
 * Unlike a 32-bit seed folded into a general-purpose generator, the whole 32-byte seed (an X25519
 * secret or a self-mask seed) goes through HKDF, so masks inherit its 128-bit AES security.
 */
import { createCipheriv } from 'node:crypto';
import { ADDER_CHUNK_WORDS, createAdder } from './_add32.js';
import { checkBytes, checkInt, checkString, encodeContext } from './check.js';
import { hkdfSha256 } from './kdf.js';

/** Words of keystream produced per AES call (128 KiB). */
export const CHUNK_WORDS = ADDER_CHUNK_WORDS;
/** Largest mask length in words: 2^32 − 1 (2^30 AES blocks per key, far below the 2^64 limit). */
export const MAX_MASK_LENGTH = 0xffffffff;

/** Which mask a PRG stream is: a pairwise mask between two silos, or a silo's self mask. */
export type MaskLabel =
  | {
      readonly kind: 'pair';
      readonly session: string;
      readonly round: number;
      /** The two silo ids (any order: the key is the same for (a, b) and (b, a)). */
      readonly a: number;
      readonly b: number;
      /** Index of the masked vector within the round (0 for the update vector). */
      readonly vector: number;
    }
  | {
      readonly kind: 'self';
      readonly session: string;
      readonly round: number;
      /** The silo whose self mask this is. */
      readonly owner: number;
      readonly vector: number;
    };

const ZEROS = new Uint8Array(4 * CHUNK_WORDS);
const ADDER = createAdder();

/** Which add loop masks use here: 'wasm-simd' (i32x4) or the 'js' fallback. */
export const MASK_ADDER_KIND: 'wasm-simd' | 'js' = ADDER.kind;

function checkLabel(label: MaskLabel): void {
  if (typeof label !== 'object' || label === null) throw new TypeError('label: expected an object');
  checkString('label.session', label.session, 255);
  checkInt('label.round', label.round, 0, 0xffffffff);
  checkInt('label.vector', label.vector, 0, 0xffffffff);
  if (label.kind === 'pair') {
    checkInt('label.a', label.a, 0, 0xffffffff);
    checkInt('label.b', label.b, 0, 0xffffffff);
    if (label.a === label.b) throw new RangeError('label.b: a pairwise mask needs two different silos');
  } else if (label.kind === 'self') {
    checkInt('label.owner', label.owner, 0, 0xffffffff);
  } else {
    throw new TypeError("label.kind: expected 'pair' or 'self'");
  }
}

/**
 * The AES-128 key and initial counter block of a mask stream:
 * HKDF-SHA256(ikm = seed, salt = ∅, info = ⟨"fedscore/prg/v1", session, round, kind, ids, vector⟩)
 * → 32 bytes = key ‖ IV (RFC 5869). Pair ids are sorted so both silos derive the same stream.
 *
 * @param seed - 32 bytes (pairwise X25519 secret or self-mask seed); not modified.
 * @returns 32 fresh bytes (key ‖ IV) owned by the caller, who wipes them.
 * @throws TypeError / RangeError naming the bad field.
 */
export function maskStreamKey(seed: Uint8Array, label: MaskLabel): Uint8Array {
  checkBytes('seed', seed, 32);
  checkLabel(label);
  const ids =
    label.kind === 'pair' ? [Math.min(label.a, label.b), Math.max(label.a, label.b)] : [label.owner];
  const info = encodeContext([
    'fedscore/prg/v1',
    label.session,
    label.round,
    label.kind,
    ...ids,
    label.vector,
  ]);
  return hkdfSha256(seed, new Uint8Array(0), info, 32);
}

/**
 * acc ← acc + sign·PRG(seed, label) over Z_(2^32), element-wise, streaming the keystream in
 * chunks of {@link CHUNK_WORDS} words (no full-length temporary).
 *
 * @param acc - accumulator, modified in place (the caller owns it); its length is the mask length.
 * @param seed - 32-byte seed; not modified.
 * @param label - which mask (see {@link MaskLabel}).
 * @param sign - +1 to add the mask, −1 to subtract it.
 * @throws TypeError / RangeError naming the bad argument.
 */
export function applyMask(acc: Uint32Array, seed: Uint8Array, label: MaskLabel, sign: 1 | -1): void {
  const keyIv = maskStreamKey(seed, label);
  try {
    applyKeystream(acc, keyIv, sign);
  } finally {
    keyIv.fill(0);
  }
}

/**
 * acc ← acc + sign·AES-128-CTR(key, iv)(0^{4d}) read as little-endian uint32 words, d = acc.length
 * (NIST SP 800-38A §6.5, the 128-bit counter block incremented as a big-endian integer).
 *
 * @param keyIv - 16-byte AES key followed by the 16-byte initial counter block; not modified.
 * @throws TypeError / RangeError naming the bad argument.
 */
export function applyKeystream(acc: Uint32Array, keyIv: Uint8Array, sign: 1 | -1): void {
  if (!(acc instanceof Uint32Array)) throw new TypeError('acc: expected Uint32Array');
  checkBytes('keyIv', keyIv, 32);
  if (sign !== 1 && sign !== -1) throw new RangeError('sign: expected 1 or -1');
  const cipher = createCipheriv('aes-128-ctr', keyIv.subarray(0, 16), keyIv.subarray(16, 32));
  const d = acc.length;
  try {
    for (let off = 0; off < d; off += CHUNK_WORDS) {
      const n = Math.min(CHUNK_WORDS, d - off);
      const out = cipher.update(n === CHUNK_WORDS ? ZEROS : ZEROS.subarray(0, 4 * n));
      ADDER.apply(acc, off, out, n, sign);
      out.fill(0);
    }
  } finally {
    ADDER.wipe();
  }
  cipher.final();
}

/** One mask of {@link maskVector}: its seed (32 bytes, not modified), its label and its sign. */
export interface MaskTerm {
  readonly seed: Uint8Array;
  readonly label: MaskLabel;
  readonly sign: 1 | -1;
}

/**
 * input + Σ sign·PRG(seed, label) over Z_(2^32): the same words as copying `input` and calling
 * {@link applyMask} for each term, computed chunk by chunk — each chunk of the result is loaded
 * once, receives every term's keystream for it, and is stored once, instead of passing over the
 * whole vector once per mask (a client's step has |U_2| masks over 4 MB at d = 10^6). Every
 * term's AES-CTR stream stays open while the chunks go by.
 *
 * @param input - not modified.
 * @param out - where to write the result (default: a fresh array); may be `input` itself.
 * @returns `out`.
 * @throws TypeError / RangeError naming the bad argument.
 */
export function maskVector(
  input: Uint32Array,
  terms: readonly MaskTerm[],
  out: Uint32Array = new Uint32Array(input.length),
): Uint32Array {
  if (!(input instanceof Uint32Array)) throw new TypeError('input: expected Uint32Array');
  if (!(out instanceof Uint32Array) || out.length !== input.length)
    throw new RangeError(`out: expected a Uint32Array of length ${input.length}`);
  if (!Array.isArray(terms)) throw new TypeError('terms: expected an array');
  terms.forEach((t, i) => {
    if (t?.sign !== 1 && t?.sign !== -1) throw new RangeError(`terms[${i}].sign: expected 1 or -1`);
  });
  const keys = terms.map((t) => maskStreamKey(t.seed, t.label));
  try {
    const ciphers = keys.map((k) => createCipheriv('aes-128-ctr', k.subarray(0, 16), k.subarray(16, 32)));
    const d = input.length;
    for (let off = 0; off < d; off += CHUNK_WORDS) {
      const n = Math.min(CHUNK_WORDS, d - off);
      const zeros = n === CHUNK_WORDS ? ZEROS : ZEROS.subarray(0, 4 * n);
      ADDER.load(input, off, n);
      for (let i = 0; i < ciphers.length; i++) {
        const ks = ciphers[i]!.update(zeros);
        ADDER.add(ks, n, terms[i]!.sign);
        ks.fill(0);
      }
      ADDER.store(out, off, n);
    }
    for (const c of ciphers) c.final();
  } finally {
    ADDER.wipe();
    for (const k of keys) k.fill(0);
  }
  return out;
}

/**
 * The first `length` words of PRG(seed, label), as a fresh array (for tests and known-answer
 * vectors; the protocol uses {@link applyMask}).
 *
 * @throws TypeError / RangeError naming the bad argument.
 */
export function expandMask(seed: Uint8Array, label: MaskLabel, length: number): Uint32Array {
  checkInt('length', length, 0, MAX_MASK_LENGTH);
  const out = new Uint32Array(length);
  applyMask(out, seed, label, 1);
  return out;
}
