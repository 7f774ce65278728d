// Batched mono-morphology Hines solves, one thread per system (hines_mono.h, docs/gpu-hines.md).
//
// Every kernel's per-thread work is a __host__ __device__ function, so se_hines_emulate can
// run the very same code (index arithmetic, pipeline, branch-point bookkeeping) on the host.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <new>
#include <vector>

#include "hines_coop.h"
#include "hines_mono.h"
#include "async_copy.cuh"
#include "se_cuda.h"
#include "se_error.h"

namespace {

// ---------------------------------------------------------------------------------------------
// Small device helpers with host fallbacks (used by the emulation).

SE_HD inline int32_t ld_uniform(const int32_t *p) {
#ifdef __CUDA_ARCH__
  return __ldg(p);
#else
  return *p;
#endif
}

// IEEE reciprocal, round to nearest (the host's 1.0 / x is the same correctly rounded value).
SE_HD inline double recip(double x) {
#ifdef __CUDA_ARCH__
  return __drcp_rn(x);
#else
  return 1.0 / x;
#endif
}

SE_HD inline void fence_thread() {
#ifdef __CUDA_ARCH__
  __threadfence_block();
#endif
}

// ---------------------------------------------------------------------------------------------
// Layouts: row i of system s sits at base(s) + i * rs in each array.

struct LayFlat {
  int32_t n;
  SE_HD int64_t base(int64_t s) const { return s * n; }
  SE_HD int64_t rs() const { return 1; }
};

struct LayFull {
  int64_t n_systems;
  SE_HD int64_t base(int64_t s) const { return s; }
  SE_HD int64_t rs() const { return n_systems; }
};

template <int BS> struct LayBlock {
  int32_t n;
  SE_HD int64_t base(int64_t s) const { return (s / BS) * (int64_t)n * BS + s % BS; }
  SE_HD int64_t rs() const { return BS; }
};

// Run-time layout (the STREAM kernel and the helpers).
struct LayAny {
  int layout;
  int32_t n, bs;
  int64_t n_systems;
  SE_HD int64_t base(int64_t s) const {
    return se_hines_index((se_hines_layout)layout, n, n_systems, bs, s, 0);
  }
  SE_HD int64_t rs() const {
    return layout == SE_HINES_LAYOUT_FULL ? n_systems
                                          : (layout == SE_HINES_LAYOUT_BLOCK ? bs : 1);
  }
};

// ---------------------------------------------------------------------------------------------
// The paper's kernels: Algorithm 1 written plainly, p[] shared by all systems (read through the
// read-only cache; every thread of a warp reads the same p[i]).

template <class Lay>
SE_HD inline void plain_body(const Lay &lay, int64_t s, int32_t n, const int32_t *par,
                             const double *u, const double *l, double *d, double *rhs) {
  const int64_t b = lay.base(s), rs = lay.rs();
  for (int32_t i = n - 1; i >= 1; i--) {
    const int64_t ii = b + i * rs, pp = b + (int64_t)ld_uniform(par + i) * rs;
    const double f = u[ii] / d[ii];
    d[pp] -= f * l[ii];
    rhs[pp] -= f * rhs[ii];
  }
  rhs[b] /= d[b];
  for (int32_t i = 1; i < n; i++) {
    const int64_t ii = b + i * rs, pp = b + (int64_t)ld_uniform(par + i) * rs;
    rhs[ii] -= l[ii] * rhs[pp];
    rhs[ii] /= d[ii];
  }
}

// Block-Shared (paper 000, Sec. 3.1): BLOCK layout, one CTA per block of BS systems, the block's
// rhs in shared memory (n x BS doubles), d, u, l in device memory.
template <int BS>
SE_HD inline void shared_body(int64_t s, int t, int32_t n, const int32_t *par, const double *u,
                              const double *l, double *d, double *rhs, double *sm) {
  const int64_t b = (s / BS) * (int64_t)n * BS + t;
  double *r = sm + t;
  for (int32_t i = 0; i < n; i++)
    r[i * BS] = rhs[b + (int64_t)i * BS];
  for (int32_t i = n - 1; i >= 1; i--) {
    const int32_t p = ld_uniform(par + i);
    const int64_t ii = b + (int64_t)i * BS, pp = b + (int64_t)p * BS;
    const double f = u[ii] / d[ii];
    d[pp] -= f * l[ii];
    r[p * BS] -= f * r[i * BS];
  }
  r[0] /= d[b];
  for (int32_t i = 1; i < n; i++) {
    const int32_t p = ld_uniform(par + i);
    const int64_t ii = b + (int64_t)i * BS;
    r[i * BS] -= l[ii] * r[p * BS];
    r[i * BS] /= d[ii];
  }
  for (int32_t i = 0; i < n; i++)
    rhs[b + (int64_t)i * BS] = r[i * BS];
}

// ---------------------------------------------------------------------------------------------
// The STREAM kernel.
//
// Backward sweep, row i = n-1 .. 0 (acc = the children's contributions):
//   d'_i = d_i - acc_d,  rhs'_i = rhs_i - acc_r,  r = 1/d'_i,  h_i = l_i r,  g_i = rhs'_i r
//   contribution to p(i): ((u_i l_i) r, u_i g_i)
// Forward sweep: x_0 = g_0, x_i = g_i - h_i x_p(i).
// The per-row plan (ops, built on the host from the shared tree) says where each contribution
// goes: a register when p(i) = i-1 (CARRY), else the accumulator of p(i): its own tail cells in
// shared memory when p(i) < R, a shared-memory slot when p(i) >= R; in the forward sweep x_p
// comes from a register, the tail cell or a slot the same way. Rows < R ("tail") keep (h, g) in
// shared memory; rows >= R ("head") write (h, g) over (d, rhs) and read them back in the
// forward sweep. The plan is copied once per CTA into shared memory. Inputs reach shared memory
// through a cp.async pipeline of ST stages of CH rows, per thread (8-byte copies of its own
// column, no barrier) or per warp (16-byte copies, __syncwarp; see the copy functions below).

enum { OP_CARRY = 1, OP_FAR_INIT = 2, OP_HAS_FAR = 4 };
// int4 per row: x flags, y parent (-1 for row 0), z the parent's slots (parent >= R, not CARRY),
// w the row's own slots (row >= R with far children); see stream_ops.

struct StreamArgs {
  LayAny lay;
  int32_t R;
  const int4 *ops;
  const double *u, *l;
  double *d, *rhs;
};

template <int T> struct StreamShape {
  static constexpr int CH = 256 / T; // rows per stage: a stage is 256 row-values per array
};

template <int T, int ST> struct StreamStage {
  static constexpr int words = ST * StreamShape<T>::CH * 4; // per thread
};

// Copies. W16 = false: each thread copies its own column, 8 bytes per cp.async.ca (any layout).
// W16 = true (FULL with an even S, BLOCK): the 32 systems of a warp are contiguous in each row, so
// the warp copies each row of each array as 16 pieces of 16 bytes (cp.async.cg, which bypasses
// L1) into the columns of its lanes, and reads them after cp.async.wait_group + __syncwarp.
// `nvalid` systems of the warp exist (the rest is zero-filled or skipped).
template <int T, int ST, bool W16>
SE_HD inline void stream_issue_backward(int c, int nb, int32_t n, int64_t rs, const double *U,
                                        const double *L, const double *D, const double *X,
                                        double *col, int lane, int nvalid) {
  constexpr int CH = StreamShape<T>::CH;
  if (c < nb) {
    const int st = c % ST;
    if (W16) {
      double *wcol = col - lane; // column of lane 0
      const int j = lane & 15;
      const int bytes = nvalid - 2 * j >= 2 ? 16 : (nvalid - 2 * j == 1 ? 8 : 0);
      SE_UNROLL
      for (int m = 0; m < 2 * CH; m++) {
        const int k = m >> 1, a = (2 * m + (lane >> 4)) & 3;
        const int32_t i = n - 1 - c * CH - k;
        if (i >= 0 && bytes) {
          const double *src = a == 0 ? U : (a == 1 ? L : (a == 2 ? D : X));
          copy16_async(wcol + ((st * CH + k) * 4 + a) * T + 2 * j, src + i * rs + 2 * j, bytes);
        }
      }
    } else {
      SE_UNROLL
      for (int k = 0; k < CH; k++) {
        const int32_t i = n - 1 - c * CH - k;
        if (i >= 0) {
          const int64_t o = i * rs;
          double *w = col + ((st * CH + k) * 4) * T;
          copy8_async(w, U + o);
          copy8_async(w + T, L + o);
          copy8_async(w + 2 * T, D + o);
          copy8_async(w + 3 * T, X + o);
        }
      }
    }
  }
  copy_commit();
}

template <int T, int ST, bool W16>
SE_HD inline void stream_issue_forward(int c, int nf, int32_t R, int32_t n, int64_t rs,
                                       const double *D, const double *X, double *col, int lane,
                                       int nvalid) {
  constexpr int CH = StreamShape<T>::CH;
  if (c < nf) {
    const int st = c % ST;
    if (W16) {
      double *wcol = col - lane;
      const int j = lane & 15, a = lane >> 4;
      const int bytes = nvalid - 2 * j >= 2 ? 16 : (nvalid - 2 * j == 1 ? 8 : 0);
      SE_UNROLL
      for (int k = 0; k < CH; k++) {
        const int32_t i = R + c * CH + k;
        if (i < n && bytes)
          copy16_async(wcol + ((st * CH + k) * 4 + a) * T + 2 * j, (a ? X : D) + i * rs + 2 * j,
                       bytes);
      }
    } else {
      SE_UNROLL
      for (int k = 0; k < CH; k++) {
        const int32_t i = R + c * CH + k;
        if (i < n) {
          const int64_t o = i * rs;
          double *w = col + ((st * CH + k) * 4) * T;
          copy8_async(w, D + o);
          copy8_async(w + T, X + o);
        }
      }
    }
  }
  copy_commit();
}

// Waits for the oldest pending stage (and, in warp mode, for the other lanes' copies).
template <int N, bool W16> SE_HD inline void stage_wait() {
  copy_wait<N>();
#ifdef __CUDA_ARCH__
  if (W16)
    __syncwarp();
#endif
}

// One thread's solve. ops: the per-row plan (shared memory on the device); sm: the per-thread
// words (column t of each word of T doubles). Threads of systems s >= S exist only in warp
// mode (their lanes copy for the others); they never touch device memory.
template <int T, int ST, bool W16>
SE_HD inline void stream_body(const StreamArgs &a, const int4 *ops, int64_t s, int t,
                              double *sm) {
  constexpr int CH = StreamShape<T>::CH;
  const int32_t n = a.lay.n, R = a.R;
  const int64_t S = a.lay.n_systems, rs = a.lay.rs();
  const bool live = s < S;
  const int lane = W16 ? (t & 31) : 0;
  const int64_t s0 = s - lane; // first system of the warp (W16), else s
  const int nvalid = W16 ? (int)(S - s0 < 32 ? S - s0 : 32) : 1;
  const int64_t bc = a.lay.base(s0); // copy base: system s0
  const int64_t b = live ? a.lay.base(s) : bc;
  const double *cU = a.u + bc, *cL = a.l + bc, *cD = a.d + bc, *cX = a.rhs + bc;
  double *D = a.d + b, *X = a.rhs + b;
  double *col = sm + t;                                   // stage word w: col[w T]
  double *tail = sm + StreamStage<T, ST>::words * T + t; // row i: h at 2i, g (then x) at 2i+1
  double *slot = tail + 2 * (int64_t)R * T;               // slot k: 2k (d part), 2k+1 (rhs)

  // ---- backward sweep
  const int nb = (n + CH - 1) / CH;
  for (int c = 0; c < ST - 1; c++)
    stream_issue_backward<T, ST, W16>(c, nb, n, rs, cU, cL, cD, cX, col, lane, nvalid);
  double cd = 0.0, cr = 0.0; // contribution carried to row i-1
  for (int c = 0; c < nb; c++) {
    stage_wait<ST - 2, W16>();
    const int st = c % ST;
    const int32_t top = n - 1 - c * CH;
    double uu[CH], ll[CH], dd[CH], rr[CH];
    int4 op[CH];
    SE_UNROLL
    for (int k = 0; k < CH; k++) {
      if (top - k >= 0) {
        const double *w = col + ((st * CH + k) * 4) * T;
        uu[k] = w[0];
        ll[k] = w[T];
        dd[k] = w[2 * T];
        rr[k] = w[3 * T];
        op[k] = ops[top - k];
      } else {
        uu[k] = ll[k] = dd[k] = rr[k] = 0.0;
        op[k] = make_int4(0, -1, 0, 0);
      }
    }
#ifdef __CUDA_ARCH__
    if (W16)
      __syncwarp(); // every lane has read stage st before it is refilled
#endif
    stream_issue_backward<T, ST, W16>(c + ST - 1, nb, n, rs, cU, cL, cD, cX, col, lane, nvalid);
    SE_UNROLL
    for (int k = 0; k < CH; k++) {
      const int32_t i = top - k;
      if (i < 0)
        break;
      double ad = cd, ar = cr;
      if (op[k].x & OP_HAS_FAR) {
        const double *acc = i < R ? tail + 2 * (int64_t)i * T : slot + 2 * (op[k].w & 0xffff) * T;
        ad += acc[0];
        ar += acc[T];
      }
      const double ul = uu[k] * ll[k]; // off the dependency chain
      const double r = recip(dd[k] - ad);
      const double h = ll[k] * r, g = (rr[k] - ar) * r;
      if (i < R) {
        tail[2 * (int64_t)i * T] = h;
        tail[(2 * (int64_t)i + 1) * T] = g;
      } else if (live) {
        D[i * rs] = h;
        X[i * rs] = g;
      }
      const double nd = ul * r, nr = uu[k] * g;
      if (op[k].x & OP_CARRY) {
        cd = nd;
        cr = nr;
      } else {
        cd = 0.0;
        cr = 0.0;
        const int32_t p = op[k].y;
        if (p >= 0) {
          double *acc = p < R ? tail + 2 * (int64_t)p * T : slot + 2 * (op[k].z & 0xffff) * T;
          if (op[k].x & OP_FAR_INIT) {
            acc[0] = nd;
            acc[T] = nr;
          } else {
            acc[0] += nd;
            acc[T] += nr;
          }
        }
      }
    }
  }
  copy_wait<0>();
  fence_thread(); // the head's (h, g) stores above before the cp.async reads below
#ifdef __CUDA_ARCH__
  if (W16)
    __syncwarp(); // and the other lanes' stores too: lanes copy for each other
#endif

  // ---- forward sweep: prefetch the head's first stages, then the tail from shared memory
  const int32_t nh = n - R;
  const int nf = (nh + CH - 1) / CH;
  for (int c = 0; c < ST - 1; c++)
    stream_issue_forward<T, ST, W16>(c, nf, R, n, rs, cD, cX, col, lane, nvalid);
  double xc = 0.0; // x of the previous row
  for (int32_t i0 = 0; i0 < R; i0 += CH) {
    double hh[CH], gg[CH];
    int4 op[CH];
    SE_UNROLL
    for (int k = 0; k < CH; k++) {
      const int32_t i = i0 + k;
      if (i < R) {
        hh[k] = tail[2 * (int64_t)i * T];
        gg[k] = tail[(2 * (int64_t)i + 1) * T];
        op[k] = ops[i];
      } else {
        hh[k] = gg[k] = 0.0;
        op[k] = make_int4(0, -1, 0, 0);
      }
    }
    SE_UNROLL
    for (int k = 0; k < CH; k++) {
      const int32_t i = i0 + k;
      if (i >= R)
        break;
      double x = gg[k];
      if (i > 0) {
        // a far parent p < i < R: its x was kept in its tail cell
        const double xp = (op[k].x & OP_CARRY) ? xc : tail[(2 * (int64_t)op[k].y + 1) * T];
        x = gg[k] - hh[k] * xp;
      }
      if (op[k].x & OP_HAS_FAR)
        tail[(2 * (int64_t)i + 1) * T] = x;
      if (live)
        X[i * rs] = x;
      xc = x;
    }
  }
  for (int c = 0; c < nf; c++) {
    stage_wait<ST - 2, W16>();
    const int st = c % ST;
    const int32_t i0 = R + c * CH;
    double hh[CH], gg[CH];
    int4 op[CH];
    SE_UNROLL
    for (int k = 0; k < CH; k++) {
      if (i0 + k < n) {
        const double *w = col + ((st * CH + k) * 4) * T;
        hh[k] = w[0];
        gg[k] = w[T];
        op[k] = ops[i0 + k];
      } else {
        hh[k] = gg[k] = 0.0;
        op[k] = make_int4(0, -1, 0, 0);
      }
    }
#ifdef __CUDA_ARCH__
    if (W16)
      __syncwarp();
#endif
    stream_issue_forward<T, ST, W16>(c + ST - 1, nf, R, n, rs, cD, cX, col, lane, nvalid);
    SE_UNROLL
    for (int k = 0; k < CH; k++) {
      const int32_t i = i0 + k;
      if (i >= n)
        break;
      double x = gg[k];
      if (i > 0) {
        double xp;
        if (op[k].x & OP_CARRY)
          xp = xc;
        else if (op[k].y < R)
          xp = tail[(2 * (int64_t)op[k].y + 1) * T];
        else
          xp = slot[2 * (op[k].z >> 16) * T];
        x = gg[k] - hh[k] * xp;
      }
      if (op[k].x & OP_HAS_FAR)
        slot[2 * (op[k].w >> 16) * T] = x;
      if (live)
        X[i * rs] = x;
      xc = x;
    }
  }
  copy_wait<0>();
}

// ---------------------------------------------------------------------------------------------
// Kernels.

template <class Lay>
__global__ void __launch_bounds__(128)
    k_plain(Lay lay, int64_t n_systems, int32_t n, const int32_t *__restrict__ par,
            const double *__restrict__ u, const double *__restrict__ l, double *d, double *rhs) {
  const int64_t s = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (s < n_systems)
    plain_body(lay, s, n, par, u, l, d, rhs);
}

template <int BS>
__global__ void __launch_bounds__(BS)
    k_shared(int64_t n_systems, int32_t n, const int32_t *__restrict__ par,
             const double *__restrict__ u, const double *__restrict__ l, double *d, double *rhs) {
  extern __shared__ double se_hines_sm[];
  const int t = threadIdx.x;
  const int64_t s = (int64_t)blockIdx.x * BS + t;
  if (s < n_systems)
    shared_body<BS>(s, t, n, par, u, l, d, rhs, se_hines_sm);
}

template <int T, int ST, bool W16>
__global__ void __launch_bounds__(T, 1) k_stream(StreamArgs a) {
  extern __shared__ __align__(16) double se_hines_sm[];
  // The per-row plan, read by every thread at the same row: one copy per CTA in shared memory.
  int4 *ops = reinterpret_cast<int4 *>(se_hines_sm);
  for (int j = threadIdx.x; j < a.lay.n; j += T)
    ops[j] = a.ops[j];
  __syncthreads();
  const int t = threadIdx.x;
  const int64_t s = (int64_t)blockIdx.x * T + t;
  if ((W16 ? s - (t & 31) : s) >= a.lay.n_systems)
    return; // in warp mode only whole warps beyond the last system leave
  stream_body<T, ST, W16>(a, ops, s, t, se_hines_sm + 2 * (int64_t)a.lay.n);
}

__global__ void k_fill(LayAny lay, uint64_t seed, const int32_t *__restrict__ nchild, double *u,
                       double *l, double *d, double *rhs) {
  const int64_t s = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= lay.n_systems)
    return;
  const int64_t b = lay.base(s), rs = lay.rs();
  for (int32_t i = 0; i < lay.n; i++) {
    double uu, ll, dd, rr;
    se_hines_random_row(seed, s, i, nchild[i], &uu, &ll, &dd, &rr);
    const int64_t o = b + i * rs;
    u[o] = uu;
    l[o] = ll;
    d[o] = dd;
    rhs[o] = rr;
  }
}

