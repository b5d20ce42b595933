/*
 * fedscore's native kernels, the layers of the fused training step (see train.c): each layer's
 * forward and backward pass over one of two fixed halves of its work — images for convolutions
 * and pooling, output units (forward) or weight rows (backward) for large dense layers.
 *
 * Convolutions run image chunk by image chunk: im2col of a few images (at most COLS_FLOATS
 * floats, so the columns stay in L2), one sgemm, the bias and ReLU; backward, the ReLU mask and
 * bias gradient, the input gradient (dz·Wᵀ, col2im) and the filter gradient (colsᵀ·dz, summed
 * over the half's chunks into the half's own buffer, the two halves added by conv_finish). Over
 * the whole batch at once the columns of cnn003's second layer are 21 MB, written, packed by
 * OpenBLAS and read again: 56 GFLOPS here against 95 per image.
 *
 * A large dense layer's weight gradient is taken in blocks of rows, each followed at once by the
 * Adam step on those rows while they are in cache. Every product is a single-threaded sgemm on
 * a block fixed by the layer's shape and the batch, so the bits do not depend on the thread
 * that runs a half.
 */
#include "_train.h"

/* im2col columns per chunk, in floats (≈ 384 KB: in L2 next to OpenBLAS's packed blocks). */
#define COLS_FLOATS ((int64_t)96 * 1024)
/* Weight-gradient rows per block before its Adam step: ROW_BLOCK_FLOATS / units rows. */
#define ROW_BLOCK_FLOATS ((int64_t)64 * 1024)

#define HOT __attribute__((target_clones("avx512f", "avx2", "default")))

static void gemm1(int ta, int tb, int64_t m, int64_t n, int64_t k, const float *a, int64_t lda, const float *b,
                  int64_t ldb, float beta, float *c, int64_t ldc) {
  if (m == 0 || n == 0) return;
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (blasint)m, (blasint)n,
              (blasint)k, 1.0f, a, (blasint)lda, b, (blasint)ldb, beta, c, (blasint)ldc);
}

#define PROF(j, h, phase, t0) \
  ((j)->t->profiling ? (void)((j)->t->prof[(h) < 0 ? 0 : (h)][(j)->li * P_COUNT + (phase)] += cpu_ms() - (t0)) : (void)0)

static Conv conv_of(const Layer *l, int64_t n) {
  Conv g = {n, l->h, l->w, l->c, l->k, l->k, l->oc, l->pad, l->pad, l->oh, l->ow};
  return g;
}

/* Images per im2col chunk of a convolution (at least one). */
int64_t conv_chunk(const Layer *l) {
  const int64_t per = l->oh * l->ow * l->k * l->k * l->c;
  return per >= COLS_FLOATS ? 1 : COLS_FLOATS / per;
}

/*
 * dz = dy·step(y) (relu) or dy, in place, and acc[c] += Σ_r dz[r][c] in double: loops.c's
 * biasActGrad without its branch (a mispredicted one per element on ReLU masks).
 */
HOT static void epilogue_grad(int64_t rows, int64_t cols, float *dz, const float *y, int relu, double *acc) {
  for (int64_t r = 0; r < rows; r++) {
    float *d = dz + r * cols;
    const float *yr = y + r * cols;
    for (int64_t c = 0; c < cols; c++) {
      const float g = d[c], z = g * 0.0f; /* as tfjs: dy·0 keeps −0 and turns ±∞ into NaN */
      uint32_t gb, zb, vb;
      memcpy(&gb, &g, 4);
      memcpy(&zb, &z, 4);
      const uint32_t keep = relu ? (uint32_t) - (int32_t)(yr[c] > 0.0f) : 0xffffffffu;
      vb = (gb & keep) | (zb & ~keep);
      float v;
      memcpy(&v, &vb, 4);
      d[c] = v;
      acc[c] += v;
    }
  }
}

