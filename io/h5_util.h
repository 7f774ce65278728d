/* Small HDF5 helpers shared by the readers and writers in io/. */
#ifndef SE_H5_UTIL_H
#define SE_H5_UTIL_H

#include <hdf5.h>
#include <mpi.h>
#include <stddef.h>
#include <stdint.h>

#include "se_error.h"

/* Writes the innermost messages of HDF5's current error stack into buf (empty if none). */
void se_h5_error_string(char *buf, size_t size);

/* Check an HDF5 call (negative = failure); the message is the caller's context followed by
 * HDF5's own description of the failure. */
#define SE_H5_CHECK(err, call, ...)                                                       \
  do {                                                                                    \
    if ((call) < 0) {                                                                     \
      char se_h5_ctx_[768], se_h5_msg_[768];                                              \
      snprintf(se_h5_ctx_, sizeof se_h5_ctx_, __VA_ARGS__);                               \
      se_h5_error_string(se_h5_msg_, sizeof se_h5_msg_);                                  \
      SE_FAIL(err, SE_ERR_HDF5, "%s: %s failed%s%s", se_h5_ctx_, #call,                  \
              se_h5_msg_[0] ? ": " : "", se_h5_msg_);                                     \
    }                                                                                     \
  } while (0)

/* As SE_H5_CHECK, but stores the code into rc and jumps to label (for functions that must close
 * handles or free memory on failure). */
#define SE_H5_CHECK_GOTO(err, rc, label, call, ...)                                       \
  do {                                                                                    \
    if ((call) < 0) {                                                                     \
      char se_h5_ctx_[768], se_h5_msg_[768];                                              \
      snprintf(se_h5_ctx_, sizeof se_h5_ctx_, __VA_ARGS__);                               \
      se_h5_error_string(se_h5_msg_, sizeof se_h5_msg_);                                  \
      SE_FAIL_GOTO(err, rc, label, SE_ERR_HDF5, "%s: %s failed%s%s", se_h5_ctx_, #call,  \
                   se_h5_msg_[0] ? ": " : "", se_h5_msg_);                                \
    }                                                                                     \
  } while (0)

/* HDF5's automatic printing of error stacks, saved by se_h5_quiet_begin and put back by
 * se_h5_quiet_end, so that a reader can report failures itself without leaving the setting
 * changed for the caller. */
typedef struct se_h5_quiet {
  H5E_auto2_t func;
  void *data;
} se_h5_quiet;

/* Saves the current automatic error printing into q and switches it off. Not collective. */
int se_h5_quiet_begin(se_h5_quiet *q, se_error *err);

/* Restores the automatic error printing saved in q. Not collective. */
int se_h5_quiet_end(const se_h5_quiet *q, se_error *err);

/* Short name of an HDF5 type class ("integer", "floating point", "string", ...). */
const char *se_h5_class_name(H5T_class_t cls);

/* Sets *exists to whether an object is at the absolute path (for example "/stimuli/iclamp/cell")
 * under loc; every link on the way is checked, so a missing parent group is no error. file names
 * the file in messages. Not collective. */
int se_h5_exists(hid_t loc, const char *file, const char *path, int *exists, se_error *err);

/* The dataset readers below read the whole one-dimensional dataset at path into a newly allocated
 * array (*data, freed by the caller with free) of *n entries. When found is NULL the dataset is
 * required and its absence is an SE_ERR_INPUT error; otherwise *found tells whether it exists
 * (when it does not: *data = NULL, *n = 0, success). A dataset of another rank or another type
 * class is an SE_ERR_INPUT error naming file and path. Not collective (independent reads). */

/* Integer dataset of any width and signedness, converted to int64; an unsigned 64-bit value above
 * INT64_MAX is an error naming the index and value. */
int se_h5_read_int64s(hid_t loc, const char *file, const char *path, int *found, int64_t **data,
                      int64_t *n, se_error *err);

/* Integer dataset of any width and signedness, converted to uint64; a negative value is an error
 * naming the index and value. */
int se_h5_read_uint64s(hid_t loc, const char *file, const char *path, int *found, uint64_t **data,
                       int64_t *n, se_error *err);

/* Floating-point dataset of any precision, converted to double. */
int se_h5_read_doubles(hid_t loc, const char *file, const char *path, int *found, double **data,
                       int64_t *n, se_error *err);

/* The attribute readers below read attribute name of the object at path obj (scalar, or one
 * element). found works as for the dataset readers: NULL means required. Not collective. */

/* A string attribute, fixed-length or variable-length, ASCII or UTF-8, into buf (size bytes,
 * NUL-terminated); a longer value is an error. */
int se_h5_read_attr_string(hid_t loc, const char *file, const char *obj, const char *name, int *found,
                           char *buf, size_t size, se_error *err);

/* An integer attribute of any width, converted to int64 (an unsigned value above INT64_MAX is an
 * error). A floating-point attribute is an error. */
