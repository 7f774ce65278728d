/* Exact Domain Decomposition of one large Hines matrix: the plan and its CPU executor
 * (hines_edd_plan.h, docs/edd.md). */
#include "hines_edd_plan.h"

#include <stdlib.h>
#include <string.h>

#include "hines_tree.h"
#include "se_error.h"

se_hines_edd_options se_hines_edd_options_default(void) {
  se_hines_edd_options o;
  o.k = 3;
  o.seq_rows = 32;
  o.max_depth = -1;
  return o;
}

static void level_free(se_hines_edd_level *l) {
  free(l->jnode);
  free(l->jinfo);
  free(l->gl_off);
  free(l->gl);
  free(l->lnodes);
  memset(l, 0, sizeof *l);
}

void se_hines_edd_plan_destroy(se_hines_edd_plan *p) {
  if (!p)
    return;
  for (int l = 0; l < p->levels; l++)
    level_free(&p->lv[l]);
  free(p->lv);
  free(p->bottom_parent);
  free(p->work);
  free(p->lvals);
  free(p->pivots);
  free(p);
}

/* Scratch of one decomposition step (sized for the level's rows). */
typedef struct build_scratch {
  int32_t *child_off, *child, *is_j, *run, *up, *id, *jchild_off, *jchild, *stack, *order;
} build_scratch;

static void scratch_free(build_scratch *s) {
  free(s->child_off);
  free(s->child);
  free(s->is_j);
  free(s->run);
  free(s->up);
  free(s->id);
  free(s->jchild_off);
  free(s->jchild);
  free(s->stack);
  free(s->order);
}

/* One decomposition: level tree (n, parent) -> level record lv and the next tree (*next_parent,
 * lv->n_junctions rows). */
