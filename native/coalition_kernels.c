/*
 * fedscore's native kernels, the vector loops of the coalition evaluation (coalitions.c drives
 * them and documents the method; _coalitions.h declares what the two files share): the hidden
 * layer relu(P₀ + s·U), the output layer's product as one fused multiply-add chain per logit in
 * AVX-512, AVX2 and portable C (same bits), the two fused for the common case, and the arg-max
 * counts and loss of a row block. Also coalitionPanels, which lays P₀ and the Qᵢ out in panels.
 */
#include <immintrin.h>

#include "_coalitions.h"

static inline float relu_f(float v) { return v > 0.0f || v != v ? v : 0.0f; }

/* h = relu(p0 + s·(base + q)) over len floats, storing base + q (_coalitions.h lists the variants). */
__attribute__((target_clones("avx512f", "avx2", "default"))) void coal_hidden_sum(
    int64_t len, const float *restrict p0, const float *restrict base, const float *restrict q, float *restrict store,
    float s, float *restrict h) {
  for (int64_t i = 0; i < len; i++) {
    const float u = base[i] + q[i];
    store[i] = u;
    const float t = s * u;
    h[i] = relu_f(p0[i] + t);
  }
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void coal_hidden_sum_nostore(
    int64_t len, const float *restrict p0, const float *restrict base, const float *restrict q, float s,
    float *restrict h) {
  for (int64_t i = 0; i < len; i++) {
    const float u = base[i] + q[i];
    const float t = s * u;
    h[i] = relu_f(p0[i] + t);
  }
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void coal_hidden_one(
    int64_t len, const float *restrict p0, const float *restrict q, float s, float *restrict h) {
  for (int64_t i = 0; i < len; i++) {
    const float t = s * q[i];
    h[i] = relu_f(p0[i] + t);
  }
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void coal_hidden_none(int64_t len,
                                                                                      const float *restrict p0,
                                                                                      float *restrict h) {
  for (int64_t i = 0; i < len; i++) h[i] = relu_f(p0[i]);
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void coal_add_into(int64_t len,
                                                                                   const float *restrict x,
                                                                                   const float *restrict y,
                                                                                   float *restrict out) {
  for (int64_t i = 0; i < len; i++) out[i] = x[i] + y[i];
}

/*
 * z[c·BLOCK + r] = Σ_k h[r,k]·w[k·C + c] for the block's 32 rows and classes c0 … c0+G−1: one
 * fused multiply-add chain per logit, k in order, from 0. h is two panels [k][16 rows].
 */
#define PRODUCT_512(G)                                                                                     \
  static __attribute__((target("avx512f,fma"))) void product512_##G(const float *h, const float *w,       \
                                                                      int64_t H, int64_t C, int64_t c0,     \
                                                                      float *z) {                           \
    __m512 a0[G], a1[G];                                                                                   \
    for (int g = 0; g < G; g++) a0[g] = a1[g] = _mm512_setzero_ps();                                       \
    const float *h1 = h + PANEL * H;                                                                       \
    for (int64_t k = 0; k < H; k++) {                                                                      \
      const __m512 x0 = _mm512_loadu_ps(h + k * PANEL), x1 = _mm512_loadu_ps(h1 + k * PANEL);              \
      const float *wk = w + k * C + c0;                                                                    \
      for (int g = 0; g < G; g++) {                                                                        \
        const __m512 b = _mm512_set1_ps(wk[g]);                                                            \
        a0[g] = _mm512_fmadd_ps(x0, b, a0[g]);                                                             \
        a1[g] = _mm512_fmadd_ps(x1, b, a1[g]);                                                             \
      }                                                                                                    \
    }                                                                                                      \
    for (int g = 0; g < G; g++) {                                                                          \
      _mm512_storeu_ps(z + (c0 + g) * BLOCK, a0[g]);                                                       \
      _mm512_storeu_ps(z + (c0 + g) * BLOCK + PANEL, a1[g]);                                               \
    }                                                                                                      \
  }
PRODUCT_512(1)
PRODUCT_512(2)
PRODUCT_512(3)
PRODUCT_512(4)
PRODUCT_512(5)
PRODUCT_512(6)
PRODUCT_512(7)
PRODUCT_512(8)
PRODUCT_512(9)
PRODUCT_512(10)
PRODUCT_512(11)
PRODUCT_512(12)
typedef void (*Product)(const float *, const float *, int64_t, int64_t, int64_t, float *);
static const Product product512[] = {NULL,           product512_1,  product512_2, product512_3, product512_4,
                                     product512_5,   product512_6,  product512_7, product512_8, product512_9,
                                     product512_10,  product512_11, product512_12};

/*
 * The common case fused (AVX-512, all classes in one group, |S| ≥ 2): u = base + q (stored when
 * `store`), h = relu(p0 + s·u) and the product, one hidden unit at a time, so that h never
 * leaves the registers. Same operations, in the same order, as hidden_sum + product512.
 * (max(0, z) returns z when z is NaN, as relu_f; a −0 it keeps does not change a chain from +0.)
 */
#define FUSED_512(G)                                                                                       \
  static __attribute__((target("avx512f,fma"))) void fused512_##G(                                        \
      const float *p0, const float *base, const float *q, float *store, float s, const float *w, int64_t H, \
      int64_t C, float *z) {                                                                               \
    __m512 a0[G], a1[G];                                                                                   \
    for (int g = 0; g < G; g++) a0[g] = a1[g] = _mm512_setzero_ps();                                       \
    const __m512 sv = _mm512_set1_ps(s), zero = _mm512_setzero_ps();                                       \
    const int64_t P = PANEL * H;                                                                           \
    for (int64_t k = 0; k < H; k++) {                                                                      \
      const int64_t o = k * PANEL;                                                                         \
      const __m512 u0 = _mm512_add_ps(_mm512_loadu_ps(base + o), _mm512_loadu_ps(q + o));                 \
      const __m512 u1 = _mm512_add_ps(_mm512_loadu_ps(base + P + o), _mm512_loadu_ps(q + P + o));         \
      if (store) {                                                                                         \
        _mm512_storeu_ps(store + o, u0);                                                                   \
        _mm512_storeu_ps(store + P + o, u1);                                                               \
      }                                                                                                    \
      const __m512 x0 = _mm512_max_ps(zero, _mm512_add_ps(_mm512_loadu_ps(p0 + o), _mm512_mul_ps(sv, u0)));     \
      const __m512 x1 = _mm512_max_ps(zero, _mm512_add_ps(_mm512_loadu_ps(p0 + P + o), _mm512_mul_ps(sv, u1))); \
      const float *wk = w + k * C;                                                                         \
      for (int g = 0; g < G; g++) {                                                                        \
        const __m512 b = _mm512_set1_ps(wk[g]);                                                            \
        a0[g] = _mm512_fmadd_ps(x0, b, a0[g]);                                                             \
        a1[g] = _mm512_fmadd_ps(x1, b, a1[g]);                                                             \
      }                                                                                                    \
    }                                                                                                      \
    for (int g = 0; g < G; g++) {                                                                          \
      _mm512_storeu_ps(z + g * BLOCK, a0[g]);                                                              \
      _mm512_storeu_ps(z + g * BLOCK + PANEL, a1[g]);                                                      \
    }                                                                                                      \
  }
FUSED_512(1)
FUSED_512(2)
FUSED_512(3)
FUSED_512(4)
FUSED_512(5)
FUSED_512(6)
FUSED_512(7)
FUSED_512(8)
FUSED_512(9)
FUSED_512(10)
FUSED_512(11)
FUSED_512(12)
typedef void (*Fused)(const float *, const float *, const float *, float *, float, const float *, int64_t, int64_t,
                      float *);
static const Fused fused512[] = {NULL,       fused512_1, fused512_2, fused512_3,  fused512_4,  fused512_5, fused512_6,
                                 fused512_7, fused512_8, fused512_9, fused512_10, fused512_11, fused512_12};

int coal_fused(const Job *job, const float *p0, const float *base, const float *q, float *store, float s,
               const float *w, float *z) {
  if (job->isa != ISA_AVX512 || job->classes > 12) return 0;
  fused512[job->classes](p0, base, q, store, s, w, job->hidden, job->classes, z);
  return 1;
}

/* The same with AVX2: one panel at a time as two 8-row halves, up to 6 classes. */
#define PRODUCT_256(G)                                                                                     \
  static __attribute__((target("avx2,fma"))) void product256_##G(const float *h, const float *w, int64_t H, \
                                                                   int64_t C, int64_t c0, float *z) {      \
    for (int p = 0; p < 2; p++) {                                                                          \
      const float *hp = h + p * PANEL * H;                                                                 \
      __m256 a0[G], a1[G];                                                                                 \
      for (int g = 0; g < G; g++) a0[g] = a1[g] = _mm256_setzero_ps();                                     \
      for (int64_t k = 0; k < H; k++) {                                                                    \
        const __m256 x0 = _mm256_loadu_ps(hp + k * PANEL), x1 = _mm256_loadu_ps(hp + k * PANEL + 8);       \
        const float *wk = w + k * C + c0;                                                                  \
        for (int g = 0; g < G; g++) {                                                                      \
          const __m256 b = _mm256_set1_ps(wk[g]);                                                          \
          a0[g] = _mm256_fmadd_ps(x0, b, a0[g]);                                                           \
          a1[g] = _mm256_fmadd_ps(x1, b, a1[g]);                                                           \
        }                                                                                                  \
      }                                                                                                    \
      for (int g = 0; g < G; g++) {                                                                        \
        _mm256_storeu_ps(z + (c0 + g) * BLOCK + p * PANEL, a0[g]);                                         \
        _mm256_storeu_ps(z + (c0 + g) * BLOCK + p * PANEL + 8, a1[g]);                                     \
      }                                                                                                    \
    }                                                                                                      \
  }
PRODUCT_256(1)
PRODUCT_256(2)
PRODUCT_256(3)
PRODUCT_256(4)
PRODUCT_256(5)
PRODUCT_256(6)
static const Product product256[] = {NULL,         product256_1, product256_2, product256_3,
                                     product256_4, product256_5, product256_6};

/* Portable: fmaf is the same single rounding as the vector instructions. */
static void product_scalar(const float *h, const float *w, int64_t H, int64_t C, int64_t c0, int64_t G, float *z) {
  for (int64_t r = 0; r < BLOCK; r++) {
    const float *hr = h + (r / PANEL) * PANEL * H + r % PANEL;
    for (int64_t c = c0; c < c0 + G; c++) {
      float acc = 0.0f;
      for (int64_t k = 0; k < H; k++) acc = fmaf(hr[k * PANEL], w[k * C + c], acc);
      z[c * BLOCK + r] = acc;
    }
  }
}

int coal_pick_isa(int asked) { return pick_isa(asked); }

/* z = h·w for all classes of the block, with the job's instruction set. */
void coal_product(const Job *job, const float *h, const float *w, float *z) {
  const int64_t H = job->hidden, C = job->classes;
  const int64_t group = job->isa == ISA_AVX512 ? 12 : job->isa == ISA_AVX2 ? 6 : C;
  for (int64_t c0 = 0; c0 < C; c0 += group) {
    const int64_t g = C - c0 < group ? C - c0 : group;
    if (job->isa == ISA_AVX512)
      product512[g](h, w, H, C, c0, z);
    else if (job->isa == ISA_AVX2)
      product256[g](h, w, H, C, c0, z);
    else
      product_scalar(h, w, H, C, c0, g, z);
  }
}

/* Logits z (+ bias) of `rows` rows starting at row r0 into the coalition's counts and loss. */
void coal_reduce_block(const Job *job, const float *z, const float *bias, int64_t r0, int64_t rows,
                       int32_t *counts, double *loss) {
  const int64_t C = job->classes;
  double sum = loss ? *loss : 0;
  for (int64_t r = 0; r < rows; r++) {
    float row[MAX_CLASSES];
    row[0] = z[r] + bias[0];
    for (int64_t c = 1; c < C; c++) row[c] = z[c * BLOCK + r] + bias[c];
    const int32_t t = job->labels[r0 + r];
    int64_t best = 0;
    double max = row[0];
    for (int64_t c = 1; c < C; c++)
      if (row[c] > max) {
        max = row[c];
        best = c;
      }
    if (best == t) counts[t]++;
    if (loss) {
      double e = 0;
      for (int64_t c = 0; c < C; c++) e += exp((double)row[c] - max);
      sum += max + log(e) - (double)row[t];
    }
  }
  if (loss) *loss = sum;
}

/*
 * reduce_block without the loss, 16 rows at a time: the arg-max as a running maximum with
 * strict > (ties to the lower class; a NaN never wins, as in the scalar loop), then per class
 * the rows whose arg-max is their label, counted from the label masks.
 */
__attribute__((target("avx512f"))) void coal_count_block512(const Job *job, const float *z, const float *bias,
                                                             int64_t r0, int64_t rows, int32_t *counts) {
  const int64_t C = job->classes;
  for (int64_t p = 0; p * PANEL < rows; p++) {
    __m512 max = _mm512_add_ps(_mm512_loadu_ps(z + p * PANEL), _mm512_set1_ps(bias[0]));
    __m512i best = _mm512_setzero_si512();
    for (int64_t c = 1; c < C; c++) {
      const __m512 v = _mm512_add_ps(_mm512_loadu_ps(z + c * BLOCK + p * PANEL), _mm512_set1_ps(bias[c]));
      const __mmask16 gt = _mm512_cmp_ps_mask(v, max, _CMP_GT_OQ);
      max = _mm512_mask_mov_ps(max, gt, v);
      best = _mm512_mask_mov_epi32(best, gt, _mm512_set1_epi32((int)c));
    }
    const int64_t lanes = rows - p * PANEL < PANEL ? rows - p * PANEL : PANEL;
    const __mmask16 valid = (__mmask16)(lanes == PANEL ? 0xffff : (1u << lanes) - 1);
    const __m512i labels = _mm512_maskz_loadu_epi32(valid, job->labels + r0 + p * PANEL);
    const __mmask16 hit = _mm512_mask_cmpeq_epi32_mask(valid, best, labels);
    if (!hit) continue;
    const uint16_t *lm = job->label_masks + ((r0 / PANEL) + p) * C;
    for (int64_t t = 0; t < C; t++) counts[t] += __builtin_popcount((unsigned)(hit & lm[t]));
  }
}

/*
 * coalitionPanels(rows, hidden, z, bias, scale, panels, offset): scale·(z + bias) of a row-major
 * rows × hidden product z, in float32 as tfjs's add and mul compute it (no product when scale
 * is 1), into panels[offset …] in the layout of evalCoalitions (16-row panels, unit-major).
 */
napi_value coalition_panels(napi_env env, napi_callback_info info) {
  ARGS(7)
  int64_t rows, hidden, offset;
  double scale;
  float *z, *bias, *panels;
  if (!dim(env, argv[0], "rows", &rows) || !dim(env, argv[1], "hidden", &hidden) ||
      !num(env, argv[4], "scale", &scale) || !dim(env, argv[6], "offset", &offset) ||
      !f32(env, argv[2], "z", (size_t)(rows * hidden), &z) || !f32(env, argv[3], "bias", (size_t)hidden, &bias) ||
      !f32(env, argv[5], "panels", (size_t)(offset + (rows + PANEL - 1) / PANEL * PANEL * hidden), &panels))
    return NULL;
  const float s = (float)scale;
  for (int64_t r = 0; r < rows; r++) {
    float *o = panels + offset + (r / PANEL) * PANEL * hidden + r % PANEL;
    const float *zr = z + r * hidden;
    for (int64_t k = 0; k < hidden; k++) {
      const float v = zr[k] + bias[k];
      o[k * PANEL] = scale == 1.0 ? v : v * s;
    }
  }
  return NULL;
}
