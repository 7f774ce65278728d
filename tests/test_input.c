/* Tests of the neurons input file (io/input_neurons.c, src/neuron_model.c):
 *   test_input unit <dir>    round trip, defaults, integer widths, string kinds and every bad-input
 *                            case (one rank)
 *   test_input mpi <dir>     round trip and failures agreed over every rank (run with 2 or 3 ranks)
 *   test_input write <path>  writes the reference model (for tests/check_input.py)
 *   test_input check <path>  reads path and compares it with the reference model
 *   test_input read <path>   reads path (any valid file) and prints a summary
 * Files are made in <dir>; the bad ones are the reference file modified with raw HDF5 calls. */
#include <hdf5.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input_neurons.h"
#include "se_test.h"
#include "se_test_mpi.h"
#include "simengine/neurons.h"

/* Aborts the test on a failing HDF5 call in the test's own file surgery. */
#define H5OK(call)                                                                   \
  do {                                                                               \
    if ((call) < 0) {                                                                \
      fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #call);              \
      MPI_Abort(MPI_COMM_WORLD, 2);                                                  \
    }                                                                                \
  } while (0)

/* ---- the reference model ------------------------------------------------------------------- */

static void *dup_array(const void *src, size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) {
    fprintf(stderr, "out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  memcpy(p, src, bytes);
  return p;
}
#define DUP(arr) dup_array((arr), sizeof(arr))

/* Two morphologies (4 and 3 compartments), three cells, two current clamps, cells 0 and 2
 * recorded; values chosen so that any lossy conversion would show. */
static void reference_model(se_neuron_model *m) {
  se_neuron_model_init(m);
  m->dt = 0.025;
  m->tstop = 10.0 / 3.0;
  m->v_init = -64.5;
  m->celsius = 20.0;
  m->spike_threshold = -1.0 / 3.0;
  const int64_t off[] = {0, 4, 7};
  const int32_t parent[] = {-1, 0, 1, 1, -1, 0, 0};
  const double length[] = {20.0 / 3.0, 100.0, 1.0 / 7.0, 55.5, 12.0, 1e-3, 300.25};
  const double diameter[] = {20.0, 2.0 / 3.0, 0.5, 1.25, 15.0, 3.0, 0.1};
  const int32_t region[] = {1, 3, 3, 4, 1, 2, 2};
  m->n_morphologies = 2;
  m->morph_offsets = DUP(off);
  m->parent = DUP(parent);
  m->length = DUP(length);
  m->diameter = DUP(diameter);
  m->region = DUP(region);
  const int32_t morph[] = {0, 1, 0};
  const uint64_t gid[] = {10, 20, UINT64_C(18446744073709551615)};
  m->n_cells = 3;
  m->cell_morphology = DUP(morph);
  m->cell_gid = DUP(gid);
  strcpy(m->population, "cortex");
  const double bio[SE_BIOPHYSICS_FIELDS][5] = {
      {1.0, 1.0, 1.5, 2.0, 0.75},                 /* cm */
      {35.4, 100.0, 150.0, 200.0, 1.0 / 3.0},     /* ra */
      {0.0, 0.0, 1e-4, 3e-5, 2e-4},               /* g_pas */
      {-70.0, -65.0, -70.5, -71.0, -72.0},        /* e_pas */
      {0.0, 0.12, 0.0, 0.0, 0.0},                 /* gnabar_hh */
      {0.0, 0.036, 0.0, 0.0, 0.0},                /* gkbar_hh */
      {0.0, 0.0003, 0.0, 0.0, 0.0},               /* gl_hh */
      {-54.3, -54.3, -54.3, -54.3, -50.0},        /* el_hh */
      {50.0, 55.0, 50.0, 50.0, 50.0},             /* ena */
      {-77.0, -80.0, -77.0, -77.0, -77.0}};       /* ek */
  m->bio.n_regions = 5;
  for (int f = 0; f < SE_BIOPHYSICS_FIELDS; f++)
    *se_biophysics_field(&m->bio, f) = DUP(bio[f]);
  const int64_t ic_cell[] = {0, 2};
  const int32_t ic_comp[] = {0, 3};
  const double delay[] = {1.0, 2.0 / 3.0}, duration[] = {5.0, 0.0}, amplitude[] = {0.1, -0.05};
  m->n_iclamps = 2;
  m->iclamp_cell = DUP(ic_cell);
  m->iclamp_compartment = DUP(ic_comp);
  m->iclamp_delay = DUP(delay);
  m->iclamp_duration = DUP(duration);
  m->iclamp_amplitude = DUP(amplitude);
  const int64_t rec[] = {0, 2};
  m->record_every = 4;
  m->record_what = SE_RECORD_ALL;
  m->record_float64 = 1;
  m->n_record_cells = 2;
  m->record_cells = DUP(rec);
}

/* Compares every field of a and b exactly (bitwise for arrays). */
static void expect_equal(se_test_state *st, const se_neuron_model *a, const se_neuron_model *b) {
#define SAME_SCALAR(f) SE_EXPECT(st, a->f == b->f, "%s differs", #f)
#define SAME_ARRAY(f, n)                                                                            \
  SE_EXPECT(st, (n) == 0 || (a->f && b->f && memcmp(a->f, b->f, (size_t)(n) * sizeof *a->f) == 0), \
            "%s differs", #f)
  SAME_SCALAR(dt);
  SAME_SCALAR(tstop);
  SAME_SCALAR(v_init);
  SAME_SCALAR(celsius);
  SAME_SCALAR(spike_threshold);
  SAME_SCALAR(n_morphologies);
  if (a->n_morphologies != b->n_morphologies)
    return;
  SAME_ARRAY(morph_offsets, a->n_morphologies + 1);
  int64_t c = se_neuron_model_compartments(a);
  SE_EXPECT(st, c == se_neuron_model_compartments(b), "compartments differ");
  if (c != se_neuron_model_compartments(b))
    return;
  SAME_ARRAY(parent, c);
  SAME_ARRAY(length, c);
  SAME_ARRAY(diameter, c);
  SAME_ARRAY(region, c);
  SAME_SCALAR(n_cells);
  if (a->n_cells == b->n_cells) {
    SAME_ARRAY(cell_morphology, a->n_cells);
    SAME_ARRAY(cell_gid, a->n_cells);
  }
  SE_EXPECT(st, strcmp(a->population, b->population) == 0, "population \"%s\" vs \"%s\"", a->population,
            b->population);
  SAME_SCALAR(bio.n_regions);
  if (a->bio.n_regions == b->bio.n_regions) {
    int32_t r = a->bio.n_regions;
    SAME_ARRAY(bio.cm, r);
    SAME_ARRAY(bio.ra, r);
    SAME_ARRAY(bio.g_pas, r);
    SAME_ARRAY(bio.e_pas, r);
    SAME_ARRAY(bio.gnabar_hh, r);
    SAME_ARRAY(bio.gkbar_hh, r);
    SAME_ARRAY(bio.gl_hh, r);
    SAME_ARRAY(bio.el_hh, r);
    SAME_ARRAY(bio.ena, r);
    SAME_ARRAY(bio.ek, r);
  }
  SAME_SCALAR(n_iclamps);
  if (a->n_iclamps == b->n_iclamps) {
    SAME_ARRAY(iclamp_cell, a->n_iclamps);
    SAME_ARRAY(iclamp_compartment, a->n_iclamps);
    SAME_ARRAY(iclamp_delay, a->n_iclamps);
    SAME_ARRAY(iclamp_duration, a->n_iclamps);
    SAME_ARRAY(iclamp_amplitude, a->n_iclamps);
  }
  SAME_SCALAR(record_every);
  SAME_SCALAR(record_what);
  SAME_SCALAR(record_float64);
  SAME_SCALAR(n_record_cells);
  if (a->n_record_cells == b->n_record_cells)
    SAME_ARRAY(record_cells, a->n_record_cells);
#undef SAME_SCALAR
#undef SAME_ARRAY
}

/* Reads path over comm and expects success and a model equal to ref; what names the case. */
static void expect_reads_as(se_test_state *st, const char *what, const char *path, MPI_Comm comm,
                            const se_neuron_model *ref) {
  se_neuron_model m;
  se_error err = {0};
  int rc = se_input_read_neurons(path, comm, &m, &err);
  SE_EXPECT(st, rc == SE_OK, "%s: read %s: %s", what, path, err.message);
  if (rc == SE_OK) {
    expect_equal(st, ref, &m);
    se_neuron_model_free(&m);
  }
}

/* ---- file surgery with raw HDF5 calls ------------------------------------------------------- */

static void delete_link(hid_t f, const char *path) { H5OK(H5Ldelete(f, path, H5P_DEFAULT)); }

static void delete_attr(hid_t f, const char *obj, const char *name) {
  H5OK(H5Adelete_by_name(f, obj, name, H5P_DEFAULT));
}

/* Replaces (or creates) scalar attribute name of obj. */
static void put_attr(hid_t f, const char *obj, const char *name, hid_t file_type, hid_t mem_type,
                     const void *value) {
  htri_t e = H5Aexists_by_name(f, obj, name, H5P_DEFAULT);
  H5OK(e);
  if (e > 0)
    delete_attr(f, obj, name);
  hid_t space = H5Screate(H5S_SCALAR);
  H5OK(space);
  hid_t a = H5Acreate_by_name(f, obj, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5OK(a);
  H5OK(H5Awrite(a, mem_type, value));
  H5OK(H5Aclose(a));
  H5OK(H5Sclose(space));
}

/* A string attribute: variable-length UTF-8, or fixed-length ASCII (null-padded, as numpy's
 * bytes). */
static void put_attr_string(hid_t f, const char *obj, const char *name, const char *value, int fixed) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5OK(t);
  if (fixed) {
    H5OK(H5Tset_size(t, strlen(value)));
    H5OK(H5Tset_strpad(t, H5T_STR_NULLPAD));
    put_attr(f, obj, name, t, t, value);
  } else {
    H5OK(H5Tset_size(t, H5T_VARIABLE));
    H5OK(H5Tset_cset(t, H5T_CSET_UTF8));
    put_attr(f, obj, name, t, t, &value);
  }
  H5OK(H5Tclose(t));
}

static void put_attr_int(hid_t f, const char *obj, const char *name, int64_t v) {
  put_attr(f, obj, name, H5T_STD_I64LE, H5T_NATIVE_INT64, &v);
}

static void put_attr_double(hid_t f, const char *obj, const char *name, double v) {
  put_attr(f, obj, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &v);
}

/* Replaces dataset path by one of n entries (shape [n], or [n/2 x 2] when two_d). */
static void put_dataset(hid_t f, const char *path, hid_t file_type, hid_t mem_type, int64_t n,
                        const void *data, int two_d) {
  htri_t e = H5Lexists(f, path, H5P_DEFAULT);
  H5OK(e);
  if (e > 0)
    delete_link(f, path);
  hsize_t dims[2] = {two_d ? (hsize_t)n / 2 : (hsize_t)n, 2};
  hid_t space = H5Screate_simple(two_d ? 2 : 1, dims, NULL);
  H5OK(space);
  hid_t d = H5Dcreate2(f, path, file_type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5OK(d);
  if (n > 0)
    H5OK(H5Dwrite(d, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data));
  H5OK(H5Dclose(d));
  H5OK(H5Sclose(space));
}

/* Reads dataset path as doubles (any numeric type); returns the array and its length. */
static double *get_doubles(hid_t f, const char *path, int64_t *n) {
  hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
  H5OK(d);
  hid_t space = H5Dget_space(d);
  H5OK(space);
  hssize_t np = H5Sget_simple_extent_npoints(space);
  H5OK(np);
  size_t count = np > 0 ? (size_t)np : 0;
  double *v = calloc(count + 1, sizeof *v);
  if (!v)
    MPI_Abort(MPI_COMM_WORLD, 2);
  if (np > 0)
    H5OK(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v));
  H5OK(H5Sclose(space));
  H5OK(H5Dclose(d));
  *n = (int64_t)np;
  return v;
}

/* Sets element index of dataset path (of any numeric type) to value, in place. */
static void set_element(hid_t f, const char *path, int64_t index, double value) {
  hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
  H5OK(d);
  hid_t space = H5Dget_space(d);
  H5OK(space);
  hsize_t start = (hsize_t)index, count = 1;
  H5OK(H5Sselect_hyperslab(space, H5S_SELECT_SET, &start, NULL, &count, NULL));
  hid_t mem = H5Screate_simple(1, &count, NULL);
  H5OK(mem);
  H5OK(H5Dwrite(d, H5T_NATIVE_DOUBLE, mem, space, H5P_DEFAULT, &value));
  H5OK(H5Sclose(mem));
  H5OK(H5Sclose(space));
  H5OK(H5Dclose(d));
}

/* Replaces dataset path by the same values stored with another file type (a float dataset where
 * an integer one is required, a narrower integer, ...). */
static void retype(hid_t f, const char *path, hid_t file_type) {
  int64_t n;
  double *v = get_doubles(f, path, &n);
  put_dataset(f, path, file_type, H5T_NATIVE_DOUBLE, n, v, 0);
  free(v);
}

/* Replaces dataset path by its first n + delta entries (delta <= 0) as float64 or int64. */
static void resize(hid_t f, const char *path, int64_t delta, int as_int) {
  int64_t n;
  double *v = get_doubles(f, path, &n);
  put_dataset(f, path, as_int ? H5T_STD_I64LE : H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, n + delta, v, 0);
  free(v);
}

static hid_t open_rw(const char *path) {
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  H5OK(f);
  return f;
}

/* ---- the bad-input cases -------------------------------------------------------------------- */

/* One bad file: the reference file changed by modify(); the read must fail with code and a
 * message containing every non-NULL expect[] string. */
typedef struct bad_case {
  const char *name;
  void (*modify)(hid_t f);
  se_code code;
  const char *expect[3];
} bad_case;

static void wrong_format(hid_t f) { put_attr_string(f, "/", "format", "other-input", 0); }
static void wrong_version(hid_t f) { put_attr_int(f, "/", "version", 2); }
static void float_version(hid_t f) { put_attr_double(f, "/", "version", 1.0); }
static void wrong_workload(hid_t f) { put_attr_string(f, "/", "workload", "tdbem", 0); }
static void missing_format(hid_t f) { delete_attr(f, "/", "format"); }
static void missing_dt(hid_t f) { delete_attr(f, "/run", "dt"); }
static void zero_dt(hid_t f) { put_attr_double(f, "/run", "dt", 0.0); }
static void negative_dt(hid_t f) { put_attr_double(f, "/run", "dt", -0.5); }
static void string_tstop(hid_t f) { put_attr_string(f, "/run", "tstop", "100", 0); }
static void negative_tstop(hid_t f) { put_attr_double(f, "/run", "tstop", -1.0); }
static void missing_run(hid_t f) { delete_link(f, "/run"); }
static void missing_parent(hid_t f) { delete_link(f, "/morphologies/parent"); }
static void missing_morphologies(hid_t f) { delete_link(f, "/morphologies"); }
static void short_length(hid_t f) { resize(f, "/morphologies/length", -1, 0); }
static void short_region(hid_t f) { resize(f, "/morphologies/region", -2, 1); }
static void float_parent(hid_t f) { retype(f, "/morphologies/parent", H5T_IEEE_F64LE); }
static void int_length(hid_t f) { retype(f, "/morphologies/length", H5T_STD_I64LE); }
static void string_diameter(hid_t f) {
  const char *v[7] = {"a", "b", "c", "d", "e", "f", "g"};
  hid_t t = H5Tcopy(H5T_C_S1);
  H5OK(t);
  H5OK(H5Tset_size(t, H5T_VARIABLE));
  put_dataset(f, "/morphologies/diameter", t, t, 7, v, 0);
  H5OK(H5Tclose(t));
}
static void two_d_length(hid_t f) {
  const double v[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  put_dataset(f, "/morphologies/length", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 8, v, 1);
}
static void group_parent(hid_t f) {
  delete_link(f, "/morphologies/parent");
  hid_t g = H5Gcreate2(f, "/morphologies/parent", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5OK(g);
  H5OK(H5Gclose(g));
}
static void parent_not_less(hid_t f) { set_element(f, "/morphologies/parent", 5, 1); }
static void root_with_parent(hid_t f) { set_element(f, "/morphologies/parent", 4, 0); }
static void parent_too_wide(hid_t f) {
  retype(f, "/morphologies/parent", H5T_STD_I64LE);
  set_element(f, "/morphologies/parent", 2, 4294967296.0);
}
static void zero_length(hid_t f) { set_element(f, "/morphologies/length", 2, 0.0); }
static void nan_length(hid_t f) { set_element(f, "/morphologies/length", 3, 0.0 / 0.0); }
static void negative_diameter(hid_t f) { set_element(f, "/morphologies/diameter", 6, -1.0); }
static void offsets_flat(hid_t f) { set_element(f, "/morphologies/offsets", 1, 0); }
static void offsets_past_c(hid_t f) { set_element(f, "/morphologies/offsets", 2, 8); }
static void offsets_not_zero(hid_t f) { set_element(f, "/morphologies/offsets", 0, 1); }
static void cell_morph_range(hid_t f) { set_element(f, "/cells/morphology", 1, 2); }
static void negative_gid(hid_t f) {
  retype(f, "/cells/gid", H5T_STD_I64LE);
  set_element(f, "/cells/gid", 1, -5);
}
static void duplicate_gid(hid_t f) {
  const uint64_t g[] = {7, 8, 7};
  put_dataset(f, "/cells/gid", H5T_STD_U64LE, H5T_NATIVE_UINT64, 3, g, 0);
}
static void short_gid(hid_t f) { resize(f, "/cells/gid", -1, 1); }
static void stim_cell_range(hid_t f) { set_element(f, "/stimuli/iclamp/cell", 1, 3); }
static void stim_comp_range(hid_t f) { set_element(f, "/stimuli/iclamp/compartment", 1, 4); }
static void stim_negative_duration(hid_t f) { set_element(f, "/stimuli/iclamp/duration", 0, -1); }
static void stim_missing_delay(hid_t f) { delete_link(f, "/stimuli/iclamp/delay"); }
static void record_cell_range(hid_t f) { set_element(f, "/record/cells", 1, 5); }
static void record_duplicate(hid_t f) {
  const int64_t c[] = {2, 0, 2};
  put_dataset(f, "/record/cells", H5T_STD_I64LE, H5T_NATIVE_INT64, 3, c, 0);
}
static void record_every_zero(hid_t f) { put_attr_int(f, "/record", "every", 0); }
static void record_every_float(hid_t f) { put_attr_double(f, "/record", "every", 2.0); }
static void record_what_bad(hid_t f) { put_attr_string(f, "/record", "compartments", "dendrites", 0); }
static void record_dtype_bad(hid_t f) { put_attr_string(f, "/record", "dtype", "float16", 1); }
static void region_beyond_bio(hid_t f) { set_element(f, "/morphologies/region", 3, 5); }
static void region_negative(hid_t f) { set_element(f, "/morphologies/region", 1, -1); }
static void bio_lengths_differ(hid_t f) { resize(f, "/biophysics/ek", -1, 0); }
static void negative_conductance(hid_t f) { set_element(f, "/biophysics/g_pas", 1, -0.001); }
static void zero_cm(hid_t f) { set_element(f, "/biophysics/cm", 2, 0.0); }
static void infinite_ena(hid_t f) { set_element(f, "/biophysics/ena", 4, 1.0 / 0.0); }
/* Without /biophysics the tables get max region + 1 entries of defaults: a huge code must be
 * refused, not overflow int32 (2147483647 + 1) or allocate gigabytes (fuzz campaign). */
static void region_int32_max_no_bio(hid_t f) {
  delete_link(f, "/biophysics");
  set_element(f, "/morphologies/region", 3, 2147483647.0);
}
static void region_huge_no_bio(hid_t f) {
  delete_link(f, "/biophysics");
  set_element(f, "/morphologies/region", 3, SE_MAX_REGION + 1);
}

static const bad_case bad_cases[] = {
    {"wrong format", wrong_format, SE_ERR_INPUT, {"root attribute format", "\"other-input\""}},
    {"missing format", missing_format, SE_ERR_INPUT, {"root attribute format is missing"}},
    {"wrong version", wrong_version, SE_ERR_INPUT, {"root attribute version = 2"}},
    {"float version", float_version, SE_ERR_INPUT, {"root attribute version", "floating-point"}},
    {"wrong workload", wrong_workload, SE_ERR_INPUT, {"root attribute workload", "\"tdbem\""}},
    {"missing /run dt", missing_dt, SE_ERR_INPUT, {"/run attribute dt is missing"}},
    {"missing /run", missing_run, SE_ERR_INPUT, {"/run attribute dt is missing"}},
    {"dt = 0", zero_dt, SE_ERR_INPUT, {"/run attribute dt = 0 "}},
    {"dt < 0", negative_dt, SE_ERR_INPUT, {"/run attribute dt = -0.5 "}},
    {"string tstop", string_tstop, SE_ERR_INPUT, {"/run attribute tstop", "string"}},
    {"tstop < 0", negative_tstop, SE_ERR_INPUT, {"/run attribute tstop = -1 "}},
    {"missing parent", missing_parent, SE_ERR_INPUT, {"/morphologies/parent is missing"}},
    {"missing /morphologies", missing_morphologies, SE_ERR_INPUT, {"/morphologies/offsets is missing"}},
    {"length one short", short_length, SE_ERR_INPUT,
     {"/morphologies/length has 6 entries, /morphologies/parent has 7"}},
    {"region two short", short_region, SE_ERR_INPUT,
     {"/morphologies/region has 5 entries, /morphologies/parent has 7"}},
    {"float parent", float_parent, SE_ERR_INPUT, {"/morphologies/parent has floating-point type"}},
    {"integer length", int_length, SE_ERR_INPUT, {"/morphologies/length has integer type"}},
    {"string diameter", string_diameter, SE_ERR_INPUT, {"/morphologies/diameter has string type"}},
    {"2-d length", two_d_length, SE_ERR_INPUT, {"/morphologies/length has rank 2", "4 x 2"}},
    {"parent is a group", group_parent, SE_ERR_INPUT, {"/morphologies/parent is not a dataset"}},
    {"parent[i] >= i", parent_not_less, SE_ERR_INPUT,
     {"/morphologies/parent[5] = 1 is not < 1", "morphology 1, local index 1"}},
    {"root with a parent", root_with_parent, SE_ERR_INPUT,
     {"/morphologies/parent[4] = 0 is not -1", "morphology 1"}},
    {"parent beyond int32", parent_too_wide, SE_ERR_INPUT,
     {"/morphologies/parent[2] = 4294967296 does not fit in int32"}},
    {"length = 0", zero_length, SE_ERR_INPUT, {"/morphologies/length[2] = 0 ", "local index 2"}},
    {"length NaN", nan_length, SE_ERR_INPUT, {"/morphologies/length[3] = ", "nan"}},
    {"diameter < 0", negative_diameter, SE_ERR_INPUT,
     {"/morphologies/diameter[6] = -1 ", "morphology 1, local index 2"}},
    {"offsets not increasing", offsets_flat, SE_ERR_INPUT,
     {"/morphologies/offsets[1] = 0 is not > offsets[0] = 0"}},
    {"offsets not ending at C", offsets_past_c, SE_ERR_INPUT,
     {"/morphologies/offsets[2] = 8", "C = 7"}},
    {"offsets not starting at 0", offsets_not_zero, SE_ERR_INPUT, {"/morphologies/offsets[0] = 1 "}},
    {"cell morphology out of range", cell_morph_range, SE_ERR_INPUT,
     {"/cells/morphology[1] = 2 is not in [0, 2)"}},
    {"negative gid", negative_gid, SE_ERR_INPUT, {"/cells/gid[1] = -5 is negative"}},
    {"duplicate gid", duplicate_gid, SE_ERR_INPUT, {"/cells/gid[2] = 7 repeats /cells/gid[0]"}},
    {"gid one short", short_gid, SE_ERR_INPUT, {"/cells/gid has 2 entries, /cells/morphology has 3"}},
    {"stimulus cell out of range", stim_cell_range, SE_ERR_INPUT,
     {"/stimuli/iclamp/cell[1] = 3 is not in [0, 3)"}},
    {"stimulus compartment out of range", stim_comp_range, SE_ERR_INPUT,
     {"/stimuli/iclamp/compartment[1] = 4 is not in [0, 4)", "cell 2"}},
    {"stimulus duration < 0", stim_negative_duration, SE_ERR_INPUT, {"/stimuli/iclamp/duration[0] = -1 "}},
    {"stimulus without delay", stim_missing_delay, SE_ERR_INPUT, {"/stimuli/iclamp/delay is missing"}},
    {"record cell out of range", record_cell_range, SE_ERR_INPUT, {"/record/cells[1] = 5 is not in [0, 3)"}},
    {"record cell twice", record_duplicate, SE_ERR_INPUT, {"/record/cells[2] = 2 repeats /record/cells[0]"}},
    {"record every 0", record_every_zero, SE_ERR_INPUT, {"/record attribute every = 0 "}},
    {"record every float", record_every_float, SE_ERR_INPUT, {"/record attribute every", "floating-point"}},
    {"record compartments", record_what_bad, SE_ERR_INPUT,
     {"/record attribute compartments = \"dendrites\""}},
    {"record dtype", record_dtype_bad, SE_ERR_INPUT, {"/record attribute dtype = \"float16\""}},
    {"region beyond biophysics", region_beyond_bio, SE_ERR_INPUT,
     {"/biophysics/cm has 5 entries", "/morphologies/region[3] = 5 needs 6"}},
    {"negative region", region_negative, SE_ERR_INPUT, {"/morphologies/region[1] = -1 is not in [0, 5)"}},
    {"biophysics lengths differ", bio_lengths_differ, SE_ERR_INPUT,
     {"/biophysics/ek has 4 entries, /biophysics/cm has 5"}},
    {"negative conductance", negative_conductance, SE_ERR_INPUT,
     {"/biophysics/g_pas[1] = -0.001 is negative"}},
    {"cm = 0", zero_cm, SE_ERR_INPUT, {"/biophysics/cm[2] = 0 is not > 0"}},
    {"ena infinite", infinite_ena, SE_ERR_INPUT, {"/biophysics/ena[4] = inf is not finite"}},
    {"region 2^31-1, no biophysics", region_int32_max_no_bio, SE_ERR_INPUT,
     {"/morphologies/region[3] = 2147483647 is above the largest region code 1000000"}},
    {"region 10^6+1, no biophysics", region_huge_no_bio, SE_ERR_INPUT,
     {"/morphologies/region[3] = 1000001 is above the largest region code 1000000"}},
};

/* Checks that err has code and contains every expected string (and the file name). */
static void expect_failure(se_test_state *st, const char *what, int rc, const se_error *err,
                           se_code code, const char *file, const char *const *expect, int n_expect) {
  SE_EXPECT(st, rc == (int)code, "%s: code %d (%s), expected %d: %s", what, rc,
            se_code_name((se_code)rc), (int)code, rc ? err->message : "(success)");
  if (rc == SE_OK)
    return;
  SE_EXPECT(st, strstr(err->message, file) != NULL, "%s: message does not name the file %s: %s", what,
            file, err->message);
  for (int i = 0; i < n_expect; i++)
    if (expect[i])
      SE_EXPECT(st, strstr(err->message, expect[i]) != NULL, "%s: message lacks \"%s\": %s", what,
                expect[i], err->message);
}

/* Writes the reference model to path; exits on failure. */
static void write_reference(const char *path) {
  se_neuron_model m;
  reference_model(&m);
  se_error err = {0};
  if (se_input_write_neurons(path, &m, &err) != SE_OK) {
    fprintf(stderr, "writing %s failed: %s\n", path, err.message);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  se_neuron_model_free(&m);
}

static void run_bad_cases(se_test_state *st, const char *dir) {
  char path[4096];
  se_error err = {0};
  se_neuron_model m;

  snprintf(path, sizeof path, "%s/input_missing.h5", dir);
  remove(path);
  int rc = se_input_read_neurons(path, MPI_COMM_SELF, &m, &err);
  const char *missing[] = {"cannot open", "no such file"};
  expect_failure(st, "missing file", rc, &err, SE_ERR_IO, path, missing, 2);
  printf("case %-34s -> %s\n", "missing file", err.message);

  snprintf(path, sizeof path, "%s/input_text.h5", dir);
  FILE *t = fopen(path, "w");
  if (!t || fputs("this is not an HDF5 file\n", t) < 0 || fclose(t) != 0)
    MPI_Abort(MPI_COMM_WORLD, 2);
  rc = se_input_read_neurons(path, MPI_COMM_SELF, &m, &err);
  const char *text[] = {"not an HDF5 file"};
  expect_failure(st, "text file", rc, &err, SE_ERR_INPUT, path, text, 1);
  printf("case %-34s -> %s\n", "text file", err.message);
  char workload[64];
  rc = se_input_workload(path, MPI_COMM_SELF, workload, sizeof workload, &err);
  expect_failure(st, "workload of a text file", rc, &err, SE_ERR_INPUT, path, text, 1);

  for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
    const bad_case *c = &bad_cases[i];
    snprintf(path, sizeof path, "%s/input_bad_%02zu.h5", dir, i);
    write_reference(path);
    hid_t f = open_rw(path);
    c->modify(f);
    H5OK(H5Fclose(f));
    err = (se_error){0};
    rc = se_input_read_neurons(path, MPI_COMM_SELF, &m, &err);
    expect_failure(st, c->name, rc, &err, c->code, path, c->expect, 3);
    printf("case %-34s -> %s\n", c->name, err.message);
    if (rc == SE_OK)
      se_neuron_model_free(&m);
  }
}

/* ---- the good cases --------------------------------------------------------------------------- */

static void run_round_trip(se_test_state *st, const char *dir) {
  char path[4096], tmp[4200];
  se_error err = {0};
  se_neuron_model ref;
  reference_model(&ref);
  SE_EXPECT(st, se_neuron_model_validate(&ref, "reference", &err) == SE_OK, "%s", err.message);
  SE_EXPECT(st, se_neuron_model_steps(&ref) == 133, "steps %lld", (long long)se_neuron_model_steps(&ref));
  SE_EXPECT(st, se_neuron_model_compartments(&ref) == 7, "compartments");

  snprintf(path, sizeof path, "%s/input_good.h5", dir);
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  SE_EXPECT(st, se_input_write_neurons(path, &ref, &err) == SE_OK, "write: %s", err.message);
  FILE *f = fopen(tmp, "rb");
  SE_EXPECT(st, f == NULL, "%s left behind", tmp);
  if (f)
    fclose(f);
  expect_reads_as(st, "round trip", path, MPI_COMM_SELF, &ref);
  char workload[64] = "";
  int rc = se_input_workload(path, MPI_COMM_SELF, workload, sizeof workload, &err);
  SE_EXPECT(st, rc == SE_OK && strcmp(workload, "neurons") == 0, "workload \"%s\": %s", workload,
            rc ? err.message : "");

  /* Overwriting an existing file works (rename over it). */
  SE_EXPECT(st, se_input_write_neurons(path, &ref, &err) == SE_OK, "rewrite: %s", err.message);

  /* Writing into a missing directory fails cleanly; an invalid model is refused before writing. */
  snprintf(tmp, sizeof tmp, "%s/no-such-dir/x.h5", dir);
  rc = se_input_write_neurons(tmp, &ref, &err);
  const char *nodir[] = {"cannot create", "x.h5.tmp"};
  expect_failure(st, "write into a missing directory", rc, &err, SE_ERR_IO, tmp, nodir, 2);
  snprintf(tmp, sizeof tmp, "%s/input_invalid.h5", dir);
  remove(tmp);
  ref.parent[2] = 2;
  rc = se_input_write_neurons(tmp, &ref, &err);
  const char *invalid[] = {"/morphologies/parent[2] = 2 is not < 2"};
  expect_failure(st, "write an invalid model", rc, &err, SE_ERR_INPUT, tmp, invalid, 1);
  f = fopen(tmp, "rb");
  SE_EXPECT(st, f == NULL, "%s written for an invalid model", tmp);
  if (f)
    fclose(f);
  ref.parent[2] = 1;

  /* Records of every cell: no /record/cells dataset, read back as all cells. */
  const int64_t all[] = {0, 1, 2};
  free(ref.record_cells);
  ref.record_cells = DUP(all);
  ref.n_record_cells = 3;
  snprintf(path, sizeof path, "%s/input_all.h5", dir);
  SE_EXPECT(st, se_input_write_neurons(path, &ref, &err) == SE_OK, "write: %s", err.message);
  hid_t h = open_rw(path);
  htri_t has = H5Lexists(h, "/record/cells", H5P_DEFAULT);
  H5OK(has);
  H5OK(H5Fclose(h));
  SE_EXPECT(st, has == 0, "/record/cells written although every cell is recorded");
  expect_reads_as(st, "every cell recorded", path, MPI_COMM_SELF, &ref);
  se_neuron_model_free(&ref);
}

/* Optional items absent: the documented defaults. */
static void run_defaults(se_test_state *st, const char *dir) {
  char path[4096];
  se_error err = {0};
  se_neuron_model m;
  snprintf(path, sizeof path, "%s/input_defaults.h5", dir);
  write_reference(path);
  hid_t f = open_rw(path);
  delete_attr(f, "/run", "v_init");
  delete_attr(f, "/run", "celsius");
  delete_attr(f, "/run", "spike_threshold");
  delete_link(f, "/cells/gid");
  delete_link(f, "/biophysics/ek");
  delete_link(f, "/biophysics/g_pas");
  delete_link(f, "/stimuli");
  delete_attr(f, "/record", "every");
  delete_attr(f, "/record", "compartments");
  delete_attr(f, "/record", "dtype");
  delete_link(f, "/record/cells");
  H5OK(H5Fclose(f));
  int rc = se_input_read_neurons(path, MPI_COMM_SELF, &m, &err);
  SE_EXPECT(st, rc == SE_OK, "read: %s", err.message);
  if (rc != SE_OK)
    return;
  SE_EXPECT(st, m.v_init == -65.0 && m.celsius == 6.3 && m.spike_threshold == 10.0, "run defaults");
  SE_EXPECT(st, strcmp(m.population, "default") == 0, "population \"%s\"", m.population);
  for (int64_t i = 0; i < m.n_cells; i++)
    SE_EXPECT(st, m.cell_gid[i] == (uint64_t)i, "gid[%lld] = %llu", (long long)i,
              (unsigned long long)m.cell_gid[i]);
  SE_EXPECT(st, m.bio.n_regions == 5, "n_regions %d", m.bio.n_regions);
  for (int r = 0; r < m.bio.n_regions; r++)
    SE_EXPECT(st, m.bio.ek[r] == SE_DEFAULT_EK && m.bio.g_pas[r] == 0.0,
              "region %d: ek %g g_pas %g", r, m.bio.ek[r], m.bio.g_pas[r]);
  SE_EXPECT(st, m.bio.ra[1] == 100.0 && m.bio.cm[4] == 0.75, "datasets present keep their values");
  SE_EXPECT(st, m.n_iclamps == 0, "iclamps %lld", (long long)m.n_iclamps);
  SE_EXPECT(st, m.record_every == 1 && m.record_what == SE_RECORD_SOMA && m.record_float64 == 0,
            "record defaults");
  SE_EXPECT(st, m.n_record_cells == 3 && m.record_cells[0] == 0 && m.record_cells[2] == 2, "record cells");
  se_neuron_model_free(&m);

  /* No /biophysics and no /record at all: R = max region + 1 regions of NEURON's defaults. */
  f = open_rw(path);
  delete_link(f, "/biophysics");
  delete_link(f, "/record");
  H5OK(H5Fclose(f));
  rc = se_input_read_neurons(path, MPI_COMM_SELF, &m, &err);
  SE_EXPECT(st, rc == SE_OK, "read: %s", err.message);
  if (rc != SE_OK)
    return;
  SE_EXPECT(st, m.bio.n_regions == 5, "n_regions %d", m.bio.n_regions);
  for (int r = 0; r < m.bio.n_regions; r++)
    SE_EXPECT(st, m.bio.cm[r] == SE_DEFAULT_CM && m.bio.ra[r] == SE_DEFAULT_RA &&
                      m.bio.e_pas[r] == SE_DEFAULT_E_PAS && m.bio.el_hh[r] == SE_DEFAULT_EL_HH &&
                      m.bio.ena[r] == SE_DEFAULT_ENA && m.bio.ek[r] == SE_DEFAULT_EK &&
                      m.bio.g_pas[r] == 0 && m.bio.gnabar_hh[r] == 0 && m.bio.gkbar_hh[r] == 0 &&
                      m.bio.gl_hh[r] == 0,
              "region %d defaults", r);
  SE_EXPECT(st, m.n_record_cells == 3 && m.record_every == 1, "record defaults");
  se_neuron_model_free(&m);
}

/* Other integer widths, float32 values, fixed-length strings and an unsorted record list are
 * accepted and converted. */
static void run_conversions(se_test_state *st, const char *dir) {
  char path[4096];
  se_neuron_model ref;
  reference_model(&ref);
  snprintf(path, sizeof path, "%s/input_widths.h5", dir);
  write_reference(path);
  hid_t f = open_rw(path);
  retype(f, "/morphologies/parent", H5T_STD_I16BE);
  retype(f, "/morphologies/offsets", H5T_STD_U8LE);
  retype(f, "/cells/morphology", H5T_STD_U8LE);
  retype(f, "/stimuli/iclamp/cell", H5T_STD_I32LE);
  retype(f, "/stimuli/iclamp/compartment", H5T_STD_I64BE);
  retype(f, "/morphologies/diameter", H5T_IEEE_F32LE);
  put_attr_string(f, "/", "format", "simengine-input", 1);
  put_attr_string(f, "/", "workload", "neurons", 1);
  put_attr_string(f, "/cells/gid", "population", "hippocampus", 1);
  put_attr_string(f, "/record", "compartments", "soma", 1);
  put_attr(f, "/", "version", H5T_STD_U8LE, H5T_NATIVE_INT64, &(int64_t){1});
  put_attr(f, "/run", "tstop", H5T_STD_I32LE, H5T_NATIVE_INT64, &(int64_t){100});
  const int64_t rec[] = {2, 0};
  put_dataset(f, "/record/cells", H5T_STD_I32LE, H5T_NATIVE_INT64, 2, rec, 0);
  H5OK(H5Fclose(f));
  for (int i = 0; i < 7; i++)
    ref.diameter[i] = (double)(float)ref.diameter[i];
  ref.tstop = 100.0;
  ref.record_what = SE_RECORD_SOMA;
  strcpy(ref.population, "hippocampus");
  expect_reads_as(st, "conversions", path, MPI_COMM_SELF, &ref);
  se_neuron_model_free(&ref);
}

/* se_neuron_model_validate on models built in memory. */
static void run_validate(se_test_state *st) {
  se_neuron_model m;
  se_error err = {0};
  reference_model(&m);
  m.record_cells[1] = 0;
  int rc = se_neuron_model_validate(&m, "mem", &err);
  const char *asc[] = {"mem: /record/cells[1] = 0 is not > /record/cells[0] = 0"};
  expect_failure(st, "record cells not ascending", rc, &err, SE_ERR_INPUT, "mem", asc, 1);
  m.record_cells[1] = 2;
  m.record_every = 0;
  rc = se_neuron_model_validate(&m, "mem", &err);
  const char *every[] = {"/record attribute every = 0 is not >= 1"};
  expect_failure(st, "record every 0", rc, &err, SE_ERR_INPUT, "mem", every, 1);
  m.record_every = 1;
  strcpy(m.population, "a/b");
  rc = se_neuron_model_validate(&m, "mem", &err);
  const char *pop[] = {"population = \"a/b\""};
  expect_failure(st, "population with a slash", rc, &err, SE_ERR_INPUT, "mem", pop, 1);
  strcpy(m.population, "p");
  m.cell_gid[2] = 20;
  rc = se_neuron_model_validate(&m, "mem", &err);
  const char *gid[] = {"/cells/gid[2] = 20 repeats /cells/gid[1]"};
  expect_failure(st, "duplicate gid", rc, &err, SE_ERR_INPUT, "mem", gid, 1);
  m.cell_gid[2] = 21;
  m.iclamp_amplitude[0] = 0.0 / 0.0;
  rc = se_neuron_model_validate(&m, "mem", &err);
  const char *amp[] = {"/stimuli/iclamp/amplitude[0] = ", "not finite"};
  expect_failure(st, "amplitude NaN", rc, &err, SE_ERR_INPUT, "mem", amp, 2);
  m.iclamp_amplitude[0] = 0.1;
  SE_EXPECT(st, se_neuron_model_validate(&m, "mem", &err) == SE_OK, "%s", err.message);
  se_neuron_model_free(&m);
  SE_EXPECT(st, m.parent == NULL && m.record_every == 1 && strcmp(m.population, "default") == 0,
            "free re-initialises");
  SE_EXPECT(st, se_neuron_model_compartments(&m) == 0, "an empty model has no compartments");
}

/* Several ranks: everyone reads the same model; a bad file fails on every rank alike. */
static void run_mpi(se_test_state *st, const char *dir) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char good[4096], bad[4096], missing[4096];
  snprintf(good, sizeof good, "%s/input_mpi%d_good.h5", dir, size);
  snprintf(bad, sizeof bad, "%s/input_mpi%d_bad.h5", dir, size);
  snprintf(missing, sizeof missing, "%s/input_mpi%d_missing.h5", dir, size);
  if (rank == 0) {
    write_reference(good);
    write_reference(bad);
    hid_t f = open_rw(bad);
    parent_not_less(f);
    H5OK(H5Fclose(f));
    remove(missing);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  se_neuron_model ref, m;
  se_error err = {0};
  reference_model(&ref);
  char on_this_rank[32];
  snprintf(on_this_rank, sizeof on_this_rank, "rank %d", rank);
  expect_reads_as(st, on_this_rank, good, MPI_COMM_WORLD, &ref);
  char workload[64] = "";
  int rc = se_input_workload(good, MPI_COMM_WORLD, workload, sizeof workload, &err);
  SE_EXPECT(st, rc == SE_OK && strcmp(workload, "neurons") == 0, "rank %d: workload", rank);

  rc = se_input_read_neurons(bad, MPI_COMM_WORLD, &m, &err);
  const char *parent[] = {"/morphologies/parent[5] = 1 is not < 1"};
  expect_failure(st, "bad file on every rank", rc, &err, SE_ERR_INPUT, bad, parent, 1);
  rc = se_input_read_neurons(missing, MPI_COMM_WORLD, &m, &err);
  const char *nofile[] = {"no such file"};
  expect_failure(st, "missing file on every rank", rc, &err, SE_ERR_IO, missing, nofile, 1);

  /* The file is missing for the last rank only: every rank fails, nobody waits for it. */
  rc = se_input_read_neurons(rank == size - 1 ? missing : good, MPI_COMM_WORLD, &m, &err);
  char on_rank[32];
  snprintf(on_rank, sizeof on_rank, "on rank %d: ", size - 1);
  const char *last[] = {"no such file", rank == size - 1 ? NULL : on_rank};
  expect_failure(st, "missing file on the last rank", rc, &err, SE_ERR_IO, missing, last, 2);
  se_neuron_model_free(&ref);
}

/* HDF5 objects open in any file (files, groups, datasets, attributes, named types), to show that
 * no path of the reader or writer leaves one open. */
static ssize_t open_objects(void) {
  ssize_t n = H5Fget_obj_count((hid_t)H5F_OBJ_ALL, H5F_OBJ_ALL);
  H5OK(n);
  return n;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  se_test_state st = {0, 0};
  int code = 0;
  if (argc != 3) {
    fprintf(stderr, "usage: %s unit|mpi <dir> | write|check|read <file.h5>\n", argv[0]);
    code = 2;
  } else if (strcmp(argv[1], "unit") == 0) {
    ssize_t before = open_objects();
    run_validate(&st);
    run_round_trip(&st, argv[2]);
    run_defaults(&st, argv[2]);
    run_conversions(&st, argv[2]);
    run_bad_cases(&st, argv[2]);
    SE_EXPECT(&st, open_objects() == before, "%zd HDF5 objects open, %zd before", open_objects(), before);
    code = se_test_finish(&st, "test_input unit");
  } else if (strcmp(argv[1], "mpi") == 0) {
    run_mpi(&st, argv[2]);
    code = se_test_finish_all(&st, "test_input mpi", MPI_COMM_WORLD);
  } else if (strcmp(argv[1], "write") == 0) {
    write_reference(argv[2]);
  } else if (strcmp(argv[1], "read") == 0) {
    se_neuron_model m;
    se_error err = {0};
    int rc = se_input_read_neurons(argv[2], MPI_COMM_WORLD, &m, &err);
    SE_EXPECT(&st, rc == SE_OK, "read %s: %s", argv[2], err.message);
    if (rc == SE_OK) {
      printf("%s: %lld morphologies, %lld compartments, %lld cells, %d regions, %lld clamps, %lld "
             "recorded cells, %lld steps\n",
             argv[2], (long long)m.n_morphologies, (long long)se_neuron_model_compartments(&m),
             (long long)m.n_cells, m.bio.n_regions, (long long)m.n_iclamps, (long long)m.n_record_cells,
             (long long)se_neuron_model_steps(&m));
      se_neuron_model_free(&m);
    }
    code = se_test_finish(&st, "test_input read");
  } else if (strcmp(argv[1], "check") == 0) {
    se_neuron_model ref;
    reference_model(&ref);
    expect_reads_as(&st, "check", argv[2], MPI_COMM_WORLD, &ref);
    se_neuron_model_free(&ref);
    code = se_test_finish(&st, "test_input check");
  } else {
    fprintf(stderr, "unknown mode %s\n", argv[1]);
    code = 2;
  }
  MPI_Finalize();
  return code;
}
