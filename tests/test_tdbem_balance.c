/* The dynamic CPU/GPU split of the tdbem run (docs/tdbem.md Section 14) without a GPU: three CPU
 * workers per rank (they run one after the other) balanced with the paper's update and the
 * rate-based one give the state of the unbalanced run within 1e-12 relative, and the history in
 * /simengine/balance describes what happened: one iteration per group of ng steps but the last,
 * contiguous intervals covering each rank's slices, finite times, the attributes, and no move
 * after the balancer kept its best split. Run on 1 and 2 ranks.
 *
 * Tolerance: balancing changes only which worker sums a slice, i.e. how each rank's partial sum
 * of a summation vector is associated ((A + B) + C instead of one running sum over the slices):
 * the same terms, rounded differently (relative 1e-16 per vector), carried through the marching
 * by the well-conditioned M0 solves; the renumbering test (tdbem_order) measures 3e-16 for the
 * same kind of change, so 1e-12 leaves four orders of margin. */
#include <hdf5.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "balance.h"
#include "h5_util.h"
#include "prep_tdbem.h"
#include "se_test.h"
#include "se_test_mpi.h"
#include "tdbem_run_test.h"
#include "tdbem_run.h"

/* A string attribute of object obj in path (rank 0; exits when it cannot be read). */
static void read_attr(const char *path, const char *obj, const char *name, char *out, size_t size) {
  se_error err = {0};
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f < 0) {
    fprintf(stderr, "cannot open %s\n", path);
    exit(1);
  }
  const int rc = se_h5_read_attr_string(f, path, obj, name, NULL, out, size, &err);
  H5Fclose(f);
  se_test_ok(rc, &err, "reading a string attribute");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  se_test_state st = {0};
  const int64_t n = 300, steps = 50;
  const int ng = 8, workers = 3, groups = (int)((steps + ng - 1) / ng);
  char input[256], ref[256], out[256];
  snprintf(input, sizeof input, "tdbem_balance_%d.h5", size);
  snprintf(ref, sizeof ref, "tdbem_balance_%d.off.h5", size);
  se_error err = {0};
  int rc = SE_OK;
  se_test_tdbem_sphere(input, n, steps, SE_PRECISION_DOUBLE);
  se_tdbem_run_options o = {.ng = ng, .ordering = SE_ORDER_ORIGINAL, .gpus = 0, .bc = 16};
  rc = se_tdbem_run_workers(input, ref, MPI_COMM_WORLD, &o, &err);
  SE_EXPECT(&st, rc == SE_OK, "unbalanced run: %s", err.message);
  hsize_t dims[3];
  int dr;
  double *a = rank == 0 ? se_test_read_doubles(ref, "/tdbem/state", dims, &dr) : NULL;
  /* 1 + method, updates before the rollback */
  const int cases[][2] = {{0, 20}, {1 + SE_BALANCE_PAPER, 20}, {1 + SE_BALANCE_RATE, 3}};
  static const char *const names[] = {"off", "paper", "rate"};
  for (int c = 0; c < 3; c++) {
    snprintf(out, sizeof out, "tdbem_balance_%d.%s.h5", size, names[c]);
    o = (se_tdbem_run_options){.ng = ng, .ordering = SE_ORDER_ORIGINAL, .gpus = 0, .bc = 16,
                               .cpu_workers = workers, .balance = cases[c][0],
                               .balance_iterations = cases[c][1]};
    rc = se_tdbem_run_workers(input, out, MPI_COMM_WORLD, &o, &err);
    SE_EXPECT(&st, rc == SE_OK, "%s: %s", names[c], err.message);
    if (rank != 0 || rc != SE_OK)
      continue;
    double *b = se_test_read_doubles(out, "/tdbem/state", dims, &dr);
    const double e = se_test_max_rel(b, a, n * steps); /* a: the reference */
    printf("balance %s, %d rank(s): max relative difference to the unbalanced run %.3g\n",
           names[c], size, e);
    SE_EXPECT(&st, e <= 1e-12, "%s: %.3g > 1e-12", names[c], e);
    free(b);
    /* the history: [I][R][W] with I = groups - 1 */
    double *first = se_test_read_doubles(out, "/simengine/balance/first", dims, &dr);
    double *last = se_test_read_doubles(out, "/simengine/balance/last", dims, &dr);
    double *time = se_test_read_doubles(out, "/simengine/balance/time", dims, &dr);
    SE_EXPECT(&st,
              dr == 3 && dims[0] == (hsize_t)(groups - 1) && dims[1] == (hsize_t)size &&
                  dims[2] == (hsize_t)workers,
              "%s: history of rank %d, %llu x %llu x %llu", names[c], dr,
              (unsigned long long)dims[0], (unsigned long long)dims[1], (unsigned long long)dims[2]);
    int moves_after_freeze = 0;
    for (hsize_t i = 0; dr == 3 && i < dims[0]; i++)
      for (hsize_t p = 0; p < dims[1]; p++) {
        const double *f = first + (i * dims[1] + p) * dims[2], *l = last + (i * dims[1] + p) * dims[2];
        const double *t = time + (i * dims[1] + p) * dims[2];
        const double count = n * (double)(p + 1) / size; /* about: the rank's slices */
        SE_EXPECT(&st, f[0] == 0.0 && l[dims[2] - 1] + 1 > 0.5 * n / size && l[dims[2] - 1] < count,
                  "%s: iteration %llu rank %llu: interval [%g, %g]", names[c],
                  (unsigned long long)i, (unsigned long long)p, f[0], l[dims[2] - 1]);
        for (hsize_t w = 0; w < dims[2]; w++) {
          SE_EXPECT(&st, isfinite(t[w]) && t[w] >= 0.0 && l[w] >= f[w] &&
                             (w == 0 || f[w] == l[w - 1] + 1),
                    "%s: iteration %llu rank %llu worker %llu: [%g, %g], %g s", names[c],
                    (unsigned long long)i, (unsigned long long)p, (unsigned long long)w, f[w], l[w],
                    t[w]);
          if (i > (hsize_t)cases[c][1] && cases[c][0] > 0)
            moves_after_freeze += f[w] != first[((i - 1) * dims[1] + p) * dims[2] + w];
          if (cases[c][0] == 0 && i > 0)
            moves_after_freeze += f[w] != first[((i - 1) * dims[1] + p) * dims[2] + w];
        }
      }
    SE_EXPECT(&st, moves_after_freeze == 0, "%s: %d boundaries moved after the rollback",
              names[c], moves_after_freeze);
    char method[32], items[32], wnames[64];
    read_attr(out, "/simengine/balance", "method", method, sizeof method);
    read_attr(out, "/simengine/balance", "items", items, sizeof items);
    read_attr(out, "/simengine", "balance", wnames, sizeof wnames);
    SE_EXPECT(&st, !strcmp(method, names[c]) && !strcmp(items, "slices") && !strcmp(wnames, names[c]),
              "%s: attributes method '%s', items '%s', /simengine balance '%s'", names[c], method,
              items, wnames);
    free(first);
    free(last);
    free(time);
    remove(out);
  }
  free(a);
  if (rank == 0) {
    remove(ref);
    remove(input);
  }
  /* too few slices for the workers: an argument error on every rank */
  o = (se_tdbem_run_options){.ng = ng, .gpus = 0, .cpu_workers = 17, .balance = 1};
  rc = se_tdbem_run_workers("none.h5", "none.out.h5", MPI_COMM_WORLD, &o, &err);
  SE_EXPECT(&st, rc == SE_ERR_ARG && strstr(err.message, "CPU workers"), "17 CPU workers: %d %s",
            rc, err.message);
  rc = se_test_finish_all(&st, "tdbem_balance", MPI_COMM_WORLD);
  MPI_Finalize();
  return rc;
}
