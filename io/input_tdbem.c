/* Version-1 tdbem input files (io/input_tdbem.h, docs/input-tdbem.md): the collective reader with
 * its checks of every attribute, dataset, shape, dtype and pointer. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "h5_util.h"
#include "input_neurons.h"
#include "input_tdbem.h"

#define P_SLICE_PTR "/tdbem/slices/slice_ptr"
#define P_ROW "/tdbem/slices/row"
#define P_KSTART "/tdbem/slices/kstart"
#define P_VAL_PTR "/tdbem/slices/val_ptr"
#define P_VAL "/tdbem/slices/val"
#define P_M0_ROW "/tdbem/M0/row"
#define P_M0_COL "/tdbem/M0/col"
#define P_M0_VAL "/tdbem/M0/val"
#define P_ILLUMINATION "/tdbem/illumination"
#define P_POSITIONS "/tdbem/positions"

/* Entries of an integer dataset converted at once (the pieces of the int32 reads). */
#define INPUT_PIECE ((int64_t)1 << 22)
/* Bytes of one pread of a direct read (the pieces the threads share). */
#define DIRECT_PIECE ((int64_t)32 << 20)

typedef struct se_input_tdbem se_input_tdbem;

struct se_input_tdbem {
  MPI_Comm comm; /* our duplicate of the caller's communicator */
  int rank;
  char *path;
  hid_t file;
  se_tdbem_meta meta;
  int64_t *slice_ptr; /* [N + 1] */
  int64_t *slice_val; /* [N + 1]: val_ptr[slice_ptr[j]], the first value of each slice */
};

/* ---- small helpers --------------------------------------------------------------------------- */

/* Closes a dataset and its type opened by se_h5_open_dataset (those that are valid); a failure
 * becomes the error when rc is SE_OK. */
static int close_dataset(hid_t dset, hid_t type, const char *src, const char *path, int rc,
                         se_error *err) {
  herr_t a = type >= 0 ? H5Tclose(type) : 0, b = dset >= 0 ? H5Dclose(dset) : 0;
  if (rc == SE_OK && (a < 0 || b < 0))
    rc = se_error_set(err, SE_ERR_HDF5, __FILE__, __LINE__, __func__, "%s: closing %s failed", src,
                      path);
  return rc;
}

/* Fails unless the value dataset path (file type type) has the dtype of the file's precision. */
static int check_value_type(const se_input_tdbem *in, const char *path, hid_t type, se_error *err) {
  size_t size = H5Tget_size(type);
  if (size == 0)
    SE_FAIL(err, SE_ERR_HDF5, "%s: %s: H5Tget_size failed", in->path, path);
  int single = in->meta.precision == SE_PRECISION_SINGLE;
  size_t want = single ? 4 : 8;
  if (size != want)
    SE_FAIL(err, SE_ERR_INPUT,
            "%s: %s has %zu-bit floating-point values, but /tdbem attribute "
            "precision = \"%s\" needs float%zu",
            in->path, path, 8 * size, single ? "single" : "double", 8 * want);
  return SE_OK;
}

/* Opens dataset path with se_h5_open_dataset (found, cls, ndims as there); a value dataset
 * (is_value) must also have the precision's dtype. dims receives the shape. */
static int open_checked(const se_input_tdbem *in, const char *path, int *found, H5T_class_t cls,
                        int ndims, int is_value, hsize_t *dims, hid_t *dset, hid_t *type,
                        se_error *err) {
  SE_TRY(se_h5_open_dataset(in->file, in->path, path, found, cls, ndims, dims, dset, type, err));
  if (*dset < 0 || !is_value)
    return SE_OK;
  int rc = check_value_type(in, path, *type, err);
  if (rc != SE_OK) {
    rc = close_dataset(*dset, *type, in->path, path, rc, err);
    *dset = *type = H5I_INVALID_HID;
  }
  return rc;
}

/* Fails unless dataset path has want entries (along dimension 0); what explains want. */
static int check_entries(const char *src, const char *path, hsize_t got, int64_t want,
                         const char *what, se_error *err) {
  if ((int64_t)got != want)
    SE_FAIL(err, SE_ERR_INPUT, "%s: %s has %llu entries, expected %s = %lld", src, path,
            (unsigned long long)got, what, (long long)want);
  return SE_OK;
}

