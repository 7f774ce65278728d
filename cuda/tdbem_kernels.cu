/* The tdbem GPU kernels (paper 002 Section 5, docs/tdbem.md Section 12): the multi-vector/vector
 * product of the Full-Blocking and Contiguous-Blocking images, the reduction of the chunks'
 * partial vectors, the history update. One warp handles one tile of 32 output rows for a chunk of
 * consecutive slices; for each slice it gathers the past values of the tile's k range into its
 * shared window once (CB with float values: one window per slice for the 4 tiles of a
 * thread-block), then multiplies the tile's blocks: each stored value is loaded once
 * (coalesced; CB: streamed through a shared-memory ring with cp.async) and multiplied with ng
 * consecutive window entries held in registers. The number of
 * vectors NG (1, 2, 4, 8, 16; any ng <= NG is computed by the NG kernel) and the FB block width
 * BC (16, 32) are template constants. Values float or double, accumulators double; products
 * double except CB with float values (cb_pair_kernel: float products summed in float over up to
 * 4 records); explicit fma (the build disables contraction, the kernels round like the CPU's
 * separate multiply and add only up to one rounding per term). */
#include <stdint.h>

#include "async_copy.cuh"
#include "tdbem_kernels.h"

namespace {

constexpr unsigned FULL = 0xffffffffu;
constexpr int WARPS = SE_TDBEM_WARPS; /* warps per thread-block (one tile each) */

/* The window of k1: position x holds a~_m, m = time - k1 + x, which is hist(m) for
 * max(0, time - kmax) <= m < known and 0 otherwise (not known yet, before the start, or k beyond
 * kmax: padding columns of FB blocks), i.e. for lo <= x < hi. slot0 + x is m's slot before the
 * wrap: slot0 + lo = (time - k1 + lo) mod hist_len, and hi - lo <= hist_len, so one subtraction
 * wraps every valid x. Set up once per window, 32-bit (a.time_slot = time mod hist_len); since
 * k1 - kmax <= lo <= k1, time_slot - k1 + lo lies in [-kmax, hist_len): one addition wraps it. */
struct window_ref {
  int slot0, lo, hi;
};
__device__ __forceinline__ window_ref window_of(const se_tdbem_kernel_args &a, int k1) {
  window_ref w;
  w.lo = max(k1 - a.kmax32, max(k1 - a.time32, 0)); /* k > kmax, m < 0 */
  w.hi = k1 - a.lag32;
  int first = a.time_slot - k1 + w.lo; /* the slot of x = lo */
  if (first < 0)
    first += a.hist_len32;
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

/* The chunk's sums of the lane's row tile * 32 + lane (if < n) into partial[chunk][q][row], q <
 * ng. */
template <int NG>
__device__ __forceinline__ void store_partial(const se_tdbem_kernel_args &a, int tile, int lane,
                                              const double (&acc)[NG]) {
  const int64_t row = (int64_t)tile * 32 + lane;
  if (row < a.n)
#pragma unroll
    for (int q = 0; q < NG; q++)
      if (q < a.ng)
        a.partial[((int64_t)blockIdx.y * a.ng + q) * a.n + row] = acc[q];
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
  store_partial<NG>(a, tile, lane, acc);
}

/* Waits until at most `pending` groups are in flight, rounded down to 6, 4, 2, 1 or 0 (waiting
 * for a little more than needed keeps the branch short). */
__device__ __forceinline__ void cp_async_wait_pending(int pending) {
  if (pending >= 6)
    copy_wait<6>();
  else if (pending >= 4)
    copy_wait<4>();
  else if (pending >= 2)
    copy_wait<2>();
  else if (pending >= 1)
    copy_wait<1>();
  else
    copy_wait<0>();
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

/* win[x] = g's entries and the rest of the window. */
__device__ __forceinline__ void window_store(const se_tdbem_kernel_args &a, int j, int k1, int len,
                                             int lane, const double *g, double *win) {
#pragma unroll
  for (int t = 0; t < CB_WIN_REGS; t++)
    if (lane + 32 * t < len)
      win[lane + 32 * t] = g[t];
  if (len > 32 * CB_WIN_REGS) {
    const double *h = a.hist + (int64_t)j * a.hist_len;
    const window_ref w = window_of(a, k1);
    for (int x = 32 * CB_WIN_REGS + lane; x < len; x += 32)
      win[x] = window_value(a, h, w, x);
  }
}

/* Contiguous-Blocking for double values: one warp streams the records of its run (tile, chunk of
 * slices) through a ring of CB_RING bytes in shared memory with cp.async, CB_RING - CB_GROUP
 * bytes ahead of the record it multiplies, so that the loads of values and metadata never wait on
 * the arithmetic.
 * Lane = row of the tile, accumulators in registers over the run. The window of the next record
 * (when it starts another slice) is loaded into registers before the current record is
 * multiplied and stored into shared memory after it. The columns of a record are unrolled: per
 * column and lane one value (at the column's first value, from a scan of the record's column
 * counts, + the lane's slot) and one new window entry from shared memory (the other NG - 1
 * entries slide along in registers) and NG products. */
template <int NG>
__global__ void __launch_bounds__(WARPS * 32) cb_kernel(se_tdbem_kernel_args a) {
  constexpr int PIECE = SE_TDBEM_CB_PIECE;
  extern __shared__ __align__(16) unsigned char smem_cb[];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int tile = blockIdx.x * WARPS + warp;
  if (tile >= a.tiles)
    return;
  constexpr int RING = SE_TDBEM_CB_RING(8), GROUP = SE_TDBEM_CB_GROUP;
  unsigned char *ring = smem_cb + warp * RING;
  const int wstride = se_tdbem_cb_window_stride(a.win_max, NG, (int)sizeof(double));
  double *win = reinterpret_cast<double *>(smem_cb + WARPS * RING) + warp * wstride;
  for (int x = lane; x < wstride; x += 32)
    win[x] = 0.0;
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
          copy16_async_s((unsigned)__cvta_generic_to_shared(ring + (off & MASK)), src + off);
      }
      copy_commit();
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
  auto multiply = [&](double(&sums)[NG], int d, int base, int dm, int vs, int column_start) {
    const double *wp = win + CB_PAD + base + NG - 1; /* w[t] = wp[-t] = win[base + NG - 1 - t] */
    double w[NG + PIECE - 1];
#pragma unroll
    for (int t = 0; t < NG - 1; t++)
      w[t] = wp[-t];
#pragma unroll
    for (int c = 0; c < PIECE; c++) {
      if (c >= dm)
        break;
      w[c + NG - 1] = wp[-(c + NG - 1)];
      const int at = (vs + __shfl_sync(FULL, column_start, c)) & MASK;
      const double v = d > c ? *reinterpret_cast<const double *>(ring + at) : 0.0;
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
      const int vbytes = (h.w * (int)sizeof(double) + 15) & ~15;
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
      const int vs = pos + SE_TDBEM_CB_HEAD + slot * (int)sizeof(double); /* bytes */
      /* column lane's first value: the counts of the columns before it (an exclusive scan) */
      const int count = (int)((unsigned)meta >> 26);
      int column_end = count;
#pragma unroll
      for (int o = 1; o < 32; o <<= 1) {
        const int t = __shfl_up_sync(FULL, column_end, o);
        column_end += lane >= o ? t : 0;
      }
      const int column_start = (column_end - count) * (int)sizeof(double); /* bytes */
      multiply(acc, d, base, dm, vs, column_start);
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
  store_partial<NG>(a, tile, lane, acc);
}

/* Shared-window helpers of the pair kernel: addresses are 32-bit shared-window addresses (the
 * ring's alignment is used as (offset & MASK) | ring). opaque() hands a value to the compiler as
 * computed once (it keeps per-warp addresses in registers instead of recomputing them). */
__device__ __forceinline__ unsigned opaque(unsigned x) {
  asm volatile("mov.b32 %0, %0;" : "+r"(x));
  return x;
}
__device__ __forceinline__ void sts(unsigned at, float v) {
  asm volatile("st.shared.f32 [%0], %1;" ::"r"(at), "f"(v) : "memory");
}
__device__ __forceinline__ float2 lds2f(unsigned at) {
  float2 v;
  asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];" : "=f"(v.x), "=f"(v.y) : "r"(at));
  return v;
}
/* The 8 bytes at `at` if `on`, else zeros. */
__device__ __forceinline__ float2 lds_pair(unsigned at, bool on) {
  float2 v;
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %3, 0;\n mov.f32 %0, 0f00000000;\n"
               " mov.f32 %1, 0f00000000;\n @p ld.shared.v2.f32 {%0, %1}, [%2];\n}\n"
               : "=f"(v.x), "=f"(v.y)
               : "r"(at), "r"((int)on));
  return v;
}
__device__ __forceinline__ uint4 lds16(unsigned at) {
  uint4 v;
  asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(at));
  return v;
}
__device__ __forceinline__ int4 lds16i(unsigned at) {
  const uint4 v = lds16(at);
  return make_int4((int)v.x, (int)v.y, (int)v.z, (int)v.w);
}
__device__ __forceinline__ uint2 lds8(unsigned at) {
  uint2 v;
  asm volatile("ld.shared.v2.u32 {%0, %1}, [%2];" : "=r"(v.x), "=r"(v.y) : "r"(at));
  return v;
}
__device__ __forceinline__ unsigned lds4(unsigned at) {
  unsigned v;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(at));
  return v;
}

