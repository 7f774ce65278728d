/* Version-1 neurons input files (docs/input-neurons.md): the parallel reader with its checks of
 * every dataset, shape, type and value, and the serial writer. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "h5_util.h"
#include "input_neurons.h"

#define SE_INPUT_FORMAT "simengine-input"
#define SE_INPUT_VERSION 1

/* ---- the parts of the reader ---------------------------------------------------------------- */

/* Fails with SE_ERR_IO when path cannot be opened, SE_ERR_INPUT when it is no HDF5 file. */
static int check_file(const char *path, se_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    int e = errno;
    SE_FAIL(err, SE_ERR_IO, "cannot open '%s': %s", path, e == ENOENT ? "no such file" : strerror(e));
  }
  if (fclose(f) != 0)
    SE_FAIL(err, SE_ERR_IO, "cannot close '%s': %s", path, strerror(errno));
  htri_t is = H5Fis_hdf5(path);
  if (is < 0) {
    char msg[768];
    se_h5_error_string(msg, sizeof msg);
    SE_FAIL(err, SE_ERR_INPUT, "'%s' is not an HDF5 file (H5Fis_hdf5 failed%s%s)", path,
            msg[0] ? ": " : "", msg);
  }
  if (is == 0)
    SE_FAIL(err, SE_ERR_INPUT, "'%s' is not an HDF5 file (no HDF5 signature)", path);
  return SE_OK;
}

/* Checks the root attributes format and version and reads workload. */
static int read_header(hid_t file, const char *src, char *workload, size_t workload_size,
                       se_error *err) {
  char format[64];
  SE_TRY(se_h5_read_attr_string(file, src, "/", "format", NULL, format, sizeof format, err));
  if (strcmp(format, SE_INPUT_FORMAT) != 0)
    SE_FAIL(err, SE_ERR_INPUT, "%s: root attribute format = \"%s\" is not \"%s\"", src, format,
            SE_INPUT_FORMAT);
  int64_t version = 0;
  SE_TRY(se_h5_read_attr_int64(file, src, "/", "version", NULL, &version, err));
  if (version != SE_INPUT_VERSION)
    SE_FAIL(err, SE_ERR_INPUT, "%s: root attribute version = %lld is not %d (the version this build reads)",
            src, (long long)version, SE_INPUT_VERSION);
  SE_TRY(se_h5_read_attr_string(file, src, "/", "workload", NULL, workload, workload_size, err));
  return SE_OK;
}

/* Narrows n int64 values of dataset path to a new int32 array; a value out of range is an error
 * naming the index and the value. */
static int narrow_int32(const char *src, const char *path, const int64_t *in, int64_t n, int32_t **out,
                        se_error *err) {
  SE_CALLOC(err, *out, n, path);
  for (int64_t i = 0; i < n; i++) {
    if (in[i] < INT32_MIN || in[i] > INT32_MAX) {
      free(*out);
      *out = NULL;
      SE_FAIL(err, SE_ERR_INPUT, "%s: %s[%lld] = %lld does not fit in int32", src, path, (long long)i,
              (long long)in[i]);
    }
  }
  for (int64_t i = 0; i < n; i++)
    (*out)[i] = (int32_t)in[i];
  return SE_OK;
}

/* Reads an integer dataset into a new int32 array (*n entries). found as in se_h5_read_int64s. */
static int read_int32s(hid_t file, const char *src, const char *path, int *found, int32_t **out,
                       int64_t *n, se_error *err) {
  int64_t *wide = NULL;
  *out = NULL;
  SE_TRY(se_h5_read_int64s(file, src, path, found, &wide, n, err));
  if (!wide)
    return SE_OK;
  int rc = narrow_int32(src, path, wide, *n, out, err);
  free(wide);
  return rc;
}

/* Fails unless dataset path has n entries, the length of dataset ref_path. */
static int check_length(const char *src, const char *path, int64_t got, const char *ref_path, int64_t n,
                        se_error *err) {
  if (got != n)
    SE_FAIL(err, SE_ERR_INPUT, "%s: %s has %lld entries, %s has %lld", src, path, (long long)got,
            ref_path, (long long)n);
  return SE_OK;
}

