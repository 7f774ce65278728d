/* The CUDA backend of the neurons engine: device buffers, streams and the control of a step;
 * kernels in neurons_kernels.cu. The cell data stays on the device across steps; only recorded
 * frames (asynchronously, through a pinned buffer on a copy stream) and spikes come back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "neurons_branch.h"
#include "neurons_coop_cuda.h"
#include "neurons_gen.h"
#include "neurons_cuda.h"
#include "se_cuda.h"
#include "se_env.h"

/* Spikes are drained from the device at least every DRAIN_STEPS steps; a cell spikes at most
 * once per step, so a buffer of n_cells * DRAIN_STEPS entries never overflows. */
#define DRAIN_STEPS 64

typedef struct cuda_data {
  int device;
  cudaStream_t compute, copy;
  cudaEvent_t gathered, copied;
  se_neurons_device dev;
  double *pinned_frame;
  int64_t record_capacity;
  int steps_since_drain;
  /* host staging for the drain */
  double *host_spike_time;
  int64_t *host_spike_cell;
  /* streaming step (gpu_fused = 2): the gates lag one update behind v after a step until
   * finished (stream_finish) */
  int gates_pending;
  int stream_ahead, stream_hints;
  int kernel;                 /* SE_GPU_KERNEL_*, auto resolved */
  se_neurons_branch *branch;  /* the branch step's plans and maps (kernel BRANCH) */
  se_coop_device coop;        /* the coop step's plans (kernel COOP) */
  se_gen_step gen;            /* the generated step kernel (kernel GEN) */
} cuda_data;

int se_neurons_cuda_upload(void *dst_ptr, const void *src, size_t bytes, se_error *err) {
  void **dst = dst_ptr;
  SE_CUDA_CHECK(err, cudaMalloc(dst, bytes ? bytes : 8));
  if (bytes)
    SE_CUDA_CHECK(err, cudaMemcpy(*dst, src, bytes, cudaMemcpyHostToDevice));
  return SE_OK;
}

int se_neurons_cuda_upload_clamps(const struct se_neurons *e, const int32_t *order,
                                  se_neurons_device *d, se_error *err) {
  const size_t ns = (size_t)e->n_stim;
  double *val = malloc(3 * ns * sizeof *val + 1);
  if (!val)
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory for %zu clamps", ns);
  for (size_t j = 0; j < ns; j++) {
    val[j] = e->stim_delay[order[j]];
    val[ns + j] = e->stim_duration[order[j]];
    val[2 * ns + j] = e->stim_amplitude[order[j]];
  }
  const double **dst[] = {&d->stim_delay, &d->stim_duration, &d->stim_amplitude};
  int rc = SE_OK;
  for (size_t a = 0; rc == SE_OK && a < 3; a++)
    rc = se_neurons_cuda_upload(dst[a], val + a * ns, ns * sizeof *val, err);
  free(val);
  return rc;
}

void se_neurons_cuda_bytes_estimate(int64_t *per_compartment, int64_t *per_cell,
                                    int64_t *per_morphology_compartment) {
  /* A slot: v, m, h, n, diag, rhs (48 B) and, when recorded, its slot index and gathered
   * voltage (16 B); the branch step adds its per-slot constants a, c, d, gna, gk, ena, ek, a flag
   * byte, the cell index and the branch plan's g (61 B) and pads about 1% of its slots for
   * populations of thousands of cells: 125 B, bound 144. */
  *per_compartment = 144;
  /* the spike buffers (DRAIN_STEPS entries of time and cell), then 64 B: the root voltage
   * before the step, the lane's cell and its clamp pointer (24 B) and 40 B of slack for the
   * allocations' rounding */
  *per_cell = DRAIN_STEPS * (int64_t)(sizeof(double) + sizeof(int64_t)) + 3 * 8 + 40;
  /* the 11 constants, parent and hh flag (93 B); fused2's table (sizeof(se_stream_row), 48 B);
   * coop's row records (64 B per thread step, steps padded up to 1.5x the rows), hh records
   * (80 B per hh row) and event records (64 B, at most one per row): 381 B, bound 384 */
  *per_morphology_compartment = 384;
}