/* XNNPACK's average-pooling sum: eight inputs and an accumulator (the 9th input in the first pass). */
static inline float sum9(const float *i, float acc) {
  return ((i[2] + i[3]) + (i[4] + i[5])) + (((i[0] + i[1]) + acc) + (i[6] + i[7]));
}

/*
 * Valid f×f pooling with stride f, NHWC, of images [lo, hi). Average pooling adds a window as
 * tfjs-backend-wasm's XNNPACK kernel does, so that both give the same bits: cells in
 * column-major order, the first nine with sum9, then eight at a time onto the running sum
 * (zeros past f²), then × 1/f².
 */
static void pool_forward(const Layer *l, int64_t lo, int64_t hi, const float *x, float *y) {
  const int64_t f = l->size, c = l->c, w = l->w, h = l->h, kk = f * f;
  const float scale = 1.0f / (float)kk;
  for (int64_t b = lo; b < hi; b++)
    for (int64_t oy = 0; oy < l->oh; oy++)
      for (int64_t ox = 0; ox < l->ow; ox++) {
        float *dst = y + ((b * l->oh + oy) * l->ow + ox) * c;
        const float *src = x + ((b * h + oy * f) * w + ox * f) * c;
        if (l->kind == L_MAXPOOL) {
          for (int64_t ch = 0; ch < c; ch++) dst[ch] = src[ch];
          for (int64_t a = 0; a < f; a++)
            for (int64_t e = 0; e < f; e++)
              for (int64_t ch = 0; ch < c; ch++) {
                const float v = src[(a * w + e) * c + ch], m = dst[ch];
                dst[ch] = v > m || v != v ? v : m;
              }
        } else if (f == 2) { /* sum9 of (0,0), (1,0), (0,1), (1,1) and five zeros */
          const float *r0 = src, *r1 = src + w * c;
          for (int64_t ch = 0; ch < c; ch++) {
            const float in[9] = {r0[ch], r1[ch], r0[c + ch], r1[c + ch], 0, 0, 0, 0, 0};
            dst[ch] = sum9(in, 0.0f) * scale;
          }
        } else {
          for (int64_t ch = 0; ch < c; ch++) {
            float in[9], acc = 0;
            for (int64_t o = 0; o == 0 || o < kk; o += o == 0 ? 9 : 8) {
              const int64_t take = o == 0 ? 9 : 8;
              for (int64_t q = 0; q < take; q++)
                in[q] = o + q < kk ? src[(((o + q) % f) * w + (o + q) / f) * c + ch] : 0.0f;
              acc = sum9(in, o == 0 ? in[8] : acc);
            }
            dst[ch] = acc * scale;
          }
        }
      }
}

static void adam_range(const Job *j, int64_t at, int64_t count) {
  const Adam *a = j->adam;
  adam_loop(j->theta + at, j->grad + at, a->m + at, a->v + at, count, a->wd, a->b1, a->b2, a->step, a->sq, a->eps);
}

static void conv_half_forward(Job *j, int h) {
  Layer *l = j->l;
  const Conv g = conv_of(l, j->b);
  const int64_t kk = l->k * l->k * l->c, per = l->oh * l->ow;
  const float *w = j->theta + l->woff, *bias = j->theta + l->boff;
  float *cols = j->t->cols[h < 0 ? 0 : h];
  int64_t lo, hi;
  half_range(j->b, h, &lo, &hi);
  for (int64_t n0 = lo; n0 < hi; n0 += l->chunk) {
    const int64_t cnt = hi - n0 < l->chunk ? hi - n0 : l->chunk, rows = cnt * per;
    float *y = l->out + n0 * per * l->oc;
    double t0 = PROF_START(j->t);
    if (l->direct) {
      direct_forward(l, j->in, n0, cnt, w, l->out, cols);
    } else {
      im2col(&g, j->in, n0, cnt, cols);
      gemm1(0, 0, rows, l->oc, kk, cols, kk, w, l->oc, 0.0f, y, l->oc);
    }
    PROF(j, h, P_FORWARD, t0);
    t0 = PROF_START(j->t);
    bias_act_run(rows, l->oc, y, bias, l->relu, y);
    PROF(j, h, P_EPILOGUE, t0);
  }
}

