/* The CUDA backend's choice of step kernel (SE_GPU_KERNEL_AUTO) and EDD threshold
 * (cuda/neurons_branch.h, docs/gpu.md "auto"), on engines built with the CPU backend: host code
 * only, no GPU needed. The lanes rule is checked at its boundary (15 and 16 cells of one
 * morphology), with several morphologies, with a cell at the EDD threshold and just below it;
 * gen's rule by morphology count and shared memory, the coop rule by cell size; explicit kernels
 * pass through. Exits 77 in a build
 * without CUDA. */
#include <stdlib.h>

#include "se_test.h"
#include "simengine/neurons.h"
#include "swc.h"

#ifdef SIMENGINE_HAVE_CUDA
#include "neurons_branch.h"
#include "neurons_gen.h"

enum { MAX_MORPH = SE_GEN_AUTO_MAX_MORPHOLOGIES + 1 };

/* The kernel an engine of copies[k] cells of synthetic class k % n_classes (seed 1 + k; the
 * classes in paper 000's order: n_classes 4 leaves out the big ones) would run. */
static int pick_of(int n_classes, int n_morph, const int64_t *copies, int kernel,
                   int64_t edd_min_comp, int64_t *n_comp0, int64_t *edd_min) {
  static const char *const cls[6] = {"small-low",  "small-high", "medium-low",
                                     "medium-high", "big-low",   "big-high"};
  se_error err = {0};
  se_morphology mo[MAX_MORPH] = {{0}};
  se_neuron_model m;
  se_neuron_model_init(&m);
  m.dt = 0.025;
  m.tstop = 1.0;
  for (int k = 0; k < n_morph; k++)
    se_test_ok(se_morphology_synthetic(cls[k % n_classes], 1 + (uint64_t)k, &mo[k], &err), &err,
               cls[k % n_classes]);
  se_test_ok(se_neuron_model_set_cells(&m, n_morph, mo, copies, &err), &err,
             "se_neuron_model_set_cells");
  se_test_ok(se_biophysics_alloc(&m.bio, 4, &err), &err, "se_biophysics_alloc");
  se_biophysics_set_prep_defaults(&m.bio);
  se_neurons_options o = se_neurons_default_options();
  o.gpu_fused = kernel;
  o.gpu_edd_min_comp = edd_min_comp;
  se_neurons_t e = NULL;
  se_test_ok(se_neurons_create(&m, 0, m.n_cells, &o, &e, &err), &err, "se_neurons_create");
  const int r = se_neurons_gpu_kernel(e);
  *n_comp0 = mo[0].n_compartments;
  *edd_min = se_neurons_edd_min_comp(e);
  se_neurons_destroy(e);
  se_neuron_model_free(&m);
  for (int k = 0; k < n_morph; k++)
    se_morphology_free(&mo[k]);
  return r;
}

/* pick_of over the six classes */
static int pick(int n_morph, const int64_t *copies, int kernel, int64_t edd_min_comp,
                int64_t *n_comp0, int64_t *edd_min) {
  return pick_of(6, n_morph, copies, kernel, edd_min_comp, n_comp0, edd_min);
}

