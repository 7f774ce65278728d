/* Exact Domain Decomposition (EDD) of one large Hines matrix with fine decomposition and
 * recursion (paper 004, R-FINE-TPT; docs/edd.md). Pure host code: the plan, built once from the
 * tree, and a CPU executor of the plan. The GPU executor (cuda/hines_edd.h) runs the same plan
 * with the same per-junction code (the SE_EDD_HD functions below), so the CPU and GPU results
 * are bitwise identical (no FMA contraction on either side).
 *
 * The system. One tree of n rows, parent p(i) < i for i >= 1, p(0) = -1 (the engine's numbering:
 * parents before children), symmetric Hines form with couplings g_i > 0 to the parent:
 *
 *     row i:  d_i x_i - g_i x_p(i) - sum_{c : p(c) = i} g_c x_c = r_i        (g_0 is not used)
 *
 * the engine's matrix (docs/model.md: g_i = the axial conductance of i to its parent, d_i =
 * C/dt + membrane conductance + the couplings of i). The solve reads d and g, and overwrites r
 * with x.
 *
 * The plan. Level 0 is the input tree. The junctions of a level are the root, every row with two
 * or more children, and every K-th row down each unbranched run (fine decomposition: a row
 * becomes a junction when it is the K-th row below the last junction on its run). Removing the
 * junctions leaves chains of at most K - 1 rows (the domains), each hanging below one junction
 * (its top) and ending at a leaf or above one junction (its bottom). Eliminating every chain
 * (exactly: a Schur complement) leaves a system on the junctions alone that is again a Hines
 * matrix in the form above (paper 004, Theorem 1): row b's coupling to its junction parent a is
 * G_b = g_c1 g_b (T^-1)_1m > 0 through the chain T = c1..cm between them (g_b when b is a child
 * of a), and its diagonal and right-hand side lose the chains' contributions. The junctions,
 * numbered in depth-first preorder of the junction tree, are the rows of level l + 1, whose
 * chains are therefore always consecutive rows. Recursion stops at level L when the level has
 * at most seq_rows rows or L = max_depth; level L is solved by the sequential Hines sweep, and
 * the levels are unwound: each chain's rows follow from its two junctions' values.
 *
 * Per junction j of level l + 1 (row a = jnode[j] of level l) the plan stores jinfo[j]:
 *   bit 31 clear: the common case, at most one chain below a and it is rows a+1 .. a+len of
 *     level l (len = bits 0..3, 0 = none or a junction child at row a+1), bit 4: the chain (or
 *     the child) ends above junction j+1 (of level l + 1), at row a+len+1 of level l;
 *   bit 31 set: the general case, links gl_off[i] .. gl_off[i+1]-1 of gl (i = bits 0..30), four
 *     int32 per link: first row (or, with flag SE_EDD_LINK_LIST in the length word, the offset
 *     of the chain's rows in lnodes: level 0 only, when a chain's rows are not consecutive),
 *     length | flags, bottom junction (level l + 1 index, -1 for a leaf chain), bottom row
 *     (level l, -1 for a leaf chain). A length of 0 is a junction child (first row unused).
 * Nothing here is collective. */
#ifndef SE_HINES_EDD_PLAN_H
#define SE_HINES_EDD_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "simengine/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__CUDACC__)
#define SE_EDD_HD __host__ __device__
#else
#define SE_EDD_HD
#endif

#if defined(__CUDA_ARCH__)
#define SE_EDD_UNROLL _Pragma("unroll")
#else
#define SE_EDD_UNROLL
#endif

enum {
  SE_EDD_KMAX = 8,                   /* largest K: chains of at most 7 rows */
  SE_EDD_CHAIN_MAX = SE_EDD_KMAX - 1,
  SE_EDD_LINK_LIST = 0x100           /* link length flag: rows listed in lnodes */
};
#define SE_EDD_GENERAL 0x80000000u
#define SE_EDD_SIMPLE_BOTTOM 0x10u
#define SE_EDD_SIMPLE_LEN 0x0Fu

/* How the plan decomposes (se_hines_edd_options_default gives the defaults). */
typedef struct se_hines_edd_options {
  int k;            /* fine decomposition: a junction every K rows of a run, 2 .. 8 (default 3) */
  int32_t seq_rows; /* recursion stops at a level of at most this many rows (>= 1) */
  int max_depth;    /* at most this many levels of decomposition (0 = the plain sequential Hines
                       solve; < 0 = no limit) */
} se_hines_edd_options;

