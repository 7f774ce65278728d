/* Per-iteration history of the worker balancing, written to /simengine/balance (io/balance_history.h,
 * docs/balance.md, docs/output.md). */
#include "balance_history.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5_util.h"

int se_balance_history_append(se_balance_history *h, const int64_t *first, const int64_t *last,
                              const double *time, se_error *err) {
  if (h->n_workers < 1)
    SE_FAIL(err, SE_ERR_ARG, "balance history: %d workers (set n_workers >= 1 before appending)",
            h->n_workers);
  if (h->n_iterations == h->capacity) {
    int64_t cap = h->capacity ? 2 * h->capacity : 64;
    size_t n = (size_t)cap * (size_t)h->n_workers;
    SE_REALLOC(err, h->first, n, "balance history");
    SE_REALLOC(err, h->last, n, "balance history");
    SE_REALLOC(err, h->time, n, "balance history");
    h->capacity = cap;
  }
  size_t at = (size_t)h->n_iterations * (size_t)h->n_workers, w = (size_t)h->n_workers;
  memcpy(h->first + at, first, w * sizeof *first);
  memcpy(h->last + at, last, w * sizeof *last);
  memcpy(h->time + at, time, w * sizeof *time);
  h->n_iterations++;
  return SE_OK;
}

void se_balance_history_free(se_balance_history *h) {
  free(h->first);
  free(h->last);
  free(h->time);
  h->first = h->last = NULL;
  h->time = NULL;
  h->n_iterations = h->capacity = 0;
}

/* This rank's [I][1][W] block of first, last and time, padded with -1 / NaN where it has no such
 * iteration or worker (every entry of the file is written once, by its rank). */
static int pad_block(const se_balance_history *h, int64_t iterations, int64_t workers,
                     int64_t **first, int64_t **last, double **time, se_error *err) {
  size_t n = (size_t)iterations * (size_t)workers;
  SE_CALLOC(err, *first, n, "balance history block");
  SE_CALLOC(err, *last, n, "balance history block");
  SE_CALLOC(err, *time, n, "balance history block");
  for (int64_t i = 0; i < iterations; i++)
    for (int64_t w = 0; w < workers; w++) {
      size_t at = (size_t)(i * workers + w);
      int mine = i < h->n_iterations && w < h->n_workers;
      size_t src = mine ? (size_t)(i * h->n_workers + w) : 0;
      (*first)[at] = mine ? h->first[src] : -1;
      (*last)[at] = mine ? h->last[src] : -1;
      (*time)[at] = mine ? h->time[src] : NAN;
    }
  return SE_OK;
}

/* Creates the [I][R][W] dataset name under /simengine/balance and writes this rank's block. */
static int write_table(hid_t file, const char *fname, const char *name, hid_t file_type,
                       hid_t mem_type, const hsize_t dims[3], int rank, const void *block,
                       hid_t dxpl, se_error *err) {
  char path[64];
  snprintf(path, sizeof path, "/simengine/balance/%s", name);
  hid_t dset;
  SE_TRY(se_h5_create_dataset(file, fname, path, file_type, 3, dims, &dset, err));
  const hsize_t start[3] = {0, (hsize_t)rank, 0}, count[3] = {dims[0], 1, dims[2]};
  int rc = se_h5_write_block(dset, mem_type, 3, start, count, block, dxpl, fname, path, err);
  herr_t closed = H5Dclose(dset);
  SE_TRY(rc);
  SE_H5_CHECK(err, closed, "%s: closing %s", fname, path);
  return SE_OK;
}

/* The rank's worker names as element `rank` of the fixed-length string dataset
 * /simengine/balance/workers [R] (strings of the longest name's length + 1, NUL-terminated). */
static int write_names(hid_t file, const char *fname, const char *names, int rank, int ranks,
                       size_t longest, hid_t dxpl, se_error *err) {
  const char *path = "/simengine/balance/workers";
  int rc = SE_OK;
  hid_t type = H5I_INVALID_HID, dset = H5I_INVALID_HID;
  char *padded = calloc(longest + 1, 1);
  if (!padded)
    SE_FAIL(err, SE_ERR_NOMEM, "%s: out of memory for %s", fname, path);
  memcpy(padded, names, strlen(names));
  SE_H5_CHECK_GOTO(err, rc, done, type = H5Tcopy(H5T_C_S1), "%s: %s", fname, path);
  SE_H5_CHECK_GOTO(err, rc, done, H5Tset_size(type, longest + 1), "%s: %s", fname, path);
  SE_H5_CHECK_GOTO(err, rc, done, H5Tset_strpad(type, H5T_STR_NULLTERM), "%s: %s", fname, path);
  const hsize_t dims[1] = {(hsize_t)ranks}, start[1] = {(hsize_t)rank}, count[1] = {1};
  SE_TRY_GOTO(rc, done, se_h5_create_dataset(file, fname, path, type, 1, dims, &dset, err));
  SE_TRY_GOTO(rc, done, se_h5_write_block(dset, type, 1, start, count, padded, dxpl, fname, path,
                                          err));
done:
  free(padded);
  if (dset >= 0 && H5Dclose(dset) < 0 && rc == SE_OK)
    rc = se_error_set(err, SE_ERR_HDF5, __FILE__, __LINE__, __func__, "%s: closing %s", fname, path);
  if (type >= 0)
    H5Tclose(type);
  return rc;
}

