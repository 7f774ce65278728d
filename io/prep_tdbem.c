/* Synthetic TD-BEM cases (io/prep_tdbem.h, docs/prep.md "tdbem"): the geometry, the model values,
 * the streaming writer and the in-memory builder, and the simengine-prep tdbem command line. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "h5_util.h"
#include "prep_tdbem.h"
#include "se_random.h"

#define PREP_FORMAT "simengine-input"
#define PREP_VERSION 1
#define PREP_PI 3.14159265358979323846

/* sum_j sum_k |M_k(i, j)| <= PREP_COUPLING for every row i, and sum_{j != i} |M0(i, j)| <=
 * PREP_M0_OFF with M0(i, i) = 1: then |M0^-1|_inf <= 1 / (1 - PREP_M0_OFF) and the marching is a
 * contraction with factor PREP_COUPLING / (1 - PREP_M0_OFF) = 0.8 (docs/prep.md). */
#define PREP_COUPLING 0.6
#define PREP_M0_OFF 0.25
/* M0 couples unknowns closer than this many mean spacings. */
#define PREP_NEIGHBOUR 1.5
/* The illumination's wavelength in mean spacings, and its shortest period in steps. */
#define PREP_WAVELENGTH 10.0
#define PREP_MIN_PERIOD 8.0
/* Most values and row-vectors generated and written at once. */
#define PREP_BLOCK_VALUES ((int64_t)1 << 24)
#define PREP_BLOCK_ROWVECTORS ((int64_t)1 << 22)
/* Most illumination values per write. */
#define PREP_BLOCK_ILLUMINATION ((int64_t)1 << 23)

/* ---- the generated model --------------------------------------------------------------------- */

/* Everything the values are computed from; filled by gen_setup, freed by gen_free. */
typedef struct gen {
  se_prep_tdbem_params p;
  int64_t n, kmax;
  double *pos;     /* [n x 3] */
  double diameter; /* largest distance */
  double spacing;  /* h: mean distance to the nearest unknown */
  double c_dt;
  double *inv_sqrt_s; /* [n] 1 / sqrt(S_i), S_i = sum_j f_ij jitter_ij */
  double scale;       /* PREP_COUPLING / max_i sum_j f_ij jitter_ij / sqrt(S_i S_j) */
  int64_t *slice_off; /* [n + 1] first value of each slice */
  int64_t longest;    /* the longest row-vector generated */
  double *shape;      /* [(dmax + 1) x dmax]: shape[L * dmax + l], l < L, sum_l |.| = 1 */
  int64_t nnz0;       /* M0, lower triangle with the diagonal, rows ascending */
  int32_t *m0_row, *m0_col;
  double *m0_val; /* rounded to the file's precision */
  double *delay;  /* [n] arrival of the plane wave at each unknown, steps */
  double period;  /* of the plane wave, steps */
} gen;

/* Frees g's arrays and zeroes it. */
static void gen_free(gen *g) {
  free(g->pos);
  free(g->inv_sqrt_s);
  free(g->slice_off);
  free(g->shape);
  free(g->m0_row);
  free(g->m0_col);
  free(g->m0_val);
  free(g->delay);
  memset(g, 0, sizeof *g);
}

/* The random bits of the pair {i, j} (symmetric), from the seed. */
static inline uint64_t pair_hash(const gen *g, int64_t i, int64_t j) {
  uint64_t a = (uint64_t)(i < j ? i : j), b = (uint64_t)(i < j ? j : i);
  return se_mix64(se_mix64(g->p.seed) ^ (a << 32 | b));
}

/* Length of the pair's row-vector: in [1, dmax] with mean mean_length (docs/prep.md). */
static inline int64_t pair_length(const gen *g, uint64_t h) {
  int64_t dmax = g->p.dmax;
  double m = g->p.mean_length, u = se_rand_unit(h), v = se_rand_unit(se_mix64(h ^ 1));
  int64_t lo = 1, len;
  double a = 2.0 * m - (double)dmax;
  if (a >= 1.0) { /* uniform on [lo, dmax], lo mixed between floor(a) and floor(a) + 1 */
    lo = (int64_t)floor(a);
    if (v < a - (double)lo)
      lo++;
  } else if (!(dmax > 1 && v < 2.0 * (m - 1.0) / (double)(dmax - 1))) {
    return 1; /* a mixture of 1 and uniform on [1, dmax] */
  }
  len = lo + (int64_t)(u * (double)(dmax - lo + 1));
  return len < dmax ? len : dmax;
}

/* The pair's amplitude jitter in [0.9, 1.1). */
static inline double pair_jitter(uint64_t h) { return 0.9 + 0.2 * se_rand_unit(se_mix64(h ^ 2)); }

/* The distance between unknowns i and j (bitwise the same as between j and i). */
static inline double distance(const gen *g, int64_t i, int64_t j) {
  const double *x = g->pos + 3 * i, *y = g->pos + 3 * j;
  double dx = x[0] - y[0], dy = x[1] - y[1], dz = x[2] - y[2];
  return sqrt(dx * dx + dy * dy + dz * dz);
}

/* The decay with distance: the free-space Green's function 1 / d, regularised at the spacing. */
static inline double decay(const gen *g, double d) { return 1.0 / (d + g->spacing); }

/* A value rounded to the file's precision. */
static inline double rounded(const gen *g, double x) {
  return g->p.precision == SE_PRECISION_SINGLE ? (double)(float)x : x;
}

/* ---- geometry -------------------------------------------------------------------------------- */

typedef struct ellipsoid {
  double c[3], a[3]; /* centre, semi-axes */
} ellipsoid;

/* The airplane-like body: the union of a fuselage, wings, a horizontal tail and a vertical fin
 * (length 2, span 1.24). */
static const ellipsoid airplane[] = {
    {{0.0, 0.0, 0.0}, {1.0, 0.08, 0.08}},
    {{0.05, 0.0, -0.02}, {0.14, 0.62, 0.018}},
    {{-0.85, 0.0, 0.01}, {0.07, 0.22, 0.012}},
    {{-0.86, 0.0, 0.10}, {0.08, 0.012, 0.12}},
};
#define AIRPLANE_PARTS ((int)(sizeof airplane / sizeof airplane[0]))

/* Point m of m_total of the Fibonacci lattice on e's surface; q gets the unit-sphere point in e's
 * axes. The lattice sweeps e's longest axis, as a mesh generator's numbering would. */
static void fibonacci_point(const ellipsoid *e, int64_t m, int64_t m_total, double *x, double *q) {
  int s = 0;
  for (int k = 1; k < 3; k++)
    if (e->a[k] > e->a[s])
      s = k;
  int t1 = (s + 1) % 3, t2 = (s + 2) % 3;
  double z = 1.0 - (2.0 * (double)m + 1.0) / (double)m_total, r = sqrt(fmax(0.0, 1.0 - z * z));
  double phi = (double)m * PREP_PI * (3.0 - sqrt(5.0));
  q[s] = z;
  q[t1] = r * cos(phi);
  q[t2] = r * sin(phi);
  for (int k = 0; k < 3; k++)
    x[k] = e->c[k] + e->a[k] * q[k];
}