static int decompose(const int32_t *parent, int32_t n, int K, int level_index,
                     se_hines_edd_level *lv, int32_t **next_parent, se_error *err) {
  build_scratch s = {0};
  int rc = SE_OK;
  int32_t *gl = NULL, *lnodes = NULL, *gl_off = NULL;
  memset(lv, 0, sizeof *lv);
  lv->n_rows = n;
#define ALLOC(ptr, count, what)                                                                    \
  do {                                                                                             \
    size_t se_cnt_ = (size_t)(count);                                                              \
    (ptr) = calloc(se_cnt_ ? se_cnt_ : 1, sizeof *(ptr));                                          \
    if (!(ptr))                                                                                    \
      SE_FAIL_GOTO(err, rc, done, SE_ERR_NOMEM, "EDD plan: out of memory (%zu x %zu bytes for %s)", \
                   se_cnt_, sizeof *(ptr), (what));                                                \
  } while (0)
  ALLOC(s.child_off, (size_t)n + 1, "child offsets");
  ALLOC(s.child, n, "children");
  ALLOC(s.is_j, n, "junction flags");
  ALLOC(s.run, n, "run lengths");
  ALLOC(s.up, n, "junction ancestors");
  ALLOC(s.id, n, "junction ids");
  /* children in CSR, increasing order */
  for (int32_t i = 1; i < n; i++)
    s.child_off[parent[i] + 1]++;
  for (int32_t i = 0; i < n; i++)
    s.child_off[i + 1] += s.child_off[i];
  {
    int32_t *fill = s.run; /* borrowed, reset below */
    for (int32_t i = 0; i < n; i++)
      fill[i] = s.child_off[i];
    for (int32_t i = 1; i < n; i++)
      s.child[fill[parent[i]]++] = i;
  }
  /* junctions: the root, branch points, every K-th row of a run */
  int32_t nj = 0;
  for (int32_t i = 0; i < n; i++) {
    const int32_t nc = s.child_off[i + 1] - s.child_off[i];
    if (i == 0) {
      s.is_j[i] = 1;
    } else {
      s.run[i] = s.is_j[parent[i]] ? 1 : s.run[parent[i]] + 1;
      s.is_j[i] = nc >= 2 || s.run[i] >= K;
    }
    if (i > 0)
      s.up[i] = s.is_j[parent[i]] ? parent[i] : s.up[parent[i]];
    nj += s.is_j[i];
  }
  lv->n_junctions = nj;
  /* the junction tree in preorder: children lists (increasing), iterative DFS */
  ALLOC(s.jchild_off, (size_t)n + 1, "junction children offsets");
  ALLOC(s.jchild, nj, "junction children");
  ALLOC(s.stack, nj, "DFS stack");
  ALLOC(s.order, nj, "preorder");
  for (int32_t i = 1; i < n; i++)
    if (s.is_j[i])
      s.jchild_off[s.up[i] + 1]++;
  for (int32_t i = 0; i < n; i++)
    s.jchild_off[i + 1] += s.jchild_off[i];
  {
    int32_t *fill = s.id; /* borrowed */
    for (int32_t i = 0; i < n; i++)
      fill[i] = s.jchild_off[i];
    for (int32_t i = 1; i < n; i++)
      if (s.is_j[i])
        s.jchild[fill[s.up[i]]++] = i;
    for (int32_t i = 0; i < n; i++)
      fill[i] = -1;
  }
  {
    int32_t top = 0, next = 0;
    s.stack[top++] = 0;
    while (top > 0) {
      const int32_t a = s.stack[--top];
      s.id[a] = next;
      s.order[next++] = a;
      for (int32_t c = s.jchild_off[a + 1] - 1; c >= s.jchild_off[a]; c--)
        s.stack[top++] = s.jchild[c];
    }
  }
  ALLOC(lv->jnode, nj, "junction rows");
  ALLOC(lv->jinfo, nj, "junction info");
  ALLOC(*next_parent, nj, "next level tree");
  for (int32_t j = 0; j < nj; j++) {
    const int32_t a = s.order[j];
    lv->jnode[j] = a;
    (*next_parent)[j] = j == 0 ? -1 : s.id[s.up[a]];
  }
  /* links of each junction: count the general ones first */
  int32_t cap_links = 0, n_links = 0, cap_list = 0, n_list = 0, n_gen = 0;
  ALLOC(gl_off, (size_t)nj + 1, "general link offsets");
  lv->gl_off = gl_off;
  for (int32_t j = 0; j < nj; j++) {
    const int32_t a = s.order[j];
    const int32_t c0 = s.child_off[a], c1 = s.child_off[a + 1];
    /* simple: no link, or one link whose rows follow a consecutively */
    int simple = 0;
    uint32_t info = 0;
    if (c1 == c0) {
      simple = 1;
    } else if (c1 - c0 == 1) {
      const int32_t c = s.child[c0];
      if (c == a + 1) {
        int32_t len = 0, cur = c, consecutive = 1;
        while (!s.is_j[cur]) {
          len++;
          const int32_t nc = s.child_off[cur + 1] - s.child_off[cur];
          if (nc == 0) {
            cur = -1;
            break;
          }
          const int32_t nxt = s.child[s.child_off[cur]];
          if (nxt != cur + 1)
            consecutive = 0;
          cur = nxt;
        }
        if (consecutive && (cur < 0 || (s.id[cur] == j + 1 && cur == a + 1 + len))) {
          simple = 1;
          info = (uint32_t)len | (cur >= 0 ? SE_EDD_SIMPLE_BOTTOM : 0u);
        }
      }
    }
    if (simple) {
      lv->jinfo[j] = info;
      for (int32_t c = c0; c < c1; c++) {
        int32_t cur = s.child[c];
        while (cur >= 0 && !s.is_j[cur]) {
          lv->chain_rows++;
          cur = s.child_off[cur + 1] > s.child_off[cur] ? s.child[s.child_off[cur]] : -1;
        }
        if (!s.is_j[s.child[c]])
          lv->n_chains++;
      }
      continue;
    }
    lv->jinfo[j] = SE_EDD_GENERAL | (uint32_t)n_gen;
    gl_off[n_gen++] = n_links;
    for (int32_t c = c0; c < c1; c++) {
      if (n_links == cap_links) {
        cap_links = cap_links ? 2 * cap_links : 1024;
        int32_t *grown = realloc(gl, 4 * (size_t)cap_links * sizeof *gl);
        if (!grown)
          SE_FAIL_GOTO(err, rc, done, SE_ERR_NOMEM, "EDD plan: out of memory (%d links)",
                       (int)cap_links);
        gl = grown;
      }
      int32_t *q = gl + 4 * (size_t)n_links++;
      int32_t cur = s.child[c];
      if (s.is_j[cur]) {
        q[0] = cur;
        q[1] = 0;
        q[2] = s.id[cur];
        q[3] = cur;
        continue;
      }
      lv->n_chains++;
      const int32_t top = cur;
      int32_t len = 0, consecutive = 1;
      while (cur >= 0 && !s.is_j[cur]) {
        len++;
        const int32_t nc = s.child_off[cur + 1] - s.child_off[cur];
        const int32_t nxt = nc ? s.child[s.child_off[cur]] : -1;
        if (nxt >= 0 && !s.is_j[nxt] && nxt != cur + 1)
          consecutive = 0;
        cur = nxt;
      }
      lv->chain_rows += len;
      q[1] = len;
      q[2] = cur >= 0 ? s.id[cur] : -1;
      q[3] = cur;
      if (consecutive) {
        q[0] = top;
      } else {
        if (level_index != 0)
          SE_FAIL_GOTO(err, rc, done, SE_ERR_ARG,
                       "EDD plan: internal error: level %d has a non-consecutive chain at row %d",
                       level_index, top);
        if (n_list + len > cap_list) {
          cap_list = 2 * (n_list + len) + 1024;
          int32_t *grown = realloc(lnodes, (size_t)cap_list * sizeof *lnodes);
          if (!grown)
            SE_FAIL_GOTO(err, rc, done, SE_ERR_NOMEM, "EDD plan: out of memory (%d chain rows)",
                         (int)cap_list);
          lnodes = grown;
        }
        q[0] = n_list;
        q[1] |= SE_EDD_LINK_LIST;
        for (int32_t r = top; r >= 0 && !s.is_j[r];
             r = s.child_off[r + 1] > s.child_off[r] ? s.child[s.child_off[r]] : -1)
          lnodes[n_list++] = r;
      }
    }
  }
  gl_off[n_gen] = n_links;
  lv->gl = gl;
  lv->lnodes = lnodes;
  lv->n_general = n_gen;
  lv->n_links = n_links;
  lv->n_list = n_list;
  gl = NULL;
  lnodes = NULL;
done:
  free(gl);
  free(lnodes);
  scratch_free(&s);
#undef ALLOC
  return rc;
}

