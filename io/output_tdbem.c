/* The tdbem output file, written collectively with parallel HDF5 (io/output_tdbem.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "balance_history.h"
#include "h5_util.h"
#include "output_tdbem.h"

#define P_STATE "/tdbem/state"

typedef struct se_output_tdbem se_output_tdbem;

struct se_output_tdbem {
  MPI_Comm comm; /* our duplicate of the caller's communicator */
  int rank;
  char *path, *tmp_path;
  hid_t file, state, dxpl; /* the file, /tdbem/state, the collective transfer list */
  se_precision precision;
  int64_t n, steps;
  int64_t first, count; /* this rank's columns */
  int64_t buffer_steps; /* rows of buffer */
  int64_t buffered;     /* rows in the buffer now */
  int64_t appended;     /* rows appended so far */
  void *buffer;         /* [buffer_steps x count], float or double */
  double flush_seconds; /* rank 0's value decides */
  double last_flush;    /* MPI_Wtime of the last flush, rank 0 */
};

/* Checks spec on this rank (no communication). */
static int check_spec(const char *path, const se_output_tdbem_spec *s, se_error *err) {
  if (!path || !path[0])
    SE_FAIL(err, SE_ERR_ARG, "the tdbem output path is empty");
  if (!s)
    SE_FAIL(err, SE_ERR_ARG, "%s: the output spec is NULL", path);
  if (s->n < 1 || s->steps < 0 || s->local_count < 0 || s->local_count > s->n ||
      s->buffer_steps < 1)
    SE_FAIL(err, SE_ERR_ARG,
            "%s: output of N = %" PRId64 " columns, T = %" PRId64 " rows, %" PRId64
            " local columns, buffer of %" PRId64 " rows: expected N >= 1, T >= 0, 0 <= local <= N, "
            "buffer >= 1",
            path, s->n, s->steps, s->local_count, s->buffer_steps);
  if (s->precision != SE_PRECISION_SINGLE && s->precision != SE_PRECISION_DOUBLE)
    SE_FAIL(err, SE_ERR_ARG, "%s: unknown precision %d", path, (int)s->precision);
  return SE_OK;
}

/* Checks that N, T, the precision and flush_seconds match on every rank and that the local
 * columns add up to N; sets o's first column and buffer size (the smallest). Collective. */
static int agree_on_spec(se_output_tdbem *o, const char *path, const se_output_tdbem_spec *s,
                         se_error *err) {
  double flush = s->flush_seconds;
  int64_t mine[5], lo[5], hi[5], sum = 0, first = 0;
  memcpy(&mine[4], &flush, sizeof flush);
  mine[0] = s->n;
  mine[1] = s->steps;
  mine[2] = (int64_t)s->precision;
  mine[3] = s->buffer_steps;
  SE_MPI_CHECK(err, MPI_Allreduce(mine, lo, 5, MPI_INT64_T, MPI_MIN, o->comm));
  SE_MPI_CHECK(err, MPI_Allreduce(mine, hi, 5, MPI_INT64_T, MPI_MAX, o->comm));
  SE_MPI_CHECK(err, MPI_Allreduce(&s->local_count, &sum, 1, MPI_INT64_T, MPI_SUM, o->comm));
  SE_MPI_CHECK(err, MPI_Exscan(&s->local_count, &first, 1, MPI_INT64_T, MPI_SUM, o->comm));
  static const char *const names[5] = {"N", "T", "precision", "", "flush_seconds"};
  for (int k = 0; k < 5; k++)
    if (k != 3 && lo[k] != hi[k])
      SE_FAIL(err, SE_ERR_ARG, "%s: the output's %s differs between ranks", path, names[k]);
  if (sum != s->n)
    SE_FAIL(err, SE_ERR_ARG, "%s: the ranks' columns add up to %" PRId64 ", not N = %" PRId64, path,
            sum, s->n);
  o->first = o->rank == 0 ? 0 : first; /* MPI_Exscan leaves rank 0's result undefined */
  o->buffer_steps = lo[3] < s->steps ? lo[3] : (s->steps > 0 ? s->steps : 1);
  return SE_OK;
}

