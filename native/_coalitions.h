/*
 * Internal to native/: what coalitions.c (the walk over coalitions and test rows) and
 * coalition_kernels.c (the vector loops) share. See coalitions.c for the method.
 */
#ifndef FEDSCORE_COALITIONS_H
#define FEDSCORE_COALITIONS_H

#include "_fedscore.h"

#define PANEL 16           /* rows per panel: one AVX-512 vector */
#define BLOCK (2 * PANEL)  /* rows per block */
#define MAX_CLASSES 16

/* One evalCoalitions call (coalitions.c documents the fields' layouts). */
typedef struct {
  int64_t n, rows, hidden, classes, head, count, chunk, chunks;
  const float *panels, *head0, *heads;
  const double *a;
  double s_add; /* additive convention: the fixed s; < 0 for FedAvg */
  const int32_t *labels, *offsets, *members;
  uint16_t *label_masks; /* AVX-512 counting: per panel and class, the rows of that class */
  int all, with_loss, isa;
  int64_t gray;      /* 0: member-list prefix order; P ≥ 1: Gray-code order, re-anchored every P coalitions */
  const float *neg;  /* Gray-code order: −Qᵢ's panels (n × rowsPad × hidden) */
  int32_t *counts;
  double *loss;
  int64_t next;
  int failed;
} Job;

/* The instruction set for `asked` (an ISA_*, see isa.c), or −1 when the processor lacks it. */
int coal_pick_isa(int asked);
/* h = relu(p0 + s·(base + q)) over len floats, storing base + q; the variants without the store,
 * without base, without either. */
void coal_hidden_sum(int64_t len, const float *p0, const float *base, const float *q, float *store, float s, float *h);
void coal_hidden_sum_nostore(int64_t len, const float *p0, const float *base, const float *q, float s, float *h);
void coal_hidden_one(int64_t len, const float *p0, const float *q, float s, float *h);
void coal_hidden_none(int64_t len, const float *p0, float *h);
void coal_add_into(int64_t len, const float *x, const float *y, float *out);
/* z[c·BLOCK + r] = h·w for the block's 32 rows (h: two panels), every class. */
void coal_product(const Job *job, const float *h, const float *w, float *z);
/* coal_hidden_sum + coal_product in one pass (two full panels; store may be NULL); 0 when the
 * job's instruction set or classes do not allow it. */
int coal_fused(const Job *job, const float *p0, const float *base, const float *q, float *store, float s,
               const float *w, float *z);
/* The block's logits z (+ bias) of `rows` rows from r0 into per-class correct counts and the loss
 * (when loss is not NULL); the AVX-512 version counts only, from job->label_masks. */
void coal_reduce_block(const Job *job, const float *z, const float *bias, int64_t r0, int64_t rows,
                       int32_t *counts, double *loss);
void coal_count_block512(const Job *job, const float *z, const float *bias, int64_t r0, int64_t rows,
                         int32_t *counts);

#endif