/* The history row of local slice j, computed once (the asm keeps the compiler from folding it
 * into every entry's 64-bit address). */
__device__ __forceinline__ const double *history_row(const se_tdbem_kernel_args &a, int j) {
  const double *h = a.hist + (uint64_t)(unsigned)j * (unsigned)a.hist_len32;
  asm("mov.b64 %0, %0;" : "+l"(h));
  return h;
}
__device__ __forceinline__ void sts16(unsigned at, int4 v) {
  asm volatile("st.shared.v4.s32 [%0], {%1, %2, %3, %4};" ::"r"(at), "r"(v.x), "r"(v.y),
               "r"(v.z), "r"(v.w)
               : "memory");
}

/* The window of (slice, thread-block) in the pair kernel, set up once per launch by one thread
 * per slice of the chunk and kept in shared memory as an int4 of 16-bit fields (a window has at
 * most 65 015 entries): x, y: the address of the history slot of entry 0 before the wrap
 * (window_of's slot0, 64 bits), z: lo | (hi - lo) << 16, w: len | wrap << 16; entry x < len is
 * the history at that address + x (- hist_len for x >= wrap) for lo <= x < hi, else 0
 * (window_of); len = 0 where the block's tiles have no records in the slice. */
template <int NG>
__device__ __forceinline__ int4 cb_slice_window(const se_tdbem_kernel_args &a, int j) {
  const int2 ks =
      __ldg(reinterpret_cast<const int2 *>(a.cb_win) + (int64_t)j * gridDim.x + blockIdx.x);
  const int len = ks.y > 0 ? ks.y + NG - 1 : 0; /* k1, span */
  const window_ref w = window_of(a, ks.x);
  const int lo = min(w.lo, len), valid = max(min(w.hi, len) - lo, 0);
  const int wrap = min(a.hist_len32 - w.slot0, 0xffff); /* > lo: slot0 + lo < hist_len */
  const uint64_t at = (uint64_t)history_row(a, j) + (uint64_t)(int64_t)w.slot0 * sizeof(double);
  return make_int4((int)(unsigned)at, (int)(unsigned)(at >> 32),
                   (int)((unsigned)lo | (unsigned)valid << 16),
                   (int)((unsigned)len | (unsigned)wrap << 16));
}
/* Entry x of the window w from the history (a read-only load; kept in double until the store,
 * so that the slice's records hide the load's latency). */