typedef void (*stream_kernel_fn)(StreamArgs);

template <bool W16> stream_kernel_fn stream_kernel_w(int threads, int stages) {
  if (threads == 32)
    return stages == 8 ? k_stream<32, 8, W16> : k_stream<32, 4, W16>;
  if (threads == 64)
    return stages == 8 ? k_stream<64, 8, W16> : k_stream<64, 4, W16>;
  return stages == 8 ? k_stream<128, 8, W16> : k_stream<128, 4, W16>;
}

stream_kernel_fn stream_kernel(int threads, int stages, bool w16) {
  return w16 ? stream_kernel_w<true>(threads, stages) : stream_kernel_w<false>(threads, stages);
}

// The host emulation runs the per-thread copy mode (lanes do not copy for each other there).
typedef void (*stream_host_fn)(const StreamArgs &, const int4 *, int64_t, int, double *);

stream_host_fn stream_host(int threads, int stages) {
  if (threads == 32)
    return stages == 8 ? stream_body<32, 8, false> : stream_body<32, 4, false>;
  if (threads == 64)
    return stages == 8 ? stream_body<64, 8, false> : stream_body<64, 4, false>;
  return stages == 8 ? stream_body<128, 8, false> : stream_body<128, 4, false>;
}

// ---------------------------------------------------------------------------------------------
// Host planning.

