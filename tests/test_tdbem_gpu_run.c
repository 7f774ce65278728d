/* A whole tdbem run with GPU workers equals the CPU-only run (docs/tdbem.md Section 13): a
 * generated sphere (double and single values), marched with ng 8 on the CPU only, then with one
 * GPU worker per rank taking half of the values (Contiguous-Blocking) and all of them
 * (Full-Blocking), and with 3 GPU workers per rank sharing one device; /tdbem/state compared
 * within 1e-12 relative (double) and 1e-5 (single: the state is float32). Run on 1 and 2 ranks.
 * Skips (77) without a CUDA device. */
#include <hdf5.h>
#include <math.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "prep_tdbem.h"
#include "se_test.h"
#include "se_test_mpi.h"
#include "tdbem_run_test.h"
#include "simengine/neurons.h"
#include "tdbem_run.h"

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  if (se_gpu_count() == 0) {
    if (rank == 0)
      printf("skipped: no GPU\n");
    MPI_Finalize();
    return 77;
  }
  se_test_state st = {0};
  const int64_t n = 400, steps = 50;
  for (int p = 0; p < 2; p++) {
    const se_precision prec = p ? SE_PRECISION_SINGLE : SE_PRECISION_DOUBLE;
    char input[256], ref[256], out[256];
    snprintf(input, sizeof input, "tdbem_gpu_run_%d_%d.h5", size, p);
    snprintf(ref, sizeof ref, "tdbem_gpu_run_%d_%d.cpu.h5", size, p);
    se_error err = {0};
    int rc = SE_OK;
    se_test_tdbem_sphere(input, n, steps, prec);
    se_tdbem_run_options o = {.ng = 8, .ordering = SE_ORDER_ORIGINAL, .gpus = 0, .bc = 16};
    rc = se_tdbem_run_workers(input, ref, MPI_COMM_WORLD, &o, &err);
    SE_EXPECT(&st, rc == SE_OK, "CPU run: %s", err.message);
    const struct {
      int gpus;
      double fraction;
      se_tdbem_gpu_kernel kernel;
      int bc, ng;
    } cases[] = {{1, 0.5, SE_TDBEM_GPU_CB, 16, 8},
                 {1, 1.0, SE_TDBEM_GPU_FB, 16, 8},
                 {3, 0.7, SE_TDBEM_GPU_FB, 32, 8},
                 {1, 0.3, SE_TDBEM_GPU_CB, 16, 3}};
    const double tol = p ? 1e-5 : 1e-12;
    hsize_t dims[3];
    int dr;
    double *a = rank == 0 ? se_test_read_doubles(ref, "/tdbem/state", dims, &dr) : NULL;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
      snprintf(out, sizeof out, "tdbem_gpu_run_%d_%d.gpu%zu.h5", size, p, c);
      o = (se_tdbem_run_options){.ng = cases[c].ng, .ordering = SE_ORDER_ORIGINAL,
                                 .gpus = cases[c].gpus, .gpu_fraction = cases[c].fraction,
                                 .kernel = cases[c].kernel, .bc = cases[c].bc};
      rc = se_tdbem_run_workers(input, out, MPI_COMM_WORLD, &o, &err);
      SE_EXPECT(&st, rc == SE_OK, "GPU run %zu: %s", c, err.message);
      if (rank == 0 && rc == SE_OK) {
        double *b = se_test_read_doubles(out, "/tdbem/state", dims, &dr);
        const double e = se_test_max_rel(b, a, n * steps); /* a: the reference */
        printf("%s, %d rank(s), case %zu (%d GPU worker(s), fraction %.1f, %s, ng %d): max "
               "relative difference to the CPU run %.3g\n",
               p ? "single" : "double", size, c, cases[c].gpus, cases[c].fraction,
               cases[c].kernel == SE_TDBEM_GPU_FB ? "FB" : "CB", cases[c].ng, e);
        SE_EXPECT(&st, e <= tol, "case %zu: %.3g > %.0e", c, e, tol);
        free(b);
        remove(out);
      }
    }
    free(a);
    if (rank == 0) {
      remove(ref);
      remove(input);
    }
  }
  /* asking for GPUs with a bad fraction fails on every rank */
  se_error err = {0};
  se_tdbem_run_options bad = {.ng = 8, .gpus = 1, .gpu_fraction = 1.5};
  int rc = se_tdbem_run_workers("none.h5", "none.out.h5", MPI_COMM_WORLD, &bad, &err);
  SE_EXPECT(&st, rc == SE_ERR_ARG && strstr(err.message, "--gpu-fraction"), "bad fraction: %d %s",
            rc, err.message);
  rc = se_test_finish_all(&st, "tdbem_gpu_run", MPI_COMM_WORLD);
  MPI_Finalize();
  return rc;
}
