/* The cooperative ("coop") step: per-morphology plans and a host model of the CUDA kernel
 * (neurons_coop.h; docs/gpu.md, "coop"). */
#include <stdlib.h>
#include <string.h>

#include "neurons_coop.h"
#include "neurons_math.h"
#include "se_error.h"

void se_coop_free(se_coop_tables *tab) {
  free(tab->morph);
  free(tab->rec);
  free(tab->hh);
  free(tab->ev);
  memset(tab, 0, sizeof *tab);
}

/* Range boundaries s[0..L]. A range [lo, hi) leaves as trunk rows those with a descendant at or
 * beyond hi: T(lo, hi) = #{i in [lo, hi): maxd[i] >= hi}. For each cap on the range length
 * (from n / L up to 1.5 n / L, 8 values; or cap_percent of n / L alone when not 0) a dynamic
 * program over the boundaries gives the fewest trunk rows; the cap and its boundaries minimising
 * the estimated step cost (per lockstep step: 1b + 3b, about 55 instructions; per trunk row: its
 * event, a boundary row's event and its substitution, about 95) are kept. dp, from: (L + 1) x
 * (n + 1) scratch. */
static void choose_ranges(const int32_t *maxd, int32_t n, int L, int cap_percent, int32_t *s,
                          int32_t *dp, int32_t *from) {
  const int32_t base = (n + L - 1) / L;
  int64_t best_cost = INT64_MAX;
  for (int c = 0; c < 8; c++) {
    int32_t cap = base + (int32_t)((int64_t)c * base / 14);
    if (c > 0 && cap == base + (int32_t)((int64_t)(c - 1) * base / 14))
      continue;
    if (cap_percent > 0) {
      if (c > 0)
        break;
      cap = (int32_t)(((int64_t)n * cap_percent + 100 * L - 1) / (100 * L));
      cap = cap < base ? base : cap;
    }
    const int32_t W1 = n + 1;
    for (int32_t x = 0; x <= n; x++)
      dp[x] = x == 0 ? 0 : INT32_MAX;
    for (int j = 0; j < L; j++) {
      int32_t *cur = dp + (int64_t)(j + 1) * W1, *prev = dp + (int64_t)j * W1;
      for (int32_t hi = 0; hi <= n; hi++) {
        cur[hi] = INT32_MAX;
        int32_t t = 0;
        for (int32_t lo = hi; lo >= 0 && hi - lo <= cap; lo--) {
          if (lo < hi)
            t += maxd[lo] >= hi;
          if (prev[lo] != INT32_MAX && prev[lo] + t < cur[hi]) {
            cur[hi] = prev[lo] + t;
            from[(int64_t)(j + 1) * W1 + hi] = lo;
          }
        }
      }
    }
    const int32_t trunk = dp[(int64_t)L * W1 + n];
    if (trunk == INT32_MAX)
      continue;
    const int64_t cost = 55 * (int64_t)cap + 95 * (int64_t)trunk;
    if (cost < best_cost) {
      best_cost = cost;
      s[L] = n;
      for (int j = L; j > 0; j--)
        s[j - 1] = from[(int64_t)j * W1 + s[j]];
    }
  }
}

/* A single slot: the next free padding slot, else the next slot after the others. */
static int32_t take_single(const int32_t *holes, int32_t n_holes, int32_t *used, int32_t *next) {
  return *used < n_holes ? holes[(*used)++] : (*next)++;
}

/* The byte offset of slot x of a cell among the G cells of a warp (0 for none: x < 0). */
static int32_t offset_of(int32_t x, int G) {
  return x >= 0 ? x * G * (int32_t)sizeof(double) : 0;
}

/* A row record's flags fl describe a PLAIN row: DCONST, PREV, no other child, complete and not
 * a boundary row (its parent is the next row of its range). */
static int is_plain(uint32_t fl) {
  const uint32_t need = SE_STREAM_DCONST | SE_STREAM_PREV;
  return (fl & (need | SE_STREAM_OWN | SE_COOP_TRUNK | SE_COOP_BOUNDARY)) == need;
}