/* The launch order of the groups: longest first (stable), so that the last blocks of a step's
 * launch hold the shortest groups and the launch's tail is short (a mixed population's big
 * cells would otherwise run alone at the end). position[g] = where host group g is launched;
 * ordered[position[g]] = groups[g]. */
static int order_groups(se_neurons_t e, int64_t **position, se_group **ordered, se_error *err) {
  int64_t max_len = 0;
  for (int64_t g = 0; g < e->n_groups; g++)
    if (e->groups[g].n_comp > max_len)
      max_len = e->groups[g].n_comp;
  int64_t *count = NULL;
  SE_CALLOC(err, count, max_len + 2, "group order");
  int rc = SE_OK;
  *position = calloc((size_t)e->n_groups + 1, sizeof **position);
  *ordered = calloc((size_t)e->n_groups + 1, sizeof **ordered);
  if (!*position || !*ordered) {
    rc = se_error_set(err, SE_ERR_NOMEM, __FILE__, __LINE__, __func__,
                      "out of memory for the launch order of %lld groups", (long long)e->n_groups);
  } else { /* counting sort by decreasing length: bucket of length L starts after longer ones */
    for (int64_t g = 0; g < e->n_groups; g++)
      count[max_len - e->groups[g].n_comp + 1]++;
    for (int64_t k = 1; k <= max_len + 1; k++)
      count[k] += count[k - 1];
    for (int64_t g = 0; g < e->n_groups; g++) {
      int64_t at = count[max_len - e->groups[g].n_comp]++;
      (*position)[g] = at;
      (*ordered)[at] = e->groups[g];
    }
  }
  free(count);
  return rc;
}

int se_neurons_cuda_thread_maps(const struct se_neurons *e, const int64_t *position,
                                int64_t n_threads, int64_t **lane_cell, int64_t **stim_ptr,
                                int32_t **stim_order, se_error *err) {
  SE_CALLOC(err, *lane_cell, n_threads, "lane cells");
  SE_CALLOC(err, *stim_ptr, n_threads + 1, "clamp lists");
  SE_CALLOC(err, *stim_order, e->n_stim, "clamp order");
  for (int64_t t = 0; t < n_threads; t++)
    (*lane_cell)[t] = -1;
  for (int64_t c = 0; c < e->n_cells; c++)
    (*lane_cell)[position[e->cell_group[c]] * e->width + e->cell_lane[c]] = c;
  int64_t *thread_of = NULL;
  SE_CALLOC(err, thread_of, e->n_stim, "clamp threads");
  for (int32_t k = 0; k < e->n_stim; k++) {
    int64_t c = e->stim_cell[k];
    thread_of[k] = position[e->cell_group[c]] * e->width + e->cell_lane[c];
    (*stim_ptr)[thread_of[k] + 1]++;
  }
  for (int64_t t = 0; t < n_threads; t++)
    (*stim_ptr)[t + 1] += (*stim_ptr)[t];
  /* stable insertion by compartment within each thread (few clamps per cell) */
  int64_t *fill = NULL;
  SE_CALLOC(err, fill, n_threads, "clamp fill");
  for (int32_t k = 0; k < e->n_stim; k++) {
    int64_t t = thread_of[k], at = (*stim_ptr)[t] + fill[t]++;
    while (at > (*stim_ptr)[t] && e->stim_comp[(*stim_order)[at - 1]] > e->stim_comp[k]) {
      (*stim_order)[at] = (*stim_order)[at - 1];
      at--;
    }
    (*stim_order)[at] = k;
  }
  free(fill);
  free(thread_of);
  return SE_OK;
}

/* The streaming step's tables and shared-memory plan: accumulator slots and as many stack rows
 * as fit in shared memory when every block of the launch is resident at once (at most 16 blocks,
 * and no more than the registers allow, per multiprocessor). Knobs: SE_STREAM_ROWS (stack rows),
 * SE_STREAM_ACC=rhs (accumulators in global memory), SE_STREAM_AHEAD (chunks of 8 rows whose
 * loads are in flight beyond the current one: 1, the default, or 2), SE_STREAM_HINTS (0 or 1,
 * default 1: L2 eviction hints), SE_STREAM_VERBOSE (print the plan). */
