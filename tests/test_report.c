/* io/report.c on any number of ranks: the layout and every value of the SONATA output file, read
 * back serially, and the failure paths (no file left behind). Rank 1 records no cells.
 * Usage: test_report PREFIX. Leaves PREFIX.h5 (float32), PREFIX_f64.h5, PREFIX_empty.h5 (no
 * recorded elements, no spikes call) and PREFIX_noframes.h5 for tests/check_output.py. */
#define _POSIX_C_SOURCE 200809L /* mkdir, rmdir */

#include <hdf5.h>
#include <mpi.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report.h"
#include "se_test.h"
#include "se_test_mpi.h"

enum { MAX_CELLS = 8, MAX_COLS = 32, MAX_SPIKES = 64 };

/* What one rank records: cells, their columns and spikes. */
typedef struct rank_part {
  int64_t n_cells, n_cols, cell_offset, col_offset;
  uint64_t node_ids[MAX_CELLS];
  int64_t elements[MAX_CELLS];
  uint32_t element_ids[MAX_COLS];
  int64_t n_spikes;
  double spike_time[MAX_SPIKES];
  uint64_t spike_gid[MAX_SPIKES];
} rank_part;

/* One run of the writer. */
typedef struct scenario {
  const char *suffix; /* file PREFIX<suffix>.h5 */
  int float64;
  int64_t n_frames, buffer_frames;
  double flush_seconds;
  int no_cells;    /* no rank records anything */
  int write_spikes;
} scenario;

static const double T_START = 5.0, T_STEP = 0.25;

/* Rank p's part of the layout on `size` ranks: rank 1 has no cells; cell g has 1 + g % 3
 * elements with ids 3k, gid 5000 - 7g; spikes out of order with ties in time across ranks. */
static rank_part part_of(int p, int size, int no_cells) {
  rank_part r = {0};
  for (int q = 0; q <= p; q++) {
    int64_t cells = (no_cells || q == 1) ? 0 : 3 + q;
    if (q < p) {
      r.cell_offset += cells;
      for (int64_t c = 0; c < cells; c++)
        r.col_offset += 1 + (r.cell_offset - cells + c) % 3;
    } else {
      r.n_cells = cells;
    }
  }
  for (int64_t c = 0; c < r.n_cells; c++) {
    int64_t g = r.cell_offset + c;
    r.node_ids[c] = (uint64_t)(5000 - 7 * g);
    r.elements[c] = 1 + g % 3;
    for (int64_t k = 0; k < r.elements[c]; k++)
      r.element_ids[r.n_cols++] = (uint32_t)(3 * k);
  }
  r.n_spikes = 4 + p;
  for (int64_t i = 0; i < r.n_spikes; i++) {
    r.spike_time[i] = (double)((p * 5 + i * 11) % 13) * 0.5;
    r.spike_gid[i] = (uint64_t)(100 * (size - p) + (i * 3) % 7);
  }
  return r;
}

/* The value written at frame f, global column c. */
static double value_at(int64_t f, int64_t c, int float64) {
  return (double)(f * 1000 + c) + (float64 ? 1.0 / 3.0 : 0.25);
}

static int compare_spike(const void *a, const void *b) {
  const double *x = a, *y = b; /* {time, gid as double} */
  if (x[0] != y[0])
    return x[0] < y[0] ? -1 : 1;
  return (x[1] > y[1]) - (x[1] < y[1]);
}

/* A scalar string attribute (any string type), or "" when it cannot be read. */
static void read_string_attr(hid_t obj, const char *name, char *buf, size_t size) {
  buf[0] = '\0';
  hid_t attr = H5Aopen(obj, name, H5P_DEFAULT);
  if (attr < 0)
    return;
  hid_t type = H5Aget_type(attr);
  if (H5Tget_class(type) == H5T_STRING && H5Tis_variable_str(type) > 0) {
    char *s = NULL;
    hid_t mem = H5Tget_native_type(type, H5T_DIR_ASCEND);
    if (H5Aread(attr, mem, &s) >= 0 && s) {
      snprintf(buf, size, "%s", s);
      H5free_memory(s);
    }
    H5Tclose(mem);
  }
  H5Tclose(type);
  H5Aclose(attr);
}

