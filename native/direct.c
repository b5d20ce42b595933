/*
 * fedscore's native kernels, small convolutions without im2col (for layers.c): a first layer on
 * one or three channels has c·k² = 9…27 taps per output, and im2col then writes 9–25 floats per
 * pixel one short run at a time (1.4 ms per pass for LeNet-5's 5×5 layer at batch 64) for an
 * sgemm whose inner dimension is too short for OpenBLAS's kernels (N = 6: 41 GFLOPS here).
 *
 * Here each image is copied once into planes of padded rows (c × (h + 2p) × (w + 2p)); the
 * forward pass adds w[ky][kx][c][o] · row (a run of ow inputs) onto a plane of output rows,
 * vectorized along the row, then writes the rows back channels-last. The filter gradient is a
 * dot product of each shifted input plane with the output gradient, transposed to planes, in
 * LANES fixed partial sums added in a fixed order: the result does not depend on the vector
 * width the compiler chose (target_clones), so every thread and every clone gives the same bits.
 */
#include "_train.h"

#define HOT __attribute__((target_clones("avx512f", "avx2", "default")))
#define LANES 64

int direct_ok(const Layer *l) {
  return l->c * l->k * l->k <= DIRECT_MAX_TAPS && l->oc <= 256;
}

/* Padded planes, then oc planes of oh rows of wp (output rows at the padded width, see below). */
int64_t direct_scratch(const Layer *l) {
  const int64_t hp = l->h + 2 * l->pad, wp = l->w + 2 * l->pad;
  return l->c * hp * wp + l->k + l->oc * l->oh * wp;
}

/* Image b of x (h × w × c) as c planes of (h + 2p) × (w + 2p), zero outside, and k zeros of slack. */
static void pad_planes(const Layer *l, const float *x, int64_t b, float *p) {
  const int64_t hp = l->h + 2 * l->pad, wp = l->w + 2 * l->pad, c = l->c;
  memset(p, 0, (size_t)(c * hp * wp + l->k) * sizeof(float));
  const float *img = x + b * l->h * l->w * c;
  for (int64_t y = 0; y < l->h; y++)
    for (int64_t xx = 0; xx < l->w; xx++)
      for (int64_t ch = 0; ch < c; ch++) p[(ch * hp + y + l->pad) * wp + xx + l->pad] = img[(y * l->w + xx) * c + ch];
}

/*
 * An output plane is computed at the padded width wp: element oy·wp + ox for ox < ow is the
 * output, the last wp − ow of each row are discarded. Then a tap is one run of oh·wp elements,
 * plane[i] += w · input[i + ky·wp + kx] — a long vectorized loop instead of oh short ones.
 */
HOT static void forward_planes(int64_t taps, int64_t k, int64_t c, int64_t oc, int64_t hp, int64_t wp, int64_t n,
                               const float *p, const float *w, float *acc) {
  memset(acc, 0, (size_t)(oc * n) * sizeof(float));
  for (int64_t t = 0; t < taps; t++) {
    const int64_t ky = t / (k * c), kx = t / c % k, ch = t % c;
    const float *src = p + (ch * hp + ky) * wp + kx;
    for (int64_t o = 0; o < oc; o++) {
      const float wv = w[t * oc + o];
      float *a = acc + o * n;
      for (int64_t i = 0; i < n; i++) a[i] += wv * src[i];
    }
  }
}

/*
 * With 16 or more output channels the output stays channels-last: per output pixel, a vector of
 * 16 channels gathers c·k² taps (input value × weight row), so no plane is transposed. Pixels are
 * indexed at the padded width as above; a tap's input is at pixel + off[t].
 */
#define OB 16
typedef float v16 __attribute__((vector_size(4 * OB), aligned(4))); /* 16 lanes, unaligned loads */

HOT static void forward_nhwc(int64_t taps, const int64_t *off, int64_t oc, int64_t oh, int64_t ow, int64_t wp,
                             const float *p, const float *w, float *y) {
  for (int64_t o0 = 0; o0 + OB <= oc; o0 += OB)
    for (int64_t oy = 0; oy < oh; oy++)
      for (int64_t ox = 0; ox < ow; ox++) {
        const float *src = p + oy * wp + ox;
        v16 a = {0};
        for (int64_t t = 0; t < taps; t++) a += src[off[t]] * *(const v16 *)(w + t * oc + o0);
        *(v16 *)(y + (oy * ow + ox) * oc + o0) = a;
      }
  for (int64_t o = oc - oc % OB; o < oc; o++) /* channels past the last full vector */
    for (int64_t i = 0; i < oh * ow; i++) {
      const float *src = p + i / ow * wp + i % ow;
      float a = 0;
      for (int64_t t = 0; t < taps; t++) a += src[off[t]] * w[t * oc + o];
      y[i * oc + o] = a;
    }
}

/*
 * dw[t][o] (+)= Σ over pixels, in pixel order, of input[pixel + off[t]] · dz[pixel][o]; TB taps
 * at a time, each its own accumulator, so that the additions of different taps overlap.
 */