/* The plan of one morphology of n rows for L threads per cell (fused2's rows sr, per-morphology
 * constants from k0). Adds its records to the growing arrays of tab; scratch arrays of n entries
 * (dp, from: (L + 1) x (n + 1)) are passed in. */
static int build_morphology(const struct se_neurons *e, int64_t k0, int32_t n,
                            const se_stream_row *sr, se_coop_tables *tab, se_coop_morph *mo, int L,
                            int32_t *maxd, int32_t *slot, int32_t *xf, int32_t *xa, int32_t *xe,
                            uint8_t *kind, int32_t *dp, int32_t *from, int cap_percent,
                            int short_path, se_error *err) {
  int32_t *s = mo->s;
  const int G = 32 / L;
  for (int j = 0; j <= L; j++) /* even split: overwritten by choose_ranges */
    s[j] = (int32_t)((int64_t)n * j / L);
  for (int32_t i = 0; i < n; i++)
    maxd[i] = i;
  for (int32_t i = n - 1; i > 0; i--)
    if (maxd[i] > maxd[sr[i].parent])
      maxd[sr[i].parent] = maxd[i];
  choose_ranges(maxd, n, L, cap_percent, s, dp, from);
  const int R = SE_COOP_RING;
  int32_t steps = 0, n_hh = 0, n_ev = 0, trunk = 0;
  for (int j = 0; j < L; j++)
    if (s[j + 1] - s[j] > steps)
      steps = s[j + 1] - s[j];
  steps = (steps + R - 1) / R * R;
  /* kinds, slots */
  for (int j = 0; j < L; j++)
    for (int32_t i = s[j]; i < s[j + 1]; i++) {
      slot[i] = (s[j + 1] - 1 - i) * L + j;
      kind[i] = i == 0 || maxd[i] >= s[j + 1] ? SE_COOP_TRUNK : 0;
    }
  for (int32_t i = 1; i < n; i++)
    if (!kind[i] && kind[sr[i].parent] == SE_COOP_TRUNK)
      kind[i] = SE_COOP_BOUNDARY;
  /* single slots first into the padding steps of short ranges (thread j's steps from its range's
   * length on), pairs (DACC accumulators, non-DCONST pushes) and the zero slot after steps * L;
   * the padding slots are listed in dp, free again ((L + 1) (n + 1) entries) */
  int32_t next = steps * L, n_holes = 0, used_holes = 0, *const holes = dp;
  for (int j = 0; j < L; j++)
    for (int32_t k = s[j + 1] - s[j]; k < steps; k++)
      holes[n_holes++] = k * L + j;
  const int32_t zero = next++;
  const int32_t dump = take_single(holes, n_holes, &used_holes, &next);
  for (int32_t i = 0; i < n; i++) {
    const uint32_t meta = sr[i].meta;
    xf[i] = xa[i] = xe[i] = -1;
    if (!(meta & SE_STREAM_DCONST))
      xf[i] = take_single(holes, n_holes, &used_holes, &next);
    if (meta & SE_STREAM_DACC) { /* DACC implies OWN: a DPUSH child is not i + 1 */
      xa[i] = next;
      next += 2;
    } else if (meta & SE_STREAM_OWN) {
      xa[i] = take_single(holes, n_holes, &used_holes, &next);
    }
    if (kind[i] == SE_COOP_BOUNDARY) { /* a DCONST row pushes no g f */
      if (meta & SE_STREAM_DCONST) {
        xe[i] = take_single(holes, n_holes, &used_holes, &next);
      } else {
        xe[i] = next;
        next += 2;
      }
    }
    n_ev += kind[i] != 0;
    trunk += kind[i] == SE_COOP_TRUNK;
    n_hh += !!(meta & SE_STREAM_HH);
  }
  const int32_t n_ev_real = n_ev;
  n_ev = (n_ev + R - 1) / R * R;
  mo->holes = used_holes;
  mo->steps = steps;
  mo->hh_steps = (n_hh + L - 1) / L;
  mo->n_ev = n_ev;
  mo->slots = next;
  mo->trunk = trunk;
  mo->zero = offset_of(zero, G);
  mo->dump = offset_of(dump, G);
  /* the row table with 2 R steps of padding before and after (the loads ahead of phases 0, 1b
   * and 3b) */
  const int64_t n_rec = (int64_t)(steps + 4 * R) * 4 * L, n_hhc = (int64_t)mo->hh_steps * 5 * L,
                n_evc = (int64_t)n_ev * 4;
  mo->rec = tab->n_rec + (int64_t)2 * R * 4 * L;
  mo->hh = tab->n_hh;
  mo->ev = tab->n_ev;
  se_coop_chunk *rec = realloc(tab->rec, (size_t)(tab->n_rec + n_rec) * sizeof *rec);
  if (rec)
    tab->rec = rec;
  se_coop_chunk *hh = realloc(tab->hh, (size_t)(tab->n_hh + n_hhc + 1) * sizeof *hh);
  if (hh)
    tab->hh = hh;
  se_coop_chunk *ev = realloc(tab->ev, (size_t)(tab->n_ev + n_evc) * sizeof *ev);
  if (ev)
    tab->ev = ev;
  if (!rec || !hh || !ev)
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory for the coop plan of a morphology of %d rows", n);
  memset(rec + tab->n_rec, 0, (size_t)n_rec * sizeof *rec);
  memset(hh + tab->n_hh, 0, (size_t)n_hhc * sizeof *hh);
  memset(ev + tab->n_ev, 0, (size_t)n_evc * sizeof *ev);
  rec += mo->rec;
  hh += mo->hh;
  ev += mo->ev;
  tab->n_rec += n_rec;
  tab->n_hh += n_hhc;
  tab->n_ev += n_evc;
  /* row records; padding steps (at the end of short ranges, and the tables' padding) TRUNK */
  for (int j = 0; j < L; j++)
    for (int32_t k = -2 * R; k < steps + 2 * R; k++) {
      se_coop_chunk *q[4];
      for (int c = 0; c < 4; c++)
        q[c] = &rec[((int64_t)k * 4 + c) * L + j];
      const int32_t i = s[j + 1] - 1 - k;
      if (k < 0 || i < s[j]) {
        q[1]->u[3] = SE_COOP_TRUNK;
        continue;
      }
      const se_stream_row *r = &sr[i];
      const int32_t p = r->parent;
      const uint32_t meta = r->meta, dconst = meta & SE_STREAM_DCONST;
      q[0]->d[0] = r->d;
      q[0]->d[1] = r->g;
      if (dconst)
        q[1]->d[0] = r->f;
      else
        q[1]->i[0] = offset_of(xf[i], G);
      q[1]->i[2] = offset_of(p >= 0 ? slot[p] : -1, G);
      q[1]->u[3] = (meta & SE_COOP_META) | kind[i];
      if (kind[i] == SE_COOP_BOUNDARY) {
        q[1]->u[3] = (q[1]->u[3] & ~SE_STREAM_PREV) | SE_STREAM_FIRST | SE_STREAM_DFIRST;
        q[2]->i[0] = offset_of(xe[i], G);
        q[2]->i[3] = dconst ? mo->dump : offset_of(xe[i] + 1, G);
      } else {
        const int to_parent = kind[i] == 0 && !(meta & SE_STREAM_PREV);
        q[2]->i[0] = to_parent ? offset_of(xa[p], G) : mo->dump;
        q[2]->i[3] = to_parent && (meta & SE_STREAM_DPUSH) ? offset_of(xa[p] + 1, G) : mo->dump;
      }
      q[2]->i[1] = meta & SE_STREAM_OWN ? offset_of(xa[i], G) : mo->zero;
      q[2]->i[2] = meta & SE_STREAM_DACC ? offset_of(xa[i] + 1, G) : mo->zero;
      if (!(meta & SE_STREAM_HH)) {
        q[3]->d[0] = r->a;
        q[3]->d[1] = r->c;
      }
    }
  /* PLAIN rows (phase 1b's short path) where it pays. Per lockstep step, from the SASS (sm_90):
   * the general path costs about 36 instructions beyond a step's loads and trunk test when a
   * thread of the step has a row that is not TRUNK, or with the short path when one has a row
   * that is not PLAIN (38: the test of the flag), the short path about 10 when one has a PLAIN
   * row (the warp runs both paths when its threads differ) */
  int64_t cost_general = 0, cost_split = 0, plain_rows = 0;
  for (int32_t k = 0; k < steps; k++) {
    int any_plain = 0, any_other = 0;
    for (int j = 0; j < L; j++) {
      const uint32_t fl = rec[((int64_t)k * 4 + 1) * L + j].u[3];
      any_plain |= is_plain(fl);
      plain_rows += is_plain(fl);
      any_other |= !(fl & SE_COOP_TRUNK) && !is_plain(fl);
    }
    cost_general += 36 * (any_plain | any_other);
    cost_split += 38 * any_other + 10 * any_plain;
  }
  mo->plain = short_path == SE_COOP_SHORT_AUTO ? cost_split < cost_general
               : short_path && plain_rows > 0;
  for (int j = 0; j < L && mo->plain; j++)
    for (int32_t k = 0; k < steps; k++) {
      uint32_t *fl = &rec[((int64_t)k * 4 + 1) * L + j].u[3];
      *fl |= is_plain(*fl) ? SE_COOP_PLAIN : 0u;
    }
  /* hh records: hh row number h goes to thread h % L, step h / L */
  for (int32_t k = 0; k < mo->hh_steps; k++)
    for (int j = 0; j < L; j++)
      hh[((int64_t)k * 5 + 4) * L + j].i[0] = -1;
  for (int32_t i = 0, h = 0; i < n; i++) {
    if (!(sr[i].meta & SE_STREAM_HH))
      continue;
    const int64_t k = h / L, j = h % L, c = k0 + i;
    se_coop_chunk *q = &hh[k * 5 * L + j];
    q[0].d[0] = e->gna[c];
    q[0].d[1] = e->gk[c];
    q[L].d[0] = e->ena[c];
    q[L].d[1] = e->ek[c];
    q[2 * L].d[0] = sr[i].a;
    q[2 * L].d[1] = sr[i].c;
    q[3 * L].d[0] = sr[i].d;
    q[4 * L].i[0] = i;
    q[4 * L].i[1] = offset_of(slot[i], G);
    q[4 * L].i[2] = offset_of(xf[i], G);
    h++;
  }
  /* events, decreasing row order; the padding events after the root do nothing */
  for (int32_t q = n_ev_real; q < n_ev; q++)
    ev[(int64_t)q * 4 + 2].u[0] = SE_STREAM_ROOT | SE_STREAM_DCONST;
  for (int32_t i = n - 1, q = 0; i >= 0; i--) {
    if (!kind[i])
      continue;
    const se_stream_row *r = &sr[i];
    const int32_t p = r->parent;
    se_coop_chunk *c = &ev[(int64_t)q++ * 4];
    c[0].d[0] = r->d;
    c[0].d[1] = r->g;
    c[1].d[0] = r->f;
    c[1].i[2] = offset_of(slot[i], G);
    c[1].i[3] = offset_of(p >= 0 ? slot[p] : -1, G);
    c[2].u[0] = (r->meta & SE_COOP_META) | (kind[i] == SE_COOP_TRUNK ? SE_COOP_EV_TRUNK : 0u);
    c[2].i[1] = offset_of(xf[i], G);
    c[2].i[2] = offset_of(xe[i], G);
    c[2].i[3] = offset_of(xa[i], G);
    c[3].i[0] = i;
    c[3].i[1] = offset_of(p >= 0 ? xa[p] : -1, G);
  }
  return SE_OK;
}

