/*
 * fedscore's native kernels, products with few columns (see fedscore_kernels.c): C[m×n] = A·B,
 * row-major, neither transposed, n ≤ NARROW_MAX — a classifier's output layer. Each entry is one
 * fused multiply-add chain over k in order, from 0:
 *
 *   c_ij = fma(a_i,k−1, b_k−1,j, … fma(a_i1, b_1j, fma(a_i0, b_0j, 0)))
 *
 * in AVX-512, AVX2 + FMA or portable C (fmaf rounds once, as the vector instructions do), chosen
 * by isa.c: the same bits on every x86-64 processor, and the same bits as the coalition kernel's
 * logits (coalition_kernels.c), so the combined coalition evaluation gives the same table with the
 * native kernel and with the tfjs path (test/ml/coalition.test.ts).
 *
 * Why not OpenBLAS's sgemm, as every other product: its kernel depends on the processor
 * (DYNAMIC_ARCH). For [N×H]·[H×10] the SkylakeX kernel computes each entry as the chain above
 * (for H up to 320), while the Haswell and Zen kernels, picked on processors without AVX-512,
 * sum the rows after the last multiple of 12 in another order (issue 26: the kernel and the tfjs
 * path then disagreed on those rows' logits). A chain is as accurate as sgemm's blocked sums
 * (Higham §3.1: both within γ_k·Σ|a_il·b_lj| of the exact product).
 */
#include <immintrin.h>

#include "_fedscore.h"

/* Four rows at a time, one 16-lane accumulator per row (lanes ≥ n are masked off). */
static __attribute__((target("avx512f,fma"))) void narrow512(int64_t m, int64_t n, int64_t k, const float *a,
                                                               const float *b, float *c) {
  const __mmask16 mask = (__mmask16)((1u << n) - 1);
  int64_t i = 0;
  for (; i + 4 <= m; i += 4) {
    __m512 c0 = _mm512_setzero_ps(), c1 = c0, c2 = c0, c3 = c0;
    const float *a0 = a + i * k, *a1 = a0 + k, *a2 = a1 + k, *a3 = a2 + k;
    for (int64_t l = 0; l < k; l++) {
      const __m512 bl = _mm512_maskz_loadu_ps(mask, b + l * n);
      c0 = _mm512_fmadd_ps(_mm512_set1_ps(a0[l]), bl, c0);
      c1 = _mm512_fmadd_ps(_mm512_set1_ps(a1[l]), bl, c1);
      c2 = _mm512_fmadd_ps(_mm512_set1_ps(a2[l]), bl, c2);
      c3 = _mm512_fmadd_ps(_mm512_set1_ps(a3[l]), bl, c3);
    }
    _mm512_mask_storeu_ps(c + i * n, mask, c0);
    _mm512_mask_storeu_ps(c + (i + 1) * n, mask, c1);
    _mm512_mask_storeu_ps(c + (i + 2) * n, mask, c2);
    _mm512_mask_storeu_ps(c + (i + 3) * n, mask, c3);
  }
  for (; i < m; i++) {
    __m512 c0 = _mm512_setzero_ps();
    const float *a0 = a + i * k;
    for (int64_t l = 0; l < k; l++)
      c0 = _mm512_fmadd_ps(_mm512_set1_ps(a0[l]), _mm512_maskz_loadu_ps(mask, b + l * n), c0);
    _mm512_mask_storeu_ps(c + i * n, mask, c0);
  }
}

/* Two rows at a time, two 8-lane halves per row. */
static __attribute__((target("avx2,fma"))) void narrow256(int64_t m, int64_t n, int64_t k, const float *a,
                                                            const float *b, float *c) {
  int32_t lanes[16];
  for (int j = 0; j < 16; j++) lanes[j] = j < n ? -1 : 0;
  const __m256i lo = _mm256_loadu_si256((const __m256i *)lanes), hi = _mm256_loadu_si256((const __m256i *)(lanes + 8));
  int64_t i = 0;
  for (; i + 2 <= m; i += 2) {
    __m256 c0 = _mm256_setzero_ps(), c1 = c0, d0 = c0, d1 = c0;
    const float *a0 = a + i * k, *a1 = a0 + k;
    for (int64_t l = 0; l < k; l++) {
      const __m256 bl = _mm256_maskload_ps(b + l * n, lo), bh = _mm256_maskload_ps(b + l * n + 8, hi);
      const __m256 x0 = _mm256_set1_ps(a0[l]), x1 = _mm256_set1_ps(a1[l]);
      c0 = _mm256_fmadd_ps(x0, bl, c0);
      d0 = _mm256_fmadd_ps(x0, bh, d0);
      c1 = _mm256_fmadd_ps(x1, bl, c1);
      d1 = _mm256_fmadd_ps(x1, bh, d1);
    }
    _mm256_maskstore_ps(c + i * n, lo, c0);
    _mm256_maskstore_ps(c + i * n + 8, hi, d0);
    _mm256_maskstore_ps(c + (i + 1) * n, lo, c1);
    _mm256_maskstore_ps(c + (i + 1) * n + 8, hi, d1);
  }
  for (; i < m; i++) {
    __m256 c0 = _mm256_setzero_ps(), d0 = c0;
    const float *a0 = a + i * k;
    for (int64_t l = 0; l < k; l++) {
      const __m256 x0 = _mm256_set1_ps(a0[l]);
      c0 = _mm256_fmadd_ps(x0, _mm256_maskload_ps(b + l * n, lo), c0);
      d0 = _mm256_fmadd_ps(x0, _mm256_maskload_ps(b + l * n + 8, hi), d0);
    }
    _mm256_maskstore_ps(c + i * n, lo, c0);
    _mm256_maskstore_ps(c + i * n + 8, hi, d0);
  }
}

static void narrow_scalar(int64_t m, int64_t n, int64_t k, const float *a, const float *b, float *c) {
  float acc[NARROW_MAX];
  for (int64_t i = 0; i < m; i++) {
    const float *ai = a + i * k;
    for (int64_t j = 0; j < n; j++) acc[j] = 0.0f;
    for (int64_t l = 0; l < k; l++)
      for (int64_t j = 0; j < n; j++) acc[j] = fmaf(ai[l], b[l * n + j], acc[j]);
    for (int64_t j = 0; j < n; j++) c[i * n + j] = acc[j];
  }
}

void narrow_product(int64_t m, int64_t n, int64_t k, const float *a, const float *b, float *c) {
  const int isa = pick_isa(ISA_AUTO);
  if (isa == ISA_AVX512)
    narrow512(m, n, k, a, b, c);
  else if (isa == ISA_AVX2)
    narrow256(m, n, k, a, b, c);
  else
    narrow_scalar(m, n, k, a, b, c);
}
