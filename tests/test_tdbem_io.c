/* Tests of the tdbem input and output files and of the synthetic cases (io/input_tdbem.c,
 * io/output_tdbem.c, io/prep_tdbem.c):
 *   test_tdbem_io unit <dir>   generator properties, bounded marching over thousands of steps,
 *                              round trips, every bad-input error (one rank)
 *   test_tdbem_io mpi <dir>    intervals partitioned by stored values on every rank that together
 *                              equal the whole, failures agreed over the ranks, the collective
 *                              output writer (1, 2 or 3 ranks)
 *   test_tdbem_io run <dir>    se_tdbem_run (src/tdbem_run.c) against the reference marching, for
 *                              ng 1, 4 and 16, single and double (1, 2 or 3 ranks)
 *   test_tdbem_io read <file>  reads a file (any valid case) on every rank and prints a summary
 *   test_tdbem_io runfile <input> <output> <ng>   se_tdbem_run on a file (for measurements)
 * Files are made in <dir>; bad ones are good ones changed in memory or with raw HDF5 calls. */
#include <hdf5.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input_tdbem.h"
#include "output_tdbem.h"
#include "partition.h"
#include "prep_tdbem.h"
#include "se_test.h"
#include "se_test_mpi.h"
#include "tdbem_run.h"

/* Aborts the test on a failing call of the test's own HDF5 surgery or allocation. */
#define OK(call)                                                                                   \
  do {                                                                                             \
    if ((call) < 0) {                                                                              \
      fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #call);                            \
      MPI_Abort(MPI_COMM_WORLD, 2);                                                                \
    }                                                                                              \
  } while (0)