int main(void) {
  se_test_state st = {0};
  const int A = SE_GPU_KERNEL_AUTO, B = SE_GPU_KERNEL_BRANCH, F2 = SE_GPU_KERNEL_FUSED2,
            CO = SE_GPU_KERNEL_COOP, GE = SE_GPU_KERNEL_GEN;
  int64_t n0 = 0, edd = 0;
  unsetenv("SE_EDD_MIN_COMP");
  /* one morphology: the mean lanes per 32-lane group is the cell count up to 32; small-low (76
   * compartments, 23 with hh) then goes to gen (one morphology: its kernel generated) */
  const int64_t c15[] = {15}, c16[] = {16}, c64[] = {64}, c33[] = {33};
  SE_EXPECT(&st, pick(1, c15, A, 0, &n0, &edd) == B, "15 cells of one shape: branch");
  SE_EXPECT(&st, edd == SE_GPU_EDD_MIN_COMP, "default threshold %lld", (long long)edd);
  SE_EXPECT(&st, pick(1, c16, A, 0, &n0, &edd) == GE, "16 cells of one shape: gen");
  SE_EXPECT(&st, pick(1, c64, A, 0, &n0, &edd) == GE, "64 cells: 32 lanes per group");
  /* 33 cells need 2 groups: 16.5 lanes per group */
  SE_EXPECT(&st, pick(1, c33, A, 0, &n0, &edd) == GE, "33 cells: 16.5 lanes per group");
  /* several morphologies: 40 + 1 + 1 cells in 2 + 1 + 1 groups = 10.5 lanes; 60 + 2: 20.7 */
  const int64_t few[] = {40, 1, 1}, many[] = {60, 2};
  SE_EXPECT(&st, pick(3, few, A, 0, &n0, &edd) == B, "40 + 1 + 1 cells: branch");
  SE_EXPECT(&st, pick(2, many, A, 0, &n0, &edd) == GE, "60 + 2 cells of 2 shapes: gen");
  /* up to SE_GEN_AUTO_MAX_MORPHOLOGIES morphologies go to gen, the six classes among them */
  const int64_t medium[] = {16, 16, 32}, six[] = {16, 16, 16, 16, 16, 32};
  SE_EXPECT(&st, pick(3, medium, A, 0, &n0, &edd) == GE, "3 shapes up to medium: gen");
  SE_EXPECT(&st, pick(6, six, A, 0, &n0, &edd) == GE, "the six classes: gen");
  int64_t c32[MAX_MORPH];
  for (int k = 0; k < MAX_MORPH; k++)
    c32[k] = 32;
  SE_EXPECT(&st, pick(MAX_MORPH - 1, c32, A, 0, &n0, &edd) == GE, "%d shapes: gen", MAX_MORPH - 1);
  /* one more: the coop rule (cells of at most SE_GPU_COOP_MAX_COMP compartments): the small and
   * medium classes (76 and 305-319 compartments) go to coop; with the big ones (691-695) to
   * fused2 */
  SE_EXPECT(&st, pick_of(4, MAX_MORPH, c32, A, 0, &n0, &edd) == CO,
            "%d shapes up to medium: coop", MAX_MORPH);
  SE_EXPECT(&st, pick(MAX_MORPH, c32, A, 0, &n0, &edd) == F2, "%d shapes with big ones: fused2",
            MAX_MORPH);
  /* a thread per cell (SE_GEN_WARPS=1), all y in shared memory (SE_GEN_REG_ROWS=0): a big
   * class's kernel needs more than SE_GEN_AUTO_MAX_SMEM, the population goes to fused2 */
  setenv("SE_GEN_WARPS", "1", 1);
  setenv("SE_GEN_REG_ROWS", "0", 1);
  SE_EXPECT(&st, pick(6, six, A, 0, &n0, &edd) == F2, "the six classes, y in shared memory");
  unsetenv("SE_GEN_REG_ROWS");
  unsetenv("SE_GEN_WARPS");
  /* every cell its own shape */
  const int64_t own[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  SE_EXPECT(&st, pick(16, own, A, 0, &n0, &edd) == B, "16 shapes of one cell: branch");
  /* a cell at the EDD threshold turns a full population to branch; one compartment less not */
  (void)pick(1, c64, A, 0, &n0, &edd);
  SE_EXPECT(&st, pick(1, c64, A, n0, &n0, &edd) == B, "a cell of %lld >= threshold", (long long)n0);
  SE_EXPECT(&st, edd == n0, "threshold option %lld", (long long)edd);
  SE_EXPECT(&st, pick(1, c64, A, n0 + 1, &n0, &edd) == GE, "cells below the threshold");
  setenv("SE_EDD_MIN_COMP", "77", 1);
  (void)pick(1, c64, A, 0, &n0, &edd);
  SE_EXPECT(&st, edd == 77, "threshold from the environment: %lld", (long long)edd);
  SE_EXPECT(&st, pick(1, c64, A, 5, &n0, &edd) == B && edd == 5,
            "the option before the environment");
  unsetenv("SE_EDD_MIN_COMP");
  /* explicit kernels are kept */
  for (int k = SE_GPU_KERNEL_PHASES; k <= SE_GPU_KERNEL_BRANCH; k++)
    SE_EXPECT(&st, pick(16, own, k, 0, &n0, &edd) == k, "kernel %d kept", k);
  SE_EXPECT(&st, pick(16, own, CO, 0, &n0, &edd) == CO, "kernel coop kept");
  SE_EXPECT(&st, pick(16, own, GE, 0, &n0, &edd) == GE, "kernel gen kept");
  return se_test_finish(&st, "neurons_branch_route");
}
#else
int main(void) {
  printf("skipped: no CUDA in this build\n");
  return 77;
}
#endif