/* The area of e's surface element at the sphere point q over the sphere's. */
static double area_ratio(const ellipsoid *e, const double *q) {
  double s = 0;
  for (int k = 0; k < 3; k++)
    s += (q[k] / e->a[k]) * (q[k] / e->a[k]);
  return e->a[0] * e->a[1] * e->a[2] * sqrt(s);
}

/* The largest area_ratio of e (at the end of its shortest axis). */
static double area_ratio_max(const ellipsoid *e) {
  double amin = fmin(e->a[0], fmin(e->a[1], e->a[2]));
  return e->a[0] * e->a[1] * e->a[2] / amin;
}

/* The airplane's points for oversampling factor f: part c gets ceil(f n 4 pi gmax_c / area)
 * lattice candidates, thinned in proportion to the area element and dropped inside another part.
 * Stores them in out when not NULL; returns how many there are. */
static int64_t airplane_points(const gen *g, double f, double total_area, double *out) {
  int64_t kept = 0;
  for (int c = 0; c < AIRPLANE_PARTS; c++) {
    const ellipsoid *e = &airplane[c];
    double gmax = area_ratio_max(e);
    int64_t m_total = (int64_t)ceil(f * (double)g->n * 4.0 * PREP_PI * gmax / total_area);
    for (int64_t m = 0; m < m_total; m++) {
      double x[3], q[3];
      fibonacci_point(e, m, m_total, x, q);
      if (se_rand_unit(se_mix64(se_mix64(g->p.seed ^ 0x5EED) ^ ((uint64_t)c << 40 | (uint64_t)m))) >=
          area_ratio(e, q) / gmax)
        continue;
      int inside = 0;
      for (int o = 0; o < AIRPLANE_PARTS && !inside; o++) {
        if (o == c)
          continue;
        double s = 0;
        for (int k = 0; k < 3; k++) {
          double t = (x[k] - airplane[o].c[k]) / airplane[o].a[k];
          s += t * t;
        }
        inside = s < 1.0;
      }
      if (inside)
        continue;
      if (out)
        memcpy(out + 3 * kept, x, sizeof x);
      kept++;
    }
  }
  return kept;
}

/* Places the n unknowns (g->pos): the Fibonacci lattice on the unit sphere, or the airplane's
 * surface sampled evenly. */
static int place_unknowns(gen *g, se_error *err) {
  SE_CALLOC(err, g->pos, 3 * g->n, "the positions");
  if (g->p.shape == SE_PREP_SPHERE) {
    static const ellipsoid sphere = {{0, 0, 0}, {1, 1, 1}};
    double q[3];
    for (int64_t i = 0; i < g->n; i++)
      fibonacci_point(&sphere, i, g->n, g->pos + 3 * i, q);
    return SE_OK;
  }
  double total_area = 0;
  for (int c = 0; c < AIRPLANE_PARTS; c++) { /* 4 pi x the mean area ratio over a lattice */
    double sum = 0, x[3], q[3];
    for (int64_t m = 0; m < 4096; m++) {
      fibonacci_point(&airplane[c], m, 4096, x, q);
      sum += area_ratio(&airplane[c], q);
    }
    total_area += 4.0 * PREP_PI * sum / 4096.0;
  }
  double f = 1.2;
  int64_t found = airplane_points(g, f, total_area, NULL);
  for (int tries = 0; found < g->n && tries < 64; tries++) {
    f *= 1.05 * (double)g->n / (double)(found > 0 ? found : 1);
    found = airplane_points(g, f, total_area, NULL);
  }
  if (found < g->n)
    SE_FAIL(err, SE_ERR_NUMERIC, "placing %lld unknowns on the airplane found only %lld",
            (long long)g->n, (long long)found);
  double *all;
  SE_CALLOC(err, all, 3 * found, "the airplane's candidate points");
  airplane_points(g, f, total_area, all);
  for (int64_t i = 0; i < g->n; i++) /* evenly spread over the candidates, in their order */
    memcpy(g->pos + 3 * i, all + 3 * ((2 * i + 1) * found / (2 * g->n)), 3 * sizeof(double));
  free(all);
  return SE_OK;
}

/* ---- the model values ------------------------------------------------------------------------ */

/* The time shapes of the row-vectors: for length L, s_l = sin(pi x)(1 - 1.5 x), x = (l + 1/2) / L
 * (a pulse with a negative tail, as the time derivative of a time basis), scaled to sum |s_l| =
 * 1. */
static int make_shapes(gen *g, se_error *err) {
  int64_t dmax = g->p.dmax;
  SE_CALLOC(err, g->shape, (dmax + 1) * dmax, "the row-vector shapes");
  for (int64_t len = 1; len <= dmax; len++) {
    double *s = g->shape + len * dmax, sum = 0;
    for (int64_t l = 0; l < len; l++) {
      double x = ((double)l + 0.5) / (double)len;
      s[l] = sin(PREP_PI * x) * (1.0 - 1.5 * x);
      sum += fabs(s[l]);
    }
    for (int64_t l = 0; l < len; l++)
      s[l] /= sum;
  }
  return SE_OK;
}

/* The diameter and the mean spacing (O(N^2), OpenMP over unknowns). */
static int measure(gen *g, se_error *err) {
  double *nearest, diameter = 0;
  SE_CALLOC(err, nearest, g->n, "the nearest distances");
  const int64_t n = g->n;
#pragma omp parallel for schedule(dynamic, 16) reduction(max : diameter)
  for (int64_t i = 0; i < n; i++) {
    double lo = INFINITY;
    for (int64_t j = 0; j < n; j++) {
      if (j == i)
        continue;
      double d = distance(g, i, j);
      lo = d < lo ? d : lo;
      diameter = d > diameter ? d : diameter;
    }
    nearest[i] = lo;
  }
  double sum = 0;
  for (int64_t i = 0; i < n; i++)
    sum += nearest[i];
  free(nearest);
  g->diameter = diameter;
  g->spacing = sum / (double)n;
  if (!(g->spacing > 0))
    SE_FAIL(err, SE_ERR_NUMERIC, "two of the %lld unknowns coincide (mean nearest distance %g)",
            (long long)n, g->spacing);
  return SE_OK;
}

/* Chooses c dt and kmax: from kmax (c dt = diameter / (kmax - dmax + 1/2), so that the farthest
 * pair's row-vector ends at kmax at the latest), or from the given c dt. */
