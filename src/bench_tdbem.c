/* simengine-bench tdbem: the CPU summation of the tdbem workload (docs/tdbem.md Section 11): the
 * multi-vector/vector product for each ng and the front approach on the same matrices, next to
 * the bandwidth floor from the host memcpy bandwidth measured in the same run. */
#include "bench_tdbem.h"

#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "prep_tdbem.h"
#include "se_error.h"
#include "simengine/tdbem.h"
#include "tdbem_front_ref.h"
#include "tdbem_ordering.h"
#ifdef SIMENGINE_HAVE_CUDA
#include "se_cuda.h"
#include "tdbem_cuda.h"
#endif

static const char *usage =
    "Usage: simengine-bench tdbem [options]\n"
    "\n"
    "Builds a synthetic TD-BEM case in memory (the generator of simengine-prep tdbem: unknowns\n"
    "on a sphere, one row-vector per pair) and times, per precision of the values:\n"
    "  slices   se_tdbem_sum_cpu, the multi-vector/vector product of ng summation vectors at\n"
    "           once (one call = ng steps), for each ng;\n"
    "  front    the front approach: one CSR SpMV per k (src/tdbem_front_ref.c), one step;\n"
    "the median over repetitions, per call and per step, in GFlop/s (effective: 2 flops per\n"
    "stored value per summation vector), next to the bandwidth floor of a step: the slices read\n"
    "every stored value once per ng steps (values x value size / ng bytes per step), the front\n"
    "reads values and column indices every step, at the host memcpy bandwidth measured first\n"
    "(bytes read + written per second). Threads: OMP_NUM_THREADS.\n"
    "With a CUDA device (docs/tdbem.md Section 12), on device 0, next to the device copy\n"
    "bandwidth measured in the same run:\n"
    "  fb, fb32 the Full-Blocking kernel (blocks of 32 rows x 16 or 32 columns), per ng;\n"
    "  cb       the Contiguous-Blocking kernel, per ng;\n"
    "  cusparse the front approach with cuSPARSE: one CSR SpMV per k, one step.\n"
    "A GPU call includes the reduction of the partial vectors and the download of the ng\n"
    "vectors to the host.\n"
    "\n"
    "Options:\n"
    "  --n N              unknowns (default 2000)\n"
    "  --kmax K           largest k (default 100)\n"
    "  --dmax D           longest row-vector (default 15)\n"
    "  --mean-length L    mean row-vector length (default 9.5)\n"
    "  --seed S           seed of the generator (default 1)\n"
    "  --ng LIST          ng values, 1 .. 16 (default 1,2,4,8,16)\n"
    "  --precision LIST   single, double or single,double (default single,double)\n"
    "  --no-front         skip the front approach (CPU and cuSPARSE)\n"
    "  --no-gpu           skip the GPU rows\n"
    "  --hilbert          number the unknowns along the Hilbert curve (Full-Blocking needs it)\n"
    "  --copy-mib M       size of the memcpy buffers in MiB (default 256)\n"
    "  --min-time S       time each variant for at least S seconds (default 0.5)\n"
    "  --csv FILE         also write the rows as CSV\n";

/* The options of the section. */
typedef struct options {
  long long n, kmax, dmax, seed, copy_mib;
  double mean_length, min_time;
  const char *ng_list, *precisions, *csv_path;
  int no_front, no_gpu, hilbert;
} options;

/* What every row of the table needs. */
typedef struct table {
  FILE *csv;          /* or NULL */
  double copy_gbs;    /* host memcpy, bytes read + written per second / 1e9 */
  double device_gbs;  /* device copy, likewise (0: no GPU rows) */
  double values;      /* stored values of the case */
  const char *prec;   /* "single" or "double" */
} table;

/* One timed call: returns an error code. */
typedef int (*call_fn)(void *ctx, se_error *err);

/* Calls fn once untimed, then at least 3 times and until min_time seconds or 1000 calls; gives
 * the median seconds per call. */