static int read_run(hid_t file, const char *src, se_neuron_model *m, se_error *err) {
  int found;
  SE_TRY(se_h5_read_attr_double(file, src, "/run", "dt", NULL, &m->dt, err));
  SE_TRY(se_h5_read_attr_double(file, src, "/run", "tstop", NULL, &m->tstop, err));
  SE_TRY(se_h5_read_attr_double(file, src, "/run", "v_init", &found, &m->v_init, err));
  SE_TRY(se_h5_read_attr_double(file, src, "/run", "celsius", &found, &m->celsius, err));
  SE_TRY(se_h5_read_attr_double(file, src, "/run", "spike_threshold", &found, &m->spike_threshold, err));
  return SE_OK;
}

static int read_morphologies(hid_t file, const char *src, se_neuron_model *m, se_error *err) {
  int64_t n_off, c, n;
  SE_TRY(se_h5_read_int64s(file, src, "/morphologies/offsets", NULL, &m->morph_offsets, &n_off, err));
  if (n_off < 1)
    SE_FAIL(err, SE_ERR_INPUT, "%s: /morphologies/offsets has 0 entries, needs M + 1 >= 1", src);
  m->n_morphologies = n_off - 1;
  SE_TRY(read_int32s(file, src, "/morphologies/parent", NULL, &m->parent, &c, err));
  SE_TRY(se_h5_read_doubles(file, src, "/morphologies/length", NULL, &m->length, &n, err));
  SE_TRY(check_length(src, "/morphologies/length", n, "/morphologies/parent", c, err));
  SE_TRY(se_h5_read_doubles(file, src, "/morphologies/diameter", NULL, &m->diameter, &n, err));
  SE_TRY(check_length(src, "/morphologies/diameter", n, "/morphologies/parent", c, err));
  SE_TRY(read_int32s(file, src, "/morphologies/region", NULL, &m->region, &n, err));
  SE_TRY(check_length(src, "/morphologies/region", n, "/morphologies/parent", c, err));
  int64_t last = m->morph_offsets[m->n_morphologies];
  if (last != c)
    SE_FAIL(err, SE_ERR_INPUT,
            "%s: /morphologies/offsets[%lld] = %lld is not the number of compartments C = %lld (the "
            "length of /morphologies/parent)",
            src, (long long)m->n_morphologies, (long long)last, (long long)c);
  return SE_OK;
}

static int read_cells(hid_t file, const char *src, se_neuron_model *m, se_error *err) {
  int64_t n;
  int found;
  SE_TRY(read_int32s(file, src, "/cells/morphology", NULL, &m->cell_morphology, &m->n_cells, err));
  SE_TRY(se_h5_read_uint64s(file, src, "/cells/gid", &found, &m->cell_gid, &n, err));
  if (found) {
    SE_TRY(check_length(src, "/cells/gid", n, "/cells/morphology", m->n_cells, err));
    SE_TRY(se_h5_read_attr_string(file, src, "/cells/gid", "population", &found, m->population,
                                  sizeof m->population, err));
  } else {
    SE_CALLOC(err, m->cell_gid, m->n_cells, "/cells/gid");
    for (int64_t i = 0; i < m->n_cells; i++)
      m->cell_gid[i] = (uint64_t)i;
  }
  return SE_OK;
}

/* Reads /biophysics: n_regions = R = max region + 1, or the common length of the datasets when
 * longer; a missing dataset takes NEURON's default for every region (se_biophysics_alloc). */
