/**
 * Element-wise addition / subtraction of keystream words into a uint32 accumulator, mod 2^32
 * (internal to crypto/prg.ts; never re-exported).
 *
 * The hot loop of mask generation. A plain JavaScript loop runs at about 2 GB/s, below
 * node:crypto's AES-128-CTR (3–4 GB/s with AES-NI), so it would dominate. This file carries a
 * 130-byte WebAssembly module (hand-assembled below, SIMD i32x4.add / i32x4.sub over 16-byte
 * lanes) and falls back to the JavaScript loop where WebAssembly SIMD is unavailable. Both paths
 * give identical results (test/crypto/prg.test.ts compares them).
 *
 * The module owns 4 pages (256 KiB): the accumulator chunk at offset 0 and the keystream chunk at
 * offset 128 KiB, so a chunk is at most 32768 words. Its memory holds mask material between calls
 * of one `apply`; {@link Adder.wipe} zeroes it.
 */

/** Largest chunk, in words, the adder accepts. */
export const ADDER_CHUNK_WORDS = 1 << 15;

/**
 * acc[off .. off + n) ± ks[0 .. n) mod 2^32 (`apply`); or, for several keystreams over one chunk,
 * `load` the chunk into the adder's own accumulator, `add` each keystream, `store` the result.
 */
export interface Adder {
  readonly kind: 'wasm-simd' | 'js';
  apply(acc: Uint32Array, off: number, ks: Uint8Array, n: number, sign: 1 | -1): void;
  /** The accumulator ← src[off .. off + n) (n ≤ ADDER_CHUNK_WORDS). */
  load(src: Uint32Array, off: number, n: number): void;
  /** The accumulator's first n words ± ks[0 .. n). */
  add(ks: Uint8Array, n: number, sign: 1 | -1): void;
  /** dst[off .. off + n) ← the accumulator's first n words. */
  store(dst: Uint32Array, off: number, n: number): void;
  wipe(): void;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** Function body: loop { store(a, load(a) op load(k)); a += 16; k += 16; n -= 16 } while n ≠ 0. */
function body(op: number): number[] {
  return [
    0x00, // no locals
    0x03,
    0x40, // loop (empty block type)
    0x20,
    0x00,
    0x20,
    0x00,
    0xfd,
    0x00,
    0x04,
    0x00, // local.get a; local.get a; v128.load
    0x20,
    0x01,
    0xfd,
    0x00,
    0x04,
    0x00, // local.get k; v128.load
    0xfd,
    op,
    0x01, // i32x4.add (0xae) or i32x4.sub (0xb1), LEB128
    0xfd,
    0x0b,
    0x04,
    0x00, // v128.store
    0x20,
    0x00,
    0x41,
    0x10,
    0x6a,
    0x21,
    0x00, // a += 16
    0x20,
    0x01,
    0x41,
    0x10,
    0x6a,
    0x21,
    0x01, // k += 16
    0x20,
    0x02,
    0x41,
    0x10,
    0x6b,
    0x22,
    0x02, // n -= 16 (tee)
    0x0d,
    0x00, // br_if 0
    0x0b, // end loop
    0x0b, // end function
  ];
}

function moduleBytes(): Uint8Array {
  const add = body(0xae);
  const sub = body(0xb1);
  const code = [0x02, add.length, ...add, sub.length, ...sub];
  // biome-ignore format: one wasm section per line
  return new Uint8Array([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // magic, version 1
    0x01, 0x07, 0x01, 0x60, 0x03, 0x7f, 0x7f, 0x7f, 0x00, // type: (i32, i32, i32) → ()
    0x03, 0x03, 0x02, 0x00, 0x00, // two functions of type 0
    0x05, 0x03, 0x01, 0x00, 0x04, // memory: min 4 pages
    0x07, 0x13, 0x03, 0x03, 0x61, 0x64, 0x64, 0x00, 0x00, 0x03, 0x73, 0x75, 0x62, 0x00, 0x01, 0x03, 0x6d, 0x65, 0x6d, 0x02, 0x00, // exports add, sub, mem
    0x0a, code.length, ...code,
  ]);
}

function jsAdder(): Adder {
  const A = new Uint32Array(ADDER_CHUNK_WORDS);
  const words = (ks: Uint8Array, n: number): Uint32Array => {
    if (LITTLE_ENDIAN && ks.byteOffset % 4 === 0) return new Uint32Array(ks.buffer, ks.byteOffset, n);
    const w = new Uint32Array(n);
    const dv = new DataView(ks.buffer, ks.byteOffset, 4 * n);
    for (let i = 0; i < n; i++) w[i] = dv.getUint32(4 * i, true);
    return w;
  };
  const addTo = (acc: Uint32Array, off: number, w: Uint32Array, n: number, sign: 1 | -1) => {
    if (sign === 1) for (let j = 0; j < n; j++) acc[off + j]! += w[j]!;
    else for (let j = 0; j < n; j++) acc[off + j]! -= w[j]!;
  };
  return {
    kind: 'js',
    apply: (acc, off, ks, n, sign) => addTo(acc, off, words(ks, n), n, sign),
    load: (src, off, n) => A.set(src.subarray(off, off + n)),
    add: (ks, n, sign) => addTo(A, 0, words(ks, n), n, sign),
    store: (dst, off, n) => dst.set(A.subarray(0, n), off),
    wipe: () => A.fill(0),
  };
}

/** The part of the WebAssembly JS API used here (tsconfig's lib has no DOM typings). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object) => { exports: Record<string, unknown> };
}

function wasmAdder(): Adder | null {
  const wasm = (globalThis as { WebAssembly?: WasmApi }).WebAssembly;
  if (!LITTLE_ENDIAN || wasm === undefined) return null; // wasm memory is little-endian
  try {
    const instance = new wasm.Instance(new wasm.Module(moduleBytes()));
    const { add, sub, mem } = instance.exports as {
      add: (a: number, k: number, n: number) => void;
      sub: (a: number, k: number, n: number) => void;
      mem: { buffer: ArrayBuffer };
    };
    const M = new Uint8Array(mem.buffer);
    const K = 4 * ADDER_CHUNK_WORDS;
    return {
      kind: 'wasm-simd',
      apply(acc, off, ks, n, sign) {
        if (n === 0) return;
        const bytes = 4 * n;
        const view = new Uint8Array(acc.buffer, acc.byteOffset + 4 * off, bytes);
        M.set(ks.subarray(0, bytes), K);
        M.set(view, 0);
        (sign === 1 ? add : sub)(0, K, (bytes + 15) & ~15); // padding lanes are never copied back
        view.set(M.subarray(0, bytes));
      },
      load(src, off, n) {
        M.set(new Uint8Array(src.buffer, src.byteOffset + 4 * off, 4 * n), 0);
      },
      add(ks, n, sign) {
        if (n === 0) return;
        const bytes = 4 * n;
        M.set(ks.subarray(0, bytes), K);
        (sign === 1 ? add : sub)(0, K, (bytes + 15) & ~15);
      },
      store(dst, off, n) {
        new Uint8Array(dst.buffer, dst.byteOffset + 4 * off, 4 * n).set(M.subarray(0, 4 * n));
      },
      wipe() {
        M.fill(0);
      },
    };
  } catch {
    return null;
  }
}

/** The fastest adder available here (`forceJs` for tests of the fallback). */
export function createAdder(forceJs = false): Adder {
  return (forceJs ? null : wasmAdder()) ?? jsAdder();
}
