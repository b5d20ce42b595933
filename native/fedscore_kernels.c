/*
 * fedscore's native kernels (optional): matrix products and stride-1 NHWC convolutions with
 * their gradients on OpenBLAS's sgemm (Debian libopenblas-dev), and plain C loops for pooling
 * gradients, bias + ReLU, the softmax cross-entropy, the Adam step and the coalition
 * evaluator's helpers. src/ml/_blas_kernels.ts registers them on the tfjs wasm backend, so
 * they read and write the wasm heap in place; when this addon is not built, fedscore runs on
 * the wasm backend's own kernels.
 *
 * Every function takes Float32Arrays and integer dimensions, checks that each array holds the
 * elements the dimensions imply, and throws a RangeError/TypeError naming the argument otherwise.
 * Convolutions go through im2col in chunks of images, so the column buffer stays under
 * CHUNK_FLOATS floats whatever the batch (2000-image evaluations included).
 */
#define _POSIX_C_SOURCE 200809L
#define NAPI_VERSION 8
#include <cblas.h>
#include <math.h>
#include <node_api.h>
#include <pthread.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern void openblas_set_num_threads(int);
extern int openblas_get_num_threads(void);
extern char *openblas_get_config(void);

#define CHUNK_FLOATS ((size_t)8 << 20) /* 32 MB of im2col columns at most */

/*
 * Threads. OpenBLAS always runs single-threaded here: the bits of a product depend on its
 * thread count (measured: a cnn003 update trained with OpenBLAS on two threads differs from one
 * trained on one), and a model must come out the same whether the main thread, a pool worker or
 * a silo's own process trained it. Large products (SMALL_MACS multiply-adds or more) are
 * instead cut into SPLIT fixed blocks along their longer output side, always the same blocks for
 * the same shape, each a single-threaded sgemm; the blocks run on up to `threads` threads (the
 * cores, or setThreads) and one after the other in a pool worker (setLocalThreads(1): the pool
 * already puts a worker on each core). Same blocks, same bits, however many threads ran them.
 * Small products stay whole: inside a training loop two OpenBLAS threads made the MLP's
 * 64×784·784×200 products slower, not faster (36k samples/s on one, 25k on two).
 */
#define SMALL_MACS ((double)(1 << 25))
#define SPLIT 2
static int threads_large = 0; /* 0: the online cores, capped at SPLIT */
static _Thread_local int local_threads = 0;

typedef struct {
  int ta, tb;
  int64_t m, n, k, lda, ldb;
  const float *a, *b;
  float beta, *c;
  int64_t ldc;
} Block;

static void run_block(const Block *x) {
  if (x->m == 0 || x->n == 0) return;
  cblas_sgemm(CblasRowMajor, x->ta ? CblasTrans : CblasNoTrans, x->tb ? CblasTrans : CblasNoTrans, (blasint)x->m,
              (blasint)x->n, (blasint)x->k, 1.0f, x->a, (blasint)x->lda, x->b, (blasint)x->ldb, x->beta, x->c,
              (blasint)x->ldc);
}

static void *block_thread(void *arg) {
  run_block((const Block *)arg);
  return NULL;
}

static void sgemm_rm(int ta, int tb, int64_t m, int64_t n, int64_t k, const float *a, const float *b, float beta,
                     float *c) {
  const int64_t lda = ta ? m : k, ldb = tb ? k : n;
  Block whole = {ta, tb, m, n, k, lda, ldb, a, b, beta, c, n};
  if ((double)m * (double)n * (double)k < SMALL_MACS || (m < 2 * SPLIT && n < 2 * SPLIT)) {
    run_block(&whole);
    return;
  }
  Block blk[SPLIT];
  const int by_rows = m >= n;
  const int64_t len = by_rows ? m : n;
  for (int i = 0; i < SPLIT; i++) {
    const int64_t lo = len * i / SPLIT, hi = len * (i + 1) / SPLIT;
    blk[i] = whole;
    if (by_rows) {
      blk[i].m = hi - lo;
      blk[i].a = ta ? a + lo : a + lo * lda; /* rows lo..hi of op(A) */
      blk[i].c = c + lo * n;
    } else {
      blk[i].n = hi - lo;
      blk[i].b = tb ? b + lo * ldb : b + lo; /* columns lo..hi of op(B) */
      blk[i].c = c + lo;
    }
  }
  int threads = local_threads > 0 ? local_threads : threads_large;
  if (threads > SPLIT) threads = SPLIT;
  pthread_t helper[SPLIT];
  int started[SPLIT] = {0};
  for (int i = 1; i < SPLIT && i < threads; i++)
    started[i] = pthread_create(&helper[i], NULL, block_thread, &blk[i]) == 0;
  run_block(&blk[0]);
  for (int i = 1; i < SPLIT; i++)
    if (!started[i]) run_block(&blk[i]);
  for (int i = 1; i < SPLIT; i++)
    if (started[i]) pthread_join(helper[i], NULL);
}