static int read_biophysics(hid_t file, const char *src, se_neuron_model *m, se_error *err) {
  int64_t c = se_neuron_model_compartments(m), arg_max = -1;
  for (int64_t i = 0; i < c; i++)
    if (arg_max < 0 || m->region[i] > m->region[arg_max])
      arg_max = i;
  if (arg_max >= 0 && m->region[arg_max] > SE_MAX_REGION)
    SE_FAIL(err, SE_ERR_INPUT,
            "%s: /morphologies/region[%lld] = %d is above the largest region code %d (the "
            "/biophysics arrays would need max region + 1 entries)",
            src, (long long)arg_max, m->region[arg_max], SE_MAX_REGION);
  int64_t r_needed = arg_max < 0 ? 0 : (int64_t)m->region[arg_max] + 1;
  if (r_needed < 0)
    r_needed = 0; /* every region negative: refused by the validation */
  char first[64] = "";
  int64_t n_regions = r_needed;
  for (int f = 0; f < SE_BIOPHYSICS_FIELDS; f++) {
    char path[64];
    snprintf(path, sizeof path, "/biophysics/%s", se_biophysics_field_name(f));
    int found;
    int64_t len;
    SE_TRY(se_h5_read_doubles(file, src, path, &found, se_biophysics_field(&m->bio, f), &len, err));
    if (!found)
      continue;
    if (first[0]) {
      SE_TRY(check_length(src, path, len, first, n_regions, err));
      continue;
    }
    snprintf(first, sizeof first, "%s", path);
    if (len < r_needed)
      SE_FAIL(err, SE_ERR_INPUT,
              "%s: %s has %lld entries, but /morphologies/region[%lld] = %d needs %lld (R = max region + 1)",
              src, path, (long long)len, (long long)arg_max, m->region[arg_max], (long long)r_needed);
    if (len > INT32_MAX)
      SE_FAIL(err, SE_ERR_INPUT, "%s: %s has %lld entries, too many regions", src, path,
              (long long)len);
    n_regions = len;
  }
  return se_biophysics_alloc(&m->bio, (int32_t)n_regions, err);
}

static int read_iclamps(hid_t file, const char *src, se_neuron_model *m, se_error *err) {
  int found;
  SE_TRY(se_h5_exists(file, src, "/stimuli/iclamp", &found, err));
  if (!found)
    return SE_OK;
  int64_t n;
  SE_TRY(se_h5_read_int64s(file, src, "/stimuli/iclamp/cell", NULL, &m->iclamp_cell, &m->n_iclamps, err));
  SE_TRY(read_int32s(file, src, "/stimuli/iclamp/compartment", NULL, &m->iclamp_compartment, &n, err));
  SE_TRY(check_length(src, "/stimuli/iclamp/compartment", n, "/stimuli/iclamp/cell", m->n_iclamps, err));
  struct {
    const char *path;
    double **values;
  } fields[] = {{"/stimuli/iclamp/delay", &m->iclamp_delay},
                {"/stimuli/iclamp/duration", &m->iclamp_duration},
                {"/stimuli/iclamp/amplitude", &m->iclamp_amplitude}};
  for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
    SE_TRY(se_h5_read_doubles(file, src, fields[f].path, NULL, fields[f].values, &n, err));
    SE_TRY(check_length(src, fields[f].path, n, "/stimuli/iclamp/cell", m->n_iclamps, err));
  }
  return SE_OK;
}

/* A recorded cell with its position in /record/cells, to sort and find duplicates. */
typedef struct record_entry {
  int64_t cell, index;
} record_entry;

static int compare_record_entry(const void *a, const void *b) {
  const record_entry *x = a, *y = b;
  if (x->cell != y->cell)
    return x->cell < y->cell ? -1 : 1;
  return x->index < y->index ? -1 : (x->index > y->index);
}

/* Checks /record/cells (each in range, no duplicates) and sorts it ascending. */
static int sort_record_cells(const char *src, se_neuron_model *m, se_error *err) {
  int64_t n = m->n_record_cells;
  int sorted = 1;
  for (int64_t r = 0; r < n; r++) {
    int64_t c = m->record_cells[r];
    if (c < 0 || c >= m->n_cells)
      SE_FAIL(err, SE_ERR_INPUT, "%s: /record/cells[%lld] = %lld is not in [0, %lld) (the cells)", src,
              (long long)r, (long long)c, (long long)m->n_cells);
    if (r > 0 && c <= m->record_cells[r - 1])
      sorted = 0;
  }
  if (sorted)
    return SE_OK;
  record_entry *e;
  SE_CALLOC(err, e, n, "sorting /record/cells");
  for (int64_t r = 0; r < n; r++)
    e[r] = (record_entry){m->record_cells[r], r};
  qsort(e, (size_t)n, sizeof *e, compare_record_entry);
  for (int64_t r = 1; r < n; r++) {
    if (e[r].cell == e[r - 1].cell) {
      record_entry a = e[r - 1], b = e[r];
      free(e);
      SE_FAIL(err, SE_ERR_INPUT, "%s: /record/cells[%lld] = %lld repeats /record/cells[%lld] (duplicates)",
              src, (long long)b.index, (long long)b.cell, (long long)a.index);
    }
  }
  for (int64_t r = 0; r < n; r++)
    m->record_cells[r] = e[r].cell;
  free(e);
  return SE_OK;
}