/* One level of decomposition: level l (rows n_rows) to level l + 1 (rows n_junctions). */
typedef struct se_hines_edd_level {
  int32_t n_rows, n_junctions;
  int32_t n_general, n_links, n_list; /* general junctions, their links, listed chain rows */
  int32_t n_chains, chain_rows;       /* chains (domains) and their rows */
  int32_t *jnode;                     /* [n_junctions] row of level l of each junction */
  uint32_t *jinfo;                    /* [n_junctions] see the top of this file */
  int32_t *gl_off;                    /* [n_general + 1] */
  int32_t *gl;                        /* [4 n_links] */
  int32_t *lnodes;                    /* [n_list] level 0 only */
} se_hines_edd_level;

typedef struct se_hines_edd_plan {
  int32_t n;                  /* rows of the input tree */
  se_hines_edd_options opt;   /* as resolved */
  int levels;                 /* L: levels of decomposition (the depth of the recursion) */
  se_hines_edd_level *lv;     /* [levels] */
  int32_t n_bottom;           /* rows of level L, solved sequentially */
  int32_t *bottom_parent;     /* [n_bottom] the tree of level L */
  /* CPU executor workspace (allocated by the first CPU solve): for levels 1..L the arrays
   * D, G, R, Ed, Er of each level (d = D - Ed, r = R + Er, g = G), and the bottom's pivots. */
  double *work;
  double **lvals;             /* [5 (levels + 1)] pointers into work; level 0 unused */
  double *pivots;             /* [n_bottom] */
} se_hines_edd_plan;

/* Figures of a plan (se_hines_edd_plan_stats). */
typedef struct se_hines_edd_stats {
  int levels;
  int32_t rows[33];           /* rows of levels 0 .. min(levels, 32) */
  int64_t chain_rows, chains, general_junctions, listed_rows;
  int32_t n_bottom;
  double bytes_per_solve;     /* device-memory bytes of one GPU solve by the byte model of
                                 docs/edd.md (every array read or written once per pass) */
} se_hines_edd_stats;

/* K 3, seq_rows and max_depth of the measured defaults (docs/edd.md). */
se_hines_edd_options se_hines_edd_options_default(void);

/* Builds the plan of the tree parent[0..n-1] (parent[0] = -1, parent[i] < i). opt NULL = the
 * defaults. SE_ERR_ARG for a malformed tree (the first bad row and its parent) or options out of
 * range. */
int se_hines_edd_plan_create(const int32_t *parent, int32_t n, const se_hines_edd_options *opt,
                             se_hines_edd_plan **out, se_error *err);

void se_hines_edd_plan_destroy(se_hines_edd_plan *p);

void se_hines_edd_plan_stats(const se_hines_edd_plan *p, se_hines_edd_stats *st);

/* Solves the system (d, g, r of n rows, row order of the input tree) on the CPU by the plan:
 * r becomes x; d and g are not modified. Uses the plan's workspace: not reentrant on one plan. */
int se_hines_edd_solve_cpu(se_hines_edd_plan *p, const double *d, const double *g, double *r,
                           se_error *err);

/* The junction system of level `level` (1 .. levels) of the system (d, g, r): runs the first
 * `level` decompositions and writes the level's d, g (g[0] = 0) and r (n = rows of the level)
 * and its tree (parent) when not NULL. For tests (paper 004, Theorem 1). */
int se_hines_edd_level_system_cpu(se_hines_edd_plan *p, const double *d, const double *g,
                                  const double *r, int level, double *d_out, double *g_out,
                                  double *r_out, int32_t *parent_out, se_error *err);

/* The plain sequential Hines sweep (the CPU path of src/neurons_cpu.c) on one tree: r becomes
 * x; pivots (n doubles) is scratch, d and g are not modified. */
void se_hines_sequential(int32_t n, const int32_t *parent, const double *d, const double *g,
                         double *r, double *pivots);

/* ---- the per-junction code shared by the CPU and GPU executors -------------------------------
 * A level's view: the values of level l (in; d = D - Ed, r = R + Er, g = G; Ed, Er NULL at level
 * 0) and of level l + 1 (out), and the level's decomposition. */
typedef struct se_edd_view {
  int32_t n_junctions;
  const int32_t *jnode;
  const uint32_t *jinfo;
  const int32_t *gl_off, *gl, *lnodes;
  const double *d, *g, *ed, *er;
  double *r;
  double *dn, *gn, *edn, *ern, *rn;
} se_edd_view;

/* One link of junction j (decoded from jinfo or gl). */
typedef struct se_edd_link {
  int32_t top, len, list, bot, botrow;
} se_edd_link;

