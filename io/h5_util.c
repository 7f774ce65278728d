#include <inttypes.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5_util.h"

typedef struct walk_buffer {
  char *buf;
  size_t size;
} walk_buffer;

static herr_t keep_innermost(unsigned n, const H5E_error2_t *e, void *data) {
  walk_buffer *w = data;
  if (n == 0 && e->desc)
    snprintf(w->buf, w->size, "%s", e->desc);
  return 0;
}

void se_h5_error_string(char *buf, size_t size) {
  if (!buf || size == 0)
    return;
  buf[0] = '\0';
  walk_buffer w = {buf, size};
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, keep_innermost, &w);
}

int se_h5_quiet_begin(se_h5_quiet *q, se_error *err) {
  q->func = NULL;
  q->data = NULL;
  SE_H5_CHECK(err, H5Eget_auto2(H5E_DEFAULT, &q->func, &q->data), "saving HDF5's error printing");
  SE_H5_CHECK(err, H5Eset_auto2(H5E_DEFAULT, NULL, NULL), "switching off HDF5's error printing");
  return SE_OK;
}

int se_h5_quiet_end(const se_h5_quiet *q, se_error *err) {
  SE_H5_CHECK(err, H5Eset_auto2(H5E_DEFAULT, q->func, q->data), "restoring HDF5's error printing");
  return SE_OK;
}

const char *se_h5_class_name(H5T_class_t cls) {
  switch (cls) {
  case H5T_INTEGER: return "integer";
  case H5T_FLOAT: return "floating-point";
  case H5T_TIME: return "time";
  case H5T_STRING: return "string";
  case H5T_BITFIELD: return "bitfield";
  case H5T_OPAQUE: return "opaque";
  case H5T_COMPOUND: return "compound";
  case H5T_REFERENCE: return "reference";
  case H5T_ENUM: return "enum";
  case H5T_VLEN: return "variable-length";
  case H5T_ARRAY: return "array";
  default: return "unknown";
  }
}

/* Closes every valid handle of ids (datasets, groups, attributes, types, spaces, property lists,
 * files). On success paths (rc == SE_OK) a failing close becomes the error; on failure paths the
 * first error is kept and close failures are ignored. */
static int close_ids(int rc, se_error *err, const char *file, const char *path, const hid_t *ids,
                     size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (ids[i] < 0)
      continue;
    herr_t st;
    switch (H5Iget_type(ids[i])) {
    case H5I_DATASET: st = H5Dclose(ids[i]); break;
    case H5I_GROUP: st = H5Gclose(ids[i]); break;
    case H5I_ATTR: st = H5Aclose(ids[i]); break;
    case H5I_DATATYPE: st = H5Tclose(ids[i]); break;
    case H5I_DATASPACE: st = H5Sclose(ids[i]); break;
    case H5I_GENPROP_LST: st = H5Pclose(ids[i]); break;
    case H5I_FILE: st = H5Fclose(ids[i]); break;
    default: st = H5Oclose(ids[i]); break;
    }
    if (st < 0 && rc == SE_OK) {
      char msg[768];
      se_h5_error_string(msg, sizeof msg);
      rc = se_error_set(err, SE_ERR_HDF5, __FILE__, __LINE__, __func__, "%s: %s: closing a handle failed%s%s",
                        file, path, msg[0] ? ": " : "", msg);
    }
  }
  return rc;
}

#define CLOSE_IDS(rc, err, file, path, ...)                                                      \
  close_ids((rc), (err), (file), (path), (const hid_t[]){__VA_ARGS__},                           \
            sizeof((const hid_t[]){__VA_ARGS__}) / sizeof(hid_t))

int se_h5_exists(hid_t loc, const char *file, const char *path, int *exists, se_error *err) {
  *exists = 0;
  size_t len = strlen(path);
  if (len == 0 || path[0] != '/')
    SE_FAIL(err, SE_ERR_ARG, "%s: '%s' is not an absolute HDF5 path", file, path);
  char *prefix = malloc(len + 1);
  if (!prefix)
    SE_FAIL(err, SE_ERR_NOMEM, "%s: out of memory checking %s", file, path);
  int found = 1;
  for (size_t end = 1; end <= len && found; end++) {
    if (end < len && path[end] != '/')
      continue;
    memcpy(prefix, path, end);
    prefix[end] = '\0';
    htri_t e = H5Lexists(loc, prefix, H5P_DEFAULT);
    if (e < 0) {
      char msg[768];
      se_h5_error_string(msg, sizeof msg);
      free(prefix);
      SE_FAIL(err, SE_ERR_HDF5, "%s: checking whether %s exists failed%s%s", file, path,
              msg[0] ? ": " : "", msg);
    }
    found = e > 0;
  }
  free(prefix);
  *exists = found;
  return SE_OK;
}