/* Copies the paths and allocates the buffer (no communication). */
static int fill_local(se_output_tdbem *o, const char *path, se_error *err) {
  size_t len = strlen(path);
  SE_CALLOC(err, o->path, len + 1, "the output path");
  SE_CALLOC(err, o->tmp_path, len + 5, "the output path");
  memcpy(o->path, path, len);
  snprintf(o->tmp_path, len + 5, "%s.tmp", path);
  size_t vsize = o->precision == SE_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
  o->buffer = calloc((size_t)(o->buffer_steps * o->count) + 1, vsize);
  if (!o->buffer)
    SE_FAIL(err, SE_ERR_NOMEM, "%s: out of memory for a buffer of %" PRId64 " x %" PRId64 " values",
            path, o->buffer_steps, o->count);
  return SE_OK;
}

/* Creates "<path>.tmp", /simengine, /tdbem and /tdbem/state, and the collective transfer list. */
static int create_file(se_output_tdbem *o, se_error *err) {
  const char *file = o->tmp_path;
  SE_TRY(se_h5_open_mpio(file, o->comm, 1, &o->file, err));
  SE_TRY(se_h5_create_group(o->file, file, "/simengine", err));
  SE_TRY(se_h5_create_group(o->file, file, "/tdbem", err));
  hsize_t dims[2] = {(hsize_t)o->steps, (hsize_t)o->n};
  SE_TRY(se_h5_create_dataset(o->file, file, P_STATE,
                              o->precision == SE_PRECISION_SINGLE ? H5T_IEEE_F32LE : H5T_IEEE_F64LE,
                              2, dims, &o->state, err));
  SE_H5_CHECK(err, o->dxpl = H5Pcreate(H5P_DATASET_XFER), "%s", file);
  SE_H5_CHECK(err, H5Pset_dxpl_mpio(o->dxpl, H5FD_MPIO_COLLECTIVE), "%s", file);
  return SE_OK;
}

/* Closes the open handles of o; a failure becomes the error when rc is SE_OK. Collective. */
static int close_handles(se_output_tdbem *o, int rc, se_error *err) {
  herr_t a = o->dxpl >= 0 ? H5Pclose(o->dxpl) : 0;
  herr_t b = o->state >= 0 ? H5Dclose(o->state) : 0;
  herr_t c = o->file >= 0 ? H5Fclose(o->file) : 0;
  o->dxpl = o->state = o->file = H5I_INVALID_HID;
  if (rc == SE_OK && (a < 0 || b < 0 || c < 0))
    rc = se_error_set(err, SE_ERR_HDF5, __FILE__, __LINE__, __func__, "%s: closing the file failed",
                      o->tmp_path);
  return rc;
}

/* Frees o (its handles closed) and its communicator; returns rc, or the failure of MPI_Comm_free
 * when rc is SE_OK. */
static int free_output(se_output_tdbem *o, int rc, se_error *err) {
  int mpi_rc = o->comm != MPI_COMM_NULL ? MPI_Comm_free(&o->comm) : MPI_SUCCESS;
  free(o->buffer);
  free(o->tmp_path);
  free(o->path);
  free(o);
  if (rc == SE_OK && mpi_rc != MPI_SUCCESS)
    return se_error_set(err, SE_ERR_MPI, __FILE__, __LINE__, __func__, "MPI_Comm_free failed");
  return rc;
}

int se_output_tdbem_open(const char *path, MPI_Comm comm, const se_output_tdbem_spec *spec,
                         se_output_tdbem_t *out, se_error *err) {
  if (!out)
    SE_FAIL(err, SE_ERR_ARG, "se_output_tdbem_open: no handle");
  *out = NULL;
  se_output_tdbem *o;
  SE_CALLOC(err, o, 1, "the tdbem output");
  o->comm = MPI_COMM_NULL;
  o->file = o->state = o->dxpl = H5I_INVALID_HID;
  if (MPI_Comm_dup(comm, &o->comm) != MPI_SUCCESS ||
      MPI_Comm_rank(o->comm, &o->rank) != MPI_SUCCESS)
    return free_output(o,
                       se_error_set(err, SE_ERR_MPI, __FILE__, __LINE__, __func__,
                                    "%s: duplicating the communicator failed",
                                    path ? path : "(null)"),
                       err);
  int rc = se_mpi_agree(o->comm, check_spec(path, spec, err), err);
  if (rc == SE_OK) {
    o->precision = spec->precision;
    o->n = spec->n;
    o->steps = spec->steps;
    o->count = spec->local_count;
    o->flush_seconds = spec->flush_seconds;
    o->last_flush = MPI_Wtime();
    rc = se_mpi_agree(o->comm, agree_on_spec(o, path, spec, err), err);
  }
  if (rc == SE_OK)
    rc = se_mpi_agree(o->comm, fill_local(o, path, err), err);
  if (rc != SE_OK)
    return free_output(o, rc, err);
  se_h5_quiet q;
  int began = se_h5_quiet_begin(&q, err);
  rc = se_mpi_agree(o->comm, began == SE_OK ? create_file(o, err) : began, err);
  if (began == SE_OK) {
    int qrc = se_h5_quiet_end(&q, rc == SE_OK ? err : NULL);
    rc = rc != SE_OK ? rc : qrc;
  }
  if (rc != SE_OK) {
    se_error ignored;
    se_output_tdbem_close(o, 0, &ignored);
    return rc;
  }
  *out = o;
  return SE_OK;
}