static int choose_time_step(gen *g, se_error *err) {
  int64_t dmax = g->p.dmax;
  if (g->p.c_dt > 0) {
    double delay = floor(g->diameter / g->p.c_dt);
    if (delay > (double)INT32_MAX - (double)dmax)
      SE_FAIL(err, SE_ERR_ARG,
              "--c-dt %g is too small for the body's diameter %g (delays above %d)", g->p.c_dt,
              g->diameter, INT32_MAX);
    int64_t need = (int64_t)delay + dmax;
    if (g->p.kmax > 0 && g->p.kmax < need)
      SE_FAIL(err, SE_ERR_ARG,
              "--kmax %lld is too small for --c-dt %g: the diameter %g and --dmax "
              "%lld need kmax >= %lld",
              (long long)g->p.kmax, g->p.c_dt, g->diameter, (long long)dmax, (long long)need);
    g->c_dt = g->p.c_dt;
    g->kmax = g->p.kmax > 0 ? g->p.kmax : need;
  } else {
    g->kmax = g->p.kmax;
    g->c_dt = g->diameter / ((double)(g->kmax - dmax) + 0.5);
  }
  return SE_OK;
}

/* S_i, the values per slice and M0's neighbours (O(N^2), OpenMP over unknowns), then the scale
 * of the row sums and M0's values. */
static int weigh(gen *g, se_error *err) {
  const int64_t n = g->n;
  SE_CALLOC(err, g->inv_sqrt_s, n, "the row weights");
  SE_CALLOC(err, g->slice_off, n + 1, "the slice offsets");
  int rc = SE_OK;
  double *near_sum = calloc((size_t)n, sizeof *near_sum);
  double *row_sum = calloc((size_t)n, sizeof *row_sum);
  int64_t *near_count = calloc((size_t)n, sizeof *near_count);
  int64_t *m0_ptr = calloc((size_t)n + 1, sizeof *m0_ptr);
  if (!near_sum || !row_sum || !near_count || !m0_ptr)
    SE_FAIL_GOTO(err, rc, done, SE_ERR_NOMEM, "out of memory for the row sums of %lld unknowns",
                 (long long)n);
  const double radius = PREP_NEIGHBOUR * g->spacing;
  int64_t longest = 0;
#pragma omp parallel for schedule(dynamic, 16) reduction(max : longest)
  for (int64_t i = 0; i < n; i++) {
    double si = 0, near = 0;
    int64_t values = 0, count = 0;
    for (int64_t j = 0; j < n; j++) {
      uint64_t h = pair_hash(g, i, j);
      double d = distance(g, i, j);
      int64_t len = pair_length(g, h);
      si += decay(g, d) * pair_jitter(h);
      values += len; /* = the values of slice i: the lengths are symmetric */
      longest = len > longest ? len : longest;
      if (j != i && d < radius) {
        near += decay(g, d);
        count += j < i;
      }
    }
    g->inv_sqrt_s[i] = 1.0 / sqrt(si);
    g->slice_off[i + 1] = values;
    near_sum[i] = near;
    near_count[i] = count;
  }
  g->longest = longest;
  double near_max = 0;
  for (int64_t i = 0; i < n; i++) {
    g->slice_off[i + 1] += g->slice_off[i];
    m0_ptr[i + 1] = m0_ptr[i] + near_count[i] + 1;
    near_max = near_sum[i] > near_max ? near_sum[i] : near_max;
  }
  g->nnz0 = m0_ptr[n];
  g->m0_row = calloc((size_t)g->nnz0, sizeof *g->m0_row);
  g->m0_col = calloc((size_t)g->nnz0, sizeof *g->m0_col);
  g->m0_val = calloc((size_t)g->nnz0, sizeof *g->m0_val);
  if (!g->m0_row || !g->m0_col || !g->m0_val)
    SE_FAIL_GOTO(err, rc, done, SE_ERR_NOMEM, "out of memory for M0's %lld entries",
                 (long long)g->nnz0);
  const double off = near_max > 0 ? PREP_M0_OFF / near_max : 0;
#pragma omp parallel for schedule(dynamic, 16)
  for (int64_t i = 0; i < n; i++) {
    double r = 0;
    int64_t e = m0_ptr[i];
    for (int64_t j = 0; j < n; j++) {
      uint64_t h = pair_hash(g, i, j);
      double d = distance(g, i, j);
      r += decay(g, d) * pair_jitter(h) * g->inv_sqrt_s[j];
      if (j < i && d < radius) {
        g->m0_row[e] = (int32_t)i;
        g->m0_col[e] = (int32_t)j;
        g->m0_val[e++] = rounded(g, off * decay(g, d));
      }
    }
    g->m0_row[e] = g->m0_col[e] = (int32_t)i;
    g->m0_val[e] = 1.0;
    row_sum[i] = r * g->inv_sqrt_s[i];
  }
  double row_max = 0;
  for (int64_t i = 0; i < n; i++)
    row_max = row_sum[i] > row_max ? row_sum[i] : row_max;
  g->scale = PREP_COUPLING / row_max;
done:
  free(m0_ptr);
  free(near_count);
  free(row_sum);
  free(near_sum);
  return rc;
}

/* The plane wave: direction (1, 0.35, 0.2) normalised, wavelength PREP_WAVELENGTH spacings. */
static int plane_wave(gen *g, se_error *err) {
  SE_CALLOC(err, g->delay, g->n, "the plane wave's delays");
  double dir[3] = {1.0, 0.35, 0.2}, norm = sqrt(1.0 + 0.35 * 0.35 + 0.2 * 0.2), lo = INFINITY;
  for (int64_t i = 0; i < g->n; i++) {
    const double *x = g->pos + 3 * i;
    g->delay[i] = (dir[0] * x[0] + dir[1] * x[1] + dir[2] * x[2]) / norm;
    lo = g->delay[i] < lo ? g->delay[i] : lo;
  }
  for (int64_t i = 0; i < g->n; i++)
    g->delay[i] = (g->delay[i] - lo) / g->c_dt;
  g->period = fmax(PREP_MIN_PERIOD, PREP_WAVELENGTH * g->spacing / g->c_dt);
  return SE_OK;
}

/* l_step(i): a sine switched on smoothly when the wave arrives. */
static double illumination(const gen *g, int64_t step, int64_t i) {
  double x = ((double)step - g->delay[i]) / g->period;
  if (x <= 0)
    return 0;
  return rounded(g, sin(2.0 * PREP_PI * x) * (1.0 - exp(-x * x)));
}

