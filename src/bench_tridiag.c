/* simengine-bench tridiag: batched tridiagonal solvers against cuSPARSE, and the multi-morphology
 * branch-level Hines solve against the mono-morphology reference (docs/gpu-tridiag.md). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#ifndef SIMENGINE_HAVE_CUDA
int se_bench_tridiag(int argc, char **argv) {
  (void)argc;
  (void)argv;
  printf("simengine-bench tridiag: skipped: no CUDA in this build\n");
  return 0;
}
#else
#include <math.h>

#include "hines_branch.h"
#include "se_cuda.h"
#include "swc.h"
#include "tridiag_batch.h"

static const char *usage =
    "Usage: simengine-bench tridiag [options]\n"
    "\n"
    "Batched tridiagonal solves in double precision on the GPU: ours (auto = the partitioned\n"
    "Thomas with its size-based configuration, on the interleaved layout and on its own\n"
    "block-interleaved layout; cuThomasBatch; the register Thomas) against\n"
    "cuSPARSE gtsvInterleavedBatch (algorithms 0 cuThomas, 1 LU, 2 QR) and gtsv2StridedBatch on\n"
    "the same random diagonally dominant data in the same run (flat copies made outside the\n"
    "timing). Each solve is timed alone with CUDA events after the inputs are restored (untimed;\n"
    "cuSPARSE overwrites them); the median over repetitions after two warm-up solves is printed\n"
    "with the bandwidth at the 40 B/row floor (a, b, c, d read once, x written once), that as a\n"
    "fraction of the device copy bandwidth measured first, the speed-up against the best cuSPARSE\n"
    "routine for the shape, and the largest relative error against a CPU Thomas on 16 systems.\n"
    "Then variable-size batches (cuThomasVBatch, sizes uniform in [rows/2, rows], CP and NCP),\n"
    "and the multi-morphology branch-level Hines solve on mixed populations of the six synthetic\n"
    "classes (every neuron a different shape) in ns per compartment, with compute padding (CP)\n"
    "and without (NCP), exact (the CPU's operations) and fast, against the mono-morphology\n"
    "reference kernel on the same class mix, and the same solve with cuSPARSE gtsvInterleavedBatch\n"
    "(algorithms 0-2) per level as the backend (sorted plans).\n"
    "\n"
    "Options:\n"
    "  --rows LIST      rows per system (default 64,128,256,512)\n"
    "  --systems LIST   systems per batch (default 2560,25600,256000)\n"
    "  --neurons LIST   neurons of the Hines populations (default 2560,25600,256000; 0 = skip)\n"
    "  --unsorted-max N also time unsorted branch plans up to N neurons (default 25600)\n"
    "  --sweep          also time every configuration of the partitioned solver (one group of\n"
    "                   systems per block, persistent blocks staging the next group, or those\n"
    "                   solving each system in two halves of rows)\n"
    "  --no-vbatch      skip the variable-size batches\n"
    "  --min-time S     time each variant for at least S seconds of solves (default 0.2)\n"
    "  --csv FILE       also write the rows as CSV\n";

typedef struct bench_opts {
  const char *rows, *systems, *neurons, *csv_path;
  int sweep, vbatch;
  long long unsorted_max;
  double min_time;
} bench_opts;

static FILE *csv;
static double copy_gbps;

static void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (!p) {
    fprintf(stderr, "simengine-bench: out of memory (%zu x %zu bytes)\n", n, size);
    exit(1);
  }
  return p;
}

static void csv_row(const char *section, long long rows, long long systems, const char *method,
                    const char *config, double time_s, double ns_per_unit, double gbps,
                    double speedup, double ratio_mono, double err, int reps) {
  if (!csv)
    return;
  fprintf(csv, "%s,%lld,%lld,%s,\"%s\",%.3f,%.5f,%.2f,%.4f,%.4f,%.4f,%.3e,%d\n", section, rows,
          systems, method, config, 1e6 * time_s, ns_per_unit, gbps, gbps / copy_gbps, speedup,
          ratio_mono, err, reps);
}

/* ---- tridiagonal batches ----------------------------------------------------------------- */

typedef struct tri_ctx {
  int n, count, layout;
  size_t bytes, lbytes; /* interleaved arrays; arrays in the solver's layout */
  cudaStream_t stream;
  se_tridiag *t;
  double *p[4], *w[4];   /* pristine and work, interleaved */
  double *lp[4], *lw[4]; /* pristine and work in the solver's layout (flat, block-interleaved) */
} tri_ctx;

static int tri_restore(void *vctx, se_error *err) {
  tri_ctx *c = vctx;
  const int own = c->layout != SE_TRIDIAG_LAYOUT_INTERLEAVED;
  for (int i = 0; i < 4; i++)
    SE_CUDA_CHECK(err, cudaMemcpyAsync(own ? c->lw[i] : c->w[i], own ? c->lp[i] : c->p[i],
                                       own ? c->lbytes : c->bytes, cudaMemcpyDeviceToDevice,
                                       c->stream));
  return SE_OK;
}

