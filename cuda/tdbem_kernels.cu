/* The tdbem GPU kernels (paper 002 Section 5, docs/tdbem.md Section 12): the multi-vector/vector
 * product of the Full-Blocking and Contiguous-Blocking images, the reduction of the chunks'
 * partial vectors, the history update. One warp handles one tile of 32 output rows for a chunk of
 * consecutive slices; for each slice it gathers the past values of the tile's k range into its
 * shared window once, then multiplies the tile's blocks: each stored value is loaded once
 * (coalesced; CB: streamed through a shared-memory ring with cp.async) and multiplied with ng
 * consecutive window entries held in registers. The number of
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
 * a~_m = hist(m) for max(0, time - kmax) <= m < known and 0 otherwise (not known yet, before the
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
    win[x] = (m >= 0 && m < a.known && a.time - m <= a.kmax) ? h[slot] : 0.0;
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

/* cp.async of 16 bytes global -> shared (bypassing L1), its commit and its wait (the number of
 * groups allowed to stay pending is an immediate: a switch over 0 .. CB_GROUPS). */
__device__ __forceinline__ void cp_async16(void *dst, const void *src) {
  const unsigned d = (unsigned)__cvta_generic_to_shared(dst);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int P> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(P) : "memory");
}
__device__ __forceinline__ void cp_async_wait_pending(int pending) {
  switch (pending) {
#define SE_CB_WAIT(P)                                                                              \
  case P:                                                                                          \
    cp_async_wait<P>();                                                                            \
    break;
    SE_CB_WAIT(1) SE_CB_WAIT(2) SE_CB_WAIT(3) SE_CB_WAIT(4) SE_CB_WAIT(5) SE_CB_WAIT(6)
    SE_CB_WAIT(7) SE_CB_WAIT(8) SE_CB_WAIT(9) SE_CB_WAIT(10) SE_CB_WAIT(11) SE_CB_WAIT(12)
    SE_CB_WAIT(13) SE_CB_WAIT(14) SE_CB_WAIT(15)
#undef SE_CB_WAIT
  default:
    cp_async_wait<0>();
  }
}

/* The window of one record header in registers: g[t] = a~ at x = lane + 32 t (x < min(len,
 * 32 CB_WIN_REGS)), the rest (long windows) is gathered by window_store from global memory. */
constexpr int CB_WIN_REGS = 4;

/* a~ at window position x of a window starting at m0 (base: m0 mod hist_len). */
__device__ __forceinline__ double window_value(const se_tdbem_kernel_args &a, const double *h,
                                               int64_t m0, int64_t base, int x) {
  const int64_t m = m0 + x;
  int64_t slot = m0 > 0 ? base + x : m;
  while (slot >= a.hist_len)
    slot -= a.hist_len;
  return (m >= 0 && m < a.known && a.time - m <= a.kmax) ? h[slot] : 0.0;
}

__device__ __forceinline__ void window_load(const se_tdbem_kernel_args &a, int j, int k1, int len,
                                            int lane, double *g) {
  const double *h = a.hist + (int64_t)j * a.hist_len;
  const int64_t m0 = a.time - k1, base = m0 > 0 ? m0 % a.hist_len : 0;
#pragma unroll
  for (int t = 0; t < CB_WIN_REGS; t++) {
    const int x = lane + 32 * t;
    g[t] = x < len ? window_value(a, h, m0, base, x) : 0.0;
  }
}

__device__ __forceinline__ void window_store(const se_tdbem_kernel_args &a, int j, int k1, int len,
                                             int lane, const double *g, double *win) {
#pragma unroll
  for (int t = 0; t < CB_WIN_REGS; t++)
    if (lane + 32 * t < len)
      win[lane + 32 * t] = g[t];
  if (len > 32 * CB_WIN_REGS) {
    const double *h = a.hist + (int64_t)j * a.hist_len;
    const int64_t m0 = a.time - k1, base = m0 > 0 ? m0 % a.hist_len : 0;
    for (int x = 32 * CB_WIN_REGS + lane; x < len; x += 32)
      win[x] = window_value(a, h, m0, base, x);
  }
}

/* Contiguous-Blocking: one warp streams the records of its run (tile, chunk of slices) through a
 * ring of CB_RING bytes in shared memory with cp.async, CB_RING - CB_GROUP bytes ahead of the
 * record it multiplies, so that the loads of values and metadata never wait on the arithmetic.
 * Lane = row of the tile, accumulators in registers over the run. The window of the next record
 * (when it starts another slice) is loaded into registers before the current record is
 * multiplied and stored into shared memory after it. */