/* The HDF5 part of se_balance_history_write, once every rank's history was found valid. */
static int write_group(hid_t file, const char *fname, int rank, int ranks, const hsize_t dims[3],
                       const se_balance_history *h, size_t longest, const char *items,
                       const char *method, int64_t steps_per_iteration, se_error *err) {
  int rc = SE_OK, exists = 0;
  int64_t *first = NULL, *last = NULL;
  double *time = NULL;
  hid_t dxpl = H5I_INVALID_HID;
  SE_TRY_GOTO(rc, done, se_h5_exists(file, fname, "/simengine", &exists, err));
  if (!exists)
    SE_TRY_GOTO(rc, done, se_h5_create_group(file, fname, "/simengine", err));
  SE_TRY_GOTO(rc, done, se_h5_exists(file, fname, "/simengine/balance", &exists, err));
  if (exists)
    SE_FAIL_GOTO(err, rc, done, SE_ERR_ARG, "%s: /simengine/balance is already written", fname);
  SE_TRY_GOTO(rc, done, se_h5_create_group(file, fname, "/simengine/balance", err));
  SE_H5_CHECK_GOTO(err, rc, done, dxpl = H5Pcreate(H5P_DATASET_XFER), "%s: transfer list", fname);
  SE_H5_CHECK_GOTO(err, rc, done, H5Pset_dxpl_mpio(dxpl, H5FD_MPIO_COLLECTIVE), "%s", fname);
  SE_TRY_GOTO(rc, done, pad_block(h, (int64_t)dims[0], (int64_t)dims[2], &first, &last, &time, err));
  SE_TRY_GOTO(rc, done, write_table(file, fname, "first", H5T_STD_I64LE, H5T_NATIVE_INT64, dims,
                                    rank, first, dxpl, err));
  SE_TRY_GOTO(rc, done, write_table(file, fname, "last", H5T_STD_I64LE, H5T_NATIVE_INT64, dims,
                                    rank, last, dxpl, err));
  SE_TRY_GOTO(rc, done, write_table(file, fname, "time", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, dims,
                                    rank, time, dxpl, err));
  SE_TRY_GOTO(rc, done, write_names(file, fname, h->names, rank, ranks, longest, dxpl, err));
  const char *obj = "/simengine/balance";
  SE_TRY_GOTO(rc, done, se_h5_write_attr_string(file, fname, obj, "items", items, err));
  SE_TRY_GOTO(rc, done, se_h5_write_attr_string(file, fname, obj, "method", method, err));
  SE_TRY_GOTO(rc, done, se_h5_write_attr_int64(file, fname, obj, "steps_per_iteration",
                                               steps_per_iteration, err));
done:
  if (dxpl >= 0)
    H5Pclose(dxpl);
  free(first);
  free(last);
  free(time);
  return rc;
}

int se_balance_history_write(hid_t file, MPI_Comm comm, const se_balance_history *h,
                             const char *items, const char *method, int64_t steps_per_iteration,
                             se_error *err) {
  int rank, ranks;
  SE_MPI_CHECK(err, MPI_Comm_rank(comm, &rank));
  SE_MPI_CHECK(err, MPI_Comm_size(comm, &ranks));
  char fname[1024] = "output";
  if (H5Fget_name(file, fname, sizeof fname) < 0)
    snprintf(fname, sizeof fname, "output");
  /* local checks first, agreed on, so that no rank enters the collective HDF5 calls alone */
  int rc = SE_OK;
  size_t len = strnlen(h->names, sizeof h->names);
  if (h->n_workers < 0 || h->n_iterations < 0 || (h->n_iterations > 0 && h->n_workers < 1))
    rc = se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__,
                      "%s: balance history of %lld iterations x %d workers", fname,
                      (long long)h->n_iterations, h->n_workers);
  else if (len == sizeof h->names)
    rc = se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__,
                      "%s: worker names are not NUL-terminated", fname);
  else if (!items || !method || steps_per_iteration < 1)
    rc = se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__,
                      "%s: balance history needs items, method and steps_per_iteration >= 1 "
                      "(got %lld)", fname, (long long)steps_per_iteration);
  SE_TRY(se_mpi_agree(comm, rc, err));
  int64_t mine[3] = {h->n_iterations, h->n_workers, (int64_t)len}, most[3];
  SE_MPI_CHECK(err, MPI_Allreduce(mine, most, 3, MPI_INT64_T, MPI_MAX, comm));
  const hsize_t dims[3] = {(hsize_t)most[0], (hsize_t)ranks, (hsize_t)most[1]};
  rc = write_group(file, fname, rank, ranks, dims, h, (size_t)most[2], items, method,
                   steps_per_iteration, err);
  return se_mpi_agree(comm, rc, err);
}
