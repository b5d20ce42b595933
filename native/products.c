/*
 * fedscore's native kernels, the products (see fedscore_kernels.c): matrix products and stride-1
 * NHWC convolutions with their gradients on OpenBLAS's sgemm, cut into fixed blocks that up to
 * `threads` threads take from a queue. Convolutions go through im2col in chunks of images, so the column
 * buffer stays under CHUNK_FLOATS floats whatever the batch (2000-image evaluations included).
 */
#include "_fedscore.h"

#define CHUNK_FLOATS ((size_t)8 << 20) /* 32 MB of im2col columns at most */

/*
 * Threads. OpenBLAS always runs single-threaded here: the bits of a product depend on its
 * thread count (measured: a cnn003 update trained with OpenBLAS on two threads differs from one
 * trained on one), and a model must come out the same whether the main thread, a pool worker or
 * a silo's own process trained it. Large products (SMALL_MACS multiply-adds or more) are
 * instead cut into fixed blocks along their longer output side — each at least BLOCK_MACS
 * multiply-adds and LONG_SIDE rows (columns), or BLOCK_SIDE where the side is too short for two
 * blocks of LONG_SIDE, at most MAX_BLOCKS, and a power of two of them — always the same blocks
 * for the same shape, each a single-threaded sgemm. The blocks form a
 * queue (an atomic counter) that up to `threads` threads drain (the cores, or setThreads), so N
 * threads share the work evenly whatever N is, and a pool worker drains it alone
 * (setLocalThreads: the pool puts a worker on each core). Same blocks, same bits, however many
 * threads ran them (test/ml/_blas_kernels.test.ts and _coalition_fast.test.ts check 1 to 4).
 * Small products stay whole: inside a training loop two OpenBLAS threads made the MLP's
 * 64×784·784×200 products slower, not faster (36k samples/s on one, 25k on two).
 *
 * Why blocks of LONG_SIDE, and a power of two: every block is its own sgemm, which packs the whole
 * of the other operand again (B for a block of rows, A for one of columns), so each block adds
 * k × (the other side) floats of copying. With blocks of 32 rows the 2000-image evaluations
 * (MLP 2000×784·784×200, cnn003's dense 2000×18432·18432×128) ran 1.25× (MLP) and 1.3× (cnn003)
 * slower than with 2 blocks, on one thread and on two. Blocks of at least 256 rows, 4 for those
 * two products, gave their two-block times back (within 3 %, on 1 and 2 threads); 8 blocks
 * (128 rows) cost 3–5 %, 15 blocks (not a power of two) 15 %. A power of two also splits evenly
 * over 2, 4, 8 … threads. Short sides take blocks of 64, so that cnn003's training product
 * 64×18432·18432×128 still runs on 2 blocks (2.0 ms on two threads, 3.9 ms whole; on one thread,
 * as in a pool worker, 4 blocks of 32 took 1.15× the time of 2 blocks of 64). BLOCK_MACS
 * (8 M multiply-adds, about 0.1 ms on one core) keeps a block's sgemm call overhead small: with
 * 2 M, cnn003's 64×128·128×18432 input gradient ran in 64 blocks, 1.1–1.2× its time in 16.
 * (2 cores, OpenBLAS 0.3.21; `npm run bench -- products` times these shapes against another build.)
 */
#define SMALL_MACS ((double)(1 << 25))
#define BLOCK_MACS ((double)(1 << 23))
#define BLOCK_SIDE 64
#define LONG_SIDE 256
#define MAX_BLOCKS 64
int threads_large = 0; /* 0 until NAPI_MODULE_INIT sets the online cores */
static _Thread_local int local_threads = 0;

/* Threads the calling thread's large products may use (coalitions.c drains its queue with as many). */
int large_threads(void) {
  const int t = local_threads > 0 ? local_threads : threads_large;
  return t < 1 ? 1 : (t > MAX_THREADS ? MAX_THREADS : t);
}
/* Threads this thread's large products may use (setLocalThreads, else setThreads / the cores). */
int blas_threads_here(void) { return local_threads > 0 ? local_threads : threads_large; }

/* Runs fn(arg) on the calling thread and on threads − 1 helpers (fewer if a thread cannot start). */
void run_on_threads(int threads, void *(*fn)(void *), void *arg) {
  pthread_t helper[MAX_THREADS];
  int started = 0;
  if (threads > MAX_THREADS) threads = MAX_THREADS;
  for (int i = 1; i < threads; i++) {
    if (pthread_create(&helper[started], NULL, fn, arg) != 0) break;
    started++;
  }
  fn(arg);
  for (int i = 0; i < started; i++) pthread_join(helper[i], NULL);
}

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

