/*
 * fedscore's native kernels, coalition models of a one-hidden-layer MLP (see fedscore_kernels.c;
 * src/ml/_coalition_fast.ts drives it, coalition_kernels.c holds its vector loops).
 *
 * The coalition model M_S has first layer W0 + s(S)·Σ_{i∈S} aᵢΔWᵢ, so its hidden pre-activation
 * on the test set is P₀ + s(S)·U_S with U_S = Σ_{i∈S} Qᵢ, Qᵢ = aᵢ(X·ΔWᵢ + Δbᵢ) computed once per
 * silo. Its second layer (W2_S, b2_S) = m0 + s(S)·Σ aᵢΔᵢ over those parameters. For every
 * coalition this file computes, without leaving C:
 *
 *   U_S    along the sorted member list: ((Q_{m0} + Q_{m1}) + Q_{m2}) + …, float32, so that
 *          consecutive coalitions of the lexicographic order share their prefix sums (one
 *          addition per coalition on average);
 *   h      relu(P₀ + fround(s)·U_S), float32 (affineRelu's operations);
 *   z      h·W2_S + b2_S: each logit one fused multiply-add chain over the hidden units in order,
 *          starting from 0, then + the bias (the addon's gemm computes the tfjs path's product
 *          the same way, narrow.c, on every processor);
 *   W2_S   combine() of coalition.ts: Σ aᵢΔᵢ in double over the members in order, then
 *          fround(m0 + s·Σ);
 *   counts per class, the examples whose arg-max logit (ties to the lower class) is their label,
 *          and optionally the summed cross-entropy, exactly as reduceLogits (loops.c) computes it.
 *
 * Cache blocking: the test rows are cut into blocks of 32 (two panels of 16 rows stored
 * unit-major, so that 16 rows are one AVX-512 vector), the coalitions into chunks of
 * consecutive ones; a chunk's W2_S are formed once, then for each row block the chunk's
 * coalitions are walked with a stack of prefix sums, all of it in the core's L2. The chunks form
 * a queue (an atomic counter) that every thread of large_threads() drains, so N threads share
 * them evenly; each coalition's result depends on nothing but the coalition, not on the chunk
 * or thread that computed it.
 */
#include "_coalitions.h"

#define CHUNK 128
#define QUEUE_DEPTH 4
#define MAX_PLAYERS 30

/* The thread's buffers: coalitions of the chunk, their second layers, the prefix-sum stack. */
typedef struct {
  int32_t *ms;      /* chunk × n members */
  int32_t *len;     /* chunk sizes */
  int64_t *out;     /* output index (the mask in all-subsets mode) */
  int32_t *lcp;     /* common prefix with the previous coalition of the chunk */
  float *w2;        /* chunk × head */
  double *acc;      /* n × head, combine()'s sums along the path */
  float *stack;     /* n × BLOCK·hidden, U_S of the path's prefixes for one row block */
  float *h;         /* BLOCK·hidden */
  float z[MAX_CLASSES * BLOCK];
} Work;

/* Pre-order walk of all subsets of n players (the lexicographic order of sorted member lists). */
static int preorder_at(int n, int64_t idx, int32_t *path) {
  int len = 0, next = 0;
  while (idx > 0) {
    idx -= 1;
    int j = next;
    while (idx >= ((int64_t)1 << (n - 1 - j))) idx -= (int64_t)1 << (n - 1 - j++);
    path[len++] = j;
    next = j + 1;
  }
  return len;
}

static int preorder_next(int n, int32_t *path, int len) {
  if (len == 0) {
    path[0] = 0;
    return 1;
  }
  if (path[len - 1] + 1 < n) {
    path[len] = path[len - 1] + 1;
    return len + 1;
  }
  if (--len == 0) return -1;
  path[len - 1]++;
  return len;
}

