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
#include "neurons_stream.h"

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
  /* streaming step (gpu_fused = 2, docs/gpu.md) */
  const se_stream_row *stream;               /* per morphology compartment */
  int32_t stream_rows;                       /* rows per lane whose y stays in shared memory */
  int32_t stream_slots;                      /* accumulator slots per lane in shared memory */
  int32_t stream_acc_global;                 /* 1: accumulators in rhs (too many slots) */
  /* branch step (SE_GPU_KERNEL_BRANCH, cuda/neurons_branch.h): v, m, h, n, diag, rhs are in the
   * branch order (the branch plan's slots, then each EDD cell's rows); the v-form system */
  int64_t n_branch_slots;                    /* slots of the branch order, padding included */
  const uint8_t *slot_flags;                 /* SE_SLOT_* of each slot */
  const int32_t *slot_cell;                  /* local cell of each slot (read at soma slots) */
  const double *slot_a, *slot_c, *slot_d;    /* C/dt, constant rhs g_pas e_pas (+ gl el), and
                                                constant diagonal C/dt + d_axial + g_pas (+ gl) */
  const double *slot_gna, *slot_gk, *slot_ena, *slot_ek; /* hh slots only */
  int64_t n_stim_slots;                      /* slots with current clamps */
  const int64_t *stim_slot;                  /* [n_stim_slots] the slot */
  const int64_t *stim_slot_ptr;              /* [n_stim_slots + 1] its clamps (model order) in
                                                stim_delay, stim_duration, stim_amplitude */
} se_neurons_device;

/* Flags of a slot of the branch order (padding slots have none). */
#define SE_SLOT_USED 1u
#define SE_SLOT_HH 2u
#define SE_SLOT_SOMA 4u /* compartment 0 of its cell: spike detection */

/* Threads per block of the streaming step; its dynamic shared memory is
 * (stream_rows + stream_slots) * SE_STREAM_THREADS * 8 bytes. */
#define SE_STREAM_THREADS 32

/* Copies `bytes` from host memory src to a new device buffer *(void **)dst_ptr (8 bytes when
 * bytes is 0). Synchronous. */
int se_neurons_cuda_upload(void *dst_ptr, const void *src, size_t bytes, se_error *err);

/* The host maps of the padded kernels' threads (thread = position[group] * width + lane, of
 * n_threads): *lane_cell, the local cell of each thread (-1 for padding); *stim_ptr (n_threads +
 * 1) and *stim_order (e->n_stim), each thread's clamps as model indices by compartment, model
 * order within. All calloc'ed, the caller frees them (also on failure). Not collective. */
int se_neurons_cuda_thread_maps(const struct se_neurons *e, const int64_t *position,
                                int64_t n_threads, int64_t **lane_cell, int64_t **stim_ptr,
                                int32_t **stim_order, se_error *err);

/* Uploads the delay, duration and amplitude of e's clamps in the order order[0 .. e->n_stim)
 * (model indices) into new device buffers d->stim_delay, stim_duration and stim_amplitude.
 * Synchronous. */
int se_neurons_cuda_upload_clamps(const struct se_neurons *e, const int32_t *order,
                                  se_neurons_device *d, se_error *err);

/* The backend's device memory per compartment, per cell and per morphology compartment, an upper
 * bound over the step kernels (se_gpu_bytes_estimate; the reasoning next to the definition). */
void se_neurons_cuda_bytes_estimate(int64_t *per_compartment, int64_t *per_cell,
                                    int64_t *per_morphology_compartment);

/* One time step from time t: currents, assembly, Hines solve, gates, spikes, in one kernel. */
cudaError_t se_neurons_cuda_step_fused(const se_neurons_device *d, double t, cudaStream_t stream);

/* The same step as three kernels (assembly, solve, update), for comparison. */
cudaError_t se_neurons_cuda_step_phases(const se_neurons_device *d, double t, cudaStream_t stream);

/* The streaming step: one backward pass (gates of the previous step brought up to date when
 * update_gates, currents, assembly and elimination at once) and one forward pass writing
 * v^{n+1} in place. Rows are handled in chunks of 8; ahead: chunks of global loads in flight
 * beyond the current one (1 or 2); hints: L2 eviction hints (keep the y spilled into v's slots,
 * stream the rest). */
cudaError_t se_neurons_cuda_step_stream(const se_neurons_device *d, double t, int update_gates,
                                        int ahead, int hints, cudaStream_t stream);

/* Brings the deferred gates up to date (cnexp at the current v): before anything reads m, h, n. */
cudaError_t se_neurons_cuda_stream_finish(const se_neurons_device *d, cudaStream_t stream);

/* Allows smem_bytes of dynamic shared memory per block for the streaming kernels and sets their
 * preferred shared-memory carveout (percent). */
cudaError_t se_neurons_cuda_stream_setup(size_t smem_bytes, int carveout_percent);

/* Resident blocks per multiprocessor of the streaming kernel with smem_bytes per block. */
cudaError_t se_neurons_cuda_stream_occupancy(int ahead, int hints, size_t smem_bytes,
                                             int *blocks_per_sm);

/* Branch step, before the solve: each slot's row of the v-form system (docs/gpu.md "v-form")
 * into diag and rhs, then the current clamps on at t + dt/2. One thread per slot. */
cudaError_t se_neurons_cuda_branch_assemble(const se_neurons_device *d, double t,
                                            cudaStream_t stream);

/* Branch step, after the solve (rhs = v^{n+1}): v = rhs, gates at v^{n+1}, spikes (interpolated
 * crossing at each cell's soma) and non-finite somata. One thread per slot. */
cudaError_t se_neurons_cuda_branch_update(const se_neurons_device *d, double t,
                                          cudaStream_t stream);

/* record_buffer[k] = v[record_slot[k]]. */
cudaError_t se_neurons_cuda_gather(const se_neurons_device *d, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
