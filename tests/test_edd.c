/* Exact Domain Decomposition of one large Hines matrix (src/hines_edd_plan.h, cuda/hines_edd.h,
 * docs/edd.md).
 *
 *   test_edd cpu DATA_DIR   (label unit): the plan and its CPU executor, no GPU needed
 *   test_edd gpu DATA_DIR   (label gpu): the GPU executor; exit 77 "skipped: no GPU" without one
 *
 * Trees: edge cases (1, 2, 3 rows), chains of every length modulo K, stars, a binary tree, a
 * caterpillar, random trees (bushy and long-run, up to 2e5 rows on the CPU, 1e6 on the GPU),
 * random trees renumbered breadth-first (chains not consecutive: the listed-chain path), the six
 * synthetic classes, every real SWC of DATA_DIR at the default discretization and refined
 * (max_length 1 um, EC2 also 0.3 um on the CPU and 0.043 um (1.0e6 rows) on the GPU).
 * Systems: the engine's form (g > 0 to the parent, d = c + couplings), c in [0.1, 2) and a
 * weakly dominant set, c in [0.01, 0.02).
 *
 * CPU: for K in {2, 3, 4} (and 8) and recursion depths 0, 1, 2, 3 and unlimited: the plan's
 * structure (every row a junction or in exactly one chain of at most K - 1 rows, levels
 * shrinking, the next level's tree parents-first); x against the plain sequential Hines sweep
 * within 1e-12 relative (2-norm), the sweep against dense LU for n <= 300; the junction system
 * of every level is a Hines matrix (G >= 0) whose solution is x at the level's rows, and for
 * small trees equals the dense Schur complement on the junctions (paper 004, Theorem 1; G > 0
 * decays with the distance it spans and may underflow to 0 deep down); bad
 * trees and options are refused.
 * GPU: the same plans on the device, x bitwise equal to the CPU executor's and within 1e-12 of
 * the sweep; tail sizes 0, default and everything-in-the-tail; graph on and off, replays and new
 * pointers; depth 0 (one GPU thread) up to 2e5 rows; errors. */
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dense_solve.h"
#include "hines_edd_plan.h"
#include "se_error.h"
#include "se_test.h"
#include "swc.h"

#ifdef SIMENGINE_HAVE_CUDA
#include "hines_edd.h"
#include "se_random.h"
#endif

#define TOL 1e-12


static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) {
    fprintf(stderr, "test_edd: out of memory (%zu bytes)\n", n);
    exit(1);
  }
  return p;
}

/* ---- trees ---------------------------------------------------------------------------------- */

typedef struct tree {
  char name[96];
  int32_t n;
  int32_t *parent;
} tree;

static tree tree_new(const char *name, int32_t n) {
  tree t;
  snprintf(t.name, sizeof t.name, "%s", name);
  t.n = n;
  t.parent = xmalloc((size_t)n * sizeof *t.parent);
  t.parent[0] = -1;
  return t;
}

static tree tree_chain(int32_t n) {
  char name[64];
  snprintf(name, sizeof name, "chain-%d", (int)n);
  tree t = tree_new(name, n);
  for (int32_t i = 1; i < n; i++)
    t.parent[i] = i - 1;
  return t;
}

static tree tree_star(int32_t n) {
  char name[64];
  snprintf(name, sizeof name, "star-%d", (int)n);
  tree t = tree_new(name, n);
  for (int32_t i = 1; i < n; i++)
    t.parent[i] = 0;
  return t;
}

static tree tree_binary(int32_t n) {
  char name[64];
  snprintf(name, sizeof name, "binary-%d", (int)n);
  tree t = tree_new(name, n);
  for (int32_t i = 1; i < n; i++)
    t.parent[i] = (i - 1) / 2;
  return t;
}

/* A spine (even rows) with one leaf on every spine row (odd rows). */
static tree tree_caterpillar(int32_t n) {
  char name[64];
  snprintf(name, sizeof name, "caterpillar-%d", (int)n);
  tree t = tree_new(name, n);
  for (int32_t i = 1; i < n; i++)
    t.parent[i] = (i % 2) ? i - 1 : i - 2;
  return t;
}

/* parent = i - 1 with probability p_run, else uniform in [0, i). */
static tree tree_random(int32_t n, double p_run, uint64_t seed) {
  char name[64];
  snprintf(name, sizeof name, "random-%d-run%.2f", (int)n, p_run);
  tree t = tree_new(name, n);
  uint64_t s = seed;
  for (int32_t i = 1; i < n; i++)
    t.parent[i] = se_rand_u01(&s) < p_run ? i - 1 : (int32_t)(se_rand_next(&s) % (uint64_t)i);
  return t;
}

/* The tree renumbered breadth-first (parents still first; unbranched runs no longer
 * consecutive). */