static int tri_solve(void *vctx, se_error *err) {
  tri_ctx *c = vctx;
  double **w = c->layout != SE_TRIDIAG_LAYOUT_INTERLEAVED ? c->lw : c->w;
  return se_tridiag_solve(c->t, w[0], w[1], w[2], w[3], err);
}

/* Largest relative error of 16 systems against a CPU Thomas on the generator's rows. */
static double tri_verify(const tri_ctx *c, const int *sizes_h, uint64_t seed) {
  const int n = c->n, count = c->count, lay = c->layout;
  double *x = xcalloc((size_t)n, sizeof(double)), *ref = xcalloc((size_t)n, sizeof(double));
  double *cp = xcalloc((size_t)n, sizeof(double));
  const double *xs = lay != SE_TRIDIAG_LAYOUT_INTERLEAVED ? c->lw[3] : c->w[3];
  const size_t stride = lay == SE_TRIDIAG_LAYOUT_FLAT ? 1 : (lay > 0 ? (size_t)lay : (size_t)count);
  double worst = 0.0;
  for (int k = 0; k < 16; k++) {
    const int s = (int)((long long)k * (count - 1) / 15);
    const int ns = sizes_h ? sizes_h[s] : n;
    cudaMemcpy2D(x, sizeof(double), xs + se_tridiag_index(lay, n, count, s, 0),
                 stride * sizeof(double), sizeof(double), (size_t)n, cudaMemcpyDeviceToHost);
    for (int j = 0; j < ns; j++) {
      double a, b, cc, d;
      se_tridiag_random_row(seed, (uint64_t)s, j, ns, &a, &b, &cc, &d);
      const double den = b - (j ? a * cp[j - 1] : 0.0);
      cp[j] = cc / den;
      ref[j] = (d - (j ? a * ref[j - 1] : 0.0)) / den;
    }
    for (int j = ns - 2; j >= 0; j--)
      ref[j] -= cp[j] * ref[j + 1];
    double diff = 0.0, norm = 0.0;
    for (int j = 0; j < ns; j++) {
      const double e = fabs(x[j] - ref[j]);
      diff = (e > diff || isnan(e)) ? e : diff;
      norm = fabs(ref[j]) > norm ? fabs(ref[j]) : norm;
    }
    const double rel = diff / norm;
    if (!(rel <= worst))
      worst = rel;
  }
  free(x);
  free(ref);
  free(cp);
  return worst;
}

typedef struct tri_result {
  char name[48], config[64];
  double time_s, err;
  int reps, ok;
} tri_result;

static tri_result run_tri(tri_ctx *c, const se_tridiag_options *opt, const char *name,
                          const int *sizes_d, const int *sizes_h, uint64_t seed,
                          double min_time) {
  tri_result r = {0};
  snprintf(r.name, sizeof r.name, "%s", name);
  se_error err = {0};
  if (se_tridiag_create(opt, c->n, c->count, sizes_d, c->stream, &c->t, &err) != SE_OK) {
    snprintf(r.config, sizeof r.config, "failed");
    fprintf(stderr, "simengine-bench: %s: %s\n", name, err.message);
    return r;
  }
  se_tridiag_describe(c->t, r.config, sizeof r.config);
  c->layout = se_tridiag_layout(c->t);
  c->lbytes = se_tridiag_storage(c->layout, c->n, c->count) * sizeof(double);
  if (c->layout != SE_TRIDIAG_LAYOUT_INTERLEAVED) /* the solver's layout, made untimed */
    for (int i = 0; i < 4; i++)
      if (se_tridiag_relayout(c->n, c->count, 0, c->layout, c->p[i], c->lp[i], c->stream, &err) !=
          SE_OK) {
        fprintf(stderr, "simengine-bench: %s\n", err.message);
        exit(1);
      }
  if (se_bench_time_solve(c->stream, min_time, 2, 5, 2000, tri_restore, tri_solve, c, &r.time_s,
                          &r.reps, &err) != SE_OK) {
    fprintf(stderr, "simengine-bench: %s (%s) n=%d count=%d: %s\n", name, r.config, c->n,
            c->count, err.message);
    snprintf(r.config + strlen(r.config), sizeof r.config - strlen(r.config), " failed");
  } else {
    r.err = tri_verify(c, sizes_h, seed);
    r.ok = 1;
  }
  se_tridiag_destroy(c->t);
  c->t = NULL;
  cudaGetLastError();
  return r;
}

