/* The batched Hines solve against a dense LU solve (partial pivoting) on random trees of 1 to
 * 2000 compartments, in the flat layout and in interleaved layouts (width 8 with padding lanes,
 * and a generic width 3). Tolerance: 1e-12 relative in the 2-norm. The matrices are symmetric and
 * strictly diagonally dominant (C/dt on the diagonal), so their condition number is small and both
 * backward-stable solvers agree to a few hundred ulps even at 2000 rows. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dense_solve.h"
#include "neurons_impl.h"
#include "se_test.h"
#include "test_models.h"

/* A random tree: mostly short hops (long unbranched sections) with random branch points. */
static void random_morphology(se_neuron_model *m, int32_t n, uint64_t *rng) {
  for (int32_t i = 1; i < n; i++) {
    uint64_t r = se_rand_next(rng);
    m->parent[i] = (r % 4 == 0) ? (int32_t)(se_rand_next(rng) % (uint64_t)i) : i - 1;
  }
  for (int32_t i = 0; i < n; i++) {
    m->length[i] = se_rand_uniform(rng, 0.5, 60.0);
    m->diameter[i] = se_rand_uniform(rng, 0.2, 6.0);
    m->region[i] = (int32_t)(se_rand_next(rng) % 2);
  }
  m->bio.g_pas[0] = 1e-4;
  m->bio.gnabar_hh[1] = 0.12;
  m->bio.gkbar_hh[1] = 0.036;
  m->bio.gl_hh[1] = 3e-4;
}

static double check_layout(se_test_state *st, const se_neuron_model *m, se_layout layout,
                           int width, uint64_t seed) {
  se_error err = {0};
  se_neurons_options opt = {.layout = layout, .interleave_width = width};
  se_neurons_t e = NULL;
  if (se_neurons_create(m, 0, m->n_cells, &opt, &e, &err) != SE_OK) {
    SE_EXPECT(st, 0, "create failed: %s", err.message);
    return INFINITY;
  }
  int32_t n = (int32_t)m->morph_offsets[1];
  uint64_t rng = seed;
  for (int64_t c = 0; c < m->n_cells; c++)
    for (int32_t i = 0; i < n; i++)
      e->v[se_neurons_slot(e, c, i)] = se_rand_uniform(&rng, -80.0, 40.0);
  se_neurons_cpu_assemble(e);
  double *a = calloc((size_t)n * n, sizeof *a), *b = calloc((size_t)n, sizeof *b);
  double *diag0 = calloc((size_t)e->n_slots, sizeof *diag0), *rhs0 = calloc((size_t)e->n_slots, sizeof *rhs0);
  memcpy(diag0, e->diag, (size_t)e->n_slots * sizeof *diag0);
  memcpy(rhs0, e->rhs, (size_t)e->n_slots * sizeof *rhs0);
  se_neurons_cpu_solve(e);
  double worst = 0.0;
  for (int64_t c = 0; c < m->n_cells; c++) {
    memset(a, 0, (size_t)n * n * sizeof *a);
    for (int32_t i = 0; i < n; i++) {
      int64_t s = se_neurons_slot(e, c, i);
      a[(size_t)i * n + i] = diag0[s];
      b[i] = rhs0[s];
      if (i > 0) {
        int32_t p = m->parent[i];
        a[(size_t)i * n + p] = a[(size_t)p * n + i] = -e->g_axial[i];
      }
    }
    se_test_dense_solve(n, a, b);
    double num = 0.0, den = 0.0;
    for (int32_t i = 0; i < n; i++) {
      double d = e->rhs[se_neurons_slot(e, c, i)] - b[i];
      num += d * d;
      den += b[i] * b[i];
    }
    double rel = den > 0.0 ? sqrt(num / den) : sqrt(num);
    if (rel > worst)
      worst = rel;
  }
  free(a);
  free(b);
  free(diag0);
  free(rhs0);
  se_neurons_destroy(e);
  return worst;
}

int main(void) {
  se_test_state st = {0};
  const int32_t sizes[] = {1, 2, 3, 7, 31, 100, 257, 1000, 2000};
  uint64_t rng = 12345;
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    se_neuron_model m;
    se_test_model_alloc(&m, sizes[k], 3, 2, 0.025, 1.0);
    random_morphology(&m, sizes[k], &rng);
    double flat = check_layout(&st, &m, SE_LAYOUT_FLAT, 1, 99 + k);
    double inter8 = check_layout(&st, &m, SE_LAYOUT_INTERLEAVED, 8, 99 + k);
    double inter3 = check_layout(&st, &m, SE_LAYOUT_INTERLEAVED, 3, 99 + k);
    printf("n = %4d: relative error flat %.2e, interleaved(8) %.2e, interleaved(3) %.2e\n",
           sizes[k], flat, inter8, inter3);
    SE_EXPECT(&st, flat < 1e-12, "flat layout, n = %d: %.3e", sizes[k], flat);
    SE_EXPECT(&st, inter8 < 1e-12, "interleaved 8, n = %d: %.3e", sizes[k], inter8);
    SE_EXPECT(&st, inter3 < 1e-12, "interleaved 3, n = %d: %.3e", sizes[k], inter3);
    se_neuron_model_free(&m);
  }
  return se_test_finish(&st, "test_hines");
}