static tree tree_bfs(const tree *src) {
  char name[96];
  snprintf(name, sizeof name, "%.80s-bfs", src->name);
  tree t = tree_new(name, src->n);
  const int32_t n = src->n;
  int32_t *off = calloc((size_t)n + 1, sizeof *off), *ch = xmalloc((size_t)n * sizeof *ch);
  int32_t *fill = xmalloc((size_t)n * sizeof *fill), *q = xmalloc((size_t)n * sizeof *q);
  int32_t *nid = xmalloc((size_t)n * sizeof *nid);
  for (int32_t i = 1; i < n; i++)
    off[src->parent[i] + 1]++;
  for (int32_t i = 0; i < n; i++)
    off[i + 1] += off[i];
  for (int32_t i = 0; i < n; i++)
    fill[i] = off[i];
  for (int32_t i = 1; i < n; i++)
    ch[fill[src->parent[i]]++] = i;
  int32_t head = 0, tail = 0;
  q[tail++] = 0;
  while (head < tail) {
    const int32_t a = q[head];
    nid[a] = head++;
    for (int32_t c = off[a]; c < off[a + 1]; c++)
      q[tail++] = ch[c];
  }
  for (int32_t i = 1; i < n; i++)
    t.parent[nid[i]] = nid[src->parent[i]];
  free(off);
  free(ch);
  free(fill);
  free(q);
  free(nid);
  return t;
}

static int tree_from_morph(const se_morphology *m, const char *name, tree *t) {
  *t = tree_new(name, m->n_compartments);
  memcpy(t->parent, m->parent, (size_t)m->n_compartments * sizeof *t->parent);
  return 0;
}

/* ---- systems -------------------------------------------------------------------------------- */

typedef struct sys {
  double *d, *g, *r, *x; /* x: the sequential sweep's solution */
} sys;

static sys sys_new(const tree *t, uint64_t seed, double c_lo, double c_hi) {
  const int32_t n = t->n;
  sys y;
  y.d = xmalloc((size_t)n * sizeof(double));
  y.g = xmalloc((size_t)n * sizeof(double));
  y.r = xmalloc((size_t)n * sizeof(double));
  y.x = xmalloc((size_t)n * sizeof(double));
  uint64_t s = seed;
  for (int32_t i = 0; i < n; i++) {
    y.g[i] = i ? 0.05 + 0.95 * se_rand_u01(&s) : 0.0;
    y.d[i] = c_lo + (c_hi - c_lo) * se_rand_u01(&s);
    y.r[i] = 2.0 * se_rand_u01(&s) - 1.0;
  }
  for (int32_t i = 1; i < n; i++) {
    y.d[i] += y.g[i];
    y.d[t->parent[i]] += y.g[i];
  }
  double *pv = xmalloc((size_t)n * sizeof(double));
  memcpy(y.x, y.r, (size_t)n * sizeof(double));
  se_hines_sequential(n, t->parent, y.d, y.g, y.x, pv);
  free(pv);
  return y;
}

static void sys_free(sys *y) {
  free(y->d);
  free(y->g);
  free(y->r);
  free(y->x);
}

