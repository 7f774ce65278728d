/* The tdbem summation, radiation and orderings (src/tdbem_sum_cpu.c, src/tdbem_ordering.c;
 * docs/tdbem.md) against the front-ordered reference (src/tdbem_front_ref.c), on random cases
 * built in memory:
 *  (1) marching loops: every ng steps the multi-vector/vector product gives ng vectors, each
 *      completed by the radiation of the previous solves; with a diagonal M0 ("solve"
 *      a = (l - s) / diag) every s_n and a_n equals the front marching (sum_k M_k a_{n-k} with
 *      SpMVs) within 1e-12 relative (double) and 1e-5 (single values), for ng = 1 .. 16 and
 *      T not a multiple of ng, including the steps n < kmax; the case cut into intervals; 1 and
 *      2 (and 3) threads;
 *  (2) orderings: valid permutations, the known Morton and Hilbert orders on small grids, the
 *      Hilbert curve's unit steps, ties, the quality score by hand and on a sphere point cloud
 *      (space-filling curves above a random order);
 *  (3) ordering invariance: marching a renumbered case and un-permuting gives the original run;
 *  and the argument and input errors. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "se_test.h"
#include "tdbem_front_ref.h"
#include "tdbem_ordering.h"
#include "tdbem_sum_cpu.h"
#include "test_models.h"

/* Growable row-vector arrays while a case is built. */
typedef struct builder {
  se_tdbem_slices *s;
  int64_t cap_rv, cap_val;
  double *val; /* double while building; converted at the end */
} builder;

static void builder_start(builder *b, se_tdbem_slices *s, se_precision precision, int64_t n) {
  memset(s, 0, sizeof *s);
  s->precision = precision;
  s->n = n;
  s->count = n;
  s->slice_ptr = se_test_calloc((size_t)n + 1, sizeof *s->slice_ptr);
  b->s = s;
  b->cap_rv = 1024;
  b->cap_val = 8192;
  s->row = se_test_calloc((size_t)b->cap_rv, sizeof *s->row);
  s->kstart = se_test_calloc((size_t)b->cap_rv, sizeof *s->kstart);
  s->val_ptr = se_test_calloc((size_t)b->cap_rv + 1, sizeof *s->val_ptr);
  b->val = se_test_calloc((size_t)b->cap_val, sizeof *b->val);
}

static void *xrealloc(void *p, size_t n, size_t size) {
  p = realloc(p, n * size);
  if (!p)
    abort();
  return p;
}

/* Appends a row-vector (row i, first k ks, d values) to the slice being built. */
static double *builder_push(builder *b, int32_t i, int32_t ks, int64_t d) {
  se_tdbem_slices *s = b->s;
  if (s->n_rowvectors == b->cap_rv) {
    b->cap_rv *= 2;
    s->row = xrealloc(s->row, (size_t)b->cap_rv, sizeof *s->row);
    s->kstart = xrealloc(s->kstart, (size_t)b->cap_rv, sizeof *s->kstart);
    s->val_ptr = xrealloc(s->val_ptr, (size_t)b->cap_rv + 1, sizeof *s->val_ptr);
  }
  while (s->n_values + d > b->cap_val) {
    b->cap_val *= 2;
    b->val = xrealloc(b->val, (size_t)b->cap_val, sizeof *b->val);
  }
  const int64_t r = s->n_rowvectors++;
  s->row[r] = i;
  s->kstart[r] = ks;
  s->val_ptr[r + 1] = s->val_ptr[r] + d;
  s->n_values += d;
  return b->val + s->val_ptr[r];
}

/* Closes slice j (its row-vectors are the ones pushed since the previous slice). */
static void builder_end_slice(builder *b, int64_t j) {
  b->s->slice_ptr[j + 1] = b->s->n_rowvectors;
}

/* Sets kmax and stores the values in the case's precision. */
static void builder_finish(builder *b, int64_t kmax) {
  se_tdbem_slices *s = b->s;
  s->kmax = kmax;
  if (s->precision == SE_PRECISION_SINGLE) {
    float *f = se_test_calloc((size_t)s->n_values, sizeof *f);
    for (int64_t v = 0; v < s->n_values; v++)
      f[v] = (float)b->val[v];
    free(b->val);
    s->val = f;
  } else {
    s->val = b->val;
  }
}

/* A random case: some slices empty, rows i = 7 mod 13 empty everywhere, the others present with
 * probability density, random kstart in [1, kmax] and lengths up to a per-slice maximum. */