/* Opens the one-dimensional dataset at path and checks its type class; gives the dataset, its
 * file type and its length. When found is non-NULL a missing dataset is no error (*found = 0). */
static int open_1d(hid_t loc, const char *file, const char *path, int *found, H5T_class_t want,
                   hid_t *dset_out, hid_t *type_out, int64_t *n_out, se_error *err) {
  hsize_t dims[1] = {0};
  *n_out = 0;
  SE_TRY(se_h5_open_dataset(loc, file, path, found, want, 1, dims, dset_out, type_out, err));
  *n_out = (int64_t)dims[0];
  return SE_OK;
}

/* Reads the whole dataset dset (n entries) as mem_type into a new array of n elements of size
 * elem_size. */
static int read_all(hid_t dset, const char *file, const char *path, hid_t mem_type, int64_t n,
                    size_t elem_size, void **data, se_error *err) {
  *data = calloc(n > 0 ? (size_t)n : 1, elem_size);
  if (!*data)
    SE_FAIL(err, SE_ERR_NOMEM, "%s: %s: out of memory for %lld entries", file, path, (long long)n);
  if (n > 0 && H5Dread(dset, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, *data) < 0) {
    char msg[768];
    se_h5_error_string(msg, sizeof msg);
    free(*data);
    *data = NULL;
    SE_FAIL(err, SE_ERR_HDF5, "%s: reading %s failed%s%s", file, path, msg[0] ? ": " : "", msg);
  }
  return SE_OK;
}

/* Reads an integer dataset; as_unsigned selects the uint64 result, otherwise int64. Values that
 * do not fit the result (negative for uint64, above INT64_MAX for int64) are errors. */
static int read_integers(hid_t loc, const char *file, const char *path, int *found, int as_unsigned,
                         void **data, int64_t *n, se_error *err) {
  *data = NULL;
  hid_t dset, type;
  SE_TRY(open_1d(loc, file, path, found, H5T_INTEGER, &dset, &type, n, err));
  if (dset < 0)
    return SE_OK; /* optional and absent */
  int rc = SE_OK;
  H5T_sign_t sign;
  SE_H5_CHECK_GOTO(err, rc, done, sign = H5Tget_sign(type), "%s: %s", file, path);
  int file_unsigned = sign == H5T_SGN_NONE;
  /* Read in the file's signedness with 64 bits, so no value is clipped, then check the range. */
  SE_TRY_GOTO(rc, done, read_all(dset, file, path, file_unsigned ? H5T_NATIVE_UINT64 : H5T_NATIVE_INT64,
                                 *n, sizeof(int64_t), data, err));
  if (file_unsigned && !as_unsigned) {
    const uint64_t *u = *data;
    for (int64_t i = 0; i < *n; i++)
      if (u[i] > (uint64_t)INT64_MAX)
        SE_FAIL_GOTO(err, rc, done, SE_ERR_INPUT, "%s: %s[%lld] = %llu does not fit in int64", file,
                     path, (long long)i, (unsigned long long)u[i]);
  } else if (!file_unsigned && as_unsigned) {
    const int64_t *s = *data;
    for (int64_t i = 0; i < *n; i++)
      if (s[i] < 0)
        SE_FAIL_GOTO(err, rc, done, SE_ERR_INPUT, "%s: %s[%lld] = %lld is negative", file, path,
                     (long long)i, (long long)s[i]);
  }
done:
  if (rc != SE_OK) {
    free(*data);
    *data = NULL;
    *n = 0;
  }
  return CLOSE_IDS(rc, err, file, path, type, dset);
}

int se_h5_read_int64s(hid_t loc, const char *file, const char *path, int *found, int64_t **data,
                      int64_t *n, se_error *err) {
  void *p = NULL;
  int rc = read_integers(loc, file, path, found, 0, &p, n, err);
  *data = p;
  return rc;
}

int se_h5_read_uint64s(hid_t loc, const char *file, const char *path, int *found, uint64_t **data,
                       int64_t *n, se_error *err) {
  void *p = NULL;
  int rc = read_integers(loc, file, path, found, 1, &p, n, err);
  *data = p;
  return rc;
}

int se_h5_read_doubles(hid_t loc, const char *file, const char *path, int *found, double **data,
                       int64_t *n, se_error *err) {
  *data = NULL;
  hid_t dset, type;
  SE_TRY(open_1d(loc, file, path, found, H5T_FLOAT, &dset, &type, n, err));
  if (dset < 0)
    return SE_OK;
  void *p = NULL;
  int rc = read_all(dset, file, path, H5T_NATIVE_DOUBLE, *n, sizeof(double), &p, err);
  *data = p;
  if (rc != SE_OK)
    *n = 0;
  return CLOSE_IDS(rc, err, file, path, type, dset);
}