static void conv_half_backward(Job *j, int h) {
  Layer *l = j->l;
  Trainer *t = j->t;
  const Conv g = conv_of(l, j->b);
  const int64_t kk = l->k * l->k * l->c, per = l->oh * l->ow, img = l->h * l->w * l->c;
  const float *w = j->theta + l->woff;
  const int s = h < 0 ? 0 : h;
  float *cols = t->cols[s], *dw = t->dwp[s];
  double *acc = t->acc[s];
  memset(acc, 0, (size_t)l->oc * sizeof(double));
  int64_t lo, hi;
  half_range(j->b, h, &lo, &hi);
  if (lo == hi) memset(dw, 0, (size_t)(kk * l->oc) * sizeof(float));
  for (int64_t n0 = lo; n0 < hi; n0 += l->chunk) {
    const int64_t cnt = hi - n0 < l->chunk ? hi - n0 : l->chunk, rows = cnt * per;
    float *dz = j->gy + n0 * per * l->oc;
    double t0 = PROF_START(j->t);
    epilogue_grad(rows, l->oc, dz, l->out + n0 * per * l->oc, l->relu, acc);
    PROF(j, h, P_EPILOGUE_GRAD, t0);
    if (l->need_dx) {
      t0 = PROF_START(j->t);
      gemm1(0, 1, rows, kk, l->oc, dz, l->oc, w, l->oc, 0.0f, cols, kk);
      memset(j->gx + n0 * img, 0, (size_t)(cnt * img) * sizeof(float));
      col2im(&g, cols, n0, cnt, j->gx);
      PROF(j, h, P_INPUT_GRAD, t0);
    }
    t0 = PROF_START(j->t);
    if (l->direct) {
      direct_filter_grad(l, j->in, j->gy, n0, cnt, dw, n0 == lo, cols);
    } else {
      im2col(&g, j->in, n0, cnt, cols);
      gemm1(1, 0, kk, l->oc, rows, cols, kk, dz, l->oc, n0 == lo ? 0.0f : 1.0f, dw, l->oc);
    }
    PROF(j, h, P_PARAM_GRAD, t0);
  }
}

void conv_finish(Job *j) {
  Layer *l = j->l;
  Trainer *t = j->t;
  const double t0 = PROF_START(j->t);
  const int64_t ws = l->k * l->k * l->c * l->oc;
  float *dw = j->grad + l->woff, *db = j->grad + l->boff;
  for (int64_t i = 0; i < ws; i++) dw[i] = t->dwp[0][i] + t->dwp[1][i];
  for (int64_t c = 0; c < l->oc; c++) db[c] = (float)(t->acc[0][c] + t->acc[1][c]);
  PROF(j, 0, P_PARAM_GRAD, t0);
  if (j->adam->m != NULL) {
    const double t1 = PROF_START(j->t);
    adam_range(j, l->woff, ws + l->oc);
    PROF(j, 0, P_ADAM, t1);
  }
}

static void dense_half_forward(Job *j, int h) {
  Layer *l = j->l;
  int64_t u0, u1;
  half_range(l->oc, l->split ? h : -1, &u0, &u1);
  double t0 = PROF_START(j->t);
  gemm1(0, 0, j->b, u1 - u0, l->c, j->in, l->c, j->theta + l->woff + u0, l->oc, 0.0f, l->out + u0, l->oc);
  PROF(j, h, P_FORWARD, t0);
  t0 = PROF_START(j->t);
  for (int64_t r = 0; r < j->b; r++) {
    float *y = l->out + r * l->oc + u0;
    bias_act_run(1, u1 - u0, y, j->theta + l->boff + u0, l->relu, y);
  }
  PROF(j, h, P_EPILOGUE, t0);
}

