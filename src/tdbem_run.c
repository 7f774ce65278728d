/* The tdbem marching on in time over MPI ranks (src/tdbem_run.h, docs/input-tdbem.md "Running"). */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "balance.h"
#include "balance_history.h"
#include "h5_util.h"
#include "input_tdbem.h"
#include "simengine/neurons.h"
#include "output_tdbem.h"
#include "partition.h"
#include "se_error.h"
#include "tdbem_ordering.h"
#include "tdbem_run.h"
#include "tdbem_sum_cpu.h"

/* Illumination rows read at once (at most this many bytes on rank 0). */
#define RUN_ILLUMINATION_BYTES ((int64_t)64 << 20)
/* Output rows buffered before a collective write (at most this many bytes per rank). */
#define RUN_OUTPUT_ROWS 64
#define RUN_OUTPUT_BYTES ((int64_t)64 << 20)
/* Seconds between the progress lines of rank 0, and between flushes of the output. */
#define RUN_PROGRESS_SECONDS 5.0
#define RUN_FLUSH_SECONDS 60.0
/* Slices per piece of the threads' ordering-quality score. */
#define RUN_SCORE_SLICES 256

/* The timed phases of a run: T_SUM is the wall time of the groups' summations, T_SUM_CPU the CPU
 * workers' part of it, T_SUM_GPU the slowest GPU worker's device time (the workers overlap),
 * T_BALANCE the balancer's updates and the moves of slices. */
enum { T_READ, T_SETUP, T_SUM, T_RADIATE, T_REDUCE, T_SOLVE, T_OUTPUT, T_SUM_CPU, T_SUM_GPU,
       T_BALANCE, T_COUNT };

/* The GPU worker's operations (cuda/tdbem_cuda.h); NULL in a build without CUDA. */
typedef struct se_tdbem_cuda *gpu_t;
typedef struct gpu_ops {
  int (*create)(int device, se_tdbem_gpu_kernel kernel, int bc, int64_t n, int64_t kmax,
                se_precision precision, int64_t hist_len, gpu_t *g, se_error *err);
  int (*set_interval)(gpu_t g, const se_tdbem_slices *s, const double *hist, se_error *err);
  int (*push)(gpu_t g, const double *a, int64_t m, se_error *err);
  int (*radiate_start)(gpu_t g, int p_max, se_error *err);
  int (*radiate_finish)(gpu_t g, double *out, se_error *err);
  int (*sum_start_known)(gpu_t g, int64_t n, int64_t known, int ng, se_error *err);
  int (*sum_finish)(gpu_t g, double *out, double *device_s, se_error *err);
  void (*destroy)(gpu_t g);
} gpu_ops;

#ifdef SIMENGINE_HAVE_CUDA
#include "tdbem_cuda.h"
static const gpu_ops cuda_ops = {.create = se_tdbem_cuda_create,
                                 .set_interval = se_tdbem_cuda_set_interval,
                                 .push = se_tdbem_cuda_push,
                                 .radiate_start = se_tdbem_cuda_radiate_start,
                                 .radiate_finish = se_tdbem_cuda_radiate_finish,
                                 .sum_start_known = se_tdbem_cuda_sum_start_known,
                                 .sum_finish = se_tdbem_cuda_sum_finish,
                                 .destroy = se_tdbem_cuda_destroy};
static const gpu_ops *const gpu_backend = &cuda_ops;
#else
static const gpu_ops *const gpu_backend = NULL;
#endif

/* The largest number of GPU workers and of CPU workers per rank; the balancer's default number
 * of updates. */
enum { RUN_GPUS_MAX = 16, RUN_CPUS_MAX = 16, RUN_WORKERS_MAX = RUN_GPUS_MAX + RUN_CPUS_MAX,
       RUN_BALANCE_ITERATIONS = 20 };

/* Everything one rank holds during a run. */
typedef struct run {
  MPI_Comm comm;
  int rank, size, ng;
  se_tdbem_run_options opt;
  /* workers: worker w holds the local slices bounds[w] .. bounds[w + 1] - 1; workers 0 ..
   * n_cpu - 1 are CPU workers, n_cpu + k is GPU worker k (bounds[n_workers] = count) */
  int gpus, n_cpu, n_workers, gpus_loaded, push_rc, gpus_started;
  int64_t bounds[RUN_WORKERS_MAX + 1];
  gpu_t gpu[RUN_GPUS_MAX];
  double wtime[RUN_WORKERS_MAX]; /* each worker's time in the last group */
  int balancing;                 /* r->bal is running */
  se_balance bal;
  int64_t moved_slices;          /* slices moved by the balancing so far, and the seconds it */
  double move_seconds;           /* took (the cost per slice of the payback rule) */
  se_balance_history history;
  MPI_Comm m0_comm; /* the ranks solving with M0 (MPI_COMM_NULL on the others) */
  se_ordering kind; /* the unknown ordering of the marching */
  const char *input, *output;
  se_input_tdbem_t in;
  se_tdbem_meta meta;
  int64_t *perm;                /* [N] perm[new] = old (the identity for the original order) */
  int64_t first, count;         /* this rank's slices, in the new numbering */
  se_tdbem_slices slices, near; /* new numbering; near: the row-vectors the radiation reads */
  double quality[2];            /* the ordering-quality score: original, chosen ordering */
  se_tdbem_m0_solver_t solver;
  char ordering[64];
  se_output_tdbem_t out;
  int64_t hist_len;
  double *hist;    /* [count x hist_len]: hist[j hist_len + m mod hist_len] = a_m(first + j) */
  double *partial; /* [2 ng x N]: this rank's part of the summation vectors of the group (rows
                      0 .. ng-1) and of the next one (ng .. 2 ng - 1, being summed) */
  double *send;    /* [N + 1]: one partial vector and this rank's failure flag */
  double *a;       /* [N + 1]: rank 0: l_m - s_m, then a_m (original numbering); broadcast */
  double *a_local; /* [count]: a_m of this rank's unknowns, new numbering (for the radiation) */
  double *illum;   /* rank 0: [illum_rows x N], rows illum_first .. */
  int64_t illum_first, illum_rows;
  double time[T_COUNT];
} run;

/* Seconds since start, added to r->time[phase]; returns now. */
static double lap(run *r, int phase, double start) {
  double now = MPI_Wtime();
  r->time[phase] += now - start;
  return now;
}