static int read_record(hid_t file, const char *src, se_neuron_model *m, se_error *err) {
  int found;
  int64_t every = 1;
  SE_TRY(se_h5_read_attr_int64(file, src, "/record", "every", &found, &every, err));
  if (every < 1 || every > INT32_MAX)
    SE_FAIL(err, SE_ERR_INPUT, "%s: /record attribute every = %lld is not in [1, %d]", src,
            (long long)every, INT32_MAX);
  m->record_every = (int32_t)every;
  char text[32];
  SE_TRY(se_h5_read_attr_string(file, src, "/record", "compartments", &found, text, sizeof text, err));
  if (found) {
    if (strcmp(text, "soma") == 0)
      m->record_what = SE_RECORD_SOMA;
    else if (strcmp(text, "all") == 0)
      m->record_what = SE_RECORD_ALL;
    else
      SE_FAIL(err, SE_ERR_INPUT, "%s: /record attribute compartments = \"%s\" is not \"soma\" or \"all\"",
              src, text);
  }
  SE_TRY(se_h5_read_attr_string(file, src, "/record", "dtype", &found, text, sizeof text, err));
  if (found) {
    if (strcmp(text, "float32") == 0)
      m->record_float64 = 0;
    else if (strcmp(text, "float64") == 0)
      m->record_float64 = 1;
    else
      SE_FAIL(err, SE_ERR_INPUT, "%s: /record attribute dtype = \"%s\" is not \"float32\" or \"float64\"",
              src, text);
  }
  SE_TRY(se_h5_read_int64s(file, src, "/record/cells", &found, &m->record_cells, &m->n_record_cells, err));
  if (found)
    return sort_record_cells(src, m, err);
  m->n_record_cells = m->n_cells;
  SE_CALLOC(err, m->record_cells, m->n_cells, "/record/cells");
  for (int64_t i = 0; i < m->n_cells; i++)
    m->record_cells[i] = i;
  return SE_OK;
}

/* Reads every part of an open file into the model m points to and validates it (independent
 * reads; not collective). A read_input_file reader. */
static int read_model(hid_t file, const char *src, void *model, se_error *err) {
  se_neuron_model *m = model;
  char workload[64];
  SE_TRY(read_header(file, src, workload, sizeof workload, err));
  if (strcmp(workload, "neurons") != 0)
    SE_FAIL(err, SE_ERR_INPUT, "%s: root attribute workload = \"%s\" is not \"neurons\"", src, workload);
  SE_TRY(read_run(file, src, m, err));
  SE_TRY(read_morphologies(file, src, m, err));
  SE_TRY(read_cells(file, src, m, err));
  SE_TRY(read_biophysics(file, src, m, err));
  SE_TRY(read_iclamps(file, src, m, err));
  SE_TRY(read_record(file, src, m, err));
  return se_neuron_model_validate(m, src, err);
}

/* Closes a file opened by se_h5_open_mpio (collective; nothing when file is invalid); a failure
 * becomes the error when rc is SE_OK. */
static int close_parallel(hid_t file, const char *path, int rc, se_error *err) {
  if (file >= 0 && H5Fclose(file) < 0 && rc == SE_OK)
    rc = se_error_set(err, SE_ERR_HDF5, __FILE__, __LINE__, __func__, "%s: H5Fclose failed", path);
  return rc;
}

/* Reads what a reader wants from the open file (src names it in messages) into out. */
typedef int (*input_reader)(hid_t file, const char *src, void *out, se_error *err);

