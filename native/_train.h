/*
 * Internal to native/: what the fused training step's files share — train.c (the trainer and
 * its Node-API functions), layers.c (each layer's forward and backward pass over a range of
 * images, units or weight rows) and helper.c (the second thread that runs the other half).
 */
#ifndef FEDSCORE_TRAIN_H
#define FEDSCORE_TRAIN_H

#include "_fedscore.h"

enum { L_DENSE = 1, L_CONV = 2, L_MAXPOOL = 3, L_AVGPOOL = 4, L_FLATTEN = 5 };

/* Phases of a layer in the profile (trainerProfile), in CPU milliseconds summed over threads. */
#define PROF_START(t) ((t)->profiling ? cpu_ms() : 0.0)
enum { P_FORWARD, P_EPILOGUE, P_EPILOGUE_GRAD, P_INPUT_GRAD, P_PARAM_GRAD, P_ADAM, P_COUNT };

typedef struct {
  int kind, relu, need_dx, split;
  int direct;           /* convolutions: direct.c's kernels (forward, filter gradient) instead of im2col */
  int64_t h, w, c;      /* input shape (dense: 1 × 1 × inputs) */
  int64_t oh, ow, oc;   /* output shape */
  int64_t k, pad, size; /* convolution kernel and padding; pooling window (= stride) */
  int64_t chunk;        /* convolutions: images per im2col chunk */
  int64_t woff, boff;   /* offsets of the weight and the bias in θ */
  float *out;           /* batch × output; for flatten, its input */
} Layer;

typedef struct {
  float *m, *v; /* NULL: no Adam step, the gradient stays in grad for the caller */
  double wd, b1, b2, step, sq, eps;
} Adam;

typedef struct Helper Helper;

typedef struct {
  int n;
  Layer *layers;
  int64_t batch, params, features, classes, max_act;
  float *g0, *g1;   /* gradients of activations, ping-pong */
  float *cols[2];   /* per-half im2col columns */
  float *dwp[2];    /* per-half partial filter gradients */
  double *acc[2];   /* per-half bias-gradient accumulators */
  double *prof[2];  /* per-half profile: P_COUNT per layer, then the loss */
  int profiling;    /* set by the first trainerProfile call */
  Helper *helper;   /* started at the first step that may use two threads */
} Trainer;

/* One layer's work in a step, split in two fixed halves (layers.c; run by train.c's par2). */
typedef struct {
  Trainer *t;
  Layer *l;
  int li;
  int64_t b;
  const float *in; /* the layer's input (the examples for layer 0) */
  float *gy, *gx;  /* ∂L/∂output (overwritten by ∂L/∂pre-activation), ∂L/∂input */
  float *theta, *grad;
  const Adam *adam;
} Job;

/* The range [lo, hi) of `count` items that half h ∈ {0, 1} takes; h = -1: all of them. */
static inline void half_range(int64_t count, int h, int64_t *lo, int64_t *hi) {
  *lo = h < 0 ? 0 : count * h / 2;
  *hi = h < 0 ? count : count * (h + 1) / 2;
}

double now_ms(void);
/* The calling thread's CPU time in milliseconds (the profile's clock: it leaves out time spent waiting for a core). */
double cpu_ms(void);
void layer_forward(void *job, int half);
void layer_backward(void *job, int half);
/* After both halves of a convolution's backward pass: the filter and bias gradients, then Adam. */
void conv_finish(Job *j);
/* Before the halves of a dense layer's backward pass: ReLU mask, bias gradient, the bias's Adam step. */
void dense_epilogue_grad(Job *j);
/* Images per im2col chunk of a convolution. */
int64_t conv_chunk(const Layer *l);

/* direct.c: convolutions with at most DIRECT_MAX_TAPS = c·k² taps per output, without im2col. */
#define DIRECT_MAX_TAPS 32
int direct_ok(const Layer *l);
int64_t direct_scratch(const Layer *l);
void direct_forward(const Layer *l, const float *x, int64_t n0, int64_t cnt, const float *w, float *y, float *scratch);
void direct_filter_grad(const Layer *l, const float *x, const float *dz, int64_t n0, int64_t cnt, float *dw, int first,
                        float *scratch);

Helper *helper_start(void);
void helper_run(Helper *h, void (*fn)(void *, int), void *arg);
void helper_stop(Helper *h);

#endif