static int attach_stream(se_neurons_t e, cuda_data *cd, se_error *err) {
  se_neurons_device *d = &cd->dev;
  se_stream_tables tab;
  SE_TRY(se_stream_build(e, &tab, err));
  int rc = se_neurons_cuda_upload(&d->stream, tab.rows,
                                  (size_t)(e->n_morph_comp > 0 ? e->n_morph_comp : 1) *
                                            sizeof *tab.rows, err);
  int32_t slots = tab.slots, max_rows = tab.max_rows;
  se_stream_free(&tab);
  SE_TRY(rc);
  cd->stream_ahead = se_env_long("SE_STREAM_AHEAD", 1) >= 2 ? 2 : 1;
  cd->stream_hints = se_env_long("SE_STREAM_HINTS", 1) != 0;
  int sms = 0, smem_sm = 0, smem_block = 0, regs_blocks = 0;
  SE_CUDA_CHECK(err, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, cd->device));
  SE_CUDA_CHECK(err, cudaDeviceGetAttribute(&smem_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor,
                                            cd->device));
  SE_CUDA_CHECK(err, cudaDeviceGetAttribute(&smem_block, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                            cd->device));
  SE_CUDA_CHECK(err, se_neurons_cuda_stream_occupancy(cd->stream_ahead, cd->stream_hints, 0,
                                                      &regs_blocks));
  int64_t blocks = (d->n_threads + SE_STREAM_THREADS - 1) / SE_STREAM_THREADS;
  int64_t per_sm = sms > 0 ? (blocks + sms - 1) / sms : 1;
  if (per_sm > 16)
    per_sm = 16;
  if (regs_blocks > 0 && per_sm > regs_blocks)
    per_sm = regs_blocks;
  if (per_sm < 1)
    per_sm = 1;
  const int64_t row_bytes = SE_STREAM_THREADS * (int64_t)sizeof(double);
  int64_t budget = smem_sm / per_sm - 1024; /* 1 KiB per block is the system's */
  if (budget > smem_block)
    budget = smem_block;
  int64_t rows_fit = budget / row_bytes;
  const char *acc_env = getenv("SE_STREAM_ACC");
  int acc_global = slots > SE_STREAM_MAX_SLOTS || 2 * (int64_t)slots > rows_fit ||
                   (acc_env && !strcmp(acc_env, "rhs"));
  d->stream_acc_global = acc_global;
  d->stream_slots = acc_global ? 0 : slots;
  int64_t k = rows_fit - d->stream_slots;
  k = se_env_long("SE_STREAM_ROWS", (long)k);
  if (k > max_rows)
    k = max_rows;
  if (k > smem_block / row_bytes - d->stream_slots)
    k = smem_block / row_bytes - d->stream_slots;
  if (k < 0)
    k = 0;
  d->stream_rows = (int32_t)k;
  size_t smem = (size_t)(d->stream_rows + d->stream_slots) * (size_t)row_bytes;
  int carveout = (int)((100 * (int64_t)per_sm * ((int64_t)smem + 1024) + smem_sm - 1) / smem_sm);
  /* the limit is the device's (attributes are per kernel, not per engine: engines of other sizes
   * may launch it too); the carveout only prefers */
  SE_CUDA_CHECK(err, se_neurons_cuda_stream_setup((size_t)smem_block,
                                                  carveout > 100 ? 100 : carveout));
  if (getenv("SE_STREAM_VERBOSE"))
    fprintf(stderr,
            "stream: %lld blocks, %lld per SM (registers allow %d), stack rows %d of %d, %d slots%s, "
            "%zu B shared per block, carveout %d%%, ahead %d, hints %d\n",
            (long long)blocks, (long long)per_sm, regs_blocks, d->stream_rows, max_rows,
            slots, acc_global ? " (in rhs)" : "", smem, carveout, cd->stream_ahead,
            cd->stream_hints);
  return SE_OK;
}

