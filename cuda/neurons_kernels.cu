// Kernels of the CUDA neurons backend: one thread per (group, lane). The per-compartment
// arithmetic is the CPU backend's (src/neurons_math.h), in the same order, so the two backends
// agree to rounding of exp() (docs/gpu.md).
#include "neurons_cuda.h"
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
    const se_hh_rates q = se_hh_rates_at(v, d.q10);
    d.m[s] = se_hh_cnexp(d.m[s], q.minf, q.mtau, d.dt);
    d.h[s] = se_hh_cnexp(d.h[s], q.hinf, q.htau, d.dt);
    d.n[s] = se_hh_cnexp(d.n[s], q.ninf, q.ntau, d.dt);
  }
  const double after = d.v[r.base + r.lane];
  const int64_t cell = d.lane_cell[t];
  if (!isfinite(after))
    atomicCAS(d.bad_cell, 0ULL, (unsigned long long)(cell + 1));
  if (v_root_before < d.threshold && d.threshold <= after) {
    const unsigned long long k = atomicAdd(d.spike_count, 1ULL);
    if (k < (unsigned long long)d.spike_capacity) {
      d.spike_time[k] = se_spike_time(t_now, d.dt, d.threshold, v_root_before, after);
      d.spike_cell[k] = cell;
    }
  }
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

extern "C" cudaError_t se_neurons_cuda_gather(const se_neurons_device *d, cudaStream_t stream) {
  if (d->n_record > 0)
    gather<<<blocks_for(d->n_record), kThreads, 0, stream>>>(*d);
  return cudaGetLastError();
}
