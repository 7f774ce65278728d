/* The "front" summation of the tdbem workload (paper 002 Section 3.1, Fig. 2a): the interaction
 * matrices M_k, k = 1 .. kmax, as CSR matrices, and s_n = sum_k M_k a_{n-k} with one sparse
 * matrix-vector product per k. The reference of the slice kernels in the tests, and the "front
 * approach" of the benchmark. */
#ifndef SE_TDBEM_FRONT_REF_H
#define SE_TDBEM_FRONT_REF_H

#include <stdint.h>

#include "simengine/tdbem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The columns [first, first + count) of M_1 .. M_kmax (the slices of one interval). Matrix k's
 * row i has the entries row_ptr[(k - 1) * (n + 1) + i] .. row_ptr[(k - 1) * (n + 1) + i + 1] - 1
 * of col (local column j - first, ascending) and val (float when precision is single, double
 * otherwise: the slices' values). */
typedef struct se_tdbem_front {
  se_precision precision;
  int64_t n, kmax, first, count, nnz;
  int64_t *row_ptr; /* [kmax * (n + 1)] */
  int32_t *col;     /* [nnz] */
  void *val;        /* [nnz] */
} se_tdbem_front;

/* Builds the CSR matrices of the interval held in s, checking every row-vector (row in [0, N),
 * k in [1, kmax]); f is freed with se_tdbem_front_free (also after a failure). Not collective. */
int se_tdbem_front_create(const se_tdbem_slices *s, se_tdbem_front *f, se_error *err);

/* Frees what se_tdbem_front_create allocated; f may be zeroed or partly built. */
void se_tdbem_front_free(se_tdbem_front *f);

/* Adds to out[i], i = 0 .. N-1, the interval's part of s_n = sum_{k=1..min(n,kmax)} M_k a_{n-k},
 * matrix by matrix (k ascending), each SpMV with OpenMP over rows. The history is time-major, as
 * the front approach keeps it: past[(m mod past_len) * count + j] = a_m(first + j) for
 * m = n - kmax .. n - 1, past_len >= kmax. Not collective. */
int se_tdbem_front_sum(const se_tdbem_front *f, const double *past, int64_t past_len, int64_t n,
                       double *out, se_error *err);

#ifdef __cplusplus
}
#endif
#endif