static void random_case(se_tdbem_slices *s, se_precision precision, int64_t n, int64_t kmax,
                        double density, uint64_t seed) {
  uint64_t rng = seed;
  builder b;
  builder_start(&b, s, precision, n);
  for (int64_t j = 0; j < n; j++) {
    const int empty = j % 11 == 5 || se_rand_uniform(&rng, 0, 1) < 0.05;
    const int64_t longest = 1 + (int64_t)(se_rand_next(&rng) % (uint64_t)kmax);
    for (int32_t i = 0; i < n && !empty; i++) {
      if (i % 13 == 7 || se_rand_uniform(&rng, 0, 1) >= density)
        continue;
      const int32_t ks = 1 + (int32_t)(se_rand_next(&rng) % (uint64_t)kmax);
      const int64_t room = kmax - ks + 1 < longest ? kmax - ks + 1 : longest;
      const int64_t d = 1 + (int64_t)(se_rand_next(&rng) % (uint64_t)room);
      double *v = builder_push(&b, i, ks, d);
      for (int64_t t = 0; t < d; t++)
        v[t] = se_rand_uniform(&rng, -1, 1);
    }
    builder_end_slice(&b, j);
  }
  builder_finish(&b, kmax);
}

/* Random points on the unit sphere. */
static double *sphere_points(int64_t n, uint64_t seed) {
  uint64_t rng = seed;
  double *pos = se_test_calloc((size_t)n * 3, sizeof *pos);
  for (int64_t i = 0; i < n; i++) {
    const double z = se_rand_uniform(&rng, -1, 1), phi = se_rand_uniform(&rng, 0, 2 * M_PI);
    const double r = sqrt(1 - z * z);
    pos[3 * i] = r * cos(phi);
    pos[3 * i + 1] = r * sin(phi);
    pos[3 * i + 2] = z;
  }
  return pos;
}

/* A case from geometry, as a BEM mesh gives it: every unknown j reaches every i when the wave
 * has travelled their distance d, k from 1 + floor(d / h) for `pass` steps. */
static void geometry_case(se_tdbem_slices *s, se_precision precision, const double *pos,
                          int64_t n, double h, int pass, uint64_t seed) {
  uint64_t rng = seed;
  builder b;
  builder_start(&b, s, precision, n);
  int64_t kmax = 1;
  for (int64_t j = 0; j < n; j++) {
    for (int32_t i = 0; i < n; i++) {
      const double dx = pos[3 * i] - pos[3 * j], dy = pos[3 * i + 1] - pos[3 * j + 1],
                   dz = pos[3 * i + 2] - pos[3 * j + 2];
      const double d = sqrt(dx * dx + dy * dy + dz * dz);
      const int32_t ks = 1 + (int32_t)floor(d / h);
      double *v = builder_push(&b, i, ks, pass);
      for (int t = 0; t < pass; t++)
        v[t] = se_rand_uniform(&rng, -1, 1) / (1 + d);
      kmax = ks + pass - 1 > kmax ? ks + pass - 1 : kmax;
    }
    builder_end_slice(&b, j);
  }
  builder_finish(&b, kmax);
}

/* A diagonal M0 that keeps the marching bounded: diag_i = 1 + 2 sum_{j,k} |M_k(i, j)|. */
static double *bounding_diagonal(const se_tdbem_slices *s) {
  double *diag = se_test_calloc((size_t)s->n, sizeof *diag);
  for (int64_t r = 0; r < s->n_rowvectors; r++)
    for (int64_t v = s->val_ptr[r]; v < s->val_ptr[r + 1]; v++)
      diag[s->row[r]] += 2 * fabs(s->precision == SE_PRECISION_SINGLE
                                      ? (double)((const float *)s->val)[v]
                                      : ((const double *)s->val)[v]);
  for (int64_t i = 0; i < s->n; i++)
    diag[i] += 1;
  return diag;
}

static double *random_illumination(int64_t steps, int64_t n, uint64_t seed) {
  uint64_t rng = seed;
  double *l = se_test_calloc((size_t)(steps * n), sizeof *l);
  for (int64_t e = 0; e < steps * n; e++)
    l[e] = se_rand_uniform(&rng, -1, 1);
  return l;
}

/* The marching loop with the slice kernels over the intervals iv[0 .. niv-1] (together every
 * slice once): every ng steps the ng summation vectors, then per step the completed s_m, the
 * diagonal solve, the history and the radiation into the vectors still open (from the near
 * field of each interval when near is set). Fills a_all[m * N + i] and s_all[m * N + i]. */
