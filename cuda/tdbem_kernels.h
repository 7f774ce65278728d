/* Launchers of the tdbem GPU kernels (cuda/tdbem_kernels.cu), called by cuda/tdbem_cuda.c. The
 * device image is described in docs/tdbem.md Section 12. */
#ifndef SE_TDBEM_KERNELS_H
#define SE_TDBEM_KERNELS_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Rows per tile: one warp, one row (FB) or one slot (CB) per lane. */
enum { SE_TDBEM_TILE = 32 };

/* Everything a summation kernel reads (device pointers). For (local slice j, tile b),
 * e = j * tiles + b: the blocks are blk_ptr[e] .. blk_ptr[e+1]-1 and the k range of their
 * values is [tile_k[2e], tile_k[2e+1]] (FB: the blocks' columns, padding included).
 * FB: block b has corner blk_k0[b] and values val[(b * bc + c) * 32 + lane] (k = corner + c, row
 *     tile * 32 + lane).
 * CB: block b has 32 slots; slot s = b * 32 + lane has kstart slot_ks[s] and
 *     slot_meta[s] = row-in-tile | length << 5 (slots sorted by length, descending); column c
 *     of the block holds the values of the slots longer than c, contiguously, from
 *     val[blk_voff[b] + (values of the columns before c)]. */
typedef struct se_tdbem_kernel_args {
  int64_t n, count, hist_len, time, kmax, chunk;
  int tiles, chunks, ng, bc, win_max;
  const double *hist; /* [count x hist_len] */
  const int64_t *blk_ptr;
  const int32_t *tile_k;
  const int32_t *blk_k0;
  const int32_t *slot_ks, *slot_meta;
  const int64_t *blk_voff;
  const void *val;
  double *partial; /* [chunks x ng x n] */
} se_tdbem_kernel_args;

/* The summation into a->partial (every entry written): kernel 0 CB, 1 FB; single: float values.
 * Returns the launch's error (cudaGetLastError). */
cudaError_t se_tdbem_launch_sum(int kernel, int single, const se_tdbem_kernel_args *a,
                                cudaStream_t stream);

/* out[q * n + i] = sum_c partial[(c * ng + q) * n + i], c in chunk order. */
cudaError_t se_tdbem_launch_reduce(const double *partial, int chunks, int ng, int64_t n,
                                   double *out, cudaStream_t stream);

/* hist[j * hist_len + slot] = a[j], j = 0 .. count-1. */
cudaError_t se_tdbem_launch_push(double *hist, int64_t hist_len, int64_t count, int64_t slot,
                                 const double *a, cudaStream_t stream);

/* Fills v[0 .. n) with a deterministic pattern in [-1, 1) (benchmark histories). */
cudaError_t se_tdbem_launch_fill(void *v, int single, int64_t n, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