/* A large product's block queue: `blocks` fixed blocks of `whole` along rows or columns. */
typedef struct {
  Block whole;
  int by_rows;
  int64_t len;
  int blocks;
  int next; /* the next block to take (atomic) */
} Queue;

/* Block i of the queue: rows (columns) len·i/blocks … len·(i+1)/blocks of the output. */
static Block block_at(const Queue *q, int i) {
  const int64_t lo = q->len * i / q->blocks, hi = q->len * (i + 1) / q->blocks;
  Block b = q->whole;
  if (q->by_rows) {
    b.m = hi - lo;
    b.a = b.ta ? b.a + lo : b.a + lo * b.lda; /* rows lo..hi of op(A) */
    b.c = b.c + lo * b.ldc;
  } else {
    b.n = hi - lo;
    b.b = b.tb ? b.b + lo * b.ldb : b.b + lo; /* columns lo..hi of op(B) */
    b.c = b.c + lo;
  }
  return b;
}

static void *drain(void *arg) {
  Queue *q = (Queue *)arg;
  for (;;) {
    const int i = __atomic_fetch_add(&q->next, 1, __ATOMIC_RELAXED);
    if (i >= q->blocks) return NULL;
    const Block b = block_at(q, i);
    run_block(&b);
  }
}

/* The number of blocks of an m×n×k product (a function of the shape only; 1: whole). */
int product_blocks(int64_t m, int64_t n, int64_t k) {
  const double macs = (double)m * (double)n * (double)k;
  const int64_t len = m >= n ? m : n;
  if (macs < SMALL_MACS || len < 2 * BLOCK_SIDE) return 1;
  double by_macs = macs / BLOCK_MACS;
  int64_t blocks = len >= 2 * LONG_SIDE ? len / LONG_SIDE : len / BLOCK_SIDE;
  if ((double)blocks > by_macs) blocks = (int64_t)by_macs;
  if (blocks > MAX_BLOCKS) blocks = MAX_BLOCKS;
  int pow2 = 1;
  while (2 * pow2 <= blocks) pow2 *= 2;
  return pow2;
}

void sgemm_rm(int ta, int tb, int64_t m, int64_t n, int64_t k, const float *a, const float *b, float beta, float *c) {
  const int64_t lda = ta ? m : k, ldb = tb ? k : n;
  Queue q = {{ta, tb, m, n, k, lda, ldb, a, b, beta, c, n}, m >= n, m >= n ? m : n, product_blocks(m, n, k), 0};
  if (q.blocks <= 1) {
    run_block(&q.whole);
    return;
  }
  const int threads = large_threads();
  run_on_threads(threads < q.blocks ? threads : q.blocks, drain, &q);
}

/*
 * gemm(batch, transA, transB, m, n, k, a, strideA, b, strideB, c, strideC):
 * for each i < batch, C_i[m,n] = op(A_i)·op(B_i), row-major, where op transposes when the flag
 * is 1 (A_i stored [k,m], B_i stored [n,k]). Strides are in elements; a stride of 0 broadcasts.
 * Products of at most NARROW_MAX columns without transposes (output layers) go to narrow.c.
 */
napi_value gemm(napi_env env, napi_callback_info info) {
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
    if (!ta && !tb && n <= NARROW_MAX)
      narrow_product(m, n, k, a + i * sa, b + i * sb, ci); /* narrow.c: the same bits on every processor */
    else
      sgemm_rm((int)ta, (int)tb, m, n, k, a + i * sa, b + i * sb, 0.0f, ci);
  }
  return NULL;
}

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
int64_t chunk_images(const Conv *g) {
  size_t per = (size_t)(g->oh * g->ow * g->kh * g->kw * g->c);
  int64_t k = per ? (int64_t)(CHUNK_FLOATS / per) : g->n;
  return k < 1 ? 1 : (k > g->n ? g->n : k);
}