static int time_calls(call_fn fn, void *ctx, double min_time, double *median_s, se_error *err) {
  enum { MAX_REPS = 1000 };
  double *times;
  SE_CALLOC(err, times, MAX_REPS, "the timings");
  int rc = fn(ctx, err), reps = 0;
  for (double total = 0.0; rc == SE_OK && reps < MAX_REPS && (reps < 3 || total < min_time);) {
    const double t0 = se_bench_now();
    rc = fn(ctx, err);
    times[reps] = se_bench_now() - t0;
    total += times[reps++];
  }
  if (rc == SE_OK)
    *median_s = se_bench_median(times, reps);
  free(times);
  return rc;
}

/* The memcpy context: two buffers of bytes each. */
typedef struct copy_ctx {
  char *src, *dst;
  size_t bytes;
} copy_ctx;

static int copy_call(void *ctx, se_error *err) {
  (void)err;
  copy_ctx *c = ctx;
  memcpy(c->dst, c->src, c->bytes);
  return SE_OK;
}

/* The host memcpy bandwidth (bytes read + written per second / 1e9) over buffers of mib MiB. */
static int measure_copy(long long mib, double min_time, double *gbs, se_error *err) {
  copy_ctx c = {.bytes = (size_t)mib << 20};
  c.src = malloc(c.bytes);
  c.dst = malloc(c.bytes);
  int rc = SE_OK;
  if (!c.src || !c.dst)
    rc = se_error_set(err, SE_ERR_NOMEM, __FILE__, __LINE__, __func__,
                      "out of memory for two memcpy buffers of %lld MiB", mib);
  double s = 0.0;
  if (rc == SE_OK) {
    memset(c.src, 1, c.bytes); /* fault the pages in before timing */
    memset(c.dst, 0, c.bytes);
    rc = time_calls(copy_call, &c, min_time, &s, err);
  }
  if (rc == SE_OK)
    *gbs = 2.0 * (double)c.bytes / s / 1e9;
  free(c.src);
  free(c.dst);
  return rc;
}

/* The slice summation context: ng vectors at time n from a full history. */
typedef struct sum_ctx {
  const se_tdbem_slices *s;
  const double *hist;
  int64_t hist_len, n;
  int ng;
  double *out;
} sum_ctx;

static int sum_call(void *ctx, se_error *err) {
  sum_ctx *c = ctx;
  return se_tdbem_sum_cpu(c->s, c->hist, c->hist_len, c->n, c->ng, c->out, err);
}

/* The front summation context: one step at time n. */
typedef struct front_ctx {
  const se_tdbem_front *f;
  const double *past;
  int64_t past_len, n;
  double *out;
} front_ctx;

static int front_call(void *ctx, se_error *err) {
  front_ctx *c = ctx;
  return se_tdbem_front_sum(c->f, c->past, c->past_len, c->n, c->out, err);
}

/* Prints (and writes as CSV) one row: seconds per call for ng steps, floor_bytes per step. */
static void row(const table *t, const char *method, int ng, double call_s, double floor_bytes) {
  const double step_s = call_s / ng, floor_s = floor_bytes / (t->copy_gbs * 1e9);
  const double gflops = 2.0 * t->values * ng / call_s / 1e9;
  printf("%-7s %-7s %3d %11.3f %10.3f %8.2f %12.3f %7.0f%%\n", t->prec, method, ng, 1e3 * call_s,
         1e3 * step_s, gflops, 1e3 * floor_s, 100.0 * floor_s / step_s);
  if (t->csv)
    fprintf(t->csv, "%s,%s,%d,%.6f,%.6f,%.4f,%.6f,%.4f\n", t->prec, method, ng, 1e3 * call_s,
            1e3 * step_s, gflops, 1e3 * floor_s, floor_s / step_s);
}

/* Fills v[0 .. n) with deterministic values in [-1, 1). */
static void fill(double *v, int64_t n, uint64_t seed) {
  uint64_t x = seed * 2862933555777941757ull + 3037000493ull;
  for (int64_t i = 0; i < n; i++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    v[i] = (double)(x >> 11) * 0x1.0p-52 - 1.0;
  }
}