template <typename V, int NG>
__global__ void __launch_bounds__(WARPS * 32) cb_kernel(se_tdbem_kernel_args a) {
  constexpr int U = 8;
  extern __shared__ __align__(16) unsigned char smem_cb[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int tile = blockIdx.x * WARPS + warp;
  if (tile >= a.tiles)
    return;
  unsigned char *ring = smem_cb + warp * SE_TDBEM_CB_RING;
  const int wstride = a.win_max + NG + 1; /* the last entry stays 0: clamped indices read it */
  double *win = reinterpret_cast<double *>(smem_cb + WARPS * SE_TDBEM_CB_RING) + warp * wstride;
  for (int x = lane; x < wstride; x += 32)
    win[x] = 0.0;
  const int64_t r = (int64_t)blockIdx.y * a.tiles + tile;
  const unsigned char *src = static_cast<const unsigned char *>(a.stream) + a.run_off[r];
  const int64_t run_len = a.run_off[r + 1] - a.run_off[r];
  constexpr int64_t MASK = SE_TDBEM_CB_RING - 1;
  double acc[NG];
#pragma unroll
  for (int q = 0; q < NG; q++)
    acc[q] = 0.0;
  int64_t issued = 0, pos = 0; /* bytes committed to the ring; the record being multiplied */
  int groups = 0;
  /* commits groups of CB_GROUP bytes while they fit behind pos in the ring */
  auto issue = [&]() {
    while (issued < run_len && issued + SE_TDBEM_CB_GROUP <= pos + SE_TDBEM_CB_RING) {
      const int64_t off = issued + 16 * lane;
      if (off < run_len)
        cp_async16(ring + (off & MASK), src + off);
      cp_async_commit();
      issued += SE_TDBEM_CB_GROUP;
      groups++;
    }
  };
  /* waits until the bytes [0, need) of the run are in the ring */
  auto wait_for = [&](int64_t need) {
    const int done = (int)((need + SE_TDBEM_CB_GROUP - 1) / SE_TDBEM_CB_GROUP);
    cp_async_wait_pending(groups - done);
    __syncwarp();
  };
  auto header = [&](int64_t at) { return *reinterpret_cast<const int4 *>(ring + (at & MASK)); };
  if (run_len > 0) {
    issue();
    wait_for(16);
    int4 h = header(0); /* k1, window length without NG, local slice, values */
    double g[CB_WIN_REGS];
    window_load(a, h.z, h.x, h.y + NG - 1, lane, g);
    window_store(a, h.z, h.x, h.y + NG - 1, lane, g, win);
    __syncwarp();
    while (pos < run_len) {
      const int64_t vbytes = ((int64_t)h.w * (int64_t)sizeof(V) + 15) & ~(int64_t)15;
      const int64_t end = pos + SE_TDBEM_CB_HEAD + vbytes;
      wait_for(end + 16 < run_len ? end + 16 : run_len);
      int4 hn = make_int4(0, 0, -1, 0);
      if (end < run_len)
        hn = header(end);
      const bool new_win = end < run_len && hn.z != h.z;
      if (new_win)
        window_load(a, hn.z, hn.x, hn.y + NG - 1, lane, g);
      const int meta = *reinterpret_cast<const int *>(ring + ((pos + 16 + 4 * lane) & MASK));
      const int d = (int)((unsigned)meta >> 16), base = meta & 0xffff;
      const int dm = __reduce_max_sync(FULL, (unsigned)d);
      const unsigned lt = (1u << lane) - 1u;
      int64_t vat = pos + SE_TDBEM_CB_HEAD; /* byte of the column's first value */
      for (int c0 = 0; c0 < dm; c0 += U) {
        double v[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
          const unsigned bal = __ballot_sync(FULL, d > c0 + u);
          v[u] = d > c0 + u ? (double)*reinterpret_cast<const V *>(
                                  ring + ((vat + (int64_t)sizeof(V) * __popc(bal & lt)) & MASK))
                            : 0.0;
          vat += (int64_t)sizeof(V) * __popc(bal);
        }
        double w[NG + U - 1]; /* w[t] = win[base - c0 - t + NG - 1], 0 outside */
#pragma unroll
        for (int t = 0; t < NG + U - 1; t++) {
          const unsigned x = (unsigned)(base - c0 - t + NG - 1);
          w[t] = win[x < (unsigned)(wstride - 1) ? x : (unsigned)(wstride - 1)];
        }
#pragma unroll
        for (int u = 0; u < U; u++)
#pragma unroll
          for (int q = 0; q < NG; q++)
            acc[q] = fma(v[u], w[u - q + NG - 1], acc[q]);
      }
      __syncwarp();
      if (new_win) {
        window_store(a, hn.z, hn.x, hn.y + NG - 1, lane, g, win);
        __syncwarp();
      }
      pos = end;
      h = hn;
      issue();
    }
  }
  const int64_t row = (int64_t)tile * 32 + lane;
  if (row < a.n)
#pragma unroll
    for (int q = 0; q < NG; q++)
      if (q < a.ng)
        a.partial[((int64_t)blockIdx.y * a.ng + q) * a.n + row] = acc[q];
}

/* One row of the radiation: see radiate_kernel. */
template <typename V, int P>
__device__ void radiate_row(const se_tdbem_radiate_args &r, const V *val, int64_t i, int lane) {
  double acc[P];
#pragma unroll
  for (int p = 0; p < P; p++)
    acc[p] = 0.0;
  for (int64_t e = r.row_ptr[i] + lane; e < r.row_ptr[i + 1]; e += 32) {
    const double x = r.a[r.col[e]];
    const int ks = r.kk[e] & 0xffff, kept = r.kk[e] >> 16;
    const V *v = val + r.val_ptr[e] - ks; /* v[p]: M_p */
#pragma unroll
    for (int p = 1; p <= P; p++)
      if (p >= ks && p < ks + kept && p <= r.p_max)
        acc[p - 1] = fma((double)v[p], x, acc[p - 1]);
  }
#pragma unroll
  for (int p = 0; p < P; p++)
    if (p < r.p_max) {
#pragma unroll
      for (int o = 16; o > 0; o >>= 1)
        acc[p] += __shfl_xor_sync(FULL, acc[p], o);
      if (lane == 0)
        r.out[(int64_t)p * r.n + i] = acc[p];
    }
}

/* The radiation of the near field, one warp per row i: out[(p-1) n + i] = sum over the row's
 * entries e (lanes strided, then a fixed shuffle tree) of M_p(i, j_e) a[j_e], p = 1 .. p_max
 * (p_max <= P: P accumulators, so that the kernel for ng <= 8 holds fewer registers and more of
 * its blocks fit beside a product in flight). Values V (the slices' precision), double sums. */
template <typename V, int P>
__global__ void __launch_bounds__(WARPS * 32) radiate_kernel(se_tdbem_radiate_args r) {
  const int lane = threadIdx.x & 31;
  const V *val = static_cast<const V *>(r.val);
  /* rows by warps, grid-strided: the grid is capped (blocks_for) */
  for (int64_t i = (int64_t)blockIdx.x * WARPS + (threadIdx.x >> 5); i < r.n;
       i += (int64_t)gridDim.x * WARPS)
    radiate_row<V, P>(r, val, i, lane);
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
  const size_t per_warp = (size_t)(a->win_max + NG + (kernel == 0 ? 1 : 0)) * sizeof(double) +
                          (kernel == 0 ? SE_TDBEM_CB_RING : 0);
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

extern "C" cudaError_t se_tdbem_launch_radiate(const se_tdbem_radiate_args *r,
                                               cudaStream_t stream) {
  constexpr int SHORT = 15; /* 2 ng - 1 for ng = 8 */
  const int blocks = blocks_for(r->n, WARPS);
  if (r->single && r->p_max <= SHORT)
    radiate_kernel<float, SHORT><<<blocks, WARPS * 32, 0, stream>>>(*r);
  else if (r->single)
    radiate_kernel<float, SE_TDBEM_RAD_PMAX><<<blocks, WARPS * 32, 0, stream>>>(*r);
  else if (r->p_max <= SHORT)
    radiate_kernel<double, SHORT><<<blocks, WARPS * 32, 0, stream>>>(*r);
  else
    radiate_kernel<double, SE_TDBEM_RAD_PMAX><<<blocks, WARPS * 32, 0, stream>>>(*r);
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