/* The slice holding global row-vector r (binary search in slice_ptr). */
static int64_t slice_of(const se_input_tdbem *in, int64_t r) {
  int64_t lo = 0, hi = in->meta.n; /* slice_ptr[lo] <= r < slice_ptr[hi] */
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    if (in->slice_ptr[mid] <= r)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/* ---- direct reads ---------------------------------------------------------------------------- */

/* The byte offset in the file of the raw data of dset (file type type) when its entries can be
 * read directly as native_type: contiguous storage allocated in the file, no external files, the
 * file type equal to native_type; -1 otherwise (HDF5 then reads and converts). */
static int64_t direct_offset(hid_t dset, hid_t type, hid_t native_type) {
  if (H5Tequal(type, native_type) <= 0)
    return -1;
  const hid_t dcpl = H5Dget_create_plist(dset);
  if (dcpl < 0)
    return -1;
  const int contiguous = H5Pget_layout(dcpl) == H5D_CONTIGUOUS && H5Pget_external_count(dcpl) == 0;
  if (H5Pclose(dcpl) < 0 || !contiguous)
    return -1;
  const haddr_t at = H5Dget_offset(dset);
  return at == HADDR_UNDEF ? -1 : (int64_t)at;
}

/* Reads bytes [offset, offset + bytes) of the open file fd into buf: pieces of DIRECT_PIECE bytes,
 * one pread each (repeated after a short read), shared by the OpenMP threads. path names the
 * dataset in messages. */
static int read_direct(const se_input_tdbem *in, int fd, const char *path, int64_t offset,
                       int64_t bytes, void *buf, se_error *err) {
  const int64_t pieces = (bytes + DIRECT_PIECE - 1) / DIRECT_PIECE;
  int64_t bad = pieces; /* the first piece that failed, and its errno (0: end of file) */
  int code = 0;
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t p = 0; p < pieces; p++) {
    int64_t at = p * DIRECT_PIECE;
    const int64_t end = at + DIRECT_PIECE < bytes ? at + DIRECT_PIECE : bytes;
    while (at < end) {
      const ssize_t got = pread(fd, (char *)buf + at, (size_t)(end - at), (off_t)(offset + at));
      if (got < 0 && errno == EINTR)
        continue;
      if (got <= 0) {
        const int e = got < 0 ? errno : 0;
#pragma omp critical(se_input_tdbem_direct)
        if (p < bad) {
          bad = p;
          code = e;
        }
        break;
      }
      at += got;
    }
  }
  if (bad < pieces)
    SE_FAIL(err, SE_ERR_IO, "%s: reading %s (%lld bytes at byte %lld of the file) failed: %s",
            in->path, path, (long long)bytes, (long long)offset,
            code ? strerror(code) : "the file ends early");
  return SE_OK;
}

/* Reads entries [start, start + count) of the one-dimensional dataset path (open as dset, file
 * type type) into buf as native_type (elem_size bytes each): directly (read_direct on fd) when
 * fd >= 0 and direct_offset allows it, otherwise with HDF5, which converts (int64: also from
 * unsigned types, checked to fit). */
static int read_range(const se_input_tdbem *in, int fd, hid_t dset, hid_t type, const char *path,
                      hid_t native_type, size_t elem_size, int64_t start, int64_t count, void *buf,
                      se_error *err) {
  const int64_t at = fd >= 0 && count > 0 ? direct_offset(dset, type, native_type) : -1;
  if (at >= 0)
    return read_direct(in, fd, path, at + start * (int64_t)elem_size, count * (int64_t)elem_size,
                       buf, err);
  if (native_type == H5T_NATIVE_INT64)
    return se_h5_read_int64_range(dset, type, start, count, buf, in->path, path, err);
  return se_h5_read_rows(dset, native_type, elem_size, start, count, 1, buf, in->path, path, err);
}

/* The error for entry at of path holding value, outside the range that what explains; rowvector
 * says the entries are per row-vector (the message then names the slice). */
static int range_error(const se_input_tdbem *in, const char *path, int64_t at, int64_t value,
                       int rowvector, const char *what, se_error *err) {
  char where[96] = "";
  if (rowvector)
    snprintf(where, sizeof where, " (a row-vector of slice %lld)", (long long)slice_of(in, at));
  return se_error_set(err, SE_ERR_INPUT, __FILE__, __LINE__, __func__,
                      "%s: %s[%lld] = %lld%s is out of range: %s", in->path, path, (long long)at,
                      (long long)value, where, what);
}

/* Reads entries [start, start + count) of the integer dataset path (open as dset, type) into out
 * as int32, each in [lo, hi]; rowvector says the entries are per row-vector (the message then
 * names the slice); what explains the range in messages. An int32 dataset is read directly when
 * fd >= 0 (read_range) and checked by the threads; others are converted in pieces. */
static int read_int32_checked(const se_input_tdbem *in, int fd, hid_t dset, hid_t type,
                              const char *path, int64_t start, int64_t count, int64_t lo,
                              int64_t hi, int rowvector, const char *what, int32_t *out,
                              se_error *err) {
  if (fd >= 0 && count > 0 && direct_offset(dset, type, H5T_NATIVE_INT32) >= 0) {
    SE_TRY(read_range(in, fd, dset, type, path, H5T_NATIVE_INT32, sizeof(int32_t), start, count,
                      out, err));
    int64_t bad = count; /* the first entry out of range */
#pragma omp parallel for reduction(min : bad)
    for (int64_t q = 0; q < count; q++)
      if ((int64_t)out[q] < lo || (int64_t)out[q] > hi)
        bad = q < bad ? q : bad;
    return bad < count ? range_error(in, path, start + bad, out[bad], rowvector, what, err) : SE_OK;
  }
  int64_t piece = count < INPUT_PIECE ? count : INPUT_PIECE;
  int64_t *tmp;
  SE_CALLOC(err, tmp, piece, path);
  int rc = SE_OK;
  for (int64_t done = 0; done < count && rc == SE_OK; done += piece) {
    int64_t n = count - done < piece ? count - done : piece;
    rc = se_h5_read_int64_range(dset, type, start + done, n, tmp, in->path, path, err);
    for (int64_t q = 0; q < n && rc == SE_OK; q++) {
      if (tmp[q] >= lo && tmp[q] <= hi)
        out[done + q] = (int32_t)tmp[q];
      else
        rc = range_error(in, path, start + done + q, tmp[q], rowvector, what, err);
    }
  }
  free(tmp);
  return rc;
}