/* The group layout's device image (kernels fused, phases, fused2): the engine's slots, the
 * per-morphology constants and the per-thread clamp lists. */
static int attach_groups(se_neurons_t e, cuda_data *cd, se_error *err) {
  se_neurons_device *d = &cd->dev;
  int64_t nm = 0;
  for (int64_t g = 0; g < e->n_groups; g++)
    if (e->groups[g].morphology + 1 > nm)
      nm = e->groups[g].morphology + 1;
  int64_t *morph_base = NULL;
  SE_CALLOC(err, morph_base, nm, "morphology bases");
  for (int64_t m = 0; m < nm; m++)
    morph_base[m] = e->topology[m].base;
  d->width = e->width;
  d->n_groups = e->n_groups;
  d->n_threads = e->n_groups * e->width;
  size_t C = (size_t)e->n_morph_comp, S = (size_t)e->n_slots, D = sizeof(double);
  int rc = se_neurons_cuda_upload(&d->morph_base, morph_base, (size_t)nm * sizeof *morph_base, err);
  free(morph_base);
  SE_TRY(rc);
  SE_TRY(se_neurons_cuda_upload(&d->parent, e->parent_copy, C * sizeof(int32_t), err));
  SE_TRY(se_neurons_cuda_upload(&d->has_hh, e->has_hh_copy, C, err));
  const double *host_const[] = {e->cap, e->g_axial, e->d_axial, e->g_pas, e->e_pas, e->gna,
                                e->gk,  e->gl,      e->el,      e->ena,   e->ek};
  const double **dev_const[] = {&d->cap, &d->g_axial, &d->d_axial, &d->g_pas, &d->e_pas, &d->gna,
                                &d->gk,  &d->gl,      &d->el,      &d->ena,   &d->ek};
  for (size_t a = 0; a < sizeof host_const / sizeof host_const[0]; a++)
    SE_TRY(se_neurons_cuda_upload(dev_const[a], host_const[a], C * D, err));
  double *host_state[] = {e->v, e->m, e->h, e->n};
  double **dev_state[] = {&d->v, &d->m, &d->h, &d->n};
  for (size_t a = 0; a < sizeof host_state / sizeof host_state[0]; a++)
    SE_TRY(se_neurons_cuda_upload(dev_state[a], host_state[a], S * D, err));
  /* the step's work arrays live on the device only */
  double **dev_work[] = {&d->diag, &d->rhs};
  for (size_t a = 0; a < sizeof dev_work / sizeof dev_work[0]; a++) {
    SE_CUDA_CHECK(err, cudaMalloc((void **)dev_work[a], S * D + 8));
    SE_CUDA_CHECK(err, cudaMemset(*dev_work[a], 0, S * D + 8));
  }

  int64_t *lane_cell = NULL, *stim_ptr = NULL, *position = NULL;
  int32_t *order = NULL;
  se_group *ordered = NULL;
  rc = order_groups(e, &position, &ordered, err);
  if (rc == SE_OK)
    rc = se_neurons_cuda_upload(&d->groups, ordered, (size_t)e->n_groups * sizeof *ordered, err);
  if (rc == SE_OK)
    rc = se_neurons_cuda_thread_maps(e, position, d->n_threads, &lane_cell, &stim_ptr, &order,
                                     err);
  free(ordered);
  int32_t *comp = rc == SE_OK ? malloc((size_t)e->n_stim * sizeof *comp + 1) : NULL;
  if (rc == SE_OK && !comp)
    rc = se_error_set(err, SE_ERR_NOMEM, __FILE__, __LINE__, __func__, "out of memory for clamps");
  if (rc == SE_OK) {
    for (int32_t j = 0; j < e->n_stim; j++)
      comp[j] = e->stim_comp[order[j]];
    rc = se_neurons_cuda_upload(&d->lane_cell, lane_cell,
                                (size_t)d->n_threads * sizeof(int64_t), err);
    if (rc == SE_OK)
      rc = se_neurons_cuda_upload(&d->stim_ptr, stim_ptr,
                                  ((size_t)d->n_threads + 1) * sizeof(int64_t), err);
    if (rc == SE_OK)
      rc = se_neurons_cuda_upload(&d->stim_comp, comp, (size_t)e->n_stim * sizeof *comp, err);
    if (rc == SE_OK)
      rc = se_neurons_cuda_upload_clamps(e, order, d, err);
  }
  free(lane_cell);
  free(stim_ptr);
  free(order);
  free(comp);
  if (rc == SE_OK && cd->kernel == SE_GPU_KERNEL_FUSED2)
    rc = attach_stream(e, cd, err);
  else if (rc == SE_OK && cd->kernel == SE_GPU_KERNEL_COOP)
    rc = se_neurons_coop_attach(e, cd->device, d, &cd->coop, err);
  else if (rc == SE_OK && cd->kernel == SE_GPU_KERNEL_GEN)
    rc = se_neurons_gen_attach(e, cd->device, position, d, &cd->gen, err);
  free(position);
  return rc;
}

