/* The SONATA output file of the neurons workload, written collectively with parallel HDF5
 * (io/report.h, DESIGN.md Section 3, docs/output.md). */
#define _POSIX_C_SOURCE 200809L /* strerror_r (XSI) */

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5_util.h"
#include "report.h"

/* Largest chunk of /report/<population>/data, bytes. */
#define REPORT_CHUNK_BYTES ((int64_t)1 << 20)

typedef struct se_report se_report;

struct se_report {
  MPI_Comm comm; /* our duplicate of the caller's communicator */
  int rank, size;
  char *path;       /* the final name */
  char *tmp_path;   /* "<path>.tmp", the file being written until close */
  char *population; /* for the group names and messages */
  hid_t file;       /* open from se_report_open to se_report_close */
  hid_t data;       /* /report/<population>/data */
  hid_t simengine;  /* /simengine */
  hid_t dxpl;       /* collective MPI-IO transfer */
  int float64;      /* data stored as double (else float) */
  int64_t n_frames;
  int64_t col_offset, n_local_cols; /* this rank's columns of data */
  int64_t buffer_frames;            /* rows of buffer */
  int64_t buffered;                 /* rows in buffer now */
  int64_t appended;                 /* frames appended so far */
  void *buffer;                     /* [buffer_frames x n_local_cols], float or double */
  double flush_seconds;             /* rank 0's value decides */
  double last_flush;                /* MPI_Wtime of the last flush, rank 0 */
  int spikes_written;
};

/* One spike as gathered on rank 0. */
typedef struct report_spike {
  double time;
  uint64_t gid;
} report_spike;

/* ------------------------------------------------------------------------------------------ */
/* Small helpers                                                                              */
/* ------------------------------------------------------------------------------------------ */

/* Closes id with closer when it is valid. Returns rc, or the close failure when rc is SE_OK. */
static int close_id(hid_t id, herr_t (*closer)(hid_t), const char *what, int rc, se_error *err) {
  if (id < 0)
    return rc;
  herr_t status = closer(id);
  if (rc != SE_OK)
    return rc;
  SE_H5_CHECK(err, status, "closing %s", what);
  return SE_OK;
}

/* 64-bit FNV-1a hash of s, to compare strings over the ranks. */
static int64_t hash_string(const char *s) {
  uint64_t h = 1469598103934665603u;
  for (; *s; s++)
    h = (h ^ (unsigned char)*s) * 1099511628211u;
  int64_t out;
  memcpy(&out, &h, sizeof out);
  return out;
}

/* The bits of x as an int64 (equal values on all ranks give equal bits). */
static int64_t double_bits(double x) {
  int64_t out;
  memcpy(&out, &x, sizeof out);
  return out;
}

/* Creates the one-dimensional dataset path (absolute, in the file of loc; file names it in
 * messages) of n_global entries and writes this rank's count entries of buf at offset,
 * collectively. */
static int write_dataset_1d(hid_t loc, const char *file, const char *path, hid_t file_type,
                            hid_t mem_type, int64_t n_global, int64_t offset, int64_t count,
                            const void *buf, hid_t dxpl, se_error *err) {
  hid_t dset = H5I_INVALID_HID;
  hsize_t dims[1] = {(hsize_t)n_global};
  SE_TRY(se_h5_create_dataset(loc, file, path, file_type, 1, dims, &dset, err));
  hsize_t start[1] = {(hsize_t)offset}, cnt[1] = {(hsize_t)count};
  int rc = se_h5_write_block(dset, mem_type, 1, start, cnt, buf, dxpl, file, path, err);
  return close_id(dset, H5Dclose, path, rc, err);
}

/* Writes the scalar attribute name on obj (replacing one of that name) from value, of mem_type,
 * stored as file_type. Collective in a parallel file: same value on every rank. */
static int write_attr(hid_t obj, const char *name, hid_t file_type, hid_t mem_type,
                      const void *value, se_error *err) {
  int rc = SE_OK;
  hid_t space = H5I_INVALID_HID, attr = H5I_INVALID_HID;
  htri_t exists = H5Aexists(obj, name);
  SE_H5_CHECK_GOTO(err, rc, done, exists, "attribute %s", name);
  if (exists)
    SE_H5_CHECK_GOTO(err, rc, done, H5Adelete(obj, name), "replacing attribute %s", name);
  SE_H5_CHECK_GOTO(err, rc, done, space = H5Screate(H5S_SCALAR), "attribute %s", name);
  SE_H5_CHECK_GOTO(err, rc, done,
                   attr = H5Acreate2(obj, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT),
                   "attribute %s", name);
  SE_H5_CHECK_GOTO(err, rc, done, H5Awrite(attr, mem_type, value), "attribute %s", name);
done:
  rc = close_id(attr, H5Aclose, name, rc, err);
  return close_id(space, H5Sclose, "an attribute space", rc, err);
}

