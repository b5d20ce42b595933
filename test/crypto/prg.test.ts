import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ADDER_CHUNK_WORDS, createAdder } from '../../crypto/_add32.js';
import {
  applyKeystream,
  applyMask,
  CHUNK_WORDS,
  expandMask,
  MASK_ADDER_KIND,
  type MaskLabel,
  maskStreamKey,
  maskVector,
} from '../../crypto/prg.js';
import { hex, loadVectors, toHex } from './_vectors.js';

interface PrgCase {
  seed: string;
  label: MaskLabel;
  keyIv: string;
  length: number;
  first8: number[];
  around65536: Record<string, number>;
  last: number;
  sha256: string;
}
const kat = loadVectors<{ cases: PrgCase[] }>('crypto-prg/prg-kat.json').cases;
const nist = loadVectors<{ aesCtr: { key: string; counter: string; plaintext: string; ciphertext: string } }>(
  'crypto-rfc/rfc-vectors.json',
).aesCtr;

const wordsLE = (w: Uint32Array) => Buffer.from(w.buffer, w.byteOffset, w.byteLength);

describe('crypto/prg', () => {
  it('the keystream is AES-128-CTR of NIST SP 800-38A F.5.1', () => {
    const ks = Buffer.from(hex(nist.plaintext)).map((b, i) => b ^ hex(nist.ciphertext)[i]!);
    const acc = new Uint32Array(16);
    applyKeystream(acc, new Uint8Array([...hex(nist.key), ...hex(nist.counter)]), 1);
    expect(toHex(wordsLE(acc))).toBe(Buffer.from(ks).toString('hex'));
  });

  it.each(kat.map((c, i) => [i, c] as const))('matches the independent known-answer vector %i', (_i, c) => {
    expect(CHUNK_WORDS).toBeLessThan(c.length); // the vector crosses a chunk boundary
    expect(toHex(maskStreamKey(hex(c.seed), c.label))).toBe(c.keyIv);
    const m = expandMask(hex(c.seed), c.label, c.length);
    expect(Array.from(m.subarray(0, 8))).toEqual(c.first8);
    for (const [i, w] of Object.entries(c.around65536)) expect(m[Number(i)]).toBe(w);
    expect(m[c.length - 1]).toBe(c.last);
    expect(createHash('sha256').update(wordsLE(m)).digest('hex')).toBe(c.sha256);
  });

  it('pair masks are symmetric in the pair and differ across rounds, sessions, vectors and kinds', () => {
    const seed = new Uint8Array(32).fill(4);
    const base = { session: 's', round: 1, vector: 0 };
    const k = (l: MaskLabel) => toHex(maskStreamKey(seed, l));
    const ab = k({ kind: 'pair', ...base, a: 1, b: 2 });
    expect(k({ kind: 'pair', ...base, a: 2, b: 1 })).toBe(ab);
    const others = [
      k({ kind: 'pair', ...base, a: 1, b: 3 }),
      k({ kind: 'pair', ...base, round: 2, a: 1, b: 2 }),
      k({ kind: 'pair', ...base, session: 't', a: 1, b: 2 }),
      k({ kind: 'pair', ...base, vector: 1, a: 1, b: 2 }),
      k({ kind: 'self', ...base, owner: 1 }),
    ];
    expect(new Set([ab, ...others]).size).toBe(6);
  });

  it('adding then subtracting a mask restores the accumulator (mod 2^32)', () => {
    const seed = new Uint8Array(32).fill(8);
    const label: MaskLabel = { kind: 'self', session: 's', round: 0, owner: 0, vector: 0 };
    const d = CHUNK_WORDS * 2 + 17;
    const acc = Uint32Array.from({ length: d }, (_, i) => (i * 2654435761) >>> 0);
    const before = acc.slice();
    applyMask(acc, seed, label, 1);
    expect(acc).not.toEqual(before);
    const m = expandMask(seed, label, d);
    for (const i of [0, 1, CHUNK_WORDS, d - 1]) expect(acc[i]).toBe((before[i]! + m[i]!) >>> 0);
    applyMask(acc, seed, label, -1);
    expect(acc).toEqual(before);
  });

  it('checks its inputs', () => {
    const seed = new Uint8Array(32);
    const l: MaskLabel = { kind: 'pair', session: 's', round: 0, a: 1, b: 1, vector: 0 };
    expect(() => maskStreamKey(seed, l)).toThrow(/^label\.b/);
    expect(() => maskStreamKey(new Uint8Array(16), { ...l, b: 2 })).toThrow(/^seed/);
    expect(() => applyMask(new Uint32Array(1), seed, { ...l, b: 2 }, 2 as 1)).toThrow(/^sign/);
    expect(() => applyMask([] as unknown as Uint32Array, seed, { ...l, b: 2 }, 1)).toThrow(/^acc/);
    expect(() => maskStreamKey(seed, { ...l, b: 2, round: 1.5 })).toThrow(/^label\.round/);
  });
});