static int attach_cuda(se_neurons_t e, se_error *err) {
  cuda_data *cd = NULL;
  SE_CALLOC(err, cd, 1, "CUDA backend");
  e->backend_data = cd;
  cd->device = e->options.gpu_device;
  SE_CUDA_CHECK(err, cudaSetDevice(cd->device));
  SE_CUDA_CHECK(err, cudaStreamCreateWithFlags(&cd->compute, cudaStreamNonBlocking));
  SE_CUDA_CHECK(err, cudaStreamCreateWithFlags(&cd->copy, cudaStreamNonBlocking));
  SE_CUDA_CHECK(err, cudaEventCreateWithFlags(&cd->gathered, cudaEventDisableTiming));
  SE_CUDA_CHECK(err, cudaEventCreateWithFlags(&cd->copied, cudaEventDisableTiming));

  se_neurons_device *d = &cd->dev;
  d->dt = e->dt;
  d->inv_dt = 1.0 / e->dt;
  d->q10 = e->q10;
  d->threshold = e->spike_threshold;
  cd->kernel = se_neurons_gpu_kernel(e);
  if (cd->kernel == SE_GPU_KERNEL_BRANCH) {
    SE_TRY(se_neurons_branch_create(e, cd->compute, d, &cd->branch, err));
    if (getenv("SE_BRANCH_VERBOSE")) {
      se_neurons_branch_stats st;
      se_neurons_branch_get_stats(cd->branch, &st);
      fprintf(stderr,
              "branch: %lld cells in the branch plan (%d levels), %lld through EDD (from %lld "
              "compartments), %lld slots, %lld padding\n",
              (long long)st.branch_cells, st.levels, (long long)st.edd_cells,
              (long long)se_neurons_edd_min_comp(e), (long long)st.slots, (long long)st.padding);
    }
  } else {
    SE_TRY(attach_groups(e, cd, err));
  }
  d->spike_capacity = e->n_cells * DRAIN_STEPS + 1024;
  SE_CUDA_CHECK(err, cudaMalloc((void **)&d->v_root_before,
                                ((size_t)d->n_threads + 1) * sizeof(double)));
  SE_CUDA_CHECK(err, cudaMalloc((void **)&d->spike_count, sizeof *d->spike_count));
  SE_CUDA_CHECK(err, cudaMalloc((void **)&d->bad_cell, sizeof *d->bad_cell));
  SE_CUDA_CHECK(err, cudaMemset(d->spike_count, 0, sizeof *d->spike_count));
  SE_CUDA_CHECK(err, cudaMemset(d->bad_cell, 0, sizeof *d->bad_cell));
  SE_CUDA_CHECK(err,
                cudaMalloc((void **)&d->spike_time, (size_t)d->spike_capacity * sizeof(double)));
  SE_CUDA_CHECK(err, cudaMalloc((void **)&d->spike_cell, (size_t)d->spike_capacity * sizeof(int64_t)));
  SE_CALLOC(err, cd->host_spike_time, d->spike_capacity, "spike staging");
  SE_CALLOC(err, cd->host_spike_cell, d->spike_capacity, "spike staging");
  /* The uploads above (cudaMemcpy from pageable memory, cudaMemset) go through the legacy
   * default stream and may return before their DMA lands; the step's streams are non-blocking,
   * so nothing orders their kernels after it. Wait for it here. */
  SE_CUDA_CHECK(err, cudaDeviceSynchronize());
  return SE_OK;
}

