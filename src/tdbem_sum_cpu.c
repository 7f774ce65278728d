/* The CPU summation and radiation stages of the tdbem workload (paper 002 Section 3,
 * docs/tdbem.md): the multi-vector/vector product of each slice's row-vectors with the past
 * values of its unknown, for ng = 1 .. 16 summation vectors at once, and the radiation of a
 * newly solved a_m into the vectors still being completed.
 *
 * Threads: the rows i of out are cut into one contiguous block per thread; each thread visits
 * every slice of the interval for the row-vectors of its rows (found by a galloping search: the
 * row-vectors of a slice are sorted by ascending row) and sums them into its own block (ng x its
 * rows), added to out at the end. No two threads write the same out[q * N + i], there are no
 * atomics and no per-thread copies of the whole of out, and every entry receives its terms in
 * the same order (slice by slice, then along the row-vector) whatever the number of threads:
 * the result is bitwise independent of the thread count. docs/tdbem.md (Sections 5 and 6)
 * compares this with OpenMP over slices and per-thread partial vectors of length ng N.
 *
 * SIMD: inside a row-vector the ng accumulators form one short vector (the loop over q), the
 * loop along the row-vector loads each stored value once and multiplies it with ng consecutive
 * past values (the window below). Values are float or double, the arithmetic is double. */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "se_error.h"
#include "tdbem_sum_cpu.h"

#define SE_ALWAYS_INLINE static inline __attribute__((always_inline))

/* Doubles per cache line: the padding between the threads' work arrays. */
enum { LINE_DOUBLES = 8 };

/* The first row-vector in [lo, hi) whose row is >= r0 (rows ascending, in [0, n)). The search
 * starts where evenly spread rows would put r0 (exact when every row is present, as in a BEM
 * case: one cache line read) and gallops from there, then bisects the bracket found: O(1)
 * probes for dense slices, O(log) otherwise. A plain bisection from the start costs about 13
 * cache misses per thread and slice for N = 6000, as much as the products of a thread's share
 * of the slice. */
SE_ALWAYS_INLINE int64_t first_row_at_least(const int32_t *row, int64_t lo, int64_t hi,
                                            int64_t r0, int64_t n) {
  if (lo >= hi || row[lo] >= r0)
    return lo;
  if (row[hi - 1] < r0)
    return hi;
  int64_t below = lo, above = hi - 1; /* row[below] < r0 <= row[above] */
  int64_t g = lo + (hi - lo) * r0 / n;
  g = g <= below ? below + 1 : (g > above ? above : g);
  if (row[g] >= r0) {
    above = g;
    for (int64_t step = 1; g - step > below; step *= 2) {
      if (row[g - step] < r0) {
        below = g - step;
        break;
      }
      above = g - step;
    }
  } else {
    below = g;
    for (int64_t step = 1; g + step < above; step *= 2) {
      if (row[g + step] >= r0) {
        above = g + step;
        break;
      }
      below = g + step;
    }
  }
  while (above - below > 1) {
    const int64_t mid = below + (above - below) / 2;
    if (row[mid] < r0)
      below = mid;
    else
      above = mid;
  }
  return above;
}

/* Stored value v of the slices as a double (single: float). */
SE_ALWAYS_INLINE double value_at(const void *val, int64_t v, int single) {
  return single ? (double)((const float *)val)[v] : ((const double *)val)[v];
}

/* The multi-vector/vector products of the rows [r0, r1) for ng vectors at time n (see
 * se_tdbem_sum_cpu_known). For each slice, the row-vectors of those rows span k in [pmin, pmax];
 * the window holds the past values they meet, in time order:
 *   win[x] = a_{n + x - pmax}(j) for 0 <= n + x - pmax < known, and 0 otherwise (not known yet,
 *   or before 0),
 *   x = 0 .. pmax - pmin + ng - 1,
 * so that the term of row-vector value t (k = kstart + t) in vector q reads
 * win[pmax - kstart - t + q]: for fixed t the ng vectors read ng consecutive window entries.
 * win has room for kmax + ng entries. The sums go to the thread's own zeroed block
 * part[q * (r1 - r0) + i - r0], added to out at the end: the threads never write the cache
 * lines where their rows of out meet while they walk the slices (writing out directly was 33%
 * slower at ng = 16 on 16 cores, docs/tdbem.md), and each entry of out still receives
 * out + (the slices' terms in slice order) whatever the thread count. Returns 0, or 1 when a
 * row-vector leaves k in [1, kmax]. */