/* The slice rows of one case: every ng of the list. */
static int bench_slices(const table *t, const se_tdbem_slices *s, const long long *ngs, int n_ng,
                        double min_time, se_error *err) {
  const int64_t n = s->n, hist_len = s->kmax + 16;
  double *hist = NULL, *out = NULL;
  SE_CALLOC(err, hist, s->count * hist_len, "the history");
  out = calloc(16 * (size_t)n, sizeof *out);
  if (!out) {
    free(hist);
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory for 16 summation vectors of %lld", (long long)n);
  }
  fill(hist, s->count * hist_len, 1);
  const double size = s->precision == SE_PRECISION_SINGLE ? 4.0 : 8.0;
  int rc = SE_OK;
  for (int k = 0; k < n_ng && rc == SE_OK; k++) {
    sum_ctx c = {.s = s, .hist = hist, .hist_len = hist_len, .n = 2 * hist_len, .ng = (int)ngs[k],
                 .out = out};
    double call_s = 0.0;
    rc = time_calls(sum_call, &c, min_time, &call_s, err);
    if (rc == SE_OK)
      row(t, "slices", c.ng, call_s, (double)s->n_values * size / c.ng);
  }
  free(out);
  free(hist);
  return rc;
}

/* The front row of one case: the CSR matrices of the same slices, one step. */
static int bench_front(const table *t, const se_tdbem_slices *s, double min_time, se_error *err) {
  se_tdbem_front f = {0};
  int rc = se_tdbem_front_create(s, &f, err);
  double *past = NULL, *out = NULL;
  if (rc == SE_OK) {
    past = calloc((size_t)(s->kmax * s->count), sizeof *past);
    out = calloc((size_t)s->n, sizeof *out);
    if (!past || !out)
      rc = se_error_set(err, SE_ERR_NOMEM, __FILE__, __LINE__, __func__,
                        "out of memory for the front history (%lld x %lld)", (long long)s->kmax,
                        (long long)s->count);
  }
  if (rc == SE_OK) {
    fill(past, s->kmax * s->count, 2);
    front_ctx c = {.f = &f, .past = past, .past_len = s->kmax, .n = 2 * s->kmax + 1, .out = out};
    double call_s = 0.0;
    rc = time_calls(front_call, &c, min_time, &call_s, err);
    const double size = s->precision == SE_PRECISION_SINGLE ? 4.0 : 8.0;
    if (rc == SE_OK)
      row(t, "front", 1, call_s, (double)f.nnz * (size + sizeof *f.col));
  }
  free(out);
  free(past);
  se_tdbem_front_free(&f);
  return rc;
}

#ifdef SIMENGINE_HAVE_CUDA
/* The GPU summation context: ng vectors at time n on a worker holding every slice; the device
 * time of the kernels summed over the calls. */
typedef struct gpu_ctx {
  se_tdbem_cuda_t g;
  int64_t n;
  int ng;
  double *out;
  double device_s;
  int64_t calls;
} gpu_ctx;

static int gpu_call(void *ctx, se_error *err) {
  gpu_ctx *c = ctx;
  double device_s = 0.0;
  SE_TRY(se_tdbem_cuda_sum_start(c->g, c->n, c->ng, err));
  SE_TRY(se_tdbem_cuda_sum_finish(c->g, c->out, &device_s, err));
  c->device_s += device_s;
  c->calls++;
  return SE_OK;
}

static int cusparse_call(void *ctx, se_error *err) {
  return se_tdbem_cusparse_front_step(ctx, NULL, err);
}