static inline SE_EDD_HD int se_edd_links(const se_edd_view *v, int32_t j, int32_t a, int32_t *l0,
                                         int32_t *l1) {
  const uint32_t info = v->jinfo[j];
  if (info & SE_EDD_GENERAL) {
    const int32_t gi = (int32_t)(info & ~SE_EDD_GENERAL);
    *l0 = v->gl_off[gi];
    *l1 = v->gl_off[gi + 1];
    return 1;
  }
  (void)a;
  *l0 = 0;
  *l1 = (info & (SE_EDD_SIMPLE_LEN | SE_EDD_SIMPLE_BOTTOM)) ? 1 : 0;
  return 0;
}

static inline SE_EDD_HD se_edd_link se_edd_link_at(const se_edd_view *v, int general, int32_t j,
                                                  int32_t a, int32_t k) {
  se_edd_link L;
  if (general) {
    const int32_t *q = v->gl + 4 * (int64_t)k;
    L.top = q[0];
    L.len = q[1] & 0xFF;
    L.list = (q[1] & SE_EDD_LINK_LIST) != 0;
    L.bot = q[2];
    L.botrow = q[3];
  } else {
    const uint32_t info = v->jinfo[j];
    L.top = a + 1;
    L.len = (int32_t)(info & SE_EDD_SIMPLE_LEN);
    L.list = 0;
    L.bot = (info & SE_EDD_SIMPLE_BOTTOM) ? j + 1 : -1;
    L.botrow = L.bot >= 0 ? a + 1 + L.len : -1;
  }
  return L;
}

static inline SE_EDD_HD double se_edd_d(const se_edd_view *v, int has_e, int32_t i) {
  return has_e ? v->d[i] - v->ed[i] : v->d[i];
}
static inline SE_EDD_HD double se_edd_r(const se_edd_view *v, int has_e, int32_t i) {
  return has_e ? v->r[i] + v->er[i] : v->r[i];
}

/* Loads the chain's rows (kc = K - 1, a constant where the GPU instantiates it). */
static inline SE_EDD_HD void se_edd_load_chain(const se_edd_view *v, int has_e, int kc,
                                               const se_edd_link *L, int32_t *row, double *dd,
                                               double *gg, double *rr) {
  SE_EDD_UNROLL
  for (int k = 0; k < SE_EDD_CHAIN_MAX; k++) {
    if (k < kc && k < L->len) {
      const int32_t i = L->list ? v->lnodes[L->top + k] : L->top + k;
      row[k] = i;
      dd[k] = se_edd_d(v, has_e, i);
      gg[k] = v->g[i];
      rr[k] = se_edd_r(v, has_e, i);
    }
  }
}

/* Bottom-up elimination of the chain towards its top junction: pivots dp, right-hand sides rp
 * and the coefficient s of the bottom junction's value (row k: dp_k x_k - g_k x_{k-1}
 * - s_k x_b = rp_k). Written so that every array index is a constant once the loop is unrolled
 * (the running values in scalars, the bottom row by selects): the arrays then live in registers
 * on the GPU. */
static inline SE_EDD_HD void se_edd_chain_up(int kc, int m, const double *dd, const double *gg,
                                             const double *rr, double gb, double *dp, double *rp,
                                             double *s) {
  double cd = 1.0, cr = 0.0, cs = gb, gn = 0.0;
  SE_EDD_UNROLL
  for (int k = SE_EDD_CHAIN_MAX - 1; k >= 0; k--) {
    if (k < kc && k < m) {
      const int bottom = k == m - 1;
      const double f = bottom ? 0.0 : gn / cd;
      cd = dd[k] - f * gn;
      cr = rr[k] + f * cr;
      cs = bottom ? gb : f * cs;
      dp[k] = cd;
      rp[k] = cr;
      s[k] = cs;
      gn = gg[k];
    }
  }
}

/* Decomposition of junction j: its row of level l + 1 (dn, rn), and for each chain or junction
 * child below it the bottom junction's coupling and the chain's contribution to its diagonal and
 * right-hand side (gn, edn, ern). */
