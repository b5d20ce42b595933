/*
 * fedscore's native kernels, the fused training step (see fedscore_kernels.c): one call computes
 * a minibatch's forward pass, softmax cross-entropy and every parameter gradient of a model made
 * of dense, convolution (stride 1, NHWC), valid pooling and flatten layers, reading θ and writing
 * the gradient straight from and into train.ts's flat vectors, and can apply the Adam step to
 * each layer as soon as its gradients are known.
 *
 * Through tfjs the same step takes about 20 kernel dispatches, uploads θ to the wasm heap and
 * copies the gradient back out, each a pass over every parameter (9.4 MB for cnn003's dense
 * layer); here the activations live in buffers the trainer keeps between steps.
 *
 * The arithmetic is that of the tfjs path on the native kernels, operation for operation: the
 * same products in the same fixed blocks (products.c), the same im2col chunks, the same bias,
 * ReLU, loss and pooling loops, so both give the same float32 bits (test/ml/_native_train.test.ts).
 * Average pooling adds a window as tfjs-backend-wasm's XNNPACK kernel does (pool_forward).
 */
#include "_fedscore.h"

enum { L_DENSE = 1, L_CONV = 2, L_MAXPOOL = 3, L_AVGPOOL = 4, L_FLATTEN = 5 };

typedef struct {
  int kind, relu, need_dx;
  int64_t h, w, c;      /* input shape (dense: 1 × 1 × inputs) */
  int64_t oh, ow, oc;   /* output shape */
  int64_t k, pad, size; /* convolution kernel and padding; pooling window (= stride) */
  int64_t woff, boff;   /* offsets of the weight and the bias in θ */
  float *out;           /* batch × output; NULL for flatten (its output is its input) */
  float *cols;          /* convolutions: the forward im2col columns, kept for the filter gradient */
} Layer;

typedef struct {
  int n;
  Layer *layers;
  int64_t batch, params, features, classes, max_act;
  float *g0, *g1; /* gradients of activations, ping-pong */
  float *cols;    /* im2col scratch of the backward pass */
  double *acc;    /* bias-gradient accumulator */
  int64_t acc_len;
} Trainer;

static void trainer_free(Trainer *t) {
  if (t == NULL) return;
  for (int i = 0; i < t->n; i++) {
    if (t->layers[i].kind != L_FLATTEN) free(t->layers[i].out);
    free(t->layers[i].cols);
  }
  free(t->layers);
  free(t->g0);
  free(t->g1);
  free(t->cols);
  free(t->acc);
  free(t);
}

static void finalize_trainer(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  trainer_free((Trainer *)data);
}

static Conv conv_of(const Layer *l, int64_t n) {
  Conv g = {n, l->h, l->w, l->c, l->k, l->k, l->oc, l->pad, l->pad, l->oh, l->ow};
  return g;
}

/* A single im2col chunk for the whole batch: then the forward columns serve the filter gradient. */
static int one_chunk(const Layer *l, int64_t n) {
  const Conv g = conv_of(l, n);
  return chunk_images(&g) >= n;
}

/*
 * createTrainer(layers, inputShape, classes, paramCount, batch): `layers` is a Float64Array of
 * 6 numbers per layer — kind (1 dense, 2 conv, 3 max pool, 4 average pool, 5 flatten), relu,
 * units or output channels, kernel, padding, pooling window. Returns an opaque handle, or throws
 * a RangeError when the shapes do not chain or the parameters do not add up to paramCount.
 */