/* Allocates the per-step arrays (no communication). */
static int allocate(run *r, se_error *err) {
  const int64_t n = r->meta.n;
  r->hist_len = r->meta.kmax + r->ng;
  SE_CALLOC(err, r->hist, r->count * r->hist_len, "the history of the rank's unknowns");
  SE_CALLOC(err, r->partial, 2 * (int64_t)r->ng * n, "the partial summation vectors");
  SE_CALLOC(err, r->send, n + 1, "a partial summation vector");
  SE_CALLOC(err, r->a, n + 1, "the state vector");
  SE_CALLOC(err, r->a_local, r->count, "the rank's part of the state vector");
  int64_t rows = RUN_ILLUMINATION_BYTES / (8 * n);
  rows = rows < 1 ? 1 : rows;
  r->illum_rows = rows < r->meta.steps ? rows : r->meta.steps;
  r->illum_first = -1;
  if (r->rank == 0)
    SE_CALLOC(err, r->illum, (r->illum_rows > 0 ? r->illum_rows : 1) * n, "the illumination rows");
  SE_TRY(se_tdbem_slices_near(&r->slices, 2 * r->ng - 1, &r->near, err));
  return SE_OK;
}

/* Moves the workers' boundaries to bounds[0 .. n_workers] (local slices, bounds[0] = 0,
 * bounds[n_workers] = count, not decreasing): each GPU worker whose interval changed receives its
 * new slices and their history (between steps: the history is complete up to the last step; the
 * worker rebuilds its whole image). The dynamic balancing calls it between groups. Not
 * collective. */
static int set_worker_bounds(run *r, const int64_t *bounds, se_error *err) {
  if (bounds[0] != 0 || bounds[r->n_workers] != r->count)
    SE_FAIL(err, SE_ERR_ARG, "worker bounds must cover the rank's %lld slices", (long long)r->count);
  for (int w = 0; w < r->n_workers; w++)
    if (bounds[w + 1] < bounds[w])
      SE_FAIL(err, SE_ERR_ARG, "worker bounds decrease at worker %d", w);
  for (int k = 0; k < r->gpus; k++) {
    const int w = r->n_cpu + k;
    const int64_t j0 = bounds[w], c = bounds[w + 1] - j0;
    if (r->gpus_loaded && j0 == r->bounds[w] && c == r->bounds[w + 1] - r->bounds[w])
      continue;
    const se_tdbem_slices v = se_tdbem_slices_view(&r->slices, j0, c);
    SE_TRY(gpu_backend->set_interval(r->gpu[k], &v, r->hist + j0 * r->hist_len, err));
  }
  memcpy(r->bounds, bounds, (size_t)(r->n_workers + 1) * sizeof *bounds);
  r->gpus_loaded = 1;
  return SE_OK;
}

/* The most slices each worker may hold (-1: no cap): a GPU worker what fits in 80% of its
 * device's free memory shared by the node's GPU workers on it, at the rank's mean bytes per
 * slice (values with 20% for the blocks, the history, the near field). */
static int worker_caps(run *r, int node_rank, int node_size, int64_t *caps, se_error *err) {
  const int64_t *sp = r->slices.slice_ptr, *vp = r->slices.val_ptr;
  const double size = r->meta.precision == SE_PRECISION_SINGLE ? 4.0 : 8.0;
  const double values = r->count > 0 ? (double)(vp[sp[r->count]] - vp[sp[0]]) : 0.0;
  const double per_slice =
      r->count > 0 ? (1.2 * values * size + 8.0 * (double)(r->count * r->hist_len) +
                      8.0 * (double)r->near.n_values) / (double)r->count + 1.0
                   : 1.0;
  const int visible = se_gpu_count() > 0 ? se_gpu_count() : 1;
  const int sharers = (node_size * r->gpus + visible - 1) / visible;
  for (int w = 0; w < r->n_workers; w++)
    caps[w] = -1;
  for (int k = 0; k < r->gpus; k++) {
    size_t free_bytes = 0, total = 0;
    int device = 0;
    SE_TRY(se_gpu_device_for_rank(node_rank, r->gpus, k, &device, err));
    SE_TRY(se_gpu_memory(device, &free_bytes, &total, err));
    const double fit = 0.8 * (double)free_bytes / (double)(sharers > 0 ? sharers : 1) / per_slice;
    caps[r->n_cpu + k] = fit < 1.0 ? 1 : (fit > (double)r->count ? r->count : (int64_t)fit);
  }
  return SE_OK;
}

/* The workers' slice bounds [bounds[w], bounds[w + 1]) as the balancer holds them. */
static void bounds_from_balance(const run *r, int64_t *bounds) {
  bounds[0] = 0;
  for (int w = 0; w < r->n_workers; w++) {
    int64_t first, last;
    se_balance_interval(&r->bal, w, &first, &last);
    bounds[w + 1] = last + 1;
  }
}

/* The ranks of M0's communicator: the first opt.m0_ranks, all when 0 or out of range. */
static int m0_ranks(const run *r) {
  return r->opt.m0_ranks >= 1 && r->opt.m0_ranks < r->size ? r->opt.m0_ranks : r->size;
}

/* Creates the GPU workers on the rank's devices and splits the slices: statically, the GPU
 * workers get gpu_fraction of the rank's stored values and the CPU workers the rest (equal
 * shares, contiguous, CPU workers first); with balancing, the balancer starts from that split
 * when every worker has a slice within its cap, else from its own. Not collective. */