/* The GPU rows of one case: FB (16 and 32 columns) and CB for every ng, then cuSPARSE. */
static int bench_gpu(const table *t, const se_tdbem_slices *s, const long long *ngs, int n_ng,
                     double min_time, int no_front, se_error *err) {
  const int64_t hist_len = s->kmax + 16;
  const double size = s->precision == SE_PRECISION_SINGLE ? 4.0 : 8.0;
  table gt = *t;
  gt.copy_gbs = t->device_gbs;
  double *hist = NULL, *out = NULL;
  SE_CALLOC(err, hist, s->count * hist_len, "the history");
  out = calloc(16 * (size_t)s->n, sizeof *out);
  int rc = out ? SE_OK
               : se_error_set(err, SE_ERR_NOMEM, __FILE__, __LINE__, __func__,
                              "out of memory for 16 summation vectors");
  fill(hist, s->count * hist_len, 1);
  static const struct {
    const char *name;
    se_tdbem_gpu_kernel kernel;
    int bc;
  } kinds[] = {{"fb", SE_TDBEM_GPU_FB, 16}, {"fb32", SE_TDBEM_GPU_FB, 32}, {"cb", SE_TDBEM_GPU_CB, 16}};
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0] && rc == SE_OK; k++) {
    se_tdbem_cuda_t g = NULL;
    const double t0 = se_bench_now();
    rc = se_tdbem_cuda_create(0, kinds[k].kernel, kinds[k].bc, s->n, s->kmax, s->precision,
                              hist_len, &g, err);
    if (rc == SE_OK)
      rc = se_tdbem_cuda_set_interval(g, s, hist, err);
    if (rc == SE_ERR_CUDA && strstr(err->message, "cudaMalloc")) { /* too much padding */
      printf("# %s %s: the image does not fit on the device, skipped (%s)\n", t->prec,
             kinds[k].name, err->message);
      se_tdbem_cuda_destroy(g);
      rc = SE_OK;
      continue;
    }
    if (rc == SE_OK) {
      se_tdbem_cuda_stats st;
      se_tdbem_cuda_get_stats(g, &st);
      printf("# %s %s: %lld blocks, %.3f stored values per value (padding), %.3f bytes read per "
             "value byte, built and uploaded in %.2f s\n",
             t->prec, kinds[k].name, (long long)st.blocks, (double)st.stored / t->values,
             st.bytes / (t->values * size), se_bench_now() - t0);
    }
    for (int i = 0; i < n_ng && rc == SE_OK; i++) {
      gpu_ctx c = {.g = g, .n = 2 * hist_len, .ng = (int)ngs[i], .out = out};
      double call_s = 0.0;
      rc = time_calls(gpu_call, &c, min_time, &call_s, err);
      if (rc == SE_OK) {
        const double dev = c.device_s / (double)(c.calls > 0 ? c.calls : 1);
        printf("# %s %s ng %d: kernels %.3f ms per call (device events: product + chunk "
               "reduction), %.0f GB/s of values\n",
               t->prec, kinds[k].name, c.ng, 1e3 * dev, t->values * size / dev / 1e9);
        row(&gt, kinds[k].name, c.ng, call_s, t->values * size / c.ng);
      }
    }
    se_tdbem_cuda_destroy(g);
  }
  if (rc == SE_OK && !no_front) {
    se_tdbem_cusparse_front_t f = NULL;
    rc = se_tdbem_cusparse_front_create(s, &f, err);
    int64_t nnz = 0;
    double call_s = 0.0;
    if (rc == SE_OK)
      rc = se_tdbem_cusparse_front_step(f, &nnz, err);
    if (rc == SE_OK)
      rc = time_calls(cusparse_call, f, min_time, &call_s, err);
    if (rc == SE_OK)
      row(&gt, "cusparse", 1, call_s, (double)nnz * (size + 4.0));
    se_tdbem_cusparse_front_destroy(f);
  }
  free(out);
  free(hist);
  return rc;
}

/* The device copy bandwidth (bytes read + written per second / 1e9), 0 without a device. */
static int measure_device(long long mib, double *gbs, se_error *err) {
  *gbs = 0.0;
  if (se_cuda_device_count() == 0)
    return SE_OK;
  SE_CUDA_CHECK(err, cudaSetDevice(0));
  double bps = 0.0;
  SE_TRY(se_cuda_copy_bandwidth((size_t)mib << 20, &bps, err));
  *gbs = bps / 1e9;
  return SE_OK;
}
#else
static int bench_gpu(const table *t, const se_tdbem_slices *s, const long long *ngs, int n_ng,
                     double min_time, int no_front, se_error *err) {
  (void)t, (void)s, (void)ngs, (void)n_ng, (void)min_time, (void)no_front;
  SE_FAIL(err, SE_ERR_UNSUPPORTED, "this build has no CUDA backend");
}

