// The cooperative ("coop") step kernel (src/neurons_coop.h, docs/gpu.md "coop"): one warp per G
// adjacent cells of a group, L = 32 / G threads per cell (thread j of cell c is warp lane
// j * G + c), every intermediate of the step in shared memory. fused2's per-row arithmetic
// (neurons_stream.h) on the same values in the same order; the host model se_coop_reference_step
// performs the same phases. Each phase loads the plan records of its coming steps into a register
// ring while a step computes. Measured (docs/gpu.md "Reading the coop numbers"): still latency-
// bound at 4-8 warps per multiprocessor, and 7.4 warp instructions per medium-high compartment.
#include "neurons_coop_cuda.h"
#include "neurons_device.cuh"
#include "neurons_math.h"

namespace {

__device__ __forceinline__ double2 ld_d2(const se_coop_chunk *p) {
  return __ldg(reinterpret_cast<const double2 *>(p));
}
__device__ __forceinline__ int4 ld_i4(const se_coop_chunk *p) {
  return __ldg(reinterpret_cast<const int4 *>(p));
}

// A cell's shared-memory slot at byte offset off (the records' offsets) from its slot 0, base.
__device__ __forceinline__ double &at(char *base, int off) {
  return *reinterpret_cast<double *>(base + off);
}

// The push of an eliminated row to its parent, as neurons_coop.c's push_parent: registers for
// PREV, else the parent's accumulators A[0] (b) and A[G] (d) in shared memory.
template <int G>
__device__ __forceinline__ void push_parent(uint32_t meta, double pb, double pd, double *A,
                                            double &cb, double &cd) {
  if (meta & SE_STREAM_PREV) {
    cb = pb;
    cd = pd;
    return;
  }
  cb = cd = 0.0;
  if (meta & SE_STREAM_ROOT)
    return;
  A[0] = (meta & SE_STREAM_FIRST) ? pb : A[0] + pb;
  if (meta & SE_STREAM_DPUSH)
    A[G] = (meta & SE_STREAM_DFIRST) ? pd : A[G] + pd;
}

// What phase 1b reads of a step's row record (q0-q2), what phase 1a reads of an hh step (its
// record and its row's state), what phase 2 reads of an event: loaded steps ahead of their use.
struct row_rec {
  double2 dg;
  int4 q1, q2;
};
struct hh_rec {
  int4 q4;
  double2 gk, e, ac;
  double d, v, m, h, n;
};
struct ev_rec {
  double2 dg;
  int4 q1, q2, q3;
};

// Prefetch distances (steps) of phases 0, 1b, 3b, 2 and 3a: the records come from the L2 (a few
// hundred cycles) and a step's own chain is shorter.
constexpr int AHEAD_0 = 4, AHEAD_1B = 2, AHEAD_3B = 4, AHEAD_EV = 2;

template <int L>
__global__ void __launch_bounds__(32, 16)
    step_coop(const se_neurons_device d, const se_coop_device cp, double t_now, int update) {
  constexpr int G = 32 / L, OFF1 = G * (int)sizeof(double); // the next slot's offset
  extern __shared__ double smem[];
  const int c = (int)threadIdx.x % G, j = (int)threadIdx.x / G;
  const int64_t warp = blockIdx.x, gi = warp / cp.warps_per_group;
  const se_group grp = d.groups[gi];
  const int cl = (int)(warp % cp.warps_per_group) * G + c; // the cell's lane in its group
  const bool on = cl < grp.lanes;
  const se_coop_morph *const mo = cp.morph + grp.morphology;
  const int lo = mo->s[j], hi = mo->s[j + 1];
  const int64_t W = d.width, t = gi * W + cl, s0 = grp.base + (on ? cl : 0);
  double *const S = smem + c; // slot x of this cell at S[x * G]
  char *const B = reinterpret_cast<char *>(S); // ... at byte offset x * G * 8
  double *const V = d.v + s0, *const Mg = d.m + s0, *const Hg = d.h + s0, *const Ng = d.n + s0;
  const se_coop_chunk *const rec = cp.rec + mo->rec + j; // chunk q of step k: rec[(4k + q) L]
  const double t_mid = t_now + 0.5 * d.dt;
  const int64_t kbeg = on ? d.stim_ptr[t] : 0, kend = on ? d.stim_ptr[t + 1] : 0;
  const double v_root = on && j == 0 ? V[0] : 0.0;
  const int nj = on ? hi - lo : 0;
  // step k of this thread's range: row hi - 1 - k, slot k L + j at S + k * 32 + j G
  double *const Sj = S + j * G;

  // ---- 0: v of this thread's rows into their slots (asynchronous copies, all in flight at
  // once), then b0 = a v + c + clamps at each of them (an hh row's is made again in 1a) ----
  for (int k = 0; k < nj; k++)
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(
                     (unsigned)__cvta_generic_to_shared(Sj + k * 32)),
                 "l"(V + (int64_t)(hi - 1 - k) * W)
                 : "memory");
  // the first hh step (1a), loaded while the copies are in flight
  const se_coop_chunk *const hrec = cp.hh + mo->hh + j; // chunk q of hh step k: hrec[(5k + q) L]
  const int hsteps = on ? mo->hh_steps : 0;
  auto load_hh = [&](int k) {
    const se_coop_chunk *q = hrec + 5 * k * L;
    hh_rec r;
    r.q4 = ld_i4(q + 4 * L);
    r.gk = ld_d2(q);
    r.e = ld_d2(q + L);
    r.ac = ld_d2(q + 2 * L);
    r.d = ld_d2(q + 3 * L).x;
    r.v = r.m = r.h = r.n = 0.0;
    if (r.q4.x >= 0) {
      const int64_t o = (int64_t)r.q4.x * W;
      r.v = V[o];
      r.m = Mg[o];
      r.h = Hg[o];
      r.n = Ng[o];
    }
    return r;
  };
  hh_rec hn = hsteps > 0 ? load_hh(0) : hh_rec{};
  double2 ac0[AHEAD_0];
#pragma unroll
  for (int u = 0; u < AHEAD_0; u++)
    ac0[u] = ld_d2(rec + (4 * min(u, nj > 0 ? nj - 1 : 0) + 3) * L);
  asm volatile("cp.async.wait_all;" ::: "memory");
  int64_t ks = kend - 1;
  while (ks >= kbeg && d.stim_comp[ks] >= hi)
    ks--;
  int next = ks >= kbeg ? d.stim_comp[ks] : -1;
  for (int k0 = 0; k0 < nj; k0 += AHEAD_0) {
#pragma unroll
    for (int u = 0; u < AHEAD_0; u++) {
      const int k = k0 + u;
      if (k >= nj)
        break;
      const double2 ac = ac0[u];
      ac0[u] = ld_d2(rec + (4 * min(k + AHEAD_0, nj - 1) + 3) * L);
      const int i = hi - 1 - k;
      double bx = 0.0;
      while (next == i) {
        if (se_iclamp_on(t_mid, d.stim_delay[ks], d.stim_duration[ks]))
          bx += d.stim_amplitude[ks];
        ks--;
        next = ks >= kbeg ? d.stim_comp[ks] : -1;
      }
      double *const y = Sj + k * 32;
      *y = ac.x * *y + ac.y + bx;
    }
  }
  __syncwarp();