/* Checks that path is an HDF5 file, opens it with MPI-IO, runs reader on it and closes it, with
 * HDF5's error printing off meanwhile; every rank returns the same outcome (se_mpi_agree).
 * Collective over comm. */
static int read_input_file(const char *path, MPI_Comm comm, input_reader reader, void *out,
                           se_error *err) {
  se_h5_quiet quiet;
  SE_TRY(se_h5_quiet_begin(&quiet, err));
  int rc = se_mpi_agree(comm, check_file(path, err), err);
  if (rc == SE_OK) {
    hid_t file;
    rc = se_h5_open_mpio(path, comm, 0, &file, err);
    if (rc == SE_OK)
      rc = reader(file, path, out, err);
    rc = se_mpi_agree(comm, close_parallel(file, path, rc, err), err);
  }
  int qrc = se_h5_quiet_end(&quiet, rc == SE_OK ? err : NULL);
  return rc != SE_OK ? rc : qrc;
}

/* The workload buffer of se_input_workload. */
typedef struct workload_buffer {
  char *text;
  size_t size;
} workload_buffer;

/* A read_input_file reader: the root attributes into the workload_buffer out points to. */
static int read_workload(hid_t file, const char *src, void *out, se_error *err) {
  workload_buffer *w = out;
  return read_header(file, src, w->text, w->size, err);
}

int se_input_workload(const char *path, MPI_Comm comm, char *workload, size_t workload_size,
                      se_error *err) {
  if (!path || !workload || workload_size == 0)
    SE_FAIL(err, SE_ERR_ARG, "se_input_workload: no path or no workload buffer");
  workload_buffer w = {workload, workload_size};
  return read_input_file(path, comm, read_workload, &w, err);
}

int se_input_read_neurons(const char *path, MPI_Comm comm, se_neuron_model *model, se_error *err) {
  if (!path || !model)
    SE_FAIL(err, SE_ERR_ARG, "se_input_read_neurons: no path or no model");
  se_neuron_model_init(model);
  int rc = read_input_file(path, comm, read_model, model, err);
  if (rc != SE_OK)
    se_neuron_model_free(model);
  return rc;
}

/* ---- the writer ------------------------------------------------------------------------------ */

