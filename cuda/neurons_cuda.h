/* The CUDA backend of the neurons engine: the device image of an engine (plain data, passed by
 * value to the kernels) and the extern "C" kernel launchers. Control logic is in neurons_cuda.c. */
#ifndef SE_NEURONS_CUDA_H
#define SE_NEURONS_CUDA_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
#include "neurons_impl.h"

/* Device pointers and scalars of one engine. One thread per (group, lane): thread t works on
 * lane t % width of group t / width. */
typedef struct se_neurons_device {
  int32_t width;
  int64_t n_groups, n_threads;
  double dt, inv_dt, q10, threshold;
  const se_group *groups;
  const int64_t *morph_base;                 /* [morphologies] first per-morphology index */
  const int32_t *parent;                     /* per morphology compartment */
  const uint8_t *has_hh;
  const double *cap, *g_axial, *d_axial, *g_pas, *e_pas, *gna, *gk, *gl, *el, *ena, *ek;
  double *v, *m, *h, *n, *diag, *rhs;        /* per slot */
  const int64_t *lane_cell;                  /* [n_threads] local cell, -1 for padding */
  const int64_t *stim_ptr;                   /* [n_threads + 1] clamps of each thread's cell */
  const int32_t *stim_comp;                  /* sorted by compartment, model order within */
  const double *stim_delay, *stim_duration, *stim_amplitude;
  double *v_root_before;                     /* [n_threads] for the three-kernel step */
  unsigned long long *spike_count;           /* spikes appended since the last drain */
  double *spike_time;
  int64_t *spike_cell;                       /* local cell */
  int64_t spike_capacity;
  unsigned long long *bad_cell;              /* 1 + local cell whose root became non-finite */
  const int64_t *record_slot;
  double *record_buffer;
  int64_t n_record;
} se_neurons_device;

/* One time step from time t: currents, assembly, Hines solve, gates, spikes, in one kernel. */
cudaError_t se_neurons_cuda_step_fused(const se_neurons_device *d, double t, cudaStream_t stream);

/* The same step as three kernels (assembly, solve, update), for comparison. */
cudaError_t se_neurons_cuda_step_phases(const se_neurons_device *d, double t, cudaStream_t stream);

/* record_buffer[k] = v[record_slot[k]]. */
cudaError_t se_neurons_cuda_gather(const se_neurons_device *d, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
