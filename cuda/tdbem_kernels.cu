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

/* The window of k1: position x holds a~_m, m = time - k1 + x, which is hist(m) for
 * max(0, time - kmax) <= m < known and 0 otherwise (not known yet, before the start, or k beyond
 * kmax: padding columns of FB blocks), i.e. for lo <= x < hi. slot0 + x is m's slot before the
 * wrap: slot0 + lo = (time - k1 + lo) mod hist_len, and hi - lo <= hist_len, so one subtraction
 * wraps every valid x. Set up once per window, 32-bit (a.time_slot = time mod hist_len). */
struct window_ref {
  int slot0, lo, hi;
};
__device__ __forceinline__ window_ref window_of(const se_tdbem_kernel_args &a, int k1) {
  window_ref w;
  const int before = a.time < k1 ? k1 - (int)a.time : 0; /* m < 0 */
  w.lo = max(k1 - (int)a.kmax, before);
  w.hi = k1 - (int)(a.time - a.known);
  int first = a.time_slot - k1 + w.lo; /* the slot of x = lo (CB: at most one wrap) */
  while (first < 0)
    first += a.hist_len32;
  while (first >= a.hist_len32)
    first -= a.hist_len32;
  w.slot0 = first - w.lo;
  return w;
}
__device__ __forceinline__ double window_value(const se_tdbem_kernel_args &a, const double *h,
                                               const window_ref &w, int x) {
  const int slot = w.slot0 + x;
  return x >= w.lo && x < w.hi ? h[slot >= a.hist_len32 ? slot - a.hist_len32 : slot] : 0.0;
}

/* Gathers the window of (slice j, tile) into win: win[x] = a~_{time + x - k1}, x < len. */
__device__ __forceinline__ void gather(const se_tdbem_kernel_args &a, int64_t j, int k1, int len,
                                       double *win, int lane) {
  const double *h = a.hist + j * a.hist_len;
  const window_ref w = window_of(a, k1);
  for (int x = lane; x < len; x += 32)
    win[x] = window_value(a, h, w, x);
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
 * groups allowed to stay pending is an immediate). */
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
/* Waits until at most `pending` groups are in flight, rounded down to 6, 4, 2, 1 or 0 (waiting
 * for a little more than needed keeps the branch short). */
__device__ __forceinline__ void cp_async_wait_pending(int pending) {
  if (pending >= 6)
    cp_async_wait<6>();
  else if (pending >= 4)
    cp_async_wait<4>();
  else if (pending >= 2)
    cp_async_wait<2>();
  else if (pending >= 1)
    cp_async_wait<1>();
  else
    cp_async_wait<0>();
}

/* The window of one record header in registers: g[t] = a~ at x = lane + 32 t (x < min(len,
 * 32 CB_WIN_REGS)), the rest (long windows) is gathered by window_store from global memory. */
constexpr int CB_WIN_REGS = 4;
/* Window entries before position 0, kept zero: a lane past the end of its piece (column c >= its
 * length d, value 0) reads win[base - c + q] >= -(SE_TDBEM_CB_PIECE - 1) there. */
constexpr int CB_PAD = SE_TDBEM_CB_PIECE;

__device__ __forceinline__ void window_load(const se_tdbem_kernel_args &a, int j, int k1, int len,
                                            int lane, double *g) {
  const double *h = a.hist + (int64_t)j * a.hist_len;
  const window_ref w = window_of(a, k1);
#pragma unroll
  for (int t = 0; t < CB_WIN_REGS; t++)
    g[t] = lane + 32 * t < len ? window_value(a, h, w, lane + 32 * t) : 0.0;
}

/* win[x] = g's entries and the rest of the window, in the products' type T. */
template <typename T>
__device__ __forceinline__ void window_store(const se_tdbem_kernel_args &a, int j, int k1, int len,
                                             int lane, const double *g, T *win) {
#pragma unroll
  for (int t = 0; t < CB_WIN_REGS; t++)
    if (lane + 32 * t < len)
      win[lane + 32 * t] = (T)g[t];
  if (len > 32 * CB_WIN_REGS) {
    const double *h = a.hist + (int64_t)j * a.hist_len;
    const window_ref w = window_of(a, k1);
    for (int x = 32 * CB_WIN_REGS + lane; x < len; x += 32)
      win[x] = (T)window_value(a, h, w, x);
  }
}

/* The products' type of CB: float for float values (paper 002 computes in single precision; a
 * lane sums at most SE_TDBEM_CB_PIECE products per record in float, then adds them to its double
 * accumulators), double for double values. */
template <typename V> struct cb_products {
  typedef double T;
};
template <> struct cb_products<float> {
  typedef float T;
};

/* Contiguous-Blocking: one warp streams the records of its run (tile, chunk of slices) through a
 * ring of CB_RING bytes in shared memory with cp.async, CB_RING - CB_GROUP bytes ahead of the
 * record it multiplies, so that the loads of values and metadata never wait on the arithmetic.
 * Lane = row of the tile, accumulators in registers over the run. The window of the next record
 * (when it starts another slice) is loaded into registers before the current record is
 * multiplied and stored into shared memory after it. The columns of a record are unrolled: per
 * column and lane one value (at the column's first value, from a scan of the record's column
 * counts, + the lane's slot) and one new window entry from shared memory (the other NG - 1
 * entries slide along in registers) and NG products. */
