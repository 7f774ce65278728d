/* Mono-morphology GPU Hines kernels (cuda/hines_mono.h, docs/gpu-hines.md) against the CPU
 * reference (paper 000, Algorithm 1, plain C below), itself checked against dense LU.
 *
 * Trees: the six synthetic classes of paper 000, Table 1, a random tree with many branches, and
 * edge cases (one row, two rows, a chain, a star). Systems: random, strictly diagonally dominant
 * (se_hines_random_row), general u != l. Every kernel must give the reference solution within
 * 1e-12 relative (2-norm per system).
 *
 * 1. Host: the reference against dense LU; every kernel's thread code run on the host
 *    (se_hines_emulate: same index arithmetic, pipeline and branch-point plan as on the
 *    device) on every layout and many STREAM settings.
 *    The COOP kernel (several lanes per system, cuda/hines_coop.h) likewise, on the full and
 *    block layouts, 2/4/8/16 lanes, 2, 3, 4, 5, 6 or 8 stages, an even and an odd number of
 *    systems; register rows (8 lanes) on full, block 32 and block 4; the small blocks (4, 8,
 *    16 systems) with the paper's Block kernel and every COOP lane count that fits, and the
 *    refusals (STREAM, Block-Shared, COOP warps wider than a block).
 * 2. GPU (skipped with "skipped: no GPU" and exit 77 without a device): S = 1000 systems (not a
 *    multiple of any block size), every layout (flat, full, block 32/64/128), every kernel that
 *    fits the layout, STREAM and COOP settings (register rows included), AUTO; the small blocks;
 *    the device generator; S = 1, 33 and 66 (both copy modes of STREAM and COOP, partial warps);
 *    errors. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dense_solve.h"
#include "se_test.h"
#include "se_test_swc.h"

#ifndef SIMENGINE_HAVE_CUDA
int main(void) {
  printf("skipped: no CUDA in this build\n");
  return 77;
}
#else

#include "hines_coop.h"
#include "hines_mono.h"
#include "se_cuda.h"
#include "se_error.h"
#include "se_random.h"
#include "swc.h"

#define TOL 1e-12

/* ---- the CPU reference: paper 000, Algorithm 1, one system in contiguous arrays ---- */
static void cpu_hines(int32_t n, const int32_t *p, const double *u, const double *l, double *d,
                      double *rhs) {
  for (int32_t i = n - 1; i >= 1; i--) {
    double f = u[i] / d[i];
    d[p[i]] -= f * l[i];
    rhs[p[i]] -= f * rhs[i];
  }
  rhs[0] /= d[0];
  for (int32_t i = 1; i < n; i++) {
    rhs[i] -= l[i] * rhs[p[i]];
    rhs[i] /= d[i];
  }
}

/* Dense LU with partial pivoting of the matrix of hines_mono.h's convention; b becomes x. */
static void dense_solve(int32_t n, const int32_t *p, const double *u, const double *l,
                        const double *d, double *b) {
  double *a = calloc((size_t)n * n, sizeof *a);
  for (int32_t i = 0; i < n; i++) {
    a[(size_t)i * n + i] = d[i];
    if (i > 0) {
      a[(size_t)i * n + p[i]] = l[i]; /* row i, column p(i) */
      a[(size_t)p[i] * n + i] = u[i]; /* row p(i), column i */
    }
  }
  se_test_dense_solve(n, a, b);
  free(a);
}