int se_h5_read_attr_int64(hid_t loc, const char *file, const char *obj, const char *name, int *found,
                          int64_t *value, se_error *err);

/* A floating-point attribute; an integer attribute is accepted and converted. */
int se_h5_read_attr_double(hid_t loc, const char *file, const char *obj, const char *name, int *found,
                           double *value, se_error *err);

/* Creates the contiguous one-dimensional dataset path of n entries with type file_type and writes
 * data (of mem_type) into it. Not collective (for serial files). */
int se_h5_write_dataset(hid_t loc, const char *file, const char *path, hid_t file_type,
                        hid_t mem_type, int64_t n, const void *data, se_error *err);

/* Creates the group at path (its parent must exist). */
int se_h5_create_group(hid_t loc, const char *file, const char *path, se_error *err);

/* Writes a scalar attribute name on the object at path obj: a variable-length UTF-8 string (read
 * by h5py as str), a little-endian int64, or a little-endian float64. */
int se_h5_write_attr_string(hid_t loc, const char *file, const char *obj, const char *name,
                            const char *value, se_error *err);
int se_h5_write_attr_int64(hid_t loc, const char *file, const char *obj, const char *name,
                           int64_t value, se_error *err);
int se_h5_write_attr_double(hid_t loc, const char *file, const char *obj, const char *name,
                            double value, se_error *err);

/* ---- parallel files and partial reads and writes (used by the tdbem reader and writer) ------- */

/* Opens path with MPI-IO over comm: read-only (create == 0), or created and truncated
 * (create != 0, with collective metadata operations and writes). Collective over comm; the
 * outcome is this rank's (the caller agrees). */
int se_h5_open_mpio(const char *path, MPI_Comm comm, int create, hid_t *file, se_error *err);

/* Opens the dataset at path and checks its type class and its number of dimensions; gives the
 * dataset, its file type (both closed by the caller) and its dims (ndims entries). When found is
 * NULL the dataset is required; otherwise a missing one sets *found = 0 and leaves *dset and
 * *type invalid. Shape errors name file, path and the shape. Not collective. */
int se_h5_open_dataset(hid_t loc, const char *file, const char *path, int *found, H5T_class_t cls,
                       int ndims, hsize_t *dims, hid_t *dset, hid_t *type, se_error *err);

/* Reads entries [start, start + count) along the first dimension of dset (all of its other
 * dimensions; row_size entries per row) as mem_type (elem_size bytes) into buf, in independent
 * pieces small enough for MPI-IO; count 0 reads nothing. file and path name the dataset in
 * messages. Not collective. */
int se_h5_read_rows(hid_t dset, hid_t mem_type, size_t elem_size, int64_t start, int64_t count,
                    int64_t row_size, void *buf, const char *file, const char *path, se_error *err);

/* Reads entries [start, start + count) of the one-dimensional integer dataset dset (file type
 * type) into out as int64; an unsigned value above INT64_MAX is an error naming path[index].
 * Not collective. */
int se_h5_read_int64_range(hid_t dset, hid_t type, int64_t start, int64_t count, int64_t *out,
                           const char *file, const char *path, se_error *err);

/* Reads the n entries index[0..n) (ascending, distinct) of the one-dimensional integer dataset
 * dset (file type type) into out as int64, with one point selection. Not collective. */
int se_h5_read_int64_points(hid_t dset, hid_t type, int64_t n, const int64_t *index, int64_t *out,
                            const char *file, const char *path, se_error *err);

/* Creates the contiguous dataset path (ndims, dims) of file_type, its values never filled (every
 * one is written later, in pieces); gives it in *dset (closed by the caller). Collective in a
 * parallel file. */
int se_h5_create_dataset(hid_t loc, const char *file, const char *path, hid_t file_type, int ndims,
                         const hsize_t *dims, hid_t *dset, se_error *err);

/* Writes the block [start, start + count) (ndims) of dset from buf (packed, of mem_type) with the
 * transfer list dxpl (H5P_DEFAULT, or a collective MPI-IO list: then every rank calls, and a rank
 * with a zero count selects nothing). A dataset without elements is not written. */
int se_h5_write_block(hid_t dset, hid_t mem_type, int ndims, const hsize_t *start,
                      const hsize_t *count, const void *buf, hid_t dxpl, const char *file,
                      const char *path, se_error *err);

/* What a file writer writes into the open file f (named dst in messages). */
typedef int (*se_h5_file_writer)(hid_t f, const char *dst, const void *what, se_error *err);

/* Creates "<path>.tmp" (serial HDF5), runs writer on it, closes it and renames it to path; removes
 * it on failure. HDF5's error printing is off meanwhile. Not collective. */
int se_h5_write_file(const char *path, se_h5_file_writer writer, const void *what, se_error *err);

#endif
