/*
 * fedscore's native kernels, the plain C loops (see fedscore_kernels.c): the Adam step, bias +
 * ReLU and its gradient, the coalition evaluator's affine ReLU, the logits reduction, the softmax
 * cross-entropy and the pooling gradient.
 */
#include "_fedscore.h"

/*
 * adamStep(theta, grad, m, v, count, wd, beta1, beta2, stepSize, sqrtBc2, eps): one step of
 * PyTorch's Adam with L2 weight decay over `count` parameters, in double precision and in the
 * order of train.ts's JavaScript loop, so both give the same float32 bits (built with
 * -ffp-contract=off: no fused multiply-adds).
 */
void adam_loop(float *theta, const float *grad, float *m, float *v, int64_t count, double wd, double b1, double b2,
               double step, double sq, double eps) __attribute__((target_clones("avx512f", "avx2", "default")));
void adam_loop(float *restrict theta, const float *restrict grad, float *restrict m, float *restrict v,
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

napi_value adam_step(napi_env env, napi_callback_info info) {
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
napi_value affine_relu(napi_env env, napi_callback_info info) {
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
napi_value reduce_logits(napi_env env, napi_callback_info info) {
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
napi_value softmax_xent(napi_env env, napi_callback_info info) {
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
void bias_act_run(int64_t rows, int64_t cols, const float *z, const float *bias, int relu, float *y) {
  for (int64_t r = 0; r < rows; r++) {
    const float *zr = z + r * cols;
    float *yr = y + r * cols;
    for (int64_t c = 0; c < cols; c++) {
      const float v = zr[c] + bias[c];
      yr[c] = relu ? relu_f(v) : v;
    }
  }
}

napi_value bias_act(napi_env env, napi_callback_info info) {
  ARGS(6)
  int64_t rows, cols, relu;
  float *z, *bias, *y;
  if (!dim(env, argv[0], "rows", &rows) || !dim(env, argv[1], "cols", &cols) || !dim(env, argv[4], "relu", &relu) ||
      !f32(env, argv[2], "z", (size_t)(rows * cols), &z) || !f32(env, argv[3], "bias", (size_t)cols, &bias) ||
      !f32(env, argv[5], "y", (size_t)(rows * cols), &y))
    return NULL;
  bias_act_run(rows, cols, z, bias, (int)relu, y);
  return NULL;
}

/*
 * biasActGrad(rows, cols, dy, y, relu, dz, dbias): the gradient of biasAct. dz = dy where
 * y > 0 (relu) or everywhere, and dbias[c] = Σ_r dz[r][c], summed in double.
 */
void bias_act_grad_run(int64_t rows, int64_t cols, const float *dy, const float *y, int relu, float *dz, float *db,
                       double *acc) {
  memset(acc, 0, (size_t)cols * sizeof(double));
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
}

napi_value bias_act_grad(napi_env env, napi_callback_info info) {
  ARGS(7)
  int64_t rows, cols, relu;
  float *dy, *y, *dz, *db;
  if (!dim(env, argv[0], "rows", &rows) || !dim(env, argv[1], "cols", &cols) || !dim(env, argv[4], "relu", &relu) ||
      !f32(env, argv[2], "dy", (size_t)(rows * cols), &dy) || !f32(env, argv[3], "y", (size_t)(rows * cols), &y) ||
      !f32(env, argv[5], "dz", (size_t)(rows * cols), &dz) || !f32(env, argv[6], "dbias", (size_t)cols, &db))
    return NULL;
  double *acc = (double *)malloc((cols > 0 ? (size_t)cols : 1) * sizeof(double));
  if (acc == NULL) return fail(env, "Error", "out of memory");
  bias_act_grad_run(rows, cols, dy, y, (int)relu, dz, db, acc);
  free(acc);
  return NULL;
}

/*
 * poolGrad(max, n, h, w, c, f, s, oh, ow, dy, x, dx): gradient of a valid f×f pooling with
 * stride s (NHWC). Average: each window spreads dy/f² over its cells. Max: dy goes to the first
 * largest cell of the window in row-major order, as tfjs's cpu backend does.
 */
void pool_grad_run(int mx, int64_t n, int64_t h, int64_t w, int64_t c, int64_t f, int64_t st, int64_t oh, int64_t ow,
                   const float *dy, const float *x, float *dx) {
  const size_t xs = (size_t)(n * h * w * c);
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
}

napi_value pool_grad(napi_env env, napi_callback_info info) {
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
  pool_grad_run((int)mx, n, h, w, c, f, st, oh, ow, dy, x, dx);
  return NULL;
}