static void detach_cuda(se_neurons_t e) {
  cuda_data *cd = e->backend_data;
  if (!cd)
    return;
  cudaSetDevice(cd->device);
  se_neurons_device *d = &cd->dev;
  const void *buffers[] = {d->groups,     d->morph_base,   d->parent,      d->has_hh,
                           d->cap,        d->g_axial,      d->d_axial,     d->g_pas,
                           d->e_pas,      d->gna,          d->gk,          d->gl,
                           d->el,         d->ena,          d->ek,          d->v,
                           d->m,          d->h,            d->n,           d->diag,
                           d->rhs,        d->lane_cell,    d->stim_ptr,    d->stim_comp,
                           d->stim_delay, d->stim_duration, d->stim_amplitude, d->v_root_before,
                           d->spike_count, d->spike_time,  d->spike_cell,  d->bad_cell,
                           d->record_slot, d->record_buffer, d->stream,   d->slot_flags,
                           d->slot_cell,  d->slot_a,       d->slot_c,      d->slot_d,
                           d->slot_gna,   d->slot_gk,      d->slot_ena,    d->slot_ek,
                           d->stim_slot,  d->stim_slot_ptr};
  for (size_t a = 0; a < sizeof buffers / sizeof buffers[0]; a++)
    cudaFree((void *)buffers[a]);
  cudaFreeHost(cd->pinned_frame);
  se_neurons_branch_destroy(cd->branch);
  se_neurons_coop_free(&cd->coop);
  se_neurons_gen_free(&cd->gen);
  if (cd->compute)
    cudaStreamDestroy(cd->compute);
  if (cd->copy)
    cudaStreamDestroy(cd->copy);
  if (cd->gathered)
    cudaEventDestroy(cd->gathered);
  if (cd->copied)
    cudaEventDestroy(cd->copied);
  free(cd->host_spike_time);
  free(cd->host_spike_cell);
  free(cd);
  e->backend_data = NULL;
}

static int collect_spikes_cuda(se_neurons_t e, se_error *err) {
  cuda_data *cd = e->backend_data;
  se_neurons_device *d = &cd->dev;
  SE_CUDA_CHECK(err, cudaSetDevice(cd->device));
  SE_CUDA_CHECK(err, cudaStreamSynchronize(cd->compute));
  unsigned long long count = 0, bad = 0;
  SE_CUDA_CHECK(err, cudaMemcpy(&count, d->spike_count, sizeof count, cudaMemcpyDeviceToHost));
  SE_CUDA_CHECK(err, cudaMemcpy(&bad, d->bad_cell, sizeof bad, cudaMemcpyDeviceToHost));
  cd->steps_since_drain = 0;
  if (bad)
    SE_FAIL(err, SE_ERR_NUMERIC,
            "voltage of cell %lld became non-finite before t = %g ms: reduce dt or check the "
            "biophysics",
            (long long)(e->cell_begin + (int64_t)bad - 1), e->t);
  if (count > (unsigned long long)d->spike_capacity)
    SE_FAIL(err, SE_ERR_NUMERIC, "%llu spikes overflowed the device buffer of %lld", count,
            (long long)d->spike_capacity);
  if (count == 0)
    return SE_OK;
  SE_CUDA_CHECK(err, cudaMemcpy(cd->host_spike_time, d->spike_time, count * sizeof(double),
                                cudaMemcpyDeviceToHost));
  SE_CUDA_CHECK(err, cudaMemcpy(cd->host_spike_cell, d->spike_cell, count * sizeof(int64_t),
                                cudaMemcpyDeviceToHost));
  /* on the compute stream: the next step's atomics come after it */
  SE_CUDA_CHECK(err, cudaMemsetAsync(d->spike_count, 0, sizeof *d->spike_count, cd->compute));
  for (unsigned long long k = 0; k < count; k++)
    SE_TRY(se_neurons_push_spike(e, cd->host_spike_time[k], e->cell_begin + cd->host_spike_cell[k],
                                 err));
  return SE_OK;
}

