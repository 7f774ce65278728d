/* The tdbem GPU kernels (paper 002 Section 5, docs/tdbem.md Section 12): the multi-vector/vector
 * product of the Full-Blocking and Contiguous-Blocking images, the reduction of the chunks'
 * partial vectors, the history update. One warp handles one tile of 32 output rows for a chunk of
 * consecutive slices; for each slice it gathers the past values of the tile's k range into its
 * shared window once, then multiplies the tile's blocks: each stored value is loaded once
 * (coalesced) and multiplied with ng consecutive window entries held in registers. The number of
 * vectors NG (1, 2, 4, 8, 16; any ng <= NG is computed by the NG kernel) and the FB block width
 * BC (16, 32) are template constants. Values float or double, arithmetic and accumulators
 * double (explicit fma: the build disables contraction, the kernels round like the CPU's
 * separate multiply and add only up to one rounding per term). */
#include <stdint.h>

#include "tdbem_kernels.h"

namespace {

constexpr unsigned FULL = 0xffffffffu;
constexpr int WARPS = 4; /* warps per thread-block (one tile each) */

/* Gathers the window of (slice j, tile) into win: win[x] = a~_{time + x - k1}, x < len, with
 * a~_m = hist(m) for max(0, time - kmax) <= m < time and 0 otherwise (future values, before the
 * start, or k beyond kmax: padding columns of FB blocks). */
__device__ __forceinline__ void gather(const se_tdbem_kernel_args &a, int64_t j, int k1, int len,
                                       double *win, int lane) {
  const double *h = a.hist + j * a.hist_len;
  const int64_t m0 = a.time - k1, base = m0 > 0 ? m0 % a.hist_len : 0; /* one division */
  for (int x = lane; x < len; x += 32) {
    const int64_t m = m0 + x;
    int64_t slot = m0 > 0 ? base + x : m;
    while (slot >= a.hist_len)
      slot -= a.hist_len;
    win[x] = (m >= 0 && m < a.time && a.time - m <= a.kmax) ? h[slot] : 0.0;
  }
  __syncwarp();
}

/* Full-Blocking: lane = row of the tile; the accumulators stay in registers over every block of
 * every slice of the chunk. */
template <typename V, int NG, int BC>
__global__ void __launch_bounds__(WARPS * 32) fb_kernel(se_tdbem_kernel_args a) {
  extern __shared__ double smem[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int tile = blockIdx.x * WARPS + warp;
  if (tile >= a.tiles)
    return;
  double *win = smem + warp * (a.win_max + NG);
  const V *val = static_cast<const V *>(a.val);
  double acc[NG];
#pragma unroll
  for (int q = 0; q < NG; q++)
    acc[q] = 0.0;
  const int64_t j0 = blockIdx.y * a.chunk, j1 = j0 + a.chunk < a.count ? j0 + a.chunk : a.count;
  for (int64_t j = j0; j < j1; j++) {
    const int64_t e = j * a.tiles + tile, b0 = a.blk_ptr[e], b1 = a.blk_ptr[e + 1];
    if (b0 == b1)
      continue;
    const int k0 = a.tile_k[2 * e], k1 = a.tile_k[2 * e + 1];
    __syncwarp();
    gather(a, j, k1, k1 - k0 + NG, win, lane);
    for (int64_t b = b0; b < b1; b++) {
      const int base = k1 - a.blk_k0[b]; /* value c, vector q reads win[base - c + q] */
      V v[BC];
#pragma unroll
      for (int c = 0; c < BC; c++)
        v[c] = val[(b * BC + c) * 32 + lane];
      double w[NG + BC - 1]; /* w[t] = win[base + NG - 1 - t]: the same for every lane */
#pragma unroll
      for (int t = 0; t < NG + BC - 1; t++)
        w[t] = win[base + NG - 1 - t];
#pragma unroll
      for (int c = 0; c < BC; c++)
#pragma unroll
        for (int q = 0; q < NG; q++)
          acc[q] = fma((double)v[c], w[c - q + NG - 1], acc[q]);
    }
  }
  const int64_t row = (int64_t)tile * 32 + lane;
  if (row < a.n)
#pragma unroll
    for (int q = 0; q < NG; q++)
      if (q < a.ng)
        a.partial[((int64_t)blockIdx.y * a.ng + q) * a.n + row] = acc[q];
}

/* Contiguous-Blocking: lane = slot of the block (slots sorted by length); each slot's sums go to
 * its row's accumulators in shared memory (the rows of a block are distinct). Columns in chunks
 * of U, unrolled, so that the window entries stay in registers. */
template <typename V, int NG>
__global__ void __launch_bounds__(WARPS * 32) cb_kernel(se_tdbem_kernel_args a) {
  constexpr int U = 16;
  extern __shared__ double smem[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int tile = blockIdx.x * WARPS + warp;
  if (tile >= a.tiles)
    return;
  double *win = smem + warp * (a.win_max + NG + 32 * NG);
  double *sacc = win + a.win_max + NG; /* [NG][32] */
  const V *val = static_cast<const V *>(a.val);
#pragma unroll
  for (int q = 0; q < NG; q++)
    sacc[q * 32 + lane] = 0.0;
  const int64_t j0 = blockIdx.y * a.chunk, j1 = j0 + a.chunk < a.count ? j0 + a.chunk : a.count;
  for (int64_t j = j0; j < j1; j++) {
    const int64_t e = j * a.tiles + tile, b0 = a.blk_ptr[e], b1 = a.blk_ptr[e + 1];
    if (b0 == b1)
      continue;
    const int k0 = a.tile_k[2 * e], k1 = a.tile_k[2 * e + 1], len = k1 - k0 + NG;
    __syncwarp();
    gather(a, j, k1, len, win, lane);
    for (int64_t b = b0; b < b1; b++) {
      const int ks = a.slot_ks[b * 32 + lane], meta = a.slot_meta[b * 32 + lane];
      const int d = meta >> 5, base = k1 - ks;
      const int dmax = __shfl_sync(FULL, d, 0);
      int64_t off = a.blk_voff[b];
      double acc[NG];
#pragma unroll
      for (int q = 0; q < NG; q++)
        acc[q] = 0.0;
      for (int c0 = 0; c0 < dmax; c0 += U) {
        double v[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
          const int cnt = __popc(__ballot_sync(FULL, d > c0 + u));
          v[u] = lane < cnt ? (double)val[off + lane] : 0.0;
          off += cnt;
        }
        double w[NG + U - 1]; /* w[t] = win[base - c0 - t + NG - 1] */
#pragma unroll
        for (int t = 0; t < NG + U - 1; t++) {
          const int x = base - c0 - t + NG - 1;
          w[t] = x >= 0 && x < len ? win[x] : 0.0;
        }
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
          for (int q = 0; q < NG; q++)
            acc[q] = fma(v[u], w[u - q + NG - 1], acc[q]);
      }
      if (d > 0)
#pragma unroll
        for (int q = 0; q < NG; q++)
          sacc[q * 32 + (meta & 31)] += acc[q];
      __syncwarp();
    }
  }
  __syncwarp();
  const int64_t row = (int64_t)tile * 32 + lane;
  if (row < a.n)
#pragma unroll
    for (int q = 0; q < NG; q++)
      if (q < a.ng)
        a.partial[((int64_t)blockIdx.y * a.ng + q) * a.n + row] = sacc[q * 32 + lane];
}

__global__ void reduce_kernel(const double *partial, int chunks, int ng, int64_t n, double *out) {
  const int64_t total = (int64_t)ng * n;
  for (int64_t x = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; x < total;
       x += (int64_t)gridDim.x * blockDim.x) {
    double s = 0.0;
    for (int c = 0; c < chunks; c++)
      s += partial[(int64_t)c * total + x];
    out[x] = s;
  }
}

__global__ void push_kernel(double *hist, int64_t hist_len, int64_t count, int64_t slot,
                            const double *a) {
  for (int64_t j = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; j < count;
       j += (int64_t)gridDim.x * blockDim.x)
    hist[j * hist_len + slot] = a[j];
}

template <typename V> __global__ void fill_kernel(V *v, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    uint64_t x = (uint64_t)i * 6364136223846793005ull + 1442695040888963407ull;
    x ^= x >> 29;
    v[i] = (V)((double)(x >> 11) * 0x1.0p-52 - 1.0);
  }
}

typedef void (*sum_kernel)(se_tdbem_kernel_args);

/* The instantiated kernels: [single][ng index] (ng 1, 2, 4, 8, 16), FB also [bc 16, 32]. */
const sum_kernel cb_kernels[2][5] = {
    {cb_kernel<double, 1>, cb_kernel<double, 2>, cb_kernel<double, 4>, cb_kernel<double, 8>,
     cb_kernel<double, 16>},
    {cb_kernel<float, 1>, cb_kernel<float, 2>, cb_kernel<float, 4>, cb_kernel<float, 8>,
     cb_kernel<float, 16>}};
const sum_kernel fb_kernels[2][2][5] = {
    {{fb_kernel<double, 1, 16>, fb_kernel<double, 2, 16>, fb_kernel<double, 4, 16>,
      fb_kernel<double, 8, 16>, fb_kernel<double, 16, 16>},
     {fb_kernel<double, 1, 32>, fb_kernel<double, 2, 32>, fb_kernel<double, 4, 32>,
      fb_kernel<double, 8, 32>, fb_kernel<double, 16, 32>}},
    {{fb_kernel<float, 1, 16>, fb_kernel<float, 2, 16>, fb_kernel<float, 4, 16>,
      fb_kernel<float, 8, 16>, fb_kernel<float, 16, 16>},
     {fb_kernel<float, 1, 32>, fb_kernel<float, 2, 32>, fb_kernel<float, 4, 32>,
      fb_kernel<float, 8, 32>, fb_kernel<float, 16, 32>}}};

int blocks_for(int64_t n, int threads) {
  int64_t b = (n + threads - 1) / threads;
  return (int)(b < 1 ? 1 : (b > 65535 ? 65535 : b));
}

} // namespace

extern "C" cudaError_t se_tdbem_launch_sum(int kernel, int single, const se_tdbem_kernel_args *a,
                                           cudaStream_t stream) {
  const int index = a->ng <= 1 ? 0 : a->ng <= 2 ? 1 : a->ng <= 4 ? 2 : a->ng <= 8 ? 3 : 4;
  const int NG = 1 << index;
  const sum_kernel k = kernel == 0 ? cb_kernels[single != 0][index]
                                   : fb_kernels[single != 0][a->bc == 32][index];
  const size_t per_warp = (size_t)(a->win_max + NG + (kernel == 0 ? 32 * NG : 0)) * sizeof(double);
  const size_t bytes = WARPS * per_warp;
  if (bytes > 48 * 1024) {
    cudaError_t rc = cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          (int)bytes);
    if (rc != cudaSuccess)
      return rc;
  }
  const dim3 grid((unsigned)((a->tiles + WARPS - 1) / WARPS), (unsigned)a->chunks);
  k<<<grid, WARPS * 32, bytes, stream>>>(*a);
  return cudaGetLastError();
}

extern "C" cudaError_t se_tdbem_launch_reduce(const double *partial, int chunks, int ng, int64_t n,
                                              double *out, cudaStream_t stream) {
  reduce_kernel<<<blocks_for((int64_t)ng * n, 256), 256, 0, stream>>>(partial, chunks, ng, n, out);
  return cudaGetLastError();
}

extern "C" cudaError_t se_tdbem_launch_push(double *hist, int64_t hist_len, int64_t count,
                                            int64_t slot, const double *a, cudaStream_t stream) {
  push_kernel<<<blocks_for(count, 256), 256, 0, stream>>>(hist, hist_len, count, slot, a);
  return cudaGetLastError();
}

extern "C" cudaError_t se_tdbem_launch_fill(void *v, int single, int64_t n, cudaStream_t stream) {
  if (single)
    fill_kernel<float><<<blocks_for(n, 256), 256, 0, stream>>>(static_cast<float *>(v), n);
  else
    fill_kernel<double><<<blocks_for(n, 256), 256, 0, stream>>>(static_cast<double *>(v), n);
  return cudaGetLastError();
}