static int write_model(hid_t f, const char *dst, const se_neuron_model *m, se_error *err) {
  int64_t c = se_neuron_model_compartments(m);
  SE_TRY(se_h5_write_attr_string(f, dst, "/", "format", SE_INPUT_FORMAT, err));
  SE_TRY(se_h5_write_attr_int64(f, dst, "/", "version", SE_INPUT_VERSION, err));
  SE_TRY(se_h5_write_attr_string(f, dst, "/", "workload", "neurons", err));

  SE_TRY(se_h5_create_group(f, dst, "/run", err));
  const struct { const char *name; double v; } run[] = {{"dt", m->dt},
                                                        {"tstop", m->tstop},
                                                        {"v_init", m->v_init},
                                                        {"celsius", m->celsius},
                                                        {"spike_threshold", m->spike_threshold}};
  for (size_t i = 0; i < sizeof run / sizeof run[0]; i++)
    SE_TRY(se_h5_write_attr_double(f, dst, "/run", run[i].name, run[i].v, err));

  SE_TRY(se_h5_create_group(f, dst, "/morphologies", err));
  SE_TRY(se_h5_write_dataset(f, dst, "/morphologies/offsets", H5T_STD_I64LE, H5T_NATIVE_INT64,
                             m->n_morphologies + 1, m->morph_offsets, err));
  SE_TRY(se_h5_write_dataset(f, dst, "/morphologies/parent", H5T_STD_I32LE, H5T_NATIVE_INT32, c,
                             m->parent, err));
  SE_TRY(se_h5_write_dataset(f, dst, "/morphologies/length", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, c,
                             m->length, err));
  SE_TRY(se_h5_write_dataset(f, dst, "/morphologies/diameter", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, c,
                             m->diameter, err));
  SE_TRY(se_h5_write_dataset(f, dst, "/morphologies/region", H5T_STD_I32LE, H5T_NATIVE_INT32, c,
                             m->region, err));

  SE_TRY(se_h5_create_group(f, dst, "/cells", err));
  SE_TRY(se_h5_write_dataset(f, dst, "/cells/morphology", H5T_STD_I32LE, H5T_NATIVE_INT32, m->n_cells,
                             m->cell_morphology, err));
  SE_TRY(se_h5_write_dataset(f, dst, "/cells/gid", H5T_STD_U64LE, H5T_NATIVE_UINT64, m->n_cells,
                             m->cell_gid, err));
  SE_TRY(se_h5_write_attr_string(f, dst, "/cells/gid", "population", m->population, err));

  SE_TRY(se_h5_create_group(f, dst, "/biophysics", err));
  const se_biophysics *b = &m->bio;
  const struct { const char *path; const double *v; } bio[] = {
      {"/biophysics/cm", b->cm},       {"/biophysics/ra", b->ra},
      {"/biophysics/g_pas", b->g_pas}, {"/biophysics/e_pas", b->e_pas},
      {"/biophysics/gnabar_hh", b->gnabar_hh}, {"/biophysics/gkbar_hh", b->gkbar_hh},
      {"/biophysics/gl_hh", b->gl_hh}, {"/biophysics/el_hh", b->el_hh},
      {"/biophysics/ena", b->ena},     {"/biophysics/ek", b->ek}};
  for (size_t i = 0; i < sizeof bio / sizeof bio[0]; i++)
    SE_TRY(se_h5_write_dataset(f, dst, bio[i].path, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, b->n_regions,
                               bio[i].v, err));

  if (m->n_iclamps > 0) {
    SE_TRY(se_h5_create_group(f, dst, "/stimuli", err));
    SE_TRY(se_h5_create_group(f, dst, "/stimuli/iclamp", err));
    SE_TRY(se_h5_write_dataset(f, dst, "/stimuli/iclamp/cell", H5T_STD_I64LE, H5T_NATIVE_INT64,
                               m->n_iclamps, m->iclamp_cell, err));
    SE_TRY(se_h5_write_dataset(f, dst, "/stimuli/iclamp/compartment", H5T_STD_I32LE, H5T_NATIVE_INT32,
                               m->n_iclamps, m->iclamp_compartment, err));
    SE_TRY(se_h5_write_dataset(f, dst, "/stimuli/iclamp/delay", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                               m->n_iclamps, m->iclamp_delay, err));
    SE_TRY(se_h5_write_dataset(f, dst, "/stimuli/iclamp/duration", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                               m->n_iclamps, m->iclamp_duration, err));
    SE_TRY(se_h5_write_dataset(f, dst, "/stimuli/iclamp/amplitude", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE,
                               m->n_iclamps, m->iclamp_amplitude, err));
  }

  SE_TRY(se_h5_create_group(f, dst, "/record", err));
  SE_TRY(se_h5_write_attr_int64(f, dst, "/record", "every", m->record_every, err));
  SE_TRY(se_h5_write_attr_string(f, dst, "/record", "compartments",
                                 m->record_what == SE_RECORD_ALL ? "all" : "soma", err));
  SE_TRY(se_h5_write_attr_string(f, dst, "/record", "dtype", m->record_float64 ? "float64" : "float32",
                                 err));
  if (m->n_record_cells < m->n_cells)
    SE_TRY(se_h5_write_dataset(f, dst, "/record/cells", H5T_STD_I64LE, H5T_NATIVE_INT64,
                               m->n_record_cells, m->record_cells, err));
  return SE_OK;
}

/* An se_h5_file_writer for a neurons model. */
static int write_model_file(hid_t f, const char *dst, const void *what, se_error *err) {
  return write_model(f, dst, what, err);
}

int se_input_write_neurons(const char *path, const se_neuron_model *model, se_error *err) {
  if (!path || !model)
    SE_FAIL(err, SE_ERR_ARG, "se_input_write_neurons: no path or no model");
  SE_TRY(se_neuron_model_validate(model, path, err));
  return se_h5_write_file(path, write_model_file, model, err);
}