const se_hines_device_limits h200_limits = {233472, 232448, 1024, 132};

// Builds the per-row plan of the STREAM kernel for tail R; returns the number of slots.
// Backward: a parent p >= R with far children accumulates in a slot from its first (highest)
// far child to row p. Forward: a row p >= R with far children keeps x_p in a slot from row p to
// its last far child. Slot indices are packed: z = backward slot of the parent | forward slot of
// the parent << 16, w = backward slot of the row | forward slot of the row << 16.
int stream_ops(const int32_t *parent, int32_t n, int32_t R, int4 *ops) {
  std::vector<char> has_far(n, 0), seen(n, 0);
  std::vector<int32_t> last_far(n, -1);
  std::vector<int> slot_of(n, -1), free_slots;
  int slots = 0, fslots = 0;
  for (int32_t i = 1; i < n; i++)
    if (parent[i] != i - 1) {
      has_far[parent[i]] = 1;
      last_far[parent[i]] = i;
    }
  auto take = [&](int &count) {
    int k;
    if (free_slots.empty()) {
      k = count++;
    } else {
      k = free_slots.back();
      free_slots.pop_back();
    }
    return k;
  };
  for (int32_t i = n - 1; i >= 0; i--) {
    int4 op = make_int4(0, -1, 0, 0);
    if (has_far[i]) {
      op.x |= OP_HAS_FAR;
      if (i >= R) {
        op.w = slot_of[i];
        free_slots.push_back(slot_of[i]); // read before the parent's slot is written below
      }
    }
    if (i >= 1) {
      const int32_t p = parent[i];
      op.y = p;
      if (p == i - 1) {
        op.x |= OP_CARRY;
      } else {
        if (!seen[p]) {
          seen[p] = 1;
          op.x |= OP_FAR_INIT;
          if (p >= R)
            slot_of[p] = take(slots);
        }
        if (p >= R)
          op.z = slot_of[p];
      }
    }
    ops[i] = op;
  }
  free_slots.clear();
  std::fill(slot_of.begin(), slot_of.end(), -1);
  for (int32_t i = 0; i < n; i++) {
    int4 &op = ops[i];
    if (i >= 1 && !(op.x & OP_CARRY) && parent[i] >= R) {
      const int32_t p = parent[i];
      op.z |= slot_of[p] << 16;
      if (last_far[p] == i)
        free_slots.push_back(slot_of[p]); // read before this row's own x is stored below
    }
    if (has_far[i] && i >= R) {
      slot_of[i] = take(fslots);
      op.w |= slot_of[i] << 16;
    }
  }
  return slots > fslots ? slots : fslots;
}

struct StreamPlan {
  se_hines_stream_config cfg; // resolved
  int32_t R;
  int slots, words; // words: doubles per thread
  size_t smem;      // bytes per CTA: the plan (16 n) and T x words doubles
  bool w16;         // warp-cooperative 16-byte copies
  std::vector<int4> ops;
};

// Settings with the unset fields filled by fixed defaults (the emulation, which has no device;
// batches choose the unset fields with the model of choose_stream).
se_hines_stream_config stream_auto(const se_hines_stream_config *req) {
  se_hines_stream_config c = {64, 8, 1, -1};
  if (req) {
    if (req->threads)
      c.threads = req->threads;
    if (req->stages)
      c.stages = req->stages;
    if (req->ctas_per_sm)
      c.ctas_per_sm = req->ctas_per_sm;
    c.tail_rows = req->tail_rows;
  }
  return c;
}

