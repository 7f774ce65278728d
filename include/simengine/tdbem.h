/* simengine: the tdbem workload (time-domain BEM, marching on in time; paper 002, DESIGN.md
 * Section 4). For n = 0 .. T-1:  s_n = sum_{k=1..min(n,kmax)} M_k a_{n-k},  M0 a_n = l_n - s_n.
 * The M_k are stored by slices: slice j holds column j of every M_k, one dense row-vector per
 * non-empty row i, starting at k = kstart. */
#ifndef SIMENGINE_TDBEM_H
#define SIMENGINE_TDBEM_H

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "simengine/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum se_precision { SE_PRECISION_DOUBLE = 0, SE_PRECISION_SINGLE = 1 } se_precision;

/* The most summation vectors computed together (ng = 1 .. SE_TDBEM_NG_MAX; docs/tdbem.md). */
#define SE_TDBEM_NG_MAX 16

/* The case's sizes (root, /run and /tdbem attributes). */
typedef struct se_tdbem_meta {
  int64_t n;        /* unknowns N (= slices = rows) */
  int64_t kmax;     /* largest k of the M_k */
  int64_t steps;    /* T */
  se_precision precision;
  int has_positions;
  int64_t n_rowvectors, n_values; /* Rv and NNZ of the whole case */
  int64_t nnz0;     /* stored entries of M0 (lower triangle with diagonal) */
} se_tdbem_meta;

/* A contiguous interval of slices [first, first + count), as a rank or a worker holds it.
 * Indices are local: slice first + j has row-vectors slice_ptr[j] .. slice_ptr[j+1]-1, and
 * row-vector r has values val[val_ptr[r] .. val_ptr[r+1]-1] for k = kstart[r], kstart[r]+1, ...
 * The row-vectors of a slice are sorted by ascending row (the reader refuses files where they
 * are not). Values are float when precision is single, double otherwise. */
typedef struct se_tdbem_slices {
  se_precision precision;
  int64_t n, kmax;
  int64_t first, count;
  int64_t n_rowvectors, n_values;
  int64_t *slice_ptr; /* [count + 1], slice_ptr[0] = 0 */
  int32_t *row;       /* [n_rowvectors] row i of each row-vector */
  int32_t *kstart;    /* [n_rowvectors] first k, >= 1 */
  int64_t *val_ptr;   /* [n_rowvectors + 1], val_ptr[0] = 0 */
  void *val;          /* [n_values] */
} se_tdbem_slices;

/* M0, lower triangle with the diagonal (row >= col), values in double whatever the file's
 * precision. */
typedef struct se_tdbem_m0 {
  int64_t n, nnz;
  int32_t *row, *col;
  double *val;
} se_tdbem_m0;

void se_tdbem_slices_free(se_tdbem_slices *s);

/* Slices [j0, j0 + count) of s (local indices) as slices of their own: a view sharing s's arrays
 * (slice_ptr points into s's and need not start at 0; free only s). Not collective. */
se_tdbem_slices se_tdbem_slices_view(const se_tdbem_slices *s, int64_t j0, int64_t count);
void se_tdbem_m0_free(se_tdbem_m0 *m0);

/* ---- summation (src/tdbem_sum_cpu.c) -------------------------------------------------------
 * History of the interval's unknowns: hist[j * hist_len + (m mod hist_len)] = a_m(first + j) for
 * the past times m, hist_len >= kmax + ng. The multi-vector/vector product at time n (a multiple
 * of ng, or any n) adds to out[q * N + i], q = 0 .. ng-1, the interval's part of
 *   s_{n+q}(i) = sum_j sum_k M_k(i, j) a_{n+q-k}(j)   with a_m = 0 for m >= n and m < 0,
 * reading each stored value once for the ng vectors (ng = 1 .. 16, specialised at compile time).
 * OpenMP over blocks of output rows (bitwise independent of the thread count), SIMD over the ng
 * accumulators; out is not zeroed. Not collective. */
int se_tdbem_sum_cpu(const se_tdbem_slices *s, const double *hist, int64_t hist_len, int64_t n,
                     int ng, double *out, se_error *err);

/* The radiation stage: after a_m is known (a_now[j] = a_m(first + j)), adds M_p a_m to
 * out[(p - 1) * N + i] for p = 1 .. p_max (the vectors s_{m+1} .. s_{m+p_max} still being
 * completed). Not collective. */
int se_tdbem_radiate_cpu(const se_tdbem_slices *s, const double *a_now, int p_max, double *out,
                         se_error *err);

/* ---- M0 (src/tdbem_m0_mumps.c, MUMPS with SCOTCH / PT-SCOTCH) ------------------------------ */
typedef struct se_tdbem_m0_solver *se_tdbem_m0_solver_t;

/* Analyses and factorises M0 (symmetric positive definite) with MUMPS over comm; m0 is read on
 * rank 0 (other ranks may pass NULL). ordering_used receives MUMPS's INFOG(7) in words
 * ("PT-SCOTCH", "SCOTCH", ...). Collective over comm. */
int se_tdbem_m0_create(MPI_Comm comm, const se_tdbem_m0 *m0, se_tdbem_m0_solver_t *solver,
                       char *ordering_used, size_t ordering_size, se_error *err);

/* Solves M0 x = b in place: b (length N) given and returned on rank 0. Collective over comm. */
int se_tdbem_m0_solve(se_tdbem_m0_solver_t solver, double *b, se_error *err);

/* Frees the factors. Collective over comm. */
void se_tdbem_m0_destroy(se_tdbem_m0_solver_t solver);

/* ---- unknown orderings (src/tdbem_ordering.c) --------------------------------------------- */
typedef enum se_ordering { SE_ORDER_ORIGINAL = 0, SE_ORDER_MORTON = 1, SE_ORDER_HILBERT = 2 } se_ordering;

/* perm[new] = old: the unknowns sorted along the space-filling curve over positions [n x 3].
 * Not collective. */
int se_tdbem_ordering(const double *positions, int64_t n, se_ordering kind, int64_t *perm,
                      se_error *err);

/* ---- GPU summation kernels (cuda/tdbem_cuda.h, docs/tdbem.md Section 12) ------------------
 * CB: Contiguous-Blocking (paper 002 Section 5.2), FB: Full-Blocking (Section 5.1). */
typedef enum se_tdbem_gpu_kernel { SE_TDBEM_GPU_CB = 0, SE_TDBEM_GPU_FB = 1 } se_tdbem_gpu_kernel;

#ifdef __cplusplus
}
#endif
#endif
