/* The balance history writer (io/balance_history.c): every rank appends its own history (its own
 * number of workers and iterations, one rank with an empty history on 2+ ranks, one history longer
 * than the first allocation), writes it collectively into /simengine/balance, and rank 0 reads
 * the file back with plain HDF5 and checks every entry, the -1 / NaN padding, the worker names
 * and the attributes; then the refusals: a second write, bad arguments, a bad history on one
 * rank (every rank returns the same error). Usage: test_balance_history OUTPUT_PREFIX */
#include <hdf5.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "balance_history.h"
#include "h5_util.h"
#include "se_test.h"
#include "se_test_mpi.h"

static int iterations_of(int rank) { return rank == 1 ? 0 : rank == 0 ? 70 : 5 - rank; }
static int workers_of(int rank) { return rank + 1; }
static int64_t first_of(int r, int64_t i, int w) { return 1000 * r + 10 * i + w; }
static double time_of(int r, int64_t i, int w) { return r + 0.001 * (double)i + 0.1 * w; }

/* Reads the whole int64 or double dataset path into buf (n entries), checking its dims. */
static void read_table(se_test_state *st, hid_t f, const char *path, hid_t mem, const hsize_t want[3],
                       void *buf) {
  hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
  hid_t s = d >= 0 ? H5Dget_space(d) : -1;
  hsize_t dims[3] = {0, 0, 0};
  int nd = s >= 0 ? H5Sget_simple_extent_dims(s, dims, NULL) : -1;
  SE_EXPECT(st, nd == 3 && dims[0] == want[0] && dims[1] == want[1] && dims[2] == want[2],
            "%s: dims %d [%llu %llu %llu], expected [%llu %llu %llu]", path, nd,
            (unsigned long long)dims[0], (unsigned long long)dims[1], (unsigned long long)dims[2],
            (unsigned long long)want[0], (unsigned long long)want[1], (unsigned long long)want[2]);
  if (nd == 3 && dims[0] * dims[1] * dims[2] > 0)
    SE_EXPECT(st, H5Dread(d, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0, "reading %s", path);
  if (s >= 0)
    H5Sclose(s);
  if (d >= 0)
    H5Dclose(d);
}

/* Rank 0: the file holds every rank's history as written. */
static void check_file(se_test_state *st, const char *path, int ranks) {
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  SE_EXPECT(st, f >= 0, "cannot open %s", path);
  if (f < 0)
    return;
  int64_t iters = 0, wmax = 0;
  for (int r = 0; r < ranks; r++) {
    iters = iterations_of(r) > iters ? iterations_of(r) : iters;
    wmax = workers_of(r) > wmax ? workers_of(r) : wmax;
  }
  const hsize_t dims[3] = {(hsize_t)iters, (hsize_t)ranks, (hsize_t)wmax};
  size_t n = (size_t)(iters * ranks * wmax);
  int64_t *first = se_test_calloc(n, sizeof *first), *last = se_test_calloc(n, sizeof *last);
  double *time = se_test_calloc(n, sizeof *time);
  read_table(st, f, "/simengine/balance/first", H5T_NATIVE_INT64, dims, first);
  read_table(st, f, "/simengine/balance/last", H5T_NATIVE_INT64, dims, last);
  read_table(st, f, "/simengine/balance/time", H5T_NATIVE_DOUBLE, dims, time);
  int bad = 0;
  for (int64_t i = 0; i < iters; i++)
    for (int r = 0; r < ranks; r++)
      for (int w = 0; w < wmax; w++) {
        size_t at = (size_t)((i * ranks + r) * wmax + w);
        int mine = i < iterations_of(r) && w < workers_of(r);
        int64_t want = mine ? first_of(r, i, w) : -1;
        bad += first[at] != want || last[at] != (mine ? want + 5 : -1);
        bad += mine ? time[at] != time_of(r, i, w) : !isnan(time[at]);
      }
  SE_EXPECT(st, bad == 0, "%d entries of first/last/time differ from what the ranks wrote", bad);
  free(first);
  free(last);
  free(time);

  hid_t d = H5Dopen2(f, "/simengine/balance/workers", H5P_DEFAULT);
  hid_t type = d >= 0 ? H5Dget_type(d) : -1;
  size_t len = type >= 0 ? H5Tget_size(type) : 0;
  char *names = se_test_calloc((size_t)ranks * len + 1, 1);
  SE_EXPECT(st, d >= 0 && len > 0 && H5Dread(d, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, names) >= 0,
            "reading /simengine/balance/workers");
  for (int r = 0; r < ranks && len > 0; r++) {
    char want[256] = "";
    for (int w = 0; w < workers_of(r); w++)
      snprintf(want + strlen(want), sizeof want - strlen(want), "%sw%d.%d", w ? "," : "", r, w);
    SE_EXPECT(st, !strncmp(names + (size_t)r * len, want, len) && strlen(want) < len,
              "workers[%d] = '%.*s', expected '%s'", r, (int)len, names + (size_t)r * len, want);
  }
  free(names);
  if (type >= 0)
    H5Tclose(type);
  if (d >= 0)
    H5Dclose(d);

  se_error err = {0};
  char items[32] = "", method[32] = "";
  int64_t steps = 0;
  SE_EXPECT(st, se_h5_read_attr_string(f, path, "/simengine/balance", "items", NULL, items,
                                       sizeof items, &err) == SE_OK && !strcmp(items, "slices"),
            "items '%s' %s", items, err.message);
  SE_EXPECT(st, se_h5_read_attr_string(f, path, "/simengine/balance", "method", NULL, method,
                                       sizeof method, &err) == SE_OK && !strcmp(method, "rate"),
            "method '%s' %s", method, err.message);
  SE_EXPECT(st, se_h5_read_attr_int64(f, path, "/simengine/balance", "steps_per_iteration", NULL,
                                      &steps, &err) == SE_OK && steps == 7,
            "steps_per_iteration %lld %s", (long long)steps, err.message);
  H5Fclose(f);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  int rank, ranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  se_test_state st = {0};
  if (argc < 2) {
    fprintf(stderr, "usage: test_balance_history OUTPUT_PREFIX\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  char path[4096];
  snprintf(path, sizeof path, "%s.h5", argv[1]);
  se_error err = {0};

  se_balance_history h = {.n_workers = workers_of(rank)};
  for (int w = 0; w < h.n_workers; w++)
    snprintf(h.names + strlen(h.names), sizeof h.names - strlen(h.names), "%sw%d.%d",
             w ? "," : "", rank, w);
  for (int64_t i = 0; i < iterations_of(rank); i++) {
    int64_t first[8], last[8];
    double time[8];
    for (int w = 0; w < h.n_workers; w++) {
      first[w] = first_of(rank, i, w);
      last[w] = first[w] + 5;
      time[w] = time_of(rank, i, w);
    }
    SE_EXPECT(&st, se_balance_history_append(&h, first, last, time, &err) == SE_OK, "%s",
              err.message);
  }
  SE_EXPECT(&st, h.n_iterations == iterations_of(rank), "%lld iterations kept",
            (long long)h.n_iterations);

  /* a file without /simengine: the writer creates it */
  hid_t f;
  int rc = se_mpi_agree(MPI_COMM_WORLD, se_h5_open_mpio(path, MPI_COMM_WORLD, 1, &f, &err), &err);
  SE_EXPECT(&st, rc == SE_OK, "create %s: %s", path, err.message);
  if (rc == SE_OK) {
    rc = se_balance_history_write(f, MPI_COMM_WORLD, &h, "slices", "rate", 7, &err);
    SE_EXPECT(&st, rc == SE_OK, "write: %s", err.message);
    /* refusals, the same on every rank */
    rc = se_balance_history_write(f, MPI_COMM_WORLD, &h, "slices", "rate", 7, &err);
    SE_EXPECT(&st, rc == SE_ERR_ARG && strstr(err.message, "already written"),
              "second write: %d %s", rc, err.message);
    rc = se_balance_history_write(f, MPI_COMM_WORLD, &h, "slices", "rate", 0, &err);
    SE_EXPECT(&st, rc == SE_ERR_ARG && strstr(err.message, "steps_per_iteration"),
              "steps 0: %d %s", rc, err.message);
    se_balance_history broken = h;
    if (rank == ranks - 1)
      broken.n_workers = 0, broken.n_iterations = 3;
    rc = se_balance_history_write(f, MPI_COMM_WORLD, &broken, "slices", "rate", 7, &err);
    SE_EXPECT(&st, rc == SE_ERR_ARG && strstr(err.message, "3 iterations x 0 workers") &&
                       (ranks == 1 || rank == ranks - 1 || strstr(err.message, "on rank")),
              "bad history on the last rank: %d %s", rc, err.message);
    H5Fclose(f);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0)
    check_file(&st, path, ranks);

  /* append refuses a history without workers; free is safe twice */
  se_balance_history empty = {0};
  int64_t one = 0;
  double zero = 0.0;
  SE_EXPECT(&st, se_balance_history_append(&empty, &one, &one, &zero, &err) == SE_ERR_ARG,
            "append without workers");
  se_balance_history_free(&empty);
  se_balance_history_free(&h);
  se_balance_history_free(&h);

  int code = se_test_finish_all(&st, "balance_history", MPI_COMM_WORLD);
  MPI_Finalize();
  return code;
}
