// The cooperative ("coop") step kernel (src/neurons_coop.h, docs/gpu.md "coop"): one warp per G
// adjacent cells of a group, L = 32 / G threads per cell (thread j of cell c is warp lane
// j * G + c), every intermediate of the step in shared memory. fused2's per-row arithmetic
// (neurons_stream.h) on the same values in the same order; the host model se_coop_reference_step
// performs the same phases. Measured (docs/gpu.md "Reading the coop numbers"): latency-bound on
// the plan loads of each step at 3-7 warps per multiprocessor.
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

template <int L>
__global__ void __launch_bounds__(32, 16)
    step_coop(const se_neurons_device d, const se_coop_device cp, double t_now, int update) {
  constexpr int G = 32 / L;
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
  double *const V = d.v + s0, *const Mg = d.m + s0, *const Hg = d.h + s0, *const Ng = d.n + s0;
  const se_coop_chunk *const rec = cp.rec + mo->rec + j; // chunk q of step k: rec[(4k + q) L]
  const double t_mid = t_now + 0.5 * d.dt;
  const int64_t kbeg = on ? d.stim_ptr[t] : 0, kend = on ? d.stim_ptr[t + 1] : 0;
  const double v_root = on && j == 0 ? V[0] : 0.0;

  // ---- 0: v of this thread's rows into their slots (asynchronous copies, all in flight at
  // once), then b0 = a v + c + clamps of the passive rows ----
  const int nj = on ? hi - lo : 0;
  for (int k = 0; k < nj; k++)
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(
                     (unsigned)__cvta_generic_to_shared(S + (k * L + j) * G)),
                 "l"(V + (int64_t)(hi - 1 - k) * W)
                 : "memory");
  // the first hh step's state (1a), loaded while the copies are in flight
  const se_coop_chunk *const hrec = cp.hh + mo->hh + j; // chunk q of hh step k: hrec[(5k + q) L]
  const int hsteps = on ? mo->hh_steps : 0;
  int4 hq = make_int4(-1, 0, 0, 0);
  double hv = 0.0, hm = 0.0, hg = 0.0, hn = 0.0;
  // hh step k's record and the state of its row
  auto load_hh = [&](int k) {
    hq = ld_i4(hrec + (5 * k + 4) * L);
    if (hq.x >= 0) {
      const int64_t o = (int64_t)hq.x * W;
      hv = V[o];
      hm = Mg[o];
      hg = Hg[o];
      hn = Ng[o];
    }
  };
  if (hsteps > 0)
    load_hh(0);
  asm volatile("cp.async.wait_all;" ::: "memory");
  int64_t ks = kend - 1;
  while (ks >= kbeg && d.stim_comp[ks] >= hi)
    ks--;
  int next = ks >= kbeg ? d.stim_comp[ks] : -1;
#pragma unroll 4
  for (int k = 0; k < nj; k++) {
    const int i = hi - 1 - k;
    double bx = 0.0;
    while (next == i) {
      if (se_iclamp_on(t_mid, d.stim_delay[ks], d.stim_duration[ks]))
        bx += d.stim_amplitude[ks];
      ks--;
      next = ks >= kbeg ? d.stim_comp[ks] : -1;
    }
    const uint32_t meta = (uint32_t)__ldg(reinterpret_cast<const int *>(rec + (4 * k + 1) * L) + 3);
    if (!(meta & SE_STREAM_HH)) {
      const double2 ac = ld_d2(rec + (4 * k + 3) * L);
      double *const y = S + (k * L + j) * G;
      *y = ac.x * *y + ac.y + bx;
    }
  }
  __syncwarp();

  // ---- 1a: hh rows spread over the threads: gates, currents, b0 and d0 (the next step's state
  // loaded before this one is computed) ----
  for (int k = 0; k < hsteps; k++) {
    const int4 q4 = hq;
    const double v = hv;
    double m = hm, h = hg, n = hn;
    if (k + 1 < hsteps)
      load_hh(k + 1);
    const int i = q4.x;
    if (i < 0)
      continue;
    const se_coop_chunk *q = hrec + 5 * k * L;
    double bx = 0.0, b = 0.0, dg = 0.0;
    for (int64_t kk = kend - 1; kk >= kbeg; kk--)
      if (d.stim_comp[kk] == i && se_iclamp_on(t_mid, d.stim_delay[kk], d.stim_duration[kk]))
        bx += d.stim_amplitude[kk];
    const double2 gk = ld_d2(q), e = ld_d2(q + L);
    se_stream_hh(v, &m, &h, &n, update, d.dt, d.q10, gk.x, gk.y, e.x, e.y, &b, &dg);
    if (update) {
      Mg[(int64_t)i * W] = m;
      Hg[(int64_t)i * W] = h;
      Ng[(int64_t)i * W] = n;
    }
    bx += b;
    const double2 ac = ld_d2(q + 2 * L);
    S[q4.y * G] = ac.x * v + ac.y + bx;
    S[q4.z * G] = ld_d2(q + 3 * L).x + dg;
  }
  __syncwarp();

  // ---- 1b: complete rows eliminated, ranges downwards in lockstep ----
  double cb = 0.0, cd = 0.0;