int plan_stream(const int32_t *parent, int32_t n, se_hines_layout layout, int32_t bs,
                int64_t n_systems, const se_hines_stream_config *req,
                const se_hines_device_limits &lim, StreamPlan *plan, se_error *err) {
  if (layout == SE_HINES_LAYOUT_BLOCK && bs < 32)
    SE_FAIL(err, SE_ERR_UNSUPPORTED,
            "STREAM kernel: block size %d (a warp's 32 systems must be adjacent in each row: "
            "32, 64 or 128)",
            bs);
  se_hines_stream_config c = stream_auto(req);
  if (c.threads != 32 && c.threads != 64 && c.threads != 128)
    SE_FAIL(err, SE_ERR_ARG, "STREAM kernel: %d threads per CTA (32, 64 or 128)", c.threads);
  if (c.stages != 4 && c.stages != 8)
    SE_FAIL(err, SE_ERR_ARG, "STREAM kernel: %d pipeline stages (4 or 8)", c.stages);
  if (c.ctas_per_sm < 1 || c.ctas_per_sm > 32)
    SE_FAIL(err, SE_ERR_ARG, "STREAM kernel: %d CTAs per multiprocessor (1..32)", c.ctas_per_sm);
  if (c.tail_rows < -1)
    SE_FAIL(err, SE_ERR_ARG, "STREAM kernel: tail_rows %d (-1, 0 or positive)", c.tail_rows);
  const size_t T = (size_t)c.threads;
  size_t budget = lim.smem_per_sm / (size_t)c.ctas_per_sm;
  budget = budget > lim.smem_reserved ? budget - lim.smem_reserved : 0;
  if (budget > lim.smem_optin)
    budget = lim.smem_optin;
  const size_t ops_bytes = (size_t)n * sizeof(int4); // the plan, one copy per CTA
  const long words_max = budget > ops_bytes ? (long)((budget - ops_bytes) / (8 * T)) : 0;
  const long stage_words = (long)c.stages * (256 / c.threads) * 4;
  plan->ops.assign((size_t)n, make_int4(0, -1, -1, -1));
  long R = c.tail_rows < 0 ? n : (c.tail_rows < n ? c.tail_rows : n);
  if (c.tail_rows != 0) {
    long room = (words_max - stage_words) / 2;
    if (R > room)
      R = room > 0 ? room : 0;
  }
  for (;;) {
    const int slots = stream_ops(parent, n, (int32_t)R, plan->ops.data());
    const long words = stage_words + 2 * R + 2 * (long)slots;
    if (words <= words_max) {
      plan->slots = slots;
      break;
    }
    if (R == 0 || c.tail_rows == 0)
      SE_FAIL(err, SE_ERR_UNSUPPORTED,
              "STREAM kernel (%d threads, %d stages, %d CTAs/SM): the pipeline (%ld words) and "
              "%d branch-point slots need %ld doubles per thread, the shared memory holds %ld",
              c.threads, c.stages, c.ctas_per_sm, stage_words, slots, words, words_max);
    long r2 = (words_max - stage_words - 2 * (long)slots) / 2;
    R = r2 < R ? (r2 > 0 ? r2 : 0) : R - 1;
  }
  c.tail_rows = (int)R;
  plan->cfg = c;
  plan->R = (int32_t)R;
  plan->words = (int)(stage_words + 2 * R + 2 * (long)plan->slots);
  plan->smem = ops_bytes + (size_t)plan->words * 8 * T;
  plan->w16 = se_hines_copy16(layout, n_systems);
  return SE_OK;
}

bool kernel_fits_layout(se_hines_kernel k, se_hines_layout lay) {
  switch (k) {
  case SE_HINES_KERNEL_FLAT:
    return lay == SE_HINES_LAYOUT_FLAT;
  case SE_HINES_KERNEL_FULL:
    return lay == SE_HINES_LAYOUT_FULL;
  case SE_HINES_KERNEL_BLOCK:
  case SE_HINES_KERNEL_BLOCK_SHARED:
    return lay == SE_HINES_LAYOUT_BLOCK;
  default:
    return true;
  }
}

se_hines_kernel paper_kernel_of(se_hines_layout lay) {
  return lay == SE_HINES_LAYOUT_FULL    ? SE_HINES_KERNEL_FULL
         : lay == SE_HINES_LAYOUT_BLOCK ? SE_HINES_KERNEL_BLOCK
                                        : SE_HINES_KERNEL_FLAT;
}

// Resolves kernel + settings into info (and the STREAM plan when that is the kernel).
int resolve(const int32_t *parent, int32_t n, se_hines_layout layout, int32_t bs,
            int64_t n_systems, se_hines_kernel kernel, const se_hines_stream_config *cfg,
            const se_hines_device_limits &lim, se_hines_plan_info *info, StreamPlan *plan,
            se_error *err) {
  memset(info, 0, sizeof *info);
  if ((int)kernel < 0 || (int)kernel > (int)SE_HINES_KERNEL_COOP)
    SE_FAIL(err, SE_ERR_ARG, "unknown Hines kernel %d", (int)kernel);
  if (kernel == SE_HINES_KERNEL_COOP)
    SE_FAIL(err, SE_ERR_ARG, "the COOP kernel runs on a device batch (se_hines_batch_solve) or "
                             "in se_hines_coop_emulate");
  if (!kernel_fits_layout(kernel, layout))
    SE_FAIL(err, SE_ERR_ARG, "the %s kernel needs the %s layout; this batch is %s",
            se_hines_kernel_name(kernel),
            kernel == SE_HINES_KERNEL_FLAT   ? "flat"
            : kernel == SE_HINES_KERNEL_FULL ? "full"
                                             : "block",
            se_hines_layout_name(layout));
  if (kernel == SE_HINES_KERNEL_AUTO) {
    se_error e2 = {SE_OK, {0}};
    const int rc = plan_stream(parent, n, layout, bs, n_systems, cfg, lim, plan, &e2);
    if (rc == SE_OK) {
      kernel = SE_HINES_KERNEL_STREAM;
    } else if (rc == SE_ERR_UNSUPPORTED) {
      kernel = paper_kernel_of(layout); // the STREAM plan does not fit the shared memory
    } else {
      *err = e2;
      return rc;
    }
  } else if (kernel == SE_HINES_KERNEL_STREAM) {
    SE_TRY(plan_stream(parent, n, layout, bs, n_systems, cfg, lim, plan, err));
  }
  info->kernel = kernel;
  switch (kernel) {
  case SE_HINES_KERNEL_STREAM:
    info->stream = plan->cfg;
    info->tail_rows = plan->R;
    info->slots = plan->slots;
    info->shared_bytes = plan->smem;
    info->threads_per_cta = plan->cfg.threads;
    info->copy16 = plan->w16;
    info->model_bytes = 40.0 + 32.0 * (double)(n - plan->R) / (double)n;
    break;
  case SE_HINES_KERNEL_BLOCK_SHARED: {
    if (bs < 32)
      SE_FAIL(err, SE_ERR_UNSUPPORTED,
              "Block-Shared kernel: block size %d (one CTA of BS threads per block: 32, 64 or "
              "128)",
              bs);
    const size_t smem = (size_t)n * (size_t)bs * 8;
    if (smem > lim.smem_optin)
      SE_FAIL(err, SE_ERR_UNSUPPORTED,
              "Block-Shared kernel: rhs of %d rows x %d systems needs %zu bytes of shared "
              "memory, a CTA may have %zu",
              n, bs, smem, lim.smem_optin);
    info->shared_bytes = smem;
    info->threads_per_cta = bs;
    info->model_bytes = 64.0;
    break;
  }
  default:
    info->threads_per_cta = 128;
    info->model_bytes = 80.0;
    break;
  }
  return SE_OK;
}

} // namespace

// ---------------------------------------------------------------------------------------------
// The batch.

struct se_hines_batch {
  int32_t n, bs;
  int64_t n_systems, size; // systems, doubles per array
  se_hines_layout layout;
  std::vector<int32_t> parent, nchild;
  int32_t *d_parent, *d_nchild;
  double *u, *l, *d, *rhs, *save_d, *save_rhs;
  cudaStream_t stream;
  se_hines_device_limits lim;
  // cached STREAM plan
  bool have_plan, plan_fits;
  se_error plan_err;
  se_hines_stream_config plan_req;
  StreamPlan plan;
  double plan_cost; // the cost model's cycles of the automatic STREAM plan
  int4 *d_ops;
  // the automatic COOP choice (decided once), and its plan once a solve uses it
  bool coop_checked, coop_fits;
  se_error coop_err;
  se_hines_coop_config coop_cfg;
  double coop_cost;
  se_hines_coop *coop;
};