int se_coop_build(const struct se_neurons *e, const se_stream_tables *st, int lanes,
                  int cap_percent, int short_path, se_coop_tables *tab, se_error *err) {
  memset(tab, 0, sizeof *tab);
  if (lanes != 2 && lanes != 4 && lanes != 8)
    SE_FAIL(err, SE_ERR_ARG, "coop step: %d threads per cell (2, 4 or 8)", lanes);
  const int L = lanes;
  tab->lanes = lanes;
  int32_t nm = 0, nmax = 1;
  for (int64_t g = 0; g < e->n_groups; g++) {
    if (e->groups[g].morphology + 1 > nm)
      nm = e->groups[g].morphology + 1;
    if (e->groups[g].n_comp > nmax)
      nmax = e->groups[g].n_comp;
  }
  tab->n_morph = nm;
  SE_CALLOC(err, tab->morph, nm, "coop plans");
  int32_t *scratch = calloc((size_t)nmax * 5, sizeof *scratch);
  uint8_t *kind = calloc((size_t)nmax, 1);
  /* dp, from: the dynamic program's (L + 1) (n + 1); dp later the padding slots, at most
   * steps L <= (n + SE_COOP_RING) L */
  const size_t dp_size = (size_t)(L + 1) * ((size_t)nmax + 1) + (size_t)L * SE_COOP_RING;
  int32_t *dp = malloc(dp_size * sizeof *dp), *from = malloc(dp_size * sizeof *from);
  int rc = SE_OK;
  if (!scratch || !kind || !dp || !from)
    rc = se_error_set(err, SE_ERR_NOMEM, __FILE__, __LINE__, __func__,
                      "out of memory for the coop plans (%d rows)", nmax);
  for (int64_t g = 0; g < e->n_groups && rc == SE_OK; g++) {
    const se_group *grp = &e->groups[g];
    se_coop_morph *mo = &tab->morph[grp->morphology];
    if (mo->steps > 0)
      continue;
    const int64_t k0 = e->topology[grp->morphology].base;
    rc = build_morphology(e, k0, grp->n_comp, st->rows + k0, tab, mo, L, scratch,
                          scratch + nmax, scratch + 2 * (size_t)nmax, scratch + 3 * (size_t)nmax,
                          scratch + 4 * (size_t)nmax, kind, dp, from, cap_percent,
                          short_path, err);
    if (mo->slots > tab->max_slots)
      tab->max_slots = mo->slots;
  }
  free(scratch);
  free(kind);
  free(dp);
  free(from);
  if (rc != SE_OK)
    se_coop_free(tab);
  return rc;
}