/* Writes the buffered rows with one collective write and empties the buffer (agreed). */
static int write_buffer(se_output_tdbem *o, se_error *err) {
  if (o->buffered == 0)
    return SE_OK;
  hsize_t start[2] = {(hsize_t)(o->appended - o->buffered), (hsize_t)o->first};
  hsize_t count[2] = {(hsize_t)o->buffered, (hsize_t)o->count};
  char what[64];
  snprintf(what, sizeof what, "%s rows %" PRId64 "..%" PRId64, P_STATE, o->appended - o->buffered,
           o->appended - 1);
  int rc = se_h5_write_block(
      o->state, o->precision == SE_PRECISION_SINGLE ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE, 2,
      start, count, o->buffer, o->dxpl, o->tmp_path, what, err);
  o->buffered = 0;
  return se_mpi_agree(o->comm, rc, err);
}

/* Flushes the file when rank 0 has seen more than flush_seconds since the last flush (its
 * decision is broadcast, so the collective H5Fflush is called by all ranks or none). */
static int maybe_flush(se_output_tdbem *o, se_error *err) {
  int flush = 0;
  if (o->rank == 0)
    flush = o->flush_seconds > 0 && MPI_Wtime() - o->last_flush > o->flush_seconds;
  SE_MPI_CHECK(err, MPI_Bcast(&flush, 1, MPI_INT, 0, o->comm));
  if (!flush)
    return SE_OK;
  int rc = SE_OK;
  if (H5Fflush(o->file, H5F_SCOPE_GLOBAL) < 0)
    rc = se_error_set(err, SE_ERR_HDF5, __FILE__, __LINE__, __func__, "%s: H5Fflush failed",
                      o->tmp_path);
  o->last_flush = MPI_Wtime();
  return se_mpi_agree(o->comm, rc, err);
}

int se_output_tdbem_append(se_output_tdbem_t o, const double *local, se_error *err) {
  if (!o)
    SE_FAIL(err, SE_ERR_ARG, "tdbem output is NULL");
  if (o->appended >= o->steps)
    SE_FAIL(err, SE_ERR_ARG, "%s: appending row %" PRId64 " to an output of %" PRId64 " rows",
            o->path, o->appended, o->steps);
  if (o->count > 0 && !local)
    SE_FAIL(err, SE_ERR_ARG, "%s: no values for %" PRId64 " local columns", o->path, o->count);
  int64_t n = o->count, row = o->buffered;
  if (o->precision == SE_PRECISION_DOUBLE) {
    if (n > 0)
      memcpy((double *)o->buffer + row * n, local, (size_t)n * sizeof(double));
  } else {
    float *dst = (float *)o->buffer + row * n;
    for (int64_t c = 0; c < n; c++)
      dst[c] = (float)local[c];
  }
  o->buffered++;
  o->appended++;
  if (o->buffered < o->buffer_steps)
    return SE_OK;
  SE_TRY(write_buffer(o, err));
  return maybe_flush(o, err);
}

/* Writes attribute name of /simengine: the string s (kind 's'), the integer i ('i') or the double d
 * ('d'). Collective (agreed). */