/* A variable-length UTF-8 string attribute (h5py reads it as str). */
static int write_string_attr(hid_t obj, const char *name, const char *value, se_error *err) {
  int rc = SE_OK;
  hid_t type = H5Tcopy(H5T_C_S1);
  SE_H5_CHECK(err, type, "string type of attribute %s", name);
  SE_H5_CHECK_GOTO(err, rc, done, H5Tset_size(type, H5T_VARIABLE), "attribute %s", name);
  SE_H5_CHECK_GOTO(err, rc, done, H5Tset_cset(type, H5T_CSET_UTF8), "attribute %s", name);
  rc = write_attr(obj, name, type, type, &value, err);
done:
  return close_id(type, H5Tclose, "a string type", rc, err);
}

/* The SONATA `sorting` attribute of a spikes group: uint8 enum {none 0, by_id 1, by_time 2},
 * value by_time. */
static int write_sorting_attr(hid_t group, se_error *err) {
  static const char *const names[] = {"none", "by_id", "by_time"};
  int rc = SE_OK;
  hid_t type = H5Tenum_create(H5T_STD_U8LE);
  SE_H5_CHECK(err, type, "enum type of attribute sorting");
  for (uint8_t v = 0; v < 3; v++)
    SE_H5_CHECK_GOTO(err, rc, done, H5Tenum_insert(type, names[v], &v), "sorting member %s",
                     names[v]);
  const uint8_t by_time = 2;
  rc = write_attr(group, "sorting", type, type, &by_time, err);
done:
  return close_id(type, H5Tclose, "the sorting type", rc, err);
}

/* ------------------------------------------------------------------------------------------ */
/* Open                                                                                        */
/* ------------------------------------------------------------------------------------------ */

/* Checks path and spec on this rank (no communication); *n_local_cols gets the rank's columns. */
static int check_spec(const char *path, const se_report_spec *s, int64_t *n_local_cols,
                      se_error *err) {
  if (!path || !path[0])
    SE_FAIL(err, SE_ERR_ARG, "the report path is empty");
  if (!s)
    SE_FAIL(err, SE_ERR_ARG, "%s: the report spec is NULL", path);
  if (!s->population || !s->population[0] || strchr(s->population, '/'))
    SE_FAIL(err, SE_ERR_ARG, "%s: population name '%s' must be non-empty and without '/'", path,
            s->population ? s->population : "(null)");
  if (s->float64 != 0 && s->float64 != 1)
    SE_FAIL(err, SE_ERR_ARG, "%s: float64 is %d, expected 0 or 1", path, s->float64);
  if (s->n_frames < 0)
    SE_FAIL(err, SE_ERR_ARG, "%s: n_frames is %" PRId64 ", expected >= 0", path, s->n_frames);
  if (s->buffer_frames < 1)
    SE_FAIL(err, SE_ERR_ARG, "%s: buffer_frames is %" PRId64 ", expected >= 1", path,
            s->buffer_frames);
  if (!isfinite(s->t_start) || !isfinite(s->t_stop) || !(s->t_step > 0) || !isfinite(s->t_step) ||
      s->t_stop < s->t_start)
    SE_FAIL(err, SE_ERR_ARG, "%s: recorded times start %g, stop %g, step %g: expected finite "
            "values with step > 0 and stop >= start", path, s->t_start, s->t_stop, s->t_step);
  double frames = (s->t_stop - s->t_start) / s->t_step;
  if (fabs(frames - (double)s->n_frames) >= 0.5)
    SE_FAIL(err, SE_ERR_ARG, "%s: (stop - start) / step = (%g - %g) / %g = %g frames, but "
            "n_frames is %" PRId64 " (stop is exclusive: stop = start + n_frames * step)",
            path, s->t_stop, s->t_start, s->t_step, frames, s->n_frames);
  if (s->n_local_cells < 0)
    SE_FAIL(err, SE_ERR_ARG, "%s: n_local_cells is %" PRId64, path, s->n_local_cells);
  if (s->n_local_cells > 0 && (!s->local_node_ids || !s->local_elements_per_cell))
    SE_FAIL(err, SE_ERR_ARG, "%s: %" PRId64 " local cells but local_node_ids or "
            "local_elements_per_cell is NULL", path, s->n_local_cells);
  int64_t cols = 0;
  for (int64_t c = 0; c < s->n_local_cells; c++) {
    if (s->local_elements_per_cell[c] < 0)
      SE_FAIL(err, SE_ERR_ARG, "%s: local cell %" PRId64 " (gid %" PRIu64 ") has %" PRId64
              " elements", path, c, s->local_node_ids[c], s->local_elements_per_cell[c]);
    cols += s->local_elements_per_cell[c];
  }
  if (cols > 0 && !s->local_element_ids)
    SE_FAIL(err, SE_ERR_ARG, "%s: %" PRId64 " local elements but local_element_ids is NULL",
            path, cols);
  *n_local_cols = cols;
  return SE_OK;
}

/* Checks that the settings that must match do match on every rank (the outcome is the same on
 * every rank) and sets *buffer_frames to the smallest buffer_frames of the ranks (ranks may size
 * their buffers differently; the writes are collective, so one value is used). Collective. */