int se_hines_edd_plan_create(const int32_t *parent, int32_t n, const se_hines_edd_options *opt,
                             se_hines_edd_plan **out, se_error *err) {
  *out = NULL;
  se_hines_edd_options o = opt ? *opt : se_hines_edd_options_default();
  if (n < 1 || !parent)
    SE_FAIL(err, SE_ERR_ARG, "EDD plan: a tree needs at least one row (n = %d)", (int)n);
  if (o.k < 2 || o.k > SE_EDD_KMAX)
    SE_FAIL(err, SE_ERR_ARG, "EDD plan: K = %d is out of range (2 .. %d)", o.k, SE_EDD_KMAX);
  if (o.seq_rows < 1)
    SE_FAIL(err, SE_ERR_ARG, "EDD plan: seq_rows = %d must be >= 1", (int)o.seq_rows);
  SE_TRY(se_hines_check_parents(parent, n, "EDD plan", err));
  se_hines_edd_plan *p = calloc(1, sizeof *p);
  if (!p)
    SE_FAIL(err, SE_ERR_NOMEM, "EDD plan: out of memory");
  p->n = n;
  p->opt = o;
  int32_t *cur = malloc((size_t)n * sizeof *cur);
  if (!cur) {
    free(p);
    SE_FAIL(err, SE_ERR_NOMEM, "EDD plan: out of memory (%d rows)", (int)n);
  }
  memcpy(cur, parent, (size_t)n * sizeof *cur);
  int32_t ncur = n;
  int cap = 0;
  while (ncur > o.seq_rows && (o.max_depth < 0 || p->levels < o.max_depth)) {
    if (p->levels == cap) {
      cap = cap ? 2 * cap : 8;
      se_hines_edd_level *grown = realloc(p->lv, (size_t)cap * sizeof *grown);
      if (!grown) {
        free(cur);
        se_hines_edd_plan_destroy(p);
        SE_FAIL(err, SE_ERR_NOMEM, "EDD plan: out of memory (%d levels)", cap);
      }
      p->lv = grown;
    }
    int32_t *next = NULL;
    const int rc = decompose(cur, ncur, o.k, p->levels, &p->lv[p->levels], &next, err);
    if (rc != SE_OK) {
      level_free(&p->lv[p->levels]);
      free(next);
      free(cur);
      se_hines_edd_plan_destroy(p);
      return rc;
    }
    p->levels++;
    free(cur);
    cur = next;
    ncur = p->lv[p->levels - 1].n_junctions;
  }
  p->n_bottom = ncur;
  p->bottom_parent = cur;
  *out = p;
  return SE_OK;
}