/* Names the object of an attribute in messages: "root" for "/", else its path. */
static const char *owner_name(const char *obj) { return strcmp(obj, "/") == 0 ? "root" : obj; }

/* The type classes an attribute reader accepts, and how its messages name them. */
typedef struct attr_kind {
  H5T_class_t cls, also; /* also: a second accepted class, or H5T_NO_CLASS */
  const char *expected;  /* "a string", ... */
} attr_kind;

/* Opens attribute name of obj and checks that it holds one value of a class kind accepts; gives
 * the attribute and its type. When found is non-NULL a missing attribute (or object) is no error
 * (*attr_out is then invalid). */
static int open_attr(hid_t loc, const char *file, const char *obj, const char *name, int *found,
                     const attr_kind *kind, hid_t *attr_out, hid_t *type_out, se_error *err) {
  *attr_out = *type_out = H5I_INVALID_HID;
  int exists = 0;
  SE_TRY(se_h5_exists(loc, file, obj, &exists, err));
  if (exists) {
    htri_t e = H5Aexists_by_name(loc, obj, name, H5P_DEFAULT);
    SE_H5_CHECK(err, e, "%s: checking for %s attribute %s", file, owner_name(obj), name);
    exists = e > 0;
  }
  if (found)
    *found = exists;
  if (!exists) {
    if (found)
      return SE_OK;
    SE_FAIL(err, SE_ERR_INPUT, "%s: required %s attribute %s is missing", file, owner_name(obj), name);
  }
  int rc = SE_OK;
  hid_t attr = H5I_INVALID_HID, type = H5I_INVALID_HID, space = H5I_INVALID_HID;
  hssize_t np;
  H5T_class_t cls;
  SE_H5_CHECK_GOTO(err, rc, done, attr = H5Aopen_by_name(loc, obj, name, H5P_DEFAULT, H5P_DEFAULT),
                   "%s: %s attribute %s", file, owner_name(obj), name);
  SE_H5_CHECK_GOTO(err, rc, done, space = H5Aget_space(attr), "%s: %s attribute %s", file,
                   owner_name(obj), name);
  SE_H5_CHECK_GOTO(err, rc, done, np = H5Sget_simple_extent_npoints(space), "%s: %s attribute %s",
                   file, owner_name(obj), name);
  if (np != 1)
    SE_FAIL_GOTO(err, rc, done, SE_ERR_INPUT, "%s: %s attribute %s has %lld values, expected one",
                 file, owner_name(obj), name, (long long)np);
  SE_H5_CHECK_GOTO(err, rc, done, type = H5Aget_type(attr), "%s: %s attribute %s", file,
                   owner_name(obj), name);
  SE_H5_CHECK_GOTO(err, rc, done, cls = H5Tget_class(type), "%s: %s attribute %s", file,
                   owner_name(obj), name);
  if (cls != kind->cls && cls != kind->also)
    SE_FAIL_GOTO(err, rc, done, SE_ERR_INPUT, "%s: %s attribute %s has %s type, expected %s", file,
                 owner_name(obj), name, se_h5_class_name(cls), kind->expected);
  *attr_out = attr;
  *type_out = type;
  attr = type = H5I_INVALID_HID;
done:
  return CLOSE_IDS(rc, err, file, obj, space, type, attr);
}