static int check_same_everywhere(MPI_Comm comm, const char *path, const se_report_spec *s,
                                 int64_t *buffer_frames, se_error *err) {
  enum { N = 8, SAME = 7 }; /* the first SAME entries must match */
  static const char *const names[SAME] = {"path",    "population", "float64", "n_frames",
                                          "t_start", "t_stop",     "t_step"};
  int64_t mine[N] = {hash_string(path),     hash_string(s->population), s->float64,
                     s->n_frames,           double_bits(s->t_start),    double_bits(s->t_stop),
                     double_bits(s->t_step), s->buffer_frames};
  int64_t lo[N], hi[N];
  SE_MPI_CHECK(err, MPI_Allreduce(mine, lo, N, MPI_INT64_T, MPI_MIN, comm));
  SE_MPI_CHECK(err, MPI_Allreduce(mine, hi, N, MPI_INT64_T, MPI_MAX, comm));
  for (int i = 0; i < SAME; i++)
    if (lo[i] != hi[i])
      SE_FAIL(err, SE_ERR_ARG, "%s: the report's %s differs between ranks", path, names[i]);
  *buffer_frames = lo[N - 1];
  return SE_OK;
}

/* Creates "<path>.tmp" and the report: /simengine, /report/<population>/data and the mapping,
 * written collectively. n_cells/n_cols are the totals, cell_offset/col_offset this rank's
 * start. */
