/*
 * Internal to native/: what the addon's files share — the includes, OpenBLAS's thread
 * controls, the argument checks of fedscore_kernels.c, the scratch buffer, the thread setting of
 * products.c and every Node-API function that fedscore_kernels.c registers. Nothing here is
 * part of the addon's interface (that is the object fedscore_kernels.c's NAPI_MODULE_INIT
 * returns); the build compiles with -fvisibility=hidden, so none of these names is exported.
 */
#ifndef FEDSCORE_INTERNAL_H
#define FEDSCORE_INTERNAL_H

#define _POSIX_C_SOURCE 200809L
#define NAPI_VERSION 8
#include <cblas.h>
#include <math.h>
#include <node_api.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern void openblas_set_num_threads(int);
extern int openblas_get_num_threads(void);
extern char *openblas_get_config(void);

/* isa.c: the instruction sets of the coalition kernel and the narrow products (all give the same bits). */
enum { ISA_AUTO, ISA_SCALAR, ISA_AVX2, ISA_AVX512 };
/* The instruction set for `asked` (an ISA_*; ISA_AUTO: the best the processor has, within setIsa's
 * cap), or −1 when the processor lacks it. */
int pick_isa(int asked);
napi_value set_isa(napi_env env, napi_callback_info info);

/* narrow.c: C[m×n] = A·B (row-major, no transposes) for n ≤ NARROW_MAX, one FMA chain per entry. */
#define NARROW_MAX 16
void narrow_product(int64_t m, int64_t n, int64_t k, const float *a, const float *b, float *c);

/* Large products are cut into fixed blocks that threads take from a queue (products.c, "Threads"). */
#define MAX_THREADS 256
/* Threads for this process's large products (products.c; 0 until NAPI_MODULE_INIT sets the cores). */
extern int threads_large;
/* products.c: threads for the calling thread's large products (setLocalThreads, else threads_large), 1..MAX_THREADS. */
int large_threads(void);
/* products.c: fn(arg) on the calling thread and threads − 1 helper threads, all joined before it returns. */
void run_on_threads(int threads, void *(*fn)(void *), void *arg);
/* products.c: the fixed blocks of an m×n×k product (1: whole), a function of the shape only. */
int product_blocks(int64_t m, int64_t n, int64_t k);

/* fedscore_kernels.c: argument checks (each throws a TypeError/RangeError naming the argument). */
napi_value fail(napi_env env, const char *kind, const char *msg);
int f32(napi_env env, napi_value v, const char *name, size_t need, float **out);
int i32(napi_env env, napi_value v, const char *name, size_t need, int32_t **out);
int dim(napi_env env, napi_value v, const char *name, int64_t *out);
int num(napi_env env, napi_value v, const char *name, double *out);
/* fedscore_kernels.c: the environment's scratch buffer of at least `floats` floats (NULL: out of memory). */
float *scratch(napi_env env, size_t floats);

#define ARGS(n)                                                                 \
  size_t argc = (n);                                                            \
  napi_value argv[(n)];                                                         \
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok) return NULL; \
  if (argc < (n)) return fail(env, "TypeError", "expected " #n " arguments");

/* products.c: OpenBLAS products. */
/* Convolution geometry (stride 1, NHWC): batch, input, kernel, output channels, top/left padding, output. */
typedef struct {
  int64_t n, h, w, c, kh, kw, o, pt, pl, oh, ow;
} Conv;
enum { CONV_FORWARD, CONV_FILTER_GRAD, CONV_INPUT_GRAD };
/* C = op(A)·op(B) + beta·C, row-major, in the fixed blocks of products.c ("Threads"). */
void sgemm_rm(int ta, int tb, int64_t m, int64_t n, int64_t k, const float *a, const float *b, float beta, float *c);
int64_t chunk_images(const Conv *g);
int blas_threads_here(void);
size_t conv_cols_floats(const Conv *g);
void im2col(const Conv *g, const float *x, int64_t n0, int64_t count, float *cols);
void col2im(const Conv *g, const float *cols, int64_t n0, int64_t count, float *dx);
void conv_run(int mode, const Conv *g, const float *p, const float *q, float *out, float *cols);
napi_value gemm(napi_env env, napi_callback_info info);
napi_value conv_forward(napi_env env, napi_callback_info info);
napi_value conv_filter_grad(napi_env env, napi_callback_info info);
napi_value conv_input_grad(napi_env env, napi_callback_info info);
napi_value set_threads(napi_env env, napi_callback_info info);
napi_value set_local_threads(napi_env env, napi_callback_info info);
napi_value product_blocks_js(napi_env env, napi_callback_info info);

/* loops.c: plain C loops (the cores also serve train.c). */
void adam_loop(float *theta, const float *grad, float *m, float *v, int64_t count, double wd, double b1, double b2,
               double step, double sq, double eps);
void bias_act_run(int64_t rows, int64_t cols, const float *z, const float *bias, int relu, float *y);
void bias_act_grad_run(int64_t rows, int64_t cols, const float *dy, const float *y, int relu, float *dz, float *db,
                       double *acc);
void pool_grad_run(int mx, int64_t n, int64_t h, int64_t w, int64_t c, int64_t f, int64_t st, int64_t oh, int64_t ow,
                   const float *dy, const float *x, float *dx);
napi_value adam_step(napi_env env, napi_callback_info info);
napi_value affine_relu(napi_env env, napi_callback_info info);
napi_value reduce_logits(napi_env env, napi_callback_info info);
napi_value softmax_xent(napi_env env, napi_callback_info info);
napi_value bias_act(napi_env env, napi_callback_info info);
napi_value bias_act_grad(napi_env env, napi_callback_info info);
napi_value pool_grad(napi_env env, napi_callback_info info);

/* coalitions.c and coalition_kernels.c: coalition models of a one-hidden-layer MLP. */
napi_value eval_coalitions(napi_env env, napi_callback_info info);
napi_value coalition_panels(napi_env env, napi_callback_info info);

/* train.c: the fused training step. */
napi_value create_trainer(napi_env env, napi_callback_info info);
napi_value train_step(napi_env env, napi_callback_info info);
napi_value trainer_profile(napi_env env, napi_callback_info info);

#endif