extern "C" const char *se_hines_kernel_name(se_hines_kernel kernel) {
  switch (kernel) {
  case SE_HINES_KERNEL_AUTO:
    return "auto";
  case SE_HINES_KERNEL_FLAT:
    return "flat";
  case SE_HINES_KERNEL_FULL:
    return "full";
  case SE_HINES_KERNEL_BLOCK:
    return "block";
  case SE_HINES_KERNEL_BLOCK_SHARED:
    return "block-shared";
  case SE_HINES_KERNEL_STREAM:
    return "stream";
  case SE_HINES_KERNEL_COOP:
    return "coop";
  }
  return "(unknown kernel)";
}

extern "C" const char *se_hines_layout_name(se_hines_layout layout) {
  switch (layout) {
  case SE_HINES_LAYOUT_FLAT:
    return "flat";
  case SE_HINES_LAYOUT_FULL:
    return "full";
  case SE_HINES_LAYOUT_BLOCK:
    return "block";
  }
  return "(unknown layout)";
}

static int check_tree(const int32_t *parent, int32_t n, int64_t n_systems, se_hines_layout layout,
                      int32_t bs, se_error *err) {
  if (n < 1 || !parent)
    SE_FAIL(err, SE_ERR_ARG, "Hines batch: %d rows (at least 1 and a parent array)", n);
  if (n_systems < 1)
    SE_FAIL(err, SE_ERR_ARG, "Hines batch: %lld systems (at least 1)", (long long)n_systems);
  if (layout != SE_HINES_LAYOUT_FLAT && layout != SE_HINES_LAYOUT_FULL &&
      layout != SE_HINES_LAYOUT_BLOCK)
    SE_FAIL(err, SE_ERR_ARG, "Hines batch: unknown layout %d", (int)layout);
  if (layout == SE_HINES_LAYOUT_BLOCK && !se_hines_block_size_ok(bs))
    SE_FAIL(err, SE_ERR_ARG, "Hines batch: block size %d (4, 8, 16, 32, 64 or 128)", bs);
  return se_hines_check_parents(parent, n, "Hines batch", err);
}

extern "C" void se_hines_batch_destroy(se_hines_batch *b) {
  if (!b)
    return;
  if (b->stream)
    cudaStreamSynchronize(b->stream);
  se_hines_coop_destroy(b->coop);
  cudaFree(b->d_parent);
  cudaFree(b->d_nchild);
  cudaFree(b->u);
  cudaFree(b->l);
  cudaFree(b->d);
  cudaFree(b->rhs);
  cudaFree(b->save_d);
  cudaFree(b->save_rhs);
  cudaFree(b->d_ops);
  if (b->stream)
    cudaStreamDestroy(b->stream);
  delete b;
}

static int create_inner(se_hines_batch *b, se_error *err) {
  int dev = 0;
  cudaDeviceProp prop;
  SE_CUDA_CHECK(err, cudaGetDevice(&dev));
  SE_CUDA_CHECK(err, cudaGetDeviceProperties(&prop, dev));
  b->lim.smem_per_sm = prop.sharedMemPerMultiprocessor;
  b->lim.smem_optin = prop.sharedMemPerBlockOptin;
  b->lim.smem_reserved = prop.reservedSharedMemPerBlock;
  b->lim.sms = prop.multiProcessorCount;
  SE_CUDA_CHECK(err, cudaStreamCreateWithFlags(&b->stream, cudaStreamNonBlocking));
  const size_t bytes = (size_t)b->size * sizeof(double);
  SE_CUDA_CHECK(err, cudaMalloc((void **)&b->d_parent, (size_t)b->n * sizeof(int32_t)));
  SE_CUDA_CHECK(err, cudaMalloc((void **)&b->d_nchild, (size_t)b->n * sizeof(int32_t)));
  SE_CUDA_CHECK(err, cudaMalloc((void **)&b->u, bytes));
  SE_CUDA_CHECK(err, cudaMalloc((void **)&b->l, bytes));
  SE_CUDA_CHECK(err, cudaMalloc((void **)&b->d, bytes));
  SE_CUDA_CHECK(err, cudaMalloc((void **)&b->rhs, bytes));
  SE_CUDA_CHECK(err, cudaMalloc((void **)&b->d_ops, (size_t)b->n * sizeof(int4)));
  SE_CUDA_CHECK(err, cudaMemcpy(b->d_parent, b->parent.data(), (size_t)b->n * sizeof(int32_t),
                                cudaMemcpyHostToDevice));
  SE_CUDA_CHECK(err, cudaMemcpy(b->d_nchild, b->nchild.data(), (size_t)b->n * sizeof(int32_t),
                                cudaMemcpyHostToDevice));
  // Padding systems of a BLOCK batch are never computed; zero everything for tidiness.
  SE_CUDA_CHECK(err, cudaMemsetAsync(b->u, 0, bytes, b->stream));
  SE_CUDA_CHECK(err, cudaMemsetAsync(b->l, 0, bytes, b->stream));
  SE_CUDA_CHECK(err, cudaMemsetAsync(b->d, 0, bytes, b->stream));
  SE_CUDA_CHECK(err, cudaMemsetAsync(b->rhs, 0, bytes, b->stream));
  // the device, not only b->stream (non-blocking): the cudaMemcpy uploads' DMA as well
  SE_CUDA_CHECK(err, cudaDeviceSynchronize());
  return SE_OK;
}

extern "C" int se_hines_batch_create(const int32_t *parent, int32_t n, int64_t n_systems,
                                    se_hines_layout layout, int32_t bs, se_hines_batch **batch,
                                    se_error *err) {
  *batch = NULL;
  SE_TRY(check_tree(parent, n, n_systems, layout, bs, err));
  se_hines_batch *b = new (std::nothrow) se_hines_batch();
  if (!b)
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory for a Hines batch");
  b->n = n;
  b->bs = layout == SE_HINES_LAYOUT_BLOCK ? bs : 1;
  b->n_systems = n_systems;
  b->layout = layout;
  b->size = se_hines_array_size(layout, n, n_systems, b->bs);
  b->parent.assign(parent, parent + n);
  b->nchild.assign((size_t)n, 0);
  for (int32_t i = 1; i < n; i++)
    b->nchild[(size_t)parent[i]]++;
  int rc = create_inner(b, err);
  if (rc != SE_OK) {
    se_error_prepend(err, "creating a Hines batch of %lld systems x %d rows (%s layout): ",
                     (long long)n_systems, n, se_hines_layout_name(layout));
    se_hines_batch_destroy(b);
    return rc;
  }
  *batch = b;
  return SE_OK;
}

extern "C" const se_hines_device_limits *se_hines_h200_limits(void) { return &h200_limits; }

extern "C" cudaStream_t se_hines_batch_stream(const se_hines_batch *b) { return b->stream; }

extern "C" void se_hines_batch_get_view(const se_hines_batch *b, se_hines_batch_view *v) {
  v->n = b->n;
  v->bs = b->bs;
  v->n_systems = b->n_systems;
  v->layout = b->layout;
  v->parent = b->parent.data();
  v->u = b->u;
  v->l = b->l;
  v->d = b->d;
  v->rhs = b->rhs;
  v->stream = b->stream;
  v->limits = b->lim;
}

static LayAny lay_of(const se_hines_batch *b) {
  LayAny l = {(int)b->layout, b->n, b->bs, b->n_systems};
  return l;
}

extern "C" int se_hines_batch_upload(se_hines_batch *b, se_hines_layout host_layout,
                                    const double *u, const double *l, const double *d,
                                    const double *rhs, se_error *err) {
  const double *src[4] = {u, l, d, rhs};
  double *dst[4] = {b->u, b->l, b->d, b->rhs};
  std::vector<double> tmp;
  for (int a = 0; a < 4; a++) {
    if (!src[a])
      continue;
    const double *from = src[a];
    if (host_layout != b->layout) {
      tmp.assign((size_t)b->size, 0.0);
      for (int64_t s = 0; s < b->n_systems; s++)
        for (int32_t i = 0; i < b->n; i++)
          tmp[(size_t)se_hines_index(b->layout, b->n, b->n_systems, b->bs, s, i)] =
              src[a][se_hines_index(host_layout, b->n, b->n_systems, b->bs, s, i)];
      from = tmp.data();
    }
    SE_CUDA_CHECK(err, cudaMemcpyAsync(dst[a], from, (size_t)b->size * sizeof(double),
                                       cudaMemcpyHostToDevice, b->stream));
    SE_CUDA_CHECK(err, cudaStreamSynchronize(b->stream));
  }
  return SE_OK;
}