void se_hines_edd_plan_stats(const se_hines_edd_plan *p, se_hines_edd_stats *st) {
  memset(st, 0, sizeof *st);
  st->levels = p->levels;
  st->n_bottom = p->n_bottom;
  for (int l = 0; l <= p->levels && l <= 32; l++)
    st->rows[l] = l < p->levels ? p->lv[l].n_rows : p->n_bottom;
  double bytes = 0.0;
  for (int l = 0; l < p->levels; l++) {
    const se_hines_edd_level *v = &p->lv[l];
    st->chain_rows += v->chain_rows;
    st->chains += v->n_chains;
    st->general_junctions += v->n_general;
    st->listed_rows += v->n_list;
    /* down: every row's values (3 arrays at level 0, 5 above) and the index words, the next
     * level's 5 arrays written; up: the chain rows' values again, x of every row written, the
     * next level's x read, the index words again */
    const double vals = l == 0 ? 24.0 : 40.0;
    const double index = 8.0 * v->n_junctions + 16.0 * v->n_links + 4.0 * v->n_list +
                         4.0 * v->n_general;
    bytes += vals * v->n_rows + index + 40.0 * v->n_junctions;           /* down */
    bytes += vals * v->chain_rows + 8.0 * v->n_rows + 8.0 * v->n_junctions + index; /* up */
  }
  /* the bottom: its values read, x written */
  bytes += (p->levels == 0 ? 24.0 : 40.0) * p->n_bottom + 4.0 * p->n_bottom + 8.0 * p->n_bottom;
  st->bytes_per_solve = bytes;
}

void se_hines_sequential(int32_t n, const int32_t *parent, const double *d, const double *g,
                         double *r, double *pivots) {
  se_edd_bottom(n, parent, d, g, NULL, NULL, r, pivots);
}

/* The CPU workspace: D, G, R, Ed, Er of levels 1..L and the bottom's pivots. */
static int cpu_workspace(se_hines_edd_plan *p, se_error *err) {
  if (p->lvals)
    return SE_OK;
  size_t total = 0;
  for (int l = 0; l < p->levels; l++)
    total += 5 * (size_t)p->lv[l].n_junctions;
  SE_CALLOC(err, p->work, total, "EDD workspace");
  p->lvals = calloc(5 * ((size_t)p->levels + 1), sizeof *p->lvals);
  p->pivots = calloc((size_t)p->n_bottom, sizeof *p->pivots);
  if (!p->lvals || !p->pivots) {
    free(p->work);
    free(p->lvals);
    free(p->pivots);
    p->work = NULL;
    p->lvals = NULL;
    p->pivots = NULL;
    SE_FAIL(err, SE_ERR_NOMEM, "EDD workspace: out of memory");
  }
  double *w = p->work;
  for (int l = 1; l <= p->levels; l++) {
    const size_t m = (size_t)p->lv[l - 1].n_junctions;
    for (int k = 0; k < 5; k++) {
      p->lvals[5 * l + k] = w;
      w += m;
    }
  }
  return SE_OK;
}

/* The view of level l: values of level l (user arrays at 0) and l + 1. */
static se_edd_view cpu_view(const se_hines_edd_plan *p, int l, const double *d, const double *g,
                            double *r) {
  const se_hines_edd_level *lv = &p->lv[l];
  se_edd_view v;
  v.n_junctions = lv->n_junctions;
  v.jnode = lv->jnode;
  v.jinfo = lv->jinfo;
  v.gl_off = lv->gl_off;
  v.gl = lv->gl;
  v.lnodes = lv->lnodes;
  if (l == 0) {
    v.d = d;
    v.g = g;
    v.r = r;
    v.ed = NULL;
    v.er = NULL;
  } else {
    double *const *a = p->lvals + 5 * l;
    v.d = a[0];
    v.g = a[1];
    v.r = a[2];
    v.ed = a[3];
    v.er = a[4];
  }
  double *const *b = p->lvals + 5 * (l + 1);
  v.dn = b[0];
  v.gn = b[1];
  v.rn = b[2];
  v.edn = b[3];
  v.ern = b[4];
  return v;
}