static int measure_device(long long mib, double *gbs, se_error *err) {
  (void)mib, (void)err;
  *gbs = 0.0;
  return SE_OK;
}
#endif

/* Builds the case in precision prec and prints its rows. */
static int bench_precision(const options *o, table *t, se_precision prec, const long long *ngs,
                           int n_ng, se_error *err) {
  se_prep_tdbem_params p;
  se_prep_tdbem_defaults(&p);
  p.n = o->n;
  p.kmax = o->kmax;
  p.dmax = o->dmax;
  p.mean_length = o->mean_length;
  p.steps = 1;
  p.precision = prec;
  p.seed = (uint64_t)o->seed;
  se_tdbem_case c = {0};
  int rc = se_prep_tdbem_build(&p, &c, err);
  if (rc == SE_OK && o->hilbert && c.positions) { /* renumber along the Hilbert curve */
    int64_t *perm = calloc((size_t)c.slices.n, sizeof *perm);
    se_tdbem_slices h = {0};
    rc = perm ? se_tdbem_ordering(c.positions, c.slices.n, SE_ORDER_HILBERT, perm, err)
              : se_error_set(err, SE_ERR_NOMEM, __FILE__, __LINE__, __func__, "no memory");
    if (rc == SE_OK)
      rc = se_tdbem_slices_permute(&c.slices, perm, 0, c.slices.n, &h, err);
    if (rc == SE_OK) {
      se_tdbem_slices_free(&c.slices);
      c.slices = h;
    }
    free(perm);
  }
  if (rc == SE_OK) {
    t->values = (double)c.slices.n_values;
    t->prec = prec == SE_PRECISION_SINGLE ? "single" : "double";
    printf("# %s: N %lld, kmax %lld, %lld row-vectors, %lld values (%.1f MB)\n", t->prec,
           (long long)c.slices.n, (long long)c.slices.kmax, (long long)c.slices.n_rowvectors,
           (long long)c.slices.n_values,
           (double)c.slices.n_values * (prec == SE_PRECISION_SINGLE ? 4.0 : 8.0) / 1e6);
    rc = bench_slices(t, &c.slices, ngs, n_ng, o->min_time, err);
  }
  if (rc == SE_OK && !o->no_front)
    rc = bench_front(t, &c.slices, o->min_time, err);
  if (rc == SE_OK && t->device_gbs > 0.0)
    rc = bench_gpu(t, &c.slices, ngs, n_ng, o->min_time, o->no_front, err);
  se_tdbem_case_free(&c);
  return rc;
}

/* Checks the options; returns 0 or 2 (message printed). */
static int check_options(const options *o, const long long *ngs, int n_ng) {
  if (o->n < 4 || o->kmax < 2 || o->dmax < 1 || o->copy_mib < 1 || !(o->min_time >= 0.0)) {
    fprintf(stderr, "simengine-bench tdbem: --n >= 4, --kmax >= 2, --dmax >= 1, --copy-mib >= 1 "
                    "and --min-time >= 0 expected\n");
    return 2;
  }
  if (n_ng < 1) {
    fprintf(stderr, "simengine-bench tdbem: --ng '%s': no value\n", o->ng_list);
    return 2;
  }
  for (int k = 0; k < n_ng; k++)
    if (ngs[k] < 1 || ngs[k] > SE_TDBEM_NG_MAX) {
      fprintf(stderr, "simengine-bench tdbem: --ng %lld: expected 1 .. %d\n", ngs[k],
              SE_TDBEM_NG_MAX);
      return 2;
    }
  return 0;
}