static void print_tri(const tri_ctx *c, const tri_result *r, double rows_total, double best_sp,
                      const char *section) {
  if (!r->ok) {
    printf("%5d %7d  %-21s %-40s   failed\n", c->n, c->count, r->name, r->config);
    return;
  }
  const double gbps = 40.0 * rows_total / r->time_s / 1e9;
  const double speedup = best_sp > 0 ? best_sp / r->time_s : 0.0;
  printf("%5d %7d  %-21s %-40s %10.1f %8.1f %5.0f%% %7.2fx %9.1e\n", c->n, c->count, r->name,
         r->config, 1e6 * r->time_s, gbps, 100.0 * gbps / copy_gbps, speedup, r->err);
  fflush(stdout);
  csv_row(section, c->n, c->count, r->name, r->config, r->time_s, 1e9 * r->time_s / rows_total,
          gbps, speedup, 0.0, r->err, r->reps);
}

static int bench_tri_shape(int n, int count, const bench_opts *o, cudaStream_t stream) {
  tri_ctx c = {.n = n, .count = count, .stream = stream};
  c.bytes = (size_t)n * (size_t)count * sizeof(double);
  /* own-layout arrays: room for block-interleaved layouts of up to 64 systems per block */
  const size_t lcap = se_tridiag_storage(64, n, count) * sizeof(double);
  se_error err = {0};
  for (int i = 0; i < 4; i++) {
    double **arr[4] = {&c.p[i], &c.w[i], &c.lp[i], &c.lw[i]};
    for (int k = 0; k < 4; k++)
      if (cudaMalloc((void **)arr[k], k < 2 ? c.bytes : lcap) != cudaSuccess ||
          (k >= 2 && cudaMemset(*arr[k], 0, lcap) != cudaSuccess)) {
        fprintf(stderr, "simengine-bench: no device memory for %d x %d rows\n", count, n);
        return 1;
      }
  }
  const uint64_t seed = 0x5EEDull + (uint64_t)n * 1000003u + (uint64_t)count;
  if (se_tridiag_fill_random(n, count, NULL, seed, 0, c.p[0], c.p[1], c.p[2], c.p[3], stream,
                             &err) != SE_OK) {
    fprintf(stderr, "simengine-bench: %s\n", err.message);
    return 1;
  }
  cudaStreamSynchronize(stream);
  const double rows_total = (double)n * count;
  /* the peers first: the best of them is the reference of every speed-up */
  static const se_tridiag_method peers[4] = {SE_TRIDIAG_CUSPARSE_THOMAS, SE_TRIDIAG_CUSPARSE_LU,
                                             SE_TRIDIAG_CUSPARSE_QR, SE_TRIDIAG_CUSPARSE_STRIDED};
  static const char *peer_names[4] = {"cusparse-il-a0", "cusparse-il-a1", "cusparse-il-a2",
                                      "cusparse-strided"};
  tri_result pr[4];
  double best_sp = 0.0;
  for (int k = 0; k < 4; k++) {
    se_tridiag_options opt = {.method = peers[k]};
    pr[k] = run_tri(&c, &opt, peer_names[k], NULL, NULL, seed, o->min_time);
    if (pr[k].ok && (best_sp == 0.0 || pr[k].time_s < best_sp))
      best_sp = pr[k].time_s;
  }
  for (int k = 0; k < 4; k++)
    print_tri(&c, &pr[k], rows_total, best_sp, "tridiag");
  static const se_tridiag_method ours[3] = {SE_TRIDIAG_AUTO, SE_TRIDIAG_THOMAS,
                                            SE_TRIDIAG_THOMAS_REG};
  static const char *our_names[3] = {"ours", "cuThomasBatch", "thomas-reg"};
  for (int k = 0; k < 3; k++) {
    se_tridiag_options opt = {.method = ours[k]};
    tri_result r = run_tri(&c, &opt, our_names[k], NULL, NULL, seed, o->min_time);
    print_tri(&c, &r, rows_total, best_sp, "tridiag");
  }
  { /* ours on its block-interleaved layout (made from the same data, untimed) */
    se_tridiag_options opt = {.method = SE_TRIDIAG_AUTO,
                              .block_size = se_tridiag_block_size(n, count)};
    tri_result r = run_tri(&c, &opt, "ours-blocked", NULL, NULL, seed, o->min_time);
    print_tri(&c, &r, rows_total, best_sp, "tridiag");
  }
  if (o->sweep) {
    static const int Ms[3] = {4, 8, 16}, targets[3] = {64, 128, 256};
    for (int im = 0; im < 3; im++) {
      const int K = (n + Ms[im] - 1) / Ms[im];
      int last_g = -1;
      for (int it = 0; it < 3; it++) {
        int g = 1;
        while (2 * g * K <= targets[it])
          g *= 2;
        if (g * K > 256 || g == last_g)
          continue;
        last_g = g;
        for (int red = SE_TRIDIAG_REDUCED_PCR; red <= SE_TRIDIAG_REDUCED_THOMAS; red++) {
          se_tridiag_options opt = {.method = SE_TRIDIAG_PART, .rows_per_thread = Ms[im],
                                    .systems_per_block = g, .reduced = red, .pipeline = 1};
          tri_result r = run_tri(&c, &opt, "sweep", NULL, NULL, seed, o->min_time);
          print_tri(&c, &r, rows_total, best_sp, "sweep");
        }
        /* persistent blocks staging the next group in shared memory: M 8 and 16, PCR */
        if (im > 0) {
          se_tridiag_options opt = {.method = SE_TRIDIAG_PART, .rows_per_thread = Ms[im],
                                    .systems_per_block = g, .pipeline = 2};
          tri_result r = run_tri(&c, &opt, "sweep-pipe", NULL, NULL, seed, o->min_time);
          print_tri(&c, &r, rows_total, best_sp, "sweep");
        }
      }
    }
    /* each system in two halves (persistent, staged): M 8 and 16, 64 .. 256 threads */
    for (int im = 1; im < 3; im++)
      for (int g = 4; g <= 32; g *= 2) {
        const int K = (n + Ms[im] - 1) / Ms[im], Kh = (K + 1) / 2;
        if (K < 2 || g * Kh > 256 || g * Kh < 64)
          continue;
        se_tridiag_options opt = {.method = SE_TRIDIAG_PART, .rows_per_thread = Ms[im],
                                  .systems_per_block = g, .pipeline = 3};
        tri_result r = run_tri(&c, &opt, "sweep-split", NULL, NULL, seed, o->min_time);
        print_tri(&c, &r, rows_total, best_sp, "sweep");
      }
    static const char *blocked_names[3] = {"sweep-blocked", "sweep-pipe-blocked",
                                           "sweep-split-blocked"};
    for (int pipe = 1; pipe <= 3; pipe++) /* block-interleaved: M 8 and 16, B 2 .. 32, PCR */
      for (int im = 1; im < 3; im++)
        for (int B = 2; B <= 32; B *= 2) {
          const int K = (n + Ms[im] - 1) / Ms[im], Kb = pipe == 3 ? (K + 1) / 2 : K;
          if (B * Kb > 256 || (pipe == 3 && K < 2))
            continue;
          se_tridiag_options opt = {.method = SE_TRIDIAG_PART, .rows_per_thread = Ms[im],
                                    .block_size = B, .reduced = SE_TRIDIAG_REDUCED_PCR,
                                    .pipeline = pipe};
          tri_result r = run_tri(&c, &opt, blocked_names[pipe - 1], NULL, NULL, seed,
                                 o->min_time);
          print_tri(&c, &r, rows_total, best_sp, "sweep");
        }
  }
  if (o->vbatch) {
    /* cuThomasVBatch: sizes uniform in [n/2, n] */
    int *sizes_h = xcalloc((size_t)count, sizeof(int)), *sizes_d = NULL;
    double real_rows = 0.0;
    for (int s = 0; s < count; s++) {
      sizes_h[s] = n / 2 + (int)(se_mix64(seed + (uint64_t)s) % (uint64_t)(n - n / 2 + 1));
      real_rows += sizes_h[s];
    }
    if (cudaMalloc((void **)&sizes_d, (size_t)count * sizeof(int)) != cudaSuccess ||
        cudaMemcpy(sizes_d, sizes_h, (size_t)count * sizeof(int), cudaMemcpyHostToDevice) !=
            cudaSuccess ||
        se_tridiag_fill_random(n, count, sizes_d, seed, 0, c.p[0], c.p[1], c.p[2], c.p[3], stream,
                               &err) != SE_OK) {
      fprintf(stderr, "simengine-bench: variable sizes: %s\n", err.message);
      return 1;
    }
    static const se_tridiag_method vm[3] = {SE_TRIDIAG_THOMAS, SE_TRIDIAG_AUTO, SE_TRIDIAG_AUTO};
    static const char *vnames[3][2] = {{"vbatch-ncp", "vbatch-cp"},
                                       {"ours-ncp", "ours-cp"},
                                       {"ours-blocked-ncp", "ours-blocked-cp"}};
    for (int k = 0; k < 3; k++)
      for (int cp = 0; cp < 2; cp++) {
        se_tridiag_options opt = {.method = vm[k], .compute_padding = cp,
                                  .block_size = k == 2 ? se_tridiag_block_size(n, count) : 0};
        tri_result r = run_tri(&c, &opt, vnames[k][cp], sizes_d, sizes_h, seed, o->min_time);
        print_tri(&c, &r, real_rows, best_sp, "vbatch");
      }
    cudaFree(sizes_d);
    free(sizes_h);
  }
  for (int i = 0; i < 4; i++) {
    cudaFree(c.p[i]);
    cudaFree(c.w[i]);
    cudaFree(c.lp[i]);
    cudaFree(c.lw[i]);
  }
  return 0;
}