int se_h5_read_attr_string(hid_t loc, const char *file, const char *obj, const char *name, int *found,
                           char *buf, size_t size, se_error *err) {
  static const attr_kind kind = {H5T_STRING, H5T_NO_CLASS, "a string"};
  hid_t attr, type;
  SE_TRY(open_attr(loc, file, obj, name, found, &kind, &attr, &type, err));
  if (attr < 0)
    return SE_OK;
  int rc = SE_OK;
  hid_t mem = H5I_INVALID_HID;
  char *fixed = NULL, *vlen = NULL;
  const char *value;
  const char *who = owner_name(obj);
  htri_t is_vlen;
  H5T_cset_t cset;
  SE_H5_CHECK_GOTO(err, rc, done, is_vlen = H5Tis_variable_str(type), "%s: %s attribute %s", file,
                   who, name);
  SE_H5_CHECK_GOTO(err, rc, done, cset = H5Tget_cset(type), "%s: %s attribute %s", file, who, name);
  SE_H5_CHECK_GOTO(err, rc, done, mem = H5Tcopy(H5T_C_S1), "%s: %s attribute %s", file, who, name);
  SE_H5_CHECK_GOTO(err, rc, done, H5Tset_cset(mem, cset), "%s: %s attribute %s", file, who, name);
  if (is_vlen) {
    SE_H5_CHECK_GOTO(err, rc, done, H5Tset_size(mem, H5T_VARIABLE), "%s: %s attribute %s", file, who,
                     name);
    SE_H5_CHECK_GOTO(err, rc, done, H5Aread(attr, mem, &vlen), "%s: %s attribute %s", file, who, name);
    value = vlen ? vlen : "";
  } else {
    size_t len = H5Tget_size(type);
    if (len == 0)
      SE_FAIL_GOTO(err, rc, done, SE_ERR_HDF5, "%s: %s attribute %s: H5Tget_size failed", file, who,
                   name);
    SE_H5_CHECK_GOTO(err, rc, done, H5Tset_size(mem, len + 1), "%s: %s attribute %s", file, who, name);
    SE_H5_CHECK_GOTO(err, rc, done, H5Tset_strpad(mem, H5T_STR_NULLTERM), "%s: %s attribute %s", file,
                     who, name);
    fixed = calloc(len + 1, 1);
    if (!fixed)
      SE_FAIL_GOTO(err, rc, done, SE_ERR_NOMEM, "%s: %s attribute %s: out of memory", file, who, name);
    SE_H5_CHECK_GOTO(err, rc, done, H5Aread(attr, mem, fixed), "%s: %s attribute %s", file, who, name);
    value = fixed;
  }
  if (strlen(value) >= size)
    SE_FAIL_GOTO(err, rc, done, SE_ERR_INPUT, "%s: %s attribute %s = \"%.64s...\" is longer than %zu bytes",
                 file, who, name, value, size - 1);
  memcpy(buf, value, strlen(value) + 1);
done:
  if (vlen && H5free_memory(vlen) < 0 && rc == SE_OK)
    rc = se_error_set(err, SE_ERR_HDF5, __FILE__, __LINE__, __func__,
                      "%s: %s attribute %s: H5free_memory failed", file, who, name);
  free(fixed);
  return CLOSE_IDS(rc, err, file, obj, mem, type, attr);
}

int se_h5_read_attr_int64(hid_t loc, const char *file, const char *obj, const char *name, int *found,
                          int64_t *value, se_error *err) {
  static const attr_kind kind = {H5T_INTEGER, H5T_NO_CLASS, "an integer"};
  hid_t attr, type;
  SE_TRY(open_attr(loc, file, obj, name, found, &kind, &attr, &type, err));
  if (attr < 0)
    return SE_OK;
  int rc = SE_OK;
  const char *who = owner_name(obj);
  H5T_sign_t sign;
  SE_H5_CHECK_GOTO(err, rc, done, sign = H5Tget_sign(type), "%s: %s attribute %s", file, who, name);
  if (sign == H5T_SGN_NONE) {
    uint64_t u = 0;
    SE_H5_CHECK_GOTO(err, rc, done, H5Aread(attr, H5T_NATIVE_UINT64, &u), "%s: %s attribute %s", file,
                     who, name);
    if (u > (uint64_t)INT64_MAX)
      SE_FAIL_GOTO(err, rc, done, SE_ERR_INPUT, "%s: %s attribute %s = %llu does not fit in int64",
                   file, who, name, (unsigned long long)u);
    *value = (int64_t)u;
  } else {
    SE_H5_CHECK_GOTO(err, rc, done, H5Aread(attr, H5T_NATIVE_INT64, value), "%s: %s attribute %s",
                     file, who, name);
  }
done:
  return CLOSE_IDS(rc, err, file, obj, type, attr);
}

int se_h5_read_attr_double(hid_t loc, const char *file, const char *obj, const char *name, int *found,
                           double *value, se_error *err) {
  static const attr_kind kind = {H5T_FLOAT, H5T_INTEGER, "a number"};
  hid_t attr, type;
  SE_TRY(open_attr(loc, file, obj, name, found, &kind, &attr, &type, err));
  if (attr < 0)
    return SE_OK;
  int rc = SE_OK;
  SE_H5_CHECK_GOTO(err, rc, done, H5Aread(attr, H5T_NATIVE_DOUBLE, value), "%s: %s attribute %s", file,
                   owner_name(obj), name);
done:
  return CLOSE_IDS(rc, err, file, obj, type, attr);
}

