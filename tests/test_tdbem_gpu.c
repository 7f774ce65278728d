/* The GPU summation kernels of the tdbem workload (cuda/tdbem_cuda.h, docs/tdbem.md Section 12)
 * against the CPU summation se_tdbem_sum_cpu and the front-ordered CSR reference: Full-Blocking (16
 * and 32 columns) and Contiguous-Blocking, every ng in 1 .. 16, double and single values, random
 * cases (empty slices, missing rows, rows longer than a block, N not a multiple of 32, windows
 * longer than a thread-block's 128 threads) and a generated sphere, sub-intervals, moved intervals,
 * the history update, the radiation of the near field on the device (se_tdbem_cuda_radiate_*) and a
 * product over long chunks of mostly empty slices. Bounds: 1e-12 relative in double (double
 * products and sums in both paths: the differences are rounding of the summation order, about
 * 1e-15) and 1e-5 in single (DESIGN.md; CB multiplies float values with the history rounded to
 * float and sums up to 4 records' products per lane (at most 88) in float, relative rounding about
 * 88 x 6e-8 per float sum, before the double accumulation; FB multiplies in double). Skips (77)
 * without a CUDA device or a CUDA build. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "se_test.h"

#ifndef SIMENGINE_HAVE_CUDA
int main(void) {
  printf("skipped: no GPU (this build has no CUDA)\n");
  return 77;
}
#else
#include "prep_tdbem.h"
#include "se_cuda.h"
#include "se_random.h"
#include "tdbem_cuda.h"
#include "tdbem_front_ref.h"
#include "tdbem_sum_cpu.h"

/* A random case: N unknowns (slices), kmax; slice j has rows i with probability density, rows
 * i % 13 == 7 and slices j % 11 == 5 empty; lengths 1 .. longest (some longer than 32). */
static void random_case(se_tdbem_slices *s, se_precision prec, int64_t n, int64_t kmax,
                        double density, int64_t longest, uint64_t seed) {
  uint64_t rng = seed;
  const int64_t cap_rv = n * n + 1, cap_v = cap_rv * longest + 1;
  *s = (se_tdbem_slices){.precision = prec, .n = n, .kmax = kmax, .first = 0, .count = n};
  s->slice_ptr = se_test_calloc((size_t)n + 1, sizeof *s->slice_ptr);
  s->row = se_test_calloc((size_t)cap_rv, sizeof *s->row);
  s->kstart = se_test_calloc((size_t)cap_rv, sizeof *s->kstart);
  s->val_ptr = se_test_calloc((size_t)cap_rv + 1, sizeof *s->val_ptr);
  s->val =
      se_test_calloc((size_t)cap_v, prec == SE_PRECISION_SINGLE ? sizeof(float) : sizeof(double));
  int64_t rv = 0, v = 0;
  for (int64_t j = 0; j < n; j++) {
    for (int32_t i = 0; i < n && j % 11 != 5; i++) {
      if (i % 13 == 7 || se_rand_uniform(&rng, 0, 1) >= density)
        continue;
      const int32_t ks = 1 + (int32_t)(se_rand_next(&rng) % (uint64_t)kmax);
      const int64_t room = kmax - ks + 1 < longest ? kmax - ks + 1 : longest;
      const int64_t d = 1 + (int64_t)(se_rand_next(&rng) % (uint64_t)room);
      s->row[rv] = i;
      s->kstart[rv] = ks;
      for (int64_t t = 0; t < d; t++, v++) {
        const double x = se_rand_uniform(&rng, -1, 1);
        if (prec == SE_PRECISION_SINGLE)
          ((float *)s->val)[v] = (float)x;
        else
          ((double *)s->val)[v] = x;
      }
      s->val_ptr[++rv] = v;
    }
    s->slice_ptr[j + 1] = rv;
  }
  s->n_rowvectors = rv;
  s->n_values = v;
}

/* A sparse case of n unknowns (any n: O(n) memory): slice j holds one row-vector, row
 * (j * 7919) mod n, k from 1, 3 values; for rows past what one grid of 65 535 blocks covers. */