static int workers_create(run *r, se_error *err) {
  MPI_Comm node;
  int node_rank = 0, node_size = 1;
  SE_MPI_CHECK(err, MPI_Comm_split_type(r->comm, MPI_COMM_TYPE_SHARED, r->rank, MPI_INFO_NULL, &node));
  int mpi_rc = MPI_Comm_rank(node, &node_rank);
  if (mpi_rc == MPI_SUCCESS)
    mpi_rc = MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  if (mpi_rc != MPI_SUCCESS)
    SE_FAIL(err, SE_ERR_MPI, "MPI_Comm_rank of the node communicator failed");
  char *names = r->history.names; /* "cpu" or "cpu0,cpu1,..", then "cuda:D" per GPU worker */
  const size_t room = sizeof r->history.names;
  for (int w = 0; w < r->n_cpu; w++)
    snprintf(names + strlen(names), room - strlen(names), r->n_cpu > 1 ? "%scpu%d" : "%scpu",
             w ? "," : "", w);
  for (int k = 0; k < r->gpus; k++) {
    int device = 0;
    SE_TRY(se_gpu_device_for_rank(node_rank, r->gpus, k, &device, err));
    snprintf(names + strlen(names), room - strlen(names), ",cuda:%d", device);
    SE_TRY(gpu_backend->create(device, r->opt.kernel, r->opt.bc, r->meta.n, r->meta.kmax,
                               r->meta.precision, r->hist_len, &r->gpu[k], err));
  }
  /* the static split: cumulative targets in stored values */
  const int64_t *sp = r->slices.slice_ptr, *vp = r->slices.val_ptr;
  const double total = r->count > 0 ? (double)(vp[sp[r->count]] - vp[sp[0]]) : 0.0;
  const double f = r->gpus > 0 ? r->opt.gpu_fraction : 0.0;
  int64_t bounds[RUN_WORKERS_MAX + 1], j = 0;
  bounds[0] = 0;
  for (int w = 0; w < r->n_workers; w++) {
    const double share = w < r->n_cpu ? (1.0 - f) * (double)(w + 1) / (double)r->n_cpu
                                      : (1.0 - f) + f * (double)(w + 1 - r->n_cpu) / (double)r->gpus;
    while (j < r->count && (double)(vp[sp[j]] - vp[sp[0]]) < total * share - 0.5)
      j++;
    bounds[w + 1] = w == r->n_workers - 1 ? r->count : j;
  }
  if (r->opt.balance > 0) {
    int64_t caps[RUN_WORKERS_MAX];
    SE_TRY(worker_caps(r, node_rank, node_size, caps, err));
    if (se_balance_init(&r->bal, r->n_workers, r->count, caps,
                        (se_balance_method)(r->opt.balance - 1),
                        r->opt.balance_iterations > 0 ? r->opt.balance_iterations
                                                      : RUN_BALANCE_ITERATIONS,
                        err) != SE_OK)
      return se_error_prepend(err, "balancing the rank's %lld slices over its %d workers: ",
                              (long long)r->count, r->n_workers);
    r->balancing = 1;
    /* start from the static split when it fits the caps, else from the balancer's own */
    int64_t counts[RUN_WORKERS_MAX];
    int fits = 1;
    for (int w = 0; w < r->n_workers; w++) {
      counts[w] = bounds[w + 1] - bounds[w];
      fits &= counts[w] > 0 && (caps[w] < 0 || counts[w] <= caps[w]);
    }
    if (fits)
      SE_TRY(se_balance_set_counts(&r->bal, counts, err));
    bounds_from_balance(r, bounds);
  }
  return set_worker_bounds(r, bounds, err);
}

/* The name of an ordering, as --ordering spells it. */
static const char *ordering_name(se_ordering kind) {
  return kind == SE_ORDER_MORTON ? "morton" : kind == SE_ORDER_HILBERT ? "hilbert" : "original";
}

/* r->perm (perm[new] = old) for r->kind: the identity for the original order, otherwise the
 * space-filling curve over /tdbem/positions (read on rank 0 and broadcast by the reader; every
 * rank sorts the same keys and gets the same permutation). Collective. */
static int make_ordering(run *r, se_error *err) {
  const int64_t n = r->meta.n;
  int rc = SE_OK;
  if (r->kind != SE_ORDER_ORIGINAL && !r->meta.has_positions)
    rc = se_error_set(err, SE_ERR_INPUT, __FILE__, __LINE__, __func__,
                      "%s: the %s ordering needs the dataset /tdbem/positions [N x 3], which the "
                      "file does not have (use the original ordering)",
                      r->input, ordering_name(r->kind));
  double *positions = NULL;
  if (rc == SE_OK) {
    r->perm = calloc(n > 0 ? (size_t)n : 1, sizeof *r->perm);
    if (r->kind != SE_ORDER_ORIGINAL)
      positions = calloc(3 * (size_t)n, sizeof *positions);
    if (!r->perm || (r->kind != SE_ORDER_ORIGINAL && !positions))
      rc = se_error_set(err, SE_ERR_NOMEM, __FILE__, __LINE__, __func__,
                        "out of memory for the ordering of %lld unknowns", (long long)n);
  }
  rc = se_mpi_agree(r->comm, rc, err);
  if (rc == SE_OK && r->kind != SE_ORDER_ORIGINAL)
    rc = se_input_tdbem_read_positions(r->in, positions, err);
  if (rc == SE_OK)
    rc = se_mpi_agree(r->comm, se_tdbem_ordering(positions, n, r->kind, r->perm, err), err);
  free(positions);
  return rc;
}

/* Partitions the new numbering: contiguous intervals of new slices with about equal stored
 * values (new slice u is old slice perm[u]). Collective (agrees on an allocation failure). */
static int partition(run *r, se_error *err) {
  const int64_t n = r->meta.n;
  int64_t *values = calloc(2 * (size_t)n + 1, sizeof *values),
          *bounds = calloc((size_t)r->size + 1, sizeof *bounds);
  int rc = values && bounds ? SE_OK
                            : se_error_set(err, SE_ERR_NOMEM, __FILE__, __LINE__, __func__,
                                           "out of memory partitioning %lld slices", (long long)n);
  rc = se_mpi_agree(r->comm, rc, err);
  if (rc == SE_OK) {
    se_input_tdbem_slice_values(r->in, values);
    for (int64_t u = 0; u < n; u++)
      values[n + u] = values[r->perm[u]];
    se_partition_contiguous(values + n, n, r->size, bounds);
    r->first = bounds[r->rank];
    r->count = bounds[r->rank + 1] - bounds[r->rank];
  }
  free(bounds);
  free(values);
  return rc;
}