__device__ __forceinline__ double cb_window_entry(const se_tdbem_kernel_args &a, const int4 &w,
                                                  int x) {
  const double *at = reinterpret_cast<const double *>((uint64_t)(unsigned)w.x |
                                                      (uint64_t)(unsigned)w.y << 32);
  const int lo = w.z & 0xffff, wrap = (int)((unsigned)w.w >> 16);
  return (unsigned)(x - lo) < ((unsigned)w.z >> 16) ? __ldg(at + (x >= wrap ? x - a.hist_len32 : x))
                                                    : 0.0;
}
/* Stores the window w into E and O (el: E + SE_TDBEM_CB_PIECE + x, ol: O + SE_TDBEM_CB_PIECE + 1
 * + x): entry x = threadIdx.x from g, the entries past the block's threads (windows longer than
 * THREADS entries, rare) straight from the history. */
template <int THREADS>
__device__ __forceinline__ void cb_window_store(const se_tdbem_kernel_args &a, const int4 &w,
                                                int x, double g, unsigned el, unsigned ol) {
  const int len = w.w & 0xffff;
  if (x < len) {
    sts(el, (float)g);
    sts(ol, (float)g);
  }
#pragma unroll 1
  for (int y = THREADS; x + y < len; y += THREADS) {
    const float v = (float)cb_window_entry(a, w, x + y);
    sts(el + 4 * y, v);
    sts(ol + 4 * y, v);
  }
}