static void cpu_down(const se_hines_edd_plan *p, int l, const double *d, const double *g,
                     double *r) {
  const se_edd_view v = cpu_view(p, l, d, g, r);
  const int kc = p->opt.k - 1, has_e = l > 0;
#pragma omp parallel for schedule(static) if (v.n_junctions > 65536)
  for (int32_t j = 0; j < v.n_junctions; j++)
    se_edd_down(&v, has_e, kc, j);
}

static void cpu_up(const se_hines_edd_plan *p, int l, const double *d, const double *g,
                   double *r) {
  const se_edd_view v = cpu_view(p, l, d, g, r);
  const int kc = p->opt.k - 1, has_e = l > 0;
#pragma omp parallel for schedule(static) if (v.n_junctions > 65536)
  for (int32_t j = 0; j < v.n_junctions; j++)
    se_edd_up(&v, has_e, kc, j);
}

int se_hines_edd_solve_cpu(se_hines_edd_plan *p, const double *d, const double *g, double *r,
                           se_error *err) {
  if (!p || !d || !g || !r)
    SE_FAIL(err, SE_ERR_ARG, "EDD solve: NULL plan or array");
  SE_TRY(cpu_workspace(p, err));
  for (int l = 0; l < p->levels; l++)
    cpu_down(p, l, d, g, r);
  const int L = p->levels;
  if (L == 0) {
    se_edd_bottom(p->n_bottom, p->bottom_parent, d, g, NULL, NULL, r, p->pivots);
  } else {
    double *const *a = p->lvals + 5 * L;
    se_edd_bottom(p->n_bottom, p->bottom_parent, a[0], a[1], a[3], a[4], a[2], p->pivots);
  }
  for (int l = L - 1; l >= 0; l--)
    cpu_up(p, l, d, g, r);
  return SE_OK;
}

int se_hines_edd_level_system_cpu(se_hines_edd_plan *p, const double *d, const double *g,
                                  const double *r, int level, double *d_out, double *g_out,
                                  double *r_out, int32_t *parent_out, se_error *err) {
  if (!p || !d || !g || !r || !d_out || !g_out || !r_out)
    SE_FAIL(err, SE_ERR_ARG, "EDD level system: NULL plan or array");
  if (level < 1 || level > p->levels)
    SE_FAIL(err, SE_ERR_ARG, "EDD level system: level %d is not in 1 .. %d", level, p->levels);
  SE_TRY(cpu_workspace(p, err));
  /* the down passes read r; level 0 is the caller's (const) r: r is only read by them */
  for (int l = 0; l < level; l++)
    cpu_down(p, l, d, g, (double *)r);
  double *const *a = p->lvals + 5 * level;
  const int32_t m = p->lv[level - 1].n_junctions;
  for (int32_t i = 0; i < m; i++) {
    d_out[i] = a[0][i] - a[3][i];
    g_out[i] = a[1][i];
    r_out[i] = a[2][i] + a[4][i];
  }
  if (parent_out) {
    if (level == p->levels) {
      memcpy(parent_out, p->bottom_parent, (size_t)m * sizeof *parent_out);
    } else {
      /* the tree of level `level` from its decomposition: chains and junction children */
      const se_hines_edd_level *lv = &p->lv[level];
      const se_edd_view v = cpu_view(p, level, d, g, (double *)r);
      parent_out[0] = -1;
      for (int32_t j = 0; j < lv->n_junctions; j++) {
        const int32_t ra = lv->jnode[j];
        int32_t l0, l1;
        const int general = se_edd_links(&v, j, ra, &l0, &l1);
        for (int32_t k = l0; k < l1; k++) {
          const se_edd_link L = se_edd_link_at(&v, general, j, ra, k);
          int32_t prev = ra;
          for (int32_t q = 0; q < L.len; q++) {
            const int32_t row = L.list ? lv->lnodes[L.top + q] : L.top + q;
            parent_out[row] = prev;
            prev = row;
          }
          if (L.bot >= 0)
            parent_out[L.botrow] = prev;
        }
      }
    }
  }
  return SE_OK;
}