static void march_slices(const se_tdbem_slices *iv, int niv, int ng, int near, int64_t steps,
                         const double *l, const double *diag, double *a_all, double *s_all) {
  se_error err = {0};
  const int64_t N = iv[0].n, hist_len = iv[0].kmax + ng;
  double *hist[8];
  se_tdbem_slices radiating[8];
  for (int v = 0; v < niv; v++) {
    if (near && ng > 1)
      se_test_ok(se_tdbem_slices_near(&iv[v], ng - 1, &radiating[v], &err), &err, "near field");
    else
      radiating[v] = iv[v];
    hist[v] = se_test_calloc((size_t)(iv[v].count * hist_len), sizeof(double));
    for (int64_t e = 0; e < iv[v].count * hist_len; e++)
      hist[v][e] = NAN; /* any read of a slot never written shows */
  }
  double *out = se_test_calloc((size_t)(ng * N), sizeof *out);
  for (int64_t n0 = 0; n0 < steps; n0 += ng) {
    const int g = steps - n0 < ng ? (int)(steps - n0) : ng;
    memset(out, 0, (size_t)(g * N) * sizeof *out);
    for (int v = 0; v < niv; v++)
      se_test_ok(se_tdbem_sum_cpu(&iv[v], hist[v], hist_len, n0, g, out, &err), &err, "sum");
    for (int q = 0; q < g; q++) {
      const int64_t m = n0 + q;
      double *a = a_all + m * N;
      for (int64_t i = 0; i < N; i++) {
        s_all[m * N + i] = out[q * N + i];
        a[i] = (l[m * N + i] - out[q * N + i]) / diag[i];
      }
      for (int v = 0; v < niv; v++) {
        for (int64_t j = 0; j < iv[v].count; j++)
          hist[v][j * hist_len + m % hist_len] = a[iv[v].first + j];
        se_test_ok(se_tdbem_radiate_cpu(&radiating[v], a + iv[v].first, g - 1 - q,
                                        out + (q + 1) * N, &err),
                   &err, "radiate");
      }
    }
  }
  for (int v = 0; v < niv; v++) {
    free(hist[v]);
    if (near && ng > 1)
      se_tdbem_slices_free(&radiating[v]);
  }
  free(out);
}

/* The front-ordered marching: s_n = sum_k M_k a_{n-k} by SpMVs, the same diagonal solve. */
static void march_front(const se_tdbem_slices *s, int64_t steps, const double *l,
                        const double *diag, double *a_all, double *s_all) {
  se_error err = {0};
  se_tdbem_front f;
  const int rc = se_tdbem_front_create(s, &f, &err);
  if (rc != SE_OK)
    se_tdbem_front_free(&f);
  se_test_ok(rc, &err, "front create");
  const int64_t N = s->n, past_len = s->kmax;
  double *past = se_test_calloc((size_t)(past_len * N), sizeof *past);
  for (int64_t e = 0; e < past_len * N; e++)
    past[e] = NAN;
  for (int64_t n = 0; n < steps; n++) {
    double *sn = s_all + n * N, *a = a_all + n * N;
    memset(sn, 0, (size_t)N * sizeof *sn);
    se_test_ok(se_tdbem_front_sum(&f, past, past_len, n, sn, &err), &err, "front sum");
    for (int64_t i = 0; i < N; i++) {
      a[i] = (l[n * N + i] - sn[i]) / diag[i];
      past[(n % past_len) * N + i] = a[i];
    }
  }
  free(past);
  se_tdbem_front_free(&f);
}

/* The largest relative difference over the steps: se_test_max_rel of each step (NaN wins). */
static double max_rel(const double *x, const double *ref, int64_t steps, int64_t n) {
  double worst = 0;
  for (int64_t m = 0; m < steps; m++) {
    const double rel = se_test_max_rel(x + m * n, ref + m * n, n);
    worst = rel > worst || isnan(rel) ? rel : worst;
  }
  return worst;
}

/* The case cut into niv consecutive intervals (identity renumbering of each part). */
static void cut_intervals(const se_tdbem_slices *s, int niv, se_tdbem_slices *iv) {
  se_error err = {0};
  int64_t *identity = se_test_calloc((size_t)s->n, sizeof *identity);
  for (int64_t i = 0; i < s->n; i++)
    identity[i] = i;
  for (int v = 0; v < niv; v++) {
    const int64_t lo = s->n * v / niv, hi = s->n * (v + 1) / niv;
    se_test_ok(se_tdbem_slices_permute(s, identity, lo, hi - lo, &iv[v], &err), &err, "cut");
  }
  free(identity);
}

/* The near field of a view (slices [j0, j0 + count) of s, indices into s's arrays) equals those
 * slices of s's near field: the same row-vectors, kstart and truncated values. */
