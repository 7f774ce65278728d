/* Contiguous partition of weighted items over ranks: the ranges cover every item in order, and
 * each part's weight is within one item's weight of the ideal share (total / parts), which is
 * the best any contiguous split can promise. */
#include <stdio.h>
#include <stdlib.h>

#include "partition.h"
#include "se_test.h"
#include "test_models.h"

static void check(se_test_state *st, const int64_t *w, int64_t n, int parts, const char *what) {
  int64_t bounds[65];
  se_partition_contiguous(w, n, parts, bounds);
  double total = 0.0, wmax = 0.0;
  for (int64_t i = 0; i < n; i++) {
    total += (double)w[i];
    if ((double)w[i] > wmax)
      wmax = (double)w[i];
  }
  SE_EXPECT(st, bounds[0] == 0 && bounds[parts] == n, "%s: bounds %lld..%lld", what,
            (long long)bounds[0], (long long)bounds[parts]);
  for (int p = 0; p < parts; p++) {
    SE_EXPECT(st, bounds[p] <= bounds[p + 1], "%s: part %d decreasing", what, p);
    double sum = 0.0;
    for (int64_t i = bounds[p]; i < bounds[p + 1]; i++)
      sum += (double)w[i];
    double ideal = total / parts;
    SE_EXPECT(st, sum <= ideal + wmax && sum >= ideal - wmax,
              "%s: part %d of %d holds %.0f, ideal %.1f, largest item %.0f", what, p, parts, sum,
              ideal, wmax);
  }
}

int main(void) {
  se_test_state st = {0};
  uint64_t rng = 7;
  int64_t w[5000];
  for (int k = 0; k < 5000; k++)
    w[k] = 76 + (int64_t)(se_rand_next(&rng) % 700); /* cells of 76 to 775 compartments */
  for (int parts = 1; parts <= 64; parts *= 2)
    check(&st, w, 5000, parts, "random cells");
  check(&st, w, 5000, 3, "random cells, 3 parts");
  check(&st, w, 5, 8, "fewer cells than ranks");
  int64_t same[10] = {5, 5, 5, 5, 5, 5, 5, 5, 5, 5};
  check(&st, same, 10, 3, "equal weights");
  int64_t big_first[6] = {1000, 1, 1, 1, 1, 1};
  check(&st, big_first, 6, 2, "one heavy cell");
  int64_t zeros[4] = {0, 0, 0, 0};
  check(&st, zeros, 4, 3, "zero weights");
  check(&st, w, 0, 4, "no items");
  /* the split depends only on the weights and the number of parts */
  int64_t b1[5], b2[5];
  se_partition_contiguous(w, 5000, 4, b1);
  se_partition_contiguous(w, 5000, 4, b2);
  for (int p = 0; p < 5; p++)
    SE_EXPECT(&st, b1[p] == b2[p], "not deterministic at %d", p);
  return se_test_finish(&st, "test_partition");
}