static double rel_err(int32_t n, const double *x, const double *ref) {
  double num = 0.0, den = 0.0;
  for (int32_t i = 0; i < n; i++) {
    num += (x[i] - ref[i]) * (x[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

/* ---- trees ---- */
typedef struct tree {
  char name[32];
  int32_t n;
  int32_t *parent;
} tree;

static void children_of(const tree *t, int32_t *nchild) {
  memset(nchild, 0, (size_t)t->n * sizeof *nchild);
  for (int32_t i = 1; i < t->n; i++)
    nchild[t->parent[i]]++;
}

static tree make_tree(const char *name, int32_t n) {
  tree t;
  snprintf(t.name, sizeof t.name, "%s", name);
  t.n = n;
  t.parent = malloc((size_t)n * sizeof *t.parent);
  t.parent[0] = -1;
  return t;
}

/* The tree of a morphology (its parents copied). */
static tree tree_of(const char *name, const se_morphology *m) {
  tree t = make_tree(name, m->n_compartments);
  memcpy(t.parent, m->parent, (size_t)m->n_compartments * sizeof *t.parent);
  return t;
}

/* The systems of a batch, host side, FLAT layout (s n + i), and their reference solutions. */
typedef struct systems {
  int32_t n;
  int64_t S;
  double *u, *l, *d, *rhs, *x;
} systems;

static systems make_systems(const tree *t, int64_t S, uint64_t seed) {
  systems y = {t->n, S, NULL, NULL, NULL, NULL, NULL};
  size_t N = (size_t)t->n * (size_t)S;
  y.u = malloc(N * sizeof(double));
  y.l = malloc(N * sizeof(double));
  y.d = malloc(N * sizeof(double));
  y.rhs = malloc(N * sizeof(double));
  y.x = malloc(N * sizeof(double));
  int32_t *nchild = malloc((size_t)t->n * sizeof *nchild);
  children_of(t, nchild);
  double *dd = malloc((size_t)t->n * sizeof *dd);
  for (int64_t s = 0; s < S; s++) {
    size_t o = (size_t)s * t->n;
    for (int32_t i = 0; i < t->n; i++)
      se_hines_random_row(seed, s, i, nchild[i], &y.u[o + i], &y.l[o + i], &y.d[o + i],
                          &y.rhs[o + i]);
    memcpy(dd, y.d + o, (size_t)t->n * sizeof *dd);
    memcpy(y.x + o, y.rhs + o, (size_t)t->n * sizeof *dd);
    cpu_hines(t->n, t->parent, y.u + o, y.l + o, dd, y.x + o);
  }
  free(dd);
  free(nchild);
  return y;
}

static void free_systems(systems *y) {
  free(y->u);
  free(y->l);
  free(y->d);
  free(y->rhs);
  free(y->x);
}

/* Largest relative error over the systems of x (arranged in `layout`) against the reference;
 * *bitwise counts the systems equal to the reference bit for bit. */
static double max_err(const systems *y, const double *x, se_hines_layout layout, int32_t bs,
                      int *bitwise) {
  double worst = 0.0;
  double *xs = malloc((size_t)y->n * sizeof *xs);
  *bitwise = 0;
  for (int64_t s = 0; s < y->S; s++) {
    for (int32_t i = 0; i < y->n; i++)
      xs[i] = x[se_hines_index(layout, y->n, y->S, bs, s, i)];
    const double *ref = y->x + (size_t)s * y->n;
    double e = rel_err(y->n, xs, ref);
    if (!(e <= worst)) /* NaN propagates */
      worst = e;
    if (!memcmp(xs, ref, (size_t)y->n * sizeof *xs))
      (*bitwise)++;
  }
  free(xs);
  return worst;
}

/* The arrays of y rearranged into layout (BLOCK padded). */
static double *to_layout(const systems *y, const double *flat, se_hines_layout layout,
                         int32_t bs) {
  int64_t size = se_hines_array_size(layout, y->n, y->S, bs);
  double *a = calloc((size_t)size, sizeof *a);
  for (int64_t s = 0; s < y->S; s++)
    for (int32_t i = 0; i < y->n; i++)
      a[se_hines_index(layout, y->n, y->S, bs, s, i)] = flat[(size_t)s * y->n + i];
  return a;
}

typedef struct layout_case {
  se_hines_layout layout;
  int32_t bs;
  const char *name;
} layout_case;

/* The arrays of y in one layout (to_layout), for an emulation to solve in place. */
typedef struct layout_arrays {
  double *u, *l, *d, *r;
} layout_arrays;

static layout_arrays make_layout_arrays(const systems *y, const layout_case *lc) {
  layout_arrays a = {to_layout(y, y->u, lc->layout, lc->bs),
                     to_layout(y, y->l, lc->layout, lc->bs),
                     to_layout(y, y->d, lc->layout, lc->bs),
                     to_layout(y, y->rhs, lc->layout, lc->bs)};
  return a;
}

static void free_layout_arrays(layout_arrays *a) {
  free(a->u);
  free(a->l);
  free(a->d);
  free(a->r);
}

static const layout_case layouts[] = {
    {SE_HINES_LAYOUT_FLAT, 1, "flat"},        {SE_HINES_LAYOUT_FULL, 1, "full"},
    {SE_HINES_LAYOUT_BLOCK, 32, "block32"},   {SE_HINES_LAYOUT_BLOCK, 64, "block64"},
    {SE_HINES_LAYOUT_BLOCK, 128, "block128"},
};
#define N_LAYOUTS (int)(sizeof layouts / sizeof layouts[0])

/* The STREAM settings under test: threads x stages with the largest tail, no tail, a one-row
 * tail, half the rows, and smaller shared-memory shares (3 and 2 CTAs per multiprocessor). */
static int stream_cases(int32_t n, se_hines_stream_config *c) {
  int k = 0;
  const int threads[3] = {32, 64, 128}, stages[2] = {4, 8};
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 2; b++)
      c[k++] = (se_hines_stream_config){threads[a], stages[b], 1, -1};
  c[k++] = (se_hines_stream_config){64, 8, 1, 0};
  c[k++] = (se_hines_stream_config){128, 4, 1, 0};
  c[k++] = (se_hines_stream_config){32, 8, 1, 1};
  c[k++] = (se_hines_stream_config){64, 4, 1, n / 2};
  c[k++] = (se_hines_stream_config){128, 4, 3, -1};
  c[k++] = (se_hines_stream_config){128, 4, 2, -1};
  return k;
}

static const char *cfg_str(const se_hines_stream_config *c, char *buf, size_t len) {
  snprintf(buf, len, "T%d/ST%d/C%d/R%d", c->threads, c->stages, c->ctas_per_sm, c->tail_rows);
  return buf;
}

/* Plans that may not fit the shared memory: Block-Shared on big trees (n x BS doubles), and
 * STREAM with little or no tail on the random tree, whose many pending branch points need more
 * accumulator slots than a small share of the shared memory holds. */
static int may_be_unsupported(const tree *t, se_hines_kernel k, const se_hines_stream_config *c) {
  return k == SE_HINES_KERNEL_BLOCK_SHARED ||
         (k == SE_HINES_KERNEL_STREAM && c && !strcmp(t->name, "random") &&
          (c->tail_rows >= 0 || c->ctas_per_sm > 1));
}

/* ---- 1. host checks ---- */

static void check_reference(se_test_state *st) {
  uint64_t rng = 7;
  double worst = 0.0;
  for (int32_t n = 1; n <= 60; n += (n < 8 ? 1 : 13)) {
    tree t = make_tree("dense", n);
    for (int32_t i = 1; i < n; i++)
      t.parent[i] = se_rand_next(&rng) % 3 == 0 ? (int32_t)(se_rand_next(&rng) % (uint64_t)i) : i - 1;
    systems y = make_systems(&t, 3, 11);
    for (int64_t s = 0; s < y.S; s++) {
      size_t o = (size_t)s * n;
      double *b = malloc((size_t)n * sizeof *b);
      memcpy(b, y.rhs + o, (size_t)n * sizeof *b);
      dense_solve(n, t.parent, y.u + o, y.l + o, y.d + o, b);
      double e = rel_err(n, y.x + o, b);
      if (e > worst)
        worst = e;
      SE_EXPECT(st, e <= TOL, "reference vs dense LU: n %d system %lld error %.3g", n,
                (long long)s, e);
      free(b);
    }
    free_systems(&y);
    free(t.parent);
  }
  printf("reference (Algorithm 1) vs dense LU, n = 1..60: max relative error %.2e\n", worst);
}

static void emulate_one(se_test_state *st, const tree *t, const systems *y, const layout_case *lc,
                        se_hines_kernel k, const se_hines_stream_config *cfg, double *worst) {
  se_error err = {0};
  layout_arrays a = make_layout_arrays(y, lc);
  char buf[64] = "";
  int rc = se_hines_emulate(t->parent, t->n, y->S, lc->layout, lc->bs, k, cfg, a.u, a.l, a.d, a.r,
                            &err);
  if (rc == SE_ERR_UNSUPPORTED) {
    SE_EXPECT(st, may_be_unsupported(t, k, cfg), "%s %s %s %s: unsupported: %s", t->name,
              lc->name, se_hines_kernel_name(k), cfg ? cfg_str(cfg, buf, sizeof buf) : "",
              err.message);
  } else {
    SE_EXPECT(st, rc == SE_OK, "emulation %s %s %s %s: %s", t->name, lc->name,
              se_hines_kernel_name(k), cfg ? cfg_str(cfg, buf, sizeof buf) : "", err.message);
    int bitwise = 0;
    double e = max_err(y, a.r, lc->layout, lc->bs, &bitwise);
    SE_EXPECT(st, e <= TOL, "emulation %s %s %s %s: max relative error %.3g", t->name, lc->name,
              se_hines_kernel_name(k), cfg ? cfg_str(cfg, buf, sizeof buf) : "", e);
    if (k != SE_HINES_KERNEL_STREAM)
      SE_EXPECT(st, bitwise == y->S, "emulation %s %s %s: %d of %lld systems bitwise equal to "
                "the reference", t->name, lc->name, se_hines_kernel_name(k), bitwise,
                (long long)y->S);
    if (e > *worst || e != e)
      *worst = e;
  }
  free_layout_arrays(&a);
}

static void check_emulation(se_test_state *st, const tree *trees, int n_trees) {
  double worst = 0.0;
  int runs = 0;
  for (int ti = 0; ti < n_trees; ti++) {
    const tree *t = &trees[ti];
    systems y = make_systems(t, 100, 1234 + (uint64_t)ti);
    for (int li = 0; li < N_LAYOUTS; li++) {
      const layout_case *lc = &layouts[li];
      const se_hines_kernel paper = lc->layout == SE_HINES_LAYOUT_FLAT   ? SE_HINES_KERNEL_FLAT
                                    : lc->layout == SE_HINES_LAYOUT_FULL ? SE_HINES_KERNEL_FULL
                                                                         : SE_HINES_KERNEL_BLOCK;
      emulate_one(st, t, &y, lc, paper, NULL, &worst);
      runs++;
      if (lc->layout == SE_HINES_LAYOUT_BLOCK) {
        emulate_one(st, t, &y, lc, SE_HINES_KERNEL_BLOCK_SHARED, NULL, &worst);
        runs++;
      }
      se_hines_stream_config cfgs[16];
      int nc = stream_cases(t->n, cfgs);
      for (int c = 0; c < nc; c++) {
        if (lc->layout == SE_HINES_LAYOUT_BLOCK && lc->bs != 32 && c % 3 != 0)
          continue; /* block64/128: a third of the settings is enough */
        emulate_one(st, t, &y, lc, SE_HINES_KERNEL_STREAM, &cfgs[c], &worst);
        runs++;
      }
    }
    free_systems(&y);
  }
  printf("host emulation of the kernels: %d solves of 100 systems, max relative error %.2e\n",
         runs, worst);
}

/* The COOP settings under test: lanes (2, 4, 8, 16) x stages (4, 8, 2, 3, 6, 5); automatic
 * warps (the emulation runs one warp). */
#define N_COOP_CASES 24
static int coop_cases(se_hines_coop_config *c) {
  int k = 0;
  const int lanes[4] = {2, 4, 8, 16}, stages[6] = {4, 8, 2, 3, 6, 5};
  for (int a = 0; a < 4; a++)
    for (int b = 0; b < 6; b++)
      c[k++] = (se_hines_coop_config){lanes[a], stages[b], 0, 0, 0};
  return k;
}

static void coop_emulate_one(se_test_state *st, const tree *t, const systems *y,
                             const layout_case *lc, const se_hines_coop_config *cfg,
                             double *worst) {
  se_error err = {0};
  layout_arrays a = make_layout_arrays(y, lc);
  se_hines_coop_info info;
  int rc = se_hines_coop_emulate(t->parent, t->n, y->S, lc->layout, lc->bs, cfg, a.u, a.l, a.d,
                                 a.r, &info, &err);
  SE_EXPECT(st, rc == SE_OK, "COOP emulation %s %s L%d/ST%d/R%d S %lld: %s", t->name, lc->name,
            cfg->lanes, cfg->stages, cfg->registers, (long long)y->S, err.message);
  if (rc == SE_OK) {
    int bitwise = 0;
    double e = max_err(y, a.r, lc->layout, lc->bs, &bitwise);
    SE_EXPECT(st, e <= TOL, "COOP emulation %s %s L%d/ST%d S %lld: max relative error %.3g",
              t->name, lc->name, cfg->lanes, cfg->stages, (long long)y->S, e);
    if (e > *worst || e != e)
      *worst = e;
  }
  free_layout_arrays(&a);
}

/* COOP on the host: every tree, the full and block layouts, an even (100) and an odd (37)
 * number of systems (the odd full batch takes the 8-byte copies, block batches a partial warp);
 * the flat layout is refused. */
static void check_coop_emulation(se_test_state *st, const tree *trees, int n_trees) {
  double worst = 0.0;
  int runs = 0, schedules[2] = {0, 0}; /* plans of the levels, of the list (info.levels 0) */
  for (int ti = 0; ti < n_trees; ti++) {
    const tree *t = &trees[ti];
    const int64_t sizes[2] = {100, 37};
    for (int si = 0; si < 2; si++) {
      systems y = make_systems(t, sizes[si], 4321 + (uint64_t)ti);
      /* row 0's l is never read (the forward sweep zeroes row 0's h, on its first chunk only):
       * NaN there makes a lost zeroing fail */
      for (int64_t s = 0; s < y.S; s++)
        y.l[(size_t)s * (size_t)t->n] = NAN;
      for (int li = 1; li < N_LAYOUTS; li++) {
        se_hines_coop_config cfgs[N_COOP_CASES];
        int nc = coop_cases(cfgs);
        for (int c = 0; c < nc; c++) {
          if (layouts[li].bs > 32 && c % 6 != 0 && c % 6 != 3)
            continue; /* block64/128: 4 and 3 stages are enough */
          coop_emulate_one(st, t, &y, &layouts[li], &cfgs[c], &worst);
          runs++;
        }
      }
      free_systems(&y);
    }
    if (ti < 6 || !strcmp(t->name, "random")) {
      se_hines_coop_info info;
      se_error err = {0};
      systems y = make_systems(t, 8, 1);
      printf("COOP plan %-11s n %3d:", t->name, t->n);
      for (int lanes = 2; lanes <= 16; lanes *= 2) {
        se_hines_coop_config c = {lanes, 4, 0, 0, 0};
        if (se_hines_coop_emulate(t->parent, t->n, y.S, SE_HINES_LAYOUT_FULL, 1, &c, y.u, y.l,
                                  y.d, y.rhs, &info, &err) != SE_OK)
          continue;
        printf(" | L%d: %3d steps, %d levels (bins %3d, trunk %2d, %2d roots), busy %2.0f%%",
               lanes, info.steps, info.levels, info.bin_rows, info.trunk_rows, info.roots,
               100.0 * info.lane_use);
        schedules[info.levels == 0]++;
        /* the list schedule (session 9): big-low at 8 lanes in 96 steps (the levels: 160;
         * at least 87 = 695 rows / 8) */
        if (!strcmp(t->name, "big-low") && lanes == 8)
          SE_EXPECT(st, info.levels == 0 && info.steps <= 96,
                    "COOP plan big-low L8: %d steps, %d levels", info.steps, info.levels);
        /* ... and not where it would take more steps (small-low L 2: 42 against 40) */
        if (!strcmp(t->name, "small-low") && lanes == 2)
          SE_EXPECT(st, info.levels > 0 && info.steps <= 40,
                    "COOP plan small-low L2: %d steps, %d levels", info.steps, info.levels);
      }
      printf("\n");
      free_systems(&y);
    }
  }
  /* both kinds of schedule are among the plans the emulation above ran */
  SE_EXPECT(st, schedules[0] > 0 && schedules[1] > 0, "COOP plans: %d level, %d list schedules",
            schedules[0], schedules[1]);
  se_error err = {0};
  double x = 0.0;
  const int32_t p1[1] = {-1};
  SE_EXPECT(st, se_hines_coop_emulate(p1, 1, 1, SE_HINES_LAYOUT_FLAT, 1, NULL, &x, &x, &x, &x,
                                      NULL, &err) == SE_ERR_ARG &&
                    strstr(err.message, "full or block") != NULL,
            "COOP on the flat layout: %s", err.message);
  const se_hines_coop_config bad[5] = {{3, 4, 0, 0, 0},
                                       {4, 7, 0, 0, 0},
                                       {32, 4, 0, 0, 0},
                                       {4, 4, 0, 0, SE_HINES_COOP_REG_ON},
                                       {8, 4, 0, 0, 3}};
  for (int k = 0; k < 5; k++)
    SE_EXPECT(st, se_hines_coop_emulate(p1, 1, 1, SE_HINES_LAYOUT_FULL, 1, &bad[k], &x, &x, &x,
                                        &x, NULL, &err) == SE_ERR_ARG,
              "COOP setting %d lanes, %d stages, registers %d was accepted", bad[k].lanes,
              bad[k].stages, bad[k].registers);
  printf("host emulation of COOP: %d solves, max relative error %.2e\n", runs, worst);
}

/* Whether the tree's 8-lane plan leaves room for register rows with `stages` stages: the
 * register chunks (SE_HINES_COOP_REG_STEPS / 2) must come before the last `stages` chunks (a
 * plan without them says how many steps it has). */
static int coop_reg_room(const tree *t, int stages) {
  se_hines_coop_config c = {8, stages, 0, 0, SE_HINES_COOP_REG_OFF};
  se_hines_coop_info info;
  se_error err = {0};
  systems y = make_systems(t, 1, 1);
  int rc = se_hines_coop_emulate(t->parent, t->n, 1, SE_HINES_LAYOUT_FULL, 1, &c, y.u, y.l, y.d,
                                 y.rhs, &info, &err);
  free_systems(&y);
  return rc == SE_OK && info.steps / 2 - stages >= SE_HINES_COOP_REG_STEPS / 2;
}

/* Register rows (8 lanes, (h, g) of the first SE_HINES_COOP_REG_STEPS steps in registers, rows
 * no other row reads without a cell) on the host: every tree with room, the full and block layouts, an even and an
 * odd number of systems, 3, 6 and 8 stages, against the reference (the cells start as NaN, so a
 * row that lost its cell while another row reads it fails); the plan must drop cells for every
 * tree of 300 rows or more; a tree without room is refused with a message. */
static void check_coop_registers(se_test_state *st, const tree *trees, int n_trees) {
  const int stages[3] = {6, 3, 8};
  double worst = 0.0;
  int runs = 0;
  for (int ti = 0; ti < n_trees; ti++) {
    const tree *t = &trees[ti];
    for (int si = 0; si < 3; si++) {
      se_hines_coop_config c = {8, stages[si], 0, 0, SE_HINES_COOP_REG_ON};
      if (!coop_reg_room(t, stages[si])) {
        se_error err = {0};
        double x = 0.0;
        SE_EXPECT(st, se_hines_coop_emulate(t->parent, t->n, 1, SE_HINES_LAYOUT_FULL, 1, &c, &x, &x,
                                            &x, &x, NULL, &err) == SE_ERR_UNSUPPORTED &&
                          strstr(err.message, "register rows need") != NULL,
                  "COOP registers %s ST%d: %s", t->name, stages[si], err.message);
        continue;
      }
      const int64_t sizes[2] = {100, 37};
      for (int k = 0; k < 2; k++) {
        systems y = make_systems(t, sizes[k], 77 + (uint64_t)ti);
        const layout_case block4 = {SE_HINES_LAYOUT_BLOCK, 4, "block4"};
        const layout_case *lcs[3] = {&layouts[1], &layouts[2], &block4}; /* full, block 32, 4 */
        for (int li = 0; li < 3; li++) {
          coop_emulate_one(st, t, &y, lcs[li], &c, &worst);
          runs++;
        }
        free_systems(&y);
      }
      se_hines_coop_info info;
      se_error err = {0};
      systems y = make_systems(t, 8, 1);
      int rc = se_hines_coop_emulate(t->parent, t->n, y.S, SE_HINES_LAYOUT_FULL, 1, &c, y.u, y.l,
                                     y.d, y.rhs, &info, &err);
      SE_EXPECT(st, rc == SE_OK && info.reg_steps == SE_HINES_COOP_REG_STEPS && info.cfg.registers == 2,
                "COOP registers %s: %d register steps: %s", t->name, info.reg_steps, err.message);
      SE_EXPECT(st, rc != SE_OK || t->n < 300 || info.cells < t->n + info.roots + 2,
                "COOP registers %s: %d cells for %d rows and %d roots", t->name, info.cells, t->n,
                info.roots);
      if (si == 0 && rc == SE_OK)
        printf("COOP register rows %-11s L8: %d of %d cells per system\n", t->name, info.cells,
               t->n + info.roots + 2);
      free_systems(&y);
    }
  }
  printf("host emulation of COOP register rows: %d solves, max relative error %.2e\n", runs,
         worst);
}

/* The automatic COOP settings on the H200 at 256 000 neurons (Block-Interleaved, block 32): the
 * cost model must pick the lanes measured fastest among L 2, 4, 8 x 1, 2 CTAs: L 2 (session 7's
 * third device run, groups from the counter, docs/bench/gpu_hines_s7_candidates.csv: small-low
 * 92.1% of copy against 74.9% for L 4, small-high 91.2% against 65.2%), L 4 (medium-low 80.1%
 * against 57.5% for L 8, medium-high 82.6% against 59.4%), L 8 for the big classes (session 9,
 * list schedule, docs/bench/gpu_hines_s9_list.txt: big-low 64.1% against 53.3% for L 4,
 * big-high 65.1% against 54.3%). The automatic stages (6 or 5 where they keep the warps of 4
 * stages) must be 6 for the small and medium classes (session 5's run 4: medium-high 64.0%
 * against 61.1%) and big-low (session 7: 44.3% against 41.0%); big-high, whose plan has fewer
 * root cells since session 9, holds 4 warps with 4 stages and 3 with 6 (session 9: 65.1%
 * with 4 warps, session 8: 62.7% with 3 and 6 stages). The small classes take 2 CTAs of 3 warps
 * per multiprocessor with 6 stages (measured 0.3-0.7% faster than 1 CTA of 7 warps with 4 or
 * 5, the model's choice since its session-7 refit). The flat layout is refused; the full
 * layout takes at most 4 lanes. */
static void check_coop_choice(se_test_state *st, const tree *trees) {
  const int want_lanes[6] = {2, 2, 4, 4, 8, 8}, want_stages[6] = {6, 6, 6, 6, 6, 4};
  for (int ti = 0; ti < 6; ti++) {
    se_hines_coop_config c;
    double cycles = 0.0;
    se_error err = {0};
    int rc = se_hines_coop_choose(trees[ti].parent, trees[ti].n, 256000, SE_HINES_LAYOUT_BLOCK,
                                  32, se_hines_h200_limits(), &c, &cycles, &err);
    SE_EXPECT(st, rc == SE_OK, "COOP choice %s: %s", trees[ti].name, err.message);
    if (rc != SE_OK)
      continue;
    printf("COOP automatic settings %-11s 256000: L%d C%d W%d S%d, model %.3f ms at 1.98 GHz\n",
           trees[ti].name, c.lanes, c.ctas_per_sm, c.warps, c.stages, cycles / 1.98e6);
    SE_EXPECT(st, c.lanes == want_lanes[ti], "COOP choice %s: L%d C%d, expected L%d",
              trees[ti].name, c.lanes, c.ctas_per_sm, want_lanes[ti]);
    SE_EXPECT(st, c.stages == want_stages[ti], "COOP choice %s: %d stages, expected %d",
              trees[ti].name, c.stages, want_stages[ti]);
  }
  se_hines_coop_config c;
  double cycles = 0.0;
  se_error err = {0};
  SE_EXPECT(st, se_hines_coop_choose(trees[0].parent, trees[0].n, 100, SE_HINES_LAYOUT_FLAT, 1,
                                     se_hines_h200_limits(), &c, &cycles,
                                     &err) == SE_ERR_ARG,
            "COOP choice on the flat layout was accepted");
  /* the full layout: not 8 lanes (a warp's row piece of 32 B; session 9: big-low 38.5% of copy
   * at 8 lanes where STREAM moves 48.8%) */
  for (int ti = 4; ti < 6; ti++) {
    int rc = se_hines_coop_choose(trees[ti].parent, trees[ti].n, 256000, SE_HINES_LAYOUT_FULL, 1,
                                  se_hines_h200_limits(), &c, &cycles, &err);
    SE_EXPECT(st, rc == SE_OK && c.lanes <= 4, "COOP choice %s on the full layout: L%d: %s",
              trees[ti].name, c.lanes, err.message);
  }
}

/* The small blocks (BS 4, 8, 16: one warp's systems of the COOP kernel with 8, 4, 2 lanes) on
 * the host: the paper's Block kernel bitwise equal to the reference; COOP with every lane count
 * whose warp fits a block (and 4 or 6 stages) against it; COOP with more systems per warp than a
 * block, STREAM and Block-Shared refused; the automatic COOP choice keeps to the lanes that fit. */
static const layout_case small_blocks[3] = {{SE_HINES_LAYOUT_BLOCK, 4, "block4"},
                                            {SE_HINES_LAYOUT_BLOCK, 8, "block8"},
                                            {SE_HINES_LAYOUT_BLOCK, 16, "block16"}};

static void check_small_blocks(se_test_state *st, const tree *trees, int n_trees) {
  double worst = 0.0, worst_coop = 0.0;
  int runs = 0;
  for (int ti = 0; ti < n_trees; ti++) {
    const tree *t = &trees[ti];
    const int64_t sizes[2] = {100, 37};
    for (int si = 0; si < 2; si++) {
      systems y = make_systems(t, sizes[si], 909 + (uint64_t)ti);
      for (int b = 0; b < 3; b++) {
        const layout_case *lc = &small_blocks[b];
        emulate_one(st, t, &y, lc, SE_HINES_KERNEL_BLOCK, NULL, &worst);
        for (int lanes = 2; lanes <= 16; lanes *= 2)
          for (int stages = 4; stages <= 6; stages += 2) {
            se_hines_coop_config c = {lanes, stages, 0, 0, 0};
            if ((32 / lanes) > lc->bs) {
              se_error err = {0};
              double x = 0.0;
              SE_EXPECT(st, se_hines_coop_emulate(t->parent, t->n, 1, lc->layout, lc->bs, &c, &x,
                                                  &x, &x, &x, NULL, &err) == SE_ERR_UNSUPPORTED &&
                                strstr(err.message, "more than a block") != NULL,
                        "COOP L%d on %s: %s", lanes, lc->name, err.message);
              continue;
            }
            coop_emulate_one(st, t, &y, lc, &c, &worst_coop);
            runs++;
          }
      }
      free_systems(&y);
    }
  }
  systems y = make_systems(&trees[3], 64, 5);
  for (int b = 0; b < 3; b++) {
    se_error err = {0};
    layout_arrays a = make_layout_arrays(&y, &small_blocks[b]);
    const se_hines_stream_config sc = {128, 4, 1, -1};
    SE_EXPECT(st, se_hines_emulate(trees[3].parent, trees[3].n, y.S, SE_HINES_LAYOUT_BLOCK,
                                   small_blocks[b].bs, SE_HINES_KERNEL_STREAM, &sc, a.u, a.l,
                                   a.d, a.r, &err) == SE_ERR_UNSUPPORTED &&
                  strstr(err.message, "block size") != NULL,
              "STREAM on %s: %s", small_blocks[b].name, err.message);
    SE_EXPECT(st, se_hines_emulate(trees[3].parent, trees[3].n, y.S, SE_HINES_LAYOUT_BLOCK,
                                   small_blocks[b].bs, SE_HINES_KERNEL_BLOCK_SHARED, NULL, a.u,
                                   a.l, a.d, a.r, &err) == SE_ERR_UNSUPPORTED,
              "Block-Shared on %s: %s", small_blocks[b].name, err.message);
    free_layout_arrays(&a);
    se_hines_coop_config c;
    double cycles = 0.0;
    int rc = se_hines_coop_choose(trees[5].parent, trees[5].n, 256000, SE_HINES_LAYOUT_BLOCK,
                                  small_blocks[b].bs, se_hines_h200_limits(), &c, &cycles, &err);
    SE_EXPECT(st, rc == SE_OK && 32 / c.lanes <= small_blocks[b].bs,
              "COOP choice big-high on %s: L%d: %s", small_blocks[b].name, c.lanes, err.message);
    /* block 4 (one warp's systems at 8 lanes): register rows, 1 CTA of 5 warps with 5 stages
     * (session 9: 81.9% of copy; 4 warps with 6 stages 71.0%, 2 CTAs of 2 warps 71.3%; session
     * 8: 78.5% with register rows and 4 warps against 65.1% without); elsewhere none (block 32:
     * 60.4% against 61.6%, session 8) */
    const int want_reg = small_blocks[b].bs == 4 ? SE_HINES_COOP_REG_ON : SE_HINES_COOP_REG_OFF;
    SE_EXPECT(st,
              rc != SE_OK || (c.registers == want_reg &&
                              (b > 0 || (c.warps == 5 && c.stages == 5 && c.ctas_per_sm == 1))),
              "COOP choice big-high on %s: registers %d, %d warps", small_blocks[b].name,
              c.registers, c.warps);
    if (rc == SE_OK)
      printf("COOP automatic settings big-high    256000 %s: L%d C%d W%d S%d%s\n",
             small_blocks[b].name, c.lanes, c.ctas_per_sm, c.warps, c.stages,
             c.registers == SE_HINES_COOP_REG_ON ? ", register rows" : "");
  }
  free_systems(&y);
  se_error err = {0};
  se_hines_batch *bad = NULL;
  SE_EXPECT(st, se_hines_batch_create(trees[0].parent, trees[0].n, 10, SE_HINES_LAYOUT_BLOCK, 2,
                                      &bad, &err) == SE_ERR_ARG &&
                    strstr(err.message, "block size 2") != NULL,
            "block size 2 was accepted: %s", err.message);
  printf("host emulation on blocks of 4, 8, 16: Block kernel max relative error %.2e; COOP %d "
         "solves, max relative error %.2e\n",
         worst, runs, worst_coop);
}

/* ---- 2. GPU checks ---- */

static void gpu_solve_check(se_test_state *st, se_hines_batch *b, const tree *t,
                            const systems *y, const layout_case *lc, se_hines_kernel k,
                            const se_hines_stream_config *cfg, double *x, double *worst) {
  se_error err = {0};
  char buf[64] = "";
  const char *cs = cfg ? cfg_str(cfg, buf, sizeof buf) : "auto settings";
  se_hines_plan_info info;
  int rc = se_hines_batch_plan(b, k, cfg, &info, &err);
  if (rc == SE_ERR_UNSUPPORTED && may_be_unsupported(t, k, cfg))
    return;
  SE_EXPECT(st, rc == SE_OK, "plan %s %s %s %s: %s", t->name, lc->name, se_hines_kernel_name(k),
            cs, err.message);
  if (rc != SE_OK)
    return;
  rc = se_hines_batch_restore(b, &err);
  if (rc == SE_OK)
    rc = se_hines_batch_solve(b, k, cfg, &err);
  if (rc == SE_OK)
    rc = se_hines_batch_sync(b, &err);
  if (rc == SE_OK)
    rc = se_hines_batch_download(b, SE_HINES_LAYOUT_FLAT, x, &err);
  SE_EXPECT(st, rc == SE_OK, "GPU %s %s %s %s: %s", t->name, lc->name, se_hines_kernel_name(k),
            cs, err.message);
  if (rc != SE_OK)
    return;
  int bitwise = 0;
  double e = max_err(y, x, SE_HINES_LAYOUT_FLAT, 1, &bitwise);
  SE_EXPECT(st, e <= TOL, "GPU %s %s %s (resolved %s) %s: max relative error %.3g", t->name,
            lc->name, se_hines_kernel_name(k), se_hines_kernel_name(info.kernel), cs, e);
  if (info.kernel != SE_HINES_KERNEL_STREAM && info.kernel != SE_HINES_KERNEL_COOP)
    SE_EXPECT(st, bitwise == y->S, "GPU %s %s %s: %d of %lld systems bitwise equal to the CPU "
              "reference", t->name, lc->name, se_hines_kernel_name(k), bitwise,
              (long long)y->S);
  if (e > *worst || e != e)
    *worst = e;
}

/* One COOP solve on the GPU against the reference. */
static void gpu_coop_check(se_test_state *st, se_hines_batch *b, const tree *t, const systems *y,
                           const layout_case *lc, const se_hines_coop_config *cfg, double *x,
                           double *worst) {
  se_error err = {0};
  se_hines_coop *plan = NULL;
  int rc = se_hines_coop_create(b, cfg, &plan, &err);
  if (rc == SE_OK)
    rc = se_hines_batch_restore(b, &err);
  if (rc == SE_OK)
    rc = se_hines_coop_solve(plan, b, &err);
  if (rc == SE_OK)
    rc = se_hines_batch_sync(b, &err);
  if (rc == SE_OK)
    rc = se_hines_batch_download(b, SE_HINES_LAYOUT_FLAT, x, &err);
  SE_EXPECT(st, rc == SE_OK, "GPU COOP %s %s L%d/ST%d/W%d/C%d/R%d: %s", t->name, lc->name,
            cfg->lanes, cfg->stages, cfg->warps, cfg->ctas_per_sm, cfg->registers, err.message);
  if (rc == SE_OK) {
    int bitwise = 0;
    double e = max_err(y, x, SE_HINES_LAYOUT_FLAT, 1, &bitwise);
    SE_EXPECT(st, e <= TOL, "GPU COOP %s %s L%d/ST%d/W%d/C%d/R%d: max relative error %.3g",
              t->name, lc->name, cfg->lanes, cfg->stages, cfg->warps, cfg->ctas_per_sm,
              cfg->registers, e);
    if (e > *worst || e != e)
      *worst = e;
  }
  se_hines_coop_destroy(plan);
}

/* A device batch of y's systems in lc's layout, uploaded and saved (for se_hines_batch_restore
 * before each solve); NULL (and a failed check) when that fails. */
static se_hines_batch *gpu_batch(se_test_state *st, const tree *t, const systems *y,
                                 const layout_case *lc) {
  se_error err = {0};
  se_hines_batch *b = NULL;
  int rc = se_hines_batch_create(t->parent, t->n, y->S, lc->layout, lc->bs, &b, &err);
  if (rc == SE_OK)
    rc = se_hines_batch_upload(b, SE_HINES_LAYOUT_FLAT, y->u, y->l, y->d, y->rhs, &err);
  if (rc == SE_OK)
    rc = se_hines_batch_save(b, &err);
  SE_EXPECT(st, rc == SE_OK, "GPU batch %s %s: %s", t->name, lc->name, err.message);
  if (rc != SE_OK) {
    se_hines_batch_destroy(b);
    return NULL;
  }
  return b;
}

/* On the GPU, every SWC morphology of the data folder (issue 3 asks every GPU variant on every
 * one): a block-32 batch of 64 systems, the paper's Block-Interleaved kernel (bitwise), AUTO and
 * COOP with 2, 4, 8 and 16 lanes (automatic stages and register rows); a COOP setting whose
 * cells do not fit the device's shared memory is refused with SE_ERR_UNSUPPORTED and a message,
 * as in the emulation (check_swc_trees). Added in session 9 after its last device call. */
typedef struct swc_gpu {
  se_test_state *st;
  int n, refused;
  double worst;
} swc_gpu;

static void check_gpu_swc_tree(void *ctx, const char *name, const se_morphology *m) {
  swc_gpu *k = ctx;
  tree t = tree_of(name, m);
  systems y = make_systems(&t, 64, 700 + (uint64_t)k->n);
  const layout_case *lc = &layouts[2]; /* block 32 */
  se_hines_batch *b = gpu_batch(k->st, &t, &y, lc);
  if (b) {
    double *x = malloc((size_t)t.n * (size_t)y.S * sizeof *x);
    gpu_solve_check(k->st, b, &t, &y, lc, SE_HINES_KERNEL_BLOCK, NULL, x, &k->worst);
    gpu_solve_check(k->st, b, &t, &y, lc, SE_HINES_KERNEL_AUTO, NULL, x, &k->worst);
    for (int lanes = 2; lanes <= 16; lanes *= 2) {
      const se_hines_coop_config c = {lanes, 0, 0, 0, SE_HINES_COOP_REG_AUTO};
      se_hines_coop *plan = NULL;
      se_error err = {0};
      const int rc = se_hines_coop_create(b, &c, &plan, &err);
      se_hines_coop_destroy(plan);
      if (rc == SE_ERR_UNSUPPORTED) {
        SE_EXPECT(k->st, err.message[0] != 0, "GPU COOP %s L%d refused without a message", name,
                  lanes);
        k->refused++;
        continue;
      }
      gpu_coop_check(k->st, b, &t, &y, lc, &c, x, &k->worst);
    }
    free(x);
    se_hines_batch_destroy(b);
  }
  free_systems(&y);
  free(t.parent);
  k->n++;
}

static void check_gpu_tree(se_test_state *st, const tree *t, int64_t S, uint64_t seed,
                           int all_settings) {
  systems y = make_systems(t, S, seed);
  double *x = malloc((size_t)t->n * (size_t)S * sizeof *x);
  for (int li = 0; li < N_LAYOUTS; li++) {
    const layout_case *lc = &layouts[li];
    se_error err = {0};
    se_hines_batch *b = gpu_batch(st, t, &y, lc);
    if (!b)
      continue;
    double w_paper = 0.0, w_shared = 0.0, w_stream = 0.0, w_auto = 0.0;
    const se_hines_kernel paper = lc->layout == SE_HINES_LAYOUT_FLAT   ? SE_HINES_KERNEL_FLAT
                                  : lc->layout == SE_HINES_LAYOUT_FULL ? SE_HINES_KERNEL_FULL
                                                                       : SE_HINES_KERNEL_BLOCK;
    gpu_solve_check(st, b, t, &y, lc, paper, NULL, x, &w_paper);
    if (lc->layout == SE_HINES_LAYOUT_BLOCK)
      gpu_solve_check(st, b, t, &y, lc, SE_HINES_KERNEL_BLOCK_SHARED, NULL, x, &w_shared);
    gpu_solve_check(st, b, t, &y, lc, SE_HINES_KERNEL_AUTO, NULL, x, &w_auto);
    gpu_solve_check(st, b, t, &y, lc, SE_HINES_KERNEL_STREAM, NULL, x, &w_stream);
    se_hines_stream_config cfgs[16];
    int nc = stream_cases(t->n, cfgs);
    for (int c = 0; c < nc; c++)
      if (all_settings || c % 4 == 0)
        gpu_solve_check(st, b, t, &y, lc, SE_HINES_KERNEL_STREAM, &cfgs[c], x, &w_stream);
    double w_coop = 0.0;
    if (lc->layout != SE_HINES_LAYOUT_FLAT) {
      gpu_solve_check(st, b, t, &y, lc, SE_HINES_KERNEL_COOP, NULL, x, &w_coop);
      se_hines_coop_config cc[N_COOP_CASES];
      int ncc = coop_cases(cc);
      for (int c = 0; c < ncc; c++)
        if (all_settings || c % 2 == 0)
          gpu_coop_check(st, b, t, &y, lc, &cc[c], x, &w_coop);
      const se_hines_coop_config fixed[3] = {{4, 4, 1, 0, 0}, {8, 4, 1, 2, 0}, {8, 3, 1, 1, 0}};
      for (int c = 0; c < 3; c++)
        gpu_coop_check(st, b, t, &y, lc, &fixed[c], x, &w_coop);
      /* register rows where the plan has room: automatic warps (at most 8), 2 CTAs, 2 warps */
      const se_hines_coop_config reg[3] = {{8, 6, 0, 0, SE_HINES_COOP_REG_ON},
                                           {8, 4, 0, 2, SE_HINES_COOP_REG_ON},
                                           {8, 3, 2, 1, SE_HINES_COOP_REG_ON}};
      for (int c = 0; c < 3; c++)
        if (coop_reg_room(t, reg[c].stages))
          gpu_coop_check(st, b, t, &y, lc, &reg[c], x, &w_coop);
    }
    /* u and l are kept by every kernel */
    double *ul = malloc((size_t)t->n * sizeof *ul);
    for (int a = 0; a < 2; a++) {
      int64_t s = S - 1;
      int rc = se_hines_batch_download_system(b, a, s, ul, &err);
      SE_EXPECT(st, rc == SE_OK, "download_system: %s", err.message);
      const double *want = (a == 0 ? y.u : y.l) + (size_t)s * t->n;
      SE_EXPECT(st, rc != SE_OK || !memcmp(ul, want, (size_t)t->n * sizeof *ul),
                "%s %s: array %s changed by the solves", t->name, lc->name, a ? "l" : "u");
    }
    free(ul);
    printf("GPU %-12s n %4d S %5lld %-8s | paper %.1e | shared %.1e | stream %.1e | auto %.1e "
           "| coop %.1e\n",
           t->name, t->n, (long long)S, lc->name, w_paper, w_shared, w_stream, w_auto, w_coop);
    se_hines_batch_destroy(b);
  }
  free(x);
  free_systems(&y);
}

/* The small blocks on the GPU (medium-high, big-high, random; 1000 systems, not a multiple of
 * any block): the paper's Block kernel, AUTO (COOP with lanes that fit) and COOP with 8, 4, 2
 * lanes where a warp's systems fit a block, against the reference; STREAM refused. */
static void check_gpu_small_blocks(se_test_state *st, const tree *trees) {
  const int which[3] = {3, 5, 6};
  for (int w = 0; w < 3; w++) {
    const tree *t = &trees[which[w]];
    const int64_t S = 1000;
    systems y = make_systems(t, S, 31 + (uint64_t)w);
    double *x = malloc((size_t)t->n * (size_t)S * sizeof *x);
    for (int bi = 0; bi < 3; bi++) {
      const layout_case *lc = &small_blocks[bi];
      se_error err = {0};
      se_hines_batch *b = gpu_batch(st, t, &y, lc);
      if (!b)
        continue;
      double w_block = 0.0, w_auto = 0.0, w_coop = 0.0;
      gpu_solve_check(st, b, t, &y, lc, SE_HINES_KERNEL_BLOCK, NULL, x, &w_block);
      gpu_solve_check(st, b, t, &y, lc, SE_HINES_KERNEL_AUTO, NULL, x, &w_auto);
      for (int lanes = 2; lanes <= 8; lanes *= 2)
        if (32 / lanes <= lc->bs) {
          const se_hines_coop_config c = {lanes, 6, 0, 0, 0};
          gpu_coop_check(st, b, t, &y, lc, &c, x, &w_coop);
        }
      const se_hines_coop_config reg = {8, 6, 0, 0, SE_HINES_COOP_REG_ON};
      if (coop_reg_room(t, 6))
        gpu_coop_check(st, b, t, &y, lc, &reg, x, &w_coop);
      SE_EXPECT(st, se_hines_batch_solve(b, SE_HINES_KERNEL_STREAM, NULL, &err) ==
                        SE_ERR_UNSUPPORTED,
                "STREAM on %s was accepted", lc->name);
      printf("GPU %-12s n %4d S %5lld %-8s | paper %.1e | auto %.1e | coop %.1e\n", t->name,
             t->n, (long long)S, lc->name, w_block, w_auto, w_coop);
      se_hines_batch_destroy(b);
    }
    free(x);
    free_systems(&y);
  }
}

/* The device generator against the host one, then a STREAM solve of those systems. */
static void check_gpu_fill(se_test_state *st, const tree *t) {
  const int64_t S = 777;
  const uint64_t seed = 99;
  se_error err = {0};
  se_hines_batch *b = NULL;
  int rc = se_hines_batch_create(t->parent, t->n, S, SE_HINES_LAYOUT_BLOCK, 64, &b, &err);
  if (rc == SE_OK)
    rc = se_hines_batch_fill_random(b, seed, &err);
  if (rc == SE_OK)
    rc = se_hines_batch_sync(b, &err);
  SE_EXPECT(st, rc == SE_OK, "fill_random: %s", err.message);
  if (rc != SE_OK) {
    se_hines_batch_destroy(b);
    return;
  }
  systems y = make_systems(t, S, seed);
  double *got = malloc((size_t)t->n * sizeof *got);
  const int64_t probe[3] = {0, S / 2, S - 1};
  for (int k = 0; k < 3; k++) {
    const int64_t s = probe[k];
    const double *want[4] = {y.u + (size_t)s * t->n, y.l + (size_t)s * t->n,
                             y.d + (size_t)s * t->n, y.rhs + (size_t)s * t->n};
    for (int a = 0; a < 4; a++) {
      rc = se_hines_batch_download_system(b, a, s, got, &err);
      SE_EXPECT(st, rc == SE_OK && !memcmp(got, want[a], (size_t)t->n * sizeof *got),
                "device generator: array %d of system %lld differs from the host's (%s)", a,
                (long long)s, err.message);
    }
  }
  rc = se_hines_batch_solve(b, SE_HINES_KERNEL_AUTO, NULL, &err);
  if (rc == SE_OK)
    rc = se_hines_batch_sync(b, &err);
  SE_EXPECT(st, rc == SE_OK, "solve after fill_random: %s", err.message);
  for (int k = 0; k < 3 && rc == SE_OK; k++) {
    rc = se_hines_batch_download_system(b, 3, probe[k], got, &err);
    double e = rel_err(t->n, got, y.x + (size_t)probe[k] * t->n);
    SE_EXPECT(st, rc == SE_OK && e <= TOL, "solve after fill_random: system %lld error %.3g",
              (long long)probe[k], e);
  }
  free(got);
  free_systems(&y);
  se_hines_batch_destroy(b);
}

static void check_gpu_errors(se_test_state *st, const tree *t) {
  se_error err = {0};
  se_hines_batch *b = NULL;
  int32_t bad[3] = {-1, 0, 2};
  SE_EXPECT(st, se_hines_batch_create(bad, 3, 10, SE_HINES_LAYOUT_FULL, 0, &b, &err) == SE_ERR_ARG,
            "a parent after its child was accepted");
  SE_EXPECT(st, strstr(err.message, "row 2 has parent 2") != NULL, "message: %s", err.message);
  SE_EXPECT(st, se_hines_batch_create(t->parent, t->n, 10, SE_HINES_LAYOUT_BLOCK, 48, &b, &err) ==
                    SE_ERR_ARG,
            "block size 48 was accepted");
  int rc = se_hines_batch_create(t->parent, t->n, 10, SE_HINES_LAYOUT_FULL, 0, &b, &err);
  SE_EXPECT(st, rc == SE_OK, "create: %s", err.message);
  if (rc == SE_OK) {
    SE_EXPECT(st, se_hines_batch_solve(b, SE_HINES_KERNEL_BLOCK, NULL, &err) == SE_ERR_ARG,
              "the Block kernel ran on a full batch");
    SE_EXPECT(st, strstr(err.message, "block layout") != NULL, "message: %s", err.message);
    se_hines_stream_config c = {48, 8, 1, -1};
    SE_EXPECT(st, se_hines_batch_solve(b, SE_HINES_KERNEL_STREAM, &c, &err) == SE_ERR_ARG,
              "48 threads per CTA were accepted");
    SE_EXPECT(st, se_hines_batch_restore(b, &err) == SE_ERR_ARG, "restore without save");
  }
  se_hines_batch_destroy(b);
}

/* The automatic choice at 256 000 neurons (Block-Interleaved, BS 32) on the device: COOP where
 * session 7's third device run measured it clearly faster than the STREAM settings there
 * (fractions of the copy bandwidth at 40 B, docs/bench/gpu_hines_s7_final_kernel.txt: small-low
 * 92.1% against 62.0%, small-high 91.2% against 61.0%, medium-low 80.1% against 50.4%,
 * medium-high 82.6% against 49.3%, big-high 61.7% against 45.7%); big-low may go either way
 * (COOP L 4 51.1%, STREAM 48.5%: the two models 2% apart, docs/gpu-hines.md). The COOP kernel
 * on the flat layout is refused. */
static void check_gpu_auto_choice(se_test_state *st, const tree *trees) {
  const se_hines_kernel want[6] = {SE_HINES_KERNEL_COOP, SE_HINES_KERNEL_COOP,
                                   SE_HINES_KERNEL_COOP, SE_HINES_KERNEL_COOP,
                                   SE_HINES_KERNEL_AUTO, SE_HINES_KERNEL_COOP};
  for (int ti = 0; ti < 6; ti++) {
    se_error err = {0};
    se_hines_batch *b = NULL;
    se_hines_plan_info info;
    int rc = se_hines_batch_create(trees[ti].parent, trees[ti].n, 256000, SE_HINES_LAYOUT_BLOCK,
                                   32, &b, &err);
    if (rc == SE_OK)
      rc = se_hines_batch_plan(b, SE_HINES_KERNEL_AUTO, NULL, &info, &err);
    SE_EXPECT(st, rc == SE_OK, "automatic choice %s 256000: %s", trees[ti].name, err.message);
    if (rc == SE_OK) {
      printf("GPU automatic choice %-11s 256000 block32: %s", trees[ti].name,
             se_hines_kernel_name(info.kernel));
      if (info.kernel == SE_HINES_KERNEL_COOP)
        printf(" L%d C%d\n", info.coop_lanes, info.coop_ctas_per_sm);
      else
        printf(" T%d C%d R%d\n", info.stream.threads, info.stream.ctas_per_sm, info.tail_rows);
      if (want[ti] != SE_HINES_KERNEL_AUTO)
        SE_EXPECT(st, info.kernel == want[ti], "automatic choice %s 256000: %s, expected %s",
                  trees[ti].name, se_hines_kernel_name(info.kernel),
                  se_hines_kernel_name(want[ti]));
    }
    se_hines_batch_destroy(b);
  }
  se_error err = {0};
  se_hines_batch *b = NULL;
  se_hines_plan_info info;
  int rc = se_hines_batch_create(trees[0].parent, trees[0].n, 100, SE_HINES_LAYOUT_FLAT, 0, &b,
                                 &err);
  SE_EXPECT(st, rc == SE_OK && se_hines_batch_plan(b, SE_HINES_KERNEL_COOP, NULL, &info,
                                                   &err) == SE_ERR_ARG,
            "the COOP kernel on a flat batch: %s", err.message);
  se_hines_batch_destroy(b);
}

/* Every SWC morphology of the data folder (the default discretization, as simengine-prep; issue
 * 3 asks every GPU variant on every one of them): in the host emulation, S = 37, the paper's
 * Full-Interleaved kernel (bitwise), STREAM (128 threads, 4 stages) and COOP with 2, 4, 8 and 16
 * lanes (automatic stages; register rows on block 4 where the plan has room) on FULL, block 32
 * and block 4, against the reference. A tree whose cells do not fit a COOP setting's shared
 * memory (or whose step table cannot name its root cells) must be refused with
 * SE_ERR_UNSUPPORTED and a message, never solved wrongly; at least one tree must be solved by
 * every lane count. */
/* What check_swc_trees counts over the morphologies. */
typedef struct swc_counts {
  se_test_state *st;
  int n, runs, refused, solved_by[4];
  double worst;
} swc_counts;

static void check_swc_tree(void *ctx, const char *name, const se_morphology *m) {
  swc_counts *k = ctx;
  se_test_state *st = k->st;
  const layout_case block4 = {SE_HINES_LAYOUT_BLOCK, 4, "block4"};
  const layout_case *lcs[3] = {&layouts[1], &layouts[2], &block4}; /* full, block 32, block 4 */
  tree t = tree_of(name, m);
  systems y = make_systems(&t, 37, 900 + (uint64_t)k->n);
  const se_hines_stream_config sc = {128, 4, 1, -1}; /* the emulation takes explicit settings */
  emulate_one(st, &t, &y, &layouts[1], SE_HINES_KERNEL_FULL, NULL, &k->worst);
  emulate_one(st, &t, &y, &layouts[2], SE_HINES_KERNEL_STREAM, &sc, &k->worst);
  k->runs += 2;
  printf("SWC %-52s n %5d:", t.name, t.n);
  for (int q = 0; q < 4; q++)
    for (int li = 0; li < 3; li++) {
      const int lanes = 2 << q;
      if (lcs[li]->bs == 4 && lanes != 8)
        continue; /* block 4 holds one warp's systems at 8 lanes only */
      const se_hines_coop_config c = {lanes, 0, 0, 0, SE_HINES_COOP_REG_AUTO};
      layout_arrays a = make_layout_arrays(&y, lcs[li]);
      se_hines_coop_info info;
      se_error err = {0};
      int rc = se_hines_coop_emulate(t.parent, t.n, y.S, lcs[li]->layout, lcs[li]->bs, &c, a.u,
                                     a.l, a.d, a.r, &info, &err);
      SE_EXPECT(st, rc == SE_OK || (rc == SE_ERR_UNSUPPORTED && err.message[0] != 0),
                "COOP emulation %s %s L%d: %s", t.name, lcs[li]->name, lanes, err.message);
      if (rc == SE_OK) {
        int bitwise = 0;
        double er = max_err(&y, a.r, lcs[li]->layout, lcs[li]->bs, &bitwise);
        SE_EXPECT(st, er <= TOL, "COOP emulation %s %s L%d: max relative error %.3g", t.name,
                  lcs[li]->name, lanes, er);
        if (er > k->worst || er != er)
          k->worst = er;
        k->runs++;
        k->solved_by[q]++;
        if (li == 1)
          printf(" | L%d %d steps%s", lanes, info.steps, info.levels == 0 ? " (list)" : "");
      } else {
        k->refused++;
        if (li == 1)
          printf(" | L%d refused", lanes);
      }
      free_layout_arrays(&a);
    }
  printf("\n");
  free_systems(&y);
  free(t.parent);
  k->n++;
}

static void check_swc_trees(se_test_state *st, const char *dir) {
  swc_counts k = {st, 0, 0, 0, {0, 0, 0, 0}, 0.0};
  const int n_swc = se_test_for_each_swc(st, dir, check_swc_tree, &k);
  SE_EXPECT(st, n_swc >= 5, "only %d SWC files loaded from %s", n_swc, dir);
  for (int q = 0; q < 4; q++)
    SE_EXPECT(st, k.solved_by[q] > 0, "COOP with %d lanes solved none of the SWC trees", 2 << q);
  printf("host emulation on %d SWC morphologies: %d solves, %d COOP settings refused, max "
         "relative error %.2e\n",
         n_swc, k.runs, k.refused, k.worst);
}

int main(int argc, char **argv) {
  se_test_state st = {0, 0};
  const char *classes[6] = {"small-low", "small-high", "medium-low", "medium-high", "big-low",
                            "big-high"};
  tree trees[12];
  int n_trees = 0;
  for (int c = 0; c < 6; c++) {
    se_morphology m = {0};
    se_error err = {0};
    if (se_morphology_synthetic(classes[c], 1, &m, &err) != SE_OK) {
      fprintf(stderr, "%s\n", err.message);
      return 1;
    }
    trees[n_trees++] = tree_of(classes[c], &m);
    se_morphology_free(&m);
  }
  uint64_t rng = 2024;
  tree r = make_tree("random", 500); /* many branches: half the rows start a new branch */
  for (int32_t i = 1; i < r.n; i++)
    r.parent[i] = se_rand_next(&rng) % 2 ? (int32_t)(se_rand_next(&rng) % (uint64_t)i) : i - 1;
  trees[n_trees++] = r;
  tree one = make_tree("one-row", 1);
  trees[n_trees++] = one;
  tree two = make_tree("two-rows", 2);
  two.parent[1] = 0;
  trees[n_trees++] = two;
  tree chain = make_tree("chain", 300);
  for (int32_t i = 1; i < chain.n; i++)
    chain.parent[i] = i - 1;
  trees[n_trees++] = chain;
  tree star = make_tree("star", 64);
  for (int32_t i = 1; i < star.n; i++)
    star.parent[i] = 0;
  trees[n_trees++] = star;

  check_reference(&st);
  check_emulation(&st, trees, n_trees);
  check_coop_emulation(&st, trees, n_trees);
  check_small_blocks(&st, trees, n_trees);
  check_coop_registers(&st, trees, n_trees);
  check_coop_choice(&st, trees);
  check_swc_trees(&st, argc >= 2 ? argv[1] : NULL);

  int devices = se_cuda_device_count();
  if (devices == 0) {
    int rc = se_test_finish(&st, "gpu_hines (host part)");
    if (rc)
      return rc;
    printf("skipped: no GPU\n");
    for (int k = 0; k < n_trees; k++)
      free(trees[k].parent);
    return 77;
  }
  struct cudaDeviceProp prop;
  if (cudaGetDeviceProperties(&prop, 0) == cudaSuccess)
    printf("GPU: %s, %d multiprocessors, %zu bytes of shared memory per multiprocessor\n",
           prop.name, prop.multiProcessorCount, prop.sharedMemPerMultiprocessor);
  for (int k = 0; k < n_trees; k++)
    check_gpu_tree(&st, &trees[k], 1000, 555 + (uint64_t)k, k < 7);
  check_gpu_tree(&st, &trees[5], 1, 3, 0);
  check_gpu_tree(&st, &trees[6], 33, 4, 0);  /* full: odd S, 8-byte copies; block: 1 lane */
  check_gpu_tree(&st, &trees[3], 66, 5, 0);  /* full: even S, a last warp of 2 systems */
  check_gpu_small_blocks(&st, trees);
  check_gpu_fill(&st, &trees[4]);
  check_gpu_errors(&st, &trees[1]);
  check_gpu_auto_choice(&st, trees);
  swc_gpu sg = {&st, 0, 0, 0.0};
  se_test_for_each_swc(&st, argc >= 2 ? argv[1] : NULL, check_gpu_swc_tree, &sg);
  printf("GPU on %d SWC morphologies: max relative error %.2e, %d COOP settings refused\n", sg.n,
         sg.worst, sg.refused);
  for (int k = 0; k < n_trees; k++)
    free(trees[k].parent);
  return se_test_finish(&st, "gpu_hines");
}
#endif
