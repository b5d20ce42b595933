/*
 * fedscore's native kernels, the fused training step (see fedscore_kernels.c): one call computes
 * a minibatch's forward pass, softmax cross-entropy and every parameter gradient of a model made
 * of dense, convolution (stride 1, NHWC), valid pooling and flatten layers, reading θ and writing
 * the gradient straight from and into train.ts's flat vectors, and can apply the Adam step to
 * each layer as soon as its gradients are known (loops.c's adamStep, the same bits).
 *
 * Through tfjs the same step takes about 20 kernel dispatches, uploads θ to the wasm heap and
 * copies the gradient back out, each a pass over every parameter (9.4 MB for cnn003's dense
 * layer); here the activations live in buffers the trainer keeps between steps. layers.c has
 * the layers, direct.c the small convolutions, helper.c the second thread.
 *
 * Threads and bits. Each layer's work is cut into two halves fixed by its shape and the batch
 * (par2); a thread whose products may use two threads (the main thread, by default) runs them
 * on itself and a helper, a pool worker runs them in turn. Nothing else differs, so a model
 * trained in a worker has the bits of one trained in the main thread (test/ml/parallel.test.ts).
 * The bits differ from the tfjs path's (other blocks, other summation orders: the gradients agree
 * to float rounding, test/ml/_native_train.test.ts); with the native kernels on, every training
 * goes through this step.
 */
#include "_train.h"

/* A dense layer whose batch × inputs × units multiply-adds reach this is split in two halves. */
#define DENSE_SPLIT_MACS ((double)(1 << 20))

double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

double cpu_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void trainer_free(Trainer *t) {
  if (t == NULL) return;
  helper_stop(t->helper);
  for (int i = 0; t->layers != NULL && i < t->n; i++)
    if (t->layers[i].kind != L_FLATTEN) free(t->layers[i].out);
  free(t->layers);
  free(t->g0);
  free(t->g1);
  for (int h = 0; h < 2; h++) {
    free(t->cols[h]);
    free(t->dwp[h]);
    free(t->acc[h]);
    free(t->prof[h]);
  }
  free(t);
}

static void finalize_trainer(napi_env env, void *data, void *hint) {
  (void)env;
  (void)hint;
  trainer_free((Trainer *)data);
}

