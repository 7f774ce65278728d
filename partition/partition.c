#include "partition.h"

void se_partition_contiguous(const int64_t *weights, int64_t n, int n_parts, int64_t *bounds) {
  double total = 0.0;
  for (int64_t i = 0; i < n; i++)
    total += (double)weights[i];
  bounds[0] = 0;
  int part = 0;
  double before = 0.0;
  for (int64_t i = 0; i < n && part < n_parts - 1; i++) {
    double middle = before + 0.5 * (double)weights[i];
    /* close parts whose share ends before this item's middle */
    while (part < n_parts - 1 && middle >= total * (double)(part + 1) / (double)n_parts)
      bounds[++part] = i;
    before += (double)weights[i];
  }
  while (part < n_parts - 1)
    bounds[++part] = n;
  bounds[n_parts] = n;
}