static void sparse_case(se_tdbem_slices *s, se_precision prec, int64_t n) {
  *s = (se_tdbem_slices){.precision = prec, .n = n, .kmax = 3, .first = 0, .count = n};
  s->slice_ptr = se_test_calloc((size_t)n + 1, sizeof *s->slice_ptr);
  s->row = se_test_calloc((size_t)n, sizeof *s->row);
  s->kstart = se_test_calloc((size_t)n, sizeof *s->kstart);
  s->val_ptr = se_test_calloc((size_t)n + 1, sizeof *s->val_ptr);
  s->val =
      se_test_calloc(3 * (size_t)n, prec == SE_PRECISION_SINGLE ? sizeof(float) : sizeof(double));
  uint64_t rng = 5;
  for (int64_t j = 0; j < n; j++) {
    s->slice_ptr[j + 1] = j + 1;
    s->row[j] = (int32_t)((j * 7919) % n);
    s->kstart[j] = 1;
    s->val_ptr[j + 1] = 3 * (j + 1);
    for (int t = 0; t < 3; t++) {
      const double x = se_rand_uniform(&rng, -1, 1);
      if (prec == SE_PRECISION_SINGLE)
        ((float *)s->val)[3 * j + t] = (float)x;
      else
        ((double *)s->val)[3 * j + t] = x;
    }
  }
  s->n_rowvectors = n;
  s->n_values = 3 * n;
}

static const struct {
  const char *name;
  se_tdbem_gpu_kernel kernel;
  int bc;
} kinds[] = {{"fb16", SE_TDBEM_GPU_FB, 16}, {"fb32", SE_TDBEM_GPU_FB, 32}, {"cb", SE_TDBEM_GPU_CB, 16}};

/* Every kernel and ng on the slices s (whole, then a sub-interval, then moved back) at times n in
 * {0, 3, kmax + 5} (n < ng, partial and full histories) against se_tdbem_sum_cpu; ng 1 also
 * against the front reference; the radiation on the device against se_tdbem_radiate_cpu. */