  // ---- 1a: hh rows spread over the threads: gates, currents, b0 and d0 (the next step's record
  // and state loaded before this one is computed) ----
  for (int k = 0; k < hsteps; k++) {
    const hh_rec r = hn;
    if (k + 1 < hsteps)
      hn = load_hh(k + 1);
    const int i = r.q4.x;
    if (i < 0)
      continue;
    double m = r.m, h = r.h, n = r.n, bx = 0.0, b = 0.0, dg = 0.0;
    for (int64_t kk = kend - 1; kk >= kbeg; kk--)
      if (d.stim_comp[kk] == i && se_iclamp_on(t_mid, d.stim_delay[kk], d.stim_duration[kk]))
        bx += d.stim_amplitude[kk];
    se_stream_hh(r.v, &m, &h, &n, update, d.dt, d.q10, r.gk.x, r.gk.y, r.e.x, r.e.y, &b, &dg);
    if (update) {
      Mg[(int64_t)i * W] = m;
      Hg[(int64_t)i * W] = h;
      Ng[(int64_t)i * W] = n;
    }
    bx += b;
    at(B, r.q4.y) = r.ac.x * r.v + r.ac.y + bx;
    at(B, r.q4.z) = r.d + dg;
  }
  __syncwarp();

  // ---- 1b: complete rows eliminated, ranges downwards in lockstep ----
  auto load_row = [&](int k) {
    const se_coop_chunk *q = rec + 4 * k * L;
    return row_rec{ld_d2(q), ld_i4(q + L), ld_i4(q + 2 * L)};
  };
  row_rec r1[AHEAD_1B];
#pragma unroll
  for (int u = 0; u < AHEAD_1B; u++)
    r1[u] = load_row(min(u, nj > 0 ? nj - 1 : 0));
  double cb = 0.0, cd = 0.0;
  for (int k0 = 0; k0 < nj; k0 += AHEAD_1B) {
#pragma unroll
    for (int u = 0; u < AHEAD_1B; u++) {
      const int k = k0 + u;
      if (k >= nj)
        break;
      const row_rec r = r1[u];
      r1[u] = load_row(min(k + AHEAD_1B, nj - 1));
      const uint32_t meta = (uint32_t)r.q1.w;
      if (meta & SE_COOP_TRUNK) {
        cb = cd = 0.0;
        continue;
      }
      double *const y = Sj + k * 32;
      const double ab = (meta & SE_STREAM_OWN) ? at(B, r.q2.y) : 0.0;
      const double ad = (meta & SE_STREAM_DACC) ? at(B, r.q2.y + OFF1) : 0.0;
      const double d0 = (meta & SE_STREAM_HH) ? at(B, r.q1.x) : r.dg.x;
      const se_stream_elim el = se_stream_eliminate_from(
          *y, d0, r.dg.y, __hiloint2double(r.q1.y, r.q1.x), meta, cb, cd, ab, ad);
      *y = el.y;
      if (!(meta & SE_STREAM_DCONST))
        at(B, r.q1.x) = el.f;
      if (meta & SE_COOP_BOUNDARY) {
        at(B, r.q2.x) = el.push_b;
        if (!(meta & SE_STREAM_DCONST))
          at(B, r.q2.x + OFF1) = el.push_d;
        cb = cd = 0.0;
      } else {
        push_parent<G>(meta, el.push_b, el.push_d, &at(B, r.q2.x), cb, cd);
      }
    }
  }
  __syncwarp();

