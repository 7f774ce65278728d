// Kernels of the CUDA neurons backend: one thread per (group, lane). The per-compartment
// arithmetic is the CPU backend's (src/neurons_math.h), in the same order, so the two backends
// agree to rounding of exp() (docs/gpu.md).
#include "neurons_cuda.h"
#include "neurons_device.cuh"
#include "neurons_math.h"

namespace {

constexpr int kThreads = 128;

struct lane_ref {
  se_group grp;
  int64_t base, mb;
  int lane, width;
};

__device__ bool lane_of(const se_neurons_device &d, int64_t t, lane_ref &r) {
  if (t >= d.n_threads)
    return false;
  r.width = d.width;
  r.lane = (int)(t % d.width);
  r.grp = d.groups[t / d.width];
  if (r.lane >= r.grp.lanes)
    return false;
  r.base = r.grp.base;
  r.mb = d.morph_base[r.grp.morphology];
  return true;
}

// Currents at v^n, clamps at t + dt/2, axial coupling: the lane's diag and rhs.
__device__ void assemble_lane(const se_neurons_device &d, const lane_ref &r, int64_t t,
                              double t_now) {
  const int32_t *par = d.parent + r.mb;
  const uint8_t *hh = d.has_hh + r.mb;
  const double t_mid = t_now + 0.5 * d.dt;
  int64_t k = d.stim_ptr[t];
  const int64_t kend = d.stim_ptr[t + 1];
  for (int32_t i = 0; i < r.grp.n_comp; i++) {
    const int64_t s = r.base + (int64_t)i * r.width + r.lane, c = r.mb + i;
    const double d_const = d.cap[c] * d.inv_dt + d.d_axial[c];
    se_row row = hh[i] ? se_row_hh(d.v[s], d.m[s], d.h[s], d.n[s], d_const, d.g_pas[c],
                                   d.e_pas[c], d.gna[c], d.gk[c], d.gl[c], d.ena[c], d.ek[c],
                                   d.el[c])
                       : se_row_pas(d.v[s], d_const, d.g_pas[c], d.e_pas[c]);
    for (; k < kend && d.stim_comp[k] == i; k++)
      if (se_iclamp_on(t_mid, d.stim_delay[k], d.stim_duration[k]))
        row.rhs += d.stim_amplitude[k];
    d.diag[s] = row.diag;
    d.rhs[s] = row.rhs;
  }
  for (int32_t i = 1; i < r.grp.n_comp; i++) {
    const int64_t s = r.base + (int64_t)i * r.width + r.lane;
    const int64_t sp = r.base + (int64_t)par[i] * r.width + r.lane;
    const double flow = d.g_axial[r.mb + i] * (d.v[sp] - d.v[s]);
    d.rhs[s] += flow;
    d.rhs[sp] -= flow;
  }
}

// Hines solve of the lane's system; rhs holds dv afterwards.
__device__ void solve_lane(const se_neurons_device &d, const lane_ref &r) {
  const int32_t *par = d.parent + r.mb;
  const double *ga = d.g_axial + r.mb;
  for (int32_t i = r.grp.n_comp - 1; i > 0; i--) {
    const int64_t s = r.base + (int64_t)i * r.width + r.lane;
    const int64_t sp = r.base + (int64_t)par[i] * r.width + r.lane;
    const double gi = ga[i];
    const double f = gi / d.diag[s];
    d.diag[sp] -= f * gi;
    d.rhs[sp] += f * d.rhs[s];
  }
  const int64_t s0 = r.base + r.lane;
  d.rhs[s0] /= d.diag[s0];
  for (int32_t i = 1; i < r.grp.n_comp; i++) {
    const int64_t s = r.base + (int64_t)i * r.width + r.lane;
    const int64_t sp = r.base + (int64_t)par[i] * r.width + r.lane;
    d.rhs[s] = (d.rhs[s] + ga[i] * d.rhs[sp]) / d.diag[s];
  }
}

// v += dv, gates at v^{n+1}, spike detection at the root.
__device__ void update_lane(const se_neurons_device &d, const lane_ref &r, int64_t t,
                            double t_now, double v_root_before) {
  const uint8_t *hh = d.has_hh + r.mb;
  for (int32_t i = 0; i < r.grp.n_comp; i++) {
    const int64_t s = r.base + (int64_t)i * r.width + r.lane;
    const double v = d.v[s] + d.rhs[s];
    d.v[s] = v;
    if (!hh[i])
      continue;
    se_hh_advance_gates(v, d.q10, d.dt, &d.m[s], &d.h[s], &d.n[s]);
  }
  se_root_spike_check(d, d.lane_cell[t], t_now, v_root_before, d.v[r.base + r.lane]);
}

__global__ void step_fused(const se_neurons_device d, double t_now) {
  const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  lane_ref r;
  if (!lane_of(d, t, r))
    return;
  const double before = d.v[r.base + r.lane];
  assemble_lane(d, r, t, t_now);
  solve_lane(d, r);
  update_lane(d, r, t, t_now, before);
}

__global__ void step_assemble(const se_neurons_device d, double t_now) {
  const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  lane_ref r;
  if (!lane_of(d, t, r))
    return;
  d.v_root_before[t] = d.v[r.base + r.lane];
  assemble_lane(d, r, t, t_now);
}

__global__ void step_solve(const se_neurons_device d) {
  const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  lane_ref r;
  if (lane_of(d, t, r))
    solve_lane(d, r);
}

__global__ void step_update(const se_neurons_device d, double t_now) {
  const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  lane_ref r;
  if (lane_of(d, t, r))
    update_lane(d, r, t, t_now, d.v_root_before[t]);
}

__global__ void gather(const se_neurons_device d) {
  const int64_t k = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (k < d.n_record)
    d.record_buffer[k] = d.v[d.record_slot[k]];
}

// ---- streaming step (gpu_fused = 2; src/neurons_stream.h, docs/gpu.md) -------------------------
// One thread per (group, lane) as above. Backward pass, rows n-1 .. 0: the deferred gate update,
// currents, the row of the v-form system and its elimination at once, the children's terms
// arriving in registers (child i + 1) or in accumulator slots in shared memory; y = b'/d' goes to
// a per-lane stack in shared memory for the first stream_rows rows eliminated (i >= n - K: the
// rows whose y waits longest) and into v's own slot otherwise (rows i < n - K: the y written
// last is read first, so the L2 keeps the most of it).
// Forward pass, rows 0 .. n-1: x = y + f x_parent written into v's slot. The global loads of the
// next Ahead chunks of P rows are issued before the current chunk is processed (registers
// vb[1..Ahead]); the buffers shift down at the end of a chunk. Measured (docs/gpu.md): the step
// is bound by each thread's chain of dependent instructions per row, not by DRAM traffic.

// Global accesses of the two passes, plain or with L2 eviction hints: the v read by the backward
// pass and the x written by the forward pass are streamed (evict_first); the y spilled to v's
// slots is kept (evict_last) until the forward pass reads it back, for the last time: load_once.
template <bool Hints> struct stream_io;

template <> struct stream_io<false> {
  __device__ void init() {}
  __device__ double load_once(const double *p) const { return *p; }
  __device__ void store_keep(double *p, double v) const { *p = v; }
  __device__ void store_once(double *p, double v) const { *p = v; }
};

template <> struct stream_io<true> {
  uint64_t first, last;
  __device__ void init() {
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(first));
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(last));
  }
  __device__ double load_once(const double *p) const {
    double v;
    asm volatile("ld.global.L2::cache_hint.f64 %0, [%1], %2;" : "=d"(v) : "l"(p), "l"(first));
    return v;
  }
  __device__ void store_keep(double *p, double v) const {
    asm volatile("st.global.L2::cache_hint.f64 [%0], %1, %2;" ::"l"(p), "d"(v), "l"(last)
                 : "memory");
  }
  __device__ void store_once(double *p, double v) const {
    asm volatile("st.global.L2::cache_hint.f64 [%0], %1, %2;" ::"l"(p), "d"(v), "l"(first)
                 : "memory");
  }
};