static void check_case(se_test_state *st, const se_tdbem_slices *s, const char *label) {
  const int64_t N = s->n, hist_len = s->kmax + 16;
  const double tol = s->precision == SE_PRECISION_SINGLE ? 1e-5 : 1e-12;
  double *hist = se_test_calloc((size_t)(s->count * hist_len), sizeof *hist);
  uint64_t rng = 99;
  for (int64_t x = 0; x < s->count * hist_len; x++)
    hist[x] = se_rand_uniform(&rng, -1, 1);
  double *gpu = se_test_calloc(31 * (size_t)N, sizeof *gpu),
         *cpu = se_test_calloc(31 * (size_t)N, sizeof *cpu);
  const int64_t times[3] = {0, 3, s->kmax + 5};
  se_error err = {0};
  double worst = 0.0;
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    se_tdbem_cuda_t g;
    se_test_ok(se_tdbem_cuda_create(0, kinds[k].kernel, kinds[k].bc, N, s->kmax, s->precision,
                                    hist_len, &g, &err),
               &err, "se_tdbem_cuda_create");
    /* whole, a middle sub-interval, whole again (boundaries moved between calls) */
    const int64_t ranges[3][2] = {{0, s->count}, {s->count / 3, s->count / 2}, {0, s->count}};
    for (int part = 0; part < 3; part++) {
      const se_tdbem_slices v = se_tdbem_slices_view(s, ranges[part][0], ranges[part][1]);
      se_test_ok(se_tdbem_cuda_set_interval(g, &v, hist + ranges[part][0] * hist_len, &err), &err,
                 "se_tdbem_cuda_set_interval");
      for (int ng = 1; ng <= 16; ng++)
        for (int t = 0; t < 3; t++) {
          memset(gpu, 0, 16 * (size_t)N * sizeof *gpu);
          memset(cpu, 0, 16 * (size_t)N * sizeof *cpu);
          se_test_ok(se_tdbem_cuda_sum_start(g, times[t], ng, &err), &err, "sum_start");
          se_test_ok(se_tdbem_cuda_sum_finish(g, gpu, NULL, &err), &err, "sum_finish");
          se_test_ok(se_tdbem_sum_cpu(&v, hist + ranges[part][0] * hist_len, hist_len, times[t], ng,
                                      cpu, &err),
                     &err, "se_tdbem_sum_cpu");
          const double e = se_test_max_rel(gpu, cpu, ng * N);
          worst = fmax(worst, e);
          SE_EXPECT(st, e <= tol, "%s %s part %d ng %d n %lld: GPU vs CPU %.3g > %.0e", label,
                    kinds[k].name, part, ng, (long long)times[t], e, tol);
        }
    }
    /* the history update: a new a_m at m = kmax + 5, then the sum at n = kmax + 6 */
    const int64_t m = s->kmax + 5;
    double *a = se_test_calloc((size_t)s->count, sizeof *a);
    for (int64_t j = 0; j < s->count; j++) {
      a[j] = se_rand_uniform(&rng, -2, 2);
      hist[j * hist_len + m % hist_len] = a[j];
    }
    se_test_ok(se_tdbem_cuda_push(g, a, m, &err), &err, "se_tdbem_cuda_push");
    /* the radiation of that a_m on the device = se_tdbem_radiate_cpu, p_max 1, 11, 21, 31 */
    for (int p_max = 1; p_max <= 31; p_max += 10) {
      memset(gpu, 0, 31 * (size_t)N * sizeof *gpu);
      memset(cpu, 0, 31 * (size_t)N * sizeof *cpu);
      se_test_ok(se_tdbem_cuda_radiate_start(g, p_max, &err), &err, "radiate_start");
      se_test_ok(se_tdbem_cuda_radiate_finish(g, gpu, &err), &err, "radiate_finish");
      se_test_ok(se_tdbem_radiate_cpu(s, a, p_max, cpu, &err), &err, "se_tdbem_radiate_cpu");
      const double e = se_test_max_rel(gpu, cpu, 31 * N);
      SE_EXPECT(st, e <= tol, "%s %s radiation p_max %d: %.3g", label, kinds[k].name, p_max, e);
    }
    SE_EXPECT(st, se_tdbem_cuda_radiate_start(g, 32, &err) == SE_ERR_ARG, "radiation p_max 32");
    free(a);
    memset(gpu, 0, 16 * (size_t)N * sizeof *gpu);
    memset(cpu, 0, 16 * (size_t)N * sizeof *cpu);
    se_test_ok(se_tdbem_cuda_sum_start(g, m + 1, 8, &err), &err, "sum_start");
    se_test_ok(se_tdbem_cuda_sum_finish(g, gpu, NULL, &err), &err, "sum_finish");
    se_test_ok(se_tdbem_sum_cpu(s, hist, hist_len, m + 1, 8, cpu, &err), &err, "se_tdbem_sum_cpu");
    const double e = se_test_max_rel(gpu, cpu, 8 * N);
    SE_EXPECT(st, e <= tol, "%s %s after push: %.3g", label, kinds[k].name, e);
    /* the next group's product while a_{m-4} .. a_m are not known yet (known = m - 4) */
    memset(gpu, 0, 16 * (size_t)N * sizeof *gpu);
    memset(cpu, 0, 16 * (size_t)N * sizeof *cpu);
    se_test_ok(se_tdbem_cuda_sum_start_known(g, m + 1, m - 4, 8, &err), &err, "sum_start_known");
    se_test_ok(se_tdbem_cuda_sum_finish(g, gpu, NULL, &err), &err, "sum_finish");
    se_test_ok(se_tdbem_sum_cpu_known(s, hist, hist_len, m + 1, m - 4, 8, cpu, &err), &err,
               "se_tdbem_sum_cpu_known");
    const double ek = se_test_max_rel(gpu, cpu, 8 * N);
    SE_EXPECT(st, ek <= tol, "%s %s known = m - 4: %.3g", label, kinds[k].name, ek);
    se_tdbem_cuda_destroy(g);
  }
  /* ng 1 is the full s_n: the front reference (time-major history of the same values) */
  se_tdbem_front f = {0};
  se_test_ok(se_tdbem_front_create(s, &f, &err), &err, "se_tdbem_front_create");
  const int64_t n = s->kmax + 6;
  double *past = se_test_calloc((size_t)(hist_len * s->count), sizeof *past);
  for (int64_t m = 0; m < hist_len; m++)
    for (int64_t j = 0; j < s->count; j++)
      past[m * s->count + j] = hist[j * hist_len + m];
  memset(cpu, 0, (size_t)N * sizeof *cpu);
  se_test_ok(se_tdbem_front_sum(&f, past, hist_len, n, cpu, &err), &err, "se_tdbem_front_sum");
  se_tdbem_cuda_t g;
  se_test_ok(
      se_tdbem_cuda_create(0, SE_TDBEM_GPU_CB, 16, N, s->kmax, s->precision, hist_len, &g, &err),
      &err, "create");
  se_test_ok(se_tdbem_cuda_set_interval(g, s, hist, &err), &err, "set_interval");
  memset(gpu, 0, (size_t)N * sizeof *gpu);
  se_test_ok(se_tdbem_cuda_sum_start(g, n, 1, &err), &err, "sum_start");
  se_test_ok(se_tdbem_cuda_sum_finish(g, gpu, NULL, &err), &err, "sum_finish");
  const double e = se_test_max_rel(gpu, cpu, N);
  SE_EXPECT(st, e <= tol, "%s cb ng 1 vs front: %.3g", label, e);
  printf("%s: GPU vs CPU at most %.3g relative, CB vs front %.3g\n", label, worst, e);
  se_tdbem_cuda_destroy(g);
  se_tdbem_front_free(&f);
  free(past);
  free(cpu);
  free(gpu);
  free(hist);
}