#pragma unroll 4
  for (int k = 0; k < nj; k++) {
    const se_coop_chunk *q = rec + 4 * k * L;
    const int4 q2 = ld_i4(q + 2 * L);
    const uint32_t cfl = (uint32_t)q2.w;
    if (cfl & SE_COOP_TRUNK) {
      cb = cd = 0.0;
      continue;
    }
    const double2 dg = ld_d2(q);
    const int4 q1 = ld_i4(q + L);
    const uint32_t meta = (uint32_t)q1.w;
    const int sl = k * L + j;
    const double ab = (meta & SE_STREAM_OWN) ? S[q2.z * G] : 0.0;
    const double ad = (meta & SE_STREAM_DACC) ? S[(q2.z + 1) * G] : 0.0;
    const double d0 = (meta & SE_STREAM_HH) ? S[q2.x * G] : dg.x;
    const se_stream_elim el = se_stream_eliminate_from(S[sl * G], d0, dg.y, __hiloint2double(q1.y, q1.x),
                                                meta, cb, cd, ab, ad);
    S[sl * G] = el.y;
    if (!(meta & SE_STREAM_DCONST))
      S[q2.x * G] = el.f;
    if (cfl & SE_COOP_BOUNDARY) {
      S[q2.y * G] = el.push_b;
      if (!(meta & SE_STREAM_DCONST))
        S[(q2.y + 1) * G] = el.push_d;
      cb = cd = 0.0;
    } else {
      push_parent<G>(meta, el.push_b, el.push_d, S + (q2.y >= 0 ? q2.y : 0) * G, cb, cd);
    }
  }
  __syncwarp();

  // ---- 2, 3a: one thread per cell: the events downwards, the trunk upwards ----
  double x_root = 0.0;
  if (on && j == 0) {
    const se_coop_chunk *const ev = cp.ev + mo->ev;
    cb = cd = 0.0;
    for (int e = 0; e < mo->n_ev; e++) {
      const se_coop_chunk *q = ev + 4 * e;
      const int4 q2 = ld_i4(q + 2), q3 = ld_i4(q + 3);
      const uint32_t meta = (uint32_t)q2.x;
      double pb, pd;
      if (meta & SE_COOP_EV_TRUNK) {
        const double2 dg = ld_d2(q);
        const int4 q1 = ld_i4(q + 1);
        const double ab = (meta & SE_STREAM_OWN) ? S[q2.w * G] : 0.0;
        const double ad = (meta & SE_STREAM_DACC) ? S[(q2.w + 1) * G] : 0.0;
        const double d0 = (meta & SE_STREAM_HH) ? S[q2.y * G] : dg.x;
        const se_stream_elim el = se_stream_eliminate_from(
            S[q1.z * G], d0, dg.y, __hiloint2double(q1.y, q1.x), meta, cb, cd, ab, ad);
        S[q1.z * G] = el.y;
        if (!(meta & SE_STREAM_DCONST))
          S[q2.y * G] = el.f;
        pb = el.push_b;
        pd = el.push_d;
      } else {
        pb = S[q2.z * G];
        pd = (meta & SE_STREAM_DCONST) ? 0.0 : S[(q2.z + 1) * G];
      }
      push_parent<G>(meta, pb, pd, S + (q3.y >= 0 ? q3.y : 0) * G, cb, cd);
    }
    for (int e = mo->n_ev - 1; e >= 0; e--) {
      const se_coop_chunk *q = ev + 4 * e;
      const int4 q2 = ld_i4(q + 2);
      const uint32_t meta = (uint32_t)q2.x;
      if (!(meta & SE_COOP_EV_TRUNK))
        continue;
      const int4 q1 = ld_i4(q + 1), q3 = ld_i4(q + 3);
      const double y = S[q1.z * G];
      const double f = (meta & SE_STREAM_DCONST) ? __hiloint2double(q1.y, q1.x) : S[q2.y * G];
      const double x = (meta & SE_STREAM_ROOT) ? y : y + f * S[q1.w * G];
      S[q1.z * G] = x;
      V[(int64_t)q3.x * W] = x;
      if (meta & SE_STREAM_ROOT)
        x_root = x;
    }
  }
  __syncwarp();

  // ---- 3b: complete rows substituted, ranges upwards ----
  double xprev = 0.0;
#pragma unroll 4
  for (int k = nj - 1; k >= 0; k--) {
    const se_coop_chunk *q = rec + 4 * k * L;
    const int4 q2 = ld_i4(q + 2 * L);
    const uint32_t cfl = (uint32_t)q2.w;
    if (cfl & SE_COOP_TRUNK)
      continue;
    const int4 q1 = ld_i4(q + L);
    const uint32_t meta = (uint32_t)q1.w;
    const int sl = k * L + j;
    const double f = (meta & SE_STREAM_DCONST) ? __hiloint2double(q1.y, q1.x) : S[q2.x * G];
    const double xp =
        (meta & SE_STREAM_PREV) && !(cfl & SE_COOP_BOUNDARY) ? xprev : S[q1.z * G];
    const double x = S[sl * G] + f * xp;
    S[sl * G] = x;
    V[(int64_t)(hi - 1 - k) * W] = x;
    xprev = x;
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
