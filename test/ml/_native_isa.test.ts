/**
 * The instruction-set choice of the native kernels (native/isa.c, FEDSCORE_NATIVE_ISA) and the
 * narrow products (native/narrow.c): an output layer's product [m×k]·[k×n], n ≤ 16, is one fused
 * multiply-add chain per entry with every instruction set, the same bits as a float32 chain
 * computed here exactly (so the same on every x86-64 processor, whichever kernel OpenBLAS picks).
 * Runs when the addon is built (CI builds it).
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { loadBlasKernels, NATIVE_ISAS } from '../../src/ml/_blas_kernels.js';

const load = loadBlasKernels();

const f32 = new Float32Array(1);
const i32 = new Int32Array(f32.buffer);
/** The float32 next to x (itself a float32, not 0) away from or toward zero. */
function step(x: number, away: boolean): number {
  f32[0] = x;
  i32[0]! += away ? 1 : -1;
  return f32[0]!;
}

/**
 * fmaf(a, b, c) of float32 a, b, c, rounded once: a·b is exact in a double, a·b + c is s + e
 * exactly (Knuth's TwoSum), and s rounds to the float32 of s + e unless s is halfway between two
 * float32s, where e's sign decides.
 */
function fma32(a: number, b: number, c: number): number {
  const p = a * b;
  const s = p + c;
  const bb = s - p;
  const e = p - (s - bb) + (c - bb);
  const r = Math.fround(s);
  if (e === 0 || r === s) return r;
  const other = Math.abs(r) > Math.abs(s) ? step(r, false) : step(r, true);
  if (Math.abs(s - r) !== Math.abs(s - other)) return r;
  return e > 0 ? Math.max(r, other) : Math.min(r, other);
}

describe('fma32 (the reference)', () => {
  it('rounds once where a product and a sum would round twice, ties included', () => {
    // (1 + 2⁻¹²)² = 1 + 2⁻¹¹ + 2⁻²⁴: rounded first, the 2⁻²⁴ is lost.
    const a = 1 + 2 ** -12;
    expect(fma32(a, a, -(1 + 2 ** -11))).toBe(2 ** -24);
    expect(Math.fround(Math.fround(a * a) - (1 + 2 ** -11))).toBe(0);
    // 2³(1 + 2⁻²³) · 2³(1 − 2⁻²³) = 2⁶ − 2⁻⁴⁰, plus 2³⁰ + 2⁷: just below the tie between 2³⁰ + 2⁷ and
    // 2³⁰ + 2⁸, which the double sum rounds onto (and ties-to-even would then take 2³⁰ + 2⁸).
    const [x, y, c] = [8 * (1 + 2 ** -23), 8 * (1 - 2 ** -23), 2 ** 30 + 2 ** 7];
    expect(Math.fround(x * y + c)).toBe(2 ** 30 + 2 ** 8);
    expect(fma32(x, y, c)).toBe(2 ** 30 + 2 ** 7);
    expect(fma32(-x, y, -c)).toBe(-(2 ** 30 + 2 ** 7));
  });
});

describe.runIf(load.ok)('native instruction sets', () => {
  const addon = load.ok ? load.addon : undefined!;
  const best = addon.setIsa(0);
  const isas = [1, 2, 3].filter((isa) => isa <= best);
  afterEach(() => {
    addon.setIsa(0);
  });

  it('FEDSCORE_NATIVE_ISA caps the choice, and a bad or unsupported one is named', () => {
    for (const [name, isa] of Object.entries(NATIVE_ISAS)) {
      if (isa > best) {
        expect(() => loadBlasKernels({ FEDSCORE_NATIVE_ISA: name })).toThrow(
          new RangeError(`FEDSCORE_NATIVE_ISA: '${name}' is not supported by this processor`),
        );
        continue;
      }
      loadBlasKernels({ FEDSCORE_NATIVE_ISA: name });
      expect(addon.info().isa).toBe(isa === 0 ? best : isa);
    }
    for (const bad of ['sse', 'AVX2', 'toString', '2'])
      expect(() => loadBlasKernels({ FEDSCORE_NATIVE_ISA: bad })).toThrow(
        /^FEDSCORE_NATIVE_ISA: expected one of auto, scalar, avx2, avx512, got/,
      );
    expect(() => addon.setIsa(4)).toThrow(/^isa: expected 0 to 3$/);
  });

  it('a product of at most 16 columns is one FMA chain per entry, the same bits with every instruction set', () => {
    const value = fc.float({ min: -4, max: 4, noNaN: true, noDefaultInfinity: true });
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 37 }),
        fc.integer({ min: 1, max: 16 }),
        fc.integer({ min: 1, max: 400 }),
        fc.integer({ min: 1, max: 2 }),
        fc.array(value, { minLength: 64, maxLength: 64 }),
        (m, n, k, batch, pool) => {
          // Operands from a small pool of values, so that the fast-check shrinker stays useful.
          const a = Float32Array.from({ length: batch * m * k }, (_, i) => pool[(i * 7) % 64]!);
          const b = Float32Array.from({ length: batch * k * n }, (_, i) => pool[(i * 13 + 5) % 64]!);
          const want = new Float32Array(batch * m * n);
          for (let t = 0; t < batch; t++)
            for (let i = 0; i < m; i++)
              for (let j = 0; j < n; j++) {
                let acc = 0;
                for (let l = 0; l < k; l++)
                  acc = fma32(a[t * m * k + i * k + l]!, b[t * k * n + l * n + j]!, acc);
                want[t * m * n + i * n + j] = acc;
              }
          for (const isa of isas) {
            addon.setIsa(isa);
            const c = new Float32Array(batch * m * n);
            addon.gemm(batch, 0, 0, m, n, k, a, m * k, b, k * n, c, m * n);
            expect(Array.from(c), `isa ${isa}`).toEqual(Array.from(want));
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});