SE_ALWAYS_INLINE int sum_rows(const se_tdbem_slices *s, const double *restrict hist,
                              int64_t hist_len, int64_t n, int64_t known, int64_t r0, int64_t r1,
                              double *restrict win, double *restrict part,
                              double *restrict out, const int ng, const int single) {
  const int64_t N = s->n, rows = r1 - r0;
  const int32_t *restrict row = s->row, *restrict kstart = s->kstart;
  const int64_t *restrict val_ptr = s->val_ptr;
  for (int64_t j = 0; j < s->count; j++) {
    const int64_t end = s->slice_ptr[j + 1];
    const int64_t begin = first_row_at_least(row, s->slice_ptr[j], end, r0, N);
    int64_t stop = begin, pmin = INT64_MAX, pmax = INT64_MIN;
    for (; stop < end && row[stop] < r1; stop++) {
      const int64_t last = kstart[stop] + (val_ptr[stop + 1] - val_ptr[stop]) - 1;
      pmin = kstart[stop] < pmin ? kstart[stop] : pmin;
      pmax = last > pmax ? last : pmax;
    }
    if (stop == begin)
      continue;
    if (pmin < 1 || pmax > s->kmax)
      return 1;
    const int64_t wlen = pmax - pmin + ng;
    const double *restrict h = hist + j * hist_len;
    int64_t m = n - pmax, slot = m > 0 ? m % hist_len : 0;
    for (int64_t x = 0; x < wlen; x++, m++) {
      if (m >= 0 && m < known) {
        win[x] = h[slot];
        slot = slot + 1 == hist_len ? 0 : slot + 1;
      } else {
        win[x] = 0.0;
      }
    }
    for (int64_t r = begin; r < stop; r++) {
      double acc[SE_TDBEM_NG_MAX];
      for (int q = 0; q < ng; q++)
        acc[q] = 0.0;
      const int64_t v0 = val_ptr[r], d = val_ptr[r + 1] - v0;
      const double *restrict w = win + (pmax - kstart[r]);
      for (int64_t t = 0; t < d; t++) {
        const double v = value_at(s->val, v0 + t, single);
        const double *restrict wt = w - t;
#pragma omp simd
        for (int q = 0; q < ng; q++)
          acc[q] += v * wt[q];
      }
      double *restrict o = part + (row[r] - r0);
      for (int q = 0; q < ng; q++)
        o[q * rows] += acc[q];
    }
  }
  for (int q = 0; q < ng; q++)
    for (int64_t i = 0; i < rows; i++)
      out[q * N + r0 + i] += part[q * rows + i];
  return 0;
}

/* One summation kernel per (precision, ng): ng and the value type are constants inside. */
typedef int (*sum_kernel)(const se_tdbem_slices *s, const double *hist, int64_t hist_len,
                          int64_t n, int64_t known, int64_t r0, int64_t r1, double *win,
                          double *part, double *out);

#define SE_SUM_KERNELS(NG)                                                                      \
  static int sum_d##NG(const se_tdbem_slices *s, const double *hist, int64_t hist_len,         \
                       int64_t n, int64_t known, int64_t r0, int64_t r1, double *win,          \
                       double *part, double *out) {                                             \
    return sum_rows(s, hist, hist_len, n, known, r0, r1, win, part, out, NG, 0);               \
  }                                                                                             \
  static int sum_s##NG(const se_tdbem_slices *s, const double *hist, int64_t hist_len,         \
                       int64_t n, int64_t known, int64_t r0, int64_t r1, double *win,          \
                       double *part, double *out) {                                             \
    return sum_rows(s, hist, hist_len, n, known, r0, r1, win, part, out, NG, 1);               \
  }