/* Ends a call: restores HDF5's error printing (saved in q when began is SE_OK). */
static int end_quiet(const se_h5_quiet *q, int began, int rc, se_error *err) {
  if (began != SE_OK)
    return rc;
  int qrc = se_h5_quiet_end(q, rc == SE_OK ? err : NULL);
  return rc != SE_OK ? rc : qrc;
}

/* ---- open ------------------------------------------------------------------------------------ */

/* Reads /run steps and the /tdbem attributes into in->meta and checks them. */
static int read_attributes(se_input_tdbem *in, se_error *err) {
  se_tdbem_meta *m = &in->meta;
  const char *src = in->path;
  SE_TRY(se_h5_read_attr_int64(in->file, src, "/run", "steps", NULL, &m->steps, err));
  if (m->steps < 0)
    SE_FAIL(err, SE_ERR_INPUT, "%s: /run attribute steps = %lld is negative", src,
            (long long)m->steps);
  SE_TRY(se_h5_read_attr_int64(in->file, src, "/tdbem", "N", NULL, &m->n, err));
  if (m->n < 1 || m->n > INT32_MAX - 1) /* N + 1 pointers are broadcast with an int count */
    SE_FAIL(err, SE_ERR_INPUT, "%s: /tdbem attribute N = %lld is not in [1, %d]", src,
            (long long)m->n, INT32_MAX - 1);
  SE_TRY(se_h5_read_attr_int64(in->file, src, "/tdbem", "kmax", NULL, &m->kmax, err));
  if (m->kmax < 1 || m->kmax > INT32_MAX)
    SE_FAIL(err, SE_ERR_INPUT, "%s: /tdbem attribute kmax = %lld is not in [1, %d]", src,
            (long long)m->kmax, INT32_MAX);
  char precision[32];
  SE_TRY(se_h5_read_attr_string(in->file, src, "/tdbem", "precision", NULL, precision,
                                sizeof precision, err));
  if (strcmp(precision, "single") == 0)
    m->precision = SE_PRECISION_SINGLE;
  else if (strcmp(precision, "double") == 0)
    m->precision = SE_PRECISION_DOUBLE;
  else
    SE_FAIL(err, SE_ERR_INPUT,
            "%s: /tdbem attribute precision = \"%s\" is not \"single\" or \"double\"", src,
            precision);
  return SE_OK;
}

/* Checks the presence, class, shape and dtype of one dataset: dims[0] must be len0 (when >= 0;
 * what0 explains it), dims[1] len1 for two-dimensional ones; gives dims[0] in *got0 (may be
 * NULL). found: NULL for a required dataset. */
static int check_dataset(se_input_tdbem *in, const char *path, int *found, H5T_class_t cls,
                         int ndims, int is_value, int64_t len0, const char *what0, int64_t len1,
                         int64_t *got0, se_error *err) {
  hsize_t dims[2] = {0, 0};
  hid_t dset, type;
  SE_TRY(open_checked(in, path, found, cls, ndims, is_value, dims, &dset, &type, err));
  if (dset < 0)
    return SE_OK;
  int rc = SE_OK;
  if (ndims == 2 && (dims[0] != (hsize_t)len0 || dims[1] != (hsize_t)len1))
    rc = se_error_set(err, SE_ERR_INPUT, __FILE__, __LINE__, __func__,
                      "%s: %s has shape [%llu x %llu], expected [%s] = [%lld x %lld]", in->path,
                      path, (unsigned long long)dims[0], (unsigned long long)dims[1], what0,
                      (long long)len0, (long long)len1);
  else if (ndims == 1 && len0 >= 0)
    rc = check_entries(in->path, path, dims[0], len0, what0, err);
  if (got0)
    *got0 = (int64_t)dims[0];
  return close_dataset(dset, type, in->path, path, rc, err);
}

/* Checks every dataset (all ranks; no data read) and fills the sizes of in->meta. */
static int check_datasets(se_input_tdbem *in, se_error *err) {
  se_tdbem_meta *m = &in->meta;
  int64_t rv, nnz, nnz0;
  SE_TRY(check_dataset(in, P_SLICE_PTR, NULL, H5T_INTEGER, 1, 0, m->n + 1, "N + 1", 0, NULL, err));
  SE_TRY(check_dataset(in, P_ROW, NULL, H5T_INTEGER, 1, 0, -1, "", 0, &rv, err));
  SE_TRY(check_dataset(in, P_KSTART, NULL, H5T_INTEGER, 1, 0, rv, "the length of " P_ROW, 0, NULL,
                       err));
  SE_TRY(check_dataset(in, P_VAL_PTR, NULL, H5T_INTEGER, 1, 0, rv + 1,
                       "the row-vectors (the length of " P_ROW ") + 1", 0, NULL, err));
  SE_TRY(check_dataset(in, P_VAL, NULL, H5T_FLOAT, 1, 1, -1, "", 0, &nnz, err));
  SE_TRY(check_dataset(in, P_M0_ROW, NULL, H5T_INTEGER, 1, 0, -1, "", 0, &nnz0, err));
  SE_TRY(check_dataset(in, P_M0_COL, NULL, H5T_INTEGER, 1, 0, nnz0, "the length of " P_M0_ROW, 0,
                       NULL, err));
  SE_TRY(check_dataset(in, P_M0_VAL, NULL, H5T_FLOAT, 1, 1, nnz0, "the length of " P_M0_ROW, 0,
                       NULL, err));
  SE_TRY(check_dataset(in, P_ILLUMINATION, NULL, H5T_FLOAT, 2, 1, m->steps, "T x N (T: /run steps)",
                       m->n, NULL, err));
  SE_TRY(check_dataset(in, P_POSITIONS, &m->has_positions, H5T_FLOAT, 2, 0, m->n, "N x 3", 3, NULL,
                       err));
  m->n_rowvectors = rv;
  m->n_values = nnz;
  m->nnz0 = nnz0;
  return SE_OK;
}