/* Checks p (the messages name the command-line options). */
static int check_params(const se_prep_tdbem_params *p, se_error *err) {
  if (p->shape != SE_PREP_SPHERE && p->shape != SE_PREP_AIRPLANE)
    SE_FAIL(err, SE_ERR_ARG, "--shape: unknown shape %d", (int)p->shape);
  if (p->n < 4 || p->n > INT32_MAX)
    SE_FAIL(err, SE_ERR_ARG, "--n %lld: expected 4 .. %d unknowns", (long long)p->n, INT32_MAX);
  if (p->dmax < 1 || p->dmax > 1000000)
    SE_FAIL(err, SE_ERR_ARG, "--dmax %lld: expected 1 .. 1000000", (long long)p->dmax);
  if (!(p->mean_length >= 1.0 && p->mean_length <= (double)p->dmax))
    SE_FAIL(err, SE_ERR_ARG, "--mean-length %g: expected a length in [1, dmax = %lld]",
            p->mean_length, (long long)p->dmax);
  if (p->steps < 0)
    SE_FAIL(err, SE_ERR_ARG, "--steps %lld: expected >= 0", (long long)p->steps);
  if (p->precision != SE_PRECISION_SINGLE && p->precision != SE_PRECISION_DOUBLE)
    SE_FAIL(err, SE_ERR_ARG, "--precision: unknown precision %d", (int)p->precision);
  if (!(p->c_dt >= 0) || !isfinite(p->c_dt))
    SE_FAIL(err, SE_ERR_ARG, "--c-dt %g: expected a finite number > 0", p->c_dt);
  if (p->block_values < 0)
    SE_FAIL(err, SE_ERR_ARG, "block_values %lld: expected >= 0", (long long)p->block_values);
  if (p->kmax > INT32_MAX)
    SE_FAIL(err, SE_ERR_ARG, "--kmax %lld: expected at most %d", (long long)p->kmax, INT32_MAX);
  if (p->c_dt == 0 && p->kmax <= p->dmax)
    SE_FAIL(err, SE_ERR_ARG, "--kmax %lld: expected > --dmax %lld (or give --c-dt)",
            (long long)p->kmax, (long long)p->dmax);
  if (p->c_dt > 0 && p->kmax < 0)
    SE_FAIL(err, SE_ERR_ARG, "--kmax %lld: expected >= 0", (long long)p->kmax);
  return SE_OK;
}

/* Builds the model of p (everything but the slices' values, which fill_slices computes). */
static int gen_setup(const se_prep_tdbem_params *p, gen *g, se_error *err) {
  memset(g, 0, sizeof *g);
  SE_TRY(check_params(p, err));
  g->p = *p;
  g->n = p->n;
  SE_TRY(place_unknowns(g, err));
  SE_TRY(measure(g, err));
  SE_TRY(choose_time_step(g, err));
  SE_TRY(make_shapes(g, err));
  SE_TRY(weigh(g, err));
  return plane_wave(g, err);
}

/* Fills slices [j0, j1): row-vectors (j - j0) N + i (row i of slice j; every pair has one) into
 * row, kstart and val_ptr (global value offsets), values from slice_off[j0] on into val (float or
 * double by the precision). OpenMP over slices. */
static void fill_slices(const gen *g, int64_t j0, int64_t j1, int32_t *row, int32_t *kstart,
                        int64_t *val_ptr, void *val) {
  const int64_t n = g->n, dmax = g->p.dmax;
  const int single = g->p.precision == SE_PRECISION_SINGLE;
#pragma omp parallel for schedule(dynamic, 1)
  for (int64_t j = j0; j < j1; j++) {
    int64_t r = (j - j0) * n, v = g->slice_off[j] - g->slice_off[j0];
    for (int64_t i = 0; i < n; i++, r++) {
      uint64_t h = pair_hash(g, i, j);
      double d = distance(g, i, j);
      int64_t len = pair_length(g, h);
      double amp = g->scale * decay(g, d) * pair_jitter(h) * (g->inv_sqrt_s[i] * g->inv_sqrt_s[j]);
      const double *s = g->shape + len * dmax;
      row[r] = (int32_t)i;
      kstart[r] = (int32_t)(1 + (int64_t)floor(d / g->c_dt));
      val_ptr[r] = g->slice_off[j0] + v;
      if (single) {
        float *out = (float *)val + v;
        for (int64_t l = 0; l < len; l++)
          out[l] = (float)(amp * s[l]);
      } else {
        double *out = (double *)val + v;
        for (int64_t l = 0; l < len; l++)
          out[l] = amp * s[l];
      }
      v += len;
    }
  }
}

/* ---- writing --------------------------------------------------------------------------------- */

/* The file's value type, the memory type and the size of the values of precision. */
static hid_t file_value_type(se_precision p) {
  return p == SE_PRECISION_SINGLE ? H5T_IEEE_F32LE : H5T_IEEE_F64LE;
}
static hid_t mem_value_type(se_precision p) {
  return p == SE_PRECISION_SINGLE ? H5T_NATIVE_FLOAT : H5T_NATIVE_DOUBLE;
}
static size_t value_size(se_precision p) { return p == SE_PRECISION_SINGLE ? 4 : 8; }

/* The slice datasets of an open file, created by create_slices. */
typedef struct slice_sets {
  hid_t row, kstart, val_ptr, val;
} slice_sets;

/* Writes the root, /run and /tdbem attributes, the positions (when given) and M0 (values in
 * double, stored in the file's precision). */
static int write_head(hid_t f, const char *dst, const se_tdbem_meta *m, const double *positions,
                      const se_tdbem_m0 *m0, se_error *err) {
  SE_TRY(se_h5_write_attr_string(f, dst, "/", "format", PREP_FORMAT, err));
  SE_TRY(se_h5_write_attr_int64(f, dst, "/", "version", PREP_VERSION, err));
  SE_TRY(se_h5_write_attr_string(f, dst, "/", "workload", "tdbem", err));
  SE_TRY(se_h5_create_group(f, dst, "/run", err));
  SE_TRY(se_h5_write_attr_int64(f, dst, "/run", "steps", m->steps, err));
  SE_TRY(se_h5_create_group(f, dst, "/tdbem", err));
  SE_TRY(se_h5_write_attr_int64(f, dst, "/tdbem", "N", m->n, err));
  SE_TRY(se_h5_write_attr_int64(f, dst, "/tdbem", "kmax", m->kmax, err));
  SE_TRY(se_h5_write_attr_string(f, dst, "/tdbem", "precision",
                                 m->precision == SE_PRECISION_SINGLE ? "single" : "double", err));
  if (positions) {
    hid_t d;
    hsize_t dims[2] = {(hsize_t)m->n, 3}, start[2] = {0, 0};
    SE_TRY(se_h5_create_dataset(f, dst, "/tdbem/positions", H5T_IEEE_F64LE, 2, dims, &d, err));
    int rc = se_h5_write_block(d, H5T_NATIVE_DOUBLE, 2, start, dims, positions, H5P_DEFAULT, dst,
                               "/tdbem/positions", err);
    if (H5Dclose(d) < 0 && rc == SE_OK)
      SE_FAIL(err, SE_ERR_HDF5, "%s: closing /tdbem/positions failed", dst);
    SE_TRY(rc);
  }
  SE_TRY(se_h5_create_group(f, dst, "/tdbem/M0", err));
  SE_TRY(se_h5_write_dataset(f, dst, "/tdbem/M0/row", H5T_STD_I32LE, H5T_NATIVE_INT32, m0->nnz,
                             m0->row, err));
  SE_TRY(se_h5_write_dataset(f, dst, "/tdbem/M0/col", H5T_STD_I32LE, H5T_NATIVE_INT32, m0->nnz,
                             m0->col, err));
  return se_h5_write_dataset(f, dst, "/tdbem/M0/val", file_value_type(m->precision),
                             H5T_NATIVE_DOUBLE, m0->nnz, m0->val, err);
}