static int create_file(se_report *r, const se_report_spec *s, int64_t n_cells, int64_t n_cols,
                       int64_t cell_offset, uint64_t *index_pointers, se_error *err) {
  int rc = SE_OK;
  hid_t fapl = H5I_INVALID_HID, dcpl = H5I_INVALID_HID, space = H5I_INVALID_HID;
  hid_t report = H5I_INVALID_HID, pop = H5I_INVALID_HID, mapping = H5I_INVALID_HID;
  hid_t time = H5I_INVALID_HID;
  const char *file = r->tmp_path;
  char where[512];

  SE_H5_CHECK_GOTO(err, rc, done, fapl = H5Pcreate(H5P_FILE_ACCESS), "%s", file);
  SE_H5_CHECK_GOTO(err, rc, done, H5Pset_fapl_mpio(fapl, r->comm, MPI_INFO_NULL), "%s", file);
  /* Every rank performs the same metadata operations: let HDF5 do them collectively. */
  SE_H5_CHECK_GOTO(err, rc, done, H5Pset_all_coll_metadata_ops(fapl, 1), "%s", file);
  SE_H5_CHECK_GOTO(err, rc, done, H5Pset_coll_metadata_write(fapl, 1), "%s", file);
  SE_H5_CHECK_GOTO(err, rc, done, r->file = H5Fcreate(file, H5F_ACC_TRUNC, H5P_DEFAULT, fapl),
                   "creating %s", file);
  SE_H5_CHECK_GOTO(err, rc, done, r->dxpl = H5Pcreate(H5P_DATASET_XFER), "%s", file);
  SE_H5_CHECK_GOTO(err, rc, done, H5Pset_dxpl_mpio(r->dxpl, H5FD_MPIO_COLLECTIVE), "%s", file);
  SE_H5_CHECK_GOTO(err, rc, done,
                   r->simengine = H5Gcreate2(r->file, "simengine", H5P_DEFAULT, H5P_DEFAULT,
                                             H5P_DEFAULT),
                   "%s: /simengine", file);
  SE_H5_CHECK_GOTO(err, rc, done,
                   report = H5Gcreate2(r->file, "report", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                   "%s: /report", file);
  snprintf(where, sizeof where, "%s: /report/%s", file, r->population);
  SE_H5_CHECK_GOTO(err, rc, done,
                   pop = H5Gcreate2(report, r->population, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                   "%s", where);

  /* data [n_frames x n_cols]. Chunks of whole buffers of rows, so that each collective write
   * covers whole chunk rows, and at most REPORT_CHUNK_BYTES. Chunks must have non-zero sides
   * within the fixed dimensions, so an empty dataset is contiguous. No filters: unfiltered
   * chunks are written in place by every rank that has columns in them, while filtered ones go
   * through HDF5 1.10's collective chunk-owner path. Fill never: every value is written once. */
  hsize_t dims[2] = {(hsize_t)s->n_frames, (hsize_t)n_cols};
  size_t value_size = r->float64 ? sizeof(double) : sizeof(float);
  SE_H5_CHECK_GOTO(err, rc, done, dcpl = H5Pcreate(H5P_DATASET_CREATE), "%s/data", where);
  SE_H5_CHECK_GOTO(err, rc, done, H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER), "%s/data",
                   where);
  if (s->n_frames > 0 && n_cols > 0) {
    int64_t max_rows = REPORT_CHUNK_BYTES / (int64_t)value_size;
    int64_t rows = r->buffer_frames < max_rows ? r->buffer_frames : max_rows;
    int64_t cols = REPORT_CHUNK_BYTES / ((int64_t)value_size * rows);
    cols = cols < n_cols ? cols : n_cols;
    hsize_t chunk[2] = {(hsize_t)rows, (hsize_t)cols};
    SE_H5_CHECK_GOTO(err, rc, done, H5Pset_chunk(dcpl, 2, chunk), "%s/data", where);
  }
  SE_H5_CHECK_GOTO(err, rc, done, space = H5Screate_simple(2, dims, NULL), "%s/data", where);
  SE_H5_CHECK_GOTO(err, rc, done,
                   r->data = H5Dcreate2(pop, "data", r->float64 ? H5T_IEEE_F64LE : H5T_IEEE_F32LE,
                                        space, H5P_DEFAULT, dcpl, H5P_DEFAULT),
                   "%s/data", where);
  SE_TRY_GOTO(rc, done, write_string_attr(r->data, "units", "mV", err));

  /* mapping: each rank writes its cells and columns; the last rank also the closing pointer. */
  SE_H5_CHECK_GOTO(err, rc, done,
                   mapping = H5Gcreate2(pop, "mapping", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                   "%s/mapping", where);
  char path[512]; /* the dataset being written */
  snprintf(path, sizeof path, "/report/%s/mapping/node_ids", r->population);
  SE_TRY_GOTO(rc, done, write_dataset_1d(mapping, file, path, H5T_STD_U64LE, H5T_NATIVE_UINT64,
                                         n_cells, cell_offset, s->n_local_cells,
                                         s->local_node_ids, r->dxpl, err));
  int64_t n_pointers = s->n_local_cells + (r->rank == r->size - 1);
  snprintf(path, sizeof path, "/report/%s/mapping/index_pointers", r->population);
  SE_TRY_GOTO(rc, done,
              write_dataset_1d(mapping, file, path, H5T_STD_U64LE, H5T_NATIVE_UINT64, n_cells + 1,
                               cell_offset, n_pointers, index_pointers, r->dxpl, err));
  snprintf(path, sizeof path, "/report/%s/mapping/element_ids", r->population);
  SE_TRY_GOTO(rc, done, write_dataset_1d(mapping, file, path, H5T_STD_U32LE, H5T_NATIVE_UINT32,
                                         n_cols, r->col_offset, r->n_local_cols,
                                         s->local_element_ids, r->dxpl, err));
  const double t[3] = {s->t_start, s->t_stop, s->t_step};
  const hsize_t t_dims[1] = {3}, t0[1] = {0}, tn[1] = {r->rank == 0 ? 3 : 0};
  snprintf(path, sizeof path, "/report/%s/mapping/time", r->population);
  SE_TRY_GOTO(rc, done, se_h5_create_dataset(mapping, file, path, H5T_IEEE_F64LE, 1, t_dims, &time,
                                             err));
  SE_TRY_GOTO(rc, done, write_string_attr(time, "units", "ms", err));
  SE_TRY_GOTO(rc, done, se_h5_write_block(time, H5T_NATIVE_DOUBLE, 1, t0, tn, t, r->dxpl, file,
                                          path, err));
done:
  rc = close_id(time, H5Dclose, "mapping/time", rc, err);
  rc = close_id(mapping, H5Gclose, "the mapping group", rc, err);
  rc = close_id(pop, H5Gclose, "the population group", rc, err);
  rc = close_id(report, H5Gclose, "/report", rc, err);
  rc = close_id(space, H5Sclose, "the data space", rc, err);
  rc = close_id(dcpl, H5Pclose, "the dataset creation list", rc, err);
  return close_id(fapl, H5Pclose, "the file access list", rc, err);
}

/* Copies the strings of the report and sizes its buffer and index pointers (no communication). */
static int fill_local(se_report *r, const char *path, const se_report_spec *s, int64_t n_cols,
                      uint64_t **index_pointers, se_error *err) {
  size_t n = strlen(path);
  SE_CALLOC(err, r->path, n + 1, "the report path");
  SE_CALLOC(err, r->tmp_path, n + 5, "the report path");
  SE_CALLOC(err, r->population, strlen(s->population) + 1, "the population name");
  memcpy(r->path, path, n);
  snprintf(r->tmp_path, n + 5, "%s.tmp", path);
  strcpy(r->population, s->population);
  size_t value_size = r->float64 ? sizeof(double) : sizeof(float);
  size_t bytes = (size_t)(r->buffer_frames * r->n_local_cols) * value_size;
  r->buffer = calloc(bytes ? bytes : 1, 1);
  if (!r->buffer)
    SE_FAIL(err, SE_ERR_NOMEM, "%s: out of memory for a buffer of %" PRId64 " x %" PRId64
            " values", path, r->buffer_frames, r->n_local_cols);
  uint64_t *ip;
  SE_CALLOC(err, ip, s->n_local_cells + 1, "the index pointers");
  *index_pointers = ip;
  int64_t col = r->col_offset;
  for (int64_t c = 0; c < s->n_local_cells; c++) {
    ip[c] = (uint64_t)col;
    col += s->local_elements_per_cell[c];
  }
  ip[s->n_local_cells] = (uint64_t)n_cols; /* written by the last rank only */
  return SE_OK;
}

/* Frees r (its HDF5 handles must be closed) and its communicator. Returns rc, or the failure of
 * MPI_Comm_free when rc is SE_OK. */
static int free_report(se_report *r, int rc, se_error *err) {
  int mpi_rc = r->comm != MPI_COMM_NULL ? MPI_Comm_free(&r->comm) : MPI_SUCCESS;
  free(r->buffer);
  free(r->population);
  free(r->tmp_path);
  free(r->path);
  free(r);
  if (rc == SE_OK && mpi_rc != MPI_SUCCESS)
    return se_error_set(err, SE_ERR_MPI, __FILE__, __LINE__, __func__, "MPI_Comm_free failed");
  return rc;
}

int se_report_open(const char *path, MPI_Comm comm, const se_report_spec *spec,
                   se_report_t *report, se_error *err) {
  if (!report)
    SE_FAIL(err, SE_ERR_ARG, "report is NULL");
  *report = NULL;
  se_report *r;
  SE_CALLOC(err, r, 1, "the report");
  r->comm = MPI_COMM_NULL;
  r->file = r->data = r->simengine = r->dxpl = H5I_INVALID_HID;
  if (MPI_Comm_dup(comm, &r->comm) != MPI_SUCCESS ||
      MPI_Comm_rank(r->comm, &r->rank) != MPI_SUCCESS ||
      MPI_Comm_size(r->comm, &r->size) != MPI_SUCCESS)
    return free_report(r, se_error_set(err, SE_ERR_MPI, __FILE__, __LINE__, __func__,
                                       "%s: duplicating the communicator failed",
                                       path ? path : "(null)"), err);

  /* Local checks, agreed; then the settings that must match; then the offsets. */
  int rc = se_mpi_agree(r->comm, check_spec(path, spec, &r->n_local_cols, err), err);
  if (rc == SE_OK)
    rc = check_same_everywhere(r->comm, path, spec, &r->buffer_frames, err);
  if (rc != SE_OK)
    return free_report(r, rc, err);
  r->float64 = spec->float64;
  r->n_frames = spec->n_frames;
  /* no larger than the run: the buffer and the chunk rows */
  r->buffer_frames = r->buffer_frames < r->n_frames ? r->buffer_frames : r->n_frames;
  r->buffer_frames = r->buffer_frames > 0 ? r->buffer_frames : 1;
  r->flush_seconds = spec->flush_seconds;
  r->last_flush = MPI_Wtime();

  int64_t local[2] = {spec->n_local_cells, r->n_local_cols}, offset[2] = {0, 0}, total[2];
  uint64_t *index_pointers = NULL;
  if (MPI_Exscan(local, offset, 2, MPI_INT64_T, MPI_SUM, r->comm) != MPI_SUCCESS ||
      MPI_Allreduce(local, total, 2, MPI_INT64_T, MPI_SUM, r->comm) != MPI_SUCCESS)
    return free_report(r, se_error_set(err, SE_ERR_MPI, __FILE__, __LINE__, __func__,
                                       "%s: MPI_Exscan or MPI_Allreduce of the column counts "
                                       "failed", path), err);
  if (r->rank == 0)
    offset[0] = offset[1] = 0; /* MPI_Exscan leaves rank 0's result undefined */
  r->col_offset = offset[1];

  rc = se_mpi_agree(r->comm, fill_local(r, path, spec, total[1], &index_pointers, err), err);
  if (rc == SE_OK)
    rc = se_mpi_agree(r->comm,
                      create_file(r, spec, total[0], total[1], offset[0], index_pointers, err),
                      err);
  free(index_pointers);
  if (rc != SE_OK) {
    se_error ignored;
    se_report_close(r, 0, &ignored);
    return rc;
  }
  *report = r;
  return SE_OK;
}

/* ------------------------------------------------------------------------------------------ */
/* Frames                                                                                      */
/* ------------------------------------------------------------------------------------------ */

/* Writes the buffered rows with one collective H5Dwrite and empties the buffer. */
static int write_buffer(se_report *r, se_error *err) {
  if (r->buffered == 0)
    return SE_OK;
  hsize_t start[2] = {(hsize_t)(r->appended - r->buffered), (hsize_t)r->col_offset};
  hsize_t count[2] = {(hsize_t)r->buffered, (hsize_t)r->n_local_cols};
  char what[512];
  snprintf(what, sizeof what, "frames %" PRId64 "..%" PRId64 " of /report/%s/data",
           r->appended - r->buffered, r->appended - 1, r->population);
  SE_TRY(se_h5_write_block(r->data, r->float64 ? H5T_NATIVE_DOUBLE : H5T_NATIVE_FLOAT, 2, start,
                           count, r->buffer, r->dxpl, r->tmp_path, what, err));
  r->buffered = 0;
  return SE_OK;
}

/* Flushes the file when rank 0 has seen more than flush_seconds since the last flush (its
 * decision is broadcast, so the collective H5Fflush is called by all ranks or none). */
static int maybe_flush(se_report *r, se_error *err) {
  int flush = 0;
  if (r->rank == 0)
    flush = r->flush_seconds > 0 && MPI_Wtime() - r->last_flush > r->flush_seconds;
  SE_MPI_CHECK(err, MPI_Bcast(&flush, 1, MPI_INT, 0, r->comm));
  if (!flush)
    return SE_OK;
  SE_H5_CHECK(err, H5Fflush(r->file, H5F_SCOPE_GLOBAL), "%s", r->tmp_path);
  r->last_flush = MPI_Wtime();
  return SE_OK;
}

int se_report_append(se_report_t r, const double *local_values, se_error *err) {
  if (!r)
    SE_FAIL(err, SE_ERR_ARG, "report is NULL");
  if (r->appended >= r->n_frames)
    SE_FAIL(err, SE_ERR_ARG, "%s: appending frame index %" PRId64 " to a report of %" PRId64
            " frames", r->path, r->appended, r->n_frames);
  if (r->n_local_cols > 0 && !local_values)
    SE_FAIL(err, SE_ERR_ARG, "%s: local_values is NULL for %" PRId64 " local columns", r->path,
            r->n_local_cols);
  int64_t n = r->n_local_cols, row = r->buffered;
  int rc = SE_OK;
  if (r->float64) {
    if (n > 0)
      memcpy((double *)r->buffer + row * n, local_values, (size_t)n * sizeof(double));
  } else {
    float *dst = (float *)r->buffer + row * n;
    for (int64_t j = 0; j < n; j++) {
      /* a finite double beyond float's range would be stored as inf (and the cast is undefined):
       * refused, but the frame still goes through (the buffer's write is collective and the
       * other ranks may not have failed); the failed run leaves no output */
      double x = local_values[j];
      if (!(fabs(x) <= FLT_MAX)) {
        if (rc == SE_OK)
          rc = se_error_set(err, SE_ERR_NUMERIC, __FILE__, __LINE__, __func__,
                            "%s: recorded value %g (column %" PRId64 " of frame %" PRId64
                            ") does not fit the float32 report data: check v_init and the "
                            "biophysics, or record float64",
                            r->path, x, r->col_offset + j, r->appended);
        x = 0.0;
      }
      dst[j] = (float)x;
    }
  }
  r->buffered++;
  r->appended++;
  if (r->buffered < r->buffer_frames)
    return rc;
  se_error later = {0}; /* after a refused value, its message is the one to keep */
  se_error *write_err = rc == SE_OK ? err : &later;
  const int wrc = write_buffer(r, write_err);
  const int frc = wrc == SE_OK ? maybe_flush(r, write_err) : wrc;
  return rc != SE_OK ? rc : frc;
}

/* ------------------------------------------------------------------------------------------ */
/* Spikes                                                                                      */
/* ------------------------------------------------------------------------------------------ */

/* Orders spikes by time, then gid. */
static int compare_spikes(const void *a, const void *b) {
  const report_spike *x = a, *y = b;
  if (x->time != y->time)
    return x->time < y->time ? -1 : 1;
  return (x->gid > y->gid) - (x->gid < y->gid);
}

/* Checks this rank's spikes (no communication). */
static int check_spikes(const se_report *r, int64_t n_local, const double *time,
                        const uint64_t *gid, se_error *err) {
  if (r->spikes_written)
    SE_FAIL(err, SE_ERR_ARG, "%s: the spikes are already written", r->path);
  if (n_local < 0 || n_local > INT_MAX)
    SE_FAIL(err, SE_ERR_ARG, "%s: %" PRId64 " local spikes (0 to %d)", r->path, n_local, INT_MAX);
  if (n_local > 0 && (!time || !gid))
    SE_FAIL(err, SE_ERR_ARG, "%s: %" PRId64 " local spikes but time or gid is NULL", r->path,
            n_local);
  for (int64_t i = 0; i < n_local; i++)
    if (!isfinite(time[i]))
      SE_FAIL(err, SE_ERR_ARG, "%s: spike %" PRId64 " (gid %" PRIu64 ") has time %g", r->path, i,
              gid[i], time[i]);
  return SE_OK;
}

/* Sets counts[p] to the spikes of rank p (n_local here), displs to their place in the gathered
 * array and *n_total to their sum, the same on every rank. Collective. */
static int count_spikes(const se_report *r, int64_t n_local, int *counts, int *displs,
                        int64_t *n_total, se_error *err) {
  int n = (int)n_local; /* <= INT_MAX: checked by check_spikes */
  SE_MPI_CHECK(err, MPI_Allgather(&n, 1, MPI_INT, counts, 1, MPI_INT, r->comm));
  int64_t total = 0;
  for (int p = 0; p < r->size; p++) {
    displs[p] = (int)(total < INT_MAX ? total : INT_MAX);
    total += counts[p];
  }
  if (total > INT_MAX) /* the same decision on every rank */
    SE_FAIL(err, SE_ERR_UNSUPPORTED, "%s: %" PRId64 " spikes, more than MPI_Gatherv's %d",
            r->path, total, INT_MAX);
  *n_total = total;
  return SE_OK;
}

/* Gathers every rank's spikes (mine, n_local) into all on rank 0 and sorts them by time, then
 * gid. Collective. */
static int gather_spikes(const se_report *r, const report_spike *mine, int64_t n_local,
                         const int *counts, const int *displs, report_spike *all, int64_t n_total,
                         se_error *err) {
  MPI_Datatype type;
  SE_MPI_CHECK(err, MPI_Type_contiguous((int)sizeof(report_spike), MPI_BYTE, &type));
  int rc = MPI_Type_commit(&type);
  if (rc == MPI_SUCCESS)
    rc = MPI_Gatherv(mine, (int)n_local, type, all, counts, displs, type, 0, r->comm);
  int free_rc = MPI_Type_free(&type);
  SE_MPI_CHECK(err, rc);
  SE_MPI_CHECK(err, free_rc);
  if (r->rank == 0)
    qsort(all, (size_t)n_total, sizeof(report_spike), compare_spikes);
  return SE_OK;
}

/* Creates /spikes/<population> and writes n spikes of all (rank 0; others write nothing) into
 * timestamps and node_ids, collectively. */
static int write_spike_datasets(se_report *r, const report_spike *all, int64_t n, double *times,
                                uint64_t *gids, se_error *err) {
  int rc = SE_OK;
  hid_t spikes = H5I_INVALID_HID, pop = H5I_INVALID_HID, ts = H5I_INVALID_HID;
  char where[512];
  snprintf(where, sizeof where, "%s: /spikes/%s", r->tmp_path, r->population);
  int64_t mine = r->rank == 0 ? n : 0;
  for (int64_t i = 0; i < mine; i++) {
    times[i] = all[i].time;
    gids[i] = all[i].gid;
  }
  SE_H5_CHECK_GOTO(err, rc, done,
                   spikes = H5Gcreate2(r->file, "spikes", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                   "%s: /spikes", r->tmp_path);
  SE_H5_CHECK_GOTO(err, rc, done,
                   pop = H5Gcreate2(spikes, r->population, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                   "%s", where);
  SE_TRY_GOTO(rc, done, write_sorting_attr(pop, err));
  char path[512]; /* the dataset being written */
  const hsize_t dims[1] = {(hsize_t)n}, start[1] = {0}, count[1] = {(hsize_t)mine};
  snprintf(path, sizeof path, "/spikes/%s/timestamps", r->population);
  SE_TRY_GOTO(rc, done,
              se_h5_create_dataset(pop, r->tmp_path, path, H5T_IEEE_F64LE, 1, dims, &ts, err));
  SE_TRY_GOTO(rc, done, write_string_attr(ts, "units", "ms", err));
  SE_TRY_GOTO(rc, done, se_h5_write_block(ts, H5T_NATIVE_DOUBLE, 1, start, count, times, r->dxpl,
                                          r->tmp_path, path, err));
  snprintf(path, sizeof path, "/spikes/%s/node_ids", r->population);
  SE_TRY_GOTO(rc, done, write_dataset_1d(pop, r->tmp_path, path, H5T_STD_U64LE, H5T_NATIVE_UINT64,
                                         n, 0, mine, gids, r->dxpl, err));
done:
  rc = close_id(ts, H5Dclose, "the spike timestamps", rc, err);
  rc = close_id(pop, H5Gclose, "the spikes population group", rc, err);
  return close_id(spikes, H5Gclose, "/spikes", rc, err);
}

int se_report_write_spikes(se_report_t r, int64_t n_local, const double *time,
                           const uint64_t *gid, se_error *err) {
  if (!r)
    SE_FAIL(err, SE_ERR_ARG, "report is NULL");
  SE_TRY(se_mpi_agree(r->comm, check_spikes(r, n_local, time, gid, err), err));
  /* Each step's outcome is agreed before the next collective call. */
  report_spike *mine = calloc((size_t)n_local + 1, sizeof *mine), *all = NULL;
  int *counts = calloc((size_t)r->size, sizeof *counts);
  int *displs = calloc((size_t)r->size, sizeof *displs);
  double *times = NULL;
  uint64_t *gids = NULL;
  int64_t n = 0;
  int rc = SE_OK;
  if (!mine || !counts || !displs)
    rc = se_error_set(err, SE_ERR_NOMEM, __FILE__, __LINE__, __func__,
                      "%s: out of memory gathering %" PRId64 " spikes", r->path, n_local);
  if ((rc = se_mpi_agree(r->comm, rc, err)) == SE_OK)
    rc = se_mpi_agree(r->comm, count_spikes(r, n_local, counts, displs, &n, err), err);
  if (rc == SE_OK) {
    for (int64_t i = 0; i < n_local; i++)
      mine[i] = (report_spike){time[i], gid[i]};
    size_t here = r->rank == 0 ? (size_t)n + 1 : 1; /* rank 0 holds them all */
    all = calloc(here, sizeof *all);
    times = calloc(here, sizeof *times);
    gids = calloc(here, sizeof *gids);
    if (!all || !times || !gids)
      rc = se_error_set(err, SE_ERR_NOMEM, __FILE__, __LINE__, __func__,
                        "%s: out of memory for %" PRId64 " spikes", r->path, n);
    rc = se_mpi_agree(r->comm, rc, err);
  }
  if (rc == SE_OK)
    rc = se_mpi_agree(r->comm, gather_spikes(r, mine, n_local, counts, displs, all, n, err), err);
  if (rc == SE_OK)
    rc = se_mpi_agree(r->comm, write_spike_datasets(r, all, n, times, gids, err), err);
  r->spikes_written = rc == SE_OK;
  free(gids);
  free(times);
  free(all);
  free(displs);
  free(counts);
  free(mine);
  return rc;
}

/* ------------------------------------------------------------------------------------------ */
/* Metadata                                                                                    */
/* ------------------------------------------------------------------------------------------ */

/* Checks the arguments common to the se_report_meta_* functions. */
static int check_meta(const se_report *r, const char *name, se_error *err) {
  if (!r)
    SE_FAIL(err, SE_ERR_ARG, "report is NULL");
  if (!name || !name[0])
    SE_FAIL(err, SE_ERR_ARG, "%s: empty /simengine attribute name", r->path);
  return SE_OK;
}

int se_report_meta_string(se_report_t r, const char *name, const char *value, se_error *err) {
  SE_TRY(check_meta(r, name, err));
  if (!value)
    SE_FAIL(err, SE_ERR_ARG, "%s: /simengine attribute %s is NULL", r->path, name);
  return write_string_attr(r->simengine, name, value, err);
}

int se_report_meta_int(se_report_t r, const char *name, int64_t value, se_error *err) {
  SE_TRY(check_meta(r, name, err));
  return write_attr(r->simengine, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value, err);
}

int se_report_meta_double(se_report_t r, const char *name, double value, se_error *err) {
  SE_TRY(check_meta(r, name, err));
  return write_attr(r->simengine, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value, err);
}

/* ------------------------------------------------------------------------------------------ */
/* Close                                                                                       */
/* ------------------------------------------------------------------------------------------ */

/* Writes what the file still lacks: the partial buffer, and empty spikes when none were written. */
static int finish(se_report *r, se_error *err) {
  if (r->appended != r->n_frames)
    SE_FAIL(err, SE_ERR_ARG, "%s: %" PRId64 " of %" PRId64 " frames appended at close", r->path,
            r->appended, r->n_frames);
  SE_TRY(write_buffer(r, err));
  if (!r->spikes_written)
    SE_TRY(se_report_write_spikes(r, 0, NULL, NULL, err));
  return SE_OK;
}

/* Rank 0: renames the temporary file to the final path (keep) or removes it. */
static int rename_or_remove(const se_report *r, int keep, se_error *err) {
  char reason[256];
  if (keep) {
    if (rename(r->tmp_path, r->path) == 0)
      return SE_OK;
    int e = errno;
    if (strerror_r(e, reason, sizeof reason) != 0)
      snprintf(reason, sizeof reason, "errno %d", e);
    SE_FAIL(err, SE_ERR_IO, "renaming %s to %s: %s (the output is kept in %s)", r->tmp_path,
            r->path, reason, r->tmp_path);
  }
  if (remove(r->tmp_path) == 0 || errno == ENOENT)
    return SE_OK;
  int e = errno;
  if (strerror_r(e, reason, sizeof reason) != 0)
    snprintf(reason, sizeof reason, "errno %d", e);
  SE_FAIL(err, SE_ERR_IO, "removing %s: %s", r->tmp_path, reason);
}

int se_report_close(se_report_t r, int success, se_error *err) {
  if (!r)
    SE_FAIL(err, SE_ERR_ARG, "report is NULL");
  /* A rank that reports failure discards the file for all. */
  int mine = success != 0, keep = 0, rc = SE_OK;
  if (MPI_Allreduce(&mine, &keep, 1, MPI_INT, MPI_MIN, r->comm) != MPI_SUCCESS)
    rc = se_error_set(err, SE_ERR_MPI, __FILE__, __LINE__, __func__,
                      "%s: MPI_Allreduce of the success flags failed", r->path);
  if (rc == SE_OK && keep)
    rc = se_mpi_agree(r->comm, finish(r, err), err);
  int had_file = r->file >= 0;
  rc = close_id(r->dxpl, H5Pclose, "the transfer list", rc, err);
  rc = close_id(r->data, H5Dclose, "the report data", rc, err);
  rc = close_id(r->simengine, H5Gclose, "/simengine", rc, err);
  rc = close_id(r->file, H5Fclose, r->tmp_path, rc, err);
  rc = se_mpi_agree(r->comm, rc, err);
  if (had_file && r->rank == 0) {
    se_error scratch;
    int moved = rename_or_remove(r, keep && rc == SE_OK, rc == SE_OK ? err : &scratch);
    rc = rc == SE_OK ? moved : rc;
  }
  rc = se_mpi_agree(r->comm, rc, err);
  return free_report(r, rc, err);
}

hid_t se_report_file(se_report_t r) { return r ? r->file : H5I_INVALID_HID; }
