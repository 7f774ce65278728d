/* The front summation (see tdbem_front_ref.h): the slices turned into one CSR matrix per k, and
 * s_n accumulated matrix by matrix with sparse matrix-vector products. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "se_error.h"
#include "tdbem_front_ref.h"

void se_tdbem_front_free(se_tdbem_front *f) {
  if (!f)
    return;
  free(f->row_ptr);
  free(f->col);
  free(f->val);
  memset(f, 0, sizeof *f);
}

/* Checks row-vector r of the slices: its row in [0, N) and its k in [1, kmax]. */
static int check_rowvector(const se_tdbem_slices *s, int64_t j, int64_t r, se_error *err) {
  const int64_t i = s->row[r], ks = s->kstart[r], d = s->val_ptr[r + 1] - s->val_ptr[r];
  if (i < 0 || i >= s->n)
    SE_FAIL(err, SE_ERR_INPUT, "slice %lld, row-vector %lld: row %lld outside [0, %lld)",
            (long long)(s->first + j), (long long)r, (long long)i, (long long)s->n);
  if (ks < 1 || d < 0 || ks + d - 1 > s->kmax)
    SE_FAIL(err, SE_ERR_INPUT,
            "slice %lld, row-vector %lld: k from %lld to %lld, outside [1, kmax = %lld]",
            (long long)(s->first + j), (long long)r, (long long)ks, (long long)(ks + d - 1),
            (long long)s->kmax);
  return SE_OK;
}

int se_tdbem_front_create(const se_tdbem_slices *s, se_tdbem_front *f, se_error *err) {
  if (!s || !f)
    SE_FAIL(err, SE_ERR_ARG, "front: no slices or no output given");
  memset(f, 0, sizeof *f);
  if (s->precision != SE_PRECISION_DOUBLE && s->precision != SE_PRECISION_SINGLE)
    SE_FAIL(err, SE_ERR_ARG, "front: unknown precision %d", (int)s->precision);
  if (s->n < 0 || s->kmax < 1 || s->first < 0 || s->count < 0 || s->first + s->count > s->n)
    SE_FAIL(err, SE_ERR_ARG, "front: bad sizes N = %lld, kmax = %lld, interval [%lld, +%lld)",
            (long long)s->n, (long long)s->kmax, (long long)s->first, (long long)s->count);
  f->precision = s->precision;
  f->n = s->n;
  f->kmax = s->kmax;
  f->first = s->first;
  f->count = s->count;
  const int64_t N = s->n, stride = N + 1;
  SE_CALLOC(err, f->row_ptr, (size_t)(s->kmax * stride), "the front row pointers");
  /* entries per (k, i) in row_ptr[(k - 1) * stride + i + 1], then running sums over all k */
  for (int64_t j = 0; j < s->count; j++)
    for (int64_t r = s->slice_ptr[j]; r < s->slice_ptr[j + 1]; r++) {
      SE_TRY(check_rowvector(s, j, r, err));
      for (int64_t k = s->kstart[r]; k < s->kstart[r] + s->val_ptr[r + 1] - s->val_ptr[r]; k++)
        f->row_ptr[(k - 1) * stride + s->row[r] + 1]++;
    }
  int64_t total = 0;
  for (int64_t k = 0; k < s->kmax; k++) {
    int64_t *rp = f->row_ptr + k * stride;
    rp[0] = total;
    for (int64_t i = 0; i < N; i++) {
      total += rp[i + 1];
      rp[i + 1] = total;
    }
  }
  f->nnz = total;
  const size_t size = s->precision == SE_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
  int64_t *next;
  SE_CALLOC(err, f->col, (size_t)total, "the front columns");
  f->val = calloc(total ? (size_t)total : 1, size);
  if (!f->val)
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory allocating %lld front values", (long long)total);
  SE_CALLOC(err, next, (size_t)(s->kmax * stride), "the front fill cursors");
  memcpy(next, f->row_ptr, (size_t)(s->kmax * stride) * sizeof *next);
  /* slices in order: the columns of each row come out ascending */
  for (int64_t j = 0; j < s->count; j++)
    for (int64_t r = s->slice_ptr[j]; r < s->slice_ptr[j + 1]; r++)
      for (int64_t v = s->val_ptr[r]; v < s->val_ptr[r + 1]; v++) {
        const int64_t k = s->kstart[r] + (v - s->val_ptr[r]);
        const int64_t e = next[(k - 1) * stride + s->row[r]]++;
        f->col[e] = (int32_t)j;
        memcpy((char *)f->val + (size_t)e * size, (const char *)s->val + (size_t)v * size, size);
      }
  free(next);
  return SE_OK;
}

/* out[i] += sum_e val[e] x[col[e]] over row i of matrix k, rows split between the threads of the
 * enclosing parallel region. */
static inline __attribute__((always_inline)) void spmv_rows(const se_tdbem_front *f, int64_t k,
                                                            const double *restrict x,
                                                            double *restrict out,
                                                            const int single) {
  const int64_t *restrict rp = f->row_ptr + (k - 1) * (f->n + 1);
  const int32_t *restrict col = f->col;
#pragma omp for schedule(static)
  for (int64_t i = 0; i < f->n; i++) {
    double acc = 0.0;
    for (int64_t e = rp[i]; e < rp[i + 1]; e++)
      acc += (single ? (double)((const float *)f->val)[e] : ((const double *)f->val)[e]) *
             x[col[e]];
    out[i] += acc;
  }
}

int se_tdbem_front_sum(const se_tdbem_front *f, const double *past, int64_t past_len, int64_t n,
                       double *out, se_error *err) {
  if (!f || !out || (!past && f->count > 0))
    SE_FAIL(err, SE_ERR_ARG, "front sum: no matrices, history or output given");
  if (past_len < f->kmax)
    SE_FAIL(err, SE_ERR_ARG, "front sum: history length %lld < kmax = %lld",
            (long long)past_len, (long long)f->kmax);
  if (n < 0)
    SE_FAIL(err, SE_ERR_ARG, "front sum: time n = %lld < 0", (long long)n);
  const int64_t kend = n < f->kmax ? n : f->kmax;
  const int single = f->precision == SE_PRECISION_SINGLE;
#pragma omp parallel
  for (int64_t k = 1; k <= kend; k++) {
    const double *x = past + ((n - k) % past_len) * f->count;
    if (single)
      spmv_rows(f, k, x, out, 1);
    else
      spmv_rows(f, k, x, out, 0);
  }
  return SE_OK;
}