// A table row, read through the read-only path in three 16-byte loads (the same address for
// every lane of a warp of one morphology: one transaction, broadcast).
struct stream_row_ld {
  double a, c, d, g, f;
  int32_t parent;
  uint32_t meta;
};

__device__ __forceinline__ stream_row_ld load_stream_row(const se_stream_row *p) {
  const double2 ac = __ldg(reinterpret_cast<const double2 *>(p));
  const double2 dg = __ldg(reinterpret_cast<const double2 *>(p) + 1);
  const int4 fm = __ldg(reinterpret_cast<const int4 *>(p) + 2);
  stream_row_ld r;
  r.a = ac.x;
  r.c = ac.y;
  r.d = dg.x;
  r.g = dg.y;
  r.f = __hiloint2double(fm.y, fm.x);
  r.parent = fm.z;
  r.meta = (uint32_t)fm.w;
  return r;
}

__device__ __forceinline__ uint32_t load_stream_meta(const se_stream_row *p) {
  return (uint32_t)__ldg(reinterpret_cast<const int *>(p) + 11);
}

struct stream_hh_out {
  double m, h, n, b, dg;
};

// hh at one row (not inlined: it is the bulk of the code and is called from every unrolled row).
__device__ __noinline__ stream_hh_out stream_hh_row(double v, double m, double h, double n,
                                                    int update, double dt, double q10,
                                                    double gnabar, double gkbar, double ena,
                                                    double ek) {
  stream_hh_out o;
  o.m = m;
  o.h = h;
  o.n = n;
  o.b = 0.0;
  o.dg = 0.0;
  se_hh_row_terms(v, &o.m, &o.h, &o.n, update, dt, q10, gnabar, gkbar, ena, ek, &o.b, &o.dg);
  return o;
}