/* Rank 0: reads slice_ptr and val_ptr at the slice boundaries into in and checks them. */
static int read_pointers(se_input_tdbem *in, se_error *err) {
  const se_tdbem_meta *m = &in->meta;
  const char *src = in->path;
  const int64_t n = m->n;
  hsize_t dims[1];
  hid_t dset, type;
  SE_TRY(open_checked(in, P_SLICE_PTR, NULL, H5T_INTEGER, 1, 0, dims, &dset, &type, err));
  int rc = se_h5_read_int64_range(dset, type, 0, n + 1, in->slice_ptr, src, P_SLICE_PTR, err);
  SE_TRY(close_dataset(dset, type, src, P_SLICE_PTR, rc, err));
  const int64_t *sp = in->slice_ptr;
  if (sp[0] != 0)
    SE_FAIL(err, SE_ERR_INPUT, "%s: %s[0] = %lld, expected 0", src, P_SLICE_PTR, (long long)sp[0]);
  for (int64_t j = 0; j < n; j++)
    if (sp[j + 1] < sp[j])
      SE_FAIL(err, SE_ERR_INPUT,
              "%s: %s[%lld] = %lld is less than %s[%lld] = %lld (pointers must not "
              "decrease)",
              src, P_SLICE_PTR, (long long)(j + 1), (long long)sp[j + 1], P_SLICE_PTR, (long long)j,
              (long long)sp[j]);
  if (sp[n] != m->n_rowvectors)
    SE_FAIL(err, SE_ERR_INPUT,
            "%s: %s[N = %lld] = %lld is not the number of row-vectors %lld (the "
            "length of %s)",
            src, P_SLICE_PTR, (long long)n, (long long)sp[n], (long long)m->n_rowvectors, P_ROW);
  /* val_ptr at the distinct slice boundaries, one point selection */
  int64_t *points, *values, distinct = 0;
  SE_CALLOC(err, points, n + 1, "the slice boundaries");
  values = calloc((size_t)n + 1, sizeof *values);
  if (!values) {
    free(points);
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory for the slice boundaries");
  }
  for (int64_t j = 0; j <= n; j++)
    if (distinct == 0 || sp[j] != points[distinct - 1])
      points[distinct++] = sp[j];
  rc = open_checked(in, P_VAL_PTR, NULL, H5T_INTEGER, 1, 0, dims, &dset, &type, err);
  if (rc == SE_OK) {
    rc = se_h5_read_int64_points(dset, type, distinct, points, values, src, P_VAL_PTR, err);
    rc = close_dataset(dset, type, src, P_VAL_PTR, rc, err);
  }
  for (int64_t j = 0, q = 0; j <= n && rc == SE_OK; j++) {
    while (points[q] != sp[j])
      q++;
    in->slice_val[j] = values[q];
  }
  free(values);
  free(points);
  SE_TRY(rc);
  const int64_t *sv = in->slice_val;
  if (sv[0] != 0)
    SE_FAIL(err, SE_ERR_INPUT, "%s: %s[0] = %lld, expected 0", src, P_VAL_PTR, (long long)sv[0]);
  for (int64_t j = 0; j < n; j++)
    if (sv[j + 1] < sv[j])
      SE_FAIL(err, SE_ERR_INPUT,
              "%s: %s[%lld] = %lld (start of slice %lld) is less than %s[%lld] = "
              "%lld (start of slice %lld): pointers must not decrease",
              src, P_VAL_PTR, (long long)sp[j + 1], (long long)sv[j + 1], (long long)(j + 1),
              P_VAL_PTR, (long long)sp[j], (long long)sv[j], (long long)j);
  if (sv[n] != m->n_values)
    SE_FAIL(err, SE_ERR_INPUT,
            "%s: %s[%lld] = %lld is not the number of values %lld (the length of "
            "%s)",
            src, P_VAL_PTR, (long long)sp[n], (long long)sv[n], (long long)m->n_values, P_VAL);
  return SE_OK;
}

/* Frees in (its file closed) and its communicator; returns rc, or the failure of MPI_Comm_free
 * when rc is SE_OK. */
static int free_input(se_input_tdbem *in, int rc, se_error *err) {
  int mpi_rc = in->comm != MPI_COMM_NULL ? MPI_Comm_free(&in->comm) : MPI_SUCCESS;
  free(in->slice_val);
  free(in->slice_ptr);
  free(in->path);
  free(in);
  if (rc == SE_OK && mpi_rc != MPI_SUCCESS)
    return se_error_set(err, SE_ERR_MPI, __FILE__, __LINE__, __func__, "MPI_Comm_free failed");
  return rc;
}