/* Loads chunk `c` into the work buffers; returns its number of coalitions. */
static int64_t load_chunk(const Job *job, Work *wk, int64_t c) {
  const int64_t n = job->n, lo = c * job->chunk;
  int64_t hi = lo + job->chunk;
  if (hi > job->count) hi = job->count;
  int32_t path[MAX_PLAYERS + 1];
  int len = job->all && !job->gray ? preorder_at((int)n, lo, path) : 0;
  for (int64_t j = 0; j < hi - lo; j++) {
    int32_t *ms = wk->ms + j * n;
    if (job->gray) {
      const int64_t mask = (lo + j) ^ ((lo + j) >> 1); /* the (lo+j)-th Gray code */
      int32_t m = 0;
      for (int32_t i = 0; i < n; i++)
        if ((mask >> i) & 1) ms[m++] = i;
      wk->len[j] = m;
      wk->out[j] = mask;
    } else if (job->all) {
      if (j > 0) len = preorder_next((int)n, path, len);
      int64_t mask = 0;
      for (int d = 0; d < len; d++) {
        ms[d] = path[d];
        mask |= (int64_t)1 << path[d];
      }
      wk->len[j] = len;
      wk->out[j] = mask;
    } else {
      const int32_t o = job->offsets[lo + j];
      wk->len[j] = job->offsets[lo + j + 1] - o;
      for (int d = 0; d < wk->len[j]; d++) ms[d] = job->members[o + d];
      wk->out[j] = lo + j;
    }
    int32_t l = 0;
    if (j > 0)
      while (l < wk->len[j] && l < wk->len[j - 1] && ms[l] == wk->ms[(j - 1) * n + l]) l++;
    wk->lcp[j] = l;
  }
  return hi - lo;
}

/* Second layers of the chunk's coalitions: combine() along each member list, prefix sums shared. */
static void chunk_heads(const Job *job, Work *wk, int64_t size) {
  const int64_t n = job->n, R = job->head;
  for (int64_t j = 0; j < size; j++) {
    const int32_t *ms = wk->ms + j * n;
    const int32_t len = wk->len[j];
    for (int32_t d = j == 0 ? 0 : wk->lcp[j]; d < len; d++) {
      double *acc = wk->acc + d * R;
      const double *prev = d > 0 ? wk->acc + (d - 1) * R : NULL;
      const double ai = job->a[ms[d]];
      const float *u = job->heads + ms[d] * R;
      for (int64_t k = 0; k < R; k++) acc[k] = (prev ? prev[k] : 0.0) + ai * (double)u[k];
    }
    double s = job->s_add;
    if (s < 0) {
      double total = 0;
      for (int32_t d = 0; d < len; d++) total += job->a[ms[d]];
      s = len == 0 ? 0 : 1 / total;
    }
    float *w = wk->w2 + j * R;
    const double *acc = len > 0 ? wk->acc + (len - 1) * R : NULL;
    for (int64_t k = 0; k < R; k++) w[k] = (float)((double)job->head0[k] + s * (acc ? acc[k] : 0.0));
  }
}

static float scale_of(const Job *job, const int32_t *ms, int32_t len) {
  if (job->s_add >= 0) return (float)job->s_add;
  double total = 0;
  for (int32_t d = 0; d < len; d++) total += job->a[ms[d]];
  return len == 0 ? 0.0f : (float)(1 / total);
}

/* Q_i's panels of the row block starting at r0. */
static inline const float *q_block(const Job *job, int32_t i, int64_t r0) {
  const int64_t rows_pad = (job->rows + PANEL - 1) / PANEL * PANEL;
  return job->panels + ((int64_t)i + 1) * rows_pad * job->hidden + r0 * job->hidden;
}

/*
 * Logits of the chunk's coalition j on the row block at r0 (len floats per array) into wk->z.
 * level[d] holds U of the member prefix of length d+1 for the first *valid levels of the path.
 */
