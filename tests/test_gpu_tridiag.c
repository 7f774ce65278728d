/* GPU batched tridiagonal solvers (ours and the cuSPARSE wrappers) against a CPU Thomas, on
 * random strictly diagonally dominant batches of 64 .. 512 rows, counts that are not multiples of
 * any block size, and variable sizes (CP and NCP); and the branch-level multi-morphology Hines
 * solve (plus the mono-morphology reference kernel) against a CPU Hines sweep over parent[] on a
 * mixed population: the six synthetic classes, every SWC of data/morphologies (default
 * discretization) and random trees, with our level kernels and with the cuSPARSE backend
 * (gtsvInterleavedBatch per level, algorithms 0-2). Tolerance: 1e-12 relative (max-norm per
 * system / cell). The exact Hines mode must also be bitwise equal to the CPU (same operations in
 * the same order).
 *
 *   test_gpu_tridiag [MORPHOLOGY_DIR]          the tests (exit 77 without a GPU)
 * Timings: simengine-bench tridiag (src/bench_tridiag.c). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "se_test.h"

#ifdef SIMENGINE_HAVE_CUDA
#include "hines_branch.h"
#include "se_cuda.h"
#include "se_test_swc.h"
#include "swc.h"
#include "tridiag_batch.h"

static const double TOL = 1e-12;

#define CHECK_CUDA(call)                                                                        \
  do {                                                                                          \
    cudaError_t rc_ = (call);                                                                   \
    if (rc_ != cudaSuccess) {                                                                   \
      fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,                      \
              cudaGetErrorString(rc_));                                                         \
      exit(1);                                                                                  \
    }                                                                                           \
  } while (0)

static void *xmalloc(size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  if (!p) {
    fprintf(stderr, "out of memory (%zu bytes)\n", bytes);
    exit(1);
  }
  return p;
}

static uint64_t rng_next(uint64_t *s) { return se_mix64((*s)++); }
static double rng_uniform(uint64_t *s, double lo, double hi) {
  return lo + (hi - lo) * se_rand_unit(rng_next(s));
}

/* ---- tridiagonal batches ----------------------------------------------------------------- */

/* CPU Thomas on system s of an interleaved batch (rows 0 .. ns-1), into x (ns values). */
static void cpu_thomas(int count, int s, int ns, const double *a, const double *b, const double *c,
                       const double *d, double *x, double *cp) {
  for (int j = 0; j < ns; j++) {
    const size_t o = (size_t)j * count + s;
    const double aj = j ? a[o] : 0.0, cj = j < ns - 1 ? c[o] : 0.0;
    const double den = b[o] - (j ? aj * cp[j - 1] : 0.0);
    cp[j] = cj / den;
    x[j] = (d[o] - (j ? aj * x[j - 1] : 0.0)) / den;
  }
  for (int j = ns - 2; j >= 0; j--)
    x[j] -= cp[j] * x[j + 1];
}

typedef struct batch {
  int n, count;
  int *sizes_h, *sizes_d; /* NULL for fixed sizes */
  double *a0, *b0, *c0, *x0; /* device, pristine, interleaved */
  double *a, *b, *c, *x;     /* device, work */
  double *ha, *hb, *hc, *hx; /* host copies of the pristine arrays */
  double *ref;               /* host reference solution, interleaved */
} batch;

static void batch_create(batch *bt, int n, int count, const int *sizes, uint64_t seed) {
  memset(bt, 0, sizeof *bt);
  bt->n = n;
  bt->count = count;
  const size_t N = (size_t)n * count, bytes = N * sizeof(double);
  double **dev[8] = {&bt->a0, &bt->b0, &bt->c0, &bt->x0, &bt->a, &bt->b, &bt->c, &bt->x};
  for (int i = 0; i < 8; i++)
    CHECK_CUDA(cudaMalloc((void **)dev[i], bytes));
  if (sizes) {
    bt->sizes_h = xmalloc((size_t)count * sizeof(int));
    memcpy(bt->sizes_h, sizes, (size_t)count * sizeof(int));
    CHECK_CUDA(cudaMalloc((void **)&bt->sizes_d, (size_t)count * sizeof(int)));
    CHECK_CUDA(cudaMemcpy(bt->sizes_d, sizes, (size_t)count * sizeof(int), cudaMemcpyHostToDevice));
  }
  se_error err = {0};
  if (se_tridiag_fill_random(n, count, bt->sizes_d, seed, 0, bt->a0, bt->b0, bt->c0, bt->x0, 0,
                             &err) != SE_OK) {
    fprintf(stderr, "%s\n", err.message);
    exit(1);
  }
  CHECK_CUDA(cudaDeviceSynchronize());
  double **host[4] = {&bt->ha, &bt->hb, &bt->hc, &bt->hx};
  double *src[4] = {bt->a0, bt->b0, bt->c0, bt->x0};
  for (int i = 0; i < 4; i++) {
    *host[i] = xmalloc(bytes);
    CHECK_CUDA(cudaMemcpy(*host[i], src[i], bytes, cudaMemcpyDeviceToHost));
  }
  bt->ref = xmalloc(bytes);
  double *xs = xmalloc((size_t)n * sizeof(double)), *cp = xmalloc((size_t)n * sizeof(double));
  for (int s = 0; s < count; s++) {
    const int ns = sizes ? sizes[s] : n;
    cpu_thomas(count, s, ns, bt->ha, bt->hb, bt->hc, bt->hx, xs, cp);
    for (int j = 0; j < n; j++)
      bt->ref[(size_t)j * count + s] = j < ns ? xs[j] : 0.0;
  }
  free(xs);
  free(cp);
}

static void batch_free(batch *bt) {
  double *dev[8] = {bt->a0, bt->b0, bt->c0, bt->x0, bt->a, bt->b, bt->c, bt->x};
  for (int i = 0; i < 8; i++)
    cudaFree(dev[i]);
  cudaFree(bt->sizes_d);
  free(bt->sizes_h);
  free(bt->ha);
  free(bt->hb);
  free(bt->hc);
  free(bt->hx);
  free(bt->ref);
}

