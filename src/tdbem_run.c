/* The tdbem marching on in time over MPI ranks (src/tdbem_run.h, docs/input-tdbem.md "Running"). */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5_util.h"
#include "input_tdbem.h"
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

/* The timed phases of a run. */
enum { T_READ, T_SETUP, T_SUM, T_RADIATE, T_REDUCE, T_SOLVE, T_OUTPUT, T_COUNT };

/* Everything one rank holds during a run. */
typedef struct run {
  MPI_Comm comm;
  int rank, size, ng;
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
  double *partial; /* [ng x N]: this rank's part of the summation vectors of the group */
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
  SE_CALLOC(err, r->partial, (int64_t)r->ng * n, "the partial summation vectors");
  SE_CALLOC(err, r->send, n + 1, "a partial summation vector");
  SE_CALLOC(err, r->a, n + 1, "the state vector");
  SE_CALLOC(err, r->a_local, r->count, "the rank's part of the state vector");
  int64_t rows = RUN_ILLUMINATION_BYTES / (8 * n);
  rows = rows < 1 ? 1 : rows;
  r->illum_rows = rows < r->meta.steps ? rows : r->meta.steps;
  r->illum_first = -1;
  if (r->rank == 0)
    SE_CALLOC(err, r->illum, (r->illum_rows > 0 ? r->illum_rows : 1) * n, "the illumination rows");
  if (r->ng > 1)
    SE_TRY(se_tdbem_slices_near(&r->slices, r->ng - 1, &r->near, err));
  return SE_OK;
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

/* The ordering-quality score of the original and of the chosen numbering over all the slices:
 * each rank scores its old slices (held) and its new ones, the sums and counts are added over
 * the ranks. Collective. */
static int score(run *r, const se_tdbem_slices *held, se_error *err) {
  double sums[2] = {0.0, 0.0}, all[4];
  int64_t scored[2] = {0, 0};
  int rc = se_tdbem_ordering_quality(held, &sums[0], &scored[0], err);
  if (rc == SE_OK)
    rc = se_tdbem_ordering_quality(&r->slices, &sums[1], &scored[1], err);
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
  int rc = se_tdbem_m0_create(r->comm, r->rank == 0 ? &m0 : NULL, &r->solver, r->ordering,
                              sizeof r->ordering, err);
  se_tdbem_m0_free(&m0);
  SE_TRY(rc);
  SE_TRY(se_mpi_agree(r->comm, allocate(r, err), err));
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
  SE_TRY(se_tdbem_m0_solve(r->solver, r->a, err));
  start = lap(r, T_SOLVE, start);
  int64_t bad = -1;
  if (r->rank == 0) {
    for (int64_t i = 0; i < N && bad < 0; i++)
      if (!isfinite(r->a[i]))
        bad = i;
    r->a[N] = r->send[N] > 0 ? 1 : (bad >= 0 ? 2 : 0);
  }
  SE_MPI_CHECK(err, MPI_Bcast(r->a, (int)(N + 1), MPI_DOUBLE, 0, r->comm));
  lap(r, T_REDUCE, start);
  if (r->a[N] != 0) { /* every rank is here: agree on the failing rank's message */
    int rc = local_rc;
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
  start = MPI_Wtime(); /* the output's columns: the same interval in the original numbering */
  SE_TRY(se_output_tdbem_append(r->out, r->a + r->first, err));
  lap(r, T_OUTPUT, start);
  return SE_OK;
}

/* Marches every step: groups of ng steps, one multi-vector/vector product per group. */
static int march(run *r, se_error *err) {
  const int64_t N = r->meta.n, steps = r->meta.steps;
  double run_start = MPI_Wtime(), last_progress = run_start;
  for (int64_t n = 0; n < steps; n += r->ng) {
    double start = MPI_Wtime();
    memset(r->partial, 0, (size_t)(r->ng * N) * sizeof *r->partial);
    int local_rc =
        r->count > 0 ? se_tdbem_sum_cpu(&r->slices, r->hist, r->hist_len, n, r->ng, r->partial, err)
                     : SE_OK;
    lap(r, T_SUM, start);
    for (int q = 0; q < r->ng && n + q < steps; q++) {
      SE_TRY(step(r, n, q, local_rc, err));
      if (q + 1 < r->ng && r->count > 0 && local_rc == SE_OK) { /* a_{n+q} into s~_{n+q+1 ..} */
        start = MPI_Wtime();
        local_rc = se_tdbem_radiate_cpu(&r->near, r->a_local, r->ng - 1 - q,
                                        r->partial + (q + 1) * N, err);
        lap(r, T_RADIATE, start);
      }
    }
    SE_TRY(se_mpi_agree(r->comm, local_rc, err)); /* a failure in the group's last radiation */
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

/* Writes the /simengine attributes (timings: the largest over the ranks). Collective. */
static int write_meta(run *r, se_error *err) {
  double most[T_COUNT];
  SE_MPI_CHECK(err, MPI_Allreduce(r->time, most, T_COUNT, MPI_DOUBLE, MPI_MAX, r->comm));
  static const char *const names[T_COUNT] = {"time_read_s",    "time_setup_s",  "time_sum_s",
                                             "time_radiate_s", "time_reduce_s", "time_solve_s",
                                             "time_output_s"};
  if (r->rank == 0) {
    printf(
        "simengine: tdbem times (s, slowest rank): read %.2f, setup %.2f, sum %.2f, radiate %.2f, "
        "reduce %.2f, solve %.2f, output %.2f\n",
        most[T_READ], most[T_SETUP], most[T_SUM], most[T_RADIATE], most[T_REDUCE], most[T_SOLVE],
        most[T_OUTPUT]);
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
  if (r->in) {
    int crc = se_input_tdbem_close(r->in, rc == SE_OK ? err : &scratch);
    rc = rc != SE_OK ? rc : crc;
  }
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
  run r = {.comm = comm, .ng = ng, .kind = ordering, .input = input, .output = output};
  SE_MPI_CHECK(err, MPI_Comm_rank(comm, &r.rank));
  SE_MPI_CHECK(err, MPI_Comm_size(comm, &r.size));
  int rc = SE_OK;
  if (!input || !output || !input[0] || !output[0])
    rc = se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__, "no input or no output path");
  else if (ng < 1 || ng > 16)
    rc = se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__, "ng = %d, expected 1 .. 16",
                      ng);
  else if (ordering != SE_ORDER_ORIGINAL && ordering != SE_ORDER_MORTON &&
           ordering != SE_ORDER_HILBERT)
    rc = se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__,
                      "unknown ordering %d (original, Morton or Hilbert)", (int)ordering);
  SE_TRY(se_mpi_agree(comm, rc, err));
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
    fflush(stdout);
  }
  if (rc == SE_OK)
    rc = march(&r, err);
  if (rc == SE_OK)
    rc = write_meta(&r, err);
  return tear_down(&r, rc, err);
}