static int compare_int64(const void *a, const void *b) {
  const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

/* Merges parts[0 .. n_parts) (intervals of old slices, ascending and disjoint) into one interval
 * *held from the first part's first slice to the last part's end, the slices between the parts
 * empty. On failure nothing is left allocated. Not collective. */
static int merge_parts(const se_tdbem_slices *parts, int64_t n_parts, const se_tdbem_meta *meta,
                       se_tdbem_slices *held, se_error *err) {
  *held = (se_tdbem_slices){.precision = meta->precision, .n = meta->n, .kmax = meta->kmax};
  if (n_parts > 0) {
    held->first = parts[0].first;
    held->count = parts[n_parts - 1].first + parts[n_parts - 1].count - held->first;
  }
  for (int64_t p = 0; p < n_parts; p++) {
    held->n_rowvectors += parts[p].n_rowvectors;
    held->n_values += parts[p].n_values;
  }
  const size_t size = meta->precision == SE_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
  held->slice_ptr = calloc((size_t)held->count + 1, sizeof *held->slice_ptr);
  held->row = calloc((size_t)held->n_rowvectors + 1, sizeof *held->row);
  held->kstart = calloc((size_t)held->n_rowvectors + 1, sizeof *held->kstart);
  held->val_ptr = calloc((size_t)held->n_rowvectors + 1, sizeof *held->val_ptr);
  held->val = calloc((size_t)held->n_values + 1, size);
  if (!held->slice_ptr || !held->row || !held->kstart || !held->val_ptr || !held->val) {
    const long long rows = (long long)held->n_rowvectors, values = (long long)held->n_values;
    se_tdbem_slices_free(held);
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory merging %lld row-vectors (%lld values) of slices",
            rows, values);
  }
  int64_t j = 0, rv = 0, v = 0;
  for (int64_t p = 0; p < n_parts; p++) {
    const se_tdbem_slices *s = &parts[p];
    for (; held->first + j < s->first; j++) /* old slices no one here needs: empty */
      held->slice_ptr[j + 1] = held->slice_ptr[j];
    for (int64_t k = 0; k < s->count; k++, j++)
      held->slice_ptr[j + 1] = rv + s->slice_ptr[k + 1];
    memcpy(held->row + rv, s->row, (size_t)s->n_rowvectors * sizeof *s->row);
    memcpy(held->kstart + rv, s->kstart, (size_t)s->n_rowvectors * sizeof *s->kstart);
    for (int64_t k = 0; k < s->n_rowvectors; k++)
      held->val_ptr[rv + k + 1] = v + s->val_ptr[k + 1];
    memcpy((char *)held->val + (size_t)v * size, s->val, (size_t)s->n_values * size);
    rv += s->n_rowvectors;
    v += s->n_values;
  }
  return SE_OK;
}

/* Reads the old slices perm[first .. first + count) that this rank's new interval is made of:
 * sorted and cut into runs of consecutive old slices, one collective read (hyperslabs) per run,
 * every rank calling as often as the rank with the most runs (reading nothing once its runs are
 * done), then merged into one interval *held of old slices (those not needed are empty).
 * Collective. */
static int read_old_slices(run *r, se_tdbem_slices *held, se_error *err) {
  *held = (se_tdbem_slices){0};
  int64_t *old = calloc((size_t)r->count + 1, sizeof *old), runs = 0, most = 0;
  int rc = old ? SE_OK
               : se_error_set(err, SE_ERR_NOMEM, __FILE__, __LINE__, __func__,
                              "out of memory for the %lld slice indices of the rank",
                              (long long)r->count);
  if (rc == SE_OK) {
    memcpy(old, r->perm + r->first, (size_t)r->count * sizeof *old);
    qsort(old, (size_t)r->count, sizeof *old, compare_int64);
    for (int64_t u = 0; u < r->count; u++)
      runs += u == 0 || old[u] != old[u - 1] + 1;
  }
  rc = se_mpi_agree(r->comm, rc, err);
  if (rc == SE_OK && MPI_Allreduce(&runs, &most, 1, MPI_INT64_T, MPI_MAX, r->comm) != MPI_SUCCESS)
    rc = se_error_set(err, SE_ERR_MPI, __FILE__, __LINE__, __func__,
                      "MPI_Allreduce of the number of slice runs failed");
  se_tdbem_slices *parts = NULL;
  if (rc == SE_OK) {
    parts = calloc((size_t)most + 1, sizeof *parts);
    rc = se_mpi_agree(r->comm,
                      parts ? SE_OK
                            : se_error_set(err, SE_ERR_NOMEM, __FILE__, __LINE__, __func__,
                                           "out of memory for %lld slice runs", (long long)most),
                      err);
  }
  int64_t u = 0, read = 0;
  for (int64_t k = 0; rc == SE_OK && k < most; k++) {
    int64_t first = 0, count = 0;
    if (u < r->count) { /* the next run: old[u], old[u] + 1, ... */
      first = old[u];
      for (count = 1; u + count < r->count && old[u + count] == first + count; count++)
        ;
      u += count;
    }
    rc = se_input_tdbem_read_slices(r->in, first, count, &parts[k], err);
    read = rc == SE_OK ? k + 1 : k;
  }
  if (rc == SE_OK)
    rc = se_mpi_agree(r->comm, merge_parts(parts, runs, &r->meta, held, err), err);
  for (int64_t k = 0; k < read; k++)
    se_tdbem_slices_free(&parts[k]);
  free(parts);
  free(old);
  return rc;
}

/* se_tdbem_ordering_quality of s in pieces of RUN_SCORE_SLICES slices, scored by the OpenMP
 * threads and added in piece order (the same result for any number of threads). Not collective. */
static int quality(const se_tdbem_slices *s, double *sum, int64_t *scored, se_error *err) {
  const int64_t pieces = (s->count + RUN_SCORE_SLICES - 1) / RUN_SCORE_SLICES;
  double *sums;
  int64_t *counts;
  SE_CALLOC(err, sums, pieces + 1, "the ordering-quality sums");
  counts = calloc((size_t)pieces + 1, sizeof *counts);
  if (!counts) {
    free(sums);
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory for the ordering-quality counts");
  }
  int rc = SE_OK;
#pragma omp parallel for schedule(dynamic, 16)
  for (int64_t p = 0; p < pieces; p++) {
    const int64_t j0 = p * RUN_SCORE_SLICES;
    const int64_t count = s->count - j0 < RUN_SCORE_SLICES ? s->count - j0 : RUN_SCORE_SLICES;
    const se_tdbem_slices v = se_tdbem_slices_view(s, j0, count);
    se_error local;
    if (se_tdbem_ordering_quality(&v, &sums[p], &counts[p], &local) != SE_OK)
#pragma omp critical(se_tdbem_run_quality)
      if (rc == SE_OK) {
        *err = local;
        rc = local.code;
      }
  }
  for (int64_t p = 0; p < pieces && rc == SE_OK; p++) {
    *sum += sums[p];
    *scored += counts[p];
  }
  free(counts);
  free(sums);
  return rc;
}

/* The ordering-quality score of the original and of the chosen numbering over all the slices:
 * each rank scores its old slices (held) and its new ones (once when held is r->slices: the
 * original numbering), the sums and counts are added over the ranks. Collective. */
static int score(run *r, const se_tdbem_slices *held, se_error *err) {
  double sums[2] = {0.0, 0.0}, all[4];
  int64_t scored[2] = {0, 0};
  int rc = quality(held, &sums[0], &scored[0], err);
  if (rc == SE_OK && held == &r->slices) {
    sums[1] = sums[0];
    scored[1] = scored[0];
  } else if (rc == SE_OK) {
    rc = quality(&r->slices, &sums[1], &scored[1], err);
  }
  SE_TRY(se_mpi_agree(r->comm, rc, err));
  const double local[4] = {sums[0], (double)scored[0], sums[1], (double)scored[1]};
  SE_MPI_CHECK(err, MPI_Allreduce(local, all, 4, MPI_DOUBLE, MPI_SUM, r->comm));
  for (int k = 0; k < 2; k++)
    r->quality[k] = all[2 * k + 1] > 0.0 ? all[2 * k] / all[2 * k + 1] : 0.0;
  return SE_OK;
}