/* Solves the batch with opt and checks the solution against the CPU Thomas; returns the largest
 * relative error (max-norm per system), or INFINITY when the solver failed. */
static double check_solver(se_test_state *st, batch *bt, const se_tridiag_options *opt,
                           char *desc, size_t desc_size) {
  const int n = bt->n, count = bt->count;
  const size_t N = (size_t)n * count, bytes = N * sizeof(double);
  se_error err = {0};
  se_tridiag *t = NULL;
  if (se_tridiag_create(opt, n, count, bt->sizes_d, 0, &t, &err) != SE_OK) {
    snprintf(desc, desc_size, "%s", se_tridiag_method_name(opt->method));
    SE_EXPECT(st, 0, "create %s n=%d count=%d: %s", desc, n, count, err.message);
    return INFINITY;
  }
  se_tridiag_describe(t, desc, desc_size);
  const int layout = se_tridiag_layout(t);
  CHECK_CUDA(cudaMemcpy(bt->a, bt->a0, bytes, cudaMemcpyDeviceToDevice));
  CHECK_CUDA(cudaMemcpy(bt->b, bt->b0, bytes, cudaMemcpyDeviceToDevice));
  CHECK_CUDA(cudaMemcpy(bt->c, bt->c0, bytes, cudaMemcpyDeviceToDevice));
  CHECK_CUDA(cudaMemcpy(bt->x, bt->x0, bytes, cudaMemcpyDeviceToDevice));
  int rc = SE_OK;
  if (layout != SE_TRIDIAG_LAYOUT_INTERLEAVED) {
    /* the solver's own layout: copies made from the interleaved arrays and back */
    const size_t lbytes = se_tridiag_storage(layout, n, count) * sizeof(double);
    double *src[4] = {bt->a, bt->b, bt->c, bt->x}, *dst[4];
    for (int i = 0; i < 4; i++) {
      CHECK_CUDA(cudaMalloc((void **)&dst[i], lbytes));
      CHECK_CUDA(cudaMemset(dst[i], 0, lbytes));
    }
    for (int i = 0; i < 4 && rc == SE_OK; i++)
      rc = se_tridiag_relayout(n, count, 0, layout, src[i], dst[i], 0, &err);
    if (rc == SE_OK)
      rc = se_tridiag_solve(t, dst[0], dst[1], dst[2], dst[3], &err);
    if (rc == SE_OK)
      rc = se_tridiag_relayout(n, count, layout, 0, dst[3], bt->x, 0, &err);
    CHECK_CUDA(cudaDeviceSynchronize());
    for (int i = 0; i < 4; i++)
      cudaFree(dst[i]);
  } else {
    rc = se_tridiag_solve(t, bt->a, bt->b, bt->c, bt->x, &err);
  }
  cudaError_t ce = cudaDeviceSynchronize();
  se_tridiag_destroy(t);
  if (rc != SE_OK || ce != cudaSuccess) {
    SE_EXPECT(st, 0, "solve %s n=%d count=%d: %s", desc, n, count,
              rc != SE_OK ? err.message : cudaGetErrorString(ce));
    return INFINITY;
  }
  double *x = xmalloc(bytes);
  CHECK_CUDA(cudaMemcpy(x, bt->x, bytes, cudaMemcpyDeviceToHost));
  double worst = 0.0;
  for (int s = 0; s < count; s++) {
    const int ns = bt->sizes_h ? bt->sizes_h[s] : n;
    double diff = 0.0, norm = 0.0;
    for (int j = 0; j < ns; j++) {
      const size_t o = (size_t)j * count + s;
      const double e = fabs(x[o] - bt->ref[o]);
      diff = (e > diff || isnan(e)) ? e : diff;
      norm = fabs(bt->ref[o]) > norm ? fabs(bt->ref[o]) : norm;
    }
    const double rel = diff / norm;
    if (!(rel <= worst))
      worst = rel;
  }
  /* our solvers leave a, b, c alone */
  if (opt->method < SE_TRIDIAG_CUSPARSE_THOMAS && layout == SE_TRIDIAG_LAYOUT_INTERLEAVED) {
    double *h = xmalloc(bytes);
    const double *orig[3] = {bt->ha, bt->hb, bt->hc};
    double *dev[3] = {bt->a, bt->b, bt->c};
    for (int i = 0; i < 3; i++) {
      CHECK_CUDA(cudaMemcpy(h, dev[i], bytes, cudaMemcpyDeviceToHost));
      SE_EXPECT(st, !memcmp(h, orig[i], bytes), "%s n=%d count=%d modified its matrix", desc, n,
                count);
    }
    free(h);
  }
  free(x);
  SE_EXPECT(st, worst <= TOL, "%s n=%d count=%d%s: relative error %.3e > %.0e", desc, n, count,
            bt->sizes_h ? (opt->compute_padding ? " (variable, CP)" : " (variable, NCP)") : "",
            worst, TOL);
  return worst;
}

