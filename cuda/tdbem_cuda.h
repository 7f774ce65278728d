/* The GPU worker of the tdbem summation (paper 002 Section 5, docs/tdbem.md Section 12): a
 * device image of a contiguous interval of slices cut into blocks, Full-Blocking or
 * Contiguous-Blocking, the history of the interval's unknowns on the device, and the
 * multi-vector/vector product of ng = 1 .. 16 summation vectors with the semantics of
 * se_tdbem_sum_cpu. Also the cuSPARSE front approach of the benchmark. Control in C
 * (cuda/tdbem_cuda.c), kernels behind extern "C" launchers (cuda/tdbem_kernels.cu). */
#ifndef SE_TDBEM_CUDA_H
#define SE_TDBEM_CUDA_H

#include <stdint.h>

#include "simengine/tdbem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The two cut-outs of paper 002 Section 5 (se_tdbem_gpu_kernel, include/simengine/tdbem.h),
 * both over tiles of 32 consecutive output rows (one warp; docs/tdbem.md Section 12):
 *   FB: Full-Blocking: the row-vectors of a (slice, tile) are cut greedily into blocks of 32 rows
 *       x bc columns (bc = 16 or 32) with one corner k each, stored column-major with zeros where
 *       a row has no value: every row of a block reads the same past values;
 *   CB: Contiguous-Blocking: one block per (slice, tile) holding its row-vectors with their own
 *       origin kstart, without padding (rows sorted by length inside the block, so that column c
 *       of the block is a contiguous run of values; float values in pairs of columns,
 *       docs/tdbem.md Section 16). */
typedef struct se_tdbem_cuda *se_tdbem_cuda_t;

/* Sizes of a device image (what one summation reads). */
typedef struct se_tdbem_cuda_stats {
  int64_t blocks, stored; /* stored: values in the image, padding zeros included */
  double bytes;           /* bytes of values and block data read by one summation */
} se_tdbem_cuda_stats;

/* A GPU worker on device `device` for a case of n unknowns, kmax, precision and a history ring of
 * hist_len >= kmax + ng slots (the layout of se_tdbem_sum_cpu). bc (FB only) is 16 or 32. It
 * holds no slices until se_tdbem_cuda_set_interval. Not collective. */
int se_tdbem_cuda_create(int device, se_tdbem_gpu_kernel kernel, int bc, int64_t n, int64_t kmax,
                         se_precision precision, int64_t hist_len, se_tdbem_cuda_t *g,
                         se_error *err);

/* Gives the worker the slices s (an interval [first, first + count); s may be a view into a
 * larger interval: slice_ptr need not start at 0) and their history rows hist[j * hist_len + ..]
 * (j = 0 .. count-1): builds the blocks on the host (OpenMP, in pieces of bounded size) and uploads
 * them with the history, replacing what the worker held. Calling it again with another interval
 * moves the worker's boundaries (between steps). The rows of each slice must be ascending.
 * Synchronous. Not collective. */
int se_tdbem_cuda_set_interval(se_tdbem_cuda_t g, const se_tdbem_slices *s, const double *hist,
                               se_error *err);


/* Sizes of the image held. */
void se_tdbem_cuda_get_stats(se_tdbem_cuda_t g, se_tdbem_cuda_stats *st);

/* Stores a_m of the worker's slices (a[j] = a_m(first + j)) into the device history (slot
 * m mod hist_len), ordered before the next summation. Returns when a may be reused. Not
 * collective. */
int se_tdbem_cuda_push(se_tdbem_cuda_t g, const double *a, int64_t m, se_error *err);

/* Starts the radiation of the a_m pushed last (se_tdbem_cuda_push) on the device: M_p a_m for
 * p = 1 .. p_max from the worker's near field (the row-vectors with kstart <= 2 ng - 1, ng =
 * hist_len - kmax, at most 31; p_max must not exceed that); returns at once. The history updates
 * and the radiation run on a second stream, beside a product in flight. Not collective. */
int se_tdbem_cuda_radiate_start(se_tdbem_cuda_t g, int p_max, se_error *err);

/* Waits for the radiation started last and adds it to out[(p - 1) * N + i], p = 1 .. p_max
 * (se_tdbem_radiate_cpu's semantics on the worker's slices). Not collective. */
int se_tdbem_cuda_radiate_finish(se_tdbem_cuda_t g, double *out, se_error *err);

/* Starts the multi-vector/vector product at time n for ng = 1 .. 16 vectors (se_tdbem_sum_cpu's
 * semantics on the worker's slices): returns at once; the host may work meanwhile. */
int se_tdbem_cuda_sum_start(se_tdbem_cuda_t g, int64_t n, int ng, se_error *err);

/* se_tdbem_cuda_sum_start counting only a_m for m < known (n - ng <= known <= n; see
 * se_tdbem_sum_cpu_known): the next group's product, started before the current group's a_m
 * are known. It reads the history after the pushes made so far (an event of the second stream). */
int se_tdbem_cuda_sum_start_known(se_tdbem_cuda_t g, int64_t n, int64_t known, int ng,
                                  se_error *err);

/* Waits for the summation started last and adds its ng vectors to out[q * N + i] (host memory).
 * device_s (may be NULL) receives the device time of the kernels in seconds. */
int se_tdbem_cuda_sum_finish(se_tdbem_cuda_t g, double *out, double *device_s, se_error *err);

/* Frees the worker (device memory, stream, staging buffers). NULL is allowed. */
void se_tdbem_cuda_destroy(se_tdbem_cuda_t g);

/* ---- the front approach with cuSPARSE (benchmark) -------------------------------------------
 * The kmax CSR matrices of the slices s (se_tdbem_front_create's, in the slices' precision) on
 * the current device, and a time-major history of kmax steps in the same precision. */
typedef struct se_tdbem_cusparse_front *se_tdbem_cusparse_front_t;

/* Builds the CSR matrices of s on the host, uploads them and prepares one cusparseSpMV per k.
 * Not collective. */
int se_tdbem_cusparse_front_create(const se_tdbem_slices *s, se_tdbem_cusparse_front_t *f,
                                   se_error *err);

/* One step of the front approach: out = sum_{k=1..kmax} M_k a_{n-k} with one cusparseSpMV per k
 * on the device history (filled with fixed values), synchronised at the end. nnz (may be NULL):
 * the stored entries. */
int se_tdbem_cusparse_front_step(se_tdbem_cusparse_front_t f, int64_t *nnz, se_error *err);

void se_tdbem_cusparse_front_destroy(se_tdbem_cusparse_front_t f);

#ifdef __cplusplus
}
#endif
#endif