/* Runs both halves of a job: on two threads when this thread's products may use two, else in turn. */
static void par2(Trainer *t, void (*fn)(void *, int), Job *job) {
  if (!job->l->split) return fn(job, -1);
  if (blas_threads_here() >= 2 && (t->helper != NULL || (t->helper = helper_start()) != NULL))
    return helper_run(t->helper, fn, job);
  fn(job, 0);
  fn(job, 1);
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
  int64_t h = shape[0], w = shape[1], c = shape[2], off = 0, cols_max = 1, dw_max = 1, acc_max = 1;
  int seen_params = 0;
  const char *bad = t->layers == NULL ? "out of memory" : NULL;
  for (int i = 0; bad == NULL && i < t->n; i++) {
    Layer *l = &t->layers[i];
    const double *d = spec + 6 * i;
    l->kind = (int)d[0];
    l->relu = d[1] != 0;
    l->h = h, l->w = w, l->c = c;
    l->need_dx = seen_params;
    l->split = 1;
    if (l->kind == L_DENSE) {
      l->h = l->w = 1, l->c = h * w * c;
      l->oh = l->ow = 1, l->oc = (int64_t)d[2];
      l->woff = off, l->boff = off + l->c * l->oc;
      off = l->boff + l->oc;
      l->split = (double)batch * (double)l->c * (double)l->oc >= DENSE_SPLIT_MACS;
    } else if (l->kind == L_CONV) {
      l->k = (int64_t)d[3], l->pad = (int64_t)d[4], l->oc = (int64_t)d[2];
      l->oh = h + 2 * l->pad - l->k + 1, l->ow = w + 2 * l->pad - l->k + 1;
      if (l->k < 1 || l->oh < 1 || l->ow < 1) {
        bad = "layers: a convolution does not fit its input";
        break;
      }
      l->woff = off, l->boff = off + l->k * l->k * c * l->oc;
      off = l->boff + l->oc;
      l->chunk = conv_chunk(l);
      l->direct = direct_ok(l);
      const int64_t kk = l->k * l->k * c, cf = l->chunk * l->oh * l->ow * kk, ds = direct_scratch(l);
      if (cf > cols_max) cols_max = cf;
      if (ds > cols_max) cols_max = ds;
      if (kk * l->oc > dw_max) dw_max = kk * l->oc;
    } else if (l->kind == L_MAXPOOL || l->kind == L_AVGPOOL) {
      l->size = (int64_t)d[5];
      if (l->size < 1 || l->size > h || l->size > w) {
        bad = "layers: a pooling window does not fit its input";
        break;
      }
      l->oh = (h - l->size) / l->size + 1, l->ow = (w - l->size) / l->size + 1, l->oc = c;
    } else if (l->kind == L_FLATTEN) {
      l->oh = l->ow = 1, l->oc = h * w * c;
    } else {
      bad = "layers: unknown layer kind";
      break;
    }
    if (l->oc < 1) bad = "layers: a layer has no outputs";
    h = l->oh, w = l->ow, c = l->oc;
    const int64_t act = batch * h * w * c;
    if (act > t->max_act) t->max_act = act;
    if (l->kind == L_DENSE || l->kind == L_CONV) {
      seen_params = 1;
      if (l->oc > acc_max) acc_max = l->oc;
    }
    if (bad == NULL && l->kind != L_FLATTEN && (l->out = (float *)malloc((size_t)act * sizeof(float))) == NULL)
      bad = "out of memory";
  }
  if (bad == NULL && h * w * c != classes) bad = "layers: the last layer's outputs are not the classes";
  if (bad == NULL && off != params) bad = "paramCount: differs from the layers' parameters";
  if (bad == NULL) {
    t->params = params;
    t->g0 = (float *)malloc((size_t)t->max_act * sizeof(float));
    t->g1 = (float *)malloc((size_t)t->max_act * sizeof(float));
    if (!t->g0 || !t->g1) bad = "out of memory";
    for (int k = 0; k < 2; k++) {
      t->cols[k] = (float *)malloc((size_t)cols_max * sizeof(float));
      t->dwp[k] = (float *)malloc((size_t)dw_max * sizeof(float));
      t->acc[k] = (double *)malloc((size_t)acc_max * sizeof(double));
      t->prof[k] = (double *)calloc((size_t)(t->n * P_COUNT + 1), sizeof(double));
      if (!t->cols[k] || !t->dwp[k] || !t->acc[k] || !t->prof[k]) bad = "out of memory";
    }
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

  Job job = {t, NULL, 0, b, x, NULL, NULL, theta, grad, &adam};

  /* Forward. */
  for (int i = 0; i < t->n; i++) {
    Layer *l = &t->layers[i];
    job.l = l, job.li = i;
    if (l->kind == L_FLATTEN)
      l->out = (float *)job.in;
    else
      par2(t, layer_forward, &job);
    job.in = l->out;
  }
  const double t_loss = PROF_START(t);
  const double loss = xent(b, t->classes, job.in, labels, t->g0);
  if (t->profiling) t->prof[0][t->n * P_COUNT] += cpu_ms() - t_loss;

  /* Backward: gy holds ∂L/∂(output of layer i), gx receives ∂L/∂(its input). */
  job.gy = t->g0, job.gx = t->g1;
  for (int i = t->n - 1; i >= 0; i--) {
    Layer *l = &t->layers[i];
    if (l->kind == L_FLATTEN) continue; /* same memory, same gradient */
    job.l = l, job.li = i;
    job.in = i == 0 ? x : t->layers[i - 1].out;
    if (l->kind == L_DENSE) {
      dense_epilogue_grad(&job);
      par2(t, layer_backward, &job);
    } else if (l->kind == L_CONV) {
      par2(t, layer_backward, &job);
      conv_finish(&job);
    } else if (l->need_dx) {
      par2(t, layer_backward, &job);
    }
    if (!l->need_dx) break; /* nothing before this layer has parameters */
    float *s = job.gy;
    job.gy = job.gx;
    job.gx = s;
  }
  napi_value out;
  napi_create_double(env, (double)(float)loss, &out);
  return out;
}

/*
 * trainerProfile(trainer): CPU milliseconds spent since the last call (summed over the two
 * threads), a Float64Array of 6 per layer (forward, bias + ReLU, their gradient, input gradient,
 * parameter gradient, Adam) and the loss last; resets them. The first call turns the profile on
 * (it returns zeros): until then steps read no clock. For benchmarks.
 */
napi_value trainer_profile(napi_env env, napi_callback_info info) {
  ARGS(1)
  Trainer *t;
  if (napi_get_value_external(env, argv[0], (void **)&t) != napi_ok || t == NULL)
    return fail(env, "TypeError", "trainer: expected a trainer from createTrainer");
  const size_t count = (size_t)(t->n * P_COUNT + 1);
  napi_value buf, out;
  void *data;
  if (napi_create_arraybuffer(env, count * sizeof(double), &data, &buf) != napi_ok ||
      napi_create_typedarray(env, napi_float64_array, count, buf, 0, &out) != napi_ok)
    return NULL;
  for (size_t i = 0; i < count; i++) ((double *)data)[i] = t->prof[0][i] + t->prof[1][i];
  t->profiling = 1;
  memset(t->prof[0], 0, count * sizeof(double));
  memset(t->prof[1], 0, count * sizeof(double));
  return out;
}