  // ---- 2, 3a: one thread per cell: the events downwards, the trunk upwards ----
  double x_root = 0.0;
  if (on && j == 0) {
    const se_coop_chunk *const ev = cp.ev + mo->ev;
    const int n_ev = mo->n_ev;
    auto load_ev = [&](int e) {
      const se_coop_chunk *q = ev + 4 * e;
      return ev_rec{ld_d2(q), ld_i4(q + 1), ld_i4(q + 2), ld_i4(q + 3)};
    };
    ev_rec re[AHEAD_EV];
#pragma unroll
    for (int u = 0; u < AHEAD_EV; u++)
      re[u] = load_ev(min(u, n_ev - 1));
    cb = cd = 0.0;
    for (int e0 = 0; e0 < n_ev; e0 += AHEAD_EV) {
#pragma unroll
      for (int u = 0; u < AHEAD_EV; u++) {
        const int e = e0 + u;
        if (e >= n_ev)
          break;
        const ev_rec r = re[u];
        re[u] = load_ev(min(e + AHEAD_EV, n_ev - 1));
        const uint32_t meta = (uint32_t)r.q2.x;
        double pb, pd;
        if (meta & SE_COOP_EV_TRUNK) {
          const double ab = (meta & SE_STREAM_OWN) ? at(B, r.q2.w) : 0.0;
          const double ad = (meta & SE_STREAM_DACC) ? at(B, r.q2.w + OFF1) : 0.0;
          const double d0 = (meta & SE_STREAM_HH) ? at(B, r.q2.y) : r.dg.x;
          const se_stream_elim el = se_stream_eliminate_from(
              at(B, r.q1.z), d0, r.dg.y, __hiloint2double(r.q1.y, r.q1.x), meta, cb, cd, ab, ad);
          at(B, r.q1.z) = el.y;
          if (!(meta & SE_STREAM_DCONST))
            at(B, r.q2.y) = el.f;
          pb = el.push_b;
          pd = el.push_d;
        } else {
          pb = at(B, r.q2.z);
          pd = (meta & SE_STREAM_DCONST) ? 0.0 : at(B, r.q2.z + OFF1);
        }
        push_parent<G>(meta, pb, pd, &at(B, r.q3.y), cb, cd);
      }
    }
    // the trunk upwards: the events' records again (L1-resident now), AHEAD_EV ahead
#pragma unroll
    for (int u = 0; u < AHEAD_EV; u++)
      re[u] = load_ev(max(n_ev - 1 - u, 0));
    for (int e0 = n_ev - 1; e0 >= 0; e0 -= AHEAD_EV) {
#pragma unroll
      for (int u = 0; u < AHEAD_EV; u++) {
        const int e = e0 - u;
        if (e < 0)
          break;
        const ev_rec r = re[u];
        re[u] = load_ev(max(e - AHEAD_EV, 0));
        const uint32_t meta = (uint32_t)r.q2.x;
        if (!(meta & SE_COOP_EV_TRUNK))
          continue;
        const double y = at(B, r.q1.z);
        const double f =
            (meta & SE_STREAM_DCONST) ? __hiloint2double(r.q1.y, r.q1.x) : at(B, r.q2.y);
        const double x = (meta & SE_STREAM_ROOT) ? y : y + f * at(B, r.q1.w);
        at(B, r.q1.z) = x;
        V[(int64_t)r.q3.x * W] = x;
        if (meta & SE_STREAM_ROOT)
          x_root = x;
      }
    }
  }
  __syncwarp();