/* Closes the slice datasets that are open; a failure becomes the error when rc is SE_OK. */
static int close_slices(slice_sets *s, const char *dst, int rc, se_error *err) {
  hid_t ids[4] = {s->row, s->kstart, s->val_ptr, s->val};
  for (int k = 0; k < 4; k++)
    if (ids[k] >= 0 && H5Dclose(ids[k]) < 0 && rc == SE_OK)
      rc = se_error_set(err, SE_ERR_HDF5, __FILE__, __LINE__, __func__,
                        "%s: closing a slice dataset failed", dst);
  s->row = s->kstart = s->val_ptr = s->val = H5I_INVALID_HID;
  return rc;
}

/* Creates /tdbem/slices with slice_ptr (written) and the other datasets sized for rv row-vectors
 * and nnz values (left open in s). */
static int create_slices(hid_t f, const char *dst, const se_tdbem_meta *m, const int64_t *slice_ptr,
                         slice_sets *s, se_error *err) {
  s->row = s->kstart = s->val_ptr = s->val = H5I_INVALID_HID;
  SE_TRY(se_h5_create_group(f, dst, "/tdbem/slices", err));
  SE_TRY(se_h5_write_dataset(f, dst, "/tdbem/slices/slice_ptr", H5T_STD_I64LE, H5T_NATIVE_INT64,
                             m->n + 1, slice_ptr, err));
  hsize_t rv = (hsize_t)m->n_rowvectors, rv1 = rv + 1, nnz = (hsize_t)m->n_values;
  int rc = SE_OK;
  SE_TRY_GOTO(
      rc, fail,
      se_h5_create_dataset(f, dst, "/tdbem/slices/row", H5T_STD_I32LE, 1, &rv, &s->row, err));
  SE_TRY_GOTO(
      rc, fail,
      se_h5_create_dataset(f, dst, "/tdbem/slices/kstart", H5T_STD_I32LE, 1, &rv, &s->kstart, err));
  SE_TRY_GOTO(rc, fail,
              se_h5_create_dataset(f, dst, "/tdbem/slices/val_ptr", H5T_STD_I64LE, 1, &rv1,
                                   &s->val_ptr, err));
  SE_TRY_GOTO(rc, fail,
              se_h5_create_dataset(f, dst, "/tdbem/slices/val", file_value_type(m->precision), 1,
                                   &nnz, &s->val, err));
  return SE_OK;
fail:
  return close_slices(s, dst, rc, err);
}

/* Writes row-vectors [r0, r0 + n_rv) and values [v0, v0 + n_val) into the open slice datasets. */
static int write_slice_block(const slice_sets *s, const char *dst, se_precision precision,
                             int64_t r0, int64_t n_rv, const int32_t *row, const int32_t *kstart,
                             const int64_t *val_ptr, int64_t v0, int64_t n_val, const void *val,
                             se_error *err) {
  hsize_t rs = (hsize_t)r0, rc = (hsize_t)n_rv, vs = (hsize_t)v0, vc = (hsize_t)n_val;
  if (n_rv > 0) {
    SE_TRY(se_h5_write_block(s->row, H5T_NATIVE_INT32, 1, &rs, &rc, row, H5P_DEFAULT, dst,
                             "/tdbem/slices/row", err));
    SE_TRY(se_h5_write_block(s->kstart, H5T_NATIVE_INT32, 1, &rs, &rc, kstart, H5P_DEFAULT, dst,
                             "/tdbem/slices/kstart", err));
    SE_TRY(se_h5_write_block(s->val_ptr, H5T_NATIVE_INT64, 1, &rs, &rc, val_ptr, H5P_DEFAULT, dst,
                             "/tdbem/slices/val_ptr", err));
  }
  if (n_val > 0)
    SE_TRY(se_h5_write_block(s->val, mem_value_type(precision), 1, &vs, &vc, val, H5P_DEFAULT, dst,
                             "/tdbem/slices/val", err));
  return SE_OK;
}

/* Writes the closing entry val_ptr[rv] = last. */
static int write_last_pointer(const slice_sets *s, const char *dst, const se_tdbem_meta *m,
                              int64_t last, se_error *err) {
  hsize_t at = (hsize_t)m->n_rowvectors, one = 1;
  return se_h5_write_block(s->val_ptr, H5T_NATIVE_INT64, 1, &at, &one, &last, H5P_DEFAULT, dst,
                           "/tdbem/slices/val_ptr", err);
}

/* Writes the provenance attributes of /prep. */
static int write_provenance(hid_t f, const char *dst, const gen *g, se_error *err) {
  SE_TRY(se_h5_create_group(f, dst, "/prep", err));
  SE_TRY(se_h5_write_attr_string(f, dst, "/prep", "shape",
                                 g->p.shape == SE_PREP_SPHERE ? "sphere" : "airplane", err));
  SE_TRY(se_h5_write_attr_int64(f, dst, "/prep", "seed", (int64_t)g->p.seed, err));
  SE_TRY(se_h5_write_attr_int64(f, dst, "/prep", "dmax", g->p.dmax, err));
  SE_TRY(se_h5_write_attr_double(f, dst, "/prep", "mean_length", g->p.mean_length, err));
  SE_TRY(se_h5_write_attr_double(f, dst, "/prep", "c_dt", g->c_dt, err));
  SE_TRY(se_h5_write_attr_double(f, dst, "/prep", "diameter", g->diameter, err));
  SE_TRY(se_h5_write_attr_double(f, dst, "/prep", "spacing", g->spacing, err));
  SE_TRY(se_h5_write_attr_double(f, dst, "/prep", "coupling", PREP_COUPLING, err));
  return se_h5_write_attr_double(f, dst, "/prep", "period_steps", g->period, err);
}

/* The metadata of g's case. */
static se_tdbem_meta gen_meta(const gen *g) {
  se_tdbem_meta m = {.n = g->n,
                     .kmax = g->kmax,
                     .steps = g->p.steps,
                     .precision = g->p.precision,
                     .has_positions = 1,
                     .n_rowvectors = g->n * g->n,
                     .n_values = g->slice_off[g->n],
                     .nnz0 = g->nnz0};
  return m;
}

