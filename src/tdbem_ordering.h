/* Unknown orderings of the tdbem workload beyond se_tdbem_ordering (include/simengine/tdbem.h):
 * the paper's ordering-quality score, the renumbering of slices held in memory and of vectors
 * (paper 002 Section 7.4.1; docs/tdbem.md). A permutation is always perm[new] = old. */
#ifndef SE_TDBEM_ORDERING_H
#define SE_TDBEM_ORDERING_H

#include <stdint.h>

#include "simengine/tdbem.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The ordering-quality score of paper 002 over the slices of s (rows ascending in each slice):
 * two consecutive row-vectors of a slice whose k ranges share q columns score q^2; a slice
 * scores the average over its consecutive pairs; the case scores the average over its slices.
 * Slices with fewer than two row-vectors have no pair and are left out. Adds the slices' scores
 * to *sum and their number to *scored, so that intervals held by several ranks or workers add
 * up (score = sum / scored, after summing both over the intervals). Not collective. */
int se_tdbem_ordering_quality(const se_tdbem_slices *s, double *sum, int64_t *scored,
                              se_error *err);

/* Checks that perm[0 .. n-1] is a permutation of 0 .. n-1 and fills inv[old] = new. Not
 * collective. */
int se_tdbem_permutation_invert(const int64_t *perm, int64_t n, int64_t *inv, se_error *err);

/* The slices [first, first + count) of the renumbered case (new unknown u = old unknown
 * perm[u]) built from the slices s of the old numbering, which must hold every old slice
 * perm[u] needed: new slice u is old slice perm[u], each row i renamed inv[i] and the
 * row-vectors sorted by their new row, so that M'_k(u, v) = M_k(perm[u], perm[v]). The whole
 * case is first = 0, count = N. *out is allocated here (one calloc per array, freed by
 * se_tdbem_slices_free); on failure nothing is left allocated. Not collective. */
int se_tdbem_slices_permute(const se_tdbem_slices *s, const int64_t *perm, int64_t first,
                            int64_t count, se_tdbem_slices *out, se_error *err);

/* x_new[u] = x[perm[u]], u = 0 .. n-1: a vector of the original numbering in the new one. */
void se_tdbem_vector_permute(const int64_t *perm, int64_t n, const double *x, double *x_new);

/* x[perm[u]] = x_new[u], u = 0 .. n-1: a vector of the new numbering back in the original one
 * (the output is always written in the original numbering). */
void se_tdbem_vector_unpermute(const int64_t *perm, int64_t n, const double *x_new, double *x);

#ifdef __cplusplus
}
#endif
#endif