/* This rank's new slices [first, first + count): read directly for the original order, otherwise
 * the old slices they are made of, renumbered (se_tdbem_slices_permute); then the quality scores.
 * Collective. */
static int read_slices(run *r, se_error *err) {
  if (r->kind == SE_ORDER_ORIGINAL) {
    SE_TRY(se_input_tdbem_read_slices(r->in, r->first, r->count, &r->slices, err));
    return score(r, &r->slices, err);
  }
  se_tdbem_slices held;
  SE_TRY(read_old_slices(r, &held, err));
  int rc = se_mpi_agree(
      r->comm, se_tdbem_slices_permute(&held, r->perm, r->first, r->count, &r->slices, err), err);
  if (rc == SE_OK)
    rc = score(r, &held, err);
  se_tdbem_slices_free(&held);
  return rc;
}

/* Reads the input (the ordering, this rank's slices, M0 on rank 0), factorises M0 and opens the
 * output. Collective. */
static int set_up(run *r, se_error *err) {
  double start = MPI_Wtime();
  SE_TRY(se_input_tdbem_open(r->input, r->comm, &r->in, &r->meta, err));
  const int64_t n = r->meta.n;
  SE_TRY(make_ordering(r, err));
  SE_TRY(partition(r, err));
  SE_TRY(read_slices(r, err));
  start = lap(r, T_READ, start);
  se_tdbem_m0 m0;
  SE_TRY(se_input_tdbem_read_m0(r->in, &m0, err));
  int rc = MPI_Comm_split(r->comm, r->rank < m0_ranks(r) ? 0 : MPI_UNDEFINED, r->rank, &r->m0_comm) ==
                   MPI_SUCCESS
               ? SE_OK
               : se_error_set(err, SE_ERR_MPI, __FILE__, __LINE__, __func__,
                              "MPI_Comm_split of the M0 ranks failed");
  if (rc == SE_OK && r->m0_comm != MPI_COMM_NULL)
    rc = se_tdbem_m0_create(r->m0_comm, r->rank == 0 ? &m0 : NULL, &r->solver, r->ordering,
                            sizeof r->ordering, err);
  se_tdbem_m0_free(&m0);
  SE_TRY(se_mpi_agree(r->comm, rc, err));
  SE_MPI_CHECK(err, MPI_Bcast(r->ordering, (int)sizeof r->ordering, MPI_CHAR, 0, r->comm));
  SE_TRY(se_mpi_agree(r->comm, allocate(r, err), err));
  SE_TRY(se_mpi_agree(r->comm, workers_create(r, err), err));
  int64_t rows = RUN_OUTPUT_BYTES / (8 * (r->count > 0 ? r->count : 1));
  se_output_tdbem_spec spec = {.n = n,
                               .steps = r->meta.steps,
                               .precision = r->meta.precision,
                               .local_count = r->count,
                               .buffer_steps =
                                   rows < RUN_OUTPUT_ROWS ? (rows > 0 ? rows : 1) : RUN_OUTPUT_ROWS,
                               .flush_seconds = RUN_FLUSH_SECONDS};
  SE_TRY(se_output_tdbem_open(r->output, r->comm, &spec, &r->out, err));
  lap(r, T_SETUP, start);
  return SE_OK;
}

/* Rank 0: b = l_m - (the reduced s_m) into r->a; reads the next illumination rows first when m
 * is not among those held (every rank calls: the read is collective). */
static int illumination(run *r, int64_t m, se_error *err) {
  if (r->illum_first < 0 || m >= r->illum_first + r->illum_rows) {
    int64_t rows = r->meta.steps - m < r->illum_rows ? r->meta.steps - m : r->illum_rows;
    SE_TRY(se_input_tdbem_read_illumination(r->in, m, rows, r->illum, err));
    r->illum_first = m;
  }
  return SE_OK;
}

/* Step m = n + q of the group starting at n: reduce s_m, solve, broadcast a_m, update the history,
 * radiate, write. local_rc carries a local failure of the group's summation or radiation into
 * the reduction, so that every rank learns of it at the same point. Collective. */
static int step(run *r, int64_t n, int q, int local_rc, se_error *err) {
  const int64_t N = r->meta.n, m = n + q;
  SE_TRY(illumination(r, m, err));
  double start = MPI_Wtime();
  memcpy(r->send, r->partial + q * N, (size_t)N * sizeof *r->send);
  r->send[N] = local_rc != SE_OK;
  SE_MPI_CHECK(err, MPI_Reduce(r->rank == 0 ? MPI_IN_PLACE : r->send, r->rank == 0 ? r->send : NULL,
                               (int)(N + 1), MPI_DOUBLE, MPI_SUM, 0, r->comm));
  if (r->rank == 0) { /* s_m is in the new numbering, l_m and M0 in the original one */
    const double *l = r->illum + (m - r->illum_first) * N;
    for (int64_t u = 0; u < N; u++)
      r->a[r->perm[u]] = l[r->perm[u]] - r->send[u];
  }
  start = lap(r, T_REDUCE, start);
  const int solve_rc = r->solver ? se_tdbem_m0_solve(r->solver, r->a, err) : SE_OK;
  start = lap(r, T_SOLVE, start);
  int64_t bad = -1;
  if (r->rank == 0) {
    for (int64_t i = 0; i < N && bad < 0 && solve_rc == SE_OK; i++)
      if (!isfinite(r->a[i]))
        bad = i;
    r->a[N] = r->send[N] > 0 ? 1 : solve_rc != SE_OK ? 3 : (bad >= 0 ? 2 : 0);
  }
  SE_MPI_CHECK(err, MPI_Bcast(r->a, (int)(N + 1), MPI_DOUBLE, 0, r->comm));
  lap(r, T_REDUCE, start);
  if (r->a[N] != 0) { /* every rank is here: agree on the failing rank's message */
    int rc = local_rc != SE_OK ? local_rc : solve_rc;
    if (r->rank == 0 && bad >= 0 && rc == SE_OK)
      rc = se_error_set(err, SE_ERR_NUMERIC, __FILE__, __LINE__, __func__,
                        "%s: a_%lld(%lld) = %g is not finite: the marching diverged", r->input,
                        (long long)m, (long long)bad, r->a[bad]);
    return se_mpi_agree(r->comm, rc, err);
  }
  for (int64_t j = 0; j < r->count; j++) { /* a_m of the rank's unknowns, new numbering */
    r->a_local[j] = r->a[r->perm[r->first + j]];
    r->hist[j * r->hist_len + m % r->hist_len] = r->a_local[j];
  }
  /* the GPU workers' histories; a failure travels with the next reduction (r->push_rc) */
  for (int k = 0; k < r->gpus && r->push_rc == SE_OK; k++)
    r->push_rc = gpu_backend->push(r->gpu[k], r->a_local + r->bounds[r->n_cpu + k], m, err);
  start = MPI_Wtime(); /* the output's columns: the same interval in the original numbering */
  SE_TRY(se_output_tdbem_append(r->out, r->a + r->first, err));
  lap(r, T_OUTPUT, start);
  return SE_OK;
}

