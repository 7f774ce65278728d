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
 * all of them at every step. p_max >= 1 (ng - 1 for the marching loop). *near is allocated here
 * (one calloc per array, freed by se_tdbem_slices_free); on failure nothing is left allocated.
 * Not collective. */
int se_tdbem_slices_near(const se_tdbem_slices *s, int p_max, se_tdbem_slices *near,
                         se_error *err);

#ifdef __cplusplus
}
#endif
#endif
