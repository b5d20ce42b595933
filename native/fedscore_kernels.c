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
 *
 * Several files, one addon (scripts/build-native.mjs compiles every native/*.c into
 * fedscore_kernels.node): this one holds the argument checks and the scratch buffer the kernels
 * share, info() and the registration; products.c the OpenBLAS products and convolutions; loops.c
 * the plain C loops; coalitions.c and coalition_kernels.c the coalition models of a
 * one-hidden-layer MLP; narrow.c the products with few columns (output layers); isa.c the
 * instruction set of the kernels that choose one (setIsa).
 * The internal header _fedscore.h declares what they share.
 */
#include "_fedscore.h"

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

float *scratch(napi_env env, size_t floats) {
  Scratch *s = NULL;
  if (napi_get_instance_data(env, (void **)&s) != napi_ok || s == NULL) return NULL;
  if (s->cap < floats) {
    free(s->buf);
    s->buf = (float *)malloc(floats * sizeof(float));
    s->cap = s->buf ? floats : 0;
  }
  return s->buf;
}

napi_value fail(napi_env env, const char *kind, const char *msg) {
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

int f32(napi_env env, napi_value v, const char *name, size_t need, float **out) {
  return typed(env, v, name, need, napi_float32_array, "a Float32Array", (void **)out);
}

int i32(napi_env env, napi_value v, const char *name, size_t need, int32_t **out) {
  return typed(env, v, name, need, napi_int32_array, "an Int32Array", (void **)out);
}

/* A non-negative integer argument. */
int dim(napi_env env, napi_value v, const char *name, int64_t *out) {
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


/* A number argument (any finite double). */
int num(napi_env env, napi_value v, const char *name, double *out) {
  char msg[160];
  if (napi_get_value_double(env, v, out) != napi_ok || !(*out == *out) || *out - *out != 0) {
    snprintf(msg, sizeof msg, "%s: expected a finite number", name);
    fail(env, "RangeError", msg);
    return 0;
  }
  return 1;
}
/* info(): { library, config, threads, isa } (isa: what isa.c picks now, 1 portable C, 2 AVX2, 3 AVX-512). */
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
  napi_create_int32(env, pick_isa(ISA_AUTO), &v);
  napi_set_named_property(env, out, "isa", v);
  return out;
}

NAPI_MODULE_INIT() {
  if (openblas_get_num_threads() != 1) openblas_set_num_threads(1);
  if (threads_large == 0) {
    const long cores = sysconf(_SC_NPROCESSORS_ONLN);
    threads_large = cores < 1 ? 1 : (cores > MAX_THREADS ? MAX_THREADS : (int)cores);
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
      {"evalCoalitions", NULL, eval_coalitions, NULL, NULL, NULL, napi_enumerable, NULL},
      {"coalitionPanels", NULL, coalition_panels, NULL, NULL, NULL, napi_enumerable, NULL},
      {"softmaxXent", NULL, softmax_xent, NULL, NULL, NULL, napi_enumerable, NULL},
      {"biasAct", NULL, bias_act, NULL, NULL, NULL, napi_enumerable, NULL},
      {"biasActGrad", NULL, bias_act_grad, NULL, NULL, NULL, napi_enumerable, NULL},
      {"poolGrad", NULL, pool_grad, NULL, NULL, NULL, napi_enumerable, NULL},
      {"createTrainer", NULL, create_trainer, NULL, NULL, NULL, napi_enumerable, NULL},
      {"trainStep", NULL, train_step, NULL, NULL, NULL, napi_enumerable, NULL},
      {"trainerProfile", NULL, trainer_profile, NULL, NULL, NULL, napi_enumerable, NULL},
      {"adamStep", NULL, adam_step, NULL, NULL, NULL, napi_enumerable, NULL},
      {"setLocalThreads", NULL, set_local_threads, NULL, NULL, NULL, napi_enumerable, NULL},
      {"productBlocks", NULL, product_blocks_js, NULL, NULL, NULL, napi_enumerable, NULL},
      {"setThreads", NULL, set_threads, NULL, NULL, NULL, napi_enumerable, NULL},
      {"setIsa", NULL, set_isa, NULL, NULL, NULL, napi_enumerable, NULL},
      {"info", NULL, blas_info, NULL, NULL, NULL, napi_enumerable, NULL},
  };
  napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
  return exports;
}
