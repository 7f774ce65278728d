/* Dense reference solve shared by the solver tests. */
#ifndef SE_DENSE_SOLVE_H
#define SE_DENSE_SOLVE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

/* Solves the dense n x n row-major system a x = b by Gaussian elimination with partial pivoting.
 * a is destroyed; b becomes x. */
static inline void se_test_dense_solve(int32_t n, double *a, double *b) {
  for (int32_t k = 0; k < n; k++) {
    int32_t piv = k;
    for (int32_t i = k + 1; i < n; i++)
      if (fabs(a[(size_t)i * n + k]) > fabs(a[(size_t)piv * n + k]))
        piv = i;
    if (piv != k) {
      for (int32_t j = 0; j < n; j++) {
        const double t = a[(size_t)k * n + j];
        a[(size_t)k * n + j] = a[(size_t)piv * n + j];
        a[(size_t)piv * n + j] = t;
      }
      const double t = b[k];
      b[k] = b[piv];
      b[piv] = t;
    }
    for (int32_t i = k + 1; i < n; i++) {
      const double f = a[(size_t)i * n + k] / a[(size_t)k * n + k];
      if (f == 0.0)
        continue;
      for (int32_t j = k; j < n; j++)
        a[(size_t)i * n + j] -= f * a[(size_t)k * n + j];
      b[i] -= f * b[k];
    }
  }
  for (int32_t i = n - 1; i >= 0; i--) {
    double s = b[i];
    for (int32_t j = i + 1; j < n; j++)
      s -= a[(size_t)i * n + j] * b[j];
    b[i] = s / a[(size_t)i * n + i];
  }
}

#endif