int se_h5_write_dataset(hid_t loc, const char *file, const char *path, hid_t file_type,
                        hid_t mem_type, int64_t n, const void *data, se_error *err) {
  int rc = SE_OK;
  hid_t space = H5I_INVALID_HID, dset = H5I_INVALID_HID;
  hsize_t dim = (hsize_t)n;
  SE_H5_CHECK_GOTO(err, rc, done, space = H5Screate_simple(1, &dim, NULL), "%s: writing %s", file, path);
  SE_H5_CHECK_GOTO(err, rc, done,
                   dset = H5Dcreate2(loc, path, file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                   "%s: writing %s", file, path);
  if (n > 0)
    SE_H5_CHECK_GOTO(err, rc, done, H5Dwrite(dset, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data),
                     "%s: writing %s", file, path);
done:
  return CLOSE_IDS(rc, err, file, path, dset, space);
}

int se_h5_create_group(hid_t loc, const char *file, const char *path, se_error *err) {
  hid_t g = H5Gcreate2(loc, path, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  SE_H5_CHECK(err, g, "%s: creating group %s", file, path);
  SE_H5_CHECK(err, H5Gclose(g), "%s: creating group %s", file, path);
  return SE_OK;
}

/* Writes one scalar attribute of file type file_type from value (of mem_type). */
static int write_attr(hid_t loc, const char *file, const char *obj, const char *name, hid_t file_type,
                      hid_t mem_type, const void *value, se_error *err) {
  int rc = SE_OK;
  hid_t space = H5I_INVALID_HID, attr = H5I_INVALID_HID;
  const char *who = owner_name(obj);
  SE_H5_CHECK_GOTO(err, rc, done, space = H5Screate(H5S_SCALAR), "%s: writing %s attribute %s", file,
                   who, name);
  SE_H5_CHECK_GOTO(err, rc, done,
                   attr = H5Acreate_by_name(loc, obj, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT,
                                            H5P_DEFAULT),
                   "%s: writing %s attribute %s", file, who, name);
  SE_H5_CHECK_GOTO(err, rc, done, H5Awrite(attr, mem_type, value), "%s: writing %s attribute %s", file,
                   who, name);
done:
  return CLOSE_IDS(rc, err, file, obj, attr, space);
}

int se_h5_write_attr_string(hid_t loc, const char *file, const char *obj, const char *name,
                            const char *value, se_error *err) {
  int rc = SE_OK;
  hid_t type = H5I_INVALID_HID;
  const char *who = owner_name(obj);
  SE_H5_CHECK_GOTO(err, rc, done, type = H5Tcopy(H5T_C_S1), "%s: writing %s attribute %s", file, who,
                   name);
  SE_H5_CHECK_GOTO(err, rc, done, H5Tset_size(type, H5T_VARIABLE), "%s: writing %s attribute %s", file,
                   who, name);
  SE_H5_CHECK_GOTO(err, rc, done, H5Tset_cset(type, H5T_CSET_UTF8), "%s: writing %s attribute %s",
                   file, who, name);
  SE_TRY_GOTO(rc, done, write_attr(loc, file, obj, name, type, type, &value, err));
done:
  return CLOSE_IDS(rc, err, file, obj, type);
}

int se_h5_write_attr_int64(hid_t loc, const char *file, const char *obj, const char *name,
                           int64_t value, se_error *err) {
  return write_attr(loc, file, obj, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &value, err);
}

int se_h5_write_attr_double(hid_t loc, const char *file, const char *obj, const char *name,
                            double value, se_error *err) {
  return write_attr(loc, file, obj, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value, err);
}

/* ---- parallel files and partial reads and writes --------------------------------------------- */

/* Largest piece of one H5Dread, in bytes: well below MPI-IO's 2 GiB limit of one transfer. */
#define SE_H5_PIECE_BYTES ((int64_t)1 << 28)

int se_h5_open_mpio(const char *path, MPI_Comm comm, int create, hid_t *file, se_error *err) {
  *file = H5I_INVALID_HID;
  int rc = SE_OK;
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  SE_H5_CHECK(err, fapl, "%s: file access list", path);
  SE_H5_CHECK_GOTO(err, rc, done, H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL), "%s", path);
  if (create) {
    /* Every rank performs the same metadata operations: let HDF5 do them collectively. */
    SE_H5_CHECK_GOTO(err, rc, done, H5Pset_all_coll_metadata_ops(fapl, 1), "%s", path);
    SE_H5_CHECK_GOTO(err, rc, done, H5Pset_coll_metadata_write(fapl, 1), "%s", path);
    *file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  } else {
    *file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
  }
  if (*file < 0) {
    char msg[768];
    se_h5_error_string(msg, sizeof msg);
    rc = se_error_set(err, SE_ERR_IO, __FILE__, __LINE__, __func__, "cannot %s '%s' with MPI-IO%s%s",
                      create ? "create" : "open", path, msg[0] ? ": " : "", msg);
  }
done:
  return CLOSE_IDS(rc, err, path, "/", fapl);
}

int se_h5_open_dataset(hid_t loc, const char *file, const char *path, int *found, H5T_class_t cls,
                       int ndims, hsize_t *dims, hid_t *dset, hid_t *type, se_error *err) {
  *dset = *type = H5I_INVALID_HID;
  int exists = 0;
  SE_TRY(se_h5_exists(loc, file, path, &exists, err));
  if (found)
    *found = exists;
  if (!exists) {
    if (found)
      return SE_OK;
    SE_FAIL(err, SE_ERR_INPUT, "%s: required dataset %s is missing", file, path);
  }
  int rc = SE_OK, nd;
  hid_t obj = H5I_INVALID_HID, t = H5I_INVALID_HID, space = H5I_INVALID_HID;
  H5T_class_t got;
  H5I_type_t it;
  hsize_t d[H5S_MAX_RANK];
  SE_H5_CHECK_GOTO(err, rc, done, obj = H5Oopen(loc, path, H5P_DEFAULT), "%s: %s", file, path);
  it = H5Iget_type(obj);
  if (it != H5I_DATASET)
    SE_FAIL_GOTO(err, rc, done, SE_ERR_INPUT, "%s: %s is not a dataset (a %s)", file, path,
                 it == H5I_GROUP ? "group" : it == H5I_DATATYPE ? "named datatype" : "other object");
  SE_H5_CHECK_GOTO(err, rc, done, t = H5Dget_type(obj), "%s: %s", file, path);
  SE_H5_CHECK_GOTO(err, rc, done, got = H5Tget_class(t), "%s: %s", file, path);
  if (got != cls)
    SE_FAIL_GOTO(err, rc, done, SE_ERR_INPUT, "%s: %s has %s type, expected %s", file, path,
                 se_h5_class_name(got), se_h5_class_name(cls));
  SE_H5_CHECK_GOTO(err, rc, done, space = H5Dget_space(obj), "%s: %s", file, path);
  SE_H5_CHECK_GOTO(err, rc, done, nd = H5Sget_simple_extent_ndims(space), "%s: %s", file, path);
  SE_H5_CHECK_GOTO(err, rc, done, H5Sget_simple_extent_dims(space, d, NULL), "%s: %s: shape", file,
                   path);
  if (nd != ndims) {
    char shape[256] = "";
    size_t used = 0;
    for (int k = 0; k < nd && used < sizeof shape; k++)
      used += (size_t)snprintf(shape + used, sizeof shape - used, "%s%llu", k ? " x " : "",
                               (unsigned long long)d[k]);
    SE_FAIL_GOTO(err, rc, done, SE_ERR_INPUT, "%s: %s has rank %d (shape [%s]), expected %d dimension%s",
                 file, path, nd, nd ? shape : "scalar", ndims, ndims == 1 ? "" : "s");
  }
  for (int k = 0; k < nd; k++) {
    if (d[k] > (hsize_t)INT64_MAX / 16) /* so that sizes in bytes never overflow */
      SE_FAIL_GOTO(err, rc, done, SE_ERR_INPUT, "%s: %s has %llu entries along dimension %d, too many",
                   file, path, (unsigned long long)d[k], k);
    dims[k] = d[k];
  }
  *dset = obj;
  *type = t;
  obj = t = H5I_INVALID_HID;
done:
  return CLOSE_IDS(rc, err, file, path, space, t, obj);
}

/* Reads the selection fspace of dset (n elements) into buf (a packed one-dimensional memory
 * space of n elements of mem_type), independently; closes fspace. */
static int read_selection(hid_t dset, hid_t mem_type, hid_t fspace, int64_t n, void *buf,
                          const char *file, const char *path, se_error *err) {
  int rc = SE_OK;
  hid_t mspace = H5I_INVALID_HID;
  hsize_t dim = (hsize_t)n;
  SE_H5_CHECK_GOTO(err, rc, done, mspace = H5Screate_simple(1, &dim, NULL), "%s: reading %s", file,
                   path);
  SE_H5_CHECK_GOTO(err, rc, done, H5Dread(dset, mem_type, mspace, fspace, H5P_DEFAULT, buf),
                   "%s: reading %s", file, path);
done:
  return CLOSE_IDS(rc, err, file, path, mspace, fspace);
}

int se_h5_read_rows(hid_t dset, hid_t mem_type, size_t elem_size, int64_t start, int64_t count,
                    int64_t row_size, void *buf, const char *file, const char *path, se_error *err) {
  if (count <= 0 || row_size <= 0)
    return SE_OK;
  int64_t row_bytes = row_size * (int64_t)elem_size;
  int64_t piece = SE_H5_PIECE_BYTES / row_bytes > 0 ? SE_H5_PIECE_BYTES / row_bytes : 1;
  hsize_t dims[H5S_MAX_RANK];
  hid_t space = H5Dget_space(dset);
  SE_H5_CHECK(err, space, "%s: reading %s", file, path);
  int nd = H5Sget_simple_extent_dims(space, dims, NULL);
  int rc = SE_OK;
  if (nd < 1)
    SE_FAIL_GOTO(err, rc, done, SE_ERR_HDF5, "%s: reading %s: H5Sget_simple_extent_dims failed", file,
                 path);
  for (int64_t done_rows = 0; done_rows < count && rc == SE_OK; done_rows += piece) {
    int64_t rows = count - done_rows < piece ? count - done_rows : piece;
    hsize_t s[H5S_MAX_RANK] = {(hsize_t)(start + done_rows)}, c[H5S_MAX_RANK] = {(hsize_t)rows};
    for (int k = 1; k < nd; k++) {
      s[k] = 0;
      c[k] = dims[k];
    }
    hid_t fspace = H5Scopy(space);
    SE_H5_CHECK_GOTO(err, rc, done, fspace, "%s: reading %s", file, path);
    if (H5Sselect_hyperslab(fspace, H5S_SELECT_SET, s, NULL, c, NULL) < 0) {
      char msg[768];
      se_h5_error_string(msg, sizeof msg);
      rc = se_error_set(err, SE_ERR_HDF5, __FILE__, __LINE__, __func__,
                        "%s: selecting %s[%lld .. %lld) failed%s%s", file, path,
                        (long long)(start + done_rows), (long long)(start + done_rows + rows),
                        msg[0] ? ": " : "", msg);
      rc = CLOSE_IDS(rc, err, file, path, fspace);
      break;
    }
    rc = read_selection(dset, mem_type, fspace, rows * row_size,
                        (char *)buf + done_rows * row_bytes, file, path, err);
  }
done:
  return CLOSE_IDS(rc, err, file, path, space);
}

/* Checks that the n values just read as uint64 into out fit in int64; value i is entry
 * index[i] of path, or first + i when index is NULL. */
static int check_unsigned_fit(const int64_t *out, int64_t n, int64_t first, const int64_t *index,
                              const char *file, const char *path, se_error *err) {
  const uint64_t *u = (const uint64_t *)out;
  for (int64_t i = 0; i < n; i++)
    if (u[i] > (uint64_t)INT64_MAX)
      SE_FAIL(err, SE_ERR_INPUT, "%s: %s[%lld] = %llu does not fit in int64", file, path,
              (long long)(index ? index[i] : first + i), (unsigned long long)u[i]);
  return SE_OK;
}

int se_h5_read_int64_range(hid_t dset, hid_t type, int64_t start, int64_t count, int64_t *out,
                           const char *file, const char *path, se_error *err) {
  H5T_sign_t sign = H5Tget_sign(type);
  SE_H5_CHECK(err, sign, "%s: %s", file, path);
  int is_unsigned = sign == H5T_SGN_NONE;
  SE_TRY(se_h5_read_rows(dset, is_unsigned ? H5T_NATIVE_UINT64 : H5T_NATIVE_INT64, sizeof(int64_t),
                         start, count, 1, out, file, path, err));
  return is_unsigned ? check_unsigned_fit(out, count, start, NULL, file, path, err) : SE_OK;
}

int se_h5_read_int64_points(hid_t dset, hid_t type, int64_t n, const int64_t *index, int64_t *out,
                            const char *file, const char *path, se_error *err) {
  if (n <= 0)
    return SE_OK;
  H5T_sign_t sign = H5Tget_sign(type);
  SE_H5_CHECK(err, sign, "%s: %s", file, path);
  int is_unsigned = sign == H5T_SGN_NONE;
  hsize_t *coords = malloc((size_t)n * sizeof *coords);
  if (!coords)
    SE_FAIL(err, SE_ERR_NOMEM, "%s: %s: out of memory for %lld points", file, path, (long long)n);
  for (int64_t i = 0; i < n; i++)
    coords[i] = (hsize_t)index[i];
  int rc = SE_OK;
  hid_t fspace = H5I_INVALID_HID;
  SE_H5_CHECK_GOTO(err, rc, done, fspace = H5Dget_space(dset), "%s: %s", file, path);
  if (H5Sselect_elements(fspace, H5S_SELECT_SET, (size_t)n, coords) < 0) {
    char msg[768];
    se_h5_error_string(msg, sizeof msg);
    rc = se_error_set(err, SE_ERR_HDF5, __FILE__, __LINE__, __func__,
                      "%s: selecting %lld points of %s failed%s%s", file, (long long)n, path,
                      msg[0] ? ": " : "", msg);
    rc = CLOSE_IDS(rc, err, file, path, fspace);
    goto done;
  }
  rc = read_selection(dset, is_unsigned ? H5T_NATIVE_UINT64 : H5T_NATIVE_INT64, fspace, n, out,
                      file, path, err);
  if (rc == SE_OK && is_unsigned)
    rc = check_unsigned_fit(out, n, 0, index, file, path, err);
done:
  free(coords);
  return rc;
}

int se_h5_create_dataset(hid_t loc, const char *file, const char *path, hid_t file_type, int ndims,
                         const hsize_t *dims, hid_t *dset, se_error *err) {
  *dset = H5I_INVALID_HID;
  int rc = SE_OK;
  hid_t space = H5I_INVALID_HID, dcpl = H5I_INVALID_HID;
  SE_H5_CHECK_GOTO(err, rc, done, dcpl = H5Pcreate(H5P_DATASET_CREATE), "%s: creating %s", file, path);
  SE_H5_CHECK_GOTO(err, rc, done, H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER), "%s: creating %s",
                   file, path);
  SE_H5_CHECK_GOTO(err, rc, done, space = H5Screate_simple(ndims, dims, NULL), "%s: creating %s",
                   file, path);
  SE_H5_CHECK_GOTO(err, rc, done,
                   *dset = H5Dcreate2(loc, path, file_type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT),
                   "%s: creating %s", file, path);
done:
  return CLOSE_IDS(rc, err, file, path, space, dcpl);
}