/* Starts the rank's part of the ng summation vectors at time n counting a_m for m < known (the
 * next group's product while the current group is solved) into r->partial rows ng .. 2 ng - 1:
 * the GPU workers' products are started, then the CPU workers sum their slices (one after the
 * other; r->wtime receives their wall times). Not collective. */
static int sum_begin(run *r, int64_t n, int64_t known, se_error *err) {
  double *out = r->partial + (int64_t)r->ng * r->meta.n;
  int rc = SE_OK;
  for (r->gpus_started = 0; r->gpus_started < r->gpus && rc == SE_OK; r->gpus_started++)
    rc = gpu_backend->sum_start_known(r->gpu[r->gpus_started], n, known, r->ng, err);
  for (int w = 0; w < r->n_cpu; w++) {
    const double start = MPI_Wtime();
    if (rc == SE_OK && r->bounds[w + 1] > r->bounds[w]) {
      const se_tdbem_slices v =
          se_tdbem_slices_view(&r->slices, r->bounds[w], r->bounds[w + 1] - r->bounds[w]);
      rc = se_tdbem_sum_cpu_known(&v, r->hist + r->bounds[w] * r->hist_len, r->hist_len, n, known,
                                  r->ng, out, err);
    }
    r->wtime[w] = lap(r, T_SUM_CPU, start) - start;
  }
  return rc;
}

/* Waits for the GPU workers' products started by sum_begin and adds them to r->partial rows
 * ng .. 2 ng - 1 (r->wtime: their device times). Every started worker is waited for, also after
 * a failure (rc: the failure so far, kept). Not collective. */
static int sum_end(run *r, int rc, se_error *err) {
  double slowest = 0.0;
  for (int k = 0; k < r->gpus_started; k++) {
    double device_s = 0.0;
    se_error scratch;
    const int wrc = gpu_backend->sum_finish(r->gpu[k], r->partial + (int64_t)r->ng * r->meta.n,
                                            &device_s, rc == SE_OK ? err : &scratch);
    rc = rc == SE_OK ? wrc : rc;
    r->wtime[r->n_cpu + k] = device_s;
    slowest = device_s > slowest ? device_s : slowest;
  }
  r->gpus_started = 0;
  r->time[T_SUM_GPU] += slowest;
  return rc;
}

/* The radiation of a_m (the group's step q) into the vectors q + 1 .. 2 ng - 1 still open (this
 * group's and the next one's, whose product counts a_m only before this group): each GPU worker
 * radiates its slices on the device (started first), the CPU workers' slices on the host
 * meanwhile. Not collective. */
static int radiate(run *r, int q, se_error *err) {
  const int64_t N = r->meta.n;
  const int p_max = 2 * r->ng - 1 - q;
  double *out = r->partial + (q + 1) * N;
  int rc = SE_OK, started = 0;
  for (; started < r->gpus && rc == SE_OK; started++)
    rc = gpu_backend->radiate_start(r->gpu[started], p_max, err);
  if (rc == SE_OK && r->bounds[r->n_cpu] > 0) {
    const se_tdbem_slices v = se_tdbem_slices_view(&r->near, 0, r->bounds[r->n_cpu]);
    rc = se_tdbem_radiate_cpu(&v, r->a_local, p_max, out, err);
  }
  for (int k = 0; k < started; k++) {
    se_error scratch;
    const int wrc = gpu_backend->radiate_finish(r->gpu[k], out, rc == SE_OK ? err : &scratch);
    rc = rc == SE_OK ? wrc : rc;
  }
  return rc;
}

/* After each group: appends the workers' intervals and times to the history; with balancing,
 * updates the balancer (se_balance_update_paying: a move must pay back over the groups_left
 * groups still to run at the measured cost per moved slice) and moves the slices (rank 0 prints
 * the iteration until the balancer has kept its best split). Not collective. */
static int balance_group(run *r, int64_t groups_left, se_error *err) {
  const double start = MPI_Wtime();
  int64_t first[RUN_WORKERS_MAX], last[RUN_WORKERS_MAX], bounds[RUN_WORKERS_MAX + 1];
  for (int w = 0; w < r->n_workers; w++) {
    first[w] = r->bounds[w];
    last[w] = r->bounds[w + 1] - 1;
  }
  SE_TRY(se_balance_history_append(&r->history, first, last, r->wtime, err));
  if (!r->balancing)
    return SE_OK;
  const int was_frozen = r->bal.frozen;
  const double cost = r->moved_slices > 0 ? r->move_seconds / (double)r->moved_slices : -1.0;
  int64_t moved;
  int kept;
  SE_TRY(se_balance_update_paying(&r->bal, r->wtime, cost, groups_left, &moved, &kept, err));
  bounds_from_balance(r, bounds);
  const double move_start = MPI_Wtime();
  SE_TRY(set_worker_bounds(r, bounds, err));
  if (moved > 0) {
    r->moved_slices += moved;
    r->move_seconds += MPI_Wtime() - move_start;
  }
  lap(r, T_BALANCE, start);
  if (r->rank == 0 && !was_frozen) {
    printf("simengine: tdbem balance iteration %lld: times", (long long)r->history.n_iterations);
    for (int w = 0; w < r->n_workers; w++)
      printf(" %.4f", r->wtime[w]);
    printf(" s (%s); next slices", r->history.names);
    for (int w = 0; w < r->n_workers; w++)
      printf(" %lld", (long long)(bounds[w + 1] - bounds[w]));
    printf("%s%s\n", r->bal.frozen ? " (kept the best split)" : "",
           kept ? " (kept: a move would not pay back)" : "");
    fflush(stdout);
  }
  return SE_OK;
}