describe('crypto/prg maskVector', () => {
  it('gives the words of a copy with applyMask for each term in turn, at every length around a chunk', () => {
    const seeds = [1, 2, 3].map((v) => new Uint8Array(32).fill(v));
    const labels: MaskLabel[] = [
      { kind: 'self', session: 's', round: 1, owner: 4, vector: 0 },
      { kind: 'pair', session: 's', round: 1, a: 4, b: 7, vector: 0 },
      { kind: 'pair', session: 's', round: 1, a: 2, b: 4, vector: 0 },
    ];
    const signs = [1, 1, -1] as const;
    for (const d of [0, 1, 5, CHUNK_WORDS - 1, CHUNK_WORDS, CHUNK_WORDS + 3, 2 * CHUNK_WORDS + 17]) {
      const input = Uint32Array.from({ length: d }, (_, i) => Math.imul(i + 3, 2246822519) >>> 0);
      const expected = input.slice();
      for (const [k, seed] of seeds.entries()) applyMask(expected, seed, labels[k]!, signs[k]!);
      const terms = seeds.map((seed, k) => ({ seed, label: labels[k]!, sign: signs[k]! }));
      const before = input.slice();
      expect(maskVector(input, terms)).toEqual(expected);
      expect(input).toEqual(before);
      const inPlace = input.slice();
      expect(maskVector(inPlace, terms, inPlace)).toBe(inPlace);
      expect(inPlace).toEqual(expected);
      expect(maskVector(input, [])).toEqual(input);
    }
    for (const s of [1, 2, 3]) expect(seeds[s - 1]).toEqual(new Uint8Array(32).fill(s)); // seeds untouched
  });

  it('checks its inputs', () => {
    const seed = new Uint8Array(32);
    const label: MaskLabel = { kind: 'self', session: 's', round: 1, owner: 0, vector: 0 };
    expect(() => maskVector(new Uint32Array(4), [{ seed, label, sign: 2 as 1 }])).toThrow(
      /^terms\[0\]\.sign/,
    );
    expect(() => maskVector(new Uint32Array(4), [], new Uint32Array(3))).toThrow(/^out:/);
    expect(() => maskVector(new Uint32Array(4), [{ seed: new Uint8Array(31), label, sign: 1 }])).toThrow(
      /^seed/,
    );
  });
});

describe('crypto/_add32 (the mask add loop)', () => {
  it("load, add and store over the adder's own accumulator, on both adders", () => {
    for (const adder of [createAdder(), createAdder(true)]) {
      const src = Uint32Array.from({ length: 40 }, (_, i) => i * 1000003);
      const ks = Uint32Array.from({ length: 33 }, (_, i) => 0xfffffff0 + i);
      const dst = new Uint32Array(40);
      adder.load(src, 3, 33);
      adder.add(new Uint8Array(ks.buffer), 33, 1);
      adder.add(new Uint8Array(ks.buffer), 33, -1);
      adder.add(new Uint8Array(ks.buffer), 33, 1);
      adder.store(dst, 7, 33);
      for (let i = 0; i < 33; i++) expect(dst[7 + i]).toBe((src[3 + i]! + ks[i]!) >>> 0);
      expect(dst[6]).toBe(0);
      adder.wipe();
    }
  });

  it('the WebAssembly SIMD adder and the JavaScript fallback agree, for + and −, at any offset and length', () => {
    const wasm = createAdder();
    const js = createAdder(true);
    expect(js.kind).toBe('js');
    expect(MASK_ADDER_KIND).toBe(wasm.kind);
    const rnd = (n: number, s: number) =>
      Uint32Array.from({ length: n }, (_, i) => Math.imul(i + 1, 2654435761 + s) >>> 0);
    for (const n of [0, 1, 3, 4, 5, 17, 1000, ADDER_CHUNK_WORDS]) {
      for (const sign of [1, -1] as const) {
        const ks = rnd(n + 1, 7);
        const ksBytes = new Uint8Array(ks.buffer, 4, 4 * n); // offset view, as cipher output may be
        const a = rnd(n + 9, 3);
        const b = a.slice();
        wasm.apply(a, 5, ksBytes, n, sign);
        js.apply(b, 5, ksBytes, n, sign);
        expect(a).toEqual(b);
        for (const i of [0, 1, 2, 3, 4, n + 5, n + 6, n + 7, n + 8])
          if (i < 5 || i >= n + 5) expect(a[i]).toBe(rnd(n + 9, 3)[i]);
        if (n > 0)
          expect(a[5]).toBe(
            sign === 1 ? (rnd(n + 9, 3)[5]! + ks[1]!) >>> 0 : (rnd(n + 9, 3)[5]! - ks[1]!) >>> 0,
          );
      }
    }
    wasm.wipe();
  });
});