/* The local part of open: the handle's strings and arrays, the file, the attributes and datasets,
 * and on rank 0 the pointers. */
static int open_local(se_input_tdbem *in, const char *path, se_error *err) {
  size_t len = strlen(path);
  SE_CALLOC(err, in->path, len + 1, "the input path");
  memcpy(in->path, path, len);
  SE_TRY(se_h5_open_mpio(path, in->comm, 0, &in->file, err));
  SE_TRY(read_attributes(in, err));
  SE_TRY(check_datasets(in, err));
  SE_CALLOC(err, in->slice_ptr, in->meta.n + 1, "slice_ptr");
  SE_CALLOC(err, in->slice_val, in->meta.n + 1, "the slice value offsets");
  return in->rank == 0 ? read_pointers(in, err) : SE_OK;
}

int se_input_tdbem_open(const char *path, MPI_Comm comm, se_input_tdbem_t *in_out,
                        se_tdbem_meta *meta, se_error *err) {
  if (!path || !in_out || !meta)
    SE_FAIL(err, SE_ERR_ARG, "se_input_tdbem_open: no path, handle or meta");
  *in_out = NULL;
  char workload[64];
  SE_TRY(se_input_workload(path, comm, workload, sizeof workload, err));
  if (strcmp(workload, "tdbem") != 0)
    SE_FAIL(err, SE_ERR_INPUT, "%s: root attribute workload = \"%s\" is not \"tdbem\"", path,
            workload);
  se_input_tdbem *in;
  SE_CALLOC(err, in, 1, "the tdbem input");
  in->comm = MPI_COMM_NULL;
  in->file = H5I_INVALID_HID;
  if (MPI_Comm_dup(comm, &in->comm) != MPI_SUCCESS ||
      MPI_Comm_rank(in->comm, &in->rank) != MPI_SUCCESS)
    return free_input(in,
                      se_error_set(err, SE_ERR_MPI, __FILE__, __LINE__, __func__,
                                   "%s: duplicating the communicator failed", path),
                      err);
  se_h5_quiet q;
  int began = se_h5_quiet_begin(&q, err), rc = began;
  if (rc == SE_OK)
    rc = open_local(in, path, err);
  rc = se_mpi_agree(in->comm, rc, err);
  if (rc == SE_OK) {
    int64_t n1 = in->meta.n + 1; /* <= INT32_MAX: checked */
    if (MPI_Bcast(in->slice_ptr, (int)n1, MPI_INT64_T, 0, in->comm) != MPI_SUCCESS ||
        MPI_Bcast(in->slice_val, (int)n1, MPI_INT64_T, 0, in->comm) != MPI_SUCCESS)
      rc = se_error_set(err, SE_ERR_MPI, __FILE__, __LINE__, __func__,
                        "%s: broadcasting the slice pointers failed", path);
  }
  rc = end_quiet(&q, began, rc, err);
  if (rc != SE_OK) {
    se_error ignored;
    se_input_tdbem_close(in, &ignored);
    return rc;
  }
  *meta = in->meta;
  *in_out = in;
  return SE_OK;
}

void se_input_tdbem_slice_values(se_input_tdbem_t in, int64_t *values) {
  for (int64_t j = 0; j < in->meta.n; j++)
    values[j] = in->slice_val[j + 1] - in->slice_val[j];
}

/* ---- slices ---------------------------------------------------------------------------------- */

/* Reads val_ptr of the interval's row-vectors [r0, r0 + n_rv] into s->val_ptr (fd: read_range),
 * checks it and makes it local (minus its first value). */
static int read_val_ptr(const se_input_tdbem *in, int fd, int64_t r0, int64_t n_rv,
                        se_tdbem_slices *s, se_error *err) {
  hsize_t dims[1];
  hid_t dset, type;
  SE_TRY(open_checked(in, P_VAL_PTR, NULL, H5T_INTEGER, 1, 0, dims, &dset, &type, err));
  int rc = read_range(in, fd, dset, type, P_VAL_PTR, H5T_NATIVE_INT64, sizeof(int64_t), r0,
                      n_rv + 1, s->val_ptr, err);
  SE_TRY(close_dataset(dset, type, in->path, P_VAL_PTR, rc, err));
  int64_t *vp = s->val_ptr, base = vp[0], bad = n_rv; /* the first decreasing pointer */
#pragma omp parallel for reduction(min : bad)
  for (int64_t q = 0; q < n_rv; q++)
    if (vp[q + 1] < vp[q])
      bad = q < bad ? q : bad;
  if (bad < n_rv)
    SE_FAIL(err, SE_ERR_INPUT,
            "%s: %s[%lld] = %lld is less than %s[%lld] = %lld (row-vector %lld "
            "of slice %lld): pointers must not decrease",
            in->path, P_VAL_PTR, (long long)(r0 + bad + 1), (long long)vp[bad + 1], P_VAL_PTR,
            (long long)(r0 + bad), (long long)vp[bad], (long long)(r0 + bad),
            (long long)slice_of(in, r0 + bad));
#pragma omp parallel for
  for (int64_t q = 0; q <= n_rv; q++)
    vp[q] -= base;
  return SE_OK;
}

/* Reads the rows and kstarts of row-vectors [r0, r0 + n_rv) into s (fd: read_int32_checked) and
 * checks that each row-vector ends by kmax. */
