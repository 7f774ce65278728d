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
  const char *input, *output;
  se_input_tdbem_t in;
  se_tdbem_meta meta;
  int64_t first, count;         /* this rank's slices */
  se_tdbem_slices slices, near; /* near: the row-vectors the radiation reads (ng > 1) */
  se_tdbem_m0_solver_t solver;
  char ordering[64];
  se_output_tdbem_t out;
  int64_t hist_len;
  double *hist;    /* [count x hist_len]: hist[j hist_len + m mod hist_len] = a_m(first + j) */
  double *partial; /* [ng x N]: this rank's part of the summation vectors of the group */
  double *send;    /* [N + 1]: one partial vector and this rank's failure flag */
  double *a;       /* [N + 1]: rank 0: l_m - s_m, then a_m; then broadcast with a status */
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

/* Reads the input (this rank's slices, M0 on rank 0), factorises M0 and opens the output.
 * Collective. */
static int set_up(run *r, se_error *err) {
  double start = MPI_Wtime();
  SE_TRY(se_input_tdbem_open(r->input, r->comm, &r->in, &r->meta, err));
  const int64_t n = r->meta.n;
  int64_t *values = calloc((size_t)n, sizeof *values),
          *bounds = calloc((size_t)r->size + 1, sizeof *bounds);
  int rc = values && bounds ? SE_OK
                            : se_error_set(err, SE_ERR_NOMEM, __FILE__, __LINE__, __func__,
                                           "out of memory partitioning %lld slices", (long long)n);
  rc = se_mpi_agree(r->comm, rc, err);
  if (rc == SE_OK) {
    se_input_tdbem_slice_values(r->in, values);
    se_partition_contiguous(values, n, r->size, bounds);
    r->first = bounds[r->rank];
    r->count = bounds[r->rank + 1] - bounds[r->rank];
  }
  free(bounds);
  free(values);
  SE_TRY(rc);
  SE_TRY(se_input_tdbem_read_slices(r->in, r->first, r->count, &r->slices, err));
  start = lap(r, T_READ, start);
  se_tdbem_m0 m0;
  SE_TRY(se_input_tdbem_read_m0(r->in, &m0, err));
  rc = se_tdbem_m0_create(r->comm, r->rank == 0 ? &m0 : NULL, &r->solver, r->ordering,
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
  if (r->rank == 0) {
    const double *l = r->illum + (m - r->illum_first) * N;
    for (int64_t i = 0; i < N; i++)
      r->a[i] = l[i] - r->send[i];
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
  for (int64_t j = 0; j < r->count; j++)
    r->hist[j * r->hist_len + m % r->hist_len] = r->a[r->first + j];
  start = MPI_Wtime();
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
        local_rc = se_tdbem_radiate_cpu(&r->near, r->a + r->first, r->ng - 1 - q,
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
  free(r->a);
  free(r->send);
  free(r->partial);
  free(r->hist);
  return rc;
}

int se_tdbem_run(const char *input, const char *output, MPI_Comm comm, int ng, se_error *err) {
  run r = {.comm = comm, .ng = ng, .input = input, .output = output};
  SE_MPI_CHECK(err, MPI_Comm_rank(comm, &r.rank));
  SE_MPI_CHECK(err, MPI_Comm_size(comm, &r.size));
  int rc = SE_OK;
  if (!input || !output || !input[0] || !output[0])
    rc = se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__, "no input or no output path");
  else if (ng < 1 || ng > 16)
    rc = se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__, "ng = %d, expected 1 .. 16",
                      ng);
  SE_TRY(se_mpi_agree(comm, rc, err));
  rc = set_up(&r, err);
  if (rc == SE_OK && r.rank == 0) {
    printf(
        "simengine: tdbem N %lld, kmax %lld, %lld values (%s), %lld steps, ng %d, %d rank(s) x %d "
        "thread(s), M0 ordering %s\n",
        (long long)r.meta.n, (long long)r.meta.kmax, (long long)r.meta.n_values,
        r.meta.precision == SE_PRECISION_SINGLE ? "single" : "double", (long long)r.meta.steps, ng,
        r.size, omp_get_max_threads(), r.ordering);
    fflush(stdout);
  }
  if (rc == SE_OK)
    rc = march(&r, err);
  if (rc == SE_OK)
    rc = write_meta(&r, err);
  return tear_down(&r, rc, err);
}
