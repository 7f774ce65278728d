// Device helpers shared by the neuron step kernels (neurons_kernels.cu, neurons_coop.cu).
#ifndef SE_NEURONS_DEVICE_CUH
#define SE_NEURONS_DEVICE_CUH

#include "neurons_cuda.h"
#include "neurons_math.h"

// The root (soma) check of one cell after a step from t_now: a non-finite voltage marks the cell
// (the first one wins), an upward threshold crossing records an interpolated spike time.
static __device__ __forceinline__ void se_root_spike_check(const se_neurons_device &d,
                                                           int64_t cell, double t_now,
                                                           double before, double after) {
  if (!isfinite(after))
    atomicCAS(d.bad_cell, 0ULL, (unsigned long long)(cell + 1));
  if (before < d.threshold && d.threshold <= after) {
    const unsigned long long k = atomicAdd(d.spike_count, 1ULL);
    if (k < (unsigned long long)d.spike_capacity) {
      d.spike_time[k] = se_spike_time(t_now, d.dt, d.threshold, before, after);
      d.spike_cell[k] = cell;
    }
  }
}

#endif