SE_SUM_KERNELS(1)
SE_SUM_KERNELS(2)
SE_SUM_KERNELS(3)
SE_SUM_KERNELS(4)
SE_SUM_KERNELS(5)
SE_SUM_KERNELS(6)
SE_SUM_KERNELS(7)
SE_SUM_KERNELS(8)
SE_SUM_KERNELS(9)
SE_SUM_KERNELS(10)
SE_SUM_KERNELS(11)
SE_SUM_KERNELS(12)
SE_SUM_KERNELS(13)
SE_SUM_KERNELS(14)
SE_SUM_KERNELS(15)
SE_SUM_KERNELS(16)

static const sum_kernel sum_kernels[2][SE_TDBEM_NG_MAX] = {
    [SE_PRECISION_DOUBLE] = {sum_d1, sum_d2, sum_d3, sum_d4, sum_d5, sum_d6, sum_d7, sum_d8,
                             sum_d9, sum_d10, sum_d11, sum_d12, sum_d13, sum_d14, sum_d15,
                             sum_d16},
    [SE_PRECISION_SINGLE] = {sum_s1, sum_s2, sum_s3, sum_s4, sum_s5, sum_s6, sum_s7, sum_s8,
                             sum_s9, sum_s10, sum_s11, sum_s12, sum_s13, sum_s14, sum_s15,
                             sum_s16}};

/* Checks what both stages need of the slices. */
static int check_slices(const se_tdbem_slices *s, se_error *err) {
  if (!s)
    SE_FAIL(err, SE_ERR_ARG, "no slices given");
  if (s->precision != SE_PRECISION_DOUBLE && s->precision != SE_PRECISION_SINGLE)
    SE_FAIL(err, SE_ERR_ARG, "slices: unknown precision %d", (int)s->precision);
  if (s->n < 0 || s->kmax < 1 || s->count < 0 || s->first < 0 || s->first + s->count > s->n)
    SE_FAIL(err, SE_ERR_ARG,
            "slices: bad sizes N = %lld, kmax = %lld, interval [%lld, %lld + %lld)",
            (long long)s->n, (long long)s->kmax, (long long)s->first, (long long)s->first,
            (long long)s->count);
  if (s->n_rowvectors > 0 && (!s->row || !s->kstart || !s->val || !s->slice_ptr || !s->val_ptr))
    SE_FAIL(err, SE_ERR_ARG, "slices: %lld row-vectors but missing arrays",
            (long long)s->n_rowvectors);
  return SE_OK;
}

int se_tdbem_sum_cpu(const se_tdbem_slices *s, const double *hist, int64_t hist_len, int64_t n,
                     int ng, double *out, se_error *err) {
  return se_tdbem_sum_cpu_known(s, hist, hist_len, n, n, ng, out, err);
}

int se_tdbem_sum_cpu_known(const se_tdbem_slices *s, const double *hist, int64_t hist_len,
                           int64_t n, int64_t known, int ng, double *out, se_error *err) {
  SE_TRY(check_slices(s, err));
  if (known > n || known < n - ng)
    SE_FAIL(err, SE_ERR_ARG, "summation: known = %lld outside [n - ng, n] = [%lld, %lld]",
            (long long)known, (long long)(n - ng), (long long)n);
  if (ng < 1 || ng > SE_TDBEM_NG_MAX)
    SE_FAIL(err, SE_ERR_ARG, "summation: ng = %d, expected 1 .. %d", ng, SE_TDBEM_NG_MAX);
  if (hist_len < s->kmax + ng)
    SE_FAIL(err, SE_ERR_ARG, "summation: history length %lld < kmax + ng = %lld",
            (long long)hist_len, (long long)(s->kmax + ng));
  if (n < 0)
    SE_FAIL(err, SE_ERR_ARG, "summation: time n = %lld < 0", (long long)n);
  if (s->count == 0 || s->n_rowvectors == 0)
    return SE_OK;
  if (!hist || !out)
    SE_FAIL(err, SE_ERR_ARG, "summation: no history or no output given");
  /* per thread: a window and its rows' block of partial sums, one cache line apart */
  const int64_t threads_max = omp_get_max_threads(), wlen = s->kmax + ng + LINE_DOUBLES;
  double *win, *part;
  SE_CALLOC(err, win, (size_t)(threads_max * wlen), "the summation windows");
  part = calloc((size_t)(ng * s->n + threads_max * LINE_DOUBLES), sizeof *part);
  if (!part) {
    free(win);
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory allocating %lld partial sums",
            (long long)(ng * s->n));
  }
  const sum_kernel kernel = sum_kernels[s->precision][ng - 1];
  int bad = 0;