static void check_near_of_view(se_test_state *st, const se_tdbem_slices *s, int p_max) {
  se_error err = {0};
  se_tdbem_slices whole, part;
  const int64_t j0 = s->count / 3, count = s->count / 3;
  const se_tdbem_slices v = se_tdbem_slices_view(s, j0, count);
  se_test_ok(se_tdbem_slices_near(s, p_max, &whole, &err), &err, "near field");
  se_test_ok(se_tdbem_slices_near(&v, p_max, &part, &err), &err, "near field of a view");
  const size_t size = s->precision == SE_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
  const int64_t r0 = whole.slice_ptr[j0], rows = whole.slice_ptr[j0 + count] - r0;
  int same = part.n_rowvectors == rows && count > 0 && rows > 0;
  for (int64_t r = 0; same && r < rows; r++) {
    const int64_t d = part.val_ptr[r + 1] - part.val_ptr[r];
    same =
        part.row[r] == whole.row[r0 + r] && part.kstart[r] == whole.kstart[r0 + r] &&
        d == whole.val_ptr[r0 + r + 1] - whole.val_ptr[r0 + r] &&
        !memcmp((const char *)part.val + (size_t)part.val_ptr[r] * size,
                (const char *)whole.val + (size_t)whole.val_ptr[r0 + r] * size, (size_t)d * size);
  }
  SE_EXPECT(st, same, "near field of slices [%lld, %lld) differs from the whole's (%lld rows)",
            (long long)j0, (long long)(j0 + count), (long long)rows);
  se_tdbem_slices_free(&whole);
  se_tdbem_slices_free(&part);
}