static void test_fixed(se_test_state *st) {
  static const int ns[] = {64, 100, 128, 256, 333, 512};
  static const int counts[] = {1, 37, 300, 2600};
  double worst_ours = 0.0, worst_sp = 0.0;
  int solves = 0;
  for (size_t in = 0; in < sizeof ns / sizeof ns[0]; in++)
    for (size_t ic = 0; ic < sizeof counts / sizeof counts[0]; ic++) {
      const int n = ns[in], count = counts[ic];
      batch bt;
      batch_create(&bt, n, count, NULL, 1000u + 17u * in + ic);
      char desc[96];
      for (int m = SE_TRIDIAG_AUTO; m < SE_TRIDIAG_METHODS; m++) {
        se_tridiag_options opt = {.method = (se_tridiag_method)m};
        double e = check_solver(st, &bt, &opt, desc, sizeof desc);
        solves++;
        if (m >= SE_TRIDIAG_CUSPARSE_THOMAS)
          worst_sp = e > worst_sp ? e : worst_sp;
        else
          worst_ours = e > worst_ours ? e : worst_ours;
      }
      /* every chunk size and reduced solver of PART, systems per block 1, 3, 16 and the default,
       * one group per block, persistent blocks staging the next group (pipeline 2), and those
       * solving each system in two halves (pipeline 3, PCR only) */
      static const int Ms[] = {4, 8, 16}, Gs[] = {0, 1, 3, 16};
      for (int im = 0; im < 3; im++)
        for (int red = SE_TRIDIAG_REDUCED_PCR; red <= SE_TRIDIAG_REDUCED_THOMAS; red++)
          for (int pipe = 1; pipe <= 3; pipe++)
            for (int ig = 0; ig < 4; ig++) {
              const int K = (n + Ms[im] - 1) / Ms[im], Kb = pipe == 3 ? (K + 1) / 2 : K;
              if (Gs[ig] * Kb > 256 || (pipe == 3 && red != SE_TRIDIAG_REDUCED_PCR))
                continue;
              se_tridiag_options opt = {.method = SE_TRIDIAG_PART,
                                        .rows_per_thread = Ms[im],
                                        .systems_per_block = Gs[ig],
                                        .reduced = red,
                                        .pipeline = pipe};
              double e = check_solver(st, &bt, &opt, desc, sizeof desc);
              solves++;
              worst_ours = e > worst_ours ? e : worst_ours;
            }
      /* auto: staged persistent blocks on its block-interleaved layout above 256 rows; on the
       * interleaved layout only from 4 groups per SM (test_auto_choice), none at these counts */
      for (int blocked = 0; blocked <= 1; blocked++) {
        se_tridiag_options opt = {.method = SE_TRIDIAG_AUTO,
                                  .block_size = blocked ? se_tridiag_block_size(n, count) : 0};
        double e = check_solver(st, &bt, &opt, desc, sizeof desc);
        solves++;
        worst_ours = e > worst_ours ? e : worst_ours;
        SE_EXPECT(st,
                  (strstr(desc, " pipe") != NULL) == (blocked && n > 256) &&
                      !strstr(desc, " split"),
                  "auto n=%d count=%d block size %d chose '%s'", n, count, opt.block_size, desc);
      }
      /* the block-interleaved layout: ours, blocks of 1, 3, 8 and 16 systems */
      static const int Bs[] = {1, 3, 8, 16};
      static const se_tridiag_method blm[] = {SE_TRIDIAG_AUTO, SE_TRIDIAG_THOMAS,
                                              SE_TRIDIAG_THOMAS_REG};
      for (int ib = 0; ib < 4; ib++) {
        for (int k = 0; k < 3; k++) {
          se_tridiag_options opt = {.method = blm[k], .block_size = Bs[ib]};
          double e = check_solver(st, &bt, &opt, desc, sizeof desc);
          solves++;
          worst_ours = e > worst_ours ? e : worst_ours;
        }
        for (int im = 0; im < 3; im++)
          for (int pipe = 1; pipe <= 3; pipe++) {
            const int K = (n + Ms[im] - 1) / Ms[im], Kb = pipe == 3 ? (K + 1) / 2 : K;
            if (Bs[ib] * Kb > 256)
              continue;
            se_tridiag_options opt = {.method = SE_TRIDIAG_PART, .rows_per_thread = Ms[im],
                                      .block_size = Bs[ib], .pipeline = pipe};
            double e = check_solver(st, &bt, &opt, desc, sizeof desc);
            solves++;
            worst_ours = e > worst_ours ? e : worst_ours;
          }
      }
      batch_free(&bt);
    }
  printf("fixed sizes (interleaved, block-interleaved, flat): %d solves, largest relative error: "
         "ours %.2e, cuSPARSE %.2e\n",
         solves, worst_ours, worst_sp);
}

static void test_variable(se_test_state *st) {
  static const int ns[] = {64, 200, 512};
  static const int counts[] = {1, 45, 1000};
  double worst = 0.0;
  int solves = 0;
  uint64_t rng = 77;
  for (size_t in = 0; in < 3; in++)
    for (size_t ic = 0; ic < 3; ic++) {
      const int n = ns[in], count = counts[ic];
      int *sizes = xmalloc((size_t)count * sizeof(int));
      for (int s = 0; s < count; s++)
        sizes[s] = 1 + (int)(rng_next(&rng) % (uint64_t)n);
      if (count > 4) {
        sizes[0] = 1;
        sizes[1] = 2;
        sizes[2] = 3;
        sizes[3] = n;
      }
      batch bt;
      batch_create(&bt, n, count, sizes, 5000u + 7u * in + ic);
      free(sizes);
      char desc[96];
      for (int cp = 0; cp < 2; cp++) {
        static const se_tridiag_method ms[] = {SE_TRIDIAG_AUTO, SE_TRIDIAG_THOMAS,
                                               SE_TRIDIAG_THOMAS_REG};
        for (int k = 0; k < 3; k++) {
          se_tridiag_options opt = {.method = ms[k], .compute_padding = cp};
          double e = check_solver(st, &bt, &opt, desc, sizeof desc);
          worst = e > worst ? e : worst;
          solves++;
        }
        static const int Ms[] = {4, 8, 16};
        for (int im = 0; im < 3; im++)
          for (int red = SE_TRIDIAG_REDUCED_PCR; red <= SE_TRIDIAG_REDUCED_THOMAS; red++)
            for (int pipe = 1; pipe <= 3; pipe++) {
              if (pipe == 3 && red != SE_TRIDIAG_REDUCED_PCR)
                continue;
              se_tridiag_options opt = {.method = SE_TRIDIAG_PART,
                                        .rows_per_thread = Ms[im],
                                        .systems_per_block = 1,
                                        .reduced = red,
                                        .compute_padding = cp,
                                        .pipeline = pipe};
              double e = check_solver(st, &bt, &opt, desc, sizeof desc);
              worst = e > worst ? e : worst;
              solves++;
            }
        /* staged (8 systems per block) and in two halves (16 interleaved, 8 block-interleaved),
         * both layouts */
        for (int B = 0; B <= 8; B += 8)
          for (int pipe = 2; pipe <= 3; pipe++) {
            const int g = B ? B : 8 * (pipe - 1);
            se_tridiag_options opt = {.method = SE_TRIDIAG_PART, .rows_per_thread = 16,
                                      .compute_padding = cp, .block_size = B,
                                      .systems_per_block = B ? 0 : g, .pipeline = pipe};
            double e = check_solver(st, &bt, &opt, desc, sizeof desc);
            worst = e > worst ? e : worst;
            solves++;
          }
        for (int k = 0; k < 3; k++) { /* block-interleaved, blocks of 4 systems */
          se_tridiag_options opt = {.method = ms[k], .compute_padding = cp, .block_size = 4};
          double e = check_solver(st, &bt, &opt, desc, sizeof desc);
          worst = e > worst ? e : worst;
          solves++;
        }
      }
      /* cuSPARSE refuses variable sizes */
      se_tridiag_options opt = {.method = SE_TRIDIAG_CUSPARSE_LU};
      se_tridiag *t = NULL;
      se_error err = {0};
      int rc = se_tridiag_create(&opt, n, count, bt.sizes_d, 0, &t, &err);
      SE_EXPECT(st, rc == SE_ERR_UNSUPPORTED && !t && strstr(err.message, "fixed-size"),
                "cuSPARSE with variable sizes: rc %d, '%s'", rc, err.message);
      batch_free(&bt);
    }
  printf("variable sizes (cuThomasVBatch, CP and NCP): %d solves, largest relative error %.2e\n",
         solves, worst);
}