static int step_cuda(se_neurons_t e, se_error *err) {
  cuda_data *cd = e->backend_data;
  SE_CUDA_CHECK(err, cudaSetDevice(cd->device));
  cudaError_t rc;
  if (cd->kernel == SE_GPU_KERNEL_BRANCH) {
    SE_TRY(se_neurons_branch_step(cd->branch, &cd->dev, e->t, err));
    rc = cudaSuccess;
  } else if (cd->kernel == SE_GPU_KERNEL_FUSED2) {
    rc = se_neurons_cuda_step_stream(&cd->dev, e->t, cd->gates_pending, cd->stream_ahead,
                                     cd->stream_hints, cd->compute);
    cd->gates_pending = 1;
  } else if (cd->kernel == SE_GPU_KERNEL_COOP) { /* defers the gate update as fused2 */
    rc = se_neurons_cuda_step_coop(&cd->dev, &cd->coop, e->t, cd->gates_pending, cd->compute);
    cd->gates_pending = 1;
  } else if (cd->kernel == SE_GPU_KERNEL_GEN) { /* defers the gate update as fused2 */
    rc = se_neurons_gen_launch(&cd->gen, &cd->dev, e->t, cd->gates_pending, cd->compute);
    cd->gates_pending = 1;
  } else if (cd->kernel == SE_GPU_KERNEL_FUSED) {
    rc = se_neurons_cuda_step_fused(&cd->dev, e->t, cd->compute);
  } else {
    rc = se_neurons_cuda_step_phases(&cd->dev, e->t, cd->compute);
  }
  if (rc != cudaSuccess)
    SE_FAIL(err, SE_ERR_CUDA, "time step kernel launch on device %d failed: %s (%s)", cd->device,
            cudaGetErrorName(rc), cudaGetErrorString(rc));
  if (++cd->steps_since_drain >= DRAIN_STEPS)
    SE_TRY(collect_spikes_cuda(e, err));
  return SE_OK;
}

static int record_begin_cuda(se_neurons_t e, se_error *err) {
  cuda_data *cd = e->backend_data;
  se_neurons_device *d = &cd->dev;
  SE_CUDA_CHECK(err, cudaSetDevice(cd->device));
  if (cd->record_capacity != e->n_record || !d->record_slot) {
    cudaFree((void *)d->record_slot);
    cudaFree(d->record_buffer);
    cudaFreeHost(cd->pinned_frame);
    d->record_slot = NULL;
    d->record_buffer = NULL;
    cd->pinned_frame = NULL;
    if (cd->branch) { /* the recorded slots in the branch order */
      int64_t *slot = malloc((size_t)e->n_record * sizeof *slot + 8);
      if (!slot)
        SE_FAIL(err, SE_ERR_NOMEM, "out of memory for %lld recorded slots", (long long)e->n_record);
      for (int64_t k = 0; k < e->n_record; k++)
        slot[k] = se_neurons_branch_slot(cd->branch, e->record_slot[k]);
      int rc = se_neurons_cuda_upload(&d->record_slot, slot, (size_t)e->n_record * sizeof *slot,
                                      err);
      free(slot);
      SE_TRY(rc);
    } else {
      SE_TRY(se_neurons_cuda_upload(&d->record_slot, e->record_slot,
                                    (size_t)e->n_record * sizeof(int64_t), err));
    }
    SE_CUDA_CHECK(err, cudaMalloc((void **)&d->record_buffer, (size_t)e->n_record * sizeof(double) + 8));
    SE_CUDA_CHECK(err, cudaMallocHost((void **)&cd->pinned_frame, (size_t)e->n_record * sizeof(double) + 8));
    d->n_record = e->n_record;
    cd->record_capacity = e->n_record;
  }
  cudaError_t rc = se_neurons_cuda_gather(d, cd->compute);
  if (rc != cudaSuccess)
    SE_FAIL(err, SE_ERR_CUDA, "gather kernel launch failed: %s (%s)", cudaGetErrorName(rc),
            cudaGetErrorString(rc));
  SE_CUDA_CHECK(err, cudaEventRecord(cd->gathered, cd->compute));
  SE_CUDA_CHECK(err, cudaStreamWaitEvent(cd->copy, cd->gathered, 0));
  SE_CUDA_CHECK(err, cudaMemcpyAsync(cd->pinned_frame, d->record_buffer,
                                     (size_t)e->n_record * sizeof(double), cudaMemcpyDeviceToHost,
                                     cd->copy));
  SE_CUDA_CHECK(err, cudaEventRecord(cd->copied, cd->copy));
  return SE_OK;
}