template <int P, int Ahead, bool Hints>
__global__ void __launch_bounds__(SE_STREAM_THREADS)
    step_stream(const se_neurons_device d, double t_now, int update) {
  extern __shared__ double smem[];
  const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  lane_ref r;
  if (!lane_of(d, t, r))
    return;
  stream_io<Hints> io;
  io.init();
  const int B = (int)blockDim.x, K = d.stream_rows;
  double *const stk = smem + threadIdx.x;                     // row i at stk[(n-1-i) B]
  double *const acc = smem + (size_t)K * B + threadIdx.x;     // slot q at acc[q B]
  const bool chip = !d.stream_acc_global;
  const se_stream_row *const tab = d.stream + r.mb;
  const ptrdiff_t W = r.width;
  const int n = r.grp.n_comp, T = n - K; // rows i >= T keep y on chip
  const int64_t s0 = r.base + r.lane;
  double *const V = d.v + s0, *const Mg = d.m + s0, *const Hg = d.h + s0, *const Ng = d.n + s0;
  double *const D = d.diag + s0, *const R = d.rhs + s0;

  // clamps of this lane, by compartment: walked from the last
  const int64_t kbeg = d.stim_ptr[t];
  int64_t ks = d.stim_ptr[t + 1] - 1;
  int next = ks >= kbeg ? d.stim_comp[ks] : -1;
  const double t_mid = t_now + 0.5 * d.dt;

  // ---- backward pass ----
  double cb = 0.0, cd = 0.0, v_root = 0.0;
  // vb[0] holds the chunk being processed, vb[1 ..] the next ones, in flight
  double vb[Ahead + 1][P];
#pragma unroll
  for (int a = 0; a < Ahead; a++)
#pragma unroll
    for (int j = 0; j < P; j++) {
      const int i = n - 1 - a * P - j;
      vb[a][j] = i >= 0 ? io.load_once(V + i * W) : 0.0;
    }
  for (int hi = n - 1; hi >= 0; hi -= P) {
#pragma unroll
    for (int j = 0; j < P; j++) {
      const int i = hi - Ahead * P - j;
      vb[Ahead][j] = i >= 0 ? io.load_once(V + i * W) : 0.0;
    }
    uint32_t mt[P];
    double gm[P], gh[P], gn[P];
#pragma unroll
    for (int j = 0; j < P; j++) {
      const int i = hi - j;
      mt[j] = i >= 0 ? load_stream_meta(tab + i) : 0u;
      gm[j] = gh[j] = gn[j] = 0.0;
      if (mt[j] & SE_STREAM_HH) {
        gm[j] = Mg[i * W];
        gh[j] = Hg[i * W];
        gn[j] = Ng[i * W];
      }
    }
#pragma unroll
    for (int j = 0; j < P; j++) {
      const int i = hi - j;
      if (i < 0)
        break;
      const stream_row_ld rw = load_stream_row(tab + i);
      const uint32_t meta = rw.meta;
      const double v = vb[0][j];
      double bx = 0.0, dg = 0.0;
      while (next == i) {
        if (se_iclamp_on(t_mid, d.stim_delay[ks], d.stim_duration[ks]))
          bx += d.stim_amplitude[ks];
        ks--;
        next = ks >= kbeg ? d.stim_comp[ks] : -1;
      }
      if (meta & SE_STREAM_HH) {
        const int64_t c = r.mb + i;
        const stream_hh_out o = stream_hh_row(v, gm[j], gh[j], gn[j], update, d.dt, d.q10,
                                              __ldg(d.gna + c), __ldg(d.gk + c),
                                              __ldg(d.ena + c), __ldg(d.ek + c));
        if (update) {
          Mg[i * W] = o.m;
          Hg[i * W] = o.h;
          Ng[i * W] = o.n;
        }
        bx += o.b;
        dg = o.dg;
      }
      const double ab =
          (meta & SE_STREAM_OWN) ? (chip ? acc[SE_STREAM_OWN_SLOT(meta) * B] : R[i * W]) : 0.0;
      const double ad = (meta & SE_STREAM_DACC) ? D[i * W] : 0.0;
      const se_stream_elim el =
          se_stream_eliminate(rw.a, rw.c, rw.d, rw.g, rw.f, meta, v, bx, dg, cb, cd, ab, ad);
      if (!(meta & SE_STREAM_DCONST))
        D[i * W] = el.f;
      if (i >= T)
        stk[(n - 1 - i) * B] = el.y;
      else
        io.store_keep(V + i * W, el.y);
      if (meta & SE_STREAM_PREV) {
        cb = el.push_b;
        cd = el.push_d;
      } else {
        cb = cd = 0.0;
        if (meta & SE_STREAM_ROOT) {
          v_root = v;
        } else {
          double *q = chip ? acc + SE_STREAM_PUSH_SLOT(meta) * B : R + rw.parent * W;
          *q = (meta & SE_STREAM_FIRST) ? el.push_b : *q + el.push_b;
          if (meta & SE_STREAM_DPUSH) {
            double *qd = D + rw.parent * W;
            *qd = (meta & SE_STREAM_DFIRST) ? el.push_d : *qd + el.push_d;
          }
        }
      }
    }
#pragma unroll
    for (int a = 0; a < Ahead; a++)
#pragma unroll
      for (int j = 0; j < P; j++)
        vb[a][j] = vb[a + 1][j];
  }

  // ---- forward pass ----
  double xprev = 0.0, x_root = 0.0;
  // y of rows >= K (spilled into v's slots) and f of state-dependent rows (in diag), prefetched
  double yb[Ahead + 1][P], fb[Ahead + 1][P];
  /* row i's spilled y and state-dependent f into buffer a (0 past the end) */
  auto prefetch = [&](int a, int j, int i) {
    yb[a][j] = fb[a][j] = 0.0;
    if (i < n) {
      const uint32_t m = load_stream_meta(tab + i);
      if (i < T)
        yb[a][j] = io.load_once(V + i * W);
      if (!(m & SE_STREAM_DCONST))
        fb[a][j] = D[i * W];
    }
  };
#pragma unroll
  for (int a = 0; a < Ahead; a++)
#pragma unroll
    for (int j = 0; j < P; j++)
      prefetch(a, j, a * P + j);
  for (int lo = 0; lo < n; lo += P) {
#pragma unroll
    for (int j = 0; j < P; j++)
      prefetch(Ahead, j, lo + Ahead * P + j);
#pragma unroll
    for (int j = 0; j < P; j++) {
      const int i = lo + j;
      if (i >= n)
        break;
      const int4 fm = __ldg(reinterpret_cast<const int4 *>(tab + i) + 2);
      const uint32_t meta = (uint32_t)fm.w;
      const double y = i >= T ? stk[(n - 1 - i) * B] : yb[0][j];
      const double f = (meta & SE_STREAM_DCONST) ? __hiloint2double(fm.y, fm.x) : fb[0][j];
      double x = y;
      if (meta & SE_STREAM_ROOT) {
        x_root = x;
      } else {
        const double xp = (meta & SE_STREAM_PREV) ? xprev
                          : chip ? acc[SE_STREAM_PUSH_SLOT(meta) * B]
                                 : R[fm.z * W];
        x = y + f * xp;
      }
      io.store_once(V + i * W, x);
      if (meta & SE_STREAM_OWN) {
        if (chip)
          acc[SE_STREAM_OWN_SLOT(meta) * B] = x;
        else
          R[i * W] = x;
      }
      xprev = x;
    }
#pragma unroll
    for (int a = 0; a < Ahead; a++)
#pragma unroll
      for (int j = 0; j < P; j++) {
        yb[a][j] = yb[a + 1][j];
        fb[a][j] = fb[a + 1][j];
      }
  }

  // ---- spikes at the root ----
  se_root_spike_check(d, d.lane_cell[t], t_now, v_root, x_root);
}