/* AUTO's choice on large batches (created, not solved), interleaved layout, even counts, fixed
 * sizes or CP: two halves of G = 16 from 257 to 512 rows from 32 groups of 16 per SM, else staged
 * from 4 groups per SM (129 to 512 rows; G = 8 only below the two halves' threshold); odd counts
 * and NCP neither. Staged on the block-interleaved layout above 256. The shapes hold for 81 to
 * 200 SMs (the H200 has 132); two halves are expected only where a block gets the 215 KB of
 * shared memory they take at 512 rows. */
static void test_auto_choice(se_test_state *st) {
  static const struct {
    int n, count, blocked, ncp;
    const char *want; /* " split", " pipe" or "" (one group per block) */
  } cases[] = {{512, 256000, 0, 0, " split"}, {512, 102400, 0, 0, " split"},
               {512, 255999, 0, 0, ""},       {512, 25600, 0, 0, " pipe"},
               {512, 2560, 0, 0, ""},         {512, 256000, 0, 1, ""},
               {333, 256000, 0, 0, " split"}, {256, 256000, 0, 0, " pipe"},
               {256, 25600, 0, 0, " pipe"},   {256, 2560, 0, 0, ""},
               {128, 256000, 0, 0, ""},       {1024, 256000, 0, 0, ""},
               {512, 256000, 1, 0, " pipe"},  {256, 256000, 1, 0, ""}};
  int *sizes = NULL, dev = 0, smem_max = 0;
  CHECK_CUDA(cudaGetDevice(&dev));
  CHECK_CUDA(cudaDeviceGetAttribute(&smem_max, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  CHECK_CUDA(cudaMalloc((void **)&sizes, 256000 * sizeof(int)));
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    const int n = cases[k].n, count = cases[k].count;
    if (!strcmp(cases[k].want, " split") && smem_max < 215168)
      continue;
    se_tridiag_options opt = {.method = SE_TRIDIAG_AUTO,
                              .block_size = cases[k].blocked ? se_tridiag_block_size(n, count) : 0};
    se_tridiag *t = NULL;
    se_error err = {0};
    char desc[96] = "";
    const int rc = se_tridiag_create(&opt, n, count, cases[k].ncp ? sizes : NULL, 0, &t, &err);
    if (rc == SE_OK)
      se_tridiag_describe(t, desc, sizeof desc);
    se_tridiag_destroy(t);
    const int split = strstr(desc, " split") != NULL, pipe = strstr(desc, " pipe") != NULL;
    const int ok = rc == SE_OK && (*cases[k].want ? strstr(desc, cases[k].want) != NULL
                                                   : !split && !pipe);
    SE_EXPECT(st, ok && (!split || strstr(desc, "G=16")),
              "auto n=%d count=%d%s%s chose '%s' (want '%s'): %s", n, count,
              cases[k].blocked ? " block-interleaved" : "", cases[k].ncp ? " NCP" : "", desc,
              cases[k].want, rc == SE_OK ? "" : err.message);
  }
  cudaFree(sizes);
}

static void test_bad_arguments(se_test_state *st) {
  se_error err = {0};
  se_tridiag *t = NULL;
  se_tridiag_options opt = {.method = SE_TRIDIAG_PART, .rows_per_thread = 5};
  SE_EXPECT(st, se_tridiag_create(&opt, 64, 10, NULL, 0, &t, &err) == SE_ERR_ARG &&
                    strstr(err.message, "rows per thread"),
            "M = 5: '%s'", err.message);
  opt = (se_tridiag_options){.method = SE_TRIDIAG_PART, .rows_per_thread = 4,
                             .systems_per_block = 4};
  SE_EXPECT(st, se_tridiag_create(&opt, 4096, 10, NULL, 0, &t, &err) == SE_ERR_UNSUPPORTED,
            "part with 4096 rows in blocks of 4 systems: '%s'", err.message);
  opt = (se_tridiag_options){.method = SE_TRIDIAG_PART, .pipeline = 4};
  SE_EXPECT(st, se_tridiag_create(&opt, 512, 10, NULL, 0, &t, &err) == SE_ERR_ARG &&
                    strstr(err.message, "pipeline"),
            "pipeline 4: '%s'", err.message);
  opt = (se_tridiag_options){.method = SE_TRIDIAG_PART, .pipeline = 3,
                             .reduced = SE_TRIDIAG_REDUCED_THOMAS};
  SE_EXPECT(st, se_tridiag_create(&opt, 512, 10, NULL, 0, &t, &err) == SE_ERR_UNSUPPORTED &&
                    strstr(err.message, "two halves"),
            "two halves with the reduced Thomas: '%s'", err.message);
  opt = (se_tridiag_options){.method = SE_TRIDIAG_PART, .pipeline = 3, .rows_per_thread = 16};
  SE_EXPECT(st, se_tridiag_create(&opt, 16, 10, NULL, 0, &t, &err) == SE_ERR_UNSUPPORTED &&
                    strstr(err.message, "two halves"),
            "two halves of one chunk: '%s'", err.message);
  opt = (se_tridiag_options){.method = SE_TRIDIAG_CUSPARSE_THOMAS, .block_size = 8};
  SE_EXPECT(st, se_tridiag_create(&opt, 64, 10, NULL, 0, &t, &err) == SE_ERR_UNSUPPORTED,
            "cuSPARSE on a block-interleaved layout: '%s'", err.message);
  opt = (se_tridiag_options){.method = SE_TRIDIAG_PART, .block_size = 8, .systems_per_block = 4};
  SE_EXPECT(st, se_tridiag_create(&opt, 64, 10, NULL, 0, &t, &err) == SE_ERR_ARG,
            "G != block size: '%s'", err.message);
  opt = (se_tridiag_options){.method = SE_TRIDIAG_THOMAS};
  SE_EXPECT(st, se_tridiag_create(&opt, 0, 10, NULL, 0, &t, &err) == SE_ERR_ARG,
            "zero rows: '%s'", err.message);
  /* batches of other shapes: cuSPARSE interleaved methods only, no larger than the solver */
  opt = (se_tridiag_options){.method = SE_TRIDIAG_THOMAS};
  if (se_tridiag_create(&opt, 64, 10, NULL, 0, &t, &err) == SE_OK) {
    SE_EXPECT(st, se_tridiag_solve_shape(t, 8, 4, NULL, NULL, NULL, NULL, &err) ==
                          SE_ERR_UNSUPPORTED &&
                      strstr(err.message, "cuSPARSE"),
              "solve_shape on thomas: '%s'", err.message);
    se_tridiag_destroy(t);
  }
  opt = (se_tridiag_options){.method = SE_TRIDIAG_CUSPARSE_LU};
  if (se_tridiag_create(&opt, 64, 10, NULL, 0, &t, &err) == SE_OK) {
    size_t bytes = 0;
    SE_EXPECT(st, se_tridiag_solve_shape(t, 65, 4, NULL, NULL, NULL, NULL, &err) == SE_ERR_ARG,
              "65 rows on a 64-row solver: '%s'", err.message);
    SE_EXPECT(st, se_tridiag_shape_buffer(t, 8, 11, NULL, NULL, NULL, NULL, &bytes, &err) ==
                      SE_ERR_ARG,
              "11 systems on a 10-system solver: '%s'", err.message);
    SE_EXPECT(st, se_tridiag_solve_shape(t, 0, 4, NULL, NULL, NULL, NULL, &err) == SE_ERR_ARG,
              "0 rows: '%s'", err.message);
    se_tridiag_destroy(t);
  } else {
    SE_EXPECT(st, 0, "cusparse-lu solver: %s", err.message);
  }
  SE_EXPECT(st, se_tridiag_method_parse("cusparse-qr") == SE_TRIDIAG_CUSPARSE_QR &&
                    se_tridiag_method_parse("nope") == -1,
            "method names");
  /* AUTO on systems too tall for PART falls back to the one-thread Thomas */
  batch bt;
  batch_create(&bt, 5000, 3, NULL, 99);
  se_tridiag_options aut = {.method = SE_TRIDIAG_AUTO};
  char desc[96];
  check_solver(st, &bt, &aut, desc, sizeof desc);
  SE_EXPECT(st, !strcmp(desc, "thomas-reg"), "auto for 5000 rows chose '%s'", desc);
  batch_free(&bt);
}

/* ---- Hines: the mixed population --------------------------------------------------------- */

typedef struct population {
  int64_t n_cells, C;
  int64_t *offsets;
  int32_t *parent;
  double *g, *d, *r; /* per compartment */
  const char **label;
} population;

static void pop_add(population *p, const int32_t *parent, int32_t n, const char *label,
                    int64_t *cap_cells, int64_t *cap_comp) {
  if (p->n_cells + 1 >= *cap_cells) {
    *cap_cells = 2 * *cap_cells + 16;
    p->offsets = realloc(p->offsets, (size_t)*cap_cells * sizeof(int64_t));
    p->label = realloc(p->label, (size_t)*cap_cells * sizeof(char *));
  }
  if (p->C + n > *cap_comp) {
    *cap_comp = 2 * (*cap_comp + n);
    p->parent = realloc(p->parent, (size_t)*cap_comp * sizeof(int32_t));
  }
  if (!p->offsets || !p->label || !p->parent) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  p->offsets[p->n_cells] = p->C;
  p->label[p->n_cells] = label;
  memcpy(p->parent + p->C, parent, (size_t)n * sizeof(int32_t));
  p->C += n;
  p->n_cells++;
  p->offsets[p->n_cells] = p->C;
}

/* Assembles a diagonally dominant Hines system on every cell: g in [0.05, 1) to the parent,
 * d = C + sum of the couplings, C in [0.1, 2), r in [-1, 1). */
static void pop_values(population *p, uint64_t seed) {
  p->g = xmalloc((size_t)p->C * sizeof(double));
  p->d = xmalloc((size_t)p->C * sizeof(double));
  p->r = xmalloc((size_t)p->C * sizeof(double));
  uint64_t rng = seed;
  for (int64_t c = 0; c < p->n_cells; c++) {
    const int64_t o = p->offsets[c], n = p->offsets[c + 1] - o;
    for (int64_t i = 0; i < n; i++) {
      p->g[o + i] = i ? rng_uniform(&rng, 0.05, 1.0) : 0.0;
      p->d[o + i] = rng_uniform(&rng, 0.1, 2.0);
      p->r[o + i] = rng_uniform(&rng, -1.0, 1.0);
    }
    for (int64_t i = 1; i < n; i++) {
      p->d[o + i] += p->g[o + i];
      p->d[o + p->parent[o + i]] += p->g[o + i];
    }
  }
}

/* The CPU Hines sweep of src/neurons_cpu.c on one cell (d, r overwritten; r = x). */
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

/* Compares x (per compartment) with the CPU solution; returns the largest relative error and
 * counts the compartments that differ in any bit. */
static double compare_cells(const population *p, const double *x, const double *ref,
                            int64_t *bit_diffs) {
  double worst = 0.0;
  *bit_diffs = 0;
  for (int64_t c = 0; c < p->n_cells; c++) {
    double diff = 0.0, norm = 0.0;
    for (int64_t i = p->offsets[c]; i < p->offsets[c + 1]; i++) {
      const double e = fabs(x[i] - ref[i]);
      diff = (e > diff || isnan(e)) ? e : diff;
      norm = fabs(ref[i]) > norm ? fabs(ref[i]) : norm;
      if (memcmp(&x[i], &ref[i], sizeof(double)))
        (*bit_diffs)++;
    }
    const double rel = norm > 0 ? diff / norm : diff;
    if (!(rel <= worst))
      worst = rel;
  }
  return worst;
}

/* The population under construction, for se_test_for_each_swc. */
typedef struct swc_sink {
  population *p;
  int64_t *cap_cells, *cap_comp;
} swc_sink;

static void add_swc(void *ctx, const char *name, const se_morphology *m) {
  (void)name;
  swc_sink *k = ctx;
  pop_add(k->p, m->parent, m->n_compartments, "swc", k->cap_cells, k->cap_comp);
}

static void build_population(se_test_state *st, const char *morph_dir, population *p) {
  memset(p, 0, sizeof *p);
  int64_t cap_cells = 0, cap_comp = 0;
  se_error err = {0};
  static const char *classes[] = {"small-low",   "small-high", "medium-low",
                                  "medium-high", "big-low",    "big-high"};
  population raw = {0};
  for (int seed = 1; seed <= 3; seed++)
    for (int k = 0; k < 6; k++) {
      se_morphology m;
      if (se_morphology_synthetic(classes[k], (uint64_t)seed, &m, &err) != SE_OK) {
        SE_EXPECT(st, 0, "synthetic %s: %s", classes[k], err.message);
        continue;
      }
      pop_add(&raw, m.parent, m.n_compartments, classes[k], &cap_cells, &cap_comp);
      se_morphology_free(&m);
    }
  swc_sink sink = {&raw, &cap_cells, &cap_comp};
  const int n_swc = se_test_for_each_swc(st, morph_dir, add_swc, &sink);
  SE_EXPECT(st, n_swc >= 5, "only %d SWC files loaded from %s", n_swc, morph_dir);
  uint64_t rng = 4242;
  static const int32_t tree_sizes[] = {1, 2, 3, 5, 17, 64, 100, 333, 700, 2000};
  for (int rep = 0; rep < 4; rep++)
    for (size_t k = 0; k < sizeof tree_sizes / sizeof tree_sizes[0]; k++) {
      const int32_t n = tree_sizes[k];
      int32_t *par = xmalloc((size_t)n * sizeof(int32_t));
      par[0] = -1;
      for (int32_t i = 1; i < n; i++)
        par[i] = (rng_next(&rng) % 4 == 0) ? (int32_t)(rng_next(&rng) % (uint64_t)i) : i - 1;
      pop_add(&raw, par, n, "random", &cap_cells, &cap_comp);
      free(par);
    }
  /* shuffled: classes, SWCs and random trees interleaved in the plan's input order */
  int64_t *perm = xmalloc((size_t)raw.n_cells * sizeof(int64_t));
  for (int64_t i = 0; i < raw.n_cells; i++)
    perm[i] = i;
  for (int64_t i = raw.n_cells - 1; i > 0; i--) {
    int64_t j = (int64_t)(rng_next(&rng) % (uint64_t)(i + 1)), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  cap_cells = cap_comp = 0;
  for (int64_t i = 0; i < raw.n_cells; i++) {
    const int64_t c = perm[i];
    pop_add(p, raw.parent + raw.offsets[c], (int32_t)(raw.offsets[c + 1] - raw.offsets[c]),
            raw.label[c], &cap_cells, &cap_comp);
  }
  free(perm);
  free(raw.offsets);
  free(raw.parent);
  free(raw.label);
  pop_values(p, 31337);
  printf("population: %lld cells (18 synthetic, %d SWC, 40 random), %lld compartments\n",
         (long long)p->n_cells, n_swc, (long long)p->C);
}

static void pop_free(population *p) {
  free(p->offsets);
  free(p->parent);
  free(p->g);
  free(p->d);
  free(p->r);
  free(p->label);
}

static void test_hines_branch(se_test_state *st, const population *p) {
  const int64_t C = p->C;
  double *ref = xmalloc((size_t)C * sizeof(double)), *dref = xmalloc((size_t)C * sizeof(double));
  memcpy(ref, p->r, (size_t)C * sizeof(double));
  memcpy(dref, p->d, (size_t)C * sizeof(double));
  for (int64_t c = 0; c < p->n_cells; c++) {
    const int64_t o = p->offsets[c];
    cpu_hines(p->offsets[c + 1] - o, p->parent + o, p->g + o, dref + o, ref + o);
  }
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreate(&stream));
  double *x = xmalloc((size_t)C * sizeof(double));
  for (int sort = 1; sort >= 0; sort--) {
    se_error err = {0};
    se_hines_branch_plan *plan = NULL;
    if (se_hines_branch_plan_create(p->n_cells, p->offsets, p->parent, sort, stream, &plan,
                                    &err) != SE_OK) {
      SE_EXPECT(st, 0, "plan: %s", err.message);
      continue;
    }
    se_hines_branch_stats hs;
    se_hines_branch_plan_stats(plan, &hs);
    printf("branch-level plan (%s): %lld branches on %d levels, %lld groups, %lld slots for %lld "
           "compartments (padding %.1f%%), longest branch %d\n",
           sort ? "sorted by length" : "unsorted", (long long)hs.branches, hs.levels,
           (long long)hs.groups, (long long)hs.slots, (long long)hs.compartments,
           100.0 * (double)(hs.slots - hs.compartments) / (double)hs.slots,
           hs.max_branch_length);
    SE_EXPECT(st, hs.compartments == C && hs.cells == p->n_cells, "plan sizes");
    /* the slot map is one-to-one */
    const int32_t *slot = se_hines_branch_slot_map(plan);
    const int64_t S = se_hines_branch_slots(plan);
    unsigned char *used = calloc((size_t)S, 1);
    int64_t bad = 0;
    for (int64_t i = 0; i < C; i++) {
      if (slot[i] < 0 || slot[i] >= S || used[slot[i]])
        bad++;
      else
        used[slot[i]] = 1;
    }
    free(used);
    SE_EXPECT(st, bad == 0, "%lld compartments with a bad or shared slot", (long long)bad);
    if (se_hines_branch_set_coupling(plan, p->g, &err) != SE_OK) {
      SE_EXPECT(st, 0, "coupling: %s", err.message);
      se_hines_branch_plan_destroy(plan);
      continue;
    }
    double *hd = xmalloc((size_t)S * sizeof(double)), *hr = xmalloc((size_t)S * sizeof(double));
    double *dd, *dr;
    CHECK_CUDA(cudaMalloc((void **)&dd, (size_t)S * sizeof(double)));
    CHECK_CUDA(cudaMalloc((void **)&dr, (size_t)S * sizeof(double)));
    for (int64_t k = 0; k < S; k++) /* padding: NaN, which must never reach a result */
      hd[k] = hr[k] = NAN;
    for (int64_t i = 0; i < C; i++) {
      hd[slot[i]] = p->d[i];
      hr[slot[i]] = p->r[i];
    }
    /* modes 0-7: our kernels (CP/NCP x exact/fast x graph); 8-13: the cuSPARSE backends
     * (Thomas, LU, QR) without and with a graph. Their tolerance is TOL as well: every row is
     * strictly diagonally dominant by C >= 0.1 with couplings g < 1, so ||A^-1|| <= 10 for the
     * cell, every branch matrix A_B and every Schur complement (dominance is inherited), and
     * 0 <= y <= 10 (A_B is an M-matrix), |z| <= 10 max|r|: no growth, no cancellation beyond the
     * data's scale. The cuSPARSE path (other operations than the CPU sweep: two solves and the
     * axpy x = z + (g x_parent) y) then differs by rounding amplified at most by the condition
     * number (a few hundred at most: ||A|| <= 2 + 2 x the couplings of a node, each < 1), i.e.
     * 1e-14 to 1e-13 in the worst case and ~1e-15 typically (the fast kernels and the plain
     * cuSPARSE batches measure 1e-15): 1e-12 leaves an order of magnitude above the worst case. */
    for (int mode_i = 0; mode_i < 14; mode_i++) {
      const int cus = mode_i >= 8;
      se_hines_branch_mode mode = {.compute_padding = !cus && (mode_i & 1),
                                   .exact = !cus && !(mode_i & 2),
                                   .use_graph = cus ? (mode_i - 8) & 1 : (mode_i & 4) != 0,
                                   .backend = cus ? SE_HINES_BRANCH_CUSPARSE_THOMAS +
                                                        (mode_i - 8) / 2
                                                  : SE_HINES_BRANCH_KERNELS};
      static const char *cus_name[] = {"", "cuSPARSE thomas", "cuSPARSE LU", "cuSPARSE QR"};
      for (int rep = 0; rep < (mode.use_graph ? 2 : 1); rep++) { /* graph: capture, then replay */
        CHECK_CUDA(cudaMemcpy(dd, hd, (size_t)S * sizeof(double), cudaMemcpyHostToDevice));
        CHECK_CUDA(cudaMemcpy(dr, hr, (size_t)S * sizeof(double), cudaMemcpyHostToDevice));
        int rc = se_hines_branch_solve(plan, dd, dr, &mode, &err);
        cudaError_t ce = cudaStreamSynchronize(stream);
        if (rc != SE_OK || ce != cudaSuccess) {
          SE_EXPECT(st, 0, "branch solve: %s", rc != SE_OK ? err.message : cudaGetErrorString(ce));
          continue;
        }
        double *xs = xmalloc((size_t)S * sizeof(double));
        CHECK_CUDA(cudaMemcpy(xs, dr, (size_t)S * sizeof(double), cudaMemcpyDeviceToHost));
        for (int64_t i = 0; i < C; i++)
          x[i] = xs[slot[i]];
        free(xs);
        int64_t bits = 0;
        const double e = compare_cells(p, x, ref, &bits);
        printf("  %s %s%s: relative error %.2e, %lld of %lld compartments not bitwise equal\n",
               sort ? "sorted" : "unsorted",
               cus ? cus_name[mode.backend]
                   : mode.compute_padding ? (mode.exact ? "CP exact" : "CP fast")
                                          : (mode.exact ? "NCP exact" : "NCP fast"),
               mode.use_graph ? (rep ? " graph replay" : " graph") : "", e, (long long)bits,
               (long long)C);
        SE_EXPECT(st, e <= TOL,
                  "branch solve (sort %d, CP %d, exact %d, graph %d, backend %d): %.3e", sort,
                  mode.compute_padding, mode.exact, mode.use_graph, mode.backend, e);
        if (mode.exact)
          SE_EXPECT(st, bits == 0, "exact branch solve: %lld compartments differ from the CPU",
                    (long long)bits);
      }
    }
    free(hd);
    free(hr);
    cudaFree(dd);
    cudaFree(dr);
    se_hines_branch_plan_destroy(plan);
  }
  /* an unknown backend is refused; a malformed tree with its cell and compartment */
  {
    int64_t off[2] = {0, 3};
    int32_t par[3] = {-1, 0, 1};
    se_error err = {0};
    se_hines_branch_plan *plan = NULL;
    if (se_hines_branch_plan_create(1, off, par, 1, stream, &plan, &err) != SE_OK) {
      SE_EXPECT(st, 0, "plan of one cell: %s", err.message);
    } else {
      const int bad[2] = {-1, SE_HINES_BRANCH_BACKENDS};
      for (int k = 0; k < 2; k++) {
        const int b = bad[k];
        se_hines_branch_mode mode = {.backend = b};
        const int rc = se_hines_branch_solve(plan, NULL, NULL, &mode, &err);
        SE_EXPECT(st, rc == SE_ERR_ARG && strstr(err.message, "backend"),
                  "backend %d: rc %d '%s'", b, rc, err.message);
      }
      se_hines_branch_plan_destroy(plan);
    }
  }
  {
    int64_t off[3] = {0, 2, 5};
    int32_t par[5] = {-1, 0, -1, 0, 3};
    se_error err = {0};
    se_hines_branch_plan *plan = NULL;
    int rc = se_hines_branch_plan_create(2, off, par, 1, stream, &plan, &err);
    SE_EXPECT(st, rc == SE_ERR_ARG && !plan && strstr(err.message, "cell 1") &&
                      strstr(err.message, "compartment 2"),
              "malformed tree: rc %d '%s'", rc, err.message);
  }
  free(x);
  free(ref);
  free(dref);
  cudaStreamDestroy(stream);
}

/* The mono-morphology reference kernel: every cell of the population as a morphology, 70 cells
 * of each (groups of 32 lanes with partial last groups). */
static void test_hines_mono(se_test_state *st, const population *p) {
  const int32_t M = (int32_t)p->n_cells;
  const int64_t copies = 70, n_cells = (int64_t)M * copies;
  int32_t *cell_morph = xmalloc((size_t)n_cells * sizeof(int32_t));
  for (int64_t c = 0; c < n_cells; c++)
    cell_morph[c] = (int32_t)((c * 7) % M); /* morphologies interleaved in cell order */
  se_error err = {0};
  se_hines_monoref *mono = NULL;
  if (se_hines_monoref_create(M, p->offsets, p->parent, p->g, n_cells, cell_morph, 0, &mono, &err) !=
      SE_OK) {
    SE_EXPECT(st, 0, "mono: %s", err.message);
    free(cell_morph);
    return;
  }
  const int64_t S = se_hines_monoref_slots(mono);
  double *hd = xmalloc((size_t)S * sizeof(double)), *hr = xmalloc((size_t)S * sizeof(double));
  for (int64_t k = 0; k < S; k++)
    hd[k] = hr[k] = NAN;
  uint64_t rng = 555;
  int64_t Ctot = 0;
  for (int64_t c = 0; c < n_cells; c++) {
    const int32_t m = cell_morph[c];
    const int64_t o = p->offsets[m], n = p->offsets[m + 1] - o;
    for (int64_t i = 0; i < n; i++) {
      const int64_t s = se_hines_monoref_slot(mono, c, (int32_t)i);
      hd[s] = p->d[o + i] * (1.0 + rng_uniform(&rng, 0.0, 0.5)); /* stays dominant */
      hr[s] = rng_uniform(&rng, -1.0, 1.0);
    }
    Ctot += n;
  }
  double *dd, *dr;
  CHECK_CUDA(cudaMalloc((void **)&dd, (size_t)S * sizeof(double)));
  CHECK_CUDA(cudaMalloc((void **)&dr, (size_t)S * sizeof(double)));
  CHECK_CUDA(cudaMemcpy(dd, hd, (size_t)S * sizeof(double), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(dr, hr, (size_t)S * sizeof(double), cudaMemcpyHostToDevice));
  int rc = se_hines_monoref_solve(mono, dd, dr, &err);
  CHECK_CUDA(cudaDeviceSynchronize());
  SE_EXPECT(st, rc == SE_OK, "mono solve: %s", err.message);
  double *xs = xmalloc((size_t)S * sizeof(double));
  CHECK_CUDA(cudaMemcpy(xs, dr, (size_t)S * sizeof(double), cudaMemcpyDeviceToHost));
  double worst = 0.0;
  int64_t bits = 0;
  int64_t nmax = 0;
  for (int32_t m = 0; m < M; m++)
    nmax = p->offsets[m + 1] - p->offsets[m] > nmax ? p->offsets[m + 1] - p->offsets[m] : nmax;
  double *d1 = xmalloc((size_t)nmax * sizeof(double)), *r1 = xmalloc((size_t)nmax * sizeof(double));
  for (int64_t c = 0; c < n_cells; c++) {
    const int32_t m = cell_morph[c];
    const int64_t o = p->offsets[m], n = p->offsets[m + 1] - o;
    for (int64_t i = 0; i < n; i++) {
      const int64_t s = se_hines_monoref_slot(mono, c, (int32_t)i);
      d1[i] = hd[s];
      r1[i] = hr[s];
    }
    cpu_hines(n, p->parent + o, p->g + o, d1, r1);
    double diff = 0.0, norm = 0.0;
    for (int64_t i = 0; i < n; i++) {
      const double v = xs[se_hines_monoref_slot(mono, c, (int32_t)i)];
      const double e = fabs(v - r1[i]);
      diff = (e > diff || isnan(e)) ? e : diff;
      norm = fabs(r1[i]) > norm ? fabs(r1[i]) : norm;
      bits += memcmp(&v, &r1[i], sizeof v) != 0;
    }
    const double rel = diff / norm;
    if (!(rel <= worst))
      worst = rel;
  }
  printf("mono-morphology reference: %lld cells, %lld compartments: relative error %.2e, %lld "
         "not bitwise equal\n",
         (long long)n_cells, (long long)Ctot, worst, (long long)bits);
  SE_EXPECT(st, worst <= TOL, "mono reference: relative error %.3e", worst);
  SE_EXPECT(st, bits == 0, "mono reference: %lld compartments differ from the CPU",
            (long long)bits);
  free(d1);
  free(r1);
  free(xs);
  free(hd);
  free(hr);
  cudaFree(dd);
  cudaFree(dr);
  free(cell_morph);
  se_hines_monoref_destroy(mono);
}
#endif /* SIMENGINE_HAVE_CUDA */

int main(int argc, char **argv) {
#ifndef SIMENGINE_HAVE_CUDA
  printf("skipped: no CUDA in this build\n");
  return 77;
#else
  if (se_cuda_device_count() == 0) {
    printf("skipped: no GPU\n");
    return 77;
  }
  se_test_state st = {0};
  test_bad_arguments(&st);
  test_auto_choice(&st);
  test_fixed(&st);
  test_variable(&st);
  population pop;
  build_population(&st, argc >= 2 ? argv[1] : NULL, &pop);
  test_hines_branch(&st, &pop);
  test_hines_mono(&st, &pop);
  pop_free(&pop);
  return se_test_finish(&st, "gpu_tridiag");
#endif
}