/* The pair columns p = 0 .. pairs - 1 of a record in the pair kernel. For NG <= 8 the exit is
 * tested at even p only (one test per two pairs); an odd number of pairs then runs one more,
 * p = pairs < PAIRS, whose values are zeros for every lane, times finite window entries (y - 2p -
 * 1 >= SE_TDBEM_CB_PIECE - 21 > 0), as lanes past their piece read in any pair. NG 16 tests every
 * pair (measured 7% slower with the even tests). Per pair column and lane: w[t] = window y - 2p -
 * 1 + t (the entries of pair p - 1 slide by two, one 8-byte load of the two new ones at wp - 8p),
 * the lane's two values (zeros past its piece: the length is in meta's bits 21 ..) at the
 * half-warp's offset in tw + vb, then 2 NG float products (column c, vector q: window y - c + q). */
template <int NG, int PAIRS>
__device__ __forceinline__ void cb_pairs(float (&w)[NG + 2], float (&sums)[NG], int pairs,
                                         unsigned wp, unsigned vb, const unsigned (&tw)[6],
                                         unsigned meta, unsigned ring) {
  constexpr unsigned MASK = SE_TDBEM_CB_RING(4) - 1;
#pragma unroll
  for (int p = 0; p < PAIRS; p++) {
    if ((NG > 8 || (p & 1) == 0) && p >= pairs)
      break;
    if (p > 0)
#pragma unroll
      for (int t = NG; t >= 2; t--)
        w[t] = w[t - 2];
    const float2 u = lds2f(wp - 8 * p);
    w[0] = u.x;
    w[1] = u.y;
    /* the even pair adds both 16-bit offsets: the high one vanishes under the ring's mask */
    const unsigned off = (p & 1) ? vb + (tw[p >> 1] >> 16) : vb + tw[p >> 1];
    const float2 v = lds_pair((off & MASK) | ring, meta >= (unsigned)(2 * p + 1) << 21);
#pragma unroll
    for (int q = 0; q < NG; q++) {
      sums[q] = fmaf(v.x, w[q + 1], sums[q]);
      sums[q] = fmaf(v.y, w[q], sums[q]);
    }
  }
}

/* Contiguous-Blocking for float values, the pair layout (cuda/tdbem_kernels.h, docs/tdbem.md
 * Section 16): as cb_kernel (one warp per run, a cp.async ring, lane = row), but per pair column
 * and lane one 8-byte load of two values (at the offset of the column's half-warp part from the
 * record's table + 8 x the lane's slot; zeros past the lane's piece) and one 8-byte load of the
 * two new window entries (from the copy E or O that aligns them, chosen by the host), then 2 NG
 * float products; the other NG - 1 window entries slide along in registers. The ring starts at
 * a shared address that is a multiple of its size, so a ring address is (offset & MASK) | ring;
 * offsets count from the 128-byte boundary before the run, so a copy's source and destination
 * share their alignment. The window is one per slice and thread-block (Section 16, session 5):
 * the 4 warps walk the chunk's slices in step, each multiplying its tile's records of the slice
 * (maybe none) while the block's threads hold the next slice's window entries (one per thread)
 * in registers, stored into the second window buffer after the records, then one barrier per
 * slice. Products are summed in float over up to CBP_FLUSH records (at most 88 per lane and
 * vector), then added to the double accumulators. 64 registers (8 thread-blocks per
 * multiprocessor) for ng <= 8. */
