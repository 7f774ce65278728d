/* Helpers of the tests that run whole tdbem marchings (test_tdbem_balance.c,
 * test_tdbem_gpu_run.c): a generated case on disk, datasets read back (the states are compared
 * with se_test_max_rel of se_test.h). */
#ifndef SE_TDBEM_RUN_TEST_H
#define SE_TDBEM_RUN_TEST_H

#include <hdf5.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#include "prep_tdbem.h"

/* Rank 0 writes a generated sphere of n unknowns (kmax 30, dmax 12, `steps` steps, precision
 * prec) to path; every rank returns once it exists, the job aborts with the message otherwise.
 * Collective. */
static inline void se_test_tdbem_sphere(const char *path, int64_t n, int64_t steps,
                                        se_precision prec) {
  int rank, rc = SE_OK;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  se_error err = {0};
  if (rank == 0) {
    se_prep_tdbem_params pp;
    se_prep_tdbem_defaults(&pp);
    pp.n = n;
    pp.kmax = 30;
    pp.dmax = 12;
    pp.steps = steps;
    pp.precision = prec;
    rc = se_prep_tdbem_write(path, &pp, NULL, &err);
  }
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rc != SE_OK) {
    fprintf(stderr, "prep of %s failed: %s\n", path, err.message);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

/* Dataset `name` of path as doubles (one process); dims receives its extents (rank <= 3) and
 * *rank its rank. Exits with a message when it cannot be read. Free with free(). */
static inline double *se_test_read_doubles(const char *path, const char *name, hsize_t dims[3],
                                           int *rank) {
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t d = f >= 0 ? H5Dopen2(f, name, H5P_DEFAULT) : H5I_INVALID_HID;
  hid_t sp = d >= 0 ? H5Dget_space(d) : H5I_INVALID_HID;
  dims[0] = dims[1] = dims[2] = 1;
  *rank = sp >= 0 ? H5Sget_simple_extent_dims(sp, dims, NULL) : -1;
  double *x = *rank >= 0 ? calloc((size_t)(dims[0] * dims[1] * dims[2]) + 1, sizeof *x) : NULL;
  if (!x || H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, x) < 0) {
    fprintf(stderr, "cannot read %s of %s\n", name, path);
    exit(1);
  }
  H5Sclose(sp);
  H5Dclose(d);
  H5Fclose(f);
  return x;
}

#endif