template <typename V, int NG>
__global__ void __launch_bounds__(WARPS * 32) cb_kernel(se_tdbem_kernel_args a) {
  typedef typename cb_products<V>::T T;
  constexpr int PIECE = SE_TDBEM_CB_PIECE;
  extern __shared__ __align__(16) unsigned char smem_cb[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int tile = blockIdx.x * WARPS + warp;
  if (tile >= a.tiles)
    return;
  constexpr int RING = SE_TDBEM_CB_RING(sizeof(V)), GROUP = SE_TDBEM_CB_GROUP(sizeof(V));
  unsigned char *ring = smem_cb + warp * RING;
  const int wstride = se_tdbem_cb_window_stride(a.win_max, NG, (int)sizeof(T));
  T *win = reinterpret_cast<T *>(smem_cb + WARPS * RING) + warp * wstride;
  for (int x = lane; x < wstride; x += 32)
    win[x] = (T)0;
  const int64_t r = (int64_t)blockIdx.y * a.tiles + tile;
  const unsigned char *src = static_cast<const unsigned char *>(a.stream) + a.run_off[r];
  const int run_len = (int)(a.run_off[r + 1] - a.run_off[r]); /* < 2^31 (allocate_image) */
  constexpr int MASK = RING - 1;
  double acc[NG];
#pragma unroll
  for (int q = 0; q < NG; q++)
    acc[q] = 0.0;
  int issued = 0, pos = 0; /* bytes committed to the ring; the record being multiplied */
  int groups = 0;
  /* commits groups of CB_GROUP bytes while they fit behind pos in the ring */
  auto issue = [&]() {
    while (issued < run_len && issued + GROUP <= pos + RING) {
#pragma unroll
      for (int b = 0; b < GROUP; b += 512) {
        const int off = issued + b + 16 * lane;
        if (off < run_len)
          cp_async16(ring + (off & MASK), src + off);
      }
      cp_async_commit();
      issued += GROUP;
      groups++;
    }
  };
  /* waits until the bytes [0, need) of the run are in the ring */
  auto wait_for = [&](int need) {
    const int done = (need + GROUP - 1) / GROUP;
    cp_async_wait_pending(groups - done);
    __syncwarp();
  };
  auto header = [&](int at) { return *reinterpret_cast<const int4 *>(ring + (at & MASK)); };
  /* the products of one record: sums[q] += value c x win[base - c + q] over the lane's piece;
   * value c at ring byte vs + (first of column c: lane c's column_start) */
  auto multiply = [&](T(&sums)[NG], int d, int base, int dm, int vs, int column_start) {
    const T *wp = win + CB_PAD + base + NG - 1; /* w[t] = wp[-t] = win[base + NG - 1 - t] */
    T w[NG + PIECE - 1];
#pragma unroll
    for (int t = 0; t < NG - 1; t++)
      w[t] = wp[-t];
#pragma unroll
    for (int c = 0; c < PIECE; c++) {
      if (c >= dm)
        break;
      w[c + NG - 1] = wp[-(c + NG - 1)];
      const int at = (vs + __shfl_sync(FULL, column_start, c)) & MASK;
      const T v = d > c ? (T)*reinterpret_cast<const V *>(ring + at) : (T)0;
#pragma unroll
      for (int q = 0; q < NG; q++)
        sums[q] = fma(v, w[c + NG - 1 - q], sums[q]);
    }
  };
  if (run_len > 0) {
    issue();
    wait_for(16);
    int4 h = header(0); /* k1, window length without NG, local slice, values */
    double g[CB_WIN_REGS];
    window_load(a, h.z, h.x, h.y + NG - 1, lane, g);
    window_store(a, h.z, h.x, h.y + NG - 1, lane, g, win + CB_PAD);
    __syncwarp();
    while (pos < run_len) {
      const int vbytes = (h.w * (int)sizeof(V) + 15) & ~15;
      const int end = pos + SE_TDBEM_CB_HEAD + vbytes;
      wait_for(end + 16 < run_len ? end + 16 : run_len);
      int4 hn = make_int4(0, 0, -1, 0);
      if (end < run_len)
        hn = header(end);
      const bool new_win = end < run_len && hn.z != h.z;
      if (new_win)
        window_load(a, hn.z, hn.x, hn.y + NG - 1, lane, g);
      const int meta = *reinterpret_cast<const int *>(ring + ((pos + 16 + 4 * lane) & MASK));
      const int d = (meta >> 16) & 31, base = meta & 0xffff, slot = (meta >> 21) & 31;
      const int dm = (int)__reduce_max_sync(FULL, (unsigned)d);
      const int vs = pos + SE_TDBEM_CB_HEAD + slot * (int)sizeof(V); /* bytes */
      /* column lane's first value: the counts of the columns before it (an exclusive scan) */
      const int count = (int)((unsigned)meta >> 26);
      int column_end = count;
#pragma unroll
      for (int o = 1; o < 32; o <<= 1) {
        const int t = __shfl_up_sync(FULL, column_end, o);
        column_end += lane >= o ? t : 0;
      }
      const int column_start = (column_end - count) * (int)sizeof(V); /* bytes */
      if constexpr (sizeof(T) == sizeof(double)) {
        multiply(acc, d, base, dm, vs, column_start);
      } else {
        T sums[NG];
#pragma unroll
        for (int q = 0; q < NG; q++)
          sums[q] = (T)0;
        multiply(sums, d, base, dm, vs, column_start);
#pragma unroll
        for (int q = 0; q < NG; q++)
          acc[q] += (double)sums[q];
      }
      __syncwarp();
      if (new_win) {
        window_store(a, hn.z, hn.x, hn.y + NG - 1, lane, g, win + CB_PAD);
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
  const size_t per_warp =
      kernel == 0 ? SE_TDBEM_CB_RING(single ? 4 : 8) +
                        (size_t)se_tdbem_cb_window_stride(a->win_max, NG, single ? 4 : 8) *
                                           (single ? sizeof(float) : sizeof(double))
                  : (size_t)(a->win_max + NG) * sizeof(double);
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