/* The bytes of the datasets of a case. */
static double case_bytes(const se_tdbem_meta *m) {
  double vs = (double)value_size(m->precision);
  return 8.0 * (double)(m->n + 1) + 16.0 * (double)m->n_rowvectors + 8.0 +
         vs * (double)m->n_values + vs * (double)m->steps * (double)m->n + 24.0 * (double)m->n +
         (8.0 + vs) * (double)m->nnz0;
}

/* Fails when the file system holding path has less than bytes free. */
static int check_room(const char *path, double bytes, se_error *err) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (!slash)
    snprintf(dir, sizeof dir, ".");
  else if (slash == dir)
    dir[1] = '\0';
  else
    *slash = '\0';
  struct statvfs st;
  if (statvfs(dir, &st) != 0)
    SE_FAIL(err, SE_ERR_IO, "cannot query the free space of '%s': %s", dir, strerror(errno));
  double avail = (double)st.f_bavail * (double)st.f_frsize;
  if (bytes > avail)
    SE_FAIL(err, SE_ERR_IO, "%s needs %.2f GB, but '%s' has %.2f GB free", path, bytes / 1e9, dir,
            avail / 1e9);
  return SE_OK;
}

/* Writes the slices of g block by block (whole slices, at most p.block_values values, or
 * PREP_BLOCK_VALUES, unless one slice has more). */
static int stream_slices(hid_t f, const char *dst, const gen *g, const se_tdbem_meta *m,
                         se_error *err) {
  const int64_t n = g->n;
  int64_t *slice_ptr, *val_ptr = NULL;
  int32_t *row = NULL, *kstart = NULL;
  void *val = NULL;
  SE_CALLOC(err, slice_ptr, n + 1, "slice_ptr");
  for (int64_t j = 0; j <= n; j++)
    slice_ptr[j] = j * n;
  /* the largest block: as many whole slices as fit, at least one */
  int64_t max_slices = 1, max_values = 0;
  for (int64_t j = 0; j < n; j++)
    max_values = g->slice_off[j + 1] - g->slice_off[j] > max_values
                     ? g->slice_off[j + 1] - g->slice_off[j]
                     : max_values;
  int64_t block = g->p.block_values > 0 ? g->p.block_values : PREP_BLOCK_VALUES;
  while (max_slices < n && (max_slices + 1) * n <= PREP_BLOCK_ROWVECTORS &&
         (max_slices + 1) * max_values <= block)
    max_slices++;
  slice_sets s;
  int rc = create_slices(f, dst, m, slice_ptr, &s, err);
  free(slice_ptr);
  SE_TRY(rc);
  row = calloc((size_t)(max_slices * n), sizeof *row);
  kstart = calloc((size_t)(max_slices * n), sizeof *kstart);
  val_ptr = calloc((size_t)(max_slices * n), sizeof *val_ptr);
  val = calloc((size_t)(max_slices * max_values) + 1, value_size(m->precision));
  if (!row || !kstart || !val_ptr || !val)
    SE_FAIL_GOTO(err, rc, done, SE_ERR_NOMEM, "out of memory for a block of %lld slices",
                 (long long)max_slices);
  for (int64_t j0 = 0; j0 < n && rc == SE_OK; j0 += max_slices) {
    int64_t j1 = j0 + max_slices < n ? j0 + max_slices : n;
    fill_slices(g, j0, j1, row, kstart, val_ptr, val);
    rc = write_slice_block(&s, dst, m->precision, j0 * n, (j1 - j0) * n, row, kstart, val_ptr,
                           g->slice_off[j0], g->slice_off[j1] - g->slice_off[j0], val, err);
  }
  if (rc == SE_OK)
    rc = write_last_pointer(&s, dst, m, m->n_values, err);
done:
  free(val);
  free(val_ptr);
  free(kstart);
  free(row);
  return close_slices(&s, dst, rc, err);
}

/* Writes the illumination of g row block by row block, in the file's precision. */
static int stream_illumination(hid_t f, const char *dst, const gen *g, se_error *err) {
  const int64_t n = g->n, steps = g->p.steps;
  const int single = g->p.precision == SE_PRECISION_SINGLE;
  int64_t rows = PREP_BLOCK_ILLUMINATION / n > 0 ? PREP_BLOCK_ILLUMINATION / n : 1;
  rows = rows < steps ? rows : (steps > 0 ? steps : 1);
  hsize_t dims[2] = {(hsize_t)steps, (hsize_t)n};
  hid_t d;
  SE_TRY(se_h5_create_dataset(f, dst, "/tdbem/illumination", file_value_type(g->p.precision), 2,
                              dims, &d, err));
  int rc = SE_OK;
  void *buf = calloc((size_t)(rows * n), value_size(g->p.precision));
  if (!buf)
    SE_FAIL_GOTO(err, rc, done, SE_ERR_NOMEM, "out of memory for %lld illumination rows",
                 (long long)rows);
  for (int64_t t0 = 0; t0 < steps && rc == SE_OK; t0 += rows) {
    int64_t t1 = t0 + rows < steps ? t0 + rows : steps;
#pragma omp parallel for schedule(static)
    for (int64_t t = t0; t < t1; t++)
      for (int64_t i = 0; i < n; i++) {
        double v = illumination(g, t, i);
        if (single)
          ((float *)buf)[(t - t0) * n + i] = (float)v;
        else
          ((double *)buf)[(t - t0) * n + i] = v;
      }
    hsize_t start[2] = {(hsize_t)t0, 0}, count[2] = {(hsize_t)(t1 - t0), (hsize_t)n};
    rc = se_h5_write_block(d, mem_value_type(g->p.precision), 2, start, count, buf, H5P_DEFAULT,
                           dst, "/tdbem/illumination", err);
  }
done:
  free(buf);
  if (H5Dclose(d) < 0 && rc == SE_OK)
    rc = se_error_set(err, SE_ERR_HDF5, __FILE__, __LINE__, __func__,
                      "%s: closing /tdbem/illumination failed", dst);
  return rc;
}

/* An se_h5_file_writer: the generated case of the gen what points to, streamed. */
static int write_generated(hid_t f, const char *dst, const void *what, se_error *err) {
  const gen *g = what;
  se_tdbem_meta m = gen_meta(g);
  se_tdbem_m0 m0 = {
      .n = g->n, .nnz = g->nnz0, .row = g->m0_row, .col = g->m0_col, .val = g->m0_val};
  SE_TRY(write_head(f, dst, &m, g->pos, &m0, err));
  SE_TRY(write_provenance(f, dst, g, err));
  SE_TRY(stream_slices(f, dst, g, &m, err));
  return stream_illumination(f, dst, g, err);
}

void se_prep_tdbem_defaults(se_prep_tdbem_params *p) {
  *p = (se_prep_tdbem_params){.shape = SE_PREP_SPHERE,
                              .n = 2000,
                              .kmax = 100,
                              .dmax = 15,
                              .mean_length = 9.5,
                              .steps = 1000,
                              .precision = SE_PRECISION_SINGLE,
                              .c_dt = 0,
                              .seed = 1};
}