/* Reads the whole dataset at path as mem_type into buf (room for max values); returns the number
 * of values, -1 on failure. *dims gets the dimensions (up to 2). */
static int64_t read_dataset(hid_t file, const char *path, hid_t mem_type, void *buf, int64_t max,
                            hsize_t dims[2], hid_t *file_type) {
  hid_t d = H5Dopen2(file, path, H5P_DEFAULT);
  if (d < 0)
    return -1;
  hid_t space = H5Dget_space(d);
  dims[0] = dims[1] = 0;
  int nd = H5Sget_simple_extent_dims(space, dims, NULL);
  int64_t n = (int64_t)H5Sget_simple_extent_npoints(space);
  *file_type = H5Dget_type(d);
  int64_t out = -1;
  if (nd >= 1 && n <= max &&
      (n == 0 || H5Dread(d, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0))
    out = n;
  H5Sclose(space);
  H5Dclose(d);
  return out;
}

/* Checks the datatype of a dataset read by read_dataset and closes it. */
static void expect_type(se_test_state *st, hid_t type, hid_t expected, const char *what) {
  SE_EXPECT(st, type >= 0 && H5Tequal(type, expected) > 0, "%s has the wrong datatype", what);
  if (type >= 0)
    H5Tclose(type);
}

/* Checks the `sorting` enum attribute of group: uint8 {none 0, by_id 1, by_time 2} = by_time. */
static void check_sorting(se_test_state *st, hid_t group) {
  hid_t attr = H5Aopen(group, "sorting", H5P_DEFAULT);
  SE_EXPECT(st, attr >= 0, "no sorting attribute");
  if (attr < 0)
    return;
  hid_t type = H5Aget_type(attr);
  SE_EXPECT(st, H5Tget_class(type) == H5T_ENUM, "sorting is not an enum");
  hid_t super = H5Tget_super(type);
  SE_EXPECT(st, super >= 0 && H5Tequal(super, H5T_STD_U8LE) > 0, "sorting is not based on uint8");
  SE_EXPECT(st, H5Tget_nmembers(type) == 3, "sorting has %d members", H5Tget_nmembers(type));
  static const char *const names[] = {"none", "by_id", "by_time"};
  for (uint8_t v = 0; v < 3; v++) {
    char name[32] = "";
    H5Tenum_nameof(type, &v, name, sizeof name);
    SE_EXPECT(st, strcmp(name, names[v]) == 0, "sorting value %u is '%s'", v, name);
  }
  uint8_t value = 255;
  SE_EXPECT(st, H5Aread(attr, H5T_NATIVE_UINT8, &value) >= 0 && value == 2, "sorting = %u", value);
  H5Tclose(super);
  H5Tclose(type);
  H5Aclose(attr);
}

/* Rank 0 reads the file serially and checks everything the scenario wrote. */
static void verify(se_test_state *st, const char *path, const scenario *sc, int size) {
  char tmp[1100];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  SE_EXPECT(st, access(path, F_OK) == 0, "%s does not exist", path);
  SE_EXPECT(st, access(tmp, F_OK) != 0, "%s still exists", tmp);
  hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  SE_EXPECT(st, f >= 0, "cannot open %s", path);
  if (f < 0)
    return;

  /* The expected layout over all ranks. */
  static uint64_t node_ids[MAX_CELLS * 4], pointers[MAX_CELLS * 4 + 1];
  static uint32_t element_ids[MAX_COLS * 4];
  static double spikes[MAX_SPIKES * 4][2];
  int64_t n_cells = 0, n_cols = 0, n_spikes = 0;
  for (int p = 0; p < size; p++) {
    rank_part r = part_of(p, size, sc->no_cells);
    SE_EXPECT(st, r.cell_offset == n_cells && r.col_offset == n_cols, "layout of rank %d", p);
    for (int64_t c = 0; c < r.n_cells; c++) {
      node_ids[n_cells] = r.node_ids[c];
      pointers[n_cells++] = (uint64_t)n_cols;
      n_cols += r.elements[c];
    }
    memcpy(element_ids + r.col_offset, r.element_ids, (size_t)r.n_cols * sizeof *element_ids);
    for (int64_t i = 0; sc->write_spikes && i < r.n_spikes; i++) {
      spikes[n_spikes][0] = r.spike_time[i];
      spikes[n_spikes++][1] = (double)r.spike_gid[i];
    }
  }
  pointers[n_cells] = (uint64_t)n_cols;
  qsort(spikes, (size_t)n_spikes, sizeof spikes[0], compare_spike);

  /* data */
  static double data[64 * MAX_COLS * 4];
  hsize_t dims[2];
  hid_t type;
  int64_t n = read_dataset(f, "/report/All/data", H5T_NATIVE_DOUBLE, data, 64 * MAX_COLS * 4,
                           dims, &type);
  SE_EXPECT(st, n == sc->n_frames * n_cols && dims[0] == (hsize_t)sc->n_frames &&
                    dims[1] == (hsize_t)n_cols,
            "data is %llu x %llu, expected %lld x %lld", (unsigned long long)dims[0],
            (unsigned long long)dims[1], (long long)sc->n_frames, (long long)n_cols);
  expect_type(st, type, sc->float64 ? H5T_IEEE_F64LE : H5T_IEEE_F32LE, "data");
  int bad = 0;
  for (int64_t fr = 0; n > 0 && fr < sc->n_frames; fr++)
    for (int64_t c = 0; c < n_cols; c++) {
      double want = value_at(fr, c, sc->float64);
      want = sc->float64 ? want : (double)(float)want;
      if (data[fr * n_cols + c] != want && bad++ < 5)
        SE_EXPECT(st, 0, "data[%lld][%lld] = %.17g, expected %.17g", (long long)fr,
                  (long long)c, data[fr * n_cols + c], want);
    }
  SE_EXPECT(st, bad == 0, "%d wrong data values", bad);
  hid_t d = H5Dopen2(f, "/report/All/data", H5P_DEFAULT);
  char units[64];
  read_string_attr(d, "units", units, sizeof units);
  SE_EXPECT(st, strcmp(units, "mV") == 0, "data units '%s'", units);
  hid_t dcpl = H5Dget_create_plist(d);
  if (sc->n_frames > 0 && n_cols > 0) {
    hsize_t chunk[2] = {0, 0};
    SE_EXPECT(st, H5Pget_layout(dcpl) == H5D_CHUNKED && H5Pget_chunk(dcpl, 2, chunk) == 2,
              "data is not chunked");
    int64_t rows = sc->buffer_frames < sc->n_frames ? sc->buffer_frames : sc->n_frames;
    SE_EXPECT(st, chunk[0] == (hsize_t)rows && chunk[1] == (hsize_t)n_cols,
              "chunk %llu x %llu", (unsigned long long)chunk[0], (unsigned long long)chunk[1]);
  }
  H5Pclose(dcpl);
  H5Dclose(d);

  /* mapping */
  static uint64_t u64[MAX_SPIKES * 4];
  static uint32_t u32[MAX_COLS * 4];
  n = read_dataset(f, "/report/All/mapping/node_ids", H5T_NATIVE_UINT64, u64, MAX_SPIKES * 4,
                   dims, &type);
  expect_type(st, type, H5T_STD_U64LE, "node_ids");
  SE_EXPECT(st, n == n_cells && memcmp(u64, node_ids, (size_t)n_cells * 8) == 0,
            "node_ids: %lld values, expected %lld", (long long)n, (long long)n_cells);
  n = read_dataset(f, "/report/All/mapping/index_pointers", H5T_NATIVE_UINT64, u64,
                   MAX_SPIKES * 4, dims, &type);
  expect_type(st, type, H5T_STD_U64LE, "index_pointers");
  SE_EXPECT(st, n == n_cells + 1 && memcmp(u64, pointers, (size_t)(n_cells + 1) * 8) == 0,
            "index_pointers: %lld values, expected %lld", (long long)n, (long long)n_cells + 1);
  n = read_dataset(f, "/report/All/mapping/element_ids", H5T_NATIVE_UINT32, u32, MAX_COLS * 4,
                   dims, &type);
  expect_type(st, type, H5T_STD_U32LE, "element_ids");
  SE_EXPECT(st, n == n_cols && memcmp(u32, element_ids, (size_t)n_cols * 4) == 0,
            "element_ids: %lld values, expected %lld", (long long)n, (long long)n_cols);
  double t[3] = {0, 0, 0};
  n = read_dataset(f, "/report/All/mapping/time", H5T_NATIVE_DOUBLE, t, 3, dims, &type);
  expect_type(st, type, H5T_IEEE_F64LE, "time");
  SE_EXPECT(st, n == 3 && t[0] == T_START && t[1] == T_START + (double)sc->n_frames * T_STEP &&
                    t[2] == T_STEP,
            "time = {%g, %g, %g}", t[0], t[1], t[2]);
  d = H5Dopen2(f, "/report/All/mapping/time", H5P_DEFAULT);
  read_string_attr(d, "units", units, sizeof units);
  SE_EXPECT(st, strcmp(units, "ms") == 0, "time units '%s'", units);
  H5Dclose(d);

  /* spikes */
  static double times[MAX_SPIKES * 4];
  n = read_dataset(f, "/spikes/All/timestamps", H5T_NATIVE_DOUBLE, times, MAX_SPIKES * 4, dims,
                   &type);
  expect_type(st, type, H5T_IEEE_F64LE, "timestamps");
  SE_EXPECT(st, n == n_spikes, "%lld spikes, expected %lld", (long long)n, (long long)n_spikes);
  int64_t m = read_dataset(f, "/spikes/All/node_ids", H5T_NATIVE_UINT64, u64, MAX_SPIKES * 4,
                           dims, &type);
  expect_type(st, type, H5T_STD_U64LE, "spike node_ids");
  SE_EXPECT(st, m == n_spikes, "%lld spike gids, expected %lld", (long long)m, (long long)n_spikes);
  for (int64_t i = 0; n == n_spikes && m == n_spikes && i < n_spikes; i++)
    SE_EXPECT(st, times[i] == spikes[i][0] && (double)u64[i] == spikes[i][1],
              "spike %lld = (%g, %llu), expected (%g, %g)", (long long)i, times[i],
              (unsigned long long)u64[i], spikes[i][0], spikes[i][1]);
  d = H5Dopen2(f, "/spikes/All/timestamps", H5P_DEFAULT);
  read_string_attr(d, "units", units, sizeof units);
  SE_EXPECT(st, strcmp(units, "ms") == 0, "timestamps units '%s'", units);
  H5Dclose(d);
  hid_t g = H5Gopen2(f, "/spikes/All", H5P_DEFAULT);
  check_sorting(st, g);
  H5Gclose(g);

  /* metadata */
  g = H5Gopen2(f, "/simengine", H5P_DEFAULT);
  SE_EXPECT(st, g >= 0, "no /simengine group");
  char s[128];
  read_string_attr(g, "engine", s, sizeof s);
  SE_EXPECT(st, strcmp(s, "simengine test") == 0, "engine = '%s'", s);
  read_string_attr(g, "input", s, sizeof s);
  SE_EXPECT(st, strcmp(s, "d\xc3\xa9j\xc3\xa0.h5") == 0, "input = '%s'", s);
  int64_t ranks = -1;
  double wall = 0;
  hid_t a = H5Aopen(g, "ranks", H5P_DEFAULT);
  SE_EXPECT(st, a >= 0 && H5Aread(a, H5T_NATIVE_INT64, &ranks) >= 0 && ranks == size,
            "ranks = %lld", (long long)ranks);
  H5Aclose(a);
  a = H5Aopen(g, "wall_seconds", H5P_DEFAULT);
  SE_EXPECT(st, a >= 0 && H5Aread(a, H5T_NATIVE_DOUBLE, &wall) >= 0 && wall == 1.5,
            "wall_seconds = %g", wall);
  H5Aclose(a);
  H5Gclose(g);
  SE_EXPECT(st, H5Fget_obj_count(f, H5F_OBJ_ALL) == 1, "objects left open in the check");
  H5Fclose(f);
}

/* The spec of rank p in scenario sc (arrays in part). */
static se_report_spec spec_of(const scenario *sc, const rank_part *part) {
  return (se_report_spec){.population = "All",
                          .float64 = sc->float64,
                          .n_frames = sc->n_frames,
                          .t_start = T_START,
                          .t_stop = T_START + (double)sc->n_frames * T_STEP,
                          .t_step = T_STEP,
                          .n_local_cells = part->n_cells,
                          .local_node_ids = part->node_ids,
                          .local_elements_per_cell = part->elements,
                          .local_element_ids = part->element_ids,
                          .buffer_frames = sc->buffer_frames,
                          .flush_seconds = sc->flush_seconds};
}

/* Every rank got the same code. */
static void expect_same_code(se_test_state *st, int rc, const char *what) {
  int lo = 0, hi = 0;
  MPI_Allreduce(&rc, &lo, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&rc, &hi, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  SE_EXPECT(st, lo == hi, "%s: codes differ between ranks (%d .. %d)", what, lo, hi);
}

/* Runs scenario sc into PREFIX<suffix>.h5 and checks it on rank 0. */
static void run_scenario(se_test_state *st, const char *prefix, const scenario *sc) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char path[1024];
  snprintf(path, sizeof path, "%s%s.h5", prefix, sc->suffix);
  rank_part part = part_of(rank, size, sc->no_cells);
  se_report_spec spec = spec_of(sc, &part);
  spec.buffer_frames += rank; /* the writer uses the smallest, rank 0's */
  se_error err = {0};
  se_report_t rep = NULL;
  int rc = se_report_open(path, MPI_COMM_WORLD, &spec, &rep, &err);
  SE_EXPECT(st, rc == SE_OK, "%s: open: %s", path, err.message);
  if (rc != SE_OK)
    return;
  /* Metadata before, between and after the frames; "ranks" is replaced. */
  rc = se_report_meta_string(rep, "engine", "simengine test", &err);
  rc = rc ? rc : se_report_meta_int(rep, "ranks", -1, &err);
  SE_EXPECT(st, rc == SE_OK, "meta: %s", err.message);
  double values[MAX_COLS];
  for (int64_t f = 0; f < sc->n_frames; f++) {
    for (int64_t c = 0; c < part.n_cols; c++)
      values[c] = value_at(f, part.col_offset + c, sc->float64);
    rc = se_report_append(rep, part.n_cols ? values : NULL, &err);
    SE_EXPECT(st, rc == SE_OK, "append frame %lld: %s", (long long)f, err.message);
    if (f == 1) {
      rc = se_report_meta_string(rep, "input", "d\xc3\xa9j\xc3\xa0.h5", &err);
      SE_EXPECT(st, rc == SE_OK, "meta: %s", err.message);
    }
  }
  if (sc->write_spikes) {
    rc = se_report_write_spikes(rep, part.n_spikes, part.spike_time, part.spike_gid, &err);
    SE_EXPECT(st, rc == SE_OK, "spikes: %s", err.message);
    rc = se_report_write_spikes(rep, 0, NULL, NULL, &err);
    SE_EXPECT(st, rc == SE_ERR_ARG, "a second spikes call gave %d", rc);
  }
  rc = se_report_meta_int(rep, "ranks", size, &err);
  rc = rc ? rc : se_report_meta_int(rep, "input", 0, &err);
  rc = rc ? rc : se_report_meta_string(rep, "input", "d\xc3\xa9j\xc3\xa0.h5", &err);
  rc = rc ? rc : se_report_meta_double(rep, "wall_seconds", 1.5, &err);
  SE_EXPECT(st, rc == SE_OK, "meta: %s", err.message);
  rc = se_report_close(rep, 1, &err);
  SE_EXPECT(st, rc == SE_OK, "%s: close: %s", path, err.message);
  expect_same_code(st, rc, "close");
  if (rank == 0)
    verify(st, path, sc, size);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* Checks (rank 0) that neither path nor path.tmp exists. */
static void expect_no_file(se_test_state *st, const char *path, const char *what) {
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  char tmp[1100];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  if (rank == 0)
    SE_EXPECT(st, access(path, F_OK) != 0 && access(tmp, F_OK) != 0, "%s: a file is left", what);
  MPI_Barrier(MPI_COMM_WORLD);
}

/* The failure paths: each leaves no file, every rank gets the same code. */
static void run_failures(se_test_state *st, const char *prefix) {
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  char path[1024];
  snprintf(path, sizeof path, "%s_fail.h5", prefix);
  const scenario sc = {"_fail", 0, 6, 4, 0, 0, 1};
  rank_part part = part_of(rank, size, 0);
  double values[MAX_COLS] = {0};
  se_error err = {0};
  se_report_t rep = NULL;

  /* close(success = 0) after some frames. */
  se_report_spec spec = spec_of(&sc, &part);
  int rc = se_report_open(path, MPI_COMM_WORLD, &spec, &rep, &err);
  SE_EXPECT(st, rc == SE_OK, "open: %s", err.message);
  for (int f = 0; rc == SE_OK && f < 5; f++)
    rc = se_report_append(rep, values, &err);
  SE_EXPECT(st, rc == SE_OK, "append: %s", err.message);
  rc = se_report_close(rep, 0, &err);
  SE_EXPECT(st, rc == SE_OK, "close(0): %s", err.message);
  expect_no_file(st, path, "close(0)");

  /* One frame too many, then a failure on the last rank only: every rank discards. */
  rc = se_report_open(path, MPI_COMM_WORLD, &spec, &rep, &err);
  for (int f = 0; rc == SE_OK && f < 6; f++)
    rc = se_report_append(rep, values, &err);
  SE_EXPECT(st, rc == SE_OK, "append: %s", err.message);
  rc = se_report_append(rep, values, &err);
  SE_EXPECT(st, rc == SE_ERR_ARG && strstr(err.message, "frame index 6 to a report of 6"),
            "frame 7 of 6: %d %s", rc, err.message);
  rc = se_report_close(rep, rank != size - 1, &err);
  SE_EXPECT(st, rc == SE_OK, "close(0 on the last rank): %s", err.message);
  expect_same_code(st, rc, "close(0 on the last rank)");
  expect_no_file(st, path, "close(0 on the last rank)");

  /* close(1) with frames missing. */
  rc = se_report_open(path, MPI_COMM_WORLD, &spec, &rep, &err);
  for (int f = 0; rc == SE_OK && f < 5; f++)
    rc = se_report_append(rep, values, &err);
  rc = se_report_close(rep, 1, &err);
  SE_EXPECT(st, rc == SE_ERR_ARG && strstr(err.message, "5 of 6 frames"), "missing frame: %d %s",
            rc, err.message);
  expect_same_code(st, rc, "missing frame");
  expect_no_file(st, path, "missing frame");

  /* A value beyond float32 on rank 0 only, in the frame that fills the buffer (buffer_frames 4):
   * rank 0 refuses it, yet every rank takes part in the buffer's collective write (a rank that
   * returned first would leave the others in it); agreed on, nothing is kept. */
  rc = se_report_open(path, MPI_COMM_WORLD, &spec, &rep, &err);
  for (int f = 0; rc == SE_OK && f < 3; f++)
    rc = se_report_append(rep, values, &err);
  SE_EXPECT(st, rc == SE_OK && (part.n_cols > 0) == (rank != 1), "append: %s", err.message);
  double huge[MAX_COLS] = {0};
  huge[0] = rank == 0 ? 1e300 : 0.0;
  rc = se_report_append(rep, huge, &err);
  SE_EXPECT(st, rank == 0 ? rc == SE_ERR_NUMERIC && strstr(err.message, "1e+300 (column 0 of "
                                                                       "frame 3) does not fit")
                          : rc == SE_OK,
            "a value beyond float32 on rank 0: %d %s", rc, err.message);
  int worst = rc;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  rc = se_report_close(rep, worst == SE_OK, &err);
  SE_EXPECT(st, worst == SE_ERR_NUMERIC && rc == SE_OK, "close(0) after a value beyond float32: "
            "%d %s", rc, err.message);
  expect_no_file(st, path, "value beyond float32");

  /* A non-finite spike time on the last rank only: every rank fails the same way. */
  rc = se_report_open(path, MPI_COMM_WORLD, &spec, &rep, &err);
  for (int f = 0; rc == SE_OK && f < 6; f++)
    rc = se_report_append(rep, values, &err);
  SE_EXPECT(st, rc == SE_OK, "append: %s", err.message);
  part.spike_time[0] = rank == size - 1 ? NAN : part.spike_time[0];
  rc = se_report_write_spikes(rep, part.n_spikes, part.spike_time, part.spike_gid, &err);
  SE_EXPECT(st, rc == SE_ERR_ARG && strstr(err.message, "has time nan"), "NaN spike: %d %s", rc,
            err.message);
  expect_same_code(st, rc, "NaN spike");
  rc = se_report_close(rep, 0, &err);
  SE_EXPECT(st, rc == SE_OK, "close(0) after the NaN spike: %s", err.message);
  expect_no_file(st, path, "NaN spike");

  /* A bad spec on the last rank only: every rank fails, no file. */
  se_report_spec bad = spec;
  if (rank == size - 1) {
    bad.n_local_cells = 1;
    bad.local_node_ids = NULL;
  }
  rc = se_report_open(path, MPI_COMM_WORLD, &bad, &rep, &err);
  SE_EXPECT(st, rc == SE_ERR_ARG && rep == NULL && strstr(err.message, "local_node_ids"),
            "bad spec on one rank: %d %s", rc, err.message);
  expect_same_code(st, rc, "bad spec");
  expect_no_file(st, path, "bad spec");

  /* n_frames different on the last rank (needs 2 ranks), or stop inconsistent with the frames. */
  bad = spec;
  if (size > 1 && rank == size - 1) {
    bad.n_frames++;
    bad.t_stop += T_STEP;
  } else if (size == 1) {
    bad.t_stop += T_STEP;
  }
  rc = se_report_open(path, MPI_COMM_WORLD, &bad, &rep, &err);
  SE_EXPECT(st, rc == SE_ERR_ARG && rep == NULL, "inconsistent spec: %d %s", rc, err.message);
  expect_same_code(st, rc, "inconsistent spec");
  expect_no_file(st, path, "inconsistent spec");

  /* The final path is a directory: the rename fails on every rank and the output is kept in
   * path.tmp. */
  if (rank == 0)
    mkdir(path, 0755);
  MPI_Barrier(MPI_COMM_WORLD);
  rc = se_report_open(path, MPI_COMM_WORLD, &spec, &rep, &err);
  for (int f = 0; rc == SE_OK && f < 6; f++)
    rc = se_report_append(rep, values, &err);
  rc = rc ? rc : se_report_close(rep, 1, &err);
  SE_EXPECT(st, rc == SE_ERR_IO && strstr(err.message, "renaming"), "rename onto a directory: "
            "%d %s", rc, err.message);
  expect_same_code(st, rc, "rename");
  char tmp[1100];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  if (rank == 0) {
    SE_EXPECT(st, access(tmp, F_OK) == 0, "%s was not kept", tmp);
    unlink(tmp);
    rmdir(path);
  }
  expect_no_file(st, path, "rename");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  se_test_state st = {0};
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (argc != 2) {
    if (rank == 0)
      fprintf(stderr, "usage: %s PREFIX\n", argv[0]);
    MPI_Finalize();
    return 2;
  }
  /* suffix, float64, n_frames, buffer_frames, flush_seconds, no_cells, write_spikes */
  const scenario scenarios[] = {
      {"", 0, 23, 5, 0, 0, 1},         /* buffer_frames does not divide n_frames */
      {"_f64", 1, 10, 4, 1e-9, 0, 1},  /* float64, a flush after every write */
      {"_empty", 0, 7, 3, 0, 1, 0},    /* no recorded elements, no spikes call */
      {"_noframes", 0, 0, 3, 0, 0, 1}, /* zero frames */
  };
  for (size_t i = 0; i < sizeof scenarios / sizeof scenarios[0]; i++)
    run_scenario(&st, argv[1], &scenarios[i]);
  run_failures(&st, argv[1]);

  int code = se_test_finish_all(&st, "test_report", MPI_COMM_WORLD);
  MPI_Finalize();
  return code;
}