/* ---- multi-morphology Hines -------------------------------------------------------------- */

static const char *classes[6] = {"small-low",   "small-high", "medium-low",
                                 "medium-high", "big-low",    "big-high"};

typedef struct hines_ctx {
  cudaStream_t stream;
  size_t bytes;
  double *d0, *r0, *d, *r;
  se_hines_branch_plan *plan;
  se_hines_branch_mode mode;
  se_hines_monoref *mono;
} hines_ctx;

static int hines_restore(void *vctx, se_error *err) {
  hines_ctx *h = vctx;
  SE_CUDA_CHECK(err, cudaMemcpyAsync(h->d, h->d0, h->bytes, cudaMemcpyDeviceToDevice, h->stream));
  SE_CUDA_CHECK(err, cudaMemcpyAsync(h->r, h->r0, h->bytes, cudaMemcpyDeviceToDevice, h->stream));
  return SE_OK;
}

static int hines_solve(void *vctx, se_error *err) {
  hines_ctx *h = vctx;
  if (h->mono)
    return se_hines_monoref_solve(h->mono, h->d, h->r, err);
  return se_hines_branch_solve(h->plan, h->d, h->r, &h->mode, err);
}

/* The CPU sweep of src/neurons_cpu.c on one cell. */
static void cpu_hines(int64_t n, const int32_t *parent, const double *g, double *d, double *r) {
  for (int64_t i = n - 1; i > 0; i--) {
    const double f = g[i] / d[i];
    d[parent[i]] -= f * g[i];
    r[parent[i]] += f * r[i];
  }
  r[0] /= d[0];
  for (int64_t i = 1; i < n; i++)
    r[i] = (r[i] + g[i] * r[parent[i]]) / d[i];
}