int se_h5_write_block(hid_t dset, hid_t mem_type, int ndims, const hsize_t *start,
                      const hsize_t *count, const void *buf, hid_t dxpl, const char *file,
                      const char *path, se_error *err) {
  int rc = SE_OK, empty = 0;
  hid_t fspace = H5I_INVALID_HID, mspace = H5I_INVALID_HID;
  hssize_t n_global;
  for (int d = 0; d < ndims; d++)
    empty |= count[d] == 0;
  SE_H5_CHECK_GOTO(err, rc, done, fspace = H5Dget_space(dset), "%s: writing %s", file, path);
  SE_H5_CHECK_GOTO(err, rc, done, n_global = H5Sget_simple_extent_npoints(fspace), "%s: writing %s",
                   file, path);
  if (n_global == 0) /* no storage that HDF5 1.10 could write to ("addr overflow") */
    goto done;
  SE_H5_CHECK_GOTO(err, rc, done, mspace = H5Screate_simple(ndims, count, NULL), "%s: writing %s",
                   file, path);
  if (empty) {
    SE_H5_CHECK_GOTO(err, rc, done, H5Sselect_none(fspace), "%s: writing %s", file, path);
    SE_H5_CHECK_GOTO(err, rc, done, H5Sselect_none(mspace), "%s: writing %s", file, path);
  } else {
    SE_H5_CHECK_GOTO(err, rc, done, H5Sselect_hyperslab(fspace, H5S_SELECT_SET, start, NULL, count, NULL),
                     "%s: writing %s", file, path);
  }
  SE_H5_CHECK_GOTO(err, rc, done, H5Dwrite(dset, mem_type, mspace, fspace, dxpl, buf),
                   "%s: writing %s", file, path);
done:
  return CLOSE_IDS(rc, err, file, path, mspace, fspace);
}