static int record_end_cuda(se_neurons_t e, se_error *err) {
  cuda_data *cd = e->backend_data;
  SE_CUDA_CHECK(err, cudaSetDevice(cd->device));
  SE_CUDA_CHECK(err, cudaEventSynchronize(cd->copied));
  if (e->n_record)
    memcpy(e->record_frame, cd->pinned_frame, (size_t)e->n_record * sizeof(double));
  return SE_OK;
}

/* Copies v, m, h, n of every slot between the host arrays and the device (same layout), up
 * (host to device) or down, after the work queued on the compute stream. */
static int copy_state(se_neurons_t e, cuda_data *cd, int up, se_error *err) {
  SE_CUDA_CHECK(err, cudaStreamSynchronize(cd->compute));
  const size_t bytes = (size_t)e->n_slots * sizeof(double);
  double *device[] = {cd->dev.v, cd->dev.m, cd->dev.h, cd->dev.n};
  double *host[] = {e->v, e->m, e->h, e->n};
  for (int a = 0; a < 4; a++)
    SE_CUDA_CHECK(err, up ? cudaMemcpy(device[a], host[a], bytes, cudaMemcpyHostToDevice)
                          : cudaMemcpy(host[a], device[a], bytes, cudaMemcpyDeviceToHost));
  if (up) /* the uploads' DMA done before the non-blocking compute stream's next kernel */
    SE_CUDA_CHECK(err, cudaDeviceSynchronize());
  return SE_OK;
}

static int sync_state_cuda(se_neurons_t e, se_error *err) {
  cuda_data *cd = e->backend_data;
  se_neurons_device *d = &cd->dev;
  SE_CUDA_CHECK(err, cudaSetDevice(cd->device));
  if (cd->gates_pending) {
    /* the streaming step left the gates one update behind: do that update now (exactly the
     * one the next step would have done first; the next step then skips it) */
    cudaError_t rc = se_neurons_cuda_stream_finish(d, cd->compute);
    if (rc != cudaSuccess)
      SE_FAIL(err, SE_ERR_CUDA, "gate update kernel launch on device %d failed: %s (%s)",
              cd->device, cudaGetErrorName(rc), cudaGetErrorString(rc));
    cd->gates_pending = 0;
  }
  if (cd->branch)
    return se_neurons_branch_download(cd->branch, d, e, err);
  return copy_state(e, cd, 0, err);
}

/* The host arrays become the device state, gates included (so no gate update is pending):
 * after the work queued on the compute stream. */
static int load_state_cuda(se_neurons_t e, se_error *err) {
  cuda_data *cd = e->backend_data;
  se_neurons_device *d = &cd->dev;
  SE_CUDA_CHECK(err, cudaSetDevice(cd->device));
  cd->gates_pending = 0;
  if (cd->branch)
    return se_neurons_branch_upload_state(cd->branch, d, e, err);
  return copy_state(e, cd, 1, err);
}

const se_neurons_backend se_neurons_backend_cuda = {
    .name = "cuda",
    .attach = attach_cuda,
    .detach = detach_cuda,
    .step = step_cuda,
    .record_begin = record_begin_cuda,
    .record_end = record_end_cuda,
    .collect_spikes = collect_spikes_cuda,
    .sync_state = sync_state_cuda,
    .load_state = load_state_cuda,
};