/* (1) every ng against the front marching, whole and in intervals; thread counts. */
static void test_marching(se_test_state *st) {
  const struct {
    int64_t n, kmax;
    double density;
  } cases[] = {{30, 5, 0.6}, {97, 60, 0.25}, {300, 23, 0.12}, {160, 41, 0.35}, {250, 60, 0.5}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
    for (int prec = 0; prec < 2; prec++) {
      const se_precision precision = prec ? SE_PRECISION_SINGLE : SE_PRECISION_DOUBLE;
      const double tol = prec ? 1e-5 : 1e-12;
      se_tdbem_slices s;
      random_case(&s, precision, cases[c].n, cases[c].kmax, cases[c].density, 1000 + c);
      const int64_t N = s.n, steps = s.kmax + 37;
      double *diag = bounding_diagonal(&s), *l = random_illumination(steps, N, 77 + c);
      double *a_ref = se_test_calloc((size_t)(steps * N), sizeof(double));
      double *s_ref = se_test_calloc((size_t)(steps * N), sizeof(double));
      double *a = se_test_calloc((size_t)(steps * N), sizeof(double));
      double *sv = se_test_calloc((size_t)(steps * N), sizeof(double));
      march_front(&s, steps, l, diag, a_ref, s_ref);
      check_near_of_view(st, &s, 7);
      double worst = 0;
      double *a_near = se_test_calloc((size_t)(steps * N), sizeof(double));
      double *s_near = se_test_calloc((size_t)(steps * N), sizeof(double));
      for (int ng = 1; ng <= 16; ng++) {
        march_slices(&s, 1, ng, 0, steps, l, diag, a, sv);
        const double ea = max_rel(a, a_ref, steps, N), es = max_rel(sv, s_ref, steps, N);
        SE_EXPECT(st, ea <= tol && es <= tol,
                  "case %zu %s ng %d: a %.3g, s %.3g relative to the front marching", c,
                  prec ? "single" : "double", ng, ea, es);
        worst = fmax(worst, fmax(ea, es));
        if (ng % 5 != 2)
          continue;
        /* radiating from the near field only: bitwise the same */
        march_slices(&s, 1, ng, 1, steps, l, diag, a_near, s_near);
        SE_EXPECT(st,
                  !memcmp(a_near, a, (size_t)(steps * N) * sizeof *a) &&
                      !memcmp(s_near, sv, (size_t)(steps * N) * sizeof *sv),
                  "case %zu ng %d: the near-field radiation differs", c, ng);
      }
      free(a_near);
      free(s_near);
      /* the case held in 3 intervals, as ranks or workers hold it: the same sums */
      se_tdbem_slices iv[3];
      cut_intervals(&s, 3, iv);
      double *a3 = se_test_calloc((size_t)(steps * N), sizeof(double));
      double *s3 = se_test_calloc((size_t)(steps * N), sizeof(double));
      for (int ng = 3; ng <= 16; ng += 13) {
        march_slices(&s, 1, ng, 0, steps, l, diag, a, sv);
        march_slices(iv, 3, ng, 1, steps, l, diag, a3, s3);
        SE_EXPECT(st, max_rel(a3, a, steps, N) <= 1e-13 && max_rel(s3, sv, steps, N) <= 1e-13,
                  "case %zu ng %d: 3 intervals differ from the whole", c, ng);
      }
      /* 2 and 3 threads against 1 (bitwise in fact: every entry sums in slice order) */
      const int threads_before = omp_get_max_threads();
      for (int ng = 1; ng <= 16; ng += 15) {
        omp_set_num_threads(1);
        march_slices(&s, 1, ng, 0, steps, l, diag, a, sv);
        for (int threads = 2; threads <= 3; threads++) {
          omp_set_num_threads(threads);
          march_slices(&s, 1, ng, 0, steps, l, diag, a3, s3);
          const double e = fmax(max_rel(a3, a, steps, N), max_rel(s3, sv, steps, N));
          SE_EXPECT(st, e <= 1e-13, "case %zu ng %d: %d threads differ from 1 by %.3g", c, ng,
                    threads, e);
        }
      }
      omp_set_num_threads(threads_before);
      printf("case %zu (%s, N %lld, kmax %lld, %lld row-vectors, %lld values, %lld steps): "
             "ng 1..16 within %.2g of the front marching\n",
             c, prec ? "single" : "double", (long long)N, (long long)s.kmax,
             (long long)s.n_rowvectors, (long long)s.n_values, (long long)steps, worst);
      for (int v = 0; v < 3; v++)
        se_tdbem_slices_free(&iv[v]);
      free(a3);
      free(s3);
      free(a);
      free(sv);
      free(a_ref);
      free(s_ref);
      free(diag);
      free(l);
      se_tdbem_slices_free(&s);
    }
}

/* Positions of the points of an m x m x m grid (z fastest), listed in a shuffled order;
 * where[i] = the grid index of listed point i. */
static double *grid_points(int m, int64_t *where, uint64_t seed) {
  const int64_t n = (int64_t)m * m * m;
  uint64_t rng = seed;
  for (int64_t i = 0; i < n; i++)
    where[i] = i;
  for (int64_t i = n - 1; i > 0; i--) {
    const int64_t k = (int64_t)(se_rand_next(&rng) % (uint64_t)(i + 1)), t = where[i];
    where[i] = where[k];
    where[k] = t;
  }
  double *pos = se_test_calloc((size_t)n * 3, sizeof *pos);
  for (int64_t i = 0; i < n; i++) {
    pos[3 * i] = 0.5 + 2.0 * (double)(where[i] / (m * m)); /* spacing 2, offset: any box */
    pos[3 * i + 1] = 0.5 + 2.0 * (double)(where[i] / m % m);
    pos[3 * i + 2] = 0.5 + 2.0 * (double)(where[i] % m);
  }
  return pos;
}

/* Whether perm is a permutation of 0 .. n-1. */
static int is_permutation(const int64_t *perm, int64_t n) {
  se_error err = {0};
  int64_t *inv = se_test_calloc((size_t)n, sizeof *inv);
  const int rc = se_tdbem_permutation_invert(perm, n, inv, &err);
  free(inv);
  return rc == SE_OK;
}

/* (2) the curves on grids, ties, validity, the quality score. */
static void test_orderings(se_test_state *st) {
  se_error err = {0};
  /* 2 x 2 x 2: Morton is the binary count of (x, y, z); Hilbert is the Gray code with x slowest */
  const int morton2[8][3] = {{0, 0, 0}, {0, 0, 1}, {0, 1, 0}, {0, 1, 1},
                             {1, 0, 0}, {1, 0, 1}, {1, 1, 0}, {1, 1, 1}};
  const int hilbert2[8][3] = {{0, 0, 0}, {0, 0, 1}, {0, 1, 1}, {0, 1, 0},
                              {1, 1, 0}, {1, 1, 1}, {1, 0, 1}, {1, 0, 0}};
  int64_t where[512], perm[512];
  double *pos = grid_points(2, where, 5);
  for (int kind = SE_ORDER_MORTON; kind <= SE_ORDER_HILBERT; kind++) {
    se_test_ok(se_tdbem_ordering(pos, 8, (se_ordering)kind, perm, &err), &err, "ordering 2^3");
    for (int u = 0; u < 8; u++) {
      const int(*expect)[3] = kind == SE_ORDER_MORTON ? morton2 : hilbert2;
      const int64_t g = where[perm[u]];
      SE_EXPECT(st, g == expect[u][0] * 4 + expect[u][1] * 2 + expect[u][2],
                "%s 2x2x2 position %d: grid point %lld", kind == SE_ORDER_MORTON ? "Morton" :
                "Hilbert", u, (long long)g);
    }
  }
  free(pos);
  /* a 4 x 4 square (z = 0): the Z order, y fastest */
  {
    const int zorder[16][2] = {{0, 0}, {0, 1}, {1, 0}, {1, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3},
                               {2, 0}, {2, 1}, {3, 0}, {3, 1}, {2, 2}, {2, 3}, {3, 2}, {3, 3}};
    double square[16 * 3];
    for (int i = 0; i < 16; i++) { /* listed backwards */
      square[3 * i] = (15 - i) / 4;
      square[3 * i + 1] = (15 - i) % 4;
      square[3 * i + 2] = 7.0;
    }
    se_test_ok(se_tdbem_ordering(square, 16, SE_ORDER_MORTON, perm, &err), &err, "Morton square");
    for (int u = 0; u < 16; u++) {
      const int64_t g = 15 - perm[u];
      SE_EXPECT(st, g / 4 == zorder[u][0] && g % 4 == zorder[u][1],
                "Morton 4x4 position %d: (%lld, %lld)", u, (long long)(g / 4),
                (long long)(g % 4));
    }
  }
  /* 4^3 and 8^3: the Hilbert order visits every cell by unit steps from the origin; Morton
   * follows the interleaved bits */
  for (int m = 4; m <= 8; m += 4) {
    const int64_t n = (int64_t)m * m * m;
    pos = grid_points(m, where, 17 + m);
    se_test_ok(se_tdbem_ordering(pos, n, SE_ORDER_HILBERT, perm, &err), &err, "Hilbert grid");
    SE_EXPECT(st, is_permutation(perm, n), "Hilbert %d^3: not a permutation", m);
    SE_EXPECT(st, where[perm[0]] == 0, "Hilbert %d^3 starts at grid point %lld", m,
              (long long)where[perm[0]]);
    int unit = 1;
    for (int64_t u = 0; u + 1 < n; u++) {
      const int64_t g0 = where[perm[u]], g1 = where[perm[u + 1]];
      const int64_t step = llabs(g0 / (m * m) - g1 / (m * m)) +
                           llabs(g0 / m % m - g1 / m % m) + llabs(g0 % m - g1 % m);
      unit &= step == 1;
    }
    SE_EXPECT(st, unit, "Hilbert %d^3: a step longer than one cell", m);
    se_test_ok(se_tdbem_ordering(pos, n, SE_ORDER_MORTON, perm, &err), &err, "Morton grid");
    int morton = 1;
    for (int64_t u = 0; u < n; u++) {
      const int64_t g = where[perm[u]], x = g / (m * m), y = g / m % m, z = g % m;
      int64_t key = 0;
      for (int b = m == 4 ? 1 : 2; b >= 0; b--)
        key = key * 8 + ((x >> b) & 1) * 4 + ((y >> b) & 1) * 2 + ((z >> b) & 1);
      morton &= key == u;
    }
    SE_EXPECT(st, morton, "Morton %d^3: not the bit-interleaved order", m);
    free(pos);
  }
  /* ties (equal positions) keep the original order; one point everywhere is the identity */
  {
    double same[6 * 3];
    for (int i = 0; i < 6; i++) {
      same[3 * i] = i == 2 || i == 5 ? 1.0 : -1.0 - i;
      same[3 * i + 1] = i == 2 || i == 5 ? 1.0 : 0.5 * i;
      same[3 * i + 2] = 0.0;
    }
    for (int kind = SE_ORDER_MORTON; kind <= SE_ORDER_HILBERT; kind++) {
      se_test_ok(se_tdbem_ordering(same, 6, (se_ordering)kind, perm, &err), &err, "ties");
      int at = -1;
      for (int u = 0; u < 6; u++)
        at = perm[u] == 2 ? u : at;
      SE_EXPECT(st, at >= 0 && at < 5 && perm[at + 1] == 5, "tie: 2 then 5 expected");
      for (int i = 0; i < 6; i++)
        same[3 * i] = same[3 * i + 1] = same[3 * i + 2] = 3.0;
      se_test_ok(se_tdbem_ordering(same, 6, (se_ordering)kind, perm, &err), &err, "one point");
      int identity = 1;
      for (int u = 0; u < 6; u++)
        identity &= perm[u] == u;
      SE_EXPECT(st, identity, "one point: not the identity");
      for (int i = 0; i < 6; i++) { /* restore the tie case for the next kind */
        same[3 * i] = i == 2 || i == 5 ? 1.0 : -1.0 - i;
        same[3 * i + 1] = i == 2 || i == 5 ? 1.0 : 0.5 * i;
        same[3 * i + 2] = 0.0;
      }
    }
  }
  /* the original ordering needs no positions */
  se_test_ok(se_tdbem_ordering(NULL, 5, SE_ORDER_ORIGINAL, perm, &err), &err, "original");
  SE_EXPECT(st, perm[0] == 0 && perm[4] == 4, "original: not the identity");
  /* the score by hand: slice 0 pairs share 2 and 0 values -> (4 + 0) / 2; slice 1 has one
   * row-vector (left out); slice 2 shares 2 -> 4; average 3 */
  {
    int64_t slice_ptr[] = {0, 3, 4, 6}, val_ptr[] = {0, 3, 6, 7, 8, 10, 12};
    int32_t row[] = {0, 1, 2, 3, 0, 2}, kstart[] = {1, 2, 10, 4, 1, 1};
    double val[12] = {0};
    se_tdbem_slices s = {SE_PRECISION_DOUBLE, 4, 12, 0, 3, 6, 12, slice_ptr, row, kstart,
                         val_ptr, val};
    double sum = 0;
    int64_t scored = 0;
    se_test_ok(se_tdbem_ordering_quality(&s, &sum, &scored, &err), &err, "quality");
    SE_EXPECT(st, scored == 2 && sum == 6.0, "quality by hand: sum %g over %lld slices", sum,
              (long long)scored);
  }
  /* a sphere point cloud in random order: the curves score higher */
  {
    const int64_t n = 400;
    double *sphere = sphere_points(n, 99);
    se_tdbem_slices s;
    geometry_case(&s, SE_PRECISION_DOUBLE, sphere, n, 0.1, 4, 7);
    int64_t *p = se_test_calloc((size_t)n, sizeof *p);
    double score[3];
    const char *names[3] = {"random (original)", "Morton", "Hilbert"};
    for (int kind = 0; kind < 3; kind++) {
      se_test_ok(se_tdbem_ordering(sphere, n, (se_ordering)kind, p, &err), &err, "sphere ordering");
      SE_EXPECT(st, is_permutation(p, n), "sphere %s: not a permutation", names[kind]);
      se_tdbem_slices t;
      se_test_ok(se_tdbem_slices_permute(&s, p, 0, n, &t, &err), &err, "permute");
      double sum = 0;
      int64_t scored = 0;
      se_test_ok(se_tdbem_ordering_quality(&t, &sum, &scored, &err), &err, "quality");
      score[kind] = sum / (double)scored;
      se_tdbem_slices_free(&t);
    }
    printf("ordering quality, %lld random points on a sphere, 4 values per row-vector "
           "(best 16): %s %.2f, Morton %.2f, Hilbert %.2f\n",
           (long long)n, names[0], score[0], score[1], score[2]);
    SE_EXPECT(st, score[1] > 2 * score[0] && score[2] > 2 * score[0],
              "sphere scores: original %g, Morton %g, Hilbert %g", score[0], score[1], score[2]);
    free(p);
    free(sphere);
    se_tdbem_slices_free(&s);
  }
}

/* (3) marching a renumbered case, then un-permuting, gives the original run. */
static void test_invariance(se_test_state *st) {
  se_error err = {0};
  const int64_t n = 180, steps = 45;
  double *pos = sphere_points(n, 4242);
  for (int prec = 0; prec < 2; prec++) {
    se_tdbem_slices s;
    geometry_case(&s, prec ? SE_PRECISION_SINGLE : SE_PRECISION_DOUBLE, pos, n, 0.15, 5, 11);
    double *diag = bounding_diagonal(&s), *l = random_illumination(steps, n, 5);
    double *a0 = se_test_calloc((size_t)(steps * n), sizeof(double));
    double *s0 = se_test_calloc((size_t)(steps * n), sizeof(double));
    double *a1 = se_test_calloc((size_t)(steps * n), sizeof(double));
    double *s1 = se_test_calloc((size_t)(steps * n), sizeof(double));
    double *l1 = se_test_calloc((size_t)(steps * n), sizeof(double));
    double *diag1 = se_test_calloc((size_t)n, sizeof(double));
    double *back = se_test_calloc((size_t)(steps * n), sizeof(double));
    int64_t *perm = se_test_calloc((size_t)n, sizeof *perm);
    for (int kind = 0; kind < 4; kind++) {
      if (kind < 3) {
        se_test_ok(se_tdbem_ordering(pos, n, (se_ordering)kind, perm, &err), &err, "ordering");
      } else { /* a random renumbering */
        uint64_t rng = 3;
        for (int64_t i = 0; i < n; i++)
          perm[i] = i;
        for (int64_t i = n - 1; i > 0; i--) {
          const int64_t k = (int64_t)(se_rand_next(&rng) % (uint64_t)(i + 1)), t = perm[i];
          perm[i] = perm[k];
          perm[k] = t;
        }
      }
      se_tdbem_slices t;
      se_test_ok(se_tdbem_slices_permute(&s, perm, 0, n, &t, &err), &err, "permute");
      se_tdbem_vector_permute(perm, n, diag, diag1);
      for (int64_t m = 0; m < steps; m++)
        se_tdbem_vector_permute(perm, n, l + m * n, l1 + m * n);
      for (int ng = 1; ng <= 16; ng += 7) {
        march_slices(&s, 1, ng, 0, steps, l, diag, a0, s0);
        march_slices(&t, 1, ng, 1, steps, l1, diag1, a1, s1);
        for (int64_t m = 0; m < steps; m++)
          se_tdbem_vector_unpermute(perm, n, a1 + m * n, back + m * n);
        const double e = max_rel(back, a0, steps, n);
        SE_EXPECT(st, e <= 1e-12, "%s ordering %d, ng %d: un-permuted run differs by %.3g",
                  prec ? "single" : "double", kind, ng, e);
      }
      se_tdbem_slices_free(&t);
    }
    free(perm);
    free(back);
    free(diag1);
    free(l1);
    free(s1);
    free(a1);
    free(s0);
    free(a0);
    free(l);
    free(diag);
    se_tdbem_slices_free(&s);
  }
  free(pos);
}

/* Argument and input errors name what is wrong and change nothing they should not. */
static void test_errors(se_test_state *st) {
  se_error err = {0};
  se_tdbem_slices s;
  random_case(&s, SE_PRECISION_DOUBLE, 20, 6, 0.5, 3);
  double hist[20 * 30] = {0}, out[16 * 20] = {0};
  SE_EXPECT(st, se_tdbem_sum_cpu(&s, hist, 30, 0, 0, out, &err) == SE_ERR_ARG, "ng 0");
  SE_EXPECT(st, se_tdbem_sum_cpu(&s, hist, 30, 0, 17, out, &err) == SE_ERR_ARG, "ng 17");
  SE_EXPECT(st, se_tdbem_sum_cpu(&s, hist, 9, 0, 4, out, &err) == SE_ERR_ARG &&
                    strstr(err.message, "history length 9"),
            "short history: %s", err.message);
  SE_EXPECT(st, se_tdbem_radiate_cpu(&s, hist, -1, out, &err) == SE_ERR_ARG, "p_max -1");
  const int32_t keep = s.kstart[0];
  s.kstart[0] = 0;
  SE_EXPECT(st, se_tdbem_sum_cpu(&s, hist, 30, 3, 2, out, &err) == SE_ERR_INPUT,
            "kstart 0 in the sum: %s", err.message);
  SE_EXPECT(st, se_tdbem_radiate_cpu(&s, hist, 2, out, &err) == SE_ERR_INPUT,
            "kstart 0 in the radiation: %s", err.message);
  se_tdbem_slices near;
  SE_EXPECT(st, se_tdbem_slices_near(&s, 3, &near, &err) == SE_ERR_INPUT && near.row == NULL,
            "kstart 0 in the near field: %s", err.message);
  SE_EXPECT(st, se_tdbem_slices_near(&s, 0, &near, &err) == SE_ERR_ARG, "near field p_max 0");
  se_tdbem_front f;
  SE_EXPECT(st,
            se_tdbem_front_create(&s, &f, &err) == SE_ERR_INPUT && strstr(err.message, "k from 0"),
            "kstart 0 in the front: %s", err.message);
  se_tdbem_front_free(&f);
  s.kstart[0] = keep;
  int64_t perm[20], inv[20];
  for (int i = 0; i < 20; i++)
    perm[i] = i;
  perm[3] = 7;
  SE_EXPECT(st, se_tdbem_permutation_invert(perm, 20, inv, &err) == SE_ERR_ARG &&
                    strstr(err.message, "both 7"),
            "repeated entry: %s", err.message);
  perm[3] = 3;
  se_tdbem_slices part, t;
  memset(&t, 0, sizeof t);
  se_test_ok(se_tdbem_slices_permute(&s, perm, 5, 10, &part, &err), &err, "part");
  SE_EXPECT(st, se_tdbem_slices_permute(&part, perm, 0, 20, &t, &err) == SE_ERR_ARG &&
                    t.slice_ptr == NULL,
            "permute from missing slices: %s", err.message);
  double positions[6] = {0, 0, 0, NAN, 1, 1};
  SE_EXPECT(st, se_tdbem_ordering(positions, 2, SE_ORDER_HILBERT, perm, &err) == SE_ERR_INPUT,
            "NaN position: %s", err.message);
  SE_EXPECT(st, se_tdbem_ordering(NULL, 2, SE_ORDER_MORTON, perm, &err) == SE_ERR_ARG,
            "Morton without positions");
  se_tdbem_slices_free(&part);
  se_tdbem_slices_free(&s);
}

int main(void) {
  se_test_state st = {0, 0};
  const double t0 = omp_get_wtime();
  test_marching(&st);
  test_orderings(&st);
  test_invariance(&st);
  test_errors(&st);
  printf("%.1f s\n", omp_get_wtime() - t0);
  return se_test_finish(&st, "tdbem_sum");
}