static void block_logits(const Job *job, Work *wk, int64_t j, int64_t size, int64_t r0, int64_t len,
                         const float **level, int32_t *valid) {
  const int64_t H = job->hidden;
  const int32_t *ms = wk->ms + j * job->n;
  const int32_t m = wk->len[j];
  const float *p0 = job->panels + r0 * H, *w = wk->w2 + j * job->head;
  if (wk->lcp[j] < *valid) *valid = wk->lcp[j];
  for (int32_t d = *valid; d < m - 1; d++) {
    const float *q = q_block(job, ms[d], r0);
    if (d > 0) {
      float *dst = wk->stack + d * BLOCK * H;
      coal_add_into(len, level[d - 1], q, dst);
      q = dst;
    }
    level[d] = q;
  }
  if (m - 1 > *valid) *valid = m - 1;
  const float s = scale_of(job, ms, m);
  if (m <= 1) {
    if (m == 0) {
      coal_hidden_none(len, p0, wk->h);
    } else {
      level[0] = q_block(job, ms[0], r0);
      coal_hidden_one(len, p0, level[0], s, wk->h);
      *valid = 1;
    }
    coal_product(job, wk->h, w, wk->z);
    return;
  }
  const float *q = q_block(job, ms[m - 1], r0);
  float *dst = j + 1 < size && wk->lcp[j + 1] == m ? wk->stack + (m - 1) * BLOCK * H : NULL;
  if (len != BLOCK * H || !coal_fused(job, p0, level[m - 2], q, dst, s, w, wk->z)) {
    if (dst)
      coal_hidden_sum(len, p0, level[m - 2], q, dst, s, wk->h);
    else
      coal_hidden_sum_nostore(len, p0, level[m - 2], q, s, wk->h);
    coal_product(job, wk->h, w, wk->z);
  }
  if (dst) {
    level[m - 1] = dst;
    *valid = m;
  }
}

static void run_chunk(const Job *job, Work *wk, int64_t c) {
  const int64_t H = job->hidden, R = job->head, C = job->classes;
  const int64_t size = load_chunk(job, wk, c);
  chunk_heads(job, wk, size);
  const int64_t rows_pad = (job->rows + PANEL - 1) / PANEL * PANEL;
  for (int64_t r0 = 0; r0 < job->rows; r0 += BLOCK) {
    const int64_t len = (rows_pad - r0 < BLOCK ? rows_pad - r0 : BLOCK) * H;
    const int64_t rows = job->rows - r0 < BLOCK ? job->rows - r0 : BLOCK;
    int32_t valid = 0;
    const float *level[MAX_PLAYERS];
    for (int64_t j = 0; j < size; j++) {
      block_logits(job, wk, j, size, r0, len, level, &valid);
      const float *bias = wk->w2 + j * R + H * C;
      int32_t *counts = job->counts + wk->out[j] * C;
      if (job->label_masks)
        coal_count_block512(job, wk->z, bias, r0, rows, counts);
      else
        coal_reduce_block(job, wk->z, bias, r0, rows, counts, job->with_loss ? job->loss + wk->out[j] : NULL);
    }
  }
}

/* −Qᵢ's panels of the row block starting at r0 (Gray-code order). */
static inline const float *neg_block(const Job *job, int32_t i, int64_t r0) {
  const int64_t rows_pad = (job->rows + PANEL - 1) / PANEL * PANEL;
  return job->neg + (int64_t)i * rows_pad * job->hidden + r0 * job->hidden;
}

/*
 * Gray-code order (an alternative walk, for measurements: evalCoalitions' grayAnchor): the k-th
 * coalition is k ^ (k >> 1), one silo away from the (k−1)-th, so U_S = U_prev ± Q_i, one
 * addition per coalition whatever its size. At an anchor (the chunk's first coalition and every
 * P-th one) U_S is summed afresh along the member list, as the prefix walk does, so it has the
 * default order's bits there; in between it drifts by the additions and subtractions since.
 */
