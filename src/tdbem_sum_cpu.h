/* Helpers of the tdbem summation beyond include/simengine/tdbem.h (docs/tdbem.md, Section 4). */
#ifndef SE_TDBEM_SUM_CPU_H
#define SE_TDBEM_SUM_CPU_H

#include "simengine/tdbem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The near field of the slices s: every row-vector that starts at k <= p_max, cut to
 * k <= p_max, as slices of the same interval, N, kmax and precision (rows still ascending).
 * The radiation with p_max or less reads nothing else, so se_tdbem_radiate_cpu on the near field
 * gives bitwise the same result as on s while scanning only the near row-vectors instead of
 * all of them at every step. p_max >= 1 (2 ng - 1 for the marching loop). *near is allocated here
 * (one calloc per array, freed by se_tdbem_slices_free); on failure nothing is left allocated.
 * Not collective. */
int se_tdbem_slices_near(const se_tdbem_slices *s, int p_max, se_tdbem_slices *near,
                         se_error *err);

/* se_tdbem_sum_cpu with only the past values a_m, m < known, counted (n - ng <= known <= n; the
 * others as 0): the part of the ng vectors at time n that is known at time `known`. The marching
 * starts the next group's product (known = the current group's start) while the current group
 * is solved and radiates each new a_m into the vectors still open, up to 2 ng - 1 steps ahead
 * (docs/tdbem.md Section 14). The history must hold m in [n + ng - 1 - kmax, known): hist_len
 * >= kmax + ng. Not collective. */
int se_tdbem_sum_cpu_known(const se_tdbem_slices *s, const double *hist, int64_t hist_len,
                           int64_t n, int64_t known, int ng, double *out, se_error *err);

#ifdef __cplusplus
}
#endif
#endif