extern "C" int se_hines_batch_download(const se_hines_batch *b, se_hines_layout host_layout,
                                      double *x, se_error *err) {
  if (host_layout == b->layout) {
    SE_CUDA_CHECK(err, cudaMemcpyAsync(x, b->rhs, (size_t)b->size * sizeof(double),
                                       cudaMemcpyDeviceToHost, b->stream));
    SE_CUDA_CHECK(err, cudaStreamSynchronize(b->stream));
    return SE_OK;
  }
  std::vector<double> tmp((size_t)b->size);
  SE_CUDA_CHECK(err, cudaMemcpyAsync(tmp.data(), b->rhs, (size_t)b->size * sizeof(double),
                                     cudaMemcpyDeviceToHost, b->stream));
  SE_CUDA_CHECK(err, cudaStreamSynchronize(b->stream));
  for (int64_t s = 0; s < b->n_systems; s++)
    for (int32_t i = 0; i < b->n; i++)
      x[se_hines_index(host_layout, b->n, b->n_systems, b->bs, s, i)] =
          tmp[(size_t)se_hines_index(b->layout, b->n, b->n_systems, b->bs, s, i)];
  return SE_OK;
}

extern "C" int se_hines_batch_download_system(const se_hines_batch *b, int which, int64_t s,
                                             double *x, se_error *err) {
  if (which < 0 || which > 3 || s < 0 || s >= b->n_systems)
    SE_FAIL(err, SE_ERR_ARG, "download of array %d of system %lld (arrays 0..3, systems 0..%lld)",
            which, (long long)s, (long long)b->n_systems - 1);
  const double *arr[4] = {b->u, b->l, b->d, b->rhs};
  const LayAny lay = lay_of(b);
  SE_CUDA_CHECK(err, cudaMemcpy2DAsync(x, sizeof(double), arr[which] + lay.base(s),
                                       (size_t)lay.rs() * sizeof(double), sizeof(double),
                                       (size_t)b->n, cudaMemcpyDeviceToHost, b->stream));
  SE_CUDA_CHECK(err, cudaStreamSynchronize(b->stream));
  return SE_OK;
}

extern "C" int se_hines_batch_fill_random(se_hines_batch *b, uint64_t seed, se_error *err) {
  const int threads = 128;
  const int64_t blocks = (b->n_systems + threads - 1) / threads;
  k_fill<<<(unsigned)blocks, threads, 0, b->stream>>>(lay_of(b), seed, b->d_nchild, b->u, b->l,
                                                      b->d, b->rhs);
  SE_CUDA_CHECK_LAUNCH(err, "k_fill");
  return SE_OK;
}

extern "C" int se_hines_batch_save(se_hines_batch *b, se_error *err) {
  const size_t bytes = (size_t)b->size * sizeof(double);
  if (!b->save_d) {
    SE_CUDA_CHECK(err, cudaMalloc((void **)&b->save_d, bytes));
    SE_CUDA_CHECK(err, cudaMalloc((void **)&b->save_rhs, bytes));
  }
  SE_CUDA_CHECK(err, cudaMemcpyAsync(b->save_d, b->d, bytes, cudaMemcpyDeviceToDevice, b->stream));
  SE_CUDA_CHECK(err,
                cudaMemcpyAsync(b->save_rhs, b->rhs, bytes, cudaMemcpyDeviceToDevice, b->stream));
  return SE_OK;
}

extern "C" int se_hines_batch_restore(se_hines_batch *b, se_error *err) {
  const size_t bytes = (size_t)b->size * sizeof(double);
  if (!b->save_d)
    SE_FAIL(err, SE_ERR_ARG, "se_hines_batch_restore without se_hines_batch_save");
  SE_CUDA_CHECK(err, cudaMemcpyAsync(b->d, b->save_d, bytes, cudaMemcpyDeviceToDevice, b->stream));
  SE_CUDA_CHECK(err,
                cudaMemcpyAsync(b->rhs, b->save_rhs, bytes, cudaMemcpyDeviceToDevice, b->stream));
  return SE_OK;
}

static bool same_request(const se_hines_stream_config &a, const se_hines_stream_config &c) {
  return a.threads == c.threads && a.stages == c.stages && a.ctas_per_sm == c.ctas_per_sm &&
         a.tail_rows == c.tail_rows;
}

// The automatic STREAM settings (docs/gpu-hines.md, "Automatic choice"). Candidates: the
// settings measured on the H200 (threads x CTAs per multiprocessor 32x1, 64x1, 64x2, 128x1,
// 128x2, 128x4, each with the largest tail, and 128 threads without a tail), 4 stages; fields
// the caller set are kept. Each is costed by two limits, in multiprocessor cycles:
//   bytes    model bytes x compartments / (SMs x AUTO_BYTES_PER_CYCLE)
//   latency  waves x n x tau: each thread's rows are a dependency chain of AUTO_ROW_INSTR
//            instructions, issued every AUTO_CPI cycles by a warp that has its scheduler to
//            itself, every w cycles when w warps share one (tau = AUTO_ROW_INSTR x
//            max(AUTO_CPI, w)); waves and w from the occupancy the CUDA runtime reports
// cost = max + 1/4 min; the cheapest wins, ties to the earlier candidate. The constants were
// fitted to simengine-bench gpu-hines on the H200 (docs/gpu-hines.md).
static const double AUTO_BYTES_PER_CYCLE = 15.5; // 95% of 4.27 TB/s / (132 SMs x 1.98 GHz)
static const double AUTO_ROW_INSTR = 150.0;      // instructions per row (both sweeps), one warp
static const double AUTO_CPI = 3.9;              // cycles per instruction of a lone warp (ncu)

struct AutoCandidate {
  int threads, ctas, tail; // tail: -1 = as many rows as fit
};
static const AutoCandidate auto_candidates[] = {{32, 1, -1},  {64, 1, -1},  {64, 2, -1},
                                                {128, 1, -1}, {128, 2, -1}, {128, 4, -1},
                                                {128, 1, 0}};

extern "C" void se_hines_auto_waves(int64_t blocks, int ctas, int sms, double *waves,
                                   int64_t *resident) {
  const int64_t per_wave = (int64_t)ctas * sms;
  *waves = (double)((blocks + per_wave - 1) / per_wave);
  *resident = blocks < per_wave ? (blocks + sms - 1) / sms : ctas;
}

extern "C" double se_hines_auto_cost(double model_bytes, int32_t n, int64_t n_systems, int sms,
                                     double t_lat) {
  const double t_bytes =
      model_bytes * (double)n * (double)n_systems / (AUTO_BYTES_PER_CYCLE * sms);
  const double hi = t_bytes > t_lat ? t_bytes : t_lat, lo = t_bytes > t_lat ? t_lat : t_bytes;
  return hi + 0.25 * lo;
}

// Cost of a plan with `ctas` resident CTAs per multiprocessor (see above).
static double auto_cost(int32_t n, int64_t n_systems, int sms, int threads, int ctas,
                        double model_bytes) {
  double waves;
  int64_t resident; // CTAs per SM
  se_hines_auto_waves((n_systems + threads - 1) / threads, ctas, sms, &waves, &resident);
  const double w = (double)resident * threads / 32.0 / 4.0; // warps per scheduler
  const double tau = AUTO_ROW_INSTR * (w > AUTO_CPI ? w : AUTO_CPI);
  return se_hines_auto_cost(model_bytes, n, n_systems, sms, waves * (double)n * tau);
}