static int write_meta(se_output_tdbem *o, const char *name, char kind, const char *s, int64_t i,
                      double d, se_error *err) {
  if (!o)
    SE_FAIL(err, SE_ERR_ARG, "tdbem output is NULL");
  if (!name || !name[0] || (kind == 's' && !s))
    SE_FAIL(err, SE_ERR_ARG, "%s: empty /simengine attribute name or value", o->path);
  se_h5_quiet q;
  int began = se_h5_quiet_begin(&q, err), rc = began;
  if (rc == SE_OK && kind == 's')
    rc = se_h5_write_attr_string(o->file, o->tmp_path, "/simengine", name, s, err);
  else if (rc == SE_OK && kind == 'i')
    rc = se_h5_write_attr_int64(o->file, o->tmp_path, "/simengine", name, i, err);
  else if (rc == SE_OK)
    rc = se_h5_write_attr_double(o->file, o->tmp_path, "/simengine", name, d, err);
  rc = se_mpi_agree(o->comm, rc, err);
  if (began == SE_OK) {
    int qrc = se_h5_quiet_end(&q, rc == SE_OK ? err : NULL);
    rc = rc != SE_OK ? rc : qrc;
  }
  return rc;
}

int se_output_tdbem_meta_string(se_output_tdbem_t o, const char *name, const char *value,
                                se_error *err) {
  return write_meta(o, name, 's', value, 0, 0, err);
}

int se_output_tdbem_meta_int(se_output_tdbem_t o, const char *name, int64_t value, se_error *err) {
  return write_meta(o, name, 'i', NULL, value, 0, err);
}

int se_output_tdbem_meta_double(se_output_tdbem_t o, const char *name, double value,
                                se_error *err) {
  return write_meta(o, name, 'd', NULL, 0, value, err);
}

int se_output_tdbem_balance_history(se_output_tdbem_t o, const se_balance_history *h,
                                    const char *method, int64_t steps_per_iteration,
                                    se_error *err) {
  return se_balance_history_write(o->file, o->comm, h, "slices", method, steps_per_iteration, err);
}

/* Rank 0: renames the temporary file to the final path (keep) or removes it. */
static int rename_or_remove(const se_output_tdbem *o, int keep, se_error *err) {
  if (keep) {
    if (rename(o->tmp_path, o->path) == 0)
      return SE_OK;
    SE_FAIL(err, SE_ERR_IO, "renaming %s to %s: %s (the output is kept in %s)", o->tmp_path,
            o->path, strerror(errno), o->tmp_path);
  }
  if (remove(o->tmp_path) == 0 || errno == ENOENT)
    return SE_OK;
  SE_FAIL(err, SE_ERR_IO, "removing %s: %s", o->tmp_path, strerror(errno));
}

int se_output_tdbem_close(se_output_tdbem_t o, int success, se_error *err) {
  if (!o)
    SE_FAIL(err, SE_ERR_ARG, "tdbem output is NULL");
  int mine = success != 0, keep = 0, rc = SE_OK;
  if (MPI_Allreduce(&mine, &keep, 1, MPI_INT, MPI_MIN, o->comm) != MPI_SUCCESS)
    rc = se_error_set(err, SE_ERR_MPI, __FILE__, __LINE__, __func__,
                      "%s: MPI_Allreduce of the success flags failed", o->path);
  if (rc == SE_OK && keep && o->appended != o->steps)
    rc = se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__,
                      "%s: %" PRId64 " of %" PRId64 " rows appended at close", o->path, o->appended,
                      o->steps);
  rc = se_mpi_agree(o->comm, rc, err);
  if (rc == SE_OK && keep)
    rc = write_buffer(o, err);
  se_h5_quiet q;
  int began = se_h5_quiet_begin(&q, rc == SE_OK ? err : NULL);
  int had_file = o->file >= 0;
  rc = se_mpi_agree(o->comm, close_handles(o, rc, err), err);
  if (had_file && o->rank == 0) {
    se_error scratch;
    int moved = rename_or_remove(o, keep && rc == SE_OK, rc == SE_OK ? err : &scratch);
    rc = rc == SE_OK ? moved : rc;
  }
  rc = se_mpi_agree(o->comm, rc, err);
  if (began == SE_OK) {
    int qrc = se_h5_quiet_end(&q, rc == SE_OK ? err : NULL);
    rc = rc != SE_OK ? rc : qrc;
  }
  return free_output(o, rc, err);
}