/* Per-environment (main thread or worker) scratch buffer, freed when the environment ends. */
typedef struct {
  float *buf;
  size_t cap;
} Scratch;

static void free_scratch(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  Scratch *s = (Scratch *)data;
  free(s->buf);
  free(s);
}

static float *scratch(napi_env env, size_t floats) {
  Scratch *s = NULL;
  if (napi_get_instance_data(env, (void **)&s) != napi_ok || s == NULL) return NULL;
  if (s->cap < floats) {
    free(s->buf);
    s->buf = (float *)malloc(floats * sizeof(float));
    s->cap = s->buf ? floats : 0;
  }
  return s->buf;
}

static napi_value fail(napi_env env, const char *kind, const char *msg) {
  if (kind[0] == 'T')
    napi_throw_type_error(env, NULL, msg);
  else if (kind[0] == 'R')
    napi_throw_range_error(env, NULL, msg);
  else
    napi_throw_error(env, NULL, msg);
  return NULL;
}

/* A typed-array argument of `type` (named `tname` in errors) with at least `need` elements. */
static int typed(napi_env env, napi_value v, const char *name, size_t need, napi_typedarray_type type,
                 const char *tname, void **out) {
  bool is_ta = false;
  char msg[160];
  napi_typedarray_type got;
  size_t len;
  void *data;
  if (napi_is_typedarray(env, v, &is_ta) != napi_ok || !is_ta ||
      napi_get_typedarray_info(env, v, &got, &len, &data, NULL, NULL) != napi_ok || got != type) {
    snprintf(msg, sizeof msg, "%s: expected %s", name, tname);
    fail(env, "TypeError", msg);
    return 0;
  }
  if (len < need) {
    snprintf(msg, sizeof msg, "%s: expected at least %zu elements, got %zu", name, need, len);
    fail(env, "RangeError", msg);
    return 0;
  }
  *out = data;
  return 1;
}

static int f32(napi_env env, napi_value v, const char *name, size_t need, float **out) {
  return typed(env, v, name, need, napi_float32_array, "a Float32Array", (void **)out);
}

static int i32(napi_env env, napi_value v, const char *name, size_t need, int32_t **out) {
  return typed(env, v, name, need, napi_int32_array, "an Int32Array", (void **)out);
}

/* A non-negative integer argument. */
static int dim(napi_env env, napi_value v, const char *name, int64_t *out) {
  double d;
  char msg[160];
  if (napi_get_value_double(env, v, &d) != napi_ok || !(d >= 0) || d > 2147483647.0 || d != (double)(int64_t)d) {
    snprintf(msg, sizeof msg, "%s: expected a non-negative integer", name);
    fail(env, "RangeError", msg);
    return 0;
  }
  *out = (int64_t)d;
  return 1;
}