static void run_chunk_gray(const Job *job, Work *wk, int64_t c) {
  const int64_t H = job->hidden, R = job->head, C = job->classes, lo = c * job->chunk;
  const int64_t size = load_chunk(job, wk, c);
  chunk_heads(job, wk, size);
  const int64_t rows_pad = (job->rows + PANEL - 1) / PANEL * PANEL;
  for (int64_t r0 = 0; r0 < job->rows; r0 += BLOCK) {
    const int64_t len = (rows_pad - r0 < BLOCK ? rows_pad - r0 : BLOCK) * H;
    const int64_t rows = job->rows - r0 < BLOCK ? job->rows - r0 : BLOCK;
    const float *p0 = job->panels + r0 * H;
    float *u = wk->stack, *v = wk->stack + BLOCK * H;
    for (int64_t j = 0; j < size; j++) {
      const int64_t k = lo + j;
      const int32_t *ms = wk->ms + j * job->n;
      const int32_t m = wk->len[j];
      const float s = scale_of(job, ms, m);
      const float *w = wk->w2 + j * R;
      if (j == 0 || k % job->gray == 0) {
        /* Anchor: U_S = ((Q_{m0} + Q_{m1}) + …) afresh. */
        if (m == 0) {
          memset(u, 0, (size_t)len * sizeof(float));
          coal_hidden_none(len, p0, wk->h);
        } else {
          memcpy(u, q_block(job, ms[0], r0), (size_t)len * sizeof(float));
          for (int32_t d = 1; d < m; d++) {
            coal_add_into(len, u, q_block(job, ms[d], r0), v);
            float *t = u;
            u = v;
            v = t;
          }
          coal_hidden_one(len, p0, u, s, wk->h);
        }
        coal_product(job, wk->h, w, wk->z);
      } else {
        const int32_t bit = __builtin_ctzll((unsigned long long)k);
        const float *q = (wk->out[j] >> bit) & 1 ? q_block(job, bit, r0) : neg_block(job, bit, r0);
        if (m == 0) {
          coal_add_into(len, u, q, v);
          coal_hidden_none(len, p0, wk->h);
          coal_product(job, wk->h, w, wk->z);
        } else if (len != BLOCK * H || !coal_fused(job, p0, u, q, v, s, w, wk->z)) {
          coal_hidden_sum(len, p0, u, q, v, s, wk->h);
          coal_product(job, wk->h, w, wk->z);
        }
        float *t = u;
        u = v;
        v = t;
      }
      const float *bias = w + H * C;
      int32_t *counts = job->counts + wk->out[j] * C;
      if (job->label_masks)
        coal_count_block512(job, wk->z, bias, r0, rows, counts);
      else
        coal_reduce_block(job, wk->z, bias, r0, rows, counts, job->with_loss ? job->loss + wk->out[j] : NULL);
    }
  }
}

static void *worker(void *arg) {
  Job *job = (Job *)arg;
  const int64_t n = job->n, R = job->head, H = job->hidden, K = job->chunk;
  Work wk;
  memset(&wk, 0, sizeof wk);
  wk.ms = (int32_t *)malloc((size_t)(K * (n > 0 ? n : 1)) * sizeof(int32_t));
  wk.len = (int32_t *)malloc((size_t)K * sizeof(int32_t));
  wk.lcp = (int32_t *)malloc((size_t)K * sizeof(int32_t));
  wk.out = (int64_t *)malloc((size_t)K * sizeof(int64_t));
  wk.w2 = (float *)malloc((size_t)(K * R) * sizeof(float));
  wk.acc = (double *)malloc((size_t)((n > 0 ? n : 1) * R) * sizeof(double));
  wk.stack = (float *)calloc((size_t)((n > 2 ? n : 2) * BLOCK * H), sizeof(float));
  wk.h = (float *)calloc((size_t)(BLOCK * H), sizeof(float));
  if (!wk.ms || !wk.len || !wk.lcp || !wk.out || !wk.w2 || !wk.acc || !wk.stack || !wk.h) {
    __atomic_store_n(&job->failed, 1, __ATOMIC_SEQ_CST);
  } else {
    for (;;) {
      const int64_t c = __atomic_fetch_add(&job->next, 1, __ATOMIC_SEQ_CST);
      if (c >= job->chunks) break;
      if (job->gray)
        run_chunk_gray(job, &wk, c);
      else
        run_chunk(job, &wk, c);
    }
  }
  free(wk.ms);
  free(wk.len);
  free(wk.lcp);
  free(wk.out);
  free(wk.w2);
  free(wk.acc);
  free(wk.stack);
  free(wk.h);
  return NULL;
}