napi_value create_trainer(napi_env env, napi_callback_info info) {
  ARGS(5)
  double *spec;
  size_t len;
  napi_typedarray_type type;
  bool is_ta = false;
  if (napi_is_typedarray(env, argv[0], &is_ta) != napi_ok || !is_ta ||
      napi_get_typedarray_info(env, argv[0], &type, &len, (void **)&spec, NULL, NULL) != napi_ok ||
      type != napi_float64_array || len % 6 != 0 || len == 0)
    return fail(env, "TypeError", "layers: expected a Float64Array of 6 numbers per layer");
  int64_t shape[3], classes, params, batch;
  for (uint32_t i = 0; i < 3; i++) {
    napi_value v;
    if (napi_get_element(env, argv[1], i, &v) != napi_ok || !dim(env, v, "inputShape", &shape[i])) return NULL;
  }
  if (!dim(env, argv[2], "classes", &classes) || !dim(env, argv[3], "paramCount", &params) ||
      !dim(env, argv[4], "batch", &batch))
    return NULL;
  if (classes < 1 || batch < 1) return fail(env, "RangeError", "classes, batch: expected positive sizes");
  Trainer *t = (Trainer *)calloc(1, sizeof(Trainer));
  if (t == NULL) return fail(env, "Error", "out of memory");
  t->n = (int)(len / 6);
  t->layers = (Layer *)calloc((size_t)t->n, sizeof(Layer));
  t->batch = batch;
  t->classes = classes;
  t->features = shape[0] * shape[1] * shape[2];
  t->max_act = t->features;
  int64_t h = shape[0], w = shape[1], c = shape[2], off = 0, cols_max = 0;
  int seen_params = 0;
  const char *bad = NULL;
  for (int i = 0; t->layers != NULL && i < t->n && bad == NULL; i++) {
    Layer *l = &t->layers[i];
    const double *d = spec + 6 * i;
    l->kind = (int)d[0];
    l->relu = d[1] != 0;
    l->h = h, l->w = w, l->c = c;
    l->need_dx = seen_params;
    if (l->kind == L_DENSE) {
      l->h = l->w = 1, l->c = h * w * c;
      l->oh = l->ow = 1, l->oc = (int64_t)d[2];
      l->woff = off, l->boff = off + l->c * l->oc;
      off = l->boff + l->oc;
    } else if (l->kind == L_CONV) {
      l->k = (int64_t)d[3], l->pad = (int64_t)d[4], l->oc = (int64_t)d[2];
      l->oh = h + 2 * l->pad - l->k + 1, l->ow = w + 2 * l->pad - l->k + 1;
      if (l->k < 1 || l->oh < 1 || l->ow < 1) bad = "layers: a convolution does not fit its input";
      l->woff = off, l->boff = off + l->k * l->k * c * l->oc;
      off = l->boff + l->oc;
    } else if (l->kind == L_MAXPOOL || l->kind == L_AVGPOOL) {
      l->size = (int64_t)d[5];
      if (l->size < 1 || l->size > h || l->size > w) bad = "layers: a pooling window does not fit its input";
      else l->oh = (h - l->size) / l->size + 1, l->ow = (w - l->size) / l->size + 1, l->oc = c;
    } else if (l->kind == L_FLATTEN) {
      l->oh = l->ow = 1, l->oc = h * w * c;
    } else {
      bad = "layers: unknown layer kind";
    }
    if (bad) break;
    if (l->oc < 1) bad = "layers: a layer has no outputs";
    h = l->oh, w = l->ow, c = l->oc;
    const int64_t act = batch * h * w * c;
    if (act > t->max_act) t->max_act = act;
    if (l->kind == L_DENSE || l->kind == L_CONV) seen_params = 1;
    if (l->kind != L_FLATTEN && (l->out = (float *)malloc((size_t)act * sizeof(float))) == NULL)
      bad = "out of memory";
    if (l->kind == L_CONV) {
      const Conv g = conv_of(l, batch);
      const int64_t cf = (int64_t)conv_cols_floats(&g);
      if (cf > cols_max) cols_max = cf;
      if (one_chunk(l, batch) && (l->cols = (float *)malloc((size_t)cf * sizeof(float))) == NULL) bad = "out of memory";
    }
    if ((l->kind == L_DENSE || l->kind == L_CONV) && l->oc > t->acc_len) t->acc_len = l->oc;
  }
  if (t->layers == NULL) bad = "out of memory";
  if (bad == NULL && h * w * c != classes) bad = "layers: the last layer's outputs are not the classes";
  if (bad == NULL && off != params) bad = "paramCount: differs from the layers' parameters";
  if (bad == NULL) {
    t->params = params;
    t->g0 = (float *)malloc((size_t)t->max_act * sizeof(float));
    t->g1 = (float *)malloc((size_t)t->max_act * sizeof(float));
    t->cols = (float *)malloc((size_t)(cols_max > 0 ? cols_max : 1) * sizeof(float));
    t->acc = (double *)malloc((size_t)(t->acc_len > 0 ? t->acc_len : 1) * sizeof(double));
    if (!t->g0 || !t->g1 || !t->cols || !t->acc) bad = "out of memory";
  }
  if (bad != NULL) {
    trainer_free(t);
    return fail(env, bad[0] == 'o' ? "Error" : "RangeError", bad);
  }
  napi_value out;
  if (napi_create_external(env, t, finalize_trainer, NULL, &out) != napi_ok) {
    trainer_free(t);
    return fail(env, "Error", "could not create the trainer");
  }
  return out;
}