int se_prep_tdbem_write(const char *path, const se_prep_tdbem_params *p, se_prep_tdbem_summary *sum,
                        se_error *err) {
  if (!path || !path[0] || !p)
    SE_FAIL(err, SE_ERR_ARG, "se_prep_tdbem_write: no path or no parameters");
  gen g;
  int rc = gen_setup(p, &g, err);
  se_tdbem_meta m = {0};
  if (rc == SE_OK) {
    m = gen_meta(&g);
    rc = check_room(path, case_bytes(&m), err);
  }
  if (rc == SE_OK)
    rc = se_h5_write_file(path, write_generated, &g, err);
  if (rc == SE_OK && sum)
    *sum = (se_prep_tdbem_summary){.n = m.n,
                                   .kmax = m.kmax,
                                   .steps = m.steps,
                                   .c_dt = g.c_dt,
                                   .diameter = g.diameter,
                                   .spacing = g.spacing,
                                   .n_rowvectors = m.n_rowvectors,
                                   .n_values = m.n_values,
                                   .nnz0 = m.nnz0,
                                   .longest = g.longest,
                                   .coupling = PREP_COUPLING,
                                   .bytes = case_bytes(&m)};
  gen_free(&g);
  return rc;
}

void se_tdbem_case_free(se_tdbem_case *c) {
  if (!c)
    return;
  free(c->positions);
  se_tdbem_m0_free(&c->m0);
  se_tdbem_slices_free(&c->slices);
  free(c->illumination);
  memset(c, 0, sizeof *c);
}

/* Moves g's case into c (the slices and illumination computed here). */
static int build_case(gen *g, se_tdbem_case *c, se_error *err) {
  const int64_t n = g->n, rv = n * n;
  c->meta = gen_meta(g);
  se_tdbem_slices *s = &c->slices;
  *s = (se_tdbem_slices){.precision = g->p.precision,
                         .n = n,
                         .kmax = g->kmax,
                         .first = 0,
                         .count = n,
                         .n_rowvectors = rv,
                         .n_values = c->meta.n_values};
  SE_CALLOC(err, s->slice_ptr, n + 1, "slice_ptr");
  SE_CALLOC(err, s->row, rv, "row");
  SE_CALLOC(err, s->kstart, rv, "kstart");
  SE_CALLOC(err, s->val_ptr, rv + 1, "val_ptr");
  s->val = calloc((size_t)s->n_values + 1, value_size(g->p.precision));
  if (!s->val)
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory for %lld values", (long long)s->n_values);
  for (int64_t j = 0; j <= n; j++)
    s->slice_ptr[j] = j * n;
  fill_slices(g, 0, n, s->row, s->kstart, s->val_ptr, s->val);
  s->val_ptr[rv] = s->n_values;
  SE_CALLOC(err, c->illumination, g->p.steps * n, "the illumination");
  for (int64_t t = 0; t < g->p.steps; t++)
    for (int64_t i = 0; i < n; i++)
      c->illumination[t * n + i] = illumination(g, t, i);
  c->positions = g->pos;
  c->m0 =
      (se_tdbem_m0){.n = n, .nnz = g->nnz0, .row = g->m0_row, .col = g->m0_col, .val = g->m0_val};
  g->pos = NULL;
  g->m0_row = g->m0_col = NULL;
  g->m0_val = NULL;
  return SE_OK;
}

int se_prep_tdbem_build(const se_prep_tdbem_params *p, se_tdbem_case *c, se_error *err) {
  if (!p || !c)
    SE_FAIL(err, SE_ERR_ARG, "se_prep_tdbem_build: no parameters or no case");
  memset(c, 0, sizeof *c);
  gen g;
  int rc = gen_setup(p, &g, err);
  if (rc == SE_OK)
    rc = build_case(&g, c, err);
  gen_free(&g);
  if (rc != SE_OK)
    se_tdbem_case_free(c);
  return rc;
}

/* An se_h5_file_writer: the se_tdbem_case what points to, as it is. */
static int write_whole_case(hid_t f, const char *dst, const void *what, se_error *err) {
  const se_tdbem_case *c = what;
  const se_tdbem_meta *m = &c->meta;
  const se_tdbem_slices *s = &c->slices;
  SE_TRY(write_head(f, dst, m, c->positions, &c->m0, err));
  slice_sets sets;
  SE_TRY(create_slices(f, dst, m, s->slice_ptr, &sets, err));
  int rc = write_slice_block(&sets, dst, m->precision, 0, m->n_rowvectors, s->row, s->kstart,
                             s->val_ptr, 0, m->n_values, s->val, err);
  if (rc == SE_OK)
    rc = write_last_pointer(&sets, dst, m, s->val_ptr[m->n_rowvectors], err);
  SE_TRY(close_slices(&sets, dst, rc, err));
  hsize_t dims[2] = {(hsize_t)m->steps, (hsize_t)m->n}, start[2] = {0, 0};
  hid_t d;
  SE_TRY(se_h5_create_dataset(f, dst, "/tdbem/illumination", file_value_type(m->precision), 2, dims,
                              &d, err));
  rc = se_h5_write_block(d, H5T_NATIVE_DOUBLE, 2, start, dims, c->illumination, H5P_DEFAULT, dst,
                         "/tdbem/illumination", err);
  if (H5Dclose(d) < 0 && rc == SE_OK)
    SE_FAIL(err, SE_ERR_HDF5, "%s: closing /tdbem/illumination failed", dst);
  return rc;
}

int se_prep_tdbem_write_case(const char *path, const se_tdbem_case *c, se_error *err) {
  if (!path || !path[0] || !c)
    SE_FAIL(err, SE_ERR_ARG, "se_prep_tdbem_write_case: no path or no case");
  return se_h5_write_file(path, write_whole_case, c, err);
}

/* ---- simengine-prep tdbem -------------------------------------------------------------------- */