  // ---- 3b: complete rows substituted, ranges upwards ----
  int4 r3[AHEAD_3B];
#pragma unroll
  for (int u = 0; u < AHEAD_3B; u++)
    r3[u] = ld_i4(rec + (4 * max(nj - 1 - u, 0) + 1) * L);
  double xprev = 0.0;
  for (int k0 = nj - 1; k0 >= 0; k0 -= AHEAD_3B) {
#pragma unroll
    for (int u = 0; u < AHEAD_3B; u++) {
      const int k = k0 - u;
      if (k < 0)
        break;
      const int4 q1 = r3[u];
      r3[u] = ld_i4(rec + (4 * max(k - AHEAD_3B, 0) + 1) * L);
      const uint32_t meta = (uint32_t)q1.w;
      if (meta & SE_COOP_TRUNK)
        continue;
      double *const y = Sj + k * 32;
      const double f = (meta & SE_STREAM_DCONST) ? __hiloint2double(q1.y, q1.x) : at(B, q1.x);
      const double xp =
          (meta & SE_STREAM_PREV) && !(meta & SE_COOP_BOUNDARY) ? xprev : at(B, q1.z);
      const double x = *y + f * xp;
      *y = x;
      V[(int64_t)(hi - 1 - k) * W] = x;
      xprev = x;
    }
  }

  if (on && j == 0)
    se_root_spike_check(d, d.lane_cell[t], t_now, v_root, x_root);
}

template <int L> void launch_coop(const se_neurons_device *d, const se_coop_device *cp, double t,
                                  int update_gates, cudaStream_t stream) {
  step_coop<L><<<(unsigned)cp->n_warps, 32, (size_t)cp->slots * 32 * sizeof(double) / L,
                 stream>>>(*d, *cp, t, update_gates);
}

} // namespace

extern "C" cudaError_t se_neurons_cuda_step_coop(const se_neurons_device *d,
                                                 const se_coop_device *cp, double t,
                                                 int update_gates, cudaStream_t stream) {
  if (cp->n_warps > 0)
    cp->lanes == 8   ? launch_coop<8>(d, cp, t, update_gates, stream)
    : cp->lanes == 2 ? launch_coop<2>(d, cp, t, update_gates, stream)
                     : launch_coop<4>(d, cp, t, update_gates, stream);
  return cudaGetLastError();
}

extern "C" cudaError_t se_neurons_cuda_coop_setup(size_t smem_bytes) {
  const cudaFuncAttribute a = cudaFuncAttributeMaxDynamicSharedMemorySize;
  cudaError_t rc = cudaFuncSetAttribute(step_coop<2>, a, (int)smem_bytes);
  if (rc == cudaSuccess)
    rc = cudaFuncSetAttribute(step_coop<4>, a, (int)smem_bytes);
  if (rc == cudaSuccess)
    rc = cudaFuncSetAttribute(step_coop<8>, a, (int)smem_bytes);
  return rc;
}
