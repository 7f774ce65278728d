// Runs the gen kernel's generated source on the host (with tests/gen_host_shim.h): every thread of
// every block of 32, one after the other, as one launch. Compiled by test_stream.c beside the
// generated source into a shared object. Threads of a block share the shared-memory array, each
// on its own slots (the kernel offsets them by threadIdx.x), as on the device.
#include "gen_host_shim.h"

se_gen_dim3 blockIdx, threadIdx;
// the kernel's dynamic shared memory: at most (1024 + 2 * 1024) slots of 32 doubles
double se_gen_smem[(1024 + 2 * 1024) * 32];

extern "C" void se_gen_step(double *v, double *gm, double *gh, double *gn, const long long *stim_ptr,
                            const int *stim_comp, const double *stim_delay,
                            const double *stim_duration, const double *stim_amplitude,
                            unsigned long long *spike_count, double *spike_time,
                            long long *spike_cell, long long spike_capacity,
                            unsigned long long *bad_cell, double *rhs, long long cells,
                            double t_now, int update);

extern "C" void se_gen_host_launch(double *v, double *gm, double *gh, double *gn,
                                   const long long *stim_ptr, const int *stim_comp,
                                   const double *stim_delay, const double *stim_duration,
                                   const double *stim_amplitude, unsigned long long *spike_count,
                                   double *spike_time, long long *spike_cell,
                                   long long spike_capacity, unsigned long long *bad_cell,
                                   double *rhs, long long cells, double t_now, int update) {
  for (long long b = 0; b < (cells + 31) / 32; b++)
    for (unsigned t = 0; t < 32; t++) {
      blockIdx.x = (unsigned)b;
      threadIdx.x = t;
      se_gen_step(v, gm, gh, gn, stim_ptr, stim_comp, stim_delay, stim_duration, stim_amplitude,
                  spike_count, spike_time, spike_cell, spike_capacity, bad_cell, rhs, cells,
                  t_now, update);
    }
}