static int stream_occupancy(const StreamPlan &plan, const se_hines_device_limits &lim, int *ctas,
                            se_error *err) {
  stream_kernel_fn fn = stream_kernel(plan.cfg.threads, plan.cfg.stages, plan.w16);
  SE_CUDA_CHECK(err, cudaFuncSetAttribute((const void *)fn,
                                          cudaFuncAttributeMaxDynamicSharedMemorySize,
                                          (int)lim.smem_optin));
  SE_CUDA_CHECK(err, cudaFuncSetAttribute((const void *)fn,
                                          cudaFuncAttributePreferredSharedMemoryCarveout,
                                          (int)cudaSharedmemCarveoutMaxShared));
  SE_CUDA_CHECK(err, cudaOccupancyMaxActiveBlocksPerMultiprocessor(ctas, (const void *)fn,
                                                                   plan.cfg.threads, plan.smem));
  return SE_OK;
}

static int choose_stream(const se_hines_batch *b, const se_hines_stream_config &raw,
                         StreamPlan *best, double *best_cost_out, se_error *err) {
  if (raw.threads != 0 && raw.threads != 32 && raw.threads != 64 && raw.threads != 128)
    SE_FAIL(err, SE_ERR_ARG, "STREAM kernel: %d threads per CTA (32, 64 or 128)", raw.threads);
  if (raw.stages != 0 && raw.stages != 4 && raw.stages != 8)
    SE_FAIL(err, SE_ERR_ARG, "STREAM kernel: %d pipeline stages (4 or 8)", raw.stages);
  if (raw.ctas_per_sm < 0 || raw.ctas_per_sm > 32)
    SE_FAIL(err, SE_ERR_ARG, "STREAM kernel: %d CTAs per multiprocessor (1..32)",
            raw.ctas_per_sm);
  if (raw.tail_rows < -1)
    SE_FAIL(err, SE_ERR_ARG, "STREAM kernel: tail_rows %d (-1, 0 or positive)", raw.tail_rows);
  const bool all_set = raw.threads && raw.stages && raw.ctas_per_sm;
  const int n_cand = all_set ? 1 : (int)(sizeof auto_candidates / sizeof auto_candidates[0]);
  double best_cost = 0.0;
  bool found = false;
  se_error last = {SE_OK, {0}};
  int matched = 0;
  for (int k = 0; k <= n_cand; k++) {
    AutoCandidate ac = k < n_cand ? auto_candidates[k] : AutoCandidate{128, 1, -1};
    if (k == n_cand) { // no listed candidate has the requested fields: the request itself
      if (matched)
        break;
      if (raw.threads)
        ac.threads = raw.threads;
      if (raw.ctas_per_sm)
        ac.ctas = raw.ctas_per_sm;
    }
    if (!all_set && ((raw.threads && raw.threads != ac.threads) ||
                     (raw.ctas_per_sm && raw.ctas_per_sm != ac.ctas)))
      continue;
    matched++;
    se_hines_stream_config c = {raw.threads ? raw.threads : ac.threads, raw.stages ? raw.stages : 4,
                                raw.ctas_per_sm ? raw.ctas_per_sm : ac.ctas,
                                raw.tail_rows != -1 ? raw.tail_rows : ac.tail};
    StreamPlan plan;
    se_error e2 = {SE_OK, {0}};
    const int rc = plan_stream(b->parent.data(), b->n, b->layout, b->bs, b->n_systems, &c, b->lim,
                               &plan, &e2);
    if (rc == SE_ERR_UNSUPPORTED) {
      last = e2;
      continue;
    }
    if (rc != SE_OK) {
      *err = e2;
      return rc;
    }
    if (all_set) { // nothing to choose
      *best = plan;
      *best_cost_out = 0.0;
      return SE_OK;
    }
    int ctas = 0;
    SE_TRY(stream_occupancy(plan, b->lim, &ctas, err));
    if (ctas < 1)
      continue;
    const double model = 40.0 + 32.0 * (double)(b->n - plan.R) / (double)b->n;
    const double cost = auto_cost(b->n, b->n_systems, b->lim.sms, c.threads, ctas, model);
    if (!found || cost < best_cost) {
      found = true;
      best_cost = cost;
      *best = plan;
    }
  }
  if (!found && last.code == SE_OK)
    se_error_set(&last, SE_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,
                 "STREAM kernel: no CTA of the requested settings fits a multiprocessor");
  if (!found) {
    *err = last;
    return last.code != SE_OK ? last.code : SE_ERR_UNSUPPORTED;
  }
  *best_cost_out = best_cost;
  return SE_OK;
}

static void stream_info(const se_hines_batch *b, const StreamPlan &plan, se_hines_plan_info *info) {
  memset(info, 0, sizeof *info);
  info->kernel = SE_HINES_KERNEL_STREAM;
  info->stream = plan.cfg;
  info->tail_rows = plan.R;
  info->slots = plan.slots;
  info->shared_bytes = plan.smem;
  info->threads_per_cta = plan.cfg.threads;
  info->copy16 = plan.w16;
  info->model_bytes = 40.0 + 32.0 * (double)(b->n - plan.R) / (double)b->n;
}

// The automatic COOP settings of the batch (decided once; none for the FLAT layout).
static void coop_decide(se_hines_batch *b) {
  if (b->coop_checked)
    return;
  b->coop_checked = true;
  b->coop_err = se_error{SE_OK, {0}};
  b->coop_fits = se_hines_coop_choose(b->parent.data(), b->n, b->n_systems, b->layout, b->bs,
                                      &b->lim,
                                      &b->coop_cfg, &b->coop_cost, &b->coop_err) == SE_OK;
}

// info for the COOP kernel with the automatic settings; creates its plan on first use.
static int coop_use(se_hines_batch *b, se_hines_plan_info *info, se_error *err) {
  if (!b->coop)
    SE_TRY(se_hines_coop_create(b, &b->coop_cfg, &b->coop, err));
  se_hines_coop_get_plan_info(b->coop, info);
  return SE_OK;
}

extern "C" int se_hines_batch_plan(se_hines_batch *b, se_hines_kernel kernel,
                                  const se_hines_stream_config *cfg, se_hines_plan_info *info,
                                  se_error *err) {
  if (kernel == SE_HINES_KERNEL_COOP) {
    coop_decide(b);
    if (!b->coop_fits) {
      *err = b->coop_err;
      return err->code;
    }
    return coop_use(b, info, err);
  }
  // AUTO considers COOP when no STREAM setting is given
  const bool auto_coop = kernel == SE_HINES_KERNEL_AUTO &&
                         (!cfg || (!cfg->threads && !cfg->stages && !cfg->ctas_per_sm &&
                                   cfg->tail_rows == -1));
  if (auto_coop)
    coop_decide(b);
  const bool wants_stream = kernel == SE_HINES_KERNEL_STREAM || kernel == SE_HINES_KERNEL_AUTO;
  if (wants_stream) {
    const se_hines_stream_config raw = cfg ? *cfg : se_hines_stream_config{0, 0, 0, -1};
    if (!(b->have_plan && same_request(b->plan_req, raw))) {
      StreamPlan plan;
      se_error e2 = {SE_OK, {0}};
      double cost = 0.0;
      const int rc = choose_stream(b, raw, &plan, &cost, &e2);
      if (rc != SE_OK && rc != SE_ERR_UNSUPPORTED) {
        *err = e2;
        return rc;
      }
      b->have_plan = true;
      b->plan_req = raw;
      b->plan_fits = rc == SE_OK;
      b->plan_err = e2;
      if (rc == SE_OK) {
        b->plan = plan;
        b->plan_cost = cost;
        SE_CUDA_CHECK(err, cudaMemcpyAsync(b->d_ops, plan.ops.data(),
                                           (size_t)b->n * sizeof(int4), cudaMemcpyHostToDevice,
                                           b->stream));
        SE_CUDA_CHECK(err, cudaStreamSynchronize(b->stream));
        int ctas = 0;
        SE_TRY(stream_occupancy(plan, b->lim, &ctas, err)); // sets the kernel's attributes
        if (ctas < 1) {
          b->plan_fits = false;
          se_error_set(&b->plan_err, SE_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,
                       "STREAM kernel: a CTA of %d threads with %zu bytes of shared memory "
                       "does not fit a multiprocessor",
                       plan.cfg.threads, plan.smem);
        }
      }
    }
    if (auto_coop && b->coop_fits && (!b->plan_fits || b->coop_cost < b->plan_cost))
      return coop_use(b, info, err);
    if (b->plan_fits) {
      stream_info(b, b->plan, info);
      return SE_OK;
    }
    if (kernel == SE_HINES_KERNEL_STREAM) {
      *err = b->plan_err;
      return err->code;
    }
    kernel = paper_kernel_of(b->layout); // AUTO, and neither a STREAM nor a COOP plan fits
  }
  StreamPlan unused;
  SE_TRY(resolve(b->parent.data(), b->n, b->layout, b->bs, b->n_systems, kernel, NULL, b->lim,
                 info, &unused, err));
  if (info->kernel == SE_HINES_KERNEL_BLOCK_SHARED) {
    const void *fn = b->bs == 32   ? (const void *)k_shared<32>
                     : b->bs == 64 ? (const void *)k_shared<64>
                                   : (const void *)k_shared<128>;
    SE_CUDA_CHECK(err, cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            (int)info->shared_bytes));
  }
  return SE_OK;
}