// The deferred gate update of the last step (cnexp at the current v), for every hh row.
__global__ void stream_finish(const se_neurons_device d) {
  const int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  lane_ref r;
  if (!lane_of(d, t, r))
    return;
  const se_stream_row *tab = d.stream + r.mb;
  for (int32_t i = 0; i < r.grp.n_comp; i++) {
    if (!(load_stream_meta(tab + i) & SE_STREAM_HH))
      continue;
    const int64_t s = r.base + (int64_t)i * r.width + r.lane;
    se_hh_advance_gates(d.v[s], d.q10, d.dt, &d.m[s], &d.h[s], &d.n[s]);
  }
}

// ---- branch step (SE_GPU_KERNEL_BRANCH; cuda/neurons_branch.h, docs/gpu.md) ---------------------
// Per-slot kernels around the branch-level (and EDD) solves; the v-form row as in fused2
// (se_hh_row_terms with the gates current, se_stream_eliminate's b = a v + c + bx), with no
// neighbour access.

__global__ void branch_assemble(const se_neurons_device d) {
  const int64_t s = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= d.n_branch_slots)
    return;
  const uint8_t fl = d.slot_flags[s];
  if (!(fl & SE_SLOT_USED))
    return;
  const double v = d.v[s];
  double bx = 0.0, dg = 0.0;
  if (fl & SE_SLOT_HH) {
    double m = d.m[s], h = d.h[s], n = d.n[s];
    se_hh_row_terms(v, &m, &h, &n, 0, d.dt, d.q10, d.slot_gna[s], d.slot_gk[s], d.slot_ena[s],
                 d.slot_ek[s], &bx, &dg);
  }
  d.rhs[s] = d.slot_a[s] * v + d.slot_c[s] + bx;
  d.diag[s] = d.slot_d[s] + dg;
}