template <int NG>
__global__ void __launch_bounds__(WARPS * 32, NG <= 8 ? 8 : 4)
    cb_pair_kernel(se_tdbem_kernel_args a) {
  constexpr int PAIRS = SE_TDBEM_CB_PIECE_PAIRS / 2, HEAD = SE_TDBEM_CB_HEAD_PAIRS;
  constexpr int RING = SE_TDBEM_CB_RING(4), GROUP = SE_TDBEM_CB_GROUP, MASK = RING - 1;
  constexpr int CBP_FLUSH = 4, THREADS = WARPS * 32;
  static_assert(GROUP == 2 * 32 * 16, "two cp.async per lane and group");
  static_assert(HEAD + 8 * 32 * PAIRS + 16 <= RING - GROUP, "a record fits behind a group");
  static_assert(NG <= 16 && 2 * PAIRS <= CB_PAD, "the window's bounds (se_tdbem_cb_pair_stride)");
  static_assert(SE_TDBEM_CHUNK_SLICES <= THREADS, "one thread per slice sets up its window");
  extern __shared__ __align__(16) unsigned char smem_cb[];
  const int x = threadIdx.x, lane = x & 31, warp = x >> 5;
  const int tile = blockIdx.x * WARPS + warp;
  const unsigned s0 = (unsigned)__cvta_generic_to_shared(smem_cb);
  const unsigned pad = (0u - s0) & (unsigned)MASK;
  const unsigned ring = opaque(s0 + pad + (unsigned)(warp * RING)); /* a multiple of RING */
  /* the windows of the chunk's even and odd slices (E then O, wbuf bytes each), then the
   * slices' windows (int4, cb_slice_window) */
  const int stride = se_tdbem_cb_pair_stride(a.win_max);
  const unsigned win = opaque(s0 + pad + WARPS * RING), wbuf = 8u * (unsigned)stride;
  const unsigned windows = win + 2 * wbuf;
  for (int y = x; y < 4 * stride; y += THREADS)
    sts(win + 4 * y, 0.0f);
  const int j0 = (int)(blockIdx.y * a.chunk); /* local slices: int32 in the records */
  const int slices = (int)opaque((unsigned)min(a.chunk, a.count - j0));
  if (x < slices) /* and an empty window after the last slice */
    sts16(windows + 16 * x, cb_slice_window<NG>(a, j0 + x));
  if (x == 0)
    sts16(windows + 16 * slices, make_int4(0, 0, 0, 0));
  const unsigned el = opaque(win + 4 * (CB_PAD + x)), ol = opaque(el + 4 * (stride + 1));
  /* the run [pos, run_end), offsets from the 128-byte boundary at or before it (the copies'
   * source and destination then share their alignment); empty for warps past the last tile */
  const unsigned char *src = static_cast<const unsigned char *>(a.stream) + 16 * lane;
  int pos = 0, run_end = 0;
  if (tile < a.tiles) {
    const int64_t r = (int64_t)blockIdx.y * a.tiles + tile, start = a.run_off[r];
    src += start & ~(int64_t)127;
    pos = (int)(start & 127);
    run_end = pos + (int)(a.run_off[r + 1] - start); /* < 2^31 (allocate_image) */
  }
  double acc[NG];
  float sums[NG];
#pragma unroll
  for (int q = 0; q < NG; q++) {
    acc[q] = 0.0;
    sums[q] = 0.0f;
  }
  int issued = 0, groups = 0, records = 0;
  /* commits groups while they fit behind pos (whole groups: the stream has slack at its end) */
  auto issue = [&]() {
    const int limit = min(run_end, pos + RING - GROUP + 1);
#pragma unroll 1
    while (issued < limit) {
      const unsigned dst = ((unsigned)(issued + 16 * lane) & (unsigned)MASK) | ring;
      copy16_async_s(dst, src);
      copy16_async_s(dst + 512, src + 512);
      copy_commit();
      issued += GROUP;
      src += GROUP;
      groups++;
    }
  };
  /* waits until the bytes [0, need) of the run are in the ring (at most RING / GROUP - 1 groups
   * stay in flight) and makes them visible to the warp */
  auto wait_for = [&](int need) {
    const int pending = groups - (int)(((unsigned)need + GROUP - 1) / GROUP);
    if (pending >= 2)
      copy_wait<2>();
    else if (pending == 1)
      copy_wait<1>();
    else
      copy_wait<0>();
    __syncwarp();
  };
  auto at = [&](unsigned off) { return (off & (unsigned)MASK) | ring; };
  /* the header of the record at pos: k1, span, local slice, bytes | pairs << 16 (slice ~0: the
   * run is done) */
  uint4 h = make_uint4(0, 0, 0xffffffffu, 0);
  if (pos < run_end) {
    issue();
    wait_for(pos + 16);
    h = lds16(at(pos));
  }
  __syncthreads(); /* the zeros and the slices' windows */
  {
    const int4 w = lds16i(windows);
    cb_window_store<THREADS>(a, w, x, cb_window_entry(a, w, x), el, ol);
  }
  __syncthreads();
  unsigned cur = 0; /* the byte offset of slice j's window from win: 0 or wbuf */
#pragma unroll 1
  for (int i = 0, j = j0; i < slices; i++, j++) {
    const double g = cb_window_entry(a, lds16i(windows + 16 * (i + 1)), x); /* the next slice's */
    const unsigned e = win + cur; /* E of slice j */
    while (h.z == (unsigned)j) {
      const int end = pos + (int)(h.w & 0xffffu);
      wait_for(end + 16 < run_end ? end + 16 : run_end);
      uint4 hn = make_uint4(0, 0, 0xffffffffu, 0);
      if (end < run_end)
        hn = lds16(at(end));
      const unsigned tb = (unsigned)(pos + 16 + 24 * (lane >> 4)); /* the half-warp's offsets */
      const uint2 t0 = lds8(at(tb)), t1 = lds8(at(tb + 8)), t2 = lds8(at(tb + 16));
      const unsigned tw[6] = {t0.x, t0.y, t1.x, t1.y, t2.x, t2.y};
      const unsigned meta = lds4(at(pos + 64 + 4 * lane));
      const unsigned vb = (unsigned)(pos + HEAD) + ((meta >> 13) & 0xf8u); /* + 8 slot */
      const unsigned wp = e + 8 * (meta & 0xffffu); /* float k at wp + 4k: window y - 1 + k */
      float w[NG + 2]; /* pair p: w[t] = window y - 2p - 1 + t */
#pragma unroll
      for (int t = 2; t <= NG; t += 2) {
        const float2 u = lds2f(wp + 4 * t);
        w[t] = u.x;
        w[t + 1] = u.y;
      }
      const int pairs = (int)(h.w >> 16);
      cb_pairs<NG, PAIRS>(w, sums, pairs, wp, vb, tw, meta, ring);
      if (++records == CBP_FLUSH) {
        records = 0;
#pragma unroll
        for (int q = 0; q < NG; q++) {
          acc[q] += (double)sums[q];
          sums[q] = 0.0f;
        }
      }
      __syncwarp(); /* the record is read before its ring bytes take new groups */
      pos = end;
      h = hn;
      issue();
    }
    cur = wbuf - cur;
    cb_window_store<THREADS>(a, lds16i(windows + 16 * (i + 1)), x, g, el + cur, ol + cur);
    __syncthreads(); /* the next window is stored, this one is read */
  }
#pragma unroll
  for (int q = 0; q < NG; q++)
    acc[q] += (double)sums[q];
  store_partial<NG>(a, tile, lane, acc);
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

/* The chunk reduction: a thread-block adds the chunks of RED_X consecutive entries x of the
 * ng x n vectors; warp w adds, in chunk order, the chunks [w chunks / RED_WARPS, (w + 1) chunks /
 * RED_WARPS) of RED_X / 32 entries per lane (the loads of RED_BATCH chunks before their sums),
 * then the first RED_X threads add the warps' sums in warp order: deterministic, with many loads
 * in flight (the partials, tens of MB, are mostly in L2 after the product). out may be mapped
 * pinned host memory: the writes then cross the bus while the other blocks still sum. */
constexpr int RED_WARPS = 8, RED_X = 64, RED_BATCH = 4;
__global__ void __launch_bounds__(RED_WARPS * 32)
    reduce_kernel(const double *partial, int chunks, int64_t total, double *out) {
  constexpr int PER = RED_X / 32;
  __shared__ double sums[RED_WARPS][RED_X];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int64_t x0 = (int64_t)blockIdx.x * RED_X + lane;
  const int c0 = (int)((int64_t)warp * chunks / RED_WARPS);
  const int c1 = (int)((int64_t)(warp + 1) * chunks / RED_WARPS);
  double s[PER];
#pragma unroll
  for (int t = 0; t < PER; t++)
    s[t] = 0.0;
  int c = c0;
  for (; c + RED_BATCH <= c1; c += RED_BATCH) { /* the batch's loads first, then its sums */
    double v[RED_BATCH][PER];
#pragma unroll
    for (int u = 0; u < RED_BATCH; u++)
#pragma unroll
      for (int t = 0; t < PER; t++)
        v[u][t] = x0 + 32 * t < total ? partial[(int64_t)(c + u) * total + x0 + 32 * t] : 0.0;
#pragma unroll
    for (int u = 0; u < RED_BATCH; u++)
#pragma unroll
      for (int t = 0; t < PER; t++)
        s[t] += v[u][t];
  }
  for (; c < c1; c++)
#pragma unroll
    for (int t = 0; t < PER; t++)
      if (x0 + 32 * t < total)
        s[t] += partial[(int64_t)c * total + x0 + 32 * t];
#pragma unroll
  for (int t = 0; t < PER; t++)
    sums[warp][lane + 32 * t] = s[t];
  __syncthreads();
  const int64_t x = (int64_t)blockIdx.x * RED_X + threadIdx.x;
  if (threadIdx.x < RED_X && x < total) {
    double r = sums[0][threadIdx.x];
#pragma unroll
    for (int w = 1; w < RED_WARPS; w++)
      r += sums[w][threadIdx.x];
    out[x] = r;
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
    {cb_kernel<1>, cb_kernel<2>, cb_kernel<4>, cb_kernel<8>, cb_kernel<16>},
    {cb_pair_kernel<1>, cb_pair_kernel<2>, cb_pair_kernel<4>, cb_pair_kernel<8>,
     cb_pair_kernel<16>}};
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

/* The summation kernel for (kernel, single, ng, bc) and its dynamic shared memory for win_max;
 * raises the kernel's shared-memory limit where it needs more than 48 KB. */
cudaError_t sum_kernel_of(int kernel, int single, int ng, int bc, int win_max, sum_kernel *k,
                          size_t *bytes) {
  const int index = ng <= 1 ? 0 : ng <= 2 ? 1 : ng <= 4 ? 2 : ng <= 8 ? 3 : 4;
  const int NG = 1 << index;
  *k = kernel == 0 ? cb_kernels[single != 0][index] : fb_kernels[single != 0][bc == 32][index];
  if (kernel == 0 && single) /* the rings, one ring more for their alignment, two windows of two
                                copies, the chunk's slices' windows (int4) */
    *bytes = (WARPS + 1) * SE_TDBEM_CB_RING(4) +
             2 * 2 * (size_t)se_tdbem_cb_pair_stride(win_max) * sizeof(float) +
             (SE_TDBEM_CHUNK_SLICES + 1) * 16;
  else if (kernel == 0)
    *bytes = WARPS * (SE_TDBEM_CB_RING(8) +
                      (size_t)se_tdbem_cb_window_stride(win_max, NG, 8) * sizeof(double));
  else
    *bytes = WARPS * (size_t)(win_max + NG) * sizeof(double);
  if (*bytes > 48 * 1024)
    return cudaFuncSetAttribute(*k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)*bytes);
  return cudaSuccess;
}

} // namespace