/*
 * evalCoalitions(n, rows, hidden, classes, panels, head0, heads, a, sAdditive, labels,
 *                count, offsets, members, withLoss, isa, counts, loss):
 * for each coalition, counts[out·C + t] = examples of class t classified correctly and (withLoss
 * 1) loss[out] = their summed cross-entropy, for the coalition models of the module comment.
 *   panels   (n+1) × rowsPad × hidden: P₀ then Q₀ … Q_{n−1}, each in panels of 16 rows, unit-major
 *            (row r, unit k at (r/16)·16·hidden + k·16 + r%16); rowsPad = rows rounded up to 16;
 *   head0    the global model's second layer, W2 [hidden × classes] then b2 [classes]; heads the
 *            n updates' (n × that); a the silos' aᵢ; sAdditive the fixed s(S) of the additive
 *            convention, or −1 for FedAvg (s = 1/Σ_S aᵢ, 0 for ∅);
 *   count    0: all 2^n coalitions, out = the mask (bit i = player i); else `count` coalitions,
 *            members[offsets[j] … offsets[j+1]) strictly increasing, out = j (sort them
 *            lexicographically so that neighbours share prefixes);
 *   isa      0 auto (isa.c: the best the processor has, or setIsa's cap), 1 portable C, 2 AVX2,
 *            3 AVX-512 (all give the same bits);
 *   grayAnchor (optional, count 0 only) 0 or absent: the member-list prefix order above; P ≥ 1:
 *            Gray-code order re-anchored every P coalitions (run_chunk_gray: a measurement of
 *            issue 36, not the default — its values drift from the prefix order's between anchors).
 */