int se_h5_write_file(const char *path, se_h5_file_writer writer, const void *what, se_error *err) {
  size_t len = strlen(path);
  char *tmp = malloc(len + 5);
  if (!tmp)
    SE_FAIL(err, SE_ERR_NOMEM, "%s: out of memory", path);
  memcpy(tmp, path, len);
  memcpy(tmp + len, ".tmp", 5);
  se_h5_quiet quiet;
  int rc = se_h5_quiet_begin(&quiet, err);
  if (rc != SE_OK) {
    free(tmp);
    return rc;
  }
  hid_t f = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0) {
    char msg[768];
    se_h5_error_string(msg, sizeof msg);
    rc = se_error_set(err, SE_ERR_IO, __FILE__, __LINE__, __func__, "cannot create '%s'%s%s", tmp,
                      msg[0] ? ": " : "", msg);
  } else {
    rc = writer(f, tmp, what, err);
    if (H5Fclose(f) < 0 && rc == SE_OK)
      rc = se_error_set(err, SE_ERR_IO, __FILE__, __LINE__, __func__, "%s: H5Fclose failed", tmp);
    if (rc == SE_OK && rename(tmp, path) != 0)
      rc = se_error_set(err, SE_ERR_IO, __FILE__, __LINE__, __func__,
                        "cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
    if (rc != SE_OK)
      remove(tmp);
  }
  int qrc = se_h5_quiet_end(&quiet, rc == SE_OK ? err : NULL);
  free(tmp);
  return rc != SE_OK ? rc : qrc;
}