double se_coop_estimate(const struct se_neurons *e, const se_coop_tables *tab,
                        size_t smem_per_sm, size_t ring_bytes) {
  const int G = 32 / tab->lanes;
  /* shared memory per warp as launched (the largest plan's and the ring), plus the 1 KB a block
   * reserves */
  const size_t per_warp = (size_t)tab->max_slots * (size_t)G * sizeof(double) + ring_bytes + 1024;
  size_t warps = smem_per_sm / per_warp;
  if (warps > SE_COOP_MAX_WARPS_PER_SM)
    warps = SE_COOP_MAX_WARPS_PER_SM;
  if (warps == 0)
    return 0.0;
  const int64_t warps_per_group = (e->width + G - 1) / G;
  double work = 0.0;
  for (int64_t g = 0; g < e->n_groups; g++) {
    const se_coop_morph *mo = &tab->morph[e->groups[g].morphology];
    work += (double)warps_per_group * (80.0 * mo->steps + 106.0 * mo->n_ev);
  }
  return work / (double)warps;
}

/* ---- host model ---------------------------------------------------------------------------- */

/* The slot at byte offset off of a cell among G cells (the records' offsets). */
static inline int32_t slot_of(int32_t off, int G) {
  return off / (G * (int32_t)sizeof(double));
}