static const char tdbem_usage[] =
    "Usage: simengine-prep tdbem -o OUT.h5 [options]\n"
    "\n"
    "Writes a synthetic TD-BEM case (docs/input-tdbem.md, docs/prep.md): N unknowns on a closed\n"
    "surface, one row-vector per pair (i, j) starting at k = 1 + floor(d(i, j) / (c dt)), values\n"
    "decaying with distance and scaled so that the marching stays bounded, an almost diagonal SPD\n"
    "M0 and a plane-wave illumination. Written slice block by slice block (streaming).\n"
    "\n"
    "  --shape sphere|airplane  the surface: the unit sphere, or an airplane-like body of length "
    "2\n"
    "                           (fuselage, wings, tail, fin) (default sphere)\n"
    "  --n N                    unknowns (default 2000; >= 4)\n"
    "  --kmax K                 largest k of the M_k (default 100; > --dmax). Without --c-dt,\n"
    "                           c dt = diameter / (K - dmax + 1/2): the farthest pair's\n"
    "                           row-vector ends by K\n"
    "  --c-dt X                 wave speed x time step, in the body's length unit (default: from\n"
    "                           --kmax); with --c-dt alone K = floor(diameter / X) + dmax\n"
    "  --dmax D                 longest row-vector (default 15)\n"
    "  --mean-length L          mean row-vector length, in [1, D] (default 9.5)\n"
    "  --steps T                time steps (default 1000)\n"
    "  --precision single|double  dtype of the values (default single)\n"
    "  --seed S                 seed of the lengths, jitters and the airplane's sampling (default "
    "1)\n"
    "  -o, --output OUT.h5      the file (required); written as OUT.h5.tmp, renamed\n"
    "  -h, --help               this text\n"
    "\n"
    "The paper's airplane (N 23 962, Kmax 341, dmax 15, 9.5 values per row-vector, 5.5e9 values,\n"
    "about 32 GB):\n"
    "  simengine-prep tdbem --shape airplane --n 23962 --kmax 341 --dmax 15 --mean-length 9.5 \\\n"
    "      --steps 10823 -o airplane.h5\n";

/* Prints "simengine-prep tdbem: message" and a hint; returns 2. */
static int tdbem_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int tdbem_usage_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("simengine-prep tdbem: ", stderr);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputs("\n(simengine-prep tdbem --help lists the options)\n", stderr);
  return 2;
}

/* Parses an integer option value into *out; 0 on success. */
static int int_value(const char *opt, const char *text, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(text, &end, 10);
  if (end == text || *end || errno == ERANGE)
    return tdbem_usage_error("%s '%s': expected an integer", opt, text);
  *out = v;
  return 0;
}

/* Parses a number option value into *out; 0 on success. */
static int number_value(const char *opt, const char *text, double *out) {
  char *end;
  errno = 0;
  double v = strtod(text, &end);
  if (end == text || *end || errno == ERANGE || !isfinite(v))
    return tdbem_usage_error("%s '%s': expected a finite number", opt, text);
  *out = v;
  return 0;
}

/* Applies option name = value to p (or *output); 0 on success, 2 on a bad value. */
static int apply_option(const char *name, const char *value, se_prep_tdbem_params *p,
                        const char **output, int *kmax_given) {
  int64_t v = 0;
  if (!strcmp(name, "-o") || !strcmp(name, "--output")) {
    *output = value;
  } else if (!strcmp(name, "--shape")) {
    if (!strcmp(value, "sphere"))
      p->shape = SE_PREP_SPHERE;
    else if (!strcmp(value, "airplane"))
      p->shape = SE_PREP_AIRPLANE;
    else
      return tdbem_usage_error("--shape '%s': expected sphere or airplane", value);
  } else if (!strcmp(name, "--precision")) {
    if (!strcmp(value, "single"))
      p->precision = SE_PRECISION_SINGLE;
    else if (!strcmp(value, "double"))
      p->precision = SE_PRECISION_DOUBLE;
    else
      return tdbem_usage_error("--precision '%s': expected single or double", value);
  } else if (!strcmp(name, "--n")) {
    return int_value(name, value, &p->n);
  } else if (!strcmp(name, "--kmax")) {
    *kmax_given = 1;
    return int_value(name, value, &p->kmax);
  } else if (!strcmp(name, "--dmax")) {
    return int_value(name, value, &p->dmax);
  } else if (!strcmp(name, "--steps")) {
    return int_value(name, value, &p->steps);
  } else if (!strcmp(name, "--seed")) {
    if (int_value(name, value, &v))
      return 2;
    if (v < 0)
      return tdbem_usage_error("--seed '%s': expected an integer >= 0", value);
    p->seed = (uint64_t)v;
  } else if (!strcmp(name, "--mean-length")) {
    return number_value(name, value, &p->mean_length);
  } else if (!strcmp(name, "--c-dt")) {
    if (number_value(name, value, &p->c_dt))
      return 2;
    if (!(p->c_dt > 0))
      return tdbem_usage_error("--c-dt '%s': expected a number > 0", value);
  } else {
    return tdbem_usage_error("unknown option '%s'", name);
  }
  return 0;
}

int se_prep_tdbem_main(int argc, char **argv, int first) {
  se_prep_tdbem_params p;
  se_prep_tdbem_defaults(&p);
  const char *output = NULL;
  int kmax_given = 0;
  for (int i = first; i < argc; i++) {
    const char *arg = argv[i], *value = NULL;
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
      fputs(tdbem_usage, stdout);
      return 0;
    }
    char name[64];
    const char *eq = strncmp(arg, "--", 2) == 0 ? strchr(arg, '=') : NULL;
    if (eq && (size_t)(eq - arg) < sizeof name) {
      memcpy(name, arg, (size_t)(eq - arg));
      name[eq - arg] = '\0';
      value = eq + 1;
    } else {
      snprintf(name, sizeof name, "%s", arg);
      if (i + 1 >= argc)
        return tdbem_usage_error("%s needs a value", arg);
      value = argv[++i];
    }
    int rc = apply_option(name, value, &p, &output, &kmax_given);
    if (rc)
      return rc;
  }
  if (!output || !output[0])
    return tdbem_usage_error("no output file: give -o OUT.h5");
  if (p.c_dt > 0 && !kmax_given)
    p.kmax = 0; /* derived from --c-dt */
  se_error err = {0};
  se_prep_tdbem_summary s;
  if (se_prep_tdbem_write(output, &p, &s, &err) != SE_OK) {
    if (err.code == SE_ERR_ARG)
      return tdbem_usage_error("%s", err.message);
    fprintf(stderr, "simengine-prep tdbem: %s\n", err.message);
    return 1;
  }
  printf("simengine-prep: wrote %s (%.3f GB)\n", output, s.bytes / 1e9);
  printf("  %s, N %lld unknowns, diameter %.4g, mean spacing %.4g\n",
         p.shape == SE_PREP_SPHERE ? "sphere" : "airplane", (long long)s.n, s.diameter, s.spacing);
  printf("  kmax %lld, c dt %.6g, steps %lld, precision %s\n", (long long)s.kmax, s.c_dt,
         (long long)s.steps, p.precision == SE_PRECISION_SINGLE ? "single" : "double");
  printf("  row-vectors %lld, values %lld (mean length %.3f, longest %lld), M0 entries %lld\n",
         (long long)s.n_rowvectors, (long long)s.n_values,
         (double)s.n_values / (double)s.n_rowvectors, (long long)s.longest, (long long)s.nnz0);
  printf("  row sums of |M_k| <= %.2f, of |M0 - I| <= %.2f: the marching stays bounded\n",
         s.coupling, PREP_M0_OFF);
  return 0;
}