/* Diagonally dominant values of a cell: g in [0.05, 1) to the parent, d = C + couplings. */
static void cell_values(int64_t n, const int32_t *parent, uint64_t *rng, double *g, double *d,
                        double *r) {
  for (int64_t i = 0; i < n; i++) {
    g[i] = i ? 0.05 + 0.95 * se_rand_counter_u01(rng) : 0.0;
    d[i] = 0.1 + 1.9 * se_rand_counter_u01(rng);
    r[i] = 2.0 * se_rand_counter_u01(rng) - 1.0;
  }
  for (int64_t i = 1; i < n; i++) {
    d[i] += g[i];
    d[parent[i]] += g[i];
  }
}

/* Uploads slot-ordered copies of d, r (pristine and work) into h. */
static int hines_upload(hines_ctx *h, int64_t S, const double *hd, const double *hr) {
  h->bytes = (size_t)S * sizeof(double);
  double **arr[4] = {&h->d0, &h->r0, &h->d, &h->r};
  for (int k = 0; k < 4; k++)
    if (cudaMalloc((void **)arr[k], h->bytes) != cudaSuccess) {
      fprintf(stderr, "simengine-bench: no device memory for %lld slots\n", (long long)S);
      return 1;
    }
  if (cudaMemcpy(h->d0, hd, h->bytes, cudaMemcpyHostToDevice) != cudaSuccess ||
      cudaMemcpy(h->r0, hr, h->bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
    fprintf(stderr, "simengine-bench: upload failed\n");
    return 1;
  }
  return 0;
}

static void hines_free(hines_ctx *h) {
  cudaFree(h->d0);
  cudaFree(h->r0);
  cudaFree(h->d);
  cudaFree(h->r);
  h->d0 = h->r0 = h->d = h->r = NULL;
}

static void print_hines(long long neurons, long long C, const char *variant, const char *config,
                        double t, double mono_t, double err, int reps) {
  const double ns = 1e9 * t / (double)C;
  printf("%8lld %10lld  %-24s %-34s %10.1f %8.3f %7.2fx %9.1e\n", neurons, C, variant, config,
         1e6 * t, ns, mono_t > 0 ? t / mono_t : 0.0, err);
  fflush(stdout);
  csv_row("hines", neurons, C, variant, config, t, ns, 0.0, 0.0, mono_t > 0 ? t / mono_t : 0.0,
          err, reps);
}

static int bench_hines_population(long long N, const bench_opts *o, cudaStream_t stream) {
  se_error err = {0};
  /* every neuron a different shape: class i % 6, seed 1 + i / 6 */
  int64_t *offsets = xcalloc((size_t)N + 1, sizeof(int64_t));
  int64_t C = 0;
  for (long long i = 0; i < N; i++) {
    static const int32_t sizes[6] = {76, 76, 305, 319, 695, 691};
    offsets[i] = C;
    C += sizes[i % 6];
  }
  offsets[N] = C;
  int32_t *parent = xcalloc((size_t)C, sizeof(int32_t));
  for (long long i = 0; i < N; i++) {
    se_morphology m;
    if (se_morphology_synthetic(classes[i % 6], 1 + (uint64_t)(i / 6), &m, &err) != SE_OK) {
      fprintf(stderr, "simengine-bench: %s\n", err.message);
      return 1;
    }
    if (m.n_compartments != offsets[i + 1] - offsets[i]) {
      fprintf(stderr, "simengine-bench: class %s has %d compartments\n", classes[i % 6],
              m.n_compartments);
      return 1;
    }
    memcpy(parent + offsets[i], m.parent, (size_t)m.n_compartments * sizeof(int32_t));
    se_morphology_free(&m);
  }
  double *g = xcalloc((size_t)C, sizeof(double)), *d = xcalloc((size_t)C, sizeof(double));
  double *r = xcalloc((size_t)C, sizeof(double)), *ref = xcalloc((size_t)C, sizeof(double));
  double *dref = xcalloc((size_t)C, sizeof(double)), *x = xcalloc((size_t)C, sizeof(double));
  uint64_t rng = 2024;
  for (long long i = 0; i < N; i++)
    cell_values(offsets[i + 1] - offsets[i], parent + offsets[i], &rng, g + offsets[i],
                d + offsets[i], r + offsets[i]);
  memcpy(ref, r, (size_t)C * sizeof(double));
  memcpy(dref, d, (size_t)C * sizeof(double));
  for (long long i = 0; i < N; i++)
    cpu_hines(offsets[i + 1] - offsets[i], parent + offsets[i], g + offsets[i], dref + offsets[i],
              ref + offsets[i]);

  /* mono-morphology reference: the six class shapes of seed 1, cell i of class i % 6 */
  double mono_t = 0.0;
  {
    int64_t moff[7] = {0};
    int32_t *mpar = NULL;
    for (int k = 0; k < 6; k++) {
      se_morphology m;
      if (se_morphology_synthetic(classes[k], 1, &m, &err) != SE_OK) {
        fprintf(stderr, "simengine-bench: %s\n", err.message);
        return 1;
      }
      moff[k + 1] = moff[k] + m.n_compartments;
      mpar = realloc(mpar, (size_t)moff[k + 1] * sizeof(int32_t));
      if (!mpar)
        return 1;
      memcpy(mpar + moff[k], m.parent, (size_t)m.n_compartments * sizeof(int32_t));
      se_morphology_free(&m);
    }
    double *mg = xcalloc((size_t)moff[6], sizeof(double)), *tmpd = xcalloc((size_t)moff[6], 8),
           *tmpr = xcalloc((size_t)moff[6], 8);
    uint64_t mrng = 7;
    for (int k = 0; k < 6; k++)
      cell_values(moff[k + 1] - moff[k], mpar + moff[k], &mrng, mg + moff[k], tmpd + moff[k],
                  tmpr + moff[k]);
    int32_t *cell_morph = xcalloc((size_t)N, sizeof(int32_t));
    for (long long i = 0; i < N; i++)
      cell_morph[i] = (int32_t)(i % 6);
    se_hines_monoref *mono = NULL;
    if (se_hines_monoref_create(6, moff, mpar, mg, N, cell_morph, stream, &mono, &err) != SE_OK) {
      fprintf(stderr, "simengine-bench: %s\n", err.message);
      return 1;
    }
    const int64_t S = se_hines_monoref_slots(mono);
    double *hd = xcalloc((size_t)S, sizeof(double)), *hr = xcalloc((size_t)S, sizeof(double));
    for (int64_t k = 0; k < S; k++)
      hd[k] = 1.0;
    uint64_t vr = 99;
    for (long long i = 0; i < N; i++) {
      const int k = (int)(i % 6);
      for (int64_t j = 0; j < moff[k + 1] - moff[k]; j++) {
        const int64_t s = se_hines_monoref_slot(mono, i, (int32_t)j);
        hd[s] = tmpd[moff[k] + j] * (1.0 + 0.5 * se_rand_counter_u01(&vr));
        hr[s] = 2.0 * se_rand_counter_u01(&vr) - 1.0;
      }
    }
    hines_ctx h = {.stream = stream, .mono = mono};
    if (hines_upload(&h, S, hd, hr))
      return 1;
    int reps = 0;
    double merr = NAN;
    if (se_bench_time_solve(stream, o->min_time, 2, 5, 2000, hines_restore, hines_solve, &h,
                            &mono_t, &reps, &err) != SE_OK) {
      fprintf(stderr, "simengine-bench: mono: %s\n", err.message);
      mono_t = 0.0;
    } else {
      /* check 64 cells against the CPU */
      double *xs = xcalloc((size_t)S, sizeof(double)), *d1 = xcalloc(700, 8), *r1 = xcalloc(700, 8);
      cudaMemcpy(xs, h.r, h.bytes, cudaMemcpyDeviceToHost);
      merr = 0.0;
      for (int q = 0; q < 64; q++) {
        const long long i = (long long)q * (N - 1) / 63;
        const int k = (int)(i % 6);
        const int64_t n = moff[k + 1] - moff[k];
        for (int64_t j = 0; j < n; j++) {
          d1[j] = hd[se_hines_monoref_slot(mono, i, (int32_t)j)];
          r1[j] = hr[se_hines_monoref_slot(mono, i, (int32_t)j)];
        }
        cpu_hines(n, mpar + moff[k], mg + moff[k], d1, r1);
        double diff = 0.0, norm = 0.0;
        for (int64_t j = 0; j < n; j++) {
          const double e = fabs(xs[se_hines_monoref_slot(mono, i, (int32_t)j)] - r1[j]);
          diff = (e > diff || isnan(e)) ? e : diff;
          norm = fabs(r1[j]) > norm ? fabs(r1[j]) : norm;
        }
        if (!(diff / norm <= merr))
          merr = diff / norm;
      }
      free(xs);
      free(d1);
      free(r1);
    }
    print_hines(N, C, "mono-reference", "6 shapes, 32-lane groups", mono_t, mono_t, merr, reps);
    hines_free(&h);
    se_hines_monoref_destroy(mono);
    free(hd);
    free(hr);
    free(mg);
    free(tmpd);
    free(tmpr);
    free(mpar);
    free(cell_morph);
  }

  for (int sort = 1; sort >= 0; sort--) {
    if (!sort && N > o->unsorted_max)
      continue;
    const double t0 = se_bench_now();
    se_hines_branch_plan *plan = NULL;
    if (se_hines_branch_plan_create(N, offsets, parent, sort, stream, &plan, &err) != SE_OK ||
        se_hines_branch_set_coupling(plan, g, &err) != SE_OK) {
      fprintf(stderr, "simengine-bench: plan: %s\n", err.message);
      return 1;
    }
    const double plan_s = se_bench_now() - t0;
    se_hines_branch_stats st;
    se_hines_branch_plan_stats(plan, &st);
    const int64_t S = st.slots;
    const int32_t *slot = se_hines_branch_slot_map(plan);
    double *hd = xcalloc((size_t)S, sizeof(double)), *hr = xcalloc((size_t)S, sizeof(double));
    for (int64_t k = 0; k < S; k++)
      hd[k] = 1.0;
    for (int64_t i = 0; i < C; i++) {
      hd[slot[i]] = d[i];
      hr[slot[i]] = r[i];
    }
    hines_ctx h = {.stream = stream, .plan = plan};
    if (hines_upload(&h, S, hd, hr))
      return 1;
    char config[96];
    snprintf(config, sizeof config, "%s L=%d B=%lld pad=%.1f%% plan=%.2fs",
             sort ? "sorted" : "unsorted", st.levels, (long long)st.branches,
             100.0 * (double)(S - C) / (double)S, plan_s);
    double *xs = xcalloc((size_t)S, sizeof(double));
    /* 0-3: our kernels (CP/NCP x exact/fast); 4-6: the cuSPARSE backend, algorithms 0-2
     * (sorted plans only; its level batches do not depend on the order) */
    static const char *cus_variant[] = {"", "cusparse-thomas", "cusparse-lu", "cusparse-qr"};
    char cus_config[96];
    snprintf(cus_config, sizeof cus_config, "sorted, level batches %.2fx rows x 2",
             (double)st.cusparse_rows / (double)C);
    for (int mi = 0; mi < (sort ? 7 : 4); mi++) {
      h.mode = (se_hines_branch_mode){.compute_padding = mi < 4 && !(mi & 1),
                                      .exact = mi < 4 && !(mi & 2),
                                      .use_graph = 1,
                                      .backend = mi < 4 ? 0 : mi - 3};
      char variant[48];
      if (h.mode.backend)
        snprintf(variant, sizeof variant, "%s", cus_variant[h.mode.backend]);
      else
        snprintf(variant, sizeof variant, "branch-%s-%s", h.mode.compute_padding ? "cp" : "ncp",
                 h.mode.exact ? "exact" : "fast");
      double t = 0.0, e = NAN;
      int reps = 0;
      int rc = se_bench_time_solve(stream, o->min_time, 2, 5, 2000, hines_restore, hines_solve, &h,
                                   &t, &reps, &err);
      if (rc != SE_OK && h.mode.backend) { /* e.g. a cuSPARSE routine that cannot be captured */
        fprintf(stderr, "simengine-bench: %s with a graph: %s; again without\n", variant,
                err.message);
        h.mode.use_graph = 0;
        strncat(variant, "-direct", sizeof variant - strlen(variant) - 1);
        rc = se_bench_time_solve(stream, o->min_time, 2, 5, 2000, hines_restore, hines_solve, &h,
                                 &t, &reps, &err);
      }
      if (rc != SE_OK) {
        fprintf(stderr, "simengine-bench: %s: %s\n", variant, err.message);
        continue;
      }
      cudaMemcpy(xs, h.r, h.bytes, cudaMemcpyDeviceToHost);
      for (int64_t i = 0; i < C; i++)
        x[i] = xs[slot[i]];
      e = 0.0;
      for (long long i = 0; i < N; i++) {
        double diff = 0.0, norm = 0.0;
        for (int64_t j = offsets[i]; j < offsets[i + 1]; j++) {
          const double ee = fabs(x[j] - ref[j]);
          diff = (ee > diff || isnan(ee)) ? ee : diff;
          norm = fabs(ref[j]) > norm ? fabs(ref[j]) : norm;
        }
        if (!(diff / norm <= e))
          e = diff / norm;
      }
      print_hines(N, C, variant, h.mode.backend ? cus_config : config, t, mono_t, e, reps);
    }
    free(xs);
    free(hd);
    free(hr);
    hines_free(&h);
    se_hines_branch_plan_destroy(plan);
  }
  free(offsets);
  free(parent);
  free(g);
  free(d);
  free(r);
  free(ref);
  free(dref);
  free(x);
  return 0;
}

int se_bench_tridiag(int argc, char **argv) {
  bench_opts o = {.rows = "64,128,256,512",
                  .systems = "2560,25600,256000",
                  .neurons = "2560,25600,256000",
                  .unsorted_max = 25600,
                  .vbatch = 1,
                  .min_time = 0.2};
  int no_vbatch = 0;
  const se_bench_opt opts[] = {{"--rows", SE_BENCH_STRING, &o.rows},
                               {"--systems", SE_BENCH_STRING, &o.systems},
                               {"--neurons", SE_BENCH_STRING, &o.neurons},
                               {"--unsorted-max", SE_BENCH_INT, &o.unsorted_max},
                               {"--sweep", SE_BENCH_FLAG, &o.sweep},
                               {"--no-vbatch", SE_BENCH_FLAG, &no_vbatch},
                               {"--min-time", SE_BENCH_DOUBLE, &o.min_time},
                               {"--csv", SE_BENCH_STRING, &o.csv_path}};
  const int parsed = se_bench_parse(argc, argv, "tridiag", usage, opts, sizeof opts / sizeof opts[0]);
  if (parsed >= 0)
    return parsed;
  o.vbatch = !no_vbatch;
  long long rows[16], systems[16], neurons[16];
  const int nr = se_bench_parse_list(o.rows, rows, 16);
  const int ns = se_bench_parse_list(o.systems, systems, 16);
  const int nn = se_bench_parse_list(o.neurons, neurons, 16);
  for (int k = 0; k < nr; k++)
    if (rows[k] < 3 || rows[k] > 1000000) {
      fprintf(stderr, "simengine-bench: --rows %lld out of range (3 .. 1000000)\n", rows[k]);
      return 2;
    }
  for (int k = 0; k < ns; k++)
    if (systems[k] < 1 || systems[k] > 100000000) {
      fprintf(stderr, "simengine-bench: --systems %lld out of range\n", systems[k]);
      return 2;
    }
  if (se_cuda_device_count() == 0) {
    printf("simengine-bench tridiag: skipped: no GPU\n");
    return 0;
  }
  if (o.csv_path && !(csv = fopen(o.csv_path, "w"))) {
    fprintf(stderr, "simengine-bench: cannot write '%s'\n", o.csv_path);
    return 1;
  }
  se_error err = {0};
  struct cudaDeviceProp prop;
  int dev = 0;
  cudaGetDevice(&dev);
  cudaGetDeviceProperties(&prop, dev);
  double bw = 0.0;
  if (se_cuda_copy_bandwidth((size_t)2 << 30, &bw, &err) != SE_OK) {
    fprintf(stderr, "simengine-bench: %s\n", err.message);
    return 1;
  }
  copy_gbps = bw / 1e9;
  printf("device %s, %d SMs, L2 %d MB; device copy bandwidth (cudaMemcpy of 2 GiB, read + "
         "write): %.0f GB/s\n\n",
         prop.name, prop.multiProcessorCount, prop.l2CacheSize >> 20, copy_gbps);
  if (csv)
    fprintf(csv, "section,rows,systems,method,config,time_us,ns_per_unit,gbps_40B,frac_copy,"
                 "speedup_vs_best_cusparse,ratio_to_mono,max_rel_err,reps\n");
  cudaStream_t stream;
  if (cudaStreamCreate(&stream) != cudaSuccess) {
    fprintf(stderr, "simengine-bench: cudaStreamCreate failed\n");
    return 1;
  }
  if (nr > 0 && ns > 0) {
    printf("%5s %7s  %-21s %-40s %10s %8s %6s %8s %9s\n", "rows", "systems", "method", "config",
           "time us", "GB/s@40B", "%copy", "vs best", "rel err");
    for (int a = 0; a < nr; a++)
      for (int b = 0; b < ns; b++)
        if (bench_tri_shape((int)rows[a], (int)systems[b], &o, stream))
          return 1;
    printf("\n");
  }
  if (nn > 0 && neurons[0] > 0) {
    printf("%8s %10s  %-24s %-34s %10s %8s %8s %9s\n", "neurons", "comps", "variant", "plan",
           "time us", "ns/comp", "vs mono", "rel err");
    for (int k = 0; k < nn; k++)
      if (neurons[k] > 0 && bench_hines_population(neurons[k], &o, stream))
        return 1;
  }
  cudaStreamDestroy(stream);
  if (csv)
    fclose(csv);
  return 0;
}
#endif