extern "C" int se_hines_batch_solve(se_hines_batch *b, se_hines_kernel kernel,
                                   const se_hines_stream_config *cfg, se_error *err) {
  se_hines_plan_info info;
  SE_TRY(se_hines_batch_plan(b, kernel, cfg, &info, err));
  const int64_t S = b->n_systems;
  const int32_t n = b->n;
  switch (info.kernel) {
  case SE_HINES_KERNEL_FLAT: {
    const unsigned blocks = (unsigned)((S + 127) / 128);
    k_plain<<<blocks, 128, 0, b->stream>>>(LayFlat{n}, S, n, b->d_parent, b->u, b->l, b->d,
                                           b->rhs);
    SE_CUDA_CHECK_LAUNCH(err, "the Flat kernel");
    break;
  }
  case SE_HINES_KERNEL_FULL: {
    const unsigned blocks = (unsigned)((S + 127) / 128);
    k_plain<<<blocks, 128, 0, b->stream>>>(LayFull{S}, S, n, b->d_parent, b->u, b->l, b->d,
                                           b->rhs);
    SE_CUDA_CHECK_LAUNCH(err, "the Full-Interleaved kernel");
    break;
  }
  case SE_HINES_KERNEL_BLOCK: {
    const unsigned blocks = (unsigned)((S + 127) / 128);
    if (b->bs == 32)
      k_plain<<<blocks, 128, 0, b->stream>>>(LayBlock<32>{n}, S, n, b->d_parent, b->u, b->l,
                                             b->d, b->rhs);
    else if (b->bs == 64)
      k_plain<<<blocks, 128, 0, b->stream>>>(LayBlock<64>{n}, S, n, b->d_parent, b->u, b->l,
                                             b->d, b->rhs);
    else if (b->bs == 128)
      k_plain<<<blocks, 128, 0, b->stream>>>(LayBlock<128>{n}, S, n, b->d_parent, b->u, b->l,
                                             b->d, b->rhs);
    else // the small blocks (4, 8, 16) through the run-time layout
      k_plain<<<blocks, 128, 0, b->stream>>>(lay_of(b), S, n, b->d_parent, b->u, b->l, b->d,
                                             b->rhs);
    SE_CUDA_CHECK_LAUNCH(err, "the Block-Interleaved kernel");
    break;
  }
  case SE_HINES_KERNEL_BLOCK_SHARED: {
    const unsigned blocks = (unsigned)((S + b->bs - 1) / b->bs);
    const size_t smem = info.shared_bytes;
    if (b->bs == 32)
      k_shared<32><<<blocks, 32, smem, b->stream>>>(S, n, b->d_parent, b->u, b->l, b->d, b->rhs);
    else if (b->bs == 64)
      k_shared<64><<<blocks, 64, smem, b->stream>>>(S, n, b->d_parent, b->u, b->l, b->d, b->rhs);
    else
      k_shared<128><<<blocks, 128, smem, b->stream>>>(S, n, b->d_parent, b->u, b->l, b->d,
                                                      b->rhs);
    SE_CUDA_CHECK_LAUNCH(err, "the Block-Shared kernel");
    break;
  }
  case SE_HINES_KERNEL_STREAM: {
    const int T = b->plan.cfg.threads;
    const unsigned blocks = (unsigned)((S + T - 1) / T);
    StreamArgs a = {lay_of(b), b->plan.R, b->d_ops, b->u, b->l, b->d, b->rhs};
    stream_kernel_fn fn = stream_kernel(T, b->plan.cfg.stages, b->plan.w16);
    fn<<<blocks, T, b->plan.smem, b->stream>>>(a);
    SE_CUDA_CHECK_LAUNCH(err, "the STREAM kernel");
    break;
  }
  case SE_HINES_KERNEL_COOP:
    SE_TRY(se_hines_coop_solve(b->coop, b, err));
    break;
  default:
    SE_FAIL(err, SE_ERR_ARG, "unresolved Hines kernel %d", (int)info.kernel);
  }
  return SE_OK;
}

extern "C" int se_hines_batch_sync(se_hines_batch *b, se_error *err) {
  SE_CUDA_CHECK(err, cudaStreamSynchronize(b->stream));
  return SE_OK;
}

extern "C" int se_hines_emulate(const int32_t *parent, int32_t n, int64_t n_systems,
                                     se_hines_layout layout, int32_t bs, se_hines_kernel kernel,
                                     const se_hines_stream_config *cfg, const double *u,
                                     const double *l, double *d, double *rhs, se_error *err) {
  SE_TRY(check_tree(parent, n, n_systems, layout, bs, err));
  if (layout != SE_HINES_LAYOUT_BLOCK)
    bs = 1;
  if (kernel == SE_HINES_KERNEL_STREAM || kernel == SE_HINES_KERNEL_AUTO) {
    if (!cfg || !cfg->threads || !cfg->stages || !cfg->ctas_per_sm)
      SE_FAIL(err, SE_ERR_ARG, "emulation of the STREAM kernel needs explicit settings");
  }
  se_hines_plan_info info;
  StreamPlan plan;
  SE_TRY(resolve(parent, n, layout, bs, n_systems, kernel, cfg, h200_limits, &info, &plan, err));
  const int64_t S = n_systems;
  switch (info.kernel) {
  case SE_HINES_KERNEL_FLAT:
    for (int64_t s = 0; s < S; s++)
      plain_body(LayFlat{n}, s, n, parent, u, l, d, rhs);
    break;
  case SE_HINES_KERNEL_FULL:
    for (int64_t s = 0; s < S; s++)
      plain_body(LayFull{S}, s, n, parent, u, l, d, rhs);
    break;
  case SE_HINES_KERNEL_BLOCK:
    for (int64_t s = 0; s < S; s++) {
      if (bs == 32)
        plain_body(LayBlock<32>{n}, s, n, parent, u, l, d, rhs);
      else if (bs == 64)
        plain_body(LayBlock<64>{n}, s, n, parent, u, l, d, rhs);
      else if (bs == 128)
        plain_body(LayBlock<128>{n}, s, n, parent, u, l, d, rhs);
      else
        plain_body(LayAny{(int)layout, n, bs, S}, s, n, parent, u, l, d, rhs);
    }
    break;
  case SE_HINES_KERNEL_BLOCK_SHARED: {
    std::vector<double> sm((size_t)n * (size_t)bs);
    for (int64_t s = 0; s < S; s++) {
      const int t = (int)(s % bs);
      if (bs == 32)
        shared_body<32>(s, t, n, parent, u, l, d, rhs, sm.data());
      else if (bs == 64)
        shared_body<64>(s, t, n, parent, u, l, d, rhs, sm.data());
      else
        shared_body<128>(s, t, n, parent, u, l, d, rhs, sm.data());
    }
    break;
  }
  case SE_HINES_KERNEL_STREAM: {
    const int T = plan.cfg.threads;
    std::vector<double> sm((size_t)plan.words * (size_t)T);
    StreamArgs a = {LayAny{(int)layout, n, bs, S}, plan.R, plan.ops.data(), u, l, d, rhs};
    stream_host_fn fn = stream_host(T, plan.cfg.stages);
    // Fill the shared memory with NaN: a read of a cell nobody wrote shows in the result.
    for (int64_t s0 = 0; s0 < S; s0 += T) {
      for (double &v : sm)
        v = __builtin_nan("");
      for (int t = 0; t < T && s0 + t < S; t++)
        fn(a, plan.ops.data(), s0 + t, t, sm.data());
    }
    break;
  }
  default:
    SE_FAIL(err, SE_ERR_ARG, "unresolved Hines kernel %d", (int)info.kernel);
  }
  return SE_OK;
}
