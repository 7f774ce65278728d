/* Partitioning of items over MPI ranks (pure functions, no MPI calls). */
#ifndef SE_PARTITION_H
#define SE_PARTITION_H

#include <stdint.h>

/* Splits items 0..n-1 with non-negative weights into n_parts contiguous ranges of about equal
 * total weight: part p owns [bounds[p], bounds[p+1]); bounds has n_parts + 1 entries,
 * bounds[0] = 0 and bounds[n_parts] = n. Item i goes to the part whose share contains the middle
 * of its weight, so the split depends only on the weights and n_parts. Not collective. */
void se_partition_contiguous(const int64_t *weights, int64_t n, int n_parts, int64_t *bounds);

#endif