/* calloc that aborts the test when out of memory. */
static void *xcalloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (!p) {
    fprintf(stderr, "out of memory\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  return p;
}

/* This process's rank and the number of ranks in MPI_COMM_WORLD. */
static int rank_of_world(void) {
  int r;
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  return r;
}

static int size_of_world(void) {
  int s;
  MPI_Comm_size(MPI_COMM_WORLD, &s);
  return s;
}

/* The small cases: a sphere in single precision written in blocks of 500 values, an airplane in
 * double precision whose lengths use the mixture branch (mean < (dmax + 1) / 2). */
static se_prep_tdbem_params sphere_case(void) {
  se_prep_tdbem_params p;
  se_prep_tdbem_defaults(&p);
  p.n = 48;
  p.kmax = 20;
  p.dmax = 6;
  p.mean_length = 3.5;
  p.steps = 40;
  p.seed = 3;
  p.block_values = 500;
  return p;
}

static se_prep_tdbem_params airplane_case(void) {
  se_prep_tdbem_params p = sphere_case();
  p.shape = SE_PREP_AIRPLANE;
  p.n = 64;
  p.kmax = 30;
  p.dmax = 5;
  p.mean_length = 2.2;
  p.steps = 30;
  p.precision = SE_PRECISION_DOUBLE;
  p.seed = 7;
  p.block_values = 0;
  return p;
}

/* Stored value v of s as a double, and the bytes of one value of precision p. */
static double value_at(const se_tdbem_slices *s, int64_t v) {
  return s->precision == SE_PRECISION_SINGLE ? (double)((const float *)s->val)[v]
                                             : ((const double *)s->val)[v];
}

static size_t value_bytes(se_precision p) { return p == SE_PRECISION_SINGLE ? 4 : 8; }

/* Stores x as value v of s, in its precision. */
static void set_value(se_tdbem_slices *s, int64_t v, double x) {
  if (s->precision == SE_PRECISION_SINGLE)
    ((float *)s->val)[v] = (float)x;
  else
    ((double *)s->val)[v] = x;
}

/* ---- generator properties -------------------------------------------------------------------- */

/* The shape of the generated data and the bounds the marching relies on. */
static void check_generated(se_test_state *st, const se_prep_tdbem_params *p,
                            const se_tdbem_case *c) {
  const se_tdbem_slices *s = &c->slices;
  const int64_t n = c->meta.n;
  SE_EXPECT(st, c->meta.n_rowvectors == n * n, "every pair has a row-vector: %lld",
            (long long)c->meta.n_rowvectors);
  double *row_sum = xcalloc((size_t)n, sizeof *row_sum);
  int64_t longest = 0, bad_end = 0, asym = 0;
  for (int64_t j = 0; j < n; j++)
    for (int64_t r = s->slice_ptr[j]; r < s->slice_ptr[j + 1]; r++) {
      int64_t len = s->val_ptr[r + 1] - s->val_ptr[r], i = s->row[r];
      longest = len > longest ? len : longest;
      bad_end += s->kstart[r] < 1 || s->kstart[r] + len - 1 > c->meta.kmax;
      for (int64_t v = s->val_ptr[r]; v < s->val_ptr[r + 1]; v++)
        row_sum[i] += fabs(value_at(s, v));
      /* symmetry: row i of slice j equals row j of slice i */
      int64_t t = i * n + j;
      int64_t tlen = s->val_ptr[t + 1] - s->val_ptr[t];
      int same = s->row[t] == j && tlen == len && s->kstart[t] == s->kstart[r];
      for (int64_t l = 0; same && l < len; l++)
        same = value_at(s, s->val_ptr[r] + l) == value_at(s, s->val_ptr[t] + l);
      asym += !same;
    }
  SE_EXPECT(st, bad_end == 0, "%lld row-vectors start before 1 or end after kmax",
            (long long)bad_end);
  SE_EXPECT(st, asym == 0, "%lld row-vectors differ from their transposed ones", (long long)asym);
  SE_EXPECT(st, longest <= p->dmax, "longest %lld > dmax %lld", (long long)longest,
            (long long)p->dmax);
  double mean = (double)c->meta.n_values / (double)c->meta.n_rowvectors;
  SE_EXPECT(st, fabs(mean - p->mean_length) < 0.1 * p->mean_length, "mean length %g, asked %g",
            mean, p->mean_length);
  double max_sum = 0;
  for (int64_t i = 0; i < n; i++)
    max_sum = row_sum[i] > max_sum ? row_sum[i] : max_sum;
  SE_EXPECT(st, max_sum <= 0.6 * (1 + 1e-5) && max_sum > 0.5, "max row sum of |M_k| = %g", max_sum);
  /* M0: lower triangle, unit diagonal, off-diagonal row sums <= 0.25 */
  double *off = xcalloc((size_t)n, sizeof *off);
  int64_t upper = 0, diag = 0;
  for (int64_t e = 0; e < c->m0.nnz; e++) {
    upper += c->m0.row[e] < c->m0.col[e];
    if (c->m0.row[e] == c->m0.col[e]) {
      diag++;
      SE_EXPECT(st, c->m0.val[e] == 1.0, "M0 diagonal %g", c->m0.val[e]);
    } else {
      off[c->m0.row[e]] += fabs(c->m0.val[e]);
      off[c->m0.col[e]] += fabs(c->m0.val[e]);
    }
  }
  double max_off = 0;
  for (int64_t i = 0; i < n; i++)
    max_off = off[i] > max_off ? off[i] : max_off;
  SE_EXPECT(st, upper == 0 && diag == n, "M0: %lld above the diagonal, %lld diagonal entries",
            (long long)upper, (long long)diag);
  SE_EXPECT(st, max_off <= 0.25 * (1 + 1e-5) && c->m0.nnz > n,
            "M0 off-diagonal row sums %g, nnz %lld", max_off, (long long)c->m0.nnz);
  free(off);
  free(row_sum);
}

/* Dense Cholesky of M0 (lower triangle given) into l [n x n]; returns 0 when not SPD. */
static int cholesky(const se_tdbem_m0 *m0, double *l) {
  const int64_t n = m0->n;
  memset(l, 0, (size_t)(n * n) * sizeof *l);
  for (int64_t e = 0; e < m0->nnz; e++)
    l[m0->row[e] * n + m0->col[e]] += m0->val[e];
  for (int64_t j = 0; j < n; j++) {
    double d = l[j * n + j];
    for (int64_t k = 0; k < j; k++)
      d -= l[j * n + k] * l[j * n + k];
    if (!(d > 0))
      return 0;
    l[j * n + j] = sqrt(d);
    for (int64_t i = j + 1; i < n; i++) {
      double x = l[i * n + j];
      for (int64_t k = 0; k < j; k++)
        x -= l[i * n + k] * l[j * n + k];
      l[i * n + j] = x / l[j * n + j];
    }
  }
  return 1;
}

/* The reference marching: a[n N + i] for n < steps (plain loops over the slices). */
static int march(const se_tdbem_case *c, int64_t steps, double *a) {
  const int64_t n = c->meta.n;
  const se_tdbem_slices *s = &c->slices;
  double *l = xcalloc((size_t)(n * n), sizeof *l), *b = xcalloc((size_t)n, sizeof *b);
  if (!cholesky(&c->m0, l)) {
    free(l);
    free(b);
    return 0;
  }
  for (int64_t t = 0; t < steps; t++) {
    for (int64_t i = 0; i < n; i++)
      b[i] = c->illumination[t * n + i];
    for (int64_t j = 0; j < n; j++)
      for (int64_t r = s->slice_ptr[j]; r < s->slice_ptr[j + 1]; r++)
        for (int64_t v = s->val_ptr[r]; v < s->val_ptr[r + 1]; v++) {
          int64_t k = s->kstart[r] + (v - s->val_ptr[r]);
          if (k <= t)
            b[s->row[r]] -= value_at(s, v) * a[(t - k) * n + j];
        }
    for (int64_t i = 0; i < n; i++) { /* L y = b, then L^T x = y */
      for (int64_t k = 0; k < i; k++)
        b[i] -= l[i * n + k] * b[k];
      b[i] /= l[i * n + i];
    }
    for (int64_t i = n - 1; i >= 0; i--) {
      for (int64_t k = i + 1; k < n; k++)
        b[i] -= l[k * n + i] * b[k];
      b[i] /= l[i * n + i];
    }
    memcpy(a + t * n, b, (size_t)n * sizeof *b);
  }
  free(b);
  free(l);
  return 1;
}

/* The marching of a generated case stays below the contraction bound over 3000 steps while the
 * plane wave keeps illuminating the body. */
static void test_bounded_marching(se_test_state *st) {
  se_prep_tdbem_params p;
  se_prep_tdbem_defaults(&p);
  p.n = 100;
  p.kmax = 40;
  p.dmax = 10;
  p.mean_length = 6;
  p.steps = 3000;
  se_tdbem_case c;
  se_error err;
  SE_EXPECT(st, se_prep_tdbem_build(&p, &c, &err) == SE_OK, "%s", err.message);
  double *a = xcalloc((size_t)(p.steps * p.n), sizeof *a);
  SE_EXPECT(st, march(&c, p.steps, a), "M0 is not positive definite");
  double lmax = 0, amax = 0, late = 0, mid = 0;
  for (int64_t t = 0; t < p.steps; t++)
    for (int64_t i = 0; i < p.n; i++) {
      double x = fabs(a[t * p.n + i]);
      lmax = fmax(lmax, fabs(c.illumination[t * p.n + i]));
      amax = fmax(amax, isfinite(x) ? x : INFINITY);
      if (t >= 2000)
        late = fmax(late, x);
      else if (t >= 1000)
        mid = fmax(mid, x);
    }
  /* |a|_inf <= |M0^-1| |l| / (1 - |M0^-1| 0.6) with |M0^-1| <= 1 / 0.75 */
  double bound = (lmax / 0.75) / (1 - 0.6 / 0.75);
  SE_EXPECT(st, amax <= bound && amax > 0.1, "max |a_n| = %g over 3000 steps, bound %g", amax,
            bound);
  SE_EXPECT(st, late <= 1.05 * mid && late > 0.5 * mid,
            "max |a_n| %g in steps 1000-2000, %g in 2000-3000", mid, late);
  printf("bounded marching: max |l| %.3f, max |a| %.3f (bound %.3f), steps 1000-2000 %.3f, "
         "2000-3000 %.3f\n",
         lmax, amax, bound, mid, late);
  free(a);
  se_tdbem_case_free(&c);
}

/* kmax derived from --c-dt: the farthest pair's row-vector may end exactly at kmax. */
static void test_c_dt(se_test_state *st) {
  se_prep_tdbem_params p = sphere_case();
  p.kmax = 0;
  p.c_dt = 0.25;
  se_tdbem_case c;
  se_error err;
  SE_EXPECT(st, se_prep_tdbem_build(&p, &c, &err) == SE_OK, "%s", err.message);
  int64_t last = 0;
  double diameter = 0;
  for (int64_t r = 0; r < c.meta.n_rowvectors; r++)
    last = (int64_t)fmax((double)last, (double)(c.slices.kstart[r] + c.slices.val_ptr[r + 1] -
                                                c.slices.val_ptr[r] - 1));
  for (int64_t i = 0; i < c.meta.n; i++)
    for (int64_t j = 0; j < c.meta.n; j++) {
      const double *x = c.positions + 3 * i, *y = c.positions + 3 * j;
      double dx = x[0] - y[0], dy = x[1] - y[1], dz = x[2] - y[2];
      diameter = fmax(diameter, sqrt(dx * dx + dy * dy + dz * dz));
    }
  int64_t need = (int64_t)floor(diameter / 0.25) + p.dmax;
  SE_EXPECT(st, c.meta.kmax == need && last == c.meta.kmax,
            "kmax %lld from c dt 0.25 (diameter %g), "
            "expected %lld; last k %lld",
            (long long)c.meta.kmax, diameter, (long long)need, (long long)last);
  se_tdbem_case_free(&c);
  p.kmax = need - 1; /* too small for c dt 0.25: an argument error naming the need */
  char needle[64];
  snprintf(needle, sizeof needle, "need kmax >= %lld", (long long)need);
  SE_EXPECT(st, se_prep_tdbem_build(&p, &c, &err) == SE_ERR_ARG && strstr(err.message, needle),
            "%s", err.message);
}

/* ---- round trips ----------------------------------------------------------------------------- */

/* Compares slices [s->first, + s->count) read from a file with the reference case. */
static void compare_interval(se_test_state *st, const se_tdbem_case *ref,
                             const se_tdbem_slices *s) {
  const se_tdbem_slices *w = &ref->slices;
  int64_t r0 = w->slice_ptr[s->first], v0 = w->val_ptr[r0];
  int64_t n_rv = w->slice_ptr[s->first + s->count] - r0, n_val = w->val_ptr[r0 + n_rv] - v0;
  SE_EXPECT(st,
            s->n == ref->meta.n && s->kmax == ref->meta.kmax && s->precision == ref->meta.precision,
            "sizes of the interval");
  SE_EXPECT(st, s->n_rowvectors == n_rv && s->n_values == n_val,
            "interval [%lld, +%lld): %lld/%lld "
            "row-vectors, %lld/%lld values",
            (long long)s->first, (long long)s->count, (long long)s->n_rowvectors, (long long)n_rv,
            (long long)s->n_values, (long long)n_val);
  if (s->n_rowvectors != n_rv || s->n_values != n_val)
    return;
  int64_t bad = 0;
  for (int64_t j = 0; j <= s->count; j++)
    bad += s->slice_ptr[j] != w->slice_ptr[s->first + j] - r0;
  for (int64_t r = 0; r < n_rv; r++)
    bad += s->row[r] != w->row[r0 + r] || s->kstart[r] != w->kstart[r0 + r] ||
           s->val_ptr[r] != w->val_ptr[r0 + r] - v0;
  bad += s->val_ptr[n_rv] != n_val;
  size_t vb = value_bytes(s->precision);
  bad += memcmp(s->val, (const char *)w->val + (size_t)v0 * vb, (size_t)n_val * vb) != 0;
  SE_EXPECT(st, bad == 0, "interval [%lld, +%lld): %lld differences", (long long)s->first,
            (long long)s->count, (long long)bad);
}

/* Opens path on comm, partitions its slices by stored values, reads this rank's interval, M0,
 * positions and illumination, and compares all with ref; checks that the intervals tile [0, N)
 * and are balanced. */
static void read_and_compare(se_test_state *st, const char *path, const se_tdbem_case *ref) {
  int rank = rank_of_world(), size = size_of_world();
  se_input_tdbem_t in;
  se_tdbem_meta m;
  se_error err;
  int rc = se_input_tdbem_open(path, MPI_COMM_WORLD, &in, &m, &err);
  SE_EXPECT(st, rc == SE_OK, "%s", err.message);
  if (rc != SE_OK)
    return;
  const se_tdbem_meta *r = &ref->meta;
  SE_EXPECT(st,
            m.n == r->n && m.kmax == r->kmax && m.steps == r->steps &&
                m.precision == r->precision && m.has_positions == 1 &&
                m.n_rowvectors == r->n_rowvectors && m.n_values == r->n_values && m.nnz0 == r->nnz0,
            "meta of %s", path);
  int64_t *values = xcalloc((size_t)m.n, sizeof *values),
          *bounds = xcalloc((size_t)size + 1, sizeof *bounds);
  se_input_tdbem_slice_values(in, values);
  int64_t bad = 0;
  for (int64_t j = 0; j < m.n; j++)
    bad += values[j] != ref->slices.val_ptr[ref->slices.slice_ptr[j + 1]] -
                            ref->slices.val_ptr[ref->slices.slice_ptr[j]];
  SE_EXPECT(st, bad == 0, "%lld slice value counts differ", (long long)bad);
  se_partition_contiguous(values, m.n, size, bounds);
  se_tdbem_slices s;
  rc = se_input_tdbem_read_slices(in, bounds[rank], bounds[rank + 1] - bounds[rank], &s, &err);
  SE_EXPECT(st, rc == SE_OK, "%s", err.message);
  if (rc == SE_OK) {
    compare_interval(st, ref, &s);
    /* together the intervals are the whole: their counts add up to N and NNZ */
    int64_t mine[2] = {s.count, s.n_values}, sum[2];
    MPI_Allreduce(mine, sum, 2, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    SE_EXPECT(st, sum[0] == m.n && sum[1] == m.n_values,
              "intervals add up to %lld slices, %lld values", (long long)sum[0], (long long)sum[1]);
    int64_t most;
    MPI_Allreduce(&s.n_values, &most, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
    SE_EXPECT(st,
              (double)most <= (double)m.n_values / size + 2.0 * (double)m.n_values / (double)m.n,
              "largest interval %lld values of %lld over %d ranks", (long long)most,
              (long long)m.n_values, size);
    se_tdbem_slices_free(&s);
  }
  se_tdbem_m0 m0;
  rc = se_input_tdbem_read_m0(in, &m0, &err);
  SE_EXPECT(st, rc == SE_OK, "%s", err.message);
  if (rc == SE_OK && rank == 0)
    SE_EXPECT(st,
              m0.nnz == r->nnz0 && !memcmp(m0.row, ref->m0.row, (size_t)m0.nnz * 4) &&
                  !memcmp(m0.col, ref->m0.col, (size_t)m0.nnz * 4) &&
                  !memcmp(m0.val, ref->m0.val, (size_t)m0.nnz * 8),
              "M0 differs");
  else if (rc == SE_OK)
    SE_EXPECT(st, m0.nnz == 0 && m0.n == m.n && !m0.row, "M0 on rank %d", rank);
  se_tdbem_m0_free(&m0);
  double *pos = xcalloc((size_t)(3 * m.n), sizeof *pos);
  rc = se_input_tdbem_read_positions(in, pos, &err);
  SE_EXPECT(st, rc == SE_OK && !memcmp(pos, ref->positions, (size_t)(3 * m.n) * 8), "positions: %s",
            rc == SE_OK ? "differ" : err.message);
  free(pos);
  /* illumination in two pieces, rank 0 only */
  double *rows = rank == 0 ? xcalloc((size_t)(m.steps * m.n), sizeof *rows) : NULL;
  int64_t half = m.steps / 2;
  rc = se_input_tdbem_read_illumination(in, 0, half, rows, &err);
  if (rc == SE_OK)
    rc = se_input_tdbem_read_illumination(in, half, m.steps - half, rows ? rows + half * m.n : NULL,
                                          &err);
  SE_EXPECT(st, rc == SE_OK, "%s", err.message);
  if (rank == 0 && rc == SE_OK)
    SE_EXPECT(st, !memcmp(rows, ref->illumination, (size_t)(m.steps * m.n) * 8),
              "illumination differs");
  rc = se_input_tdbem_read_illumination(in, m.steps - 1, 2, rows, &err);
  SE_EXPECT(st, rc == SE_ERR_ARG && strstr(err.message, "not within [0, T"), "%s", err.message);
  free(rows);
  SE_EXPECT(st, se_input_tdbem_close(in, &err) == SE_OK, "%s", err.message);
  free(bounds);
  free(values);
}

/* ---- bad inputs ------------------------------------------------------------------------------ */

/* Reads path completely on every rank (open, this rank's interval of an even split, M0,
 * positions); returns the first failure. */
static int read_everything(const char *path, se_error *err) {
  se_input_tdbem_t in;
  se_tdbem_meta m;
  int rank = rank_of_world(), size = size_of_world();
  int rc = se_input_tdbem_open(path, MPI_COMM_WORLD, &in, &m, err);
  if (rc != SE_OK)
    return rc;
  se_tdbem_slices s;
  int64_t first = m.n * rank / size, last = m.n * (rank + 1) / size;
  rc = se_input_tdbem_read_slices(in, first, last - first, &s, err);
  if (rc == SE_OK) {
    se_tdbem_slices_free(&s);
    se_tdbem_m0 m0;
    rc = se_input_tdbem_read_m0(in, &m0, err);
    se_tdbem_m0_free(&m0);
  }
  if (rc == SE_OK && m.has_positions) {
    double *pos = xcalloc((size_t)(3 * m.n), sizeof *pos);
    rc = se_input_tdbem_read_positions(in, pos, err);
    free(pos);
  }
  if (rc == SE_OK) {
    double *rows = rank == 0 ? xcalloc((size_t)(m.steps * m.n), sizeof *rows) : NULL;
    rc = se_input_tdbem_read_illumination(in, 0, m.steps, rows, err);
    free(rows);
  }
  se_error ignored;
  int crc = se_input_tdbem_close(in, rc == SE_OK ? err : &ignored);
  return rc != SE_OK ? rc : crc;
}

/* Reads path and expects code with a message holding each of the (up to three) needles. */
static void expect_failure(se_test_state *st, const char *path, se_code code, const char *what,
                           const char *n1, const char *n2, const char *n3) {
  se_error err = {SE_OK, ""};
  int rc = read_everything(path, &err);
  const char *needles[3] = {n1, n2, n3};
  int found = 1;
  for (int k = 0; k < 3; k++)
    found &= !needles[k] || strstr(err.message, needles[k]) != NULL;
  SE_EXPECT(st, rc == (int)code && found, "%s: code %d (expected %d), message: %s", what, rc,
            (int)code, err.message);
}

/* The file name <dir>/<name>_r<ranks>.h5 in buf (tests on different rank counts run at once). */
static const char *file_in(char *buf, size_t size, const char *dir, const char *name) {
  snprintf(buf, size, "%s/%s_r%d.h5", dir, name, size_of_world());
  return buf;
}

/* Writes c to path on rank 0 and waits for it. */
static void write_case(const char *path, const se_tdbem_case *c) {
  se_error err;
  if (rank_of_world() == 0 && se_prep_tdbem_write_case(path, c, &err) != SE_OK) {
    fprintf(stderr, "writing %s: %s\n", path, err.message);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* HDF5 surgery on a closed file (rank 0, then everyone waits): deletes obj. */
static void h5_delete(const char *path, const char *obj) {
  if (rank_of_world() == 0) {
    hid_t f;
    OK(f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT));
    OK(H5Ldelete(f, obj, H5P_DEFAULT));
    OK(H5Fclose(f));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* Replaces dataset obj with one of type type and the given shape (zeros, or its old values
 * converted when the shape is unchanged). */
static void h5_replace(const char *path, const char *obj, hid_t type, int ndims,
                       const hsize_t *dims) {
  if (rank_of_world() == 0) {
    hid_t f, d, space;
    OK(f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT));
    OK(d = H5Dopen2(f, obj, H5P_DEFAULT));
    OK(space = H5Dget_space(d));
    hssize_t old_n = H5Sget_simple_extent_npoints(space);
    hsize_t new_n = 1;
    for (int k = 0; k < ndims; k++)
      new_n *= dims[k];
    double *buf = xcalloc((size_t)(old_n > (hssize_t)new_n ? old_n : (hssize_t)new_n), sizeof *buf);
    OK(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf));
    OK(H5Sclose(space));
    OK(H5Dclose(d));
    OK(H5Ldelete(f, obj, H5P_DEFAULT));
    OK(space = H5Screate_simple(ndims, dims, NULL));
    OK(d = H5Dcreate2(f, obj, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    OK(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf));
    OK(H5Dclose(d));
    OK(H5Sclose(space));
    OK(H5Fclose(f));
    free(buf);
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* Replaces attribute name of obj with a string or an int64 one. */
static void h5_set_attr(const char *path, const char *obj, const char *name, const char *text,
                        int64_t value) {
  if (rank_of_world() == 0) {
    hid_t f, o, space, type, a;
    OK(f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT));
    OK(o = H5Oopen(f, obj, H5P_DEFAULT));
    if (H5Aexists(o, name) > 0)
      OK(H5Adelete(o, name));
    OK(space = H5Screate(H5S_SCALAR));
    if (text) {
      OK(type = H5Tcopy(H5T_C_S1));
      OK(H5Tset_size(type, H5T_VARIABLE));
      OK(a = H5Acreate2(o, name, type, space, H5P_DEFAULT, H5P_DEFAULT));
      OK(H5Awrite(a, type, &text));
      OK(H5Tclose(type));
    } else {
      OK(a = H5Acreate2(o, name, H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT));
      OK(H5Awrite(a, H5T_NATIVE_INT64, &value));
    }
    OK(H5Aclose(a));
    OK(H5Sclose(space));
    OK(H5Oclose(o));
    OK(H5Fclose(f));
  }
  MPI_Barrier(MPI_COMM_WORLD);
}

/* Every bad input of docs/input-tdbem.md, each reported with its dataset and index or value. */
static void test_bad_inputs(se_test_state *st, const char *dir) {
  se_prep_tdbem_params p = sphere_case();
  se_tdbem_case c;
  se_error err;
  if (se_prep_tdbem_build(&p, &c, &err) != SE_OK) {
    SE_EXPECT(st, 0, "%s", err.message);
    return;
  }
  char path[512], needle[128];
  file_in(path, sizeof path, dir, "tdbem_bad");
  const int64_t n = c.meta.n, rv = c.meta.n_rowvectors, kmax = c.meta.kmax;
  se_tdbem_slices *s = &c.slices;
  int64_t keep;
  int32_t keep32;

  /* pointers */
  keep = s->slice_ptr[5];
  s->slice_ptr[5] = s->slice_ptr[4] - 1;
  write_case(path, &c);
  snprintf(needle, sizeof needle, "slice_ptr[5] = %lld is less than", (long long)s->slice_ptr[5]);
  expect_failure(st, path, SE_ERR_INPUT, "decreasing slice_ptr", needle, NULL, NULL);
  s->slice_ptr[5] = keep;
  s->slice_ptr[n] = rv - 1;
  write_case(path, &c);
  expect_failure(st, path, SE_ERR_INPUT, "slice_ptr[N] != Rv",
                 "slice_ptr[N = 48] = ", "number of row-vectors", NULL);
  s->slice_ptr[n] = rv;
  s->slice_ptr[0] = 1;
  write_case(path, &c);
  expect_failure(st, path, SE_ERR_INPUT, "slice_ptr[0] != 0", "slice_ptr[0] = 1, expected 0", NULL,
                 NULL);
  s->slice_ptr[0] = 0;
  int64_t r_mid = s->slice_ptr[30] + 7; /* inside slice 30 */
  keep = s->val_ptr[r_mid];
  s->val_ptr[r_mid] = s->val_ptr[r_mid - 1] - 2;
  write_case(path, &c);
  snprintf(needle, sizeof needle, "val_ptr[%lld] = %lld is less than", (long long)r_mid,
           (long long)s->val_ptr[r_mid]);
  expect_failure(st, path, SE_ERR_INPUT, "decreasing val_ptr", needle, "of slice 30", NULL);
  s->val_ptr[r_mid] = keep;
  keep = s->val_ptr[s->slice_ptr[20]];
  s->val_ptr[s->slice_ptr[20]] = s->val_ptr[s->slice_ptr[19]] - 1;
  write_case(path, &c);
  snprintf(needle, sizeof needle, "val_ptr[%lld] = %lld (start of slice 20) is less than",
           (long long)s->slice_ptr[20], (long long)s->val_ptr[s->slice_ptr[20]]);
  expect_failure(st, path, SE_ERR_INPUT, "decreasing val_ptr at a slice start", needle, NULL, NULL);
  s->val_ptr[s->slice_ptr[20]] = keep;
  s->val_ptr[rv] += 1;
  write_case(path, &c);
  expect_failure(st, path, SE_ERR_INPUT, "val_ptr[Rv] != NNZ", "is not the number of values",
                 "/tdbem/slices/val", NULL);
  s->val_ptr[rv] -= 1;

  /* non-finite values: a slice value and an illumination entry */
  const int64_t v_bad = s->val_ptr[s->slice_ptr[40]] + 2;
  const double keep_v = value_at(s, v_bad);
  set_value(s, v_bad, NAN);
  write_case(path, &c);
  snprintf(needle, sizeof needle, "/tdbem/slices/val[%lld] = nan", (long long)v_bad);
  expect_failure(st, path, SE_ERR_INPUT, "slice value NaN", needle, "is not finite", path);
  set_value(s, v_bad, keep_v);
  const double keep_i = c.illumination[3 * n + 5];
  c.illumination[3 * n + 5] = -INFINITY;
  write_case(path, &c);
  expect_failure(st, path, SE_ERR_INPUT, "illumination -inf",
                 "/tdbem/illumination[3][5] = -inf (time step, unknown) is not finite", path, NULL);
  c.illumination[3 * n + 5] = keep_i;

  /* kstart and rows */
  int64_t r_bad = s->slice_ptr[40] + 3;
  keep32 = s->kstart[r_bad];
  s->kstart[r_bad] = 0;
  write_case(path, &c);
  snprintf(needle, sizeof needle, "kstart[%lld] = 0 (a row-vector of slice 40) is out of range",
           (long long)r_bad);
  expect_failure(st, path, SE_ERR_INPUT, "kstart 0", needle, "[1, kmax] = [1, 20]", NULL);
  s->kstart[r_bad] = (int32_t)kmax + 1;
  write_case(path, &c);
  snprintf(needle, sizeof needle, "kstart[%lld] = %lld", (long long)r_bad, (long long)kmax + 1);
  expect_failure(st, path, SE_ERR_INPUT, "kstart beyond kmax", needle, "out of range", NULL);
  s->kstart[r_bad] = (int32_t)kmax; /* starts at kmax: ends beyond unless one value */
  int64_t len = s->val_ptr[r_bad + 1] - s->val_ptr[r_bad];
  write_case(path, &c);
  if (len > 1) {
    snprintf(needle, sizeof needle, "ends at k = %lld beyond kmax = %lld",
             (long long)(kmax + len - 1), (long long)kmax);
    expect_failure(st, path, SE_ERR_INPUT, "row-vector beyond kmax", needle, "of slice 40", NULL);
  }
  s->kstart[r_bad] = keep32;
  keep32 = s->row[r_bad];
  s->row[r_bad] = (int32_t)n;
  write_case(path, &c);
  snprintf(needle, sizeof needle, "row[%lld] = %lld (a row-vector of slice 40) is out of range",
           (long long)r_bad, (long long)n);
  expect_failure(st, path, SE_ERR_INPUT, "row = N", needle, "[0, N - 1] = [0, 47]", NULL);
  s->row[r_bad] = -1;
  write_case(path, &c);
  snprintf(needle, sizeof needle, "row[%lld] = -1", (long long)r_bad);
  expect_failure(st, path, SE_ERR_INPUT, "row = -1", needle, NULL, NULL);
  s->row[r_bad] = keep32;

  /* M0 */
  int64_t e_off = -1, e_diag = -1;
  for (int64_t e = 0; e < c.m0.nnz && (e_off < 0 || e_diag < 0); e++) {
    if (c.m0.row[e] != c.m0.col[e] && e_off < 0)
      e_off = e;
    if (c.m0.row[e] == c.m0.col[e] && c.m0.row[e] > 10 && e_diag < 0)
      e_diag = e;
  }
  int32_t r0 = c.m0.row[e_off], c0 = c.m0.col[e_off];
  c.m0.row[e_off] = c0;
  c.m0.col[e_off] = r0;
  write_case(path, &c);
  snprintf(
      needle, sizeof needle,
      "M0 entry %lld (/tdbem/M0/row[%lld] = %d, /tdbem/M0/col[%lld] = %d) is above the diagonal",
      (long long)e_off, (long long)e_off, c0, (long long)e_off, r0);
  expect_failure(st, path, SE_ERR_INPUT, "M0 above the diagonal", needle, NULL, NULL);
  c.m0.row[e_off] = r0;
  c.m0.col[e_off] = c0;
  c.m0.row[e_diag] = (int32_t)n + 5;
  write_case(path, &c);
  snprintf(needle, sizeof needle, "/tdbem/M0/row[%lld] = %lld", (long long)e_diag,
           (long long)n + 5);
  expect_failure(st, path, SE_ERR_INPUT, "M0 row out of range", needle, "out of range", NULL);
  c.m0.row[e_diag] = c.m0.col[e_diag];
  c.m0.val[e_diag] = -1;
  write_case(path, &c);
  snprintf(needle, sizeof needle, "/tdbem/M0/val[%lld] = -1 is the diagonal entry of row %d",
           (long long)e_diag, c.m0.row[e_diag]);
  expect_failure(st, path, SE_ERR_INPUT, "M0 negative diagonal", needle, NULL, NULL);
  c.m0.val[e_diag] = 1;
  c.m0.col[e_diag] = c.m0.row[e_diag] - 1; /* the diagonal entry becomes an off-diagonal one */
  write_case(path, &c);
  snprintf(needle, sizeof needle, "M0 has no diagonal entry in row %d", c.m0.row[e_diag]);
  expect_failure(st, path, SE_ERR_INPUT, "M0 without a diagonal entry", needle, NULL, NULL);
  c.m0.col[e_diag] = c.m0.row[e_diag];
  /* A non-finite off-diagonal value (fuzz campaign): refused by the reader with the file and the
   * dataset, not later by the M0 solver's check without them. */
  double keep_val = c.m0.val[e_off];
  c.m0.val[e_off] = INFINITY;
  write_case(path, &c);
  snprintf(needle, sizeof needle, "/tdbem/M0/val[%lld] = inf (M0 entry of row %d, col %d) is not finite",
           (long long)e_off, c.m0.row[e_off], c.m0.col[e_off]);
  expect_failure(st, path, SE_ERR_INPUT, "M0 value infinite", needle, path, NULL);
  c.m0.val[e_off] = keep_val;

  /* dtypes, shapes, missing datasets and attributes: surgery on the good file */
  write_case(path, &c);
  expect_failure(st, path, SE_OK, "the restored file", NULL, NULL, NULL);
  static const char *const values[] = {"/tdbem/slices/val", "/tdbem/M0/val"};
  for (int k = 0; k < 2; k++) {
    hsize_t dim = k == 0 ? (hsize_t)c.meta.n_values : (hsize_t)c.meta.nnz0;
    h5_replace(path, values[k], H5T_IEEE_F64LE, 1, &dim);
    snprintf(needle, sizeof needle, "%s has 64-bit floating-point values", values[k]);
    expect_failure(st, path, SE_ERR_INPUT, "float64 values in a single case", needle,
                   "precision = \"single\" needs float32", NULL);
    write_case(path, &c);
  }
  hsize_t dims2[2] = {(hsize_t)c.meta.steps, (hsize_t)n};
  h5_replace(path, "/tdbem/illumination", H5T_IEEE_F64LE, 2, dims2);
  expect_failure(st, path, SE_ERR_INPUT, "float64 illumination", "/tdbem/illumination has 64-bit",
                 "needs float32", NULL);
  write_case(path, &c);
  dims2[1] = (hsize_t)n + 1;
  h5_replace(path, "/tdbem/illumination", H5T_IEEE_F32LE, 2, dims2);
  expect_failure(st, path, SE_ERR_INPUT, "illumination shape",
                 "/tdbem/illumination has shape [40 x 49], expected [T x N", "[40 x 48]", NULL);
  write_case(path, &c);
  dims2[0] = (hsize_t)n;
  dims2[1] = 2;
  h5_replace(path, "/tdbem/positions", H5T_IEEE_F64LE, 2, dims2);
  expect_failure(st, path, SE_ERR_INPUT, "positions shape", "/tdbem/positions has shape [48 x 2]",
                 NULL, NULL);
  write_case(path, &c);
  hsize_t dim = (hsize_t)rv - 1;
  h5_replace(path, "/tdbem/slices/kstart", H5T_STD_I32LE, 1, &dim);
  expect_failure(st, path, SE_ERR_INPUT, "kstart length", "/tdbem/slices/kstart has 2303 entries",
                 "2304", NULL);
  write_case(path, &c);
  dim = (hsize_t)rv;
  h5_replace(path, "/tdbem/slices/val_ptr", H5T_STD_I64LE, 1, &dim);
  expect_failure(st, path, SE_ERR_INPUT, "val_ptr length", "/tdbem/slices/val_ptr has 2304 entries",
                 "2305", NULL);
  write_case(path, &c);
  h5_replace(path, "/tdbem/slices/row", H5T_IEEE_F32LE, 1, &dim);
  expect_failure(st, path, SE_ERR_INPUT, "float rows",
                 "/tdbem/slices/row has floating-point type, expected integer", NULL, NULL);
  write_case(path, &c);
  static const char *const required[] = {
      "/tdbem/slices/slice_ptr", "/tdbem/slices/row", "/tdbem/slices/kstart",
      "/tdbem/slices/val_ptr",   "/tdbem/slices/val", "/tdbem/M0/row",
      "/tdbem/M0/col",           "/tdbem/M0/val",     "/tdbem/illumination"};
  for (size_t k = 0; k < sizeof required / sizeof required[0]; k++) {
    h5_delete(path, required[k]);
    snprintf(needle, sizeof needle, "required dataset %s is missing", required[k]);
    expect_failure(st, path, SE_ERR_INPUT, required[k], needle, NULL, NULL);
    write_case(path, &c);
  }
  h5_delete(path, "/tdbem/positions"); /* optional */
  expect_failure(st, path, SE_OK, "no positions", NULL, NULL, NULL);
  write_case(path, &c);
  h5_set_attr(path, "/tdbem", "precision", "half", 0);
  expect_failure(st, path, SE_ERR_INPUT, "precision half",
                 "precision = \"half\" is not \"single\" or \"double\"", NULL, NULL);
  h5_set_attr(path, "/tdbem", "precision", "double", 0);
  expect_failure(st, path, SE_ERR_INPUT, "precision double, float32 values",
                 "/tdbem/slices/val has 32-bit", "needs float64", NULL);
  write_case(path, &c);
  h5_set_attr(path, "/tdbem", "kmax", NULL, 0);
  expect_failure(st, path, SE_ERR_INPUT, "kmax 0", "/tdbem attribute kmax = 0 is not in [1,", NULL,
                 NULL);
  h5_set_attr(path, "/tdbem", "kmax", NULL, 5);
  expect_failure(st, path, SE_ERR_INPUT, "kmax 5", "out of range: kstart is in [1, kmax] = [1, 5]",
                 NULL, NULL);
  write_case(path, &c);
  h5_set_attr(path, "/tdbem", "N", NULL, 47);
  expect_failure(st, path, SE_ERR_INPUT, "N 47",
                 "/tdbem/slices/slice_ptr has 49 entries, expected N + 1 = 48", NULL, NULL);
  write_case(path, &c);
  h5_set_attr(path, "/run", "steps", NULL, -1);
  expect_failure(st, path, SE_ERR_INPUT, "steps -1", "/run attribute steps = -1 is negative", NULL,
                 NULL);
  write_case(path, &c);
  h5_set_attr(path, "/", "workload", "neurons", 0);
  expect_failure(st, path, SE_ERR_INPUT, "workload neurons",
                 "workload = \"neurons\" is not \"tdbem\"", NULL, NULL);
  write_case(path, &c);
  h5_delete(path, "/run");
  expect_failure(st, path, SE_ERR_INPUT, "no /run", "required /run attribute steps is missing",
                 NULL, NULL);
  expect_failure(st, "/nonexistent/tdbem.h5", SE_ERR_IO, "no file",
                 "cannot open '/nonexistent/tdbem.h5'", NULL, NULL);
  se_tdbem_case_free(&c);
}

/* ---- the output writer ----------------------------------------------------------------------- */

/* The value of row t, column col in the output tests (exact in float). */
static double output_value(int64_t t, int64_t col) { return (double)(t * 1000 + col) + 0.25; }

/* Writes a [T x N] state on every rank (rank 1 of 3 without columns), reads it back on rank 0. */
static void test_output(se_test_state *st, const char *dir, se_precision precision) {
  int rank = rank_of_world(), size = size_of_world();
  const int64_t n = 23, steps = 37;
  int64_t first = n * rank / size, last = n * (rank + 1) / size;
  if (size == 3) { /* rank 1 empty, rank 2 the rest */
    first = rank == 0 ? 0 : (rank == 1 ? 10 : 10);
    last = rank == 0 ? 10 : (rank == 1 ? 10 : n);
  }
  char path[512];
  file_in(path, sizeof path, dir,
          precision == SE_PRECISION_SINGLE ? "tdbem_out_single" : "tdbem_out_double");
  se_output_tdbem_spec spec = {.n = n,
                               .steps = steps,
                               .precision = precision,
                               .local_count = last - first,
                               .buffer_steps = 5 + rank,
                               .flush_seconds = 1e-9};
  se_output_tdbem_t out;
  se_error err;
  int rc = se_output_tdbem_open(path, MPI_COMM_WORLD, &spec, &out, &err);
  SE_EXPECT(st, rc == SE_OK, "%s", err.message);
  if (rc != SE_OK)
    return;
  double *local = xcalloc((size_t)n, sizeof *local);
  for (int64_t t = 0; t < steps && rc == SE_OK; t++) {
    for (int64_t c = first; c < last; c++)
      local[c - first] = output_value(t, c);
    rc = se_output_tdbem_append(out, local, &err);
  }
  SE_EXPECT(st, rc == SE_OK, "%s", err.message);
  SE_EXPECT(st,
            se_output_tdbem_meta_string(out, "workload", "tdbem", &err) == SE_OK &&
                se_output_tdbem_meta_int(out, "ranks", size, &err) == SE_OK &&
                se_output_tdbem_meta_double(out, "time_run_s", 1.5, &err) == SE_OK,
            "%s", err.message);
  SE_EXPECT(st, se_output_tdbem_close(out, 1, &err) == SE_OK, "%s", err.message);
  if (rank == 0) {
    hid_t f, d, t, a;
    OK(f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT));
    OK(d = H5Dopen2(f, "/tdbem/state", H5P_DEFAULT));
    OK(t = H5Dget_type(d));
    SE_EXPECT(st, H5Tget_size(t) == value_bytes(precision), "state dtype size %zu", H5Tget_size(t));
    double *all = xcalloc((size_t)(n * steps), sizeof *all);
    OK(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, all));
    int64_t bad = 0;
    for (int64_t r = 0; r < steps; r++)
      for (int64_t c = 0; c < n; c++)
        bad += all[r * n + c] != output_value(r, c);
    SE_EXPECT(st, bad == 0, "%lld state values differ", (long long)bad);
    int64_t ranks = 0;
    OK(a = H5Aopen_by_name(f, "/simengine", "ranks", H5P_DEFAULT, H5P_DEFAULT));
    OK(H5Aread(a, H5T_NATIVE_INT64, &ranks));
    SE_EXPECT(st, ranks == size, "/simengine ranks = %lld", (long long)ranks);
    OK(H5Aclose(a));
    OK(H5Tclose(t));
    OK(H5Dclose(d));
    OK(H5Fclose(f));
    free(all);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  /* failure paths: a rank that fails discards the file; rows missing at close */
  char failed[512];
  file_in(failed, sizeof failed, dir, "tdbem_out_failed");
  if (se_output_tdbem_open(failed, MPI_COMM_WORLD, &spec, &out, &err) == SE_OK) {
    for (int64_t c = first; c < last; c++)
      local[c - first] = 1;
    se_output_tdbem_append(out, local, &err);
    rc = se_output_tdbem_close(out, rank != size - 1, &err);
    SE_EXPECT(st, rc == SE_OK, "closing a discarded output: %s", err.message);
    FILE *gone = fopen(failed, "rb");
    char tmp[520];
    snprintf(tmp, sizeof tmp, "%s.tmp", failed);
    FILE *gone_tmp = fopen(tmp, "rb");
    SE_EXPECT(st, !gone && !gone_tmp, "a discarded output left %s", gone ? failed : tmp);
    if (gone)
      fclose(gone);
    if (gone_tmp)
      fclose(gone_tmp);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  rc = se_output_tdbem_open(failed, MPI_COMM_WORLD, &spec, &out, &err);
  if (rc == SE_OK)
    rc = se_output_tdbem_close(out, 1, &err);
  SE_EXPECT(st, rc == SE_ERR_ARG && strstr(err.message, "0 of 37 rows appended at close"), "%s",
            err.message);
  spec.local_count -= rank == 0; /* the columns no longer add up to N */
  rc = se_output_tdbem_open(failed, MPI_COMM_WORLD, &spec, &out, &err);
  SE_EXPECT(st, rc == SE_ERR_ARG && strstr(err.message, "columns add up to 22, not N = 23"), "%s",
            err.message);
  free(local);
}

/* ---- the modes ------------------------------------------------------------------------------- */

/* The slices of a file whose integer datasets are not int32/int64 (int64 rows, int16 kstarts,
 * uint64 value pointers): the reader converts them with HDF5 instead of reading them directly
 * (io/input_tdbem.c read_range), with the same result and the same range checks. */
static void test_converted_types(se_test_state *st, const char *dir) {
  se_prep_tdbem_params p = sphere_case();
  se_tdbem_case c;
  se_error err;
  if (se_prep_tdbem_build(&p, &c, &err) != SE_OK) {
    SE_EXPECT(st, 0, "%s", err.message);
    return;
  }
  char path[512], needle[128];
  file_in(path, sizeof path, dir, "tdbem_converted");
  const hsize_t rv = (hsize_t)c.meta.n_rowvectors, rv1 = rv + 1;
  for (int bad = 0; bad < 2; bad++) {
    const int64_t r_bad = c.slices.slice_ptr[40] + 3;
    const int32_t keep = c.slices.row[r_bad];
    if (bad)
      c.slices.row[r_bad] = (int32_t)c.meta.n;
    write_case(path, &c);
    h5_replace(path, "/tdbem/slices/row", H5T_STD_I64LE, 1, &rv);
    h5_replace(path, "/tdbem/slices/kstart", H5T_STD_I16LE, 1, &rv);
    h5_replace(path, "/tdbem/slices/val_ptr", H5T_STD_U64LE, 1, &rv1);
    if (bad) {
      snprintf(needle, sizeof needle, "row[%lld] = %lld (a row-vector of slice 40) is out of range",
               (long long)r_bad, (long long)c.meta.n);
      expect_failure(st, path, SE_ERR_INPUT, "converted rows: row = N", needle, NULL, NULL);
    } else {
      read_and_compare(st, path, &c);
    }
    c.slices.row[r_bad] = keep;
  }
  se_tdbem_case_free(&c);
}

/* Writes the case of p (streaming) on rank 0 to <dir>/<name>.h5, builds it in memory on every
 * rank and compares the two through the reader. */
static void round_trip(se_test_state *st, const char *dir, const char *name,
                       const se_prep_tdbem_params *p) {
  char path[512];
  file_in(path, sizeof path, dir, name);
  se_error err;
  int rc = SE_OK;
  se_prep_tdbem_summary sum;
  if (rank_of_world() == 0)
    rc = se_prep_tdbem_write(path, p, &sum, &err);
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  SE_EXPECT(st, rc == SE_OK, "writing %s: %s", path,
            rank_of_world() == 0 ? err.message : "(rank 0)");
  se_tdbem_case c;
  SE_EXPECT(st, se_prep_tdbem_build(p, &c, &err) == SE_OK, "%s", err.message);
  if (rc == SE_OK) {
    if (rank_of_world() == 0)
      SE_EXPECT(
          st, sum.n_values == c.meta.n_values && sum.nnz0 == c.meta.nnz0 && sum.kmax == c.meta.kmax,
          "summary of %s", path);
    read_and_compare(st, path, &c);
  }
  if (rank_of_world() == 0)
    check_generated(st, p, &c);
  se_tdbem_case_free(&c);
}

/* A bad case whose error lies in the last rank's interval: every rank returns it, prefixed with
 * the failing rank on the others. */
static void test_agreed_failure(se_test_state *st, const char *dir) {
  se_prep_tdbem_params p = sphere_case();
  se_tdbem_case c;
  se_error err;
  SE_EXPECT(st, se_prep_tdbem_build(&p, &c, &err) == SE_OK, "%s", err.message);
  int64_t r = c.slices.slice_ptr[c.meta.n - 1] + 2; /* in the last slice */
  c.slices.kstart[r] = 0;
  char path[512], needle[128];
  file_in(path, sizeof path, dir, "tdbem_bad_last");
  write_case(path, &c);
  snprintf(needle, sizeof needle, "kstart[%lld] = 0 (a row-vector of slice 47)", (long long)r);
  int rank = rank_of_world(), size = size_of_world();
  char prefix[32];
  snprintf(prefix, sizeof prefix, "on rank %d: ", size - 1);
  expect_failure(st, path, SE_ERR_INPUT, "kstart 0 in the last rank's slices", needle,
                 rank != size - 1 ? prefix : NULL, NULL);
  se_tdbem_case_free(&c);
}

/* Runs the case of p with se_tdbem_run on every rank and compares /tdbem/state with the reference
 * marching (relative to max |a|: 1e-5 in single precision, the output being float, 1e-12 in
 * double). */
static void test_run_case(se_test_state *st, const char *dir, const char *name,
                          const se_prep_tdbem_params *p, int ng) {
  char input[512], output[520];
  file_in(input, sizeof input, dir, name);
  snprintf(output, sizeof output, "%s.out.h5", input);
  se_error err;
  int rc = SE_OK;
  if (rank_of_world() == 0)
    rc = se_prep_tdbem_write(input, p, NULL, &err);
  MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (rc != SE_OK) {
    SE_EXPECT(st, 0, "writing %s: %s", input, rank_of_world() == 0 ? err.message : "(rank 0)");
    return;
  }
  rc = se_tdbem_run(input, output, MPI_COMM_WORLD, ng, SE_ORDER_ORIGINAL, &err);
  SE_EXPECT(st, rc == SE_OK, "se_tdbem_run %s ng %d: %s", input, ng, err.message);
  if (rc != SE_OK || rank_of_world() != 0)
    return;
  se_tdbem_case c;
  SE_EXPECT(st, se_prep_tdbem_build(p, &c, &err) == SE_OK, "%s", err.message);
  const int64_t n = c.meta.n, steps = c.meta.steps;
  double *want = xcalloc((size_t)(n * steps), sizeof *want),
         *got = xcalloc((size_t)(n * steps), sizeof *got);
  SE_EXPECT(st, march(&c, steps, want), "M0 is not positive definite");
  hid_t f, d;
  OK(f = H5Fopen(output, H5F_ACC_RDONLY, H5P_DEFAULT));
  OK(d = H5Dopen2(f, "/tdbem/state", H5P_DEFAULT));
  OK(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, got));
  OK(H5Dclose(d));
  OK(H5Fclose(f));
  double scale = 0, diff = 0;
  for (int64_t v = 0; v < n * steps; v++) {
    scale = fmax(scale, fabs(want[v]));
    diff = fmax(diff, isfinite(got[v]) ? fabs(got[v] - want[v]) : INFINITY);
  }
  double tol = p->precision == SE_PRECISION_SINGLE ? 1e-5 : 1e-12;
  SE_EXPECT(st, diff <= tol * scale && scale > 0.1,
            "%s ng %d on %d ranks: max |a - reference| = %g, max |a| %g", name, ng, size_of_world(),
            diff, scale);
  printf(
      "se_tdbem_run %s, ng %d, %d rank(s): max |a| %.4f, max difference from the reference %.3g\n",
      name, ng, size_of_world(), scale, diff);
  free(got);
  free(want);
  se_tdbem_case_free(&c);
}

/* se_tdbem_run: the three cases, and its failures (bad ng, bad input: nothing written). */
static void test_run(se_test_state *st, const char *dir) {
  se_prep_tdbem_params sphere = sphere_case(), plane = airplane_case(), longer = sphere_case();
  longer.steps = 400;
  longer.n = 60;
  test_run_case(st, dir, "tdbem_run_sphere", &sphere, 1);
  test_run_case(st, dir, "tdbem_run_sphere4", &sphere, 4);
  test_run_case(st, dir, "tdbem_run_airplane", &plane, 16);
  test_run_case(st, dir, "tdbem_run_long", &longer, 3);
  char input[512], output[512];
  file_in(input, sizeof input, dir, "tdbem_run_sphere");
  file_in(output, sizeof output, dir, "tdbem_run_never");
  se_error err;
  int rc = se_tdbem_run(input, output, MPI_COMM_WORLD, 17, SE_ORDER_ORIGINAL, &err);
  SE_EXPECT(st, rc == SE_ERR_ARG && strstr(err.message, "ng = 17, expected 1 .. 16"), "%s",
            err.message);
  se_tdbem_case c;
  SE_EXPECT(st, se_prep_tdbem_build(&sphere, &c, &err) == SE_OK, "%s", err.message);
  c.slices.kstart[c.slices.slice_ptr[c.meta.n - 1]] = 0;
  file_in(input, sizeof input, dir, "tdbem_run_bad");
  write_case(input, &c);
  rc = se_tdbem_run(input, output, MPI_COMM_WORLD, 2, SE_ORDER_ORIGINAL, &err);
  SE_EXPECT(st, rc == SE_ERR_INPUT && strstr(err.message, "/tdbem/slices/kstart["), "%s",
            err.message);
  FILE *never = fopen(output, "rb");
  SE_EXPECT(st, !never, "a failed run left %s", output);
  if (never)
    fclose(never);
  se_tdbem_case_free(&c);
}

/* test_tdbem_io read <file>: reads everything on every rank, prints a summary on rank 0. */
static int read_mode(const char *path) {
  se_input_tdbem_t in;
  se_tdbem_meta m;
  se_error err;
  double t0 = MPI_Wtime();
  int rc = se_input_tdbem_open(path, MPI_COMM_WORLD, &in, &m, &err);
  if (rc != SE_OK) {
    if (rank_of_world() == 0)
      fprintf(stderr, "%s\n", err.message);
    return 1;
  }
  int rank = rank_of_world(), size = size_of_world();
  int64_t *values = xcalloc((size_t)m.n, sizeof *values),
          *bounds = xcalloc((size_t)size + 1, sizeof *bounds);
  se_input_tdbem_slice_values(in, values);
  se_partition_contiguous(values, m.n, size, bounds);
  double t1 = MPI_Wtime();
  se_tdbem_slices s;
  rc = se_input_tdbem_read_slices(in, bounds[rank], bounds[rank + 1] - bounds[rank], &s, &err);
  double t2 = MPI_Wtime();
  if (rc == SE_OK) {
    int64_t mine = s.n_values, most;
    MPI_Reduce(&mine, &most, 1, MPI_INT64_T, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0)
      printf("%s: N %lld, kmax %lld, T %lld, %s, %lld row-vectors, %lld values, M0 %lld entries\n"
             "  open %.2f s, slices %.2f s (%.2f GB/s over %d ranks; largest interval %.1f%% of "
             "the values)\n",
             path, (long long)m.n, (long long)m.kmax, (long long)m.steps,
             m.precision == SE_PRECISION_SINGLE ? "single" : "double", (long long)m.n_rowvectors,
             (long long)m.n_values, (long long)m.nnz0, t1 - t0, t2 - t1,
             ((double)m.n_values * (m.precision == SE_PRECISION_SINGLE ? 4 : 8) +
              16.0 * (double)m.n_rowvectors) /
                 (t2 - t1) / 1e9,
             size, 100.0 * (double)most / (double)m.n_values);
    se_tdbem_slices_free(&s);
    se_tdbem_m0 m0;
    rc = se_input_tdbem_read_m0(in, &m0, &err);
    se_tdbem_m0_free(&m0);
  }
  if (rc != SE_OK && rank == 0)
    fprintf(stderr, "%s\n", err.message);
  se_input_tdbem_close(in, &err);
  free(bounds);
  free(values);
  return rc != SE_OK;
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  if (argc == 5 && strcmp(argv[1], "runfile") == 0) {
    se_error err;
    int rc = se_tdbem_run(argv[2], argv[3], MPI_COMM_WORLD, atoi(argv[4]), SE_ORDER_ORIGINAL,
                          &err);
    if (rc != SE_OK && rank_of_world() == 0)
      fprintf(stderr, "%s\n", err.message);
    MPI_Finalize();
    return rc != SE_OK;
  }
  if (argc != 3) {
    fprintf(stderr,
            "usage: test_tdbem_io unit|mpi|run <dir> | read <file> | runfile <in> <out> <ng>\n");
    MPI_Finalize();
    return 2;
  }
  se_test_state st = {0, 0};
  int code;
  if (strcmp(argv[1], "read") == 0) {
    code = read_mode(argv[2]);
  } else if (strcmp(argv[1], "run") == 0) {
    test_run(&st, argv[2]);
    code = se_test_finish_all(&st, "test_tdbem_io run", MPI_COMM_WORLD);
  } else {
    const char *dir = argv[2];
    se_prep_tdbem_params sphere = sphere_case(), plane = airplane_case();
    if (strcmp(argv[1], "unit") == 0) {
      test_bounded_marching(&st);
      test_c_dt(&st);
      test_bad_inputs(&st, dir);
      test_converted_types(&st, dir);
    }
    round_trip(&st, dir, "tdbem_sphere", &sphere);
    round_trip(&st, dir, "tdbem_airplane", &plane);
    if (strcmp(argv[1], "mpi") == 0)
      test_agreed_failure(&st, dir);
    test_output(&st, dir, SE_PRECISION_SINGLE);
    test_output(&st, dir, SE_PRECISION_DOUBLE);
    code = se_test_finish_all(&st, "test_tdbem_io", MPI_COMM_WORLD);
  }
  MPI_Finalize();
  return code;
}