__global__ void branch_clamps(const se_neurons_device d, double t_now) {
  const int64_t q = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (q >= d.n_stim_slots)
    return;
  const double t_mid = t_now + 0.5 * d.dt;
  const int64_t s = d.stim_slot[q];
  double r = d.rhs[s];
  for (int64_t k = d.stim_slot_ptr[q]; k < d.stim_slot_ptr[q + 1]; k++)
    if (se_iclamp_on(t_mid, d.stim_delay[k], d.stim_duration[k]))
      r += d.stim_amplitude[k];
  d.rhs[s] = r;
}

__global__ void branch_update(const se_neurons_device d, double t_now) {
  const int64_t s = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= d.n_branch_slots)
    return;
  const uint8_t fl = d.slot_flags[s];
  if (!(fl & SE_SLOT_USED))
    return;
  const double after = d.rhs[s];
  if (fl & SE_SLOT_SOMA)
    se_root_spike_check(d, d.slot_cell[s], t_now, d.v[s], after);
  d.v[s] = after;
  if (fl & SE_SLOT_HH) {
    se_hh_advance_gates(after, d.q10, d.dt, &d.m[s], &d.h[s], &d.n[s]);
  }
}

template <int P, int Ahead, bool Hints>
void launch_stream(const se_neurons_device *d, double t, int update, cudaStream_t stream) {
  const size_t smem = (size_t)(d->stream_rows + d->stream_slots) * SE_STREAM_THREADS *
                      sizeof(double);
  const unsigned blocks = (unsigned)((d->n_threads + SE_STREAM_THREADS - 1) / SE_STREAM_THREADS);
  step_stream<P, Ahead, Hints><<<blocks, SE_STREAM_THREADS, smem, stream>>>(*d, t, update);
}

template <int P, int Ahead, bool Hints> cudaError_t setup_stream(size_t smem, int carveout) {
  cudaError_t rc = cudaFuncSetAttribute(step_stream<P, Ahead, Hints>,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
  if (rc == cudaSuccess)
    rc = cudaFuncSetAttribute(step_stream<P, Ahead, Hints>,
                              cudaFuncAttributePreferredSharedMemoryCarveout, carveout);
  return rc;
}

unsigned blocks_for(int64_t n) { return (unsigned)((n + kThreads - 1) / kThreads); }

} // namespace