/* Marches every step: groups of ng steps, one multi-vector/vector product per group, pipelined:
 * the product of group n + ng (counting a_m, m < n) runs on the GPU workers while group n is
 * solved; each new a_m is radiated into the 2 ng - 1 vectors after it, which completes them
 * (docs/tdbem.md Section 14). */
static int march(run *r, se_error *err) {
  const int64_t N = r->meta.n, steps = r->meta.steps, rows = (int64_t)r->ng * N;
  double run_start = MPI_Wtime(), last_progress = run_start;
  for (int64_t n = 0; n < steps; n += r->ng) {
    const int more = n + r->ng < steps;
    double start = MPI_Wtime();
    int local_rc = more ? sum_begin(r, n + r->ng, n, err) : SE_OK;
    lap(r, T_SUM, start);
    for (int q = 0; q < r->ng && n + q < steps; q++) {
      int rc = step(r, n, q, local_rc, err);
      if (rc != SE_OK) {
        se_error scratch;
        sum_end(r, rc, &scratch);
        return rc;
      }
      local_rc = local_rc == SE_OK ? r->push_rc : local_rc;
      if (r->count > 0 && local_rc == SE_OK) { /* a_{n+q} into s~_{n+q+1 .. n+2ng-1} */
        start = MPI_Wtime();
        local_rc = radiate(r, q, err);
        lap(r, T_RADIATE, start);
      }
    }
    start = MPI_Wtime();
    local_rc = sum_end(r, local_rc, err);
    lap(r, T_SUM, start);
    memcpy(r->partial, r->partial + rows, (size_t)rows * sizeof *r->partial);
    memset(r->partial + rows, 0, (size_t)rows * sizeof *r->partial);
    if (local_rc == SE_OK && more)
      local_rc = balance_group(r, (steps - n - 1) / r->ng, err);
    SE_TRY(se_mpi_agree(r->comm, local_rc, err)); /* a failure in the last radiation or move */
    double now = MPI_Wtime();
    int64_t done = n + r->ng < steps ? n + r->ng : steps;
    if (r->rank == 0 && (now - last_progress >= RUN_PROGRESS_SECONDS || done == steps)) {
      double rate = (double)done / (now - run_start);
      printf("simengine: tdbem step %lld/%lld (%.0f%%), %.1f steps/s, ETA %.0f s\n",
             (long long)done, (long long)steps, 100.0 * (double)done / (double)steps, rate,
             (double)(steps - done) / rate);
      fflush(stdout);
      last_progress = now;
    }
  }
  return SE_OK;
}

/* The name of a balancing method as --balance spells it. */
static const char *balance_name(int balance) {
  return balance > 0 ? se_balance_method_name((se_balance_method)(balance - 1)) : "off";
}

/* Writes the /simengine attributes (timings: the largest over the ranks) and the balancing
 * history. Collective. */
static int write_meta(run *r, se_error *err) {
  double most[T_COUNT];
  SE_MPI_CHECK(err, MPI_Allreduce(r->time, most, T_COUNT, MPI_DOUBLE, MPI_MAX, r->comm));
  static const char *const names[T_COUNT] = {
      "time_read_s",   "time_setup_s", "time_sum_s",     "time_radiate_s",  "time_reduce_s",
      "time_solve_s",  "time_output_s", "time_sum_cpu_s", "time_sum_gpu_s", "time_balance_s"};
  if (r->rank == 0) {
    printf(
        "simengine: tdbem times (s, slowest rank): read %.2f, setup %.2f, sum %.2f (CPU worker "
        "%.2f, GPU workers %.2f), radiate %.2f, reduce %.2f, solve %.2f, output %.2f, balance "
        "%.2f\n",
        most[T_READ], most[T_SETUP], most[T_SUM], most[T_SUM_CPU], most[T_SUM_GPU],
        most[T_RADIATE], most[T_REDUCE], most[T_SOLVE], most[T_OUTPUT], most[T_BALANCE]);
    fflush(stdout);
  }
  SE_TRY(se_output_tdbem_meta_string(r->out, "version", SIMENGINE_VERSION, err));
  SE_TRY(se_output_tdbem_meta_string(r->out, "workload", "tdbem", err));
  SE_TRY(se_output_tdbem_meta_string(r->out, "input", r->input, err));
  SE_TRY(se_output_tdbem_meta_string(r->out, "m0_ordering", r->ordering, err));
  SE_TRY(se_output_tdbem_meta_string(r->out, "unknown_ordering", ordering_name(r->kind), err));
  SE_TRY(se_output_tdbem_meta_double(r->out, "ordering_quality_original", r->quality[0], err));
  SE_TRY(se_output_tdbem_meta_double(r->out, "ordering_quality", r->quality[1], err));
  SE_TRY(se_output_tdbem_meta_int(r->out, "ranks", r->size, err));
  SE_TRY(se_output_tdbem_meta_int(r->out, "threads_per_rank", omp_get_max_threads(), err));
  SE_TRY(se_output_tdbem_meta_int(r->out, "ng", r->ng, err));
  SE_TRY(se_output_tdbem_meta_int(r->out, "gpus_per_rank", r->gpus, err));
  SE_TRY(se_output_tdbem_meta_int(r->out, "cpu_workers_per_rank", r->n_cpu, err));
  SE_TRY(se_output_tdbem_meta_string(r->out, "balance", balance_name(r->opt.balance), err));
  SE_TRY(se_output_tdbem_meta_int(r->out, "m0_ranks", m0_ranks(r), err));
  SE_TRY(se_output_tdbem_balance_history(r->out, &r->history, balance_name(r->opt.balance), r->ng,
                                         err));
  SE_TRY(se_output_tdbem_meta_double(r->out, "gpu_fraction", r->gpus > 0 ? r->opt.gpu_fraction : 0.0,
                                     err));
  SE_TRY(se_output_tdbem_meta_string(r->out, "gpu_kernel",
                                     r->gpus == 0 ? "none"
                                     : r->opt.kernel == SE_TDBEM_GPU_FB ? "full-blocking"
                                                                        : "contiguous-blocking",
                                     err));
  SE_TRY(se_output_tdbem_meta_int(r->out, "steps", r->meta.steps, err));
  SE_TRY(se_output_tdbem_meta_int(r->out, "N", r->meta.n, err));
  SE_TRY(se_output_tdbem_meta_int(r->out, "kmax", r->meta.kmax, err));
  SE_TRY(se_output_tdbem_meta_int(r->out, "values", r->meta.n_values, err));
  for (int k = 0; k < T_COUNT; k++)
    SE_TRY(se_output_tdbem_meta_double(r->out, names[k], most[k], err));
  return SE_OK;
}

