/* Minimal test helpers: checks that count failures and print what differed. */
#ifndef SE_TEST_H
#define SE_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "simengine/error.h"

typedef struct se_test_state {
  int checks, failures;
} se_test_state;

#define SE_EXPECT(st, cond, ...)                                              \
  do {                                                                        \
    (st)->checks++;                                                           \
    if (!(cond)) {                                                            \
      (st)->failures++;                                                       \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);         \
      fprintf(stderr, __VA_ARGS__);                                           \
      fprintf(stderr, "\n");                                                  \
    }                                                                         \
  } while (0)

/* Exits with err's message when rc is not SE_OK: an error the test did not expect. */
static inline void se_test_ok(int rc, const se_error *err, const char *what) {
  if (rc != SE_OK) {
    fprintf(stderr, "%s failed: %s\n", what, err->message);
    exit(1);
  }
}

/* calloc of at least one element that exits when memory runs out. */
static inline void *se_test_calloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size);
  if (!p) {
    fprintf(stderr, "out of memory (%zu x %zu bytes)\n", n, size);
    exit(1);
  }
  return p;
}

/* Largest |x - ref| over the largest |ref| for len entries; NaN when a difference is NaN (so
 * that `e <= tol` fails), 0 or INFINITY when ref is all zero (x equal to it or not). */
static inline double se_test_max_rel(const double *x, const double *ref, int64_t len) {
  double diff = 0.0, scale = 0.0;
  for (int64_t k = 0; k < len; k++) {
    const double d = fabs(x[k] - ref[k]);
    if (d > diff || isnan(d))
      diff = isnan(diff) ? diff : d;
    scale = fmax(scale, fabs(ref[k]));
  }
  if (isnan(diff) || scale > 0.0)
    return diff / (scale > 0.0 ? scale : 1.0);
  return diff > 0.0 ? INFINITY : 0.0;
}

/* Prints the summary line and returns the process exit code. */
static inline int se_test_finish(const se_test_state *st, const char *name) {
  printf("%s: %d checks, %d failed\n", name, st->checks, st->failures);
  return st->failures ? 1 : 0;
}

#endif