extern "C" cudaError_t se_neurons_cuda_step_fused(const se_neurons_device *d, double t,
                                                  cudaStream_t stream) {
  if (d->n_threads > 0)
    step_fused<<<blocks_for(d->n_threads), kThreads, 0, stream>>>(*d, t);
  return cudaGetLastError();
}

extern "C" cudaError_t se_neurons_cuda_step_phases(const se_neurons_device *d, double t,
                                                   cudaStream_t stream) {
  if (d->n_threads > 0) {
    step_assemble<<<blocks_for(d->n_threads), kThreads, 0, stream>>>(*d, t);
    step_solve<<<blocks_for(d->n_threads), kThreads, 0, stream>>>(*d);
    step_update<<<blocks_for(d->n_threads), kThreads, 0, stream>>>(*d, t);
  }
  return cudaGetLastError();
}

extern "C" cudaError_t se_neurons_cuda_branch_assemble(const se_neurons_device *d, double t,
                                                       cudaStream_t stream) {
  if (d->n_branch_slots > 0)
    branch_assemble<<<blocks_for(d->n_branch_slots), kThreads, 0, stream>>>(*d);
  if (d->n_stim_slots > 0)
    branch_clamps<<<blocks_for(d->n_stim_slots), kThreads, 0, stream>>>(*d, t);
  return cudaGetLastError();
}

extern "C" cudaError_t se_neurons_cuda_branch_update(const se_neurons_device *d, double t,
                                                     cudaStream_t stream) {
  if (d->n_branch_slots > 0)
    branch_update<<<blocks_for(d->n_branch_slots), kThreads, 0, stream>>>(*d, t);
  return cudaGetLastError();
}

extern "C" cudaError_t se_neurons_cuda_gather(const se_neurons_device *d, cudaStream_t stream) {
  if (d->n_record > 0)
    gather<<<blocks_for(d->n_record), kThreads, 0, stream>>>(*d);
  return cudaGetLastError();
}

extern "C" cudaError_t se_neurons_cuda_step_stream(const se_neurons_device *d, double t,
                                                   int update_gates, int ahead, int hints,
                                                   cudaStream_t stream) {
  if (d->n_threads > 0) {
    if (ahead >= 2)
      hints ? launch_stream<8, 2, true>(d, t, update_gates, stream)
            : launch_stream<8, 2, false>(d, t, update_gates, stream);
    else
      hints ? launch_stream<8, 1, true>(d, t, update_gates, stream)
            : launch_stream<8, 1, false>(d, t, update_gates, stream);
  }
  return cudaGetLastError();
}

extern "C" cudaError_t se_neurons_cuda_stream_finish(const se_neurons_device *d,
                                                     cudaStream_t stream) {
  if (d->n_threads > 0)
    stream_finish<<<blocks_for(d->n_threads), kThreads, 0, stream>>>(*d);
  return cudaGetLastError();
}

extern "C" cudaError_t se_neurons_cuda_stream_setup(size_t smem_bytes, int carveout_percent) {
  cudaError_t rc = setup_stream<8, 1, false>(smem_bytes, carveout_percent);
  if (rc == cudaSuccess)
    rc = setup_stream<8, 1, true>(smem_bytes, carveout_percent);
  if (rc == cudaSuccess)
    rc = setup_stream<8, 2, false>(smem_bytes, carveout_percent);
  if (rc == cudaSuccess)
    rc = setup_stream<8, 2, true>(smem_bytes, carveout_percent);
  return rc;
}

extern "C" cudaError_t se_neurons_cuda_stream_occupancy(int ahead, int hints, size_t smem_bytes,
                                                        int *blocks_per_sm) {
  if (ahead >= 2)
    return hints ? cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                       blocks_per_sm, step_stream<8, 2, true>, SE_STREAM_THREADS, smem_bytes)
                 : cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                       blocks_per_sm, step_stream<8, 2, false>, SE_STREAM_THREADS, smem_bytes);
  return hints ? cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                     blocks_per_sm, step_stream<8, 1, true>, SE_STREAM_THREADS, smem_bytes)
               : cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                     blocks_per_sm, step_stream<8, 1, false>, SE_STREAM_THREADS, smem_bytes);
}