static inline SE_EDD_HD void se_edd_down(const se_edd_view *v, int has_e, int kc, int32_t j) {
  const int32_t a = v->jnode[j];
  double da = se_edd_d(v, has_e, a), ra = se_edd_r(v, has_e, a);
  int32_t l0, l1;
  const int general = se_edd_links(v, j, a, &l0, &l1);
  for (int32_t k = l0; k < l1; k++) {
    const se_edd_link L = se_edd_link_at(v, general, j, a, k);
    if (L.len == 0) { /* a junction child: coupled directly */
      v->gn[L.bot] = v->g[L.botrow];
      v->edn[L.bot] = 0.0;
      v->ern[L.bot] = 0.0;
      continue;
    }
    int32_t row[SE_EDD_CHAIN_MAX] = {0};
    double dd[SE_EDD_CHAIN_MAX] = {0}, gg[SE_EDD_CHAIN_MAX] = {0}, rr[SE_EDD_CHAIN_MAX] = {0};
    double dp[SE_EDD_CHAIN_MAX] = {0}, rp[SE_EDD_CHAIN_MAX] = {0}, s[SE_EDD_CHAIN_MAX] = {0};
    se_edd_load_chain(v, has_e, kc, &L, row, dd, gg, rr);
    const double gb = L.bot >= 0 ? v->g[L.botrow] : 0.0;
    se_edd_chain_up(kc, L.len, dd, gg, rr, gb, dp, rp, s);
    const double fa = gg[0] / dp[0];
    da = da - fa * gg[0];
    ra = ra + fa * rp[0];
    if (L.bot >= 0) {
      /* top-down elimination towards the bottom junction */
      double dq = dd[0], rq = rr[0];
      SE_EDD_UNROLL
      for (int q = 1; q < SE_EDD_CHAIN_MAX; q++) {
        if (q < kc && q < L.len) {
          const double f = gg[q] / dq;
          dq = dd[q] - f * gg[q];
          rq = rr[q] + f * rq;
        }
      }
      const double fb = gb / dq;
      v->gn[L.bot] = fa * s[0];
      v->edn[L.bot] = fb * gb;
      v->ern[L.bot] = fb * rq;
    }
  }
  v->dn[j] = da;
  v->rn[j] = ra;
  if (j == 0) {
    v->gn[0] = 0.0;
    v->edn[0] = 0.0;
    v->ern[0] = 0.0;
  }
}

/* Unwinding of junction j: its value from level l + 1 (in rn) into r, and its chains' values. */
static inline SE_EDD_HD void se_edd_up(const se_edd_view *v, int has_e, int kc, int32_t j) {
  const int32_t a = v->jnode[j];
  const double xa = v->rn[j];
  v->r[a] = xa;
  int32_t l0, l1;
  const int general = se_edd_links(v, j, a, &l0, &l1);
  for (int32_t k = l0; k < l1; k++) {
    const se_edd_link L = se_edd_link_at(v, general, j, a, k);
    if (L.len == 0)
      continue;
    int32_t row[SE_EDD_CHAIN_MAX] = {0};
    double dd[SE_EDD_CHAIN_MAX] = {0}, gg[SE_EDD_CHAIN_MAX] = {0}, rr[SE_EDD_CHAIN_MAX] = {0};
    double dp[SE_EDD_CHAIN_MAX] = {0}, rp[SE_EDD_CHAIN_MAX] = {0}, s[SE_EDD_CHAIN_MAX] = {0};
    se_edd_load_chain(v, has_e, kc, &L, row, dd, gg, rr);
    double gb = 0.0, xb = 0.0;
    if (L.bot >= 0) {
      gb = v->g[L.botrow];
      xb = v->rn[L.bot];
    }
    se_edd_chain_up(kc, L.len, dd, gg, rr, gb, dp, rp, s);
    double x = xa;
    SE_EDD_UNROLL
    for (int q = 0; q < SE_EDD_CHAIN_MAX; q++) {
      if (q < kc && q < L.len) {
        x = (rp[q] + gg[q] * x + s[q] * xb) / dp[q];
        v->r[row[q]] = x;
      }
    }
  }
}

/* The sequential sweep of a level's tree: d = D - Ed (Ed NULL: D), r = R + Er in place
 * (becomes x), g = G; pv (n doubles) scratch. */
static inline SE_EDD_HD void se_edd_bottom(int32_t n, const int32_t *parent, const double *D,
                                           const double *G, const double *Ed, const double *Er,
                                           double *R, double *pv) {
  for (int32_t i = 0; i < n; i++) {
    pv[i] = Ed ? D[i] - Ed[i] : D[i];
    if (Er)
      R[i] = R[i] + Er[i];
  }
  for (int32_t i = n - 1; i > 0; i--) {
    const int32_t p = parent[i];
    const double f = G[i] / pv[i];
    pv[p] = pv[p] - f * G[i];
    R[p] = R[p] + f * R[i];
  }
  R[0] = R[0] / pv[0];
  for (int32_t i = 1; i < n; i++)
    R[i] = (R[i] + G[i] * R[parent[i]]) / pv[i];
}

#ifdef __cplusplus
}
#endif
#endif