/* cols[(i·OH + y)·OW + x][(ky·KW + kx)·C + ch] = x[n0+i][y+ky−pt][x+kx−pl][ch], 0 outside. */
__attribute__((target_clones("avx512f", "avx2", "default"))) void im2col(const Conv *g, const float *x, int64_t n0, int64_t count, float *cols) {
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
__attribute__((target_clones("avx512f", "avx2", "default"))) void col2im(const Conv *g, const float *cols, int64_t n0, int64_t count, float *dx) {
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

/*
 * The three convolution functions, all (n,h,w,c,kh,kw,o,padTop,padLeft,outH,outW, p, q, out):
 *   conv2dForward    p = x[n,h,w,c],          q = filter[kh,kw,c,o], out = y[n,outH,outW,o];
 *   conv2dFilterGrad p = x,                   q = dy[n,outH,outW,o], out = dw[kh,kw,c,o] = Σ colsᵀ·dy;
 *   conv2dInputGrad  p = dy[n,outH,outW,o],   q = filter,            out = dx[n,h,w,c] = col2im(dy·Wᵀ).
 * Images go through im2col in chunks (chunk_images), so the columns stay under CHUNK_FLOATS.
 */
/* Floats of im2col columns conv_run needs for `g` (one chunk). */
size_t conv_cols_floats(const Conv *g) {
  return (size_t)(chunk_images(g) * g->oh * g->ow * g->kh * g->kw * g->c);
}

/*
 * The three convolution functions, all (n,h,w,c,kh,kw,o,padTop,padLeft,outH,outW, p, q, out):
 *   conv2dForward    p = x[n,h,w,c],          q = filter[kh,kw,c,o], out = y[n,outH,outW,o];
 *   conv2dFilterGrad p = x,                   q = dy[n,outH,outW,o], out = dw[kh,kw,c,o] = Σ colsᵀ·dy;
 *   conv2dInputGrad  p = dy[n,outH,outW,o],   q = filter,            out = dx[n,h,w,c] = col2im(dy·Wᵀ).
 * Images go through im2col in chunks (chunk_images), so the columns stay under CHUNK_FLOATS;
 * `cols` holds conv_cols_floats(g) floats. The fused training step (train.c) calls this too.
 */
void conv_run(int mode, const Conv *gp, const float *p, const float *q, float *out, float *cols) {
  const Conv g = *gp;
  const int64_t kk = g.kh * g.kw * g.c;
  const int64_t chunk = chunk_images(&g);
  if (mode != CONV_FORWARD)
    memset(out, 0, (size_t)(mode == CONV_FILTER_GRAD ? kk * g.o : g.n * g.h * g.w * g.c) * sizeof(float));
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
}

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
  float *cols = scratch(env, conv_cols_floats(&g));
  if (cols == NULL) return fail(env, "Error", "out of memory for im2col columns");
  conv_run(mode, &g, p, q, out, cols);
  return NULL;
}

napi_value conv_forward(napi_env env, napi_callback_info info) {
  return conv_op(env, info, CONV_FORWARD);
}

napi_value conv_filter_grad(napi_env env, napi_callback_info info) {
  return conv_op(env, info, CONV_FILTER_GRAD);
}

napi_value conv_input_grad(napi_env env, napi_callback_info info) {
  return conv_op(env, info, CONV_INPUT_GRAD);
}
/* setThreads(k): threads for this process's large products (k ≥ 1; default: the online cores). */
napi_value set_threads(napi_env env, napi_callback_info info) {
  ARGS(1)
  int64_t k;
  if (!dim(env, argv[0], "threads", &k)) return NULL;
  if (k < 1 || k > 256) return fail(env, "RangeError", "threads: expected an integer in [1, 256]");
  threads_large = (int)k;
  return NULL;
}

/* productBlocks(m, n, k): the blocks sgemm_rm cuts an m×n×k product into (1: whole), for tests. */
napi_value product_blocks_js(napi_env env, napi_callback_info info) {
  ARGS(3)
  int64_t m, n, k;
  if (!dim(env, argv[0], "m", &m) || !dim(env, argv[1], "n", &n) || !dim(env, argv[2], "k", &k)) return NULL;
  napi_value out;
  napi_create_int32(env, product_blocks(m, n, k), &out);
  return out;
}

/* setLocalThreads(k): threads for the calling thread's large products (0: the process's). */
napi_value set_local_threads(napi_env env, napi_callback_info info) {
  ARGS(1)
  int64_t k;
  if (!dim(env, argv[0], "threads", &k)) return NULL;
  if (k > 256) return fail(env, "RangeError", "threads: expected an integer in [0, 256]");
  local_threads = (int)k;
  return NULL;
}