napi_value eval_coalitions(napi_env env, napi_callback_info info) {
  size_t argc = 18;
  napi_value argv[18];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  if (argc < 17) return fail(env, "TypeError", "expected 17 arguments (18 with grayAnchor)");
  Job job;
  memset(&job, 0, sizeof job);
  if (argc >= 18) {
    napi_valuetype t;
    if (napi_typeof(env, argv[17], &t) != napi_ok) return NULL;
    if (t != napi_undefined && !dim(env, argv[17], "grayAnchor", &job.gray)) return NULL;
  }
  int64_t withLoss, isa;
  if (!dim(env, argv[0], "n", &job.n) || !dim(env, argv[1], "rows", &job.rows) ||
      !dim(env, argv[2], "hidden", &job.hidden) || !dim(env, argv[3], "classes", &job.classes) ||
      !dim(env, argv[10], "count", &job.count) || !dim(env, argv[13], "withLoss", &withLoss) ||
      !dim(env, argv[14], "isa", &isa) || !num(env, argv[8], "sAdditive", &job.s_add))
    return NULL;
  if (job.n < 1 || job.n > MAX_PLAYERS) return fail(env, "RangeError", "n: expected 1 to 30 players");
  if (job.classes < 1 || job.classes > MAX_CLASSES) return fail(env, "RangeError", "classes: expected 1 to 16");
  if (job.hidden < 1) return fail(env, "RangeError", "hidden: expected at least 1");
  if (isa > 3) return fail(env, "RangeError", "isa: expected 0 to 3");
  job.isa = coal_pick_isa((int)isa);
  if (job.isa < 0) return fail(env, "RangeError", "isa: not supported by this processor");
  const int64_t rows_pad = (job.rows + PANEL - 1) / PANEL * PANEL;
  job.head = job.hidden * job.classes + job.classes;
  job.all = job.count == 0;
  if (job.gray && !job.all) return fail(env, "RangeError", "grayAnchor: only with count 0 (all 2^n coalitions)");
  if (job.all) job.count = (int64_t)1 << job.n;
  job.with_loss = withLoss != 0;
  float *panels, *head0, *heads;
  double *a;
  if (!f32(env, argv[4], "panels", (size_t)((job.n + 1) * rows_pad * job.hidden), &panels) ||
      !f32(env, argv[5], "head0", (size_t)job.head, &head0) ||
      !f32(env, argv[6], "heads", (size_t)(job.n * job.head), &heads) ||
      !i32(env, argv[9], "labels", (size_t)job.rows, (int32_t **)&job.labels) ||
      !i32(env, argv[15], "counts", (size_t)(job.count * job.classes), &job.counts))
    return NULL;
  bool is_ta = false;
  napi_typedarray_type type;
  size_t len;
  void *data;
  if (napi_is_typedarray(env, argv[7], &is_ta) != napi_ok || !is_ta ||
      napi_get_typedarray_info(env, argv[7], &type, &len, &data, NULL, NULL) != napi_ok ||
      type != napi_float64_array || len < (size_t)job.n)
    return fail(env, "TypeError", "a: expected a Float64Array of n numbers");
  a = (double *)data;
  if (job.with_loss) {
    if (napi_is_typedarray(env, argv[16], &is_ta) != napi_ok || !is_ta ||
        napi_get_typedarray_info(env, argv[16], &type, &len, &data, NULL, NULL) != napi_ok ||
        type != napi_float64_array || len < (size_t)job.count)
      return fail(env, "TypeError", "loss: expected a Float64Array of one number per coalition");
    job.loss = (double *)data;
  }
  if (!job.all) {
    int32_t *offsets, *members;
    if (!i32(env, argv[11], "offsets", (size_t)(job.count + 1), &offsets)) return NULL;
    const int64_t total = offsets[job.count];
    if (!i32(env, argv[12], "members", total > 0 ? (size_t)total : 0, &members)) return NULL;
    for (int64_t j = 0; j < job.count; j++) {
      if (offsets[j] < 0 || offsets[j + 1] < offsets[j] || offsets[j + 1] > total || offsets[j + 1] - offsets[j] > job.n)
        return fail(env, "RangeError", "offsets: expected non-decreasing offsets of at most n members each");
      for (int32_t d = offsets[j]; d < offsets[j + 1]; d++)
        if (members[d] < 0 || members[d] >= job.n || (d > offsets[j] && members[d] <= members[d - 1]))
          return fail(env, "RangeError", "members: expected increasing players in [0, n)");
    }
    job.offsets = offsets;
    job.members = members;
  }
  for (int64_t r = 0; r < job.rows; r++)
    if (job.labels[r] < 0 || job.labels[r] >= job.classes)
      return fail(env, "RangeError", "labels: expected classes in [0, classes)");
  job.panels = panels;
  job.head0 = head0;
  job.heads = heads;
  job.a = a;
  memset(job.counts, 0, (size_t)(job.count * job.classes) * sizeof(int32_t));
  if (job.isa == ISA_AVX512 && !job.with_loss) {
    job.label_masks = (uint16_t *)calloc((size_t)(rows_pad / PANEL * job.classes), sizeof(uint16_t));
    if (job.label_masks == NULL) return fail(env, "Error", "evalCoalitions: out of memory");
    for (int64_t r = 0; r < job.rows; r++)
      job.label_masks[(r / PANEL) * job.classes + job.labels[r]] |= (uint16_t)(1u << (r % PANEL));
  }
  if (job.loss) memset(job.loss, 0, (size_t)job.count * sizeof(double));
  float *neg = NULL;
  if (job.gray) {
    const size_t floats = (size_t)(job.n * rows_pad * job.hidden);
    neg = (float *)malloc(floats * sizeof(float));
    if (neg == NULL) {
      free(job.label_masks);
      return fail(env, "Error", "evalCoalitions: out of memory");
    }
    const float *q = panels + rows_pad * job.hidden;
    for (size_t i = 0; i < floats; i++) neg[i] = -q[i];
    job.neg = neg;
  }
  int threads = large_threads();
  /* At least QUEUE_DEPTH chunks per thread when there are several, so that they end together. */
  job.chunk = CHUNK;
  const int64_t depth = threads > 1 ? (int64_t)threads * QUEUE_DEPTH : 1;
  if (job.count < depth * CHUNK) job.chunk = (job.count + depth - 1) / depth;
  if (job.chunk < 1) job.chunk = 1;
  if (job.gray > job.chunk) job.chunk = job.gray; /* no anchors beyond the chunk's first */
  job.chunks = (job.count + job.chunk - 1) / job.chunk;
  if (threads > job.chunks) threads = (int)job.chunks;
  run_on_threads(threads, worker, &job);
  free(job.label_masks);
  free(neg);
  if (job.failed) return fail(env, "Error", "evalCoalitions: out of memory");
  return NULL;
}