#pragma omp parallel reduction(| : bad)
  {
    const int64_t t = omp_get_thread_num(), threads = omp_get_num_threads();
    const int64_t r0 = s->n * t / threads, r1 = s->n * (t + 1) / threads;
    bad |= kernel(s, hist, hist_len, n, known, r0, r1, win + t * wlen,
                  part + ng * r0 + t * LINE_DOUBLES, out);
  }
  free(part);
  free(win);
  if (bad)
    SE_FAIL(err, SE_ERR_INPUT,
            "summation: a row-vector of slices [%lld, %lld) reaches k outside [1, kmax = %lld]",
            (long long)s->first, (long long)(s->first + s->count), (long long)s->kmax);
  return SE_OK;
}

/* The radiation of a_now into the rows [r0, r1): out[(p - 1) * N + i] += M_p(i, j) a_now[j] for
 * p = 1 .. p_max. Returns 0, or 1 when a row-vector starts below k = 1. */
SE_ALWAYS_INLINE int radiate_rows(const se_tdbem_slices *s, const double *restrict a_now,
                                  int64_t p_max, int64_t r0, int64_t r1, double *restrict out,
                                  const int single) {
  const int64_t N = s->n;
  const int32_t *restrict row = s->row, *restrict kstart = s->kstart;
  const int64_t *restrict val_ptr = s->val_ptr;
  for (int64_t j = 0; j < s->count; j++) {
    const int64_t end = s->slice_ptr[j + 1];
    const double a = a_now[j];
    for (int64_t r = first_row_at_least(row, s->slice_ptr[j], end, r0, N); r < end && row[r] < r1;
         r++) {
      const int64_t ks = kstart[r];
      if (ks > p_max)
        continue;
      if (ks < 1)
        return 1;
      const int64_t v0 = val_ptr[r], d = val_ptr[r + 1] - v0;
      const int64_t last = ks + d - 1 < p_max ? ks + d - 1 : p_max;
      double *restrict o = out + row[r];
      for (int64_t p = ks; p <= last; p++)
        o[(p - 1) * N] += value_at(s->val, v0 + p - ks, single) * a;
    }
  }
  return 0;
}

static int radiate_d(const se_tdbem_slices *s, const double *a_now, int64_t p_max, int64_t r0,
                     int64_t r1, double *out) {
  return radiate_rows(s, a_now, p_max, r0, r1, out, 0);
}

static int radiate_s(const se_tdbem_slices *s, const double *a_now, int64_t p_max, int64_t r0,
                     int64_t r1, double *out) {
  return radiate_rows(s, a_now, p_max, r0, r1, out, 1);
}