static double rel_err(int32_t n, const double *x, const double *ref) {
  double num = 0.0, den = 0.0;
  for (int32_t i = 0; i < n; i++) {
    num += (x[i] - ref[i]) * (x[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  const double e = den > 0.0 ? sqrt(num / den) : sqrt(num);
  return e == e ? e : INFINITY;
}

/* Dense matrix of the system (row-major, n x n). */
static double *dense_matrix(const tree *t, const sys *y) {
  const int32_t n = t->n;
  double *a = calloc((size_t)n * n, sizeof *a);
  for (int32_t i = 0; i < n; i++) {
    a[(size_t)i * n + i] = y->d[i];
    if (i > 0) {
      a[(size_t)i * n + t->parent[i]] = -y->g[i];
      a[(size_t)t->parent[i] * n + i] = -y->g[i];
    }
  }
  return a;
}

/* ---- the plan's structure ------------------------------------------------------------------- */

/* Every row of each level is a junction or in exactly one chain of <= K-1 rows, chains hang
 * below their junction and end above their bottom junction, the levels shrink, and each level's
 * junction system is a Hines matrix whose solution is x at the level's rows. */
static void check_structure(se_test_state *st, const char *what, const tree *t, const sys *y,
                            se_hines_edd_plan *p, const se_hines_edd_options *o) {
  const int K = o->k;
  SE_EXPECT(st, o->max_depth < 0 || p->levels <= o->max_depth, "%s: %d levels", what, p->levels);
  SE_EXPECT(st,
            p->n_bottom <= o->seq_rows || p->levels == o->max_depth ||
                (p->levels == 0 && p->n_bottom <= o->seq_rows),
            "%s: bottom %d rows after %d levels", what, p->n_bottom, p->levels);
  /* rows of each level in terms of level-0 rows */
  int32_t *map = xmalloc((size_t)t->n * sizeof *map), *nmap = xmalloc((size_t)t->n * sizeof *nmap);
  int32_t *par = xmalloc((size_t)t->n * sizeof *par), *npar = xmalloc((size_t)t->n * sizeof *npar);
  int32_t *seen = xmalloc((size_t)t->n * sizeof *seen);
  double *ld = xmalloc((size_t)t->n * sizeof(double)), *lg = xmalloc((size_t)t->n * sizeof(double));
  double *lr = xmalloc((size_t)t->n * sizeof(double)), *pv = xmalloc((size_t)t->n * sizeof(double));
  for (int32_t i = 0; i < t->n; i++)
    map[i] = i;
  memcpy(par, t->parent, (size_t)t->n * sizeof *par);
  int32_t n = t->n;
  for (int l = 0; l < p->levels; l++) {
    const se_hines_edd_level *lv = &p->lv[l];
    SE_EXPECT(st, lv->n_rows == n, "%s: level %d has %d rows, expected %d", what, l, lv->n_rows,
              n);
    SE_EXPECT(st, lv->n_junctions < n || n == 1, "%s: level %d does not shrink (%d -> %d)", what,
              l, n, lv->n_junctions);
    memset(seen, 0, (size_t)n * sizeof *seen);
    int bad = 0;
    se_edd_view v;
    memset(&v, 0, sizeof v);
    v.jnode = lv->jnode;
    v.jinfo = lv->jinfo;
    v.gl_off = lv->gl_off;
    v.gl = lv->gl;
    v.lnodes = lv->lnodes;
    for (int32_t j = 0; j < lv->n_junctions; j++) {
      const int32_t a = lv->jnode[j];
      if (a < 0 || a >= n) {
        bad++;
        continue;
      }
      seen[a]++;
      int32_t l0, l1;
      const int general = se_edd_links(&v, j, a, &l0, &l1);
      for (int32_t k = l0; k < l1; k++) {
        const se_edd_link L = se_edd_link_at(&v, general, j, a, k);
        if (L.len > K - 1)
          bad++;
        int32_t prev = a;
        for (int32_t q = 0; q < L.len; q++) {
          const int32_t row = L.list ? lv->lnodes[L.top + q] : L.top + q;
          if (row <= 0 || row >= n || par[row] != prev) {
            bad++;
            break;
          }
          seen[row]++;
          prev = row;
        }
        if (L.bot >= 0 && (L.botrow <= 0 || L.botrow >= n || par[L.botrow] != prev ||
                           L.bot >= lv->n_junctions || lv->jnode[L.bot] != L.botrow))
          bad++;
        if (L.bot < 0 && L.len == 0)
          bad++;
      }
    }
    for (int32_t i = 0; i < n; i++)
      if (seen[i] != 1)
        bad++;
    SE_EXPECT(st, bad == 0, "%s: level %d: %d structural faults", what, l, bad);
    /* the next level: its system, its tree, its rows */
    se_error err = {0};
    const int32_t m = lv->n_junctions;
    const int rc = se_hines_edd_level_system_cpu(p, y->d, y->g, y->r, l + 1, ld, lg, lr, npar, &err);
    SE_EXPECT(st, rc == SE_OK, "%s: level system %d: %s", what, l + 1, err.message);
    if (rc != SE_OK)
      break;
    int hines = npar[0] == -1;
    for (int32_t i = 1; i < m; i++)
      hines = hines && npar[i] >= 0 && npar[i] < i && lg[i] >= 0.0 && isfinite(lg[i]) &&
              isfinite(ld[i]) && ld[i] > 0.0;
    /* G decays geometrically with the distance it spans (by about (g/d)^K per level) and may
     * underflow to 0 deep down: the junctions are then decoupled, exactly as in the matrix */
    SE_EXPECT(st, hines, "%s: level %d's system is not a Hines matrix with G >= 0", what, l + 1);
    for (int32_t j = 0; j < m; j++)
      nmap[j] = map[lv->jnode[j]];
    se_hines_sequential(m, npar, ld, lg, lr, pv);
    double num = 0.0, den = 0.0;
    for (int32_t j = 0; j < m; j++) {
      const double e = lr[j] - y->x[nmap[j]];
      num += e * e;
      den += y->x[nmap[j]] * y->x[nmap[j]];
    }
    const double e = den > 0 ? sqrt(num / den) : sqrt(num);
    SE_EXPECT(st, e <= TOL, "%s: level %d's solution differs from x at its rows by %.3e", what,
              l + 1, e);
    memcpy(map, nmap, (size_t)m * sizeof *map);
    memcpy(par, npar, (size_t)m * sizeof *par);
    n = m;
  }
  free(map);
  free(nmap);
  free(par);
  free(npar);
  free(seen);
  free(ld);
  free(lg);
  free(lr);
  free(pv);
}

/* Level 1's system against the dense Schur complement on the junction rows (small trees). */
static void check_schur(se_test_state *st, const char *what, const tree *t, const sys *y,
                        se_hines_edd_plan *p) {
  if (p->levels < 1 || t->n > 160)
    return;
  const int32_t n = t->n, m = p->lv[0].n_junctions;
  const int32_t *jn = p->lv[0].jnode;
  int32_t *isj = calloc((size_t)n, sizeof *isj), *oth = xmalloc((size_t)n * sizeof *oth);
  for (int32_t j = 0; j < m; j++)
    isj[jn[j]] = 1;
  int32_t no = 0;
  for (int32_t i = 0; i < n; i++)
    if (!isj[i])
      oth[no++] = i;
  double *A = dense_matrix(t, y);
  /* S = A_JJ - A_JO A_OO^-1 A_OJ, rhs = r_J - A_JO A_OO^-1 r_O, column by column */
  double *S = xmalloc((size_t)m * m * sizeof(double)), *rs = xmalloc((size_t)m * sizeof(double));
  double *Aoo = xmalloc((size_t)no * no * sizeof(double) + 8), *col = xmalloc((size_t)no * 8 + 8);
  for (int32_t c = 0; c <= m; c++) {
    for (int32_t a = 0; a < no; a++) {
      for (int32_t b = 0; b < no; b++)
        Aoo[(size_t)a * no + b] = A[(size_t)oth[a] * n + oth[b]];
      col[a] = c < m ? A[(size_t)oth[a] * n + jn[c]] : y->r[oth[a]];
    }
    if (no)
      se_test_dense_solve(no, Aoo, col);
    for (int32_t rj = 0; rj < m; rj++) {
      double s = c < m ? A[(size_t)jn[rj] * n + jn[c]] : y->r[jn[rj]];
      for (int32_t a = 0; a < no; a++)
        s -= A[(size_t)jn[rj] * n + oth[a]] * col[a];
      if (c < m)
        S[(size_t)rj * m + c] = s;
      else
        rs[rj] = s;
    }
  }
  double *ld = xmalloc((size_t)m * 8), *lg = xmalloc((size_t)m * 8), *lr = xmalloc((size_t)m * 8);
  int32_t *lp = xmalloc((size_t)m * sizeof *lp);
  se_error err = {0};
  int rc = se_hines_edd_level_system_cpu(p, y->d, y->g, y->r, 1, ld, lg, lr, lp, &err);
  SE_EXPECT(st, rc == SE_OK, "%s: %s", what, err.message);
  double worst = 0.0, scale = 0.0;
  for (int32_t a = 0; a < m; a++)
    for (int32_t b = 0; b < m; b++) {
      double e = a == b ? ld[a] : (a > 0 && lp[a] == b ? -lg[a] : (b > 0 && lp[b] == a ? -lg[b] : 0.0));
      const double diff = fabs(e - S[(size_t)a * m + b]);
      worst = diff > worst || diff != diff ? diff : worst;
      scale = fabs(S[(size_t)a * m + b]) > scale ? fabs(S[(size_t)a * m + b]) : scale;
    }
  for (int32_t a = 0; a < m; a++) {
    const double diff = fabs(lr[a] - rs[a]);
    worst = diff > worst || diff != diff ? diff : worst;
  }
  SE_EXPECT(st, worst <= 1e-13 * (scale > 1 ? scale : 1),
            "%s: level 1 differs from the dense Schur complement by %.3e", what, worst);
  free(isj);
  free(oth);
  free(A);
  free(S);
  free(rs);
  free(Aoo);
  free(col);
  free(ld);
  free(lg);
  free(lr);
  free(lp);
}

/* ---- the cases ------------------------------------------------------------------------------ */

typedef struct case_list {
  tree *t;
  int n, cap;
} case_list;

static void add(case_list *c, tree t) {
  if (c->n == c->cap) {
    c->cap = c->cap ? 2 * c->cap : 64;
    c->t = realloc(c->t, (size_t)c->cap * sizeof *c->t);
    if (!c->t)
      exit(1);
  }
  c->t[c->n++] = t;
}

static int is_swc(const char *name) {
  const size_t L = strlen(name);
  return L > 4 && !strcmp(name + L - 4, ".swc");
}

static void add_swc(case_list *c, const char *dir, double max_length, int32_t max_rows) {
  DIR *dp = opendir(dir);
  if (!dp)
    return;
  char **names = NULL;
  int nn = 0;
  struct dirent *de;
  while ((de = readdir(dp)))
    if (is_swc(de->d_name)) {
      names = realloc(names, (size_t)(nn + 1) * sizeof *names);
      names[nn++] = strdup(de->d_name);
    }
  closedir(dp);
  for (int i = 0; i < nn; i++) {
    for (int k = i + 1; k < nn; k++)
      if (strcmp(names[k], names[i]) < 0) {
        char *tt = names[i];
        names[i] = names[k];
        names[k] = tt;
      }
  }
  for (int i = 0; i < nn; i++) {
    char path[4096], name[96];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    se_discretization disc = se_discretization_default();
    disc.max_length = max_length;
    se_morphology m;
    se_error err = {0};
    if (se_swc_load(path, &disc, NULL, &m, &err) != SE_OK) {
      fprintf(stderr, "test_edd: %s\n", err.message);
      exit(1);
    }
    if (m.n_compartments <= max_rows) {
      snprintf(name, sizeof name, "%.60s@%g", names[i], max_length);
      tree t;
      tree_from_morph(&m, name, &t);
      add(c, t);
    }
    se_morphology_free(&m);
    free(names[i]);
  }
  free(names);
}

static void add_swc_one(case_list *c, const char *dir, const char *file, double max_length) {
  char path[4096], name[96];
  snprintf(path, sizeof path, "%s/%s", dir, file);
  se_discretization disc = se_discretization_default();
  disc.max_length = max_length;
  se_morphology m;
  se_error err = {0};
  if (se_swc_load(path, &disc, NULL, &m, &err) != SE_OK) {
    fprintf(stderr, "test_edd: %s\n", err.message);
    exit(1);
  }
  snprintf(name, sizeof name, "%.60s@%g", file, max_length);
  tree t;
  tree_from_morph(&m, name, &t);
  add(c, t);
  se_morphology_free(&m);
}

static void add_common(case_list *c, const char *dir) {
  for (int32_t n = 1; n <= 3; n++)
    add(c, tree_chain(n));
  for (int32_t n = 4; n <= 26; n++)
    add(c, tree_chain(n));
  add(c, tree_star(2));
  add(c, tree_star(5));
  add(c, tree_star(1000));
  add(c, tree_binary(63));
  add(c, tree_binary(1000));
  add(c, tree_caterpillar(101));
  add(c, tree_caterpillar(5000));
  static const int32_t sizes[5] = {10, 100, 1000, 10000, 100000};
  for (int k = 0; k < 5; k++) {
    add(c, tree_random(sizes[k], 0.0, 11 + (uint64_t)k));
    add(c, tree_random(sizes[k], 0.9, 21 + (uint64_t)k));
    add(c, tree_random(sizes[k], 0.99, 31 + (uint64_t)k));
  }
  {
    tree r = tree_random(3000, 0.95, 77);
    add(c, tree_bfs(&r));
    free(r.parent);
    tree b = tree_random(150, 0.8, 78);
    add(c, tree_bfs(&b));
    free(b.parent);
  }
  static const char *classes[6] = {"small-low",   "small-high", "medium-low",
                                   "medium-high", "big-low",    "big-high"};
  for (int k = 0; k < 6; k++) {
    se_morphology m;
    se_error err = {0};
    if (se_morphology_synthetic(classes[k], 1, &m, &err) != SE_OK) {
      fprintf(stderr, "test_edd: %s\n", err.message);
      exit(1);
    }
    tree t;
    tree_from_morph(&m, classes[k], &t);
    add(c, t);
    se_morphology_free(&m);
  }
  add_swc(c, dir, 0.0, 1 << 30);
  add_swc(c, dir, 1.0, 200000);
}

static void free_cases(case_list *c) {
  for (int i = 0; i < c->n; i++)
    free(c->t[i].parent);
  free(c->t);
}

/* K and depth combinations (seq_rows 1 so that the depth is the limit). */
typedef struct combo {
  int k, depth;
  int32_t seq_rows;
} combo;

static int combos(combo *out) {
  int n = 0;
  static const int Ks[3] = {2, 3, 4};
  static const int depths[5] = {0, 1, 2, 3, -1};
  for (int a = 0; a < 3; a++)
    for (int b = 0; b < 5; b++)
      out[n++] = (combo){Ks[a], depths[b], 1};
  out[n++] = (combo){8, -1, 1};
  out[n++] = (combo){3, -1, 3500}; /* the paper's threshold */
  out[n++] = (combo){0, 0, 0};     /* the defaults */
  return n;
}

/* ---- CPU ------------------------------------------------------------------------------------ */

static void errors_cpu(se_test_state *st) {
  se_hines_edd_plan *p = NULL;
  se_error err = {0};
  int32_t bad1[3] = {-1, 0, 2}, bad2[2] = {0, 0}, ok[3] = {-1, 0, 1};
  SE_EXPECT(st, se_hines_edd_plan_create(bad1, 3, NULL, &p, &err) == SE_ERR_ARG && !p &&
                    strstr(err.message, "row 2"),
            "parent[2] = 2: %s", err.message);
  SE_EXPECT(st, se_hines_edd_plan_create(bad2, 2, NULL, &p, &err) == SE_ERR_ARG &&
                    strstr(err.message, "root"),
            "parent[0] = 0: %s", err.message);
  SE_EXPECT(st, se_hines_edd_plan_create(ok, 0, NULL, &p, &err) == SE_ERR_ARG, "n = 0");
  se_hines_edd_options o = se_hines_edd_options_default();
  o.k = 1;
  SE_EXPECT(st, se_hines_edd_plan_create(ok, 3, &o, &p, &err) == SE_ERR_ARG &&
                    strstr(err.message, "K = 1"),
            "K = 1: %s", err.message);
  o.k = 9;
  SE_EXPECT(st, se_hines_edd_plan_create(ok, 3, &o, &p, &err) == SE_ERR_ARG, "K = 9");
  o = se_hines_edd_options_default();
  o.seq_rows = 0;
  SE_EXPECT(st, se_hines_edd_plan_create(ok, 3, &o, &p, &err) == SE_ERR_ARG, "seq_rows = 0");
}

static int run_cpu(const char *dir) {
  se_test_state st = {0, 0};
  errors_cpu(&st);
  case_list cases = {0};
  add_common(&cases, dir);
  add(&cases, tree_chain(200000));
  add(&cases, tree_random(200000, 0.97, 99));
  add_swc_one(&cases, dir, "EC2-609291-4.CNG.swc", 0.25);
  combo cb[32];
  const int ncb = combos(cb);
  double worst = 0.0, worst_dense = 0.0;
  long solves = 0;
  for (int ci = 0; ci < cases.n; ci++) {
    const tree *t = &cases.t[ci];
    for (int weak = 0; weak < 2; weak++) {
      sys y = weak ? sys_new(t, 1000 + (uint64_t)ci, 0.01, 0.02)
                   : sys_new(t, 2000 + (uint64_t)ci, 0.1, 2.0);
      if (t->n <= 300) {
        double *A = dense_matrix(t, &y), *b = xmalloc((size_t)t->n * 8);
        memcpy(b, y.r, (size_t)t->n * 8);
        se_test_dense_solve(t->n, A, b);
        const double e = rel_err(t->n, y.x, b);
        worst_dense = e > worst_dense ? e : worst_dense;
        SE_EXPECT(&st, e <= TOL, "%s: sweep vs dense LU %.3e", t->name, e);
        free(A);
        free(b);
      }
      double *x = xmalloc((size_t)t->n * sizeof(double));
      for (int k = 0; k < ncb; k++) {
        se_hines_edd_options o = se_hines_edd_options_default();
        if (cb[k].k) {
          o.k = cb[k].k;
          o.max_depth = cb[k].depth;
          o.seq_rows = cb[k].seq_rows;
        }
        char what[192];
        snprintf(what, sizeof what, "%s (%s) K=%d depth=%d seq_rows=%d", t->name,
                 weak ? "weak" : "strong", o.k, o.max_depth, (int)o.seq_rows);
        se_hines_edd_plan *p = NULL;
        se_error err = {0};
        if (se_hines_edd_plan_create(t->parent, t->n, &o, &p, &err) != SE_OK) {
          SE_EXPECT(&st, 0, "%s: plan: %s", what, err.message);
          continue;
        }
        memcpy(x, y.r, (size_t)t->n * sizeof(double));
        const int rc = se_hines_edd_solve_cpu(p, y.d, y.g, x, &err);
        SE_EXPECT(&st, rc == SE_OK, "%s: solve: %s", what, err.message);
        const double e = rel_err(t->n, x, y.x);
        worst = e > worst ? e : worst;
        SE_EXPECT(&st, e <= TOL, "%s: EDD vs sweep %.3e (levels %d, bottom %d)", what, e,
                  p->levels, p->n_bottom);
        solves++;
        /* structure and Theorem 1: every combination on small trees, a few on large ones */
        if (!weak && (t->n <= 20000 || k == 1 || k == ncb - 1)) {
          check_structure(&st, what, t, &y, p, &o);
          check_schur(&st, what, t, &y, p);
        }
        se_hines_edd_plan_destroy(p);
      }
      free(x);
      sys_free(&y);
    }
  }
  /* a second solve on one plan reuses its workspace */
  {
    tree t = tree_random(5000, 0.9, 5);
    sys y = sys_new(&t, 9, 0.1, 2.0);
    se_hines_edd_plan *p = NULL;
    se_error err = {0};
    double *x = xmalloc((size_t)t.n * 8);
    SE_EXPECT(&st, se_hines_edd_plan_create(t.parent, t.n, NULL, &p, &err) == SE_OK, "%s",
              err.message);
    for (int rep = 0; rep < 2; rep++) {
      memcpy(x, y.r, (size_t)t.n * 8);
      se_hines_edd_solve_cpu(p, y.d, y.g, x, &err);
      SE_EXPECT(&st, rel_err(t.n, x, y.x) <= TOL, "repeat %d", rep);
    }
    se_hines_edd_stats s;
    se_hines_edd_plan_stats(p, &s);
    SE_EXPECT(&st, s.levels == p->levels && s.rows[0] == t.n && s.bytes_per_solve > 0,
              "stats");
    free(x);
    se_hines_edd_plan_destroy(p);
    sys_free(&y);
    free(t.parent);
  }
  printf("CPU: %d trees x 2 systems x %d plans: %ld solves, largest error vs the sweep %.3e, "
         "sweep vs dense LU %.3e\n",
         cases.n, ncb, solves, worst, worst_dense);
  free_cases(&cases);
  return se_test_finish(&st, "edd_cpu");
}

/* ---- GPU ------------------------------------------------------------------------------------ */

#ifndef SIMENGINE_HAVE_CUDA
static int run_gpu(const char *dir) {
  (void)dir;
  printf("skipped: no CUDA in this build\n");
  return 77;
}
#else
#include "se_cuda.h"

typedef struct gpu_bufs {
  double *d, *g, *r, *r2;
  size_t cap;
} gpu_bufs;

static int gpu_reserve(gpu_bufs *b, int32_t n) {
  if ((size_t)n <= b->cap)
    return 0;
  cudaFree(b->d);
  cudaFree(b->g);
  cudaFree(b->r);
  cudaFree(b->r2);
  b->cap = (size_t)n;
  if (cudaMalloc((void **)&b->d, b->cap * 8) != cudaSuccess ||
      cudaMalloc((void **)&b->g, b->cap * 8) != cudaSuccess ||
      cudaMalloc((void **)&b->r, b->cap * 8) != cudaSuccess ||
      cudaMalloc((void **)&b->r2, b->cap * 8) != cudaSuccess)
    return 1;
  return 0;
}

static void errors_gpu(se_test_state *st, cudaStream_t stream, gpu_bufs *b) {
  se_error err = {0};
  se_hines_edd *e = NULL;
  SE_EXPECT(st, se_hines_edd_create(NULL, NULL, stream, &e, &err) == SE_ERR_ARG && !e,
            "NULL plan");
  int32_t par[3] = {-1, 0, 1};
  se_hines_edd_plan *p = NULL;
  se_hines_edd_plan_create(par, 3, NULL, &p, &err);
  se_hines_edd_gpu_options go = se_hines_edd_gpu_options_default();
  go.tail_rows = -1;
  SE_EXPECT(st, se_hines_edd_create(p, &go, stream, &e, &err) == SE_ERR_ARG, "tail_rows -1");
  SE_EXPECT(st, se_hines_edd_create(p, NULL, stream, &e, &err) == SE_OK, "%s", err.message);
  SE_EXPECT(st, se_hines_edd_solve(e, NULL, b->g, b->r, &err) == SE_ERR_ARG, "NULL d");
  se_hines_edd_destroy(e);
  se_hines_edd_plan_destroy(p);
}

static int run_gpu(const char *dir) {
  if (se_cuda_device_count() < 1) {
    printf("skipped: no GPU\n");
    return 77;
  }
  se_test_state st = {0, 0};
  cudaStream_t stream;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
    fprintf(stderr, "test_edd: cudaStreamCreate failed\n");
    return 1;
  }
  gpu_bufs b = {0};
  gpu_reserve(&b, 1024);
  errors_gpu(&st, stream, &b);
  case_list cases = {0};
  add_common(&cases, dir);
  add(&cases, tree_chain(1000000));
  add(&cases, tree_random(1000000, 0.97, 98));
  add(&cases, tree_random(1000000, 0.5, 97));
  add_swc_one(&cases, dir, "EC2-609291-4.CNG.swc", 0.25);
  add_swc_one(&cases, dir, "EC2-609291-4.CNG.swc", 0.043);
  combo cb[32];
  const int ncb = combos(cb);
  double worst = 0.0;
  long solves = 0, bitwise = 0;
  for (int ci = 0; ci < cases.n; ci++) {
    const tree *t = &cases.t[ci];
    if (gpu_reserve(&b, t->n)) {
      SE_EXPECT(&st, 0, "%s: no device memory", t->name);
      break;
    }
    sys y = sys_new(t, 3000 + (uint64_t)ci, 0.1, 2.0);
    double *x = xmalloc((size_t)t->n * 8), *xc = xmalloc((size_t)t->n * 8);
    const size_t bytes = (size_t)t->n * 8;
    /* copies ordered on the solve's stream (a plain cudaMemcpy from pageable memory may return
     * before its data has landed, and does not order against a non-blocking stream) */
    cudaMemcpyAsync(b.d, y.d, bytes, cudaMemcpyHostToDevice, stream);
    cudaMemcpyAsync(b.g, y.g, bytes, cudaMemcpyHostToDevice, stream);
    cudaStreamSynchronize(stream);
    for (int k = 0; k < ncb; k++) {
      se_hines_edd_options o = se_hines_edd_options_default();
      if (cb[k].k) {
        o.k = cb[k].k;
        o.max_depth = cb[k].depth;
        o.seq_rows = cb[k].seq_rows;
      }
      se_hines_edd_plan *p = NULL;
      se_error err = {0};
      if (se_hines_edd_plan_create(t->parent, t->n, &o, &p, &err) != SE_OK) {
        SE_EXPECT(&st, 0, "%s: plan: %s", t->name, err.message);
        continue;
      }
      /* the sequential sweep of the bottom level runs on one GPU thread: up to 2e5 rows, and
       * past 2e4 rows with the default settings and one solve only */
      if (p->n_bottom > 200000) {
        se_hines_edd_plan_destroy(p);
        continue;
      }
      const int long_bottom = p->n_bottom > 20000;
      memcpy(xc, y.r, bytes);
      se_hines_edd_solve_cpu(p, y.d, y.g, xc, &err);
      /* GPU settings: tail sizes and graph on/off (the defaults always, the rest on a subset) */
      se_hines_edd_gpu_options gset[4];
      int ng = 0;
      gset[ng++] = se_hines_edd_gpu_options_default();
      if (!long_bottom && (k % 3 == 0 || t->n >= 100000)) {
        gset[ng] = se_hines_edd_gpu_options_default();
        gset[ng++].tail_rows = 0;
        gset[ng] = se_hines_edd_gpu_options_default();
        gset[ng].tail_rows = 1 << 30;
        gset[ng++].use_graph = 0;
        gset[ng] = se_hines_edd_gpu_options_default();
        gset[ng].tail_rows = 100;
        gset[ng++].use_graph = 0;
      }
      for (int gi = 0; gi < ng; gi++) {
        char what[256];
        snprintf(what, sizeof what, "%s K=%d depth=%d seq_rows=%d tail=%d graph=%d", t->name,
                 o.k, o.max_depth, (int)o.seq_rows, (int)gset[gi].tail_rows, gset[gi].use_graph);
        se_hines_edd *e = NULL;
        if (se_hines_edd_create(p, &gset[gi], stream, &e, &err) != SE_OK) {
          SE_EXPECT(&st, 0, "%s: create: %s", what, err.message);
          continue;
        }
        /* two solves (a graph replay) on r, one on r2 (new pointers) */
        for (int rep = 0; rep < 3; rep++) {
          double *rr = rep < 2 ? b.r : b.r2;
          cudaMemcpyAsync(rr, y.r, bytes, cudaMemcpyHostToDevice, stream);
          int rc = se_hines_edd_solve(e, b.d, b.g, rr, &err);
          if (rc == SE_OK)
            rc = se_hines_edd_sync(e, &err);
          SE_EXPECT(&st, rc == SE_OK, "%s: solve: %s", what, err.message);
          if (rc != SE_OK)
            break;
          cudaMemcpyAsync(x, rr, bytes, cudaMemcpyDeviceToHost, stream);
          cudaStreamSynchronize(stream);
          const double ecpu = rel_err(t->n, x, y.x);
          worst = ecpu > worst ? ecpu : worst;
          SE_EXPECT(&st, ecpu <= TOL, "%s rep %d: GPU vs sweep %.3e", what, rep, ecpu);
          const int same = !memcmp(x, xc, bytes);
          bitwise += same;
          SE_EXPECT(&st, same, "%s rep %d: GPU differs from the CPU executor by %.3e", what, rep,
                    rel_err(t->n, x, xc));
          solves++;
          if ((gi > 0 || long_bottom) && rep == 0)
            break; /* replays and new pointers with the default settings only */
        }
        se_hines_edd_destroy(e);
      }
      se_hines_edd_plan_destroy(p);
    }
    /* d and g are not modified */
    {
      double *dc = xmalloc(bytes);
      cudaMemcpyAsync(dc, b.d, bytes, cudaMemcpyDeviceToHost, stream);
      cudaStreamSynchronize(stream);
      SE_EXPECT(&st, !memcmp(dc, y.d, bytes), "%s: d was modified", t->name);
      free(dc);
    }
    free(x);
    free(xc);
    sys_free(&y);
  }
  printf("GPU: %d trees: %ld solves, %ld bitwise equal to the CPU executor, largest error vs "
         "the sweep %.3e\n",
         cases.n, solves, bitwise, worst);
  free_cases(&cases);
  cudaFree(b.d);
  cudaFree(b.g);
  cudaFree(b.r);
  cudaFree(b.r2);
  cudaStreamDestroy(stream);
  return se_test_finish(&st, "edd_gpu");
}
#endif

int main(int argc, char **argv) {
  if (argc < 3 || (strcmp(argv[1], "cpu") && strcmp(argv[1], "gpu"))) {
    fprintf(stderr, "usage: test_edd cpu|gpu DATA_DIR/morphologies\n");
    return 2;
  }
  return strcmp(argv[1], "cpu") ? run_gpu(argv[2]) : run_cpu(argv[2]);
}