static int read_rows_kstarts(const se_input_tdbem *in, int fd, int64_t r0, int64_t n_rv,
                             se_tdbem_slices *s, se_error *err) {
  const int64_t n = in->meta.n, kmax = in->meta.kmax;
  char what[128];
  hsize_t dims[1];
  hid_t dset, type;
  snprintf(what, sizeof what, "row indices are in [0, N - 1] = [0, %lld]", (long long)(n - 1));
  SE_TRY(open_checked(in, P_ROW, NULL, H5T_INTEGER, 1, 0, dims, &dset, &type, err));
  int rc = read_int32_checked(in, fd, dset, type, P_ROW, r0, n_rv, 0, n - 1, 1, what, s->row, err);
  SE_TRY(close_dataset(dset, type, in->path, P_ROW, rc, err));
  snprintf(what, sizeof what, "kstart is in [1, kmax] = [1, %lld]", (long long)kmax);
  SE_TRY(open_checked(in, P_KSTART, NULL, H5T_INTEGER, 1, 0, dims, &dset, &type, err));
  rc = read_int32_checked(in, fd, dset, type, P_KSTART, r0, n_rv, 1, kmax, 1, what, s->kstart,
                          err);
  SE_TRY(close_dataset(dset, type, in->path, P_KSTART, rc, err));
  int64_t bad = n_rv; /* the first row-vector ending beyond kmax */
#pragma omp parallel for reduction(min : bad)
  for (int64_t q = 0; q < n_rv; q++)
    if ((int64_t)s->kstart[q] + s->val_ptr[q + 1] - s->val_ptr[q] - 1 > kmax)
      bad = q < bad ? q : bad;
  if (bad < n_rv) {
    const int64_t len = s->val_ptr[bad + 1] - s->val_ptr[bad];
    SE_FAIL(err, SE_ERR_INPUT,
            "%s: row-vector %lld (row %d of slice %lld) has kstart = %d and %lld "
            "values (%s), so it ends at k = %lld beyond kmax = %lld",
            in->path, (long long)(r0 + bad), s->row[bad], (long long)slice_of(in, r0 + bad),
            s->kstart[bad], (long long)len, P_VAL_PTR, (long long)(s->kstart[bad] + len - 1),
            (long long)kmax);
  }
  return SE_OK;
}

/* Reads the arrays of the slices [first, first + count) into s (allocated) and checks them; the
 * contiguous datasets of native types are read directly through fd (read_range) when fd >= 0. */
static int read_slice_arrays(const se_input_tdbem *in, int fd, int64_t first, int64_t count,
                             se_tdbem_slices *s, se_error *err) {
  const se_tdbem_meta *m = &in->meta;
  int64_t r0 = in->slice_ptr[first], n_rv = in->slice_ptr[first + count] - r0;
  int64_t v0 = in->slice_val[first], n_val = in->slice_val[first + count] - v0;
  size_t vsize = m->precision == SE_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
  *s = (se_tdbem_slices){.precision = m->precision,
                         .n = m->n,
                         .kmax = m->kmax,
                         .first = first,
                         .count = count,
                         .n_rowvectors = n_rv,
                         .n_values = n_val};
  SE_CALLOC(err, s->slice_ptr, count + 1, "slice_ptr");
  SE_CALLOC(err, s->row, n_rv, "the row indices");
  SE_CALLOC(err, s->kstart, n_rv, "kstart");
  SE_CALLOC(err, s->val_ptr, n_rv + 1, "val_ptr");
  s->val = malloc((n_val > 0 ? (size_t)n_val : 1) * vsize); /* every value is read */
  if (!s->val)
    SE_FAIL(err, SE_ERR_NOMEM, "%s: out of memory for %lld values of slices [%lld, %lld)", in->path,
            (long long)n_val, (long long)first, (long long)(first + count));
  for (int64_t j = 0; j <= count; j++)
    s->slice_ptr[j] = in->slice_ptr[first + j] - r0;
  SE_TRY(read_val_ptr(in, fd, r0, n_rv, s, err));
  SE_TRY(read_rows_kstarts(in, fd, r0, n_rv, s, err));
  hsize_t dims[1];
  hid_t dset, type;
  SE_TRY(open_checked(in, P_VAL, NULL, H5T_FLOAT, 1, 1, dims, &dset, &type, err));
  int rc = read_range(in, fd, dset, type, P_VAL,
                      vsize == sizeof(float) ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE, vsize, v0,
                      n_val, s->val, err);
  for (int64_t i = 0; rc == SE_OK && i < n_val; i++) { /* a pass over what was just read */
    const double x = vsize == sizeof(float) ? (double)((const float *)s->val)[i]
                                            : ((const double *)s->val)[i];
    if (!isfinite(x))
      rc = se_error_set(err, SE_ERR_INPUT, __FILE__, __LINE__, __func__,
                        "%s: %s[%lld] = %g (a value of slices [%lld, %lld)) is not finite",
                        in->path, P_VAL, (long long)(v0 + i), x, (long long)first,
                        (long long)(first + count));
  }
  return close_dataset(dset, type, in->path, P_VAL, rc, err);
}

/* The local part of read_slices: checks the interval, opens the file for the direct reads (when
 * it cannot be opened, HDF5 reads everything) and reads the slices. */