/* XNNPACK's average-pooling sum: eight inputs and an accumulator (the 9th input in the first pass). */
static inline float sum9(const float *i, float acc) {
  return ((i[2] + i[3]) + (i[4] + i[5])) + (((i[0] + i[1]) + acc) + (i[6] + i[7]));
}

/*
 * Valid f×f pooling with stride f, NHWC. Average pooling adds a window as tfjs-backend-wasm's
 * XNNPACK kernel does, so that both give the same bits: cells in column-major order, the first
 * nine with sum9, then eight at a time onto the running sum (zeros past f²), then × 1/f².
 */
static void pool_forward(const Layer *l, int64_t n, const float *x, float *y) {
  const int64_t f = l->size, c = l->c, w = l->w, h = l->h, kk = f * f;
  const float scale = 1.0f / (float)kk;
  for (int64_t b = 0; b < n; b++)
    for (int64_t oy = 0; oy < l->oh; oy++)
      for (int64_t ox = 0; ox < l->ow; ox++) {
        float *dst = y + ((b * l->oh + oy) * l->ow + ox) * c;
        const float *src = x + ((b * h + oy * f) * w + ox * f) * c;
        for (int64_t ch = 0; ch < c; ch++) {
          if (l->kind == L_MAXPOOL) {
            float m = src[ch];
            for (int64_t a = 0; a < f; a++)
              for (int64_t e = 0; e < f; e++) {
                const float v = src[(a * w + e) * c + ch];
                m = v > m || v != v ? v : m;
              }
            dst[ch] = m;
            continue;
          }
          float in[9], acc = 0;
          for (int64_t o = 0; o == 0 || o < kk; o += o == 0 ? 9 : 8) {
            const int64_t take = o == 0 ? 9 : 8;
            for (int64_t j = 0; j < take; j++)
              in[j] = o + j < kk ? src[(((o + j) % f) * w + (o + j) / f) * c + ch] : 0.0f;
            acc = sum9(in, o == 0 ? in[8] : acc);
          }
          dst[ch] = acc * scale;
        }
      }
}

/*
 * Mean softmax cross-entropy of z against one-hot labels (as loops.c's softmaxXent computes it
 * for one-hot targets, expression for expression) and its gradient, written to grad.
 */
static double xent(int64_t rows, int64_t cols, const float *z, const int32_t *labels, float *grad) {
  double total = 0;
  const double inv = rows > 0 ? 1.0 / (double)rows : 0;
  for (int64_t r = 0; r < rows; r++) {
    const float *zr = z + r * cols;
    float *gr = grad + r * cols;
    const int64_t t = labels[r];
    double max = zr[0];
    for (int64_t c = 1; c < cols; c++)
      if (zr[c] > max) max = zr[c];
    double e = 0, yz = 0;
    for (int64_t c = 0; c < cols; c++) {
      e += exp((double)zr[c] - max);
      yz += (c == t ? 1.0 : 0.0) * (double)zr[c];
    }
    const double lse = max + log(e);
    total += 1.0 * lse - yz;
    for (int64_t c = 0; c < cols; c++) gr[c] = (float)((exp((double)zr[c] - lse) * 1.0 - (c == t ? 1.0 : 0.0)) * inv);
  }
  return total * inv;
}

typedef struct {
  float *m, *v;
  double wd, b1, b2, step, sq, eps;
} Adam;

/*
 * trainStep(trainer, theta, grad, x, labels, b[, m, v, adam]): forward and backward over the
 * first b ≤ batch examples of x (b × features) with int32 labels; writes ∇θ into grad and
 * returns the mean loss rounded to float32. With m, v and adam (Float64Array [weightDecay, beta1,
 * beta2, stepSize, sqrtBc2, epsilon]) it also takes loops.c's Adam step, layer by layer, once a
 * layer's gradients are complete (same bits as adamStep over the whole vector afterwards).
 */