extern "C" cudaError_t se_tdbem_launch_sum(int kernel, int single, const se_tdbem_kernel_args *a,
                                           cudaStream_t stream) {
  sum_kernel k;
  size_t bytes;
  const cudaError_t rc = sum_kernel_of(kernel, single, a->ng, a->bc, a->win_max, &k, &bytes);
  if (rc != cudaSuccess)
    return rc;
  const dim3 grid((unsigned)((a->tiles + WARPS - 1) / WARPS), (unsigned)a->chunks);
  k<<<grid, WARPS * 32, bytes, stream>>>(*a);
  return cudaGetLastError();
}

extern "C" cudaError_t se_tdbem_sum_blocks_per_sm(int kernel, int single, int ng, int bc,
                                                  int win_max, int *blocks) {
  sum_kernel k;
  size_t bytes;
  *blocks = 0;
  const cudaError_t rc = sum_kernel_of(kernel, single, ng, bc, win_max, &k, &bytes);
  if (rc != cudaSuccess)
    return rc;
  return cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks, k, WARPS * 32, bytes);
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
  const int64_t total = (int64_t)ng * n;
  if (total > 0)
    reduce_kernel<<<(unsigned)((total + RED_X - 1) / RED_X), RED_WARPS * 32, 0, stream>>>(
        partial, chunks, total, out);
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