static int read_slices_local(const se_input_tdbem *in, int64_t first, int64_t count,
                             se_tdbem_slices *s, se_error *err) {
  const se_tdbem_meta *m = &in->meta;
  if (first < 0 || count < 0 || first > m->n - count)
    SE_FAIL(err, SE_ERR_ARG, "%s: slices [%lld, %lld) are not within [0, N = %lld)", in->path,
            (long long)first, (long long)(first + count), (long long)m->n);
  const int fd = open(in->path, O_RDONLY | O_CLOEXEC);
  int rc = read_slice_arrays(in, fd, first, count, s, err);
  if (fd >= 0 && close(fd) != 0 && rc == SE_OK)
    rc = se_error_set(err, SE_ERR_IO, __FILE__, __LINE__, __func__, "%s: close failed: %s",
                      in->path, strerror(errno));
  return rc;
}

int se_input_tdbem_read_slices(se_input_tdbem_t in, int64_t first, int64_t count,
                               se_tdbem_slices *s, se_error *err) {
  if (!in || !s)
    SE_FAIL(err, SE_ERR_ARG, "se_input_tdbem_read_slices: no input or no slices");
  se_h5_quiet q;
  int began = se_h5_quiet_begin(&q, err), rc = began;
  if (rc == SE_OK)
    rc = read_slices_local(in, first, count, s, err);
  rc = end_quiet(&q, began, se_mpi_agree(in->comm, rc, err), err);
  if (rc != SE_OK)
    se_tdbem_slices_free(s);
  return rc;
}

/* ---- M0, positions, illumination ------------------------------------------------------------- */

/* Reads the integer M0 dataset path (nnz entries, each in [0, N - 1]) into out. */
static int read_m0_indices(const se_input_tdbem *in, const char *path, int64_t nnz, int32_t *out,
                           se_error *err) {
  char what[128];
  snprintf(what, sizeof what, "M0's indices are in [0, N - 1] = [0, %lld]",
           (long long)(in->meta.n - 1));
  hsize_t dims[1];
  hid_t dset, type;
  SE_TRY(open_checked(in, path, NULL, H5T_INTEGER, 1, 0, dims, &dset, &type, err));
  int rc = read_int32_checked(in, -1, dset, type, path, 0, nnz, 0, in->meta.n - 1, 0, what, out,
                              err);
  return close_dataset(dset, type, in->path, path, rc, err);
}

/* Rank 0's part of read_m0: reads and checks M0. */
static int read_m0_local(const se_input_tdbem *in, se_tdbem_m0 *m0, se_error *err) {
  const int64_t n = in->meta.n, nnz = in->meta.nnz0;
  const char *src = in->path;
  m0->nnz = nnz;
  SE_CALLOC(err, m0->row, nnz, P_M0_ROW);
  SE_CALLOC(err, m0->col, nnz, P_M0_COL);
  SE_CALLOC(err, m0->val, nnz, P_M0_VAL);
  SE_TRY(read_m0_indices(in, P_M0_ROW, nnz, m0->row, err));
  SE_TRY(read_m0_indices(in, P_M0_COL, nnz, m0->col, err));
  hsize_t dims[1];
  hid_t dset, type;
  SE_TRY(open_checked(in, P_M0_VAL, NULL, H5T_FLOAT, 1, 1, dims, &dset, &type, err));
  int rc = se_h5_read_rows(dset, H5T_NATIVE_DOUBLE, sizeof(double), 0, nnz, 1, m0->val, src,
                           P_M0_VAL, err);
  SE_TRY(close_dataset(dset, type, src, P_M0_VAL, rc, err));
  unsigned char *diagonal;
  SE_CALLOC(err, diagonal, n, "M0's diagonal");
  for (int64_t e = 0; e < nnz && rc == SE_OK; e++) {
    if (!isfinite(m0->val[e]))
      rc = se_error_set(err, SE_ERR_INPUT, __FILE__, __LINE__, __func__,
                        "%s: %s[%lld] = %g (M0 entry of row %d, col %d) is not finite", src,
                        P_M0_VAL, (long long)e, m0->val[e], m0->row[e], m0->col[e]);
    else if (m0->row[e] < m0->col[e])
      rc = se_error_set(
          err, SE_ERR_INPUT, __FILE__, __LINE__, __func__,
          "%s: M0 entry %lld (%s[%lld] = %d, %s[%lld] = %d) is above the diagonal: M0 is "
          "stored as its lower triangle (row >= col)",
          src, (long long)e, P_M0_ROW, (long long)e, m0->row[e], P_M0_COL, (long long)e,
          m0->col[e]);
    else if (m0->row[e] == m0->col[e] && !(m0->val[e] > 0))
      rc = se_error_set(err, SE_ERR_INPUT, __FILE__, __LINE__, __func__,
                        "%s: %s[%lld] = %g is the diagonal entry of row %d: M0 must be positive "
                        "definite (diagonal > 0)",
                        src, P_M0_VAL, (long long)e, m0->val[e], m0->row[e]);
    else if (m0->row[e] == m0->col[e])
      diagonal[m0->row[e]] = 1;
  }
  for (int64_t i = 0; i < n && rc == SE_OK; i++)
    if (!diagonal[i])
      rc = se_error_set(err, SE_ERR_INPUT, __FILE__, __LINE__, __func__,
                        "%s: M0 has no diagonal entry in row %lld: it must be positive definite",
                        src, (long long)i);
  free(diagonal);
  return rc;
}