#define ARGS(n)                                                                 \
  size_t argc = (n);                                                            \
  napi_value argv[(n)];                                                         \
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL; \
  if (argc < (n)) return fail(env, "TypeError", "expected " #n " arguments");

/*
 * gemm(batch, transA, transB, m, n, k, a, strideA, b, strideB, c, strideC):
 * for each i < batch, C_i[m,n] = op(A_i)·op(B_i), row-major, where op transposes when the flag
 * is 1 (A_i stored [k,m], B_i stored [n,k]). Strides are in elements; a stride of 0 broadcasts.
 */
static napi_value gemm(napi_env env, napi_callback_info info) {
  ARGS(12)
  int64_t batch, ta, tb, m, n, k, sa, sb, sc;
  float *a, *b, *c;
  if (!dim(env, argv[0], "batch", &batch) || !dim(env, argv[1], "transA", &ta) ||
      !dim(env, argv[2], "transB", &tb) || !dim(env, argv[3], "m", &m) || !dim(env, argv[4], "n", &n) ||
      !dim(env, argv[5], "k", &k) || !dim(env, argv[7], "strideA", &sa) ||
      !dim(env, argv[9], "strideB", &sb) || !dim(env, argv[11], "strideC", &sc))
    return NULL;
  if (ta > 1 || tb > 1) return fail(env, "RangeError", "transA, transB: expected 0 or 1");
  size_t last = batch > 0 ? (size_t)(batch - 1) : 0;
  if (!f32(env, argv[6], "a", batch ? last * sa + (size_t)(m * k) : 0, &a) ||
      !f32(env, argv[8], "b", batch ? last * sb + (size_t)(k * n) : 0, &b) ||
      !f32(env, argv[10], "c", batch ? last * sc + (size_t)(m * n) : 0, &c))
    return NULL;
  if (m == 0 || n == 0) return NULL;
  for (int64_t i = 0; i < batch; i++) {
    float *ci = c + i * sc;
    if (k == 0) {
      memset(ci, 0, (size_t)(m * n) * sizeof(float));
      continue;
    }
    sgemm_rm((int)ta, (int)tb, m, n, k, a + i * sa, b + i * sb, 0.0f, ci);
  }
  return NULL;
}

/* Convolution geometry shared by the three convolution functions. */
typedef struct {
  int64_t n, h, w, c, kh, kw, o, pt, pl, oh, ow;
} Conv;

static int conv_args(napi_env env, napi_value *argv, Conv *g) {
  static const char *names[] = {"n", "h", "w", "c", "kh", "kw", "o", "padTop", "padLeft", "outH", "outW"};
  int64_t *f[] = {&g->n, &g->h, &g->w, &g->c, &g->kh, &g->kw, &g->o, &g->pt, &g->pl, &g->oh, &g->ow};
  for (int i = 0; i < 11; i++)
    if (!dim(env, argv[i], names[i], f[i])) return 0;
  if (g->kh == 0 || g->kw == 0 || g->c == 0 || g->o == 0) {
    fail(env, "RangeError", "kh, kw, c, o: expected positive sizes");
    return 0;
  }
  if (g->oh + g->kh - 1 > g->h + 2 * g->pt + g->kh || g->ow + g->kw - 1 > g->w + 2 * g->pl + g->kw) {
    fail(env, "RangeError", "outH, outW: larger than the padded input allows");
    return 0;
  }
  return 1;
}

/* Images per im2col chunk so that the columns fit CHUNK_FLOATS (at least one image). */
static int64_t chunk_images(const Conv *g) {
  size_t per = (size_t)(g->oh * g->ow * g->kh * g->kw * g->c);
  int64_t k = per ? (int64_t)(CHUNK_FLOATS / per) : g->n;
  return k < 1 ? 1 : (k > g->n ? g->n : k);
}

/* cols[(i·OH + y)·OW + x][(ky·KW + kx)·C + ch] = x[n0+i][y+ky−pt][x+kx−pl][ch], 0 outside. */
static void im2col(const Conv *g, const float *x, int64_t n0, int64_t count, float *cols) {
  const int64_t row = g->kh * g->kw * g->c;
  for (int64_t i = 0; i < count; i++) {
    const float *img = x + (n0 + i) * g->h * g->w * g->c;
    for (int64_t oy = 0; oy < g->oh; oy++)
      for (int64_t ox = 0; ox < g->ow; ox++) {
        float *dst = cols + ((i * g->oh + oy) * g->ow + ox) * row;
        for (int64_t ky = 0; ky < g->kh; ky++) {
          const int64_t iy = oy + ky - g->pt;
          float *d = dst + ky * g->kw * g->c;
          if (iy < 0 || iy >= g->h) {
            memset(d, 0, (size_t)(g->kw * g->c) * sizeof(float));
            continue;
          }
          const int64_t x0 = ox - g->pl;
          if (x0 >= 0 && x0 + g->kw <= g->w) {
            const float *src = img + (iy * g->w + x0) * g->c;
            for (int64_t q = 0; q < g->kw * g->c; q++) d[q] = src[q];
            continue;
          }
          for (int64_t kx = 0; kx < g->kw; kx++) {
            const int64_t ix = x0 + kx;
            float *dd = d + kx * g->c;
            const float *src = img + (iy * g->w + ix) * g->c;
            const int inside = ix >= 0 && ix < g->w;
            for (int64_t ch = 0; ch < g->c; ch++) dd[ch] = inside ? src[ch] : 0.0f;
          }
        }
      }
  }
}

/* The adjoint of im2col: dx[n0+i][…] += cols[…] (dx zeroed by the caller). */
static void col2im(const Conv *g, const float *cols, int64_t n0, int64_t count, float *dx) {
  const int64_t row = g->kh * g->kw * g->c;
  for (int64_t i = 0; i < count; i++) {
    float *img = dx + (n0 + i) * g->h * g->w * g->c;
    for (int64_t oy = 0; oy < g->oh; oy++)
      for (int64_t ox = 0; ox < g->ow; ox++) {
        const float *src = cols + ((i * g->oh + oy) * g->ow + ox) * row;
        for (int64_t ky = 0; ky < g->kh; ky++) {
          const int64_t iy = oy + ky - g->pt;
          if (iy < 0 || iy >= g->h) continue;
          for (int64_t kx = 0; kx < g->kw; kx++) {
            const int64_t ix = ox + kx - g->pl;
            if (ix < 0 || ix >= g->w) continue;
            const float *s = src + (ky * g->kw + kx) * g->c;
            float *d = img + (iy * g->w + ix) * g->c;
            for (int64_t ch = 0; ch < g->c; ch++) d[ch] += s[ch];
          }
        }
      }
  }
}

enum { CONV_FORWARD, CONV_FILTER_GRAD, CONV_INPUT_GRAD };

/*
 * The three convolution functions, all (n,h,w,c,kh,kw,o,padTop,padLeft,outH,outW, p, q, out):
 *   conv2dForward    p = x[n,h,w,c],          q = filter[kh,kw,c,o], out = y[n,outH,outW,o];
 *   conv2dFilterGrad p = x,                   q = dy[n,outH,outW,o], out = dw[kh,kw,c,o] = Σ colsᵀ·dy;
 *   conv2dInputGrad  p = dy[n,outH,outW,o],   q = filter,            out = dx[n,h,w,c] = col2im(dy·Wᵀ).
 * Images go through im2col in chunks (chunk_images), so the columns stay under CHUNK_FLOATS.
 */
static napi_value conv_op(napi_env env, napi_callback_info info, int mode) {
  ARGS(14)
  Conv g;
  if (!conv_args(env, argv, &g)) return NULL;
  const size_t xs = (size_t)(g.n * g.h * g.w * g.c);
  const size_t ws = (size_t)(g.kh * g.kw * g.c * g.o);
  const size_t ys = (size_t)(g.n * g.oh * g.ow * g.o);
  static const char *names[3][3] = {{"x", "filter", "y"}, {"x", "dy", "dw"}, {"dy", "filter", "dx"}};
  const size_t sizes[3][3] = {{xs, ws, ys}, {xs, ys, ws}, {ys, ws, xs}};
  float *p, *q, *out;
  if (!f32(env, argv[11], names[mode][0], sizes[mode][0], &p) ||
      !f32(env, argv[12], names[mode][1], sizes[mode][1], &q) ||
      !f32(env, argv[13], names[mode][2], sizes[mode][2], &out))
    return NULL;
  const int64_t kk = g.kh * g.kw * g.c;
  const int64_t chunk = chunk_images(&g);
  float *cols = scratch(env, (size_t)(chunk * g.oh * g.ow * kk));
  if (cols == NULL) return fail(env, "Error", "out of memory for im2col columns");
  if (mode != CONV_FORWARD) memset(out, 0, sizes[mode][2] * sizeof(float));
  for (int64_t n0 = 0; n0 < g.n; n0 += chunk) {
    const int64_t cnt = g.n - n0 < chunk ? g.n - n0 : chunk;
    const int64_t rows = cnt * g.oh * g.ow;
    const int64_t at = n0 * g.oh * g.ow * g.o; /* first row of y or dy in this chunk */
    if (rows == 0) continue;
    if (mode == CONV_INPUT_GRAD) {
      sgemm_rm(0, 1, rows, kk, g.o, p + at, q, 0.0f, cols);
      col2im(&g, cols, n0, cnt, out);
      continue;
    }
    im2col(&g, p, n0, cnt, cols);
    if (mode == CONV_FORWARD)
      sgemm_rm(0, 0, rows, g.o, kk, cols, q, 0.0f, out + at);
    else
      sgemm_rm(1, 0, kk, g.o, rows, cols, q + at, 1.0f, out); /* out starts at zero */
  }
  return NULL;
}

static napi_value conv_forward(napi_env env, napi_callback_info info) {
  return conv_op(env, info, CONV_FORWARD);
}

static napi_value conv_filter_grad(napi_env env, napi_callback_info info) {
  return conv_op(env, info, CONV_FILTER_GRAD);
}

static napi_value conv_input_grad(napi_env env, napi_callback_info info) {
  return conv_op(env, info, CONV_INPUT_GRAD);
}

/* A number argument (any finite double). */
static int num(napi_env env, napi_value v, const char *name, double *out) {
  char msg[160];
  if (napi_get_value_double(env, v, out) != napi_ok || !(*out == *out) || *out - *out != 0) {
    snprintf(msg, sizeof msg, "%s: expected a finite number", name);
    fail(env, "RangeError", msg);
    return 0;
  }
  return 1;
}

/*
 * adamStep(theta, grad, m, v, count, wd, beta1, beta2, stepSize, sqrtBc2, eps): one step of
 * PyTorch's Adam with L2 weight decay over `count` parameters, in double precision and in the
 * order of train.ts's JavaScript loop, so both give the same float32 bits (built with
 * -ffp-contract=off: no fused multiply-adds).
 */
static void adam_loop(float *theta, const float *grad, float *m, float *v, int64_t count, double wd, double b1,
                      double b2, double step, double sq, double eps) __attribute__((target_clones("avx512f", "avx2", "default")));
static void adam_loop(float *restrict theta, const float *restrict grad, float *restrict m, float *restrict v,
                      int64_t count, double wd, double b1, double b2, double step, double sq, double eps) {
  const double c1 = 1 - b1, c2 = 1 - b2;
  for (int64_t i = 0; i < count; i++) {
    const double p = theta[i];
    const double g = grad[i] + wd * p;
    const double mi = b1 * m[i] + c1 * g;
    const double vi = b2 * v[i] + c2 * g * g;
    m[i] = (float)mi;
    v[i] = (float)vi;
    theta[i] = (float)(p - (step * mi) / (sqrt(vi) / sq + eps));
  }
}

static napi_value adam_step(napi_env env, napi_callback_info info) {
  ARGS(11)
  int64_t count;
  double wd, b1, b2, step, sq, eps;
  float *theta, *grad, *m, *v;
  if (!dim(env, argv[4], "count", &count) || !num(env, argv[5], "weightDecay", &wd) ||
      !num(env, argv[6], "beta1", &b1) || !num(env, argv[7], "beta2", &b2) ||
      !num(env, argv[8], "stepSize", &step) || !num(env, argv[9], "sqrtBc2", &sq) ||
      !num(env, argv[10], "epsilon", &eps))
    return NULL;
  if (!f32(env, argv[0], "theta", (size_t)count, &theta) || !f32(env, argv[1], "grad", (size_t)count, &grad) ||
      !f32(env, argv[2], "m", (size_t)count, &m) || !f32(env, argv[3], "v", (size_t)count, &v))
    return NULL;
  adam_loop(theta, grad, m, v, count, wd, b1, b2, step, sq, eps);
  return NULL;
}

/* max(0, v) as tfjs's relu computes it: NaN stays NaN. */
static inline float relu_f(float v) { return v > 0.0f || v != v ? v : 0.0f; }

/*
 * affineRelu(count, p0, u, s, relu, out): out = p0 + fround(s)·u, then max(0, ·) when relu is 1;
 * in float32 as tfjs's mul, add and relu kernels compute it (coalition.ts's first layer).
 */
static napi_value affine_relu(napi_env env, napi_callback_info info) {
  ARGS(6)
  int64_t count, relu;
  double s;
  float *p0, *u, *out;
  if (!dim(env, argv[0], "count", &count) || !num(env, argv[3], "s", &s) || !dim(env, argv[4], "relu", &relu) ||
      !f32(env, argv[1], "p0", (size_t)count, &p0) || !f32(env, argv[2], "u", (size_t)count, &u) ||
      !f32(env, argv[5], "out", (size_t)count, &out))
    return NULL;
  const float sf = (float)s;
  for (int64_t i = 0; i < count; i++) {
    const float t = sf * u[i];
    const float z = p0[i] + t;
    out[i] = relu ? relu_f(z) : z;
  }
  return NULL;
}

/*
 * reduceLogits(rows, classes, z, labels, labelOffset, confusion): _reduce.ts's accumulate —
 * per row the arg-max (ties to the lower class) counted in confusion[label][argmax], and the
 * summed cross-entropy max + log Σ exp(z − max) − z[label] in double, returned.
 */
static napi_value reduce_logits(napi_env env, napi_callback_info info) {
  ARGS(6)
  int64_t rows, classes, offset;
  float *z;
  int32_t *labels, *confusion;
  if (!dim(env, argv[0], "rows", &rows) || !dim(env, argv[1], "classes", &classes) ||
      !dim(env, argv[4], "labelOffset", &offset) || !f32(env, argv[2], "logits", (size_t)(rows * classes), &z) ||
      !i32(env, argv[3], "labels", (size_t)(offset + rows), &labels) ||
      !i32(env, argv[5], "confusion", (size_t)(classes * classes), &confusion))
    return NULL;
  if (classes < 1) return fail(env, "RangeError", "classes: expected at least 1");
  double sum = 0;
  for (int64_t k = 0; k < rows; k++) {
    const float *r = z + k * classes;
    const int32_t t = labels[offset + k];
    if (t < 0 || t >= classes) {
      char msg[160];
      snprintf(msg, sizeof msg, "labels[%lld]: expected a class in [0, %lld), got %d", (long long)(offset + k),
               (long long)classes, t);
      return fail(env, "RangeError", msg);
    }
    int64_t best = 0;
    double max = r[0];
    for (int64_t c = 1; c < classes; c++)
      if (r[c] > max) {
        max = r[c];
        best = c;
      }
    double e = 0;
    for (int64_t c = 0; c < classes; c++) e += exp((double)r[c] - max);
    sum += max + log(e) - (double)r[t];
    confusion[t * classes + best]++;
  }
  napi_value out;
  napi_create_double(env, sum, &out);
  return out;
}

/*
 * softmaxXent(rows, cols, z, y, grad): the mean softmax cross-entropy of logits z against
 * targets y, −(1/rows)·Σ_r Σ_c y[r,c]·log softmax(z[r])_c, returned (double), and its gradient
 * with respect to z, (softmax(z[r])·Σ_c y[r,c] − y[r]) / rows, written to grad (float32).
 */
static napi_value softmax_xent(napi_env env, napi_callback_info info) {
  ARGS(5)
  int64_t rows, cols;
  float *z, *y, *grad;
  if (!dim(env, argv[0], "rows", &rows) || !dim(env, argv[1], "cols", &cols) ||
      !f32(env, argv[2], "logits", (size_t)(rows * cols), &z) || !f32(env, argv[3], "labels", (size_t)(rows * cols), &y) ||
      !f32(env, argv[4], "grad", (size_t)(rows * cols), &grad))
    return NULL;
  if (cols < 1) return fail(env, "RangeError", "cols: expected at least 1");
  double total = 0;
  const double inv = rows > 0 ? 1.0 / (double)rows : 0;
  for (int64_t r = 0; r < rows; r++) {
    const float *zr = z + r * cols, *yr = y + r * cols;
    float *gr = grad + r * cols;
    double max = zr[0];
    for (int64_t c = 1; c < cols; c++)
      if (zr[c] > max) max = zr[c];
    double e = 0, ysum = 0, yz = 0;
    for (int64_t c = 0; c < cols; c++) {
      e += exp((double)zr[c] - max);
      ysum += yr[c];
      yz += (double)yr[c] * (double)zr[c];
    }
    const double lse = max + log(e);
    total += ysum * lse - yz;
    for (int64_t c = 0; c < cols; c++) gr[c] = (float)((exp((double)zr[c] - lse) * ysum - (double)yr[c]) * inv);
  }
  napi_value out;
  napi_create_double(env, total * inv, &out);
  return out;
}

/*
 * biasAct(rows, cols, z, bias, relu, y): y[r][c] = z[r][c] + bias[c], then max(0, ·) when relu
 * is 1 (a dense or convolution layer's epilogue, channels last).
 */
static napi_value bias_act(napi_env env, napi_callback_info info) {
  ARGS(6)
  int64_t rows, cols, relu;
  float *z, *bias, *y;
  if (!dim(env, argv[0], "rows", &rows) || !dim(env, argv[1], "cols", &cols) || !dim(env, argv[4], "relu", &relu) ||
      !f32(env, argv[2], "z", (size_t)(rows * cols), &z) || !f32(env, argv[3], "bias", (size_t)cols, &bias) ||
      !f32(env, argv[5], "y", (size_t)(rows * cols), &y))
    return NULL;
  for (int64_t r = 0; r < rows; r++) {
    const float *zr = z + r * cols;
    float *yr = y + r * cols;
    for (int64_t c = 0; c < cols; c++) {
      const float v = zr[c] + bias[c];
      yr[c] = relu ? relu_f(v) : v;
    }
  }
  return NULL;
}

/*
 * biasActGrad(rows, cols, dy, y, relu, dz, dbias): the gradient of biasAct. dz = dy where
 * y > 0 (relu) or everywhere, and dbias[c] = Σ_r dz[r][c], summed in double.
 */
static napi_value bias_act_grad(napi_env env, napi_callback_info info) {
  ARGS(7)
  int64_t rows, cols, relu;
  float *dy, *y, *dz, *db;
  if (!dim(env, argv[0], "rows", &rows) || !dim(env, argv[1], "cols", &cols) || !dim(env, argv[4], "relu", &relu) ||
      !f32(env, argv[2], "dy", (size_t)(rows * cols), &dy) || !f32(env, argv[3], "y", (size_t)(rows * cols), &y) ||
      !f32(env, argv[5], "dz", (size_t)(rows * cols), &dz) || !f32(env, argv[6], "dbias", (size_t)cols, &db))
    return NULL;
  double *acc = (double *)calloc(cols > 0 ? (size_t)cols : 1, sizeof(double));
  if (acc == NULL) return fail(env, "Error", "out of memory");
  for (int64_t r = 0; r < rows; r++) {
    const float *g = dy + r * cols, *yr = y + r * cols;
    float *d = dz + r * cols;
    for (int64_t c = 0; c < cols; c++) {
      const float v = relu && !(yr[c] > 0.0f) ? g[c] * 0.0f : g[c]; /* dy·step(y), as tfjs: −0 stays −0 */
      d[c] = v;
      acc[c] += v;
    }
  }
  for (int64_t c = 0; c < cols; c++) db[c] = (float)acc[c];
  free(acc);
  return NULL;
}

/*
 * poolGrad(max, n, h, w, c, f, s, oh, ow, dy, x, dx): gradient of a valid f×f pooling with
 * stride s (NHWC). Average: each window spreads dy/f² over its cells. Max: dy goes to the first
 * largest cell of the window in row-major order, as tfjs's cpu backend does.
 */
static napi_value pool_grad(napi_env env, napi_callback_info info) {
  ARGS(12)
  static const char *names[] = {"max", "n", "h", "w", "c", "filterSize", "stride", "outH", "outW"};
  int64_t v[9];
  for (int i = 0; i < 9; i++)
    if (!dim(env, argv[i], names[i], &v[i])) return NULL;
  const int64_t mx = v[0], n = v[1], h = v[2], w = v[3], c = v[4], f = v[5], st = v[6], oh = v[7], ow = v[8];
  if (f < 1 || st < 1) return fail(env, "RangeError", "filterSize, stride: expected positive sizes");
  if ((oh > 0 && (oh - 1) * st + f > h) || (ow > 0 && (ow - 1) * st + f > w))
    return fail(env, "RangeError", "outH, outW: windows reach outside the input");
  float *dy, *x, *dx;
  const size_t xs = (size_t)(n * h * w * c);
  if (!f32(env, argv[9], "dy", (size_t)(n * oh * ow * c), &dy) || !f32(env, argv[10], "x", mx ? xs : 0, &x) ||
      !f32(env, argv[11], "dx", xs, &dx))
    return NULL;
  memset(dx, 0, xs * sizeof(float));
  const float inv = 1.0f / (float)(f * f);
  for (int64_t b = 0; b < n; b++)
    for (int64_t oy = 0; oy < oh; oy++)
      for (int64_t ox = 0; ox < ow; ox++) {
        const float *g = dy + ((b * oh + oy) * ow + ox) * c;
        for (int64_t ch = 0; ch < c; ch++) {
          if (mx) {
            int64_t best = -1;
            float bv = 0;
            for (int64_t a = 0; a < f; a++)
              for (int64_t e = 0; e < f; e++) {
                const int64_t at = ((b * h + oy * st + a) * w + ox * st + e) * c + ch;
                if (best < 0 || x[at] > bv) {
                  best = at;
                  bv = x[at];
                }
              }
            dx[best] += g[ch];
          } else {
            const float d = g[ch] * inv;
            for (int64_t a = 0; a < f; a++)
              for (int64_t e = 0; e < f; e++) dx[((b * h + oy * st + a) * w + ox * st + e) * c + ch] += d;
          }
        }
      }
  return NULL;
}

/* setThreads(k): threads for this process's large products (k ≥ 1; default: the cores, at most SPLIT). */
static napi_value set_threads(napi_env env, napi_callback_info info) {
  ARGS(1)
  int64_t k;
  if (!dim(env, argv[0], "threads", &k)) return NULL;
  if (k < 1 || k > 256) return fail(env, "RangeError", "threads: expected an integer in [1, 256]");
  threads_large = (int)k;
  return NULL;
}

/* setLocalThreads(k): threads for the calling thread's large products (0: the process's). */
static napi_value set_local_threads(napi_env env, napi_callback_info info) {
  ARGS(1)
  int64_t k;
  if (!dim(env, argv[0], "threads", &k)) return NULL;
  if (k > 256) return fail(env, "RangeError", "threads: expected an integer in [0, 256]");
  local_threads = (int)k;
  return NULL;
}

/* info(): { library, config, threads }. */
static napi_value blas_info(napi_env env, napi_callback_info info) {
  (void)info;
  napi_value out, v;
  napi_create_object(env, &out);
  napi_create_string_utf8(env, "OpenBLAS", NAPI_AUTO_LENGTH, &v);
  napi_set_named_property(env, out, "library", v);
  napi_create_string_utf8(env, openblas_get_config(), NAPI_AUTO_LENGTH, &v);
  napi_set_named_property(env, out, "config", v);
  napi_create_int32(env, threads_large, &v);
  napi_set_named_property(env, out, "threads", v);
  return out;
}

NAPI_MODULE_INIT() {
  if (openblas_get_num_threads() != 1) openblas_set_num_threads(1);
  if (threads_large == 0) {
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    threads_large = cores < 1 ? 1 : (cores > SPLIT ? SPLIT : (int)cores);
  }
  Scratch *s = (Scratch *)calloc(1, sizeof(Scratch));
  if (s == NULL || napi_set_instance_data(env, s, free_scratch, NULL) != napi_ok) {
    free(s);
    return NULL;
  }
  napi_property_descriptor props[] = {
      {"gemm", NULL, gemm, NULL, NULL, NULL, napi_enumerable, NULL},
      {"conv2dForward", NULL, conv_forward, NULL, NULL, NULL, napi_enumerable, NULL},
      {"conv2dFilterGrad", NULL, conv_filter_grad, NULL, NULL, NULL, napi_enumerable, NULL},
      {"conv2dInputGrad", NULL, conv_input_grad, NULL, NULL, NULL, napi_enumerable, NULL},
      {"affineRelu", NULL, affine_relu, NULL, NULL, NULL, napi_enumerable, NULL},
      {"reduceLogits", NULL, reduce_logits, NULL, NULL, NULL, napi_enumerable, NULL},
      {"softmaxXent", NULL, softmax_xent, NULL, NULL, NULL, napi_enumerable, NULL},
      {"biasAct", NULL, bias_act, NULL, NULL, NULL, napi_enumerable, NULL},
      {"biasActGrad", NULL, bias_act_grad, NULL, NULL, NULL, napi_enumerable, NULL},
      {"poolGrad", NULL, pool_grad, NULL, NULL, NULL, napi_enumerable, NULL},
      {"adamStep", NULL, adam_step, NULL, NULL, NULL, napi_enumerable, NULL},
      {"setLocalThreads", NULL, set_local_threads, NULL, NULL, NULL, napi_enumerable, NULL},
      {"setThreads", NULL, set_threads, NULL, NULL, NULL, napi_enumerable, NULL},
      {"info", NULL, blas_info, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}