#define TB 8
HOT static void grad_nhwc(int64_t taps, const int64_t *off, int64_t oc, int64_t oh, int64_t ow, int64_t wp,
                          const float *p, const float *dz, float *dw, int add) {
  for (int64_t o0 = 0; o0 + OB <= oc; o0 += OB)
    for (int64_t t0 = 0; t0 < taps; t0 += TB) {
      const int64_t nt = taps - t0 < TB ? taps - t0 : TB;
      v16 a[TB] = {{0}};
      for (int64_t t = 0; add && t < nt; t++) a[t] = *(const v16 *)(dw + (t0 + t) * oc + o0);
      for (int64_t oy = 0; oy < oh; oy++)
        for (int64_t ox = 0; ox < ow; ox++) {
          const float *src = p + oy * wp + ox;
          const v16 g = *(const v16 *)(dz + (oy * ow + ox) * oc + o0);
          if (nt == TB)
            for (int t = 0; t < TB; t++) a[t] += src[off[t0 + t]] * g;
          else
            for (int64_t t = 0; t < nt; t++) a[t] += src[off[t0 + t]] * g;
        }
      for (int64_t t = 0; t < nt; t++) *(v16 *)(dw + (t0 + t) * oc + o0) = a[t];
    }
  for (int64_t o = oc - oc % OB; o < oc; o++) /* channels past the last full vector */
    for (int64_t t = 0; t < taps; t++) {
      const float *src = p + off[t];
      float a = add ? dw[t * oc + o] : 0;
      for (int64_t i = 0; i < oh * ow; i++) a += src[i / ow * wp + i % ow] * dz[i * oc + o];
      dw[t * oc + o] = a;
    }
}

static void tap_offsets(const Layer *l, int64_t *off) {
  const int64_t hp = l->h + 2 * l->pad, wp = l->w + 2 * l->pad;
  for (int64_t t = 0; t < l->k * l->k * l->c; t++) {
    const int64_t ky = t / (l->k * l->c), kx = t / l->c % l->k, ch = t % l->c;
    off[t] = (ch * hp + ky) * wp + kx;
  }
}

/* y[b] (oh × ow × oc) for images [n0, n0 + cnt) of x, without bias. */
void direct_forward(const Layer *l, const float *x, int64_t n0, int64_t cnt, const float *w, float *y, float *scratch) {
  const int64_t hp = l->h + 2 * l->pad, wp = l->w + 2 * l->pad, oc = l->oc, ow = l->ow, n = l->oh * wp;
  float *p = scratch, *acc = scratch + l->c * hp * wp + l->k;
  int64_t off[DIRECT_MAX_TAPS];
  tap_offsets(l, off);
  for (int64_t b = n0; b < n0 + cnt; b++) {
    pad_planes(l, x, b, p);
    if (oc >= OB) {
      forward_nhwc(l->k * l->k * l->c, off, oc, l->oh, ow, wp, p, w, y + b * l->oh * ow * oc);
      continue;
    }
    forward_planes(l->k * l->k * l->c, l->k, l->c, oc, hp, wp, n, p, w, acc);
    float *dst = y + b * l->oh * ow * oc;
    for (int64_t oy = 0; oy < l->oh; oy++)
      for (int64_t ox = 0; ox < ow; ox++)
        for (int64_t o = 0; o < oc; o++) dst[(oy * ow + ox) * oc + o] = acc[o * n + oy * wp + ox];
  }
}

/*
 * dw[t][o] (+)= Σ_i input[i + shift(t)] · d[o][i] over the oh·wp elements of the output-gradient
 * planes d (zeros in the discarded columns), in LANES fixed partial sums added in a fixed order.
 */
HOT static void grad_planes(int64_t taps, int64_t k, int64_t c, int64_t oc, int64_t hp, int64_t wp, int64_t n,
                            const float *p, const float *d, float *dw, int add) {
  for (int64_t t = 0; t < taps; t++) {
    const int64_t ky = t / (k * c), kx = t / c % k, ch = t % c;
    const float *src = p + (ch * hp + ky) * wp + kx;
    for (int64_t o = 0; o < oc; o++) {
      const float *g = d + o * n;
      float part[LANES] = {0};
      int64_t i = 0;
      for (; i + LANES <= n; i += LANES)
        for (int q = 0; q < LANES; q++) part[q] += src[i + q] * g[i + q];
      for (int q = 0; i + q < n; q++) part[q] += src[i + q] * g[i + q];
      for (int s = LANES / 2; s > 0; s /= 2)
        for (int q = 0; q < s; q++) part[q] += part[q + s];
      dw[t * oc + o] = add ? dw[t * oc + o] + part[0] : part[0];
    }
  }
}

/*
 * dw (k × k × c × oc) = Σ over images [n0, n0 + cnt) of the filter gradient, added to dw unless
 * `first` (then written).
 */
void direct_filter_grad(const Layer *l, const float *x, const float *dz, int64_t n0, int64_t cnt, float *dw, int first,
                        float *scratch) {
  const int64_t hp = l->h + 2 * l->pad, wp = l->w + 2 * l->pad, oc = l->oc, ow = l->ow, n = l->oh * wp;
  const int64_t pix = l->oh * ow;
  float *p = scratch, *d = scratch + l->c * hp * wp + l->k;
  int64_t off[DIRECT_MAX_TAPS];
  tap_offsets(l, off);
  for (int64_t b = n0; b < n0 + cnt; b++) {
    pad_planes(l, x, b, p);
    const float *g = dz + b * pix * oc;
    if (oc >= OB) {
      grad_nhwc(l->k * l->k * l->c, off, oc, l->oh, ow, wp, p, g, dw, !(first && b == n0));
      continue;
    }
    memset(d, 0, (size_t)(oc * n) * sizeof(float));
    for (int64_t oy = 0; oy < l->oh; oy++)
      for (int64_t ox = 0; ox < ow; ox++)
        for (int64_t o = 0; o < oc; o++) d[o * n + oy * wp + ox] = g[(oy * ow + ox) * oc + o];
    grad_planes(l->k * l->k * l->c, l->k, l->c, oc, hp, wp, n, p, d, dw, !(first && b == n0));
  }
}