napi_value train_step(napi_env env, napi_callback_info info) {
  size_t argc = 9;
  napi_value argv[9];
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL;
  if (argc < 6) return fail(env, "TypeError", "expected 6 or 9 arguments");
  Trainer *t;
  if (napi_get_value_external(env, argv[0], (void **)&t) != napi_ok || t == NULL)
    return fail(env, "TypeError", "trainer: expected a trainer from createTrainer");
  int64_t b;
  float *theta, *grad, *x;
  int32_t *labels;
  if (!dim(env, argv[5], "b", &b)) return NULL;
  if (b < 1 || b > t->batch) return fail(env, "RangeError", "b: expected 1 ≤ b ≤ the trainer's batch");
  if (!f32(env, argv[1], "theta", (size_t)t->params, &theta) || !f32(env, argv[2], "grad", (size_t)t->params, &grad) ||
      !f32(env, argv[3], "x", (size_t)(b * t->features), &x) || !i32(env, argv[4], "labels", (size_t)b, &labels))
    return NULL;
  for (int64_t r = 0; r < b; r++)
    if (labels[r] < 0 || labels[r] >= t->classes) return fail(env, "RangeError", "labels: a label is not a class");
  Adam adam = {0};
  if (argc >= 9) {
    double *hp;
    if (!f32(env, argv[6], "m", (size_t)t->params, &adam.m) || !f32(env, argv[7], "v", (size_t)t->params, &adam.v))
      return NULL;
    napi_typedarray_type type;
    size_t len;
    bool is_ta = false;
    if (napi_is_typedarray(env, argv[8], &is_ta) != napi_ok || !is_ta ||
        napi_get_typedarray_info(env, argv[8], &type, &len, (void **)&hp, NULL, NULL) != napi_ok ||
        type != napi_float64_array || len < 6)
      return fail(env, "TypeError", "adam: expected a Float64Array of 6 numbers");
    adam.wd = hp[0], adam.b1 = hp[1], adam.b2 = hp[2], adam.step = hp[3], adam.sq = hp[4], adam.eps = hp[5];
  }

  /* Forward. */
  const float *in = x;
  for (int i = 0; i < t->n; i++) {
    Layer *l = &t->layers[i];
    const int64_t rows = b * l->oh * l->ow;
    if (l->kind == L_DENSE) {
      sgemm_rm(0, 0, b, l->oc, l->c, in, theta + l->woff, 0.0f, l->out);
      bias_act_run(b, l->oc, l->out, theta + l->boff, l->relu, l->out);
    } else if (l->kind == L_CONV) {
      const Conv g = conv_of(l, b);
      conv_run(CONV_FORWARD, &g, in, theta + l->woff, l->out, l->cols ? l->cols : t->cols);
      bias_act_run(rows, l->oc, l->out, theta + l->boff, l->relu, l->out);
    } else if (l->kind == L_FLATTEN) {
      l->out = (float *)in;
    } else {
      pool_forward(l, b, in, l->out);
    }
    in = l->out;
  }
  const double loss = xent(b, t->classes, in, labels, t->g0);

  /* Backward: gy holds ∂L/∂(output of layer i), gx receives ∂L/∂(its input). */
  float *gy = t->g0, *gx = t->g1;
  for (int i = t->n - 1; i >= 0; i--) {
    Layer *l = &t->layers[i];
    const float *input = i == 0 ? x : t->layers[i - 1].out;
    const int64_t rows = b * l->oh * l->ow;
    if (l->kind == L_FLATTEN) continue; /* same memory, same gradient */
    if (l->kind == L_DENSE || l->kind == L_CONV) {
      bias_act_grad_run(rows, l->oc, gy, l->out, l->relu, gy, grad + l->boff, t->acc);
      if (l->kind == L_DENSE) {
        if (l->need_dx) sgemm_rm(0, 1, b, l->c, l->oc, gy, theta + l->woff, 0.0f, gx);
        sgemm_rm(1, 0, l->c, l->oc, b, input, gy, 0.0f, grad + l->woff);
      } else {
        const Conv g = conv_of(l, b);
        if (l->need_dx) conv_run(CONV_INPUT_GRAD, &g, gy, theta + l->woff, gx, t->cols);
        if (l->cols != NULL) { /* the forward columns are still there: the product alone */
          const int64_t kk = l->k * l->k * l->c;
          memset(grad + l->woff, 0, (size_t)(kk * l->oc) * sizeof(float));
          sgemm_rm(1, 0, kk, l->oc, rows, l->cols, gy, 1.0f, grad + l->woff);
        } else {
          conv_run(CONV_FILTER_GRAD, &g, input, gy, grad + l->woff, t->cols);
        }
      }
      if (adam.m != NULL) {
        const int64_t o = l->woff, count = l->boff + l->oc - l->woff;
        adam_loop(theta + o, grad + o, adam.m + o, adam.v + o, count, adam.wd, adam.b1, adam.b2, adam.step, adam.sq,
                  adam.eps);
      }
    } else if (l->need_dx) {
      pool_grad_run(l->kind == L_MAXPOOL, b, l->h, l->w, l->c, l->size, l->size, l->oh, l->ow, gy, input, gx);
    }
    if (!l->need_dx) break; /* nothing before this layer has parameters */
    float *s = gy;
    gy = gx;
    gx = s;
  }
  napi_value out;
  napi_create_double(env, (double)(float)loss, &out);
  return out;
}