/*
 * Weight rows [r0, r1) of a dense layer, block by block: the block's part of ∂L/∂input
 * (dz·W[block]ᵀ), its gradient (input[:, block]ᵀ·dz) and its Adam step, so that W is read
 * from memory once for both and its gradient never leaves the cache.
 */
static void dense_half_backward(Job *j, int h) {
  Layer *l = j->l;
  int64_t r0, r1;
  half_range(l->c, l->split ? h : -1, &r0, &r1);
  const int64_t oc = l->oc;
  const int64_t most = ROW_BLOCK_FLOATS / oc > 0 ? ROW_BLOCK_FLOATS / oc : 1;
  const int64_t blocks = (r1 - r0 + most - 1) / most; /* of equal sizes: no sliver of a few rows */
  for (int64_t q = 0; q < blocks; q++) {
    const int64_t r = r0 + (r1 - r0) * q / blocks, rr = r0 + (r1 - r0) * (q + 1) / blocks - r;
    double t0;
    if (l->need_dx) {
      t0 = PROF_START(j->t);
      gemm1(0, 1, j->b, rr, oc, j->gy, oc, j->theta + l->woff + r * oc, oc, 0.0f, j->gx + r, l->c);
      PROF(j, h, P_INPUT_GRAD, t0);
    }
    t0 = PROF_START(j->t);
    gemm1(1, 0, rr, oc, j->b, j->in + r, l->c, j->gy, oc, 0.0f, j->grad + l->woff + r * oc, oc);
    PROF(j, h, P_PARAM_GRAD, t0);
    if (j->adam->m != NULL) {
      t0 = PROF_START(j->t);
      adam_range(j, l->woff + r * oc, rr * oc);
      PROF(j, h, P_ADAM, t0);
    }
  }
}

/*
 * Before either half of a dense layer's backward pass: its ReLU mask, its bias gradient and the
 * bias's Adam step (the whole batch; a dense layer's pre-activations are b × units).
 */
void dense_epilogue_grad(Job *j) {
  Layer *l = j->l;
  double t0 = PROF_START(j->t);
  double *acc = j->t->acc[0];
  memset(acc, 0, (size_t)l->oc * sizeof(double));
  epilogue_grad(j->b, l->oc, j->gy, l->out, l->relu, acc);
  for (int64_t c = 0; c < l->oc; c++) j->grad[l->boff + c] = (float)acc[c];
  PROF(j, 0, P_EPILOGUE_GRAD, t0);
  if (j->adam->m != NULL) {
    t0 = PROF_START(j->t);
    adam_range(j, l->boff, l->oc);
    PROF(j, 0, P_ADAM, t0);
  }
}

void layer_forward(void *job, int h) {
  Job *j = (Job *)job;
  Layer *l = j->l;
  if (l->kind == L_DENSE) return dense_half_forward(j, h);
  if (l->kind == L_CONV) return conv_half_forward(j, h);
  int64_t lo, hi;
  half_range(j->b, h, &lo, &hi);
  const double t0 = PROF_START(j->t);
  pool_forward(l, lo, hi, j->in, l->out);
  PROF(j, h, P_FORWARD, t0);
}

void layer_backward(void *job, int h) {
  Job *j = (Job *)job;
  Layer *l = j->l;
  if (l->kind == L_DENSE) return dense_half_backward(j, h);
  if (l->kind == L_CONV) return conv_half_backward(j, h);
  int64_t lo, hi;
  half_range(j->b, h, &lo, &hi);
  const int64_t in = l->h * l->w * l->c, out = l->oh * l->ow * l->oc;
  const double t0 = PROF_START(j->t);
  pool_grad_run(l->kind == L_MAXPOOL, hi - lo, l->h, l->w, l->c, l->size, l->size, l->oh, l->ow, j->gy + lo * out,
                j->in + lo * in, j->gx + lo * in);
  PROF(j, h, P_INPUT_GRAD, t0);
}