/* Argument errors: bad kernel, block width, ng, sizes. */
static void check_errors(se_test_state *st) {
  se_error err = {0};
  se_tdbem_cuda_t g = NULL;
  SE_EXPECT(st, se_tdbem_cuda_create(0, SE_TDBEM_GPU_FB, 8, 100, 10, SE_PRECISION_DOUBLE, 30, &g,
                                     &err) == SE_ERR_ARG,
            "bc 8 accepted");
  se_tdbem_cuda_destroy(g);
  se_test_ok(
      se_tdbem_cuda_create(0, SE_TDBEM_GPU_CB, 16, 100, 10, SE_PRECISION_DOUBLE, 25, &g, &err),
      &err, "create");
  SE_EXPECT(st, se_tdbem_cuda_sum_start(g, 0, 17, &err) == SE_ERR_ARG, "ng 17 accepted");
  SE_EXPECT(st, se_tdbem_cuda_sum_start(g, 0, 16, &err) == SE_ERR_ARG, "short history accepted");
  SE_EXPECT(st, strstr(err.message, "ng = 16") != NULL, "message: %s", err.message);
  se_tdbem_cuda_destroy(g);
}

int main(void) {
  if (se_cuda_device_count() == 0) {
    printf("skipped: no GPU\n");
    return 77;
  }
  se_test_state st = {0};
  for (int p = 0; p < 2; p++) {
    const se_precision prec = p ? SE_PRECISION_SINGLE : SE_PRECISION_DOUBLE;
    const char *pn = p ? "single" : "double";
    char label[64];
    se_tdbem_slices s;
    random_case(&s, prec, 77, 40, 0.6, 40, 11 + p);
    snprintf(label, sizeof label, "%s random N 77 kmax 40", pn);
    check_case(&st, &s, label);
    se_tdbem_slices_free(&s);
    random_case(&s, prec, 130, 9, 0.9, 9, 5 + p);
    snprintf(label, sizeof label, "%s random N 130 kmax 9", pn);
    check_case(&st, &s, label);
    se_tdbem_slices_free(&s);
    /* windows of a slice's thread-block of tiles (float CB) longer than its 128 threads */
    random_case(&s, prec, 77, 200, 0.6, 40, 21 + p);
    snprintf(label, sizeof label, "%s random N 77 kmax 200", pn);
    check_case(&st, &s, label);
    se_tdbem_slices_free(&s);
    se_prep_tdbem_params pp;
    se_prep_tdbem_defaults(&pp);
    pp.n = 300;
    pp.kmax = 40;
    pp.dmax = 15;
    pp.steps = 1;
    pp.precision = prec;
    se_tdbem_case c = {0};
    se_error err = {0};
    se_test_ok(se_prep_tdbem_build(&pp, &c, &err), &err, "se_prep_tdbem_build");
    snprintf(label, sizeof label, "%s sphere N 300 kmax 40", pn);
    check_case(&st, &c.slices, label);
    se_tdbem_case_free(&c);
  }
  /* the radiation of N = 300 000 rows (one warp per row: more rows than 65 535 blocks of 4
   * warps cover) on the device = se_tdbem_radiate_cpu: a worker of 200 slices whose rows are
   * spread over all N, rows past 262 140 among them (a skipped row would keep 0 against the CPU's
   * value); then the CB product of those slices (long chunks of slices in which most
   * thread-blocks of tiles have no records) = se_tdbem_sum_cpu */
  for (int p = 0; p < 2; p++) {
    se_tdbem_slices all;
    sparse_case(&all, p ? SE_PRECISION_SINGLE : SE_PRECISION_DOUBLE, 300000);
    const se_tdbem_slices s = se_tdbem_slices_view(&all, 0, 200);
    const int64_t N = s.n, hist_len = s.kmax + 16;
    double *a = se_test_calloc((size_t)s.count, sizeof *a);
    double *hist = se_test_calloc((size_t)(s.count * hist_len), sizeof *hist);
    double *gpu = se_test_calloc(8 * (size_t)N, sizeof *gpu);
    double *cpu = se_test_calloc(8 * (size_t)N, sizeof *cpu);
    uint64_t rng = 17;
    for (int64_t x = 0; x < s.count * hist_len; x++)
      hist[x] = se_rand_uniform(&rng, -2, 2);
    for (int64_t j = 0; j < s.count; j++)
      a[j] = hist[j * hist_len + 4];
    se_error err = {0};
    se_tdbem_cuda_t g;
    se_test_ok(
        se_tdbem_cuda_create(0, SE_TDBEM_GPU_CB, 16, N, s.kmax, s.precision, hist_len, &g, &err),
        &err, "se_tdbem_cuda_create (N 300 000)");
    se_test_ok(se_tdbem_cuda_set_interval(g, &s, hist, &err), &err, "set_interval (N 300 000)");
    se_test_ok(se_tdbem_cuda_push(g, a, 4, &err), &err, "push (N 300 000)");
    se_test_ok(se_tdbem_cuda_radiate_start(g, 3, &err), &err, "radiate_start (N 300 000)");
    se_test_ok(se_tdbem_cuda_radiate_finish(g, gpu, &err), &err, "radiate_finish (N 300 000)");
    se_test_ok(se_tdbem_radiate_cpu(&s, a, 3, cpu, &err), &err, "se_tdbem_radiate_cpu (N 300 000)");
    int64_t past_cap = 0;
    for (int64_t j = 0; j < s.count; j++)
      past_cap += s.row[s.slice_ptr[j]] >= 262140;
    const double e = se_test_max_rel(gpu, cpu, 3 * N); /* both accumulate into zeros */
    SE_EXPECT(&st, past_cap > 0 && e <= (p ? 1e-5 : 1e-12),
              "%s radiation of N 300 000 rows (%lld row-vectors past row 262 140): %.3g",
              p ? "single" : "double", (long long)past_cap, e);
    memset(gpu, 0, 8 * (size_t)N * sizeof *gpu);
    memset(cpu, 0, 8 * (size_t)N * sizeof *cpu);
    se_test_ok(se_tdbem_cuda_sum_start(g, 5, 8, &err), &err, "sum_start (N 300 000)");
    se_test_ok(se_tdbem_cuda_sum_finish(g, gpu, NULL, &err), &err, "sum_finish (N 300 000)");
    se_test_ok(se_tdbem_sum_cpu(&s, hist, hist_len, 5, 8, cpu, &err), &err,
               "se_tdbem_sum_cpu (N 300 000)");
    const double es = se_test_max_rel(gpu, cpu, 8 * N);
    SE_EXPECT(&st, es <= (p ? 1e-5 : 1e-12), "%s CB product of N 300 000 rows: %.3g",
              p ? "single" : "double", es);
    se_tdbem_cuda_destroy(g);
    free(a);
    free(hist);
    free(gpu);
    free(cpu);
    se_tdbem_slices_free(&all);
  }
  check_errors(&st);
  return se_test_finish(&st, "tdbem_gpu");
}
#endif