int se_tdbem_radiate_cpu(const se_tdbem_slices *s, const double *a_now, int p_max, double *out,
                         se_error *err) {
  SE_TRY(check_slices(s, err));
  if (p_max < 0)
    SE_FAIL(err, SE_ERR_ARG, "radiation: p_max = %d < 0", p_max);
  if (p_max == 0 || s->count == 0 || s->n_rowvectors == 0)
    return SE_OK;
  if (!a_now || !out)
    SE_FAIL(err, SE_ERR_ARG, "radiation: no values or no output given");
  const int single = s->precision == SE_PRECISION_SINGLE;
  int bad = 0;
#pragma omp parallel reduction(| : bad)
  {
    const int64_t t = omp_get_thread_num(), threads = omp_get_num_threads();
    bad |= (single ? radiate_s : radiate_d)(s, a_now, p_max, s->n * t / threads,
                                            s->n * (t + 1) / threads, out);
  }
  if (bad)
    SE_FAIL(err, SE_ERR_INPUT, "radiation: a row-vector of slices [%lld, %lld) has kstart < 1",
            (long long)s->first, (long long)(s->first + s->count));
  return SE_OK;
}

/* The body of se_tdbem_slices_near; near's arrays are the caller's to free. */
static int near_into(const se_tdbem_slices *s, int p_max, se_tdbem_slices *near, se_error *err) {
  SE_CALLOC(err, near->slice_ptr, (size_t)(s->count + 1), "the near-field slice pointers");
  for (int64_t j = 0; j < s->count; j++) {
    near->slice_ptr[j + 1] = near->slice_ptr[j];
    for (int64_t r = s->slice_ptr[j]; r < s->slice_ptr[j + 1]; r++) {
      if (s->kstart[r] > p_max)
        continue;
      if (s->kstart[r] < 1)
        SE_FAIL(err, SE_ERR_INPUT, "near field: slice %lld, row-vector %lld has kstart %d < 1",
                (long long)(s->first + j), (long long)r, (int)s->kstart[r]);
      const int64_t d = s->val_ptr[r + 1] - s->val_ptr[r], room = p_max - s->kstart[r] + 1;
      near->slice_ptr[j + 1]++;
      near->n_values += d < room ? d : room;
    }
  }
  near->n_rowvectors = near->slice_ptr[s->count];
  const size_t size = s->precision == SE_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
  SE_CALLOC(err, near->row, (size_t)near->n_rowvectors, "the near-field rows");
  SE_CALLOC(err, near->kstart, (size_t)near->n_rowvectors, "the near-field kstart");
  SE_CALLOC(err, near->val_ptr, (size_t)(near->n_rowvectors + 1), "the near-field pointers");
  near->val = calloc(near->n_values ? (size_t)near->n_values : 1, size);
  if (!near->val)
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory allocating %lld near-field values",
            (long long)near->n_values);
  int64_t to = 0; /* the row-vectors of s's slices (a view's indices are its parent's) */
  for (int64_t r = s->slice_ptr[0]; r < s->slice_ptr[s->count]; r++) {
    if (s->kstart[r] > p_max)
      continue;
    const int64_t d = s->val_ptr[r + 1] - s->val_ptr[r], room = p_max - s->kstart[r] + 1;
    const int64_t kept = d < room ? d : room;
    near->row[to] = s->row[r];
    near->kstart[to] = s->kstart[r];
    near->val_ptr[to + 1] = near->val_ptr[to] + kept;
    memcpy((char *)near->val + (size_t)near->val_ptr[to] * size,
           (const char *)s->val + (size_t)s->val_ptr[r] * size, (size_t)kept * size);
    to++;
  }
  return SE_OK;
}

int se_tdbem_slices_near(const se_tdbem_slices *s, int p_max, se_tdbem_slices *near,
                         se_error *err) {
  SE_TRY(check_slices(s, err));
  if (!near)
    SE_FAIL(err, SE_ERR_ARG, "near field: no output given");
  if (p_max < 1)
    SE_FAIL(err, SE_ERR_ARG, "near field: p_max = %d < 1", p_max);
  memset(near, 0, sizeof *near);
  near->precision = s->precision;
  near->n = s->n;
  near->kmax = s->kmax;
  near->first = s->first;
  near->count = s->count;
  const int rc = near_into(s, p_max, near, err);
  if (rc != SE_OK)
    se_tdbem_slices_free(near);
  return rc;
}