int se_input_tdbem_read_m0(se_input_tdbem_t in, se_tdbem_m0 *m0, se_error *err) {
  if (!in || !m0)
    SE_FAIL(err, SE_ERR_ARG, "se_input_tdbem_read_m0: no input or no M0");
  *m0 = (se_tdbem_m0){.n = in->meta.n};
  se_h5_quiet q;
  int began = se_h5_quiet_begin(&q, err), rc = began;
  if (rc == SE_OK && in->rank == 0)
    rc = read_m0_local(in, m0, err);
  rc = end_quiet(&q, began, se_mpi_agree(in->comm, rc, err), err);
  if (rc != SE_OK)
    se_tdbem_m0_free(m0);
  return rc;
}

/* Rank 0's part of read_positions. */
static int read_positions_local(const se_input_tdbem *in, double *positions, se_error *err) {
  if (!in->meta.has_positions)
    SE_FAIL(err, SE_ERR_INPUT,
            "%s: %s is missing (it is optional, but the ordering asked for needs "
            "it)",
            in->path, P_POSITIONS);
  if (3 * in->meta.n > INT32_MAX)
    SE_FAIL(err, SE_ERR_UNSUPPORTED, "%s: %lld positions are too many to broadcast", in->path,
            (long long)in->meta.n);
  hsize_t dims[2];
  hid_t dset, type;
  SE_TRY(open_checked(in, P_POSITIONS, NULL, H5T_FLOAT, 2, 0, dims, &dset, &type, err));
  int rc = se_h5_read_rows(dset, H5T_NATIVE_DOUBLE, sizeof(double), 0, in->meta.n, 3, positions,
                           in->path, P_POSITIONS, err);
  return close_dataset(dset, type, in->path, P_POSITIONS, rc, err);
}

int se_input_tdbem_read_positions(se_input_tdbem_t in, double *positions, se_error *err) {
  if (!in || !positions)
    SE_FAIL(err, SE_ERR_ARG, "se_input_tdbem_read_positions: no input or no positions");
  se_h5_quiet q;
  int began = se_h5_quiet_begin(&q, err), rc = began;
  if (rc == SE_OK && in->rank == 0)
    rc = read_positions_local(in, positions, err);
  rc = se_mpi_agree(in->comm, rc, err);
  if (rc == SE_OK &&
      MPI_Bcast(positions, (int)(3 * in->meta.n), MPI_DOUBLE, 0, in->comm) != MPI_SUCCESS)
    rc = se_error_set(err, SE_ERR_MPI, __FILE__, __LINE__, __func__, "%s: broadcasting %s failed",
                      in->path, P_POSITIONS);
  return end_quiet(&q, began, rc, err);
}

/* The local part of read_illumination (rank 0 reads). */
static int read_illumination_local(const se_input_tdbem *in, int64_t step, int64_t count,
                                   double *rows, se_error *err) {
  const se_tdbem_meta *m = &in->meta;
  if (step < 0 || count < 0 || step > m->steps - count)
    SE_FAIL(err, SE_ERR_ARG, "%s: illumination rows [%lld, %lld) are not within [0, T = %lld)",
            in->path, (long long)step, (long long)(step + count), (long long)m->steps);
  if (in->rank != 0 || count == 0)
    return SE_OK;
  if (!rows)
    SE_FAIL(err, SE_ERR_ARG, "%s: no buffer for the illumination rows on rank 0", in->path);
  hsize_t dims[2];
  hid_t dset, type;
  SE_TRY(open_checked(in, P_ILLUMINATION, NULL, H5T_FLOAT, 2, 1, dims, &dset, &type, err));
  int rc = se_h5_read_rows(dset, H5T_NATIVE_DOUBLE, sizeof(double), step, count, m->n, rows,
                           in->path, P_ILLUMINATION, err);
  for (int64_t i = 0; rc == SE_OK && i < count * m->n; i++)
    if (!isfinite(rows[i]))
      rc = se_error_set(err, SE_ERR_INPUT, __FILE__, __LINE__, __func__,
                        "%s: %s[%lld][%lld] = %g (time step, unknown) is not finite", in->path,
                        P_ILLUMINATION, (long long)(step + i / m->n), (long long)(i % m->n),
                        rows[i]);
  return close_dataset(dset, type, in->path, P_ILLUMINATION, rc, err);
}

int se_input_tdbem_read_illumination(se_input_tdbem_t in, int64_t step, int64_t count, double *rows,
                                     se_error *err) {
  if (!in)
    SE_FAIL(err, SE_ERR_ARG, "se_input_tdbem_read_illumination: no input");
  se_h5_quiet q;
  int began = se_h5_quiet_begin(&q, err), rc = began;
  if (rc == SE_OK)
    rc = read_illumination_local(in, step, count, rows, err);
  return end_quiet(&q, began, se_mpi_agree(in->comm, rc, err), err);
}

int se_input_tdbem_close(se_input_tdbem_t in, se_error *err) {
  if (!in)
    return SE_OK;
  int rc = SE_OK;
  if (in->file >= 0 && H5Fclose(in->file) < 0)
    rc = se_error_set(err, SE_ERR_HDF5, __FILE__, __LINE__, __func__, "%s: H5Fclose failed",
                      in->path);
  rc = se_mpi_agree(in->comm, rc, err);
  return free_input(in, rc, err);
}