int se_coop_reference_step(struct se_neurons *e, const se_coop_tables *tab, int update_gates,
                           double *root_before, double *root_after, se_error *err) {
  const int64_t W = e->width;
  const int L = tab->lanes, G = 32 / L;
  double *istim = NULL, *S = NULL;
  SE_CALLOC(err, istim, e->n_slots, "coop model stimulus");
  S = calloc((size_t)(tab->max_slots > 0 ? tab->max_slots : 1), sizeof *S);
  if (!S) {
    free(istim);
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory for the coop model's slots");
  }
  se_stream_clamp_currents(e, istim);
  for (int64_t c = 0; c < e->n_cells; c++)
    root_before[c] = e->v[se_neurons_slot(e, c, 0)];
  for (int64_t gi = 0; gi < e->n_groups; gi++) {
    const se_group *grp = &e->groups[gi];
    const se_coop_morph *mo = &tab->morph[grp->morphology];
    const se_coop_chunk *rec = tab->rec + mo->rec, *hh = tab->hh + mo->hh, *ev = tab->ev + mo->ev;
    for (int lane = 0; lane < grp->lanes; lane++) {
      const int64_t s0 = grp->base + lane;
      double *V = e->v + s0, *M = e->m + s0, *H = e->h + s0, *N = e->n + s0;
      const double *I = istim + s0;
      /* 0: a v + c + clamps at every row of the ranges (the clamps' current alone at hh rows:
       * a = c = 0 there), 0 in the zero slot */
      for (int j = 0; j < L; j++)
        for (int32_t k = 0; k < mo->s[j + 1] - mo->s[j]; k++) {
          const se_coop_chunk *q = &rec[(int64_t)k * 4 * L + j];
          const int32_t i = mo->s[j + 1] - 1 - k;
          S[k * L + j] = q[3 * L].d[0] * V[i * W] + q[3 * L].d[1] + I[i * W];
        }
      S[slot_of(mo->zero, G)] = 0.0;
      /* 1a: hh rows */
      for (int32_t k = 0; k < mo->hh_steps; k++)
        for (int j = 0; j < L; j++) {
          const se_coop_chunk *q = &hh[(int64_t)k * 5 * L + j];
          const int32_t i = q[4 * L].i[0];
          if (i < 0)
            continue;
          double m = M[i * W], h = H[i * W], n = N[i * W], b = 0.0, dg = 0.0;
          double bx = S[slot_of(q[4 * L].i[1], G)];
          const double v = V[i * W];
          se_hh_row_terms(v, &m, &h, &n, update_gates, e->dt, e->q10, q[0].d[0], q[0].d[1],
                       q[L].d[0], q[L].d[1], &b, &dg);
          M[i * W] = m;
          H[i * W] = h;
          N[i * W] = n;
          bx += b;
          S[slot_of(q[4 * L].i[1], G)] = q[2 * L].d[0] * v + q[2 * L].d[1] + bx;
          S[slot_of(q[4 * L].i[2], G)] = q[3 * L].d[0] + dg;
        }
      /* 1b: complete rows, ranges downwards, every step to mo->steps (padding steps TRUNK) */
      for (int j = 0; j < L; j++) {
        double cb = 0.0, cd = 0.0;
        for (int32_t k = 0; k < mo->steps; k++) {
          const se_coop_chunk *q = &rec[(int64_t)k * 4 * L + j];
          const uint32_t meta = q[L].u[3];
          if (meta & SE_COOP_TRUNK) {
            cb = cd = 0.0;
            continue;
          }
          const int32_t sl = k * L + j, xf = slot_of(q[L].i[0], G);
          if (meta & SE_COOP_PLAIN) { /* the kernel's short path: fused2's with ab = 0 */
            S[sl] = (S[sl] + (cb + 0.0)) * q[0].d[0];
            cb = q[0].d[1] * S[sl];
            cd = 0.0;
            continue;
          }
          const double d0 = (meta & SE_STREAM_HH) ? S[xf] : q[0].d[0];
          const se_stream_elim el = se_stream_eliminate_from(
              S[sl], d0, q[0].d[1], q[L].d[0], meta, cb, cd, S[slot_of(q[2 * L].i[1], G)],
              S[slot_of(q[2 * L].i[2], G)]);
          S[sl] = el.y;
          if (!(meta & SE_STREAM_DCONST))
            S[xf] = el.f;
          const int prev = !!(meta & SE_STREAM_PREV);
          cb = prev ? el.push_b : 0.0;
          cd = prev ? el.push_d : 0.0;
          double *A = &S[slot_of(q[2 * L].i[0], G)], *D = &S[slot_of(q[2 * L].i[3], G)];
          *A = (meta & SE_STREAM_FIRST) ? el.push_b : *A + el.push_b;
          *D = (meta & SE_STREAM_DFIRST) ? el.push_d : *D + el.push_d;
        }
      }
      /* 2: events downwards */
      double cb = 0.0, cd = 0.0;
      for (int32_t q = 0; q < mo->n_ev; q++) {
        const se_coop_chunk *c = &ev[(int64_t)q * 4];
        const uint32_t meta = c[2].u[0];
        const int32_t sl = slot_of(c[1].i[2], G), xf = slot_of(c[2].i[1], G),
                      xe = slot_of(c[2].i[2], G), xa = slot_of(c[2].i[3], G);
        double pb, pd;
        if (meta & SE_COOP_EV_TRUNK) {
          const double ab = (meta & SE_STREAM_OWN) ? S[xa] : 0.0;
          const double ad = (meta & SE_STREAM_DACC) ? S[xa + 1] : 0.0;
          const double d0 = (meta & SE_STREAM_HH) ? S[xf] : c[0].d[0];
          const se_stream_elim el =
              se_stream_eliminate_from(S[sl], d0, c[0].d[1], c[1].d[0], meta, cb, cd, ab, ad);
          S[sl] = el.y;
          if (!(meta & SE_STREAM_DCONST))
            S[xf] = el.f;
          pb = el.push_b;
          pd = el.push_d;
        } else {
          pb = S[xe];
          pd = (meta & SE_STREAM_DCONST) ? 0.0 : S[xe + 1];
        }
        se_coop_push_parent(meta, pb, pd, S + slot_of(c[3].i[1], G), 1, &cb, &cd);
      }
      /* 3a: trunk upwards */
      for (int32_t q = mo->n_ev - 1; q >= 0; q--) {
        const se_coop_chunk *c = &ev[(int64_t)q * 4];
        const uint32_t meta = c[2].u[0];
        if (!(meta & SE_COOP_EV_TRUNK))
          continue;
        const int32_t sl = slot_of(c[1].i[2], G);
        const double y = S[sl];
        const double f = (meta & SE_STREAM_DCONST) ? c[1].d[0] : S[slot_of(c[2].i[1], G)];
        const double x = (meta & SE_STREAM_ROOT) ? y : y + f * S[slot_of(c[1].i[3], G)];
        S[sl] = x;
        V[c[3].i[0] * W] = x;
      }
      /* 3b: complete rows, ranges upwards (a boundary row's record has PREV cleared) */
      for (int j = 0; j < L; j++) {
        double xprev = 0.0;
        for (int32_t k = mo->steps - 1; k >= 0; k--) {
          const se_coop_chunk *q = &rec[(int64_t)k * 4 * L + j];
          const uint32_t meta = q[L].u[3];
          if (meta & SE_COOP_TRUNK)
            continue;
          const int32_t sl = k * L + j;
          const double f = (meta & SE_STREAM_DCONST) ? q[L].d[0] : S[slot_of(q[L].i[0], G)];
          const double xp = (meta & SE_STREAM_PREV) ? xprev : S[slot_of(q[L].i[2], G)];
          const double x = S[sl] + f * xp;
          S[sl] = x;
          V[(mo->s[j + 1] - 1 - k) * W] = x;
          xprev = x;
        }
      }
    }
  }
  for (int64_t c = 0; c < e->n_cells; c++)
    root_after[c] = e->v[se_neurons_slot(e, c, 0)];
  free(istim);
  free(S);
  return SE_OK;
}