int se_bench_tdbem(int argc, char **argv) {
  options o = {.n = 2000, .kmax = 100, .dmax = 15, .seed = 1, .copy_mib = 256, .mean_length = 9.5,
               .min_time = 0.5, .ng_list = "1,2,4,8,16", .precisions = "single,double"};
  const se_bench_opt opts[] = {{"--n", SE_BENCH_INT, &o.n},
                               {"--kmax", SE_BENCH_INT, &o.kmax},
                               {"--dmax", SE_BENCH_INT, &o.dmax},
                               {"--mean-length", SE_BENCH_DOUBLE, &o.mean_length},
                               {"--seed", SE_BENCH_INT, &o.seed},
                               {"--ng", SE_BENCH_STRING, &o.ng_list},
                               {"--precision", SE_BENCH_STRING, &o.precisions},
                               {"--no-front", SE_BENCH_FLAG, &o.no_front},
                               {"--no-gpu", SE_BENCH_FLAG, &o.no_gpu},
                               {"--hilbert", SE_BENCH_FLAG, &o.hilbert},
                               {"--copy-mib", SE_BENCH_INT, &o.copy_mib},
                               {"--min-time", SE_BENCH_DOUBLE, &o.min_time},
                               {"--csv", SE_BENCH_STRING, &o.csv_path}};
  const int parsed = se_bench_parse(argc, argv, "tdbem", usage, opts, sizeof opts / sizeof opts[0]);
  if (parsed >= 0)
    return parsed;
  long long ngs[SE_TDBEM_NG_MAX];
  const int n_ng = se_bench_parse_list(o.ng_list, ngs, SE_TDBEM_NG_MAX);
  if (check_options(&o, ngs, n_ng))
    return 2;
  const int want_single = strstr(o.precisions, "single") != NULL,
            want_double = strstr(o.precisions, "double") != NULL;
  if (!want_single && !want_double) {
    fprintf(stderr, "simengine-bench tdbem: --precision '%s': expected single, double or both\n",
            o.precisions);
    return 2;
  }
  table t = {0};
  if (o.csv_path) {
    t.csv = fopen(o.csv_path, "w");
    if (!t.csv) {
      fprintf(stderr, "simengine-bench tdbem: cannot write '%s'\n", o.csv_path);
      return 1;
    }
    fprintf(t.csv, "precision,method,ng,ms_per_call,ms_per_step,gflops,floor_ms_per_step,"
                   "floor_fraction\n");
  }
  se_error err = {0};
  int rc = measure_copy(o.copy_mib, o.min_time, &t.copy_gbs, &err);
  if (rc == SE_OK && !o.no_gpu)
    rc = measure_device(o.copy_mib, &t.device_gbs, &err);
  if (rc == SE_OK) {
    printf("# simengine-bench tdbem: %d OpenMP thread(s); host memcpy %.2f GB/s (read + written, "
           "%lld MiB buffers)\n",
           omp_get_max_threads(), t.copy_gbs, o.copy_mib);
    if (t.device_gbs > 0.0)
      printf("# device 0 copy %.1f GB/s (read + written): the floor of the GPU rows\n",
             t.device_gbs);
    printf("%-7s %-7s %3s %11s %10s %8s %12s %8s\n", "values", "method", "ng", "ms/call",
           "ms/step", "GFlop/s", "floor ms/st", "floor/t");
  }
  if (rc == SE_OK && want_single)
    rc = bench_precision(&o, &t, SE_PRECISION_SINGLE, ngs, n_ng, &err);
  if (rc == SE_OK && want_double)
    rc = bench_precision(&o, &t, SE_PRECISION_DOUBLE, ngs, n_ng, &err);
  if (t.csv && fclose(t.csv) != 0 && rc == SE_OK)
    rc = se_error_set(&err, SE_ERR_IO, __FILE__, __LINE__, __func__, "cannot write '%s'",
                      o.csv_path);
  if (rc != SE_OK) {
    fprintf(stderr, "simengine-bench tdbem: %s: %s\n", se_code_name((se_code)rc), err.message);
    return 1;
  }
  return 0;
}