/* Frees what a run holds (collective: the solver, the output and the input). */
static int tear_down(run *r, int rc, se_error *err) {
  se_error scratch;
  se_error *e = rc == SE_OK ? err : &scratch;
  if (r->out) {
    int crc = se_output_tdbem_close(r->out, rc == SE_OK, e);
    rc = rc != SE_OK ? rc : crc;
  }
  if (r->solver)
    se_tdbem_m0_destroy(r->solver);
  if (r->m0_comm != MPI_COMM_NULL)
    MPI_Comm_free(&r->m0_comm);
  se_balance_free(&r->bal);
  se_balance_history_free(&r->history);
  if (r->in) {
    int crc = se_input_tdbem_close(r->in, rc == SE_OK ? err : &scratch);
    rc = rc != SE_OK ? rc : crc;
  }
  for (int w = 0; w < r->gpus; w++)
    if (r->gpu[w])
      gpu_backend->destroy(r->gpu[w]);
  se_tdbem_slices_free(&r->near);
  se_tdbem_slices_free(&r->slices);
  free(r->illum);
  free(r->a_local);
  free(r->a);
  free(r->perm);
  free(r->send);
  free(r->partial);
  free(r->hist);
  return rc;
}

int se_tdbem_run(const char *input, const char *output, MPI_Comm comm, int ng, se_ordering ordering,
                 se_error *err) {
  const se_tdbem_run_options opt = {.ng = ng, .ordering = ordering, .gpus = 0, .bc = 16};
  return se_tdbem_run_workers(input, output, comm, &opt, err);
}

/* The GPU workers per rank of opt (resolving "as many as the node has"), or an error. */
static int gpus_per_rank(const se_tdbem_run_options *opt, MPI_Comm comm, int rank, int *gpus,
                         se_error *err) {
  const int visible = se_gpu_count();
  *gpus = opt->gpus;
  if (*gpus < 0) {
    MPI_Comm node;
    int node_size = 1;
    SE_MPI_CHECK(err, MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node));
    int mpi_rc = MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
    if (mpi_rc != MPI_SUCCESS)
      SE_FAIL(err, SE_ERR_MPI, "MPI_Comm_size of the node communicator failed");
    *gpus = visible == 0 ? 0 : (visible / node_size > 0 ? visible / node_size : 1);
  }
  if (*gpus > RUN_GPUS_MAX)
    SE_FAIL(err, SE_ERR_ARG, "--gpus %d: at most %d GPU workers per rank", *gpus, RUN_GPUS_MAX);
  if (*gpus > 0 && (!gpu_backend || visible == 0))
    SE_FAIL(err, SE_ERR_UNSUPPORTED, "tdbem: %d GPU(s) per rank asked for, but %s", *gpus,
            gpu_backend ? "no CUDA device is visible" : "this build has no CUDA backend");
  if (*gpus > 0 && !(opt->gpu_fraction >= 0.0 && opt->gpu_fraction <= 1.0))
    SE_FAIL(err, SE_ERR_ARG, "--gpu-fraction %g: expected a number in [0, 1]", opt->gpu_fraction);
  if (*gpus > 0 && opt->kernel == SE_TDBEM_GPU_FB && opt->bc != 16 && opt->bc != 32)
    SE_FAIL(err, SE_ERR_ARG, "Full-Blocking block width %d: expected 16 or 32", opt->bc);
  return SE_OK;
}

int se_tdbem_run_workers(const char *input, const char *output, MPI_Comm comm,
                         const se_tdbem_run_options *opt, se_error *err) {
  const int ng = opt->ng;
  const se_ordering ordering = opt->ordering;
  run r = {.comm = comm, .ng = ng, .kind = ordering, .input = input, .output = output, .opt = *opt,
           .m0_comm = MPI_COMM_NULL};
  SE_MPI_CHECK(err, MPI_Comm_rank(comm, &r.rank));
  SE_MPI_CHECK(err, MPI_Comm_size(comm, &r.size));
  int rc = SE_OK;
  if (!input || !output || !input[0] || !output[0])
    rc = se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__, "no input or no output path");
  else if (ng < 1 || ng > SE_TDBEM_NG_MAX)
    rc = se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__, "ng = %d, expected 1 .. %d",
                      ng, SE_TDBEM_NG_MAX);
  else if (ordering != SE_ORDER_ORIGINAL && ordering != SE_ORDER_MORTON &&
           ordering != SE_ORDER_HILBERT)
    rc = se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__,
                      "unknown ordering %d (original, Morton or Hilbert)", (int)ordering);
  else if (opt->cpu_workers > RUN_CPUS_MAX || opt->balance < 0 || opt->balance > 2)
    rc = se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__,
                      "%d CPU workers (at most %d), balance %d (0 off, 1 paper, 2 rate)",
                      opt->cpu_workers, RUN_CPUS_MAX, opt->balance);
  else
    rc = gpus_per_rank(opt, comm, r.rank, &r.gpus, err);
  SE_TRY(se_mpi_agree(comm, rc, err));
  r.n_cpu = opt->cpu_workers > 1 ? opt->cpu_workers : 1;
  r.n_workers = r.n_cpu + r.gpus;
  r.history.n_workers = r.n_workers;
  rc = set_up(&r, err);
  if (rc == SE_OK && r.rank == 0) {
    printf(
        "simengine: tdbem N %lld, kmax %lld, %lld values (%s), %lld steps, ng %d, %d rank(s) x %d "
        "thread(s), M0 ordering %s\n",
        (long long)r.meta.n, (long long)r.meta.kmax, (long long)r.meta.n_values,
        r.meta.precision == SE_PRECISION_SINGLE ? "single" : "double", (long long)r.meta.steps, ng,
        r.size, omp_get_max_threads(), r.ordering);
    printf("simengine: tdbem unknown ordering %s: quality score %.2f (original numbering %.2f)\n",
           ordering_name(r.kind), r.quality[1], r.quality[0]);
    if (r.gpus > 0)
      printf("simengine: tdbem workers per rank: CPU + %d GPU (%s), GPU share %.3f of the values; "
             "rank 0: CPU slices %lld, GPU slices %lld; balance %s\n",
             r.gpus, opt->kernel == SE_TDBEM_GPU_FB ? "Full-Blocking" : "Contiguous-Blocking",
             opt->gpu_fraction, (long long)r.bounds[r.n_cpu],
             (long long)(r.count - r.bounds[r.n_cpu]), balance_name(opt->balance));
    fflush(stdout);
  }
  if (rc == SE_OK)
    rc = march(&r, err);
  if (rc == SE_OK)
    rc = write_meta(&r, err);
  return tear_down(&r, rc, err);
}
