/* The streaming ("fused2") step: per-morphology row tables and a host reference of the CUDA
 * kernel (neurons_stream.h; docs/gpu.md). */
#include <stdlib.h>
#include <string.h>

#include "neurons_math.h"
#include "neurons_stream.h"
#include "se_error.h"

void se_stream_free(se_stream_tables *tab) {
  free(tab->rows);
  memset(tab, 0, sizeof *tab);
}

void se_stream_subtree_hh(const int32_t *parent, const uint8_t *hh, int32_t n, uint8_t *sub) {
  for (int32_t i = 0; i < n; i++)
    sub[i] = hh[i] != 0;
  for (int32_t i = n - 1; i > 0; i--)
    sub[parent[i]] |= sub[i];
}

/* Rows of one morphology of n compartments whose per-morphology arrays start at k0. Scratch
 * arrays (n entries each) are passed in. Returns the slots used, or -1 when more than
 * SE_STREAM_MAX_SLOTS would be needed (slot fields are then 0: the accumulators go to rhs). */
static int build_morphology(const struct se_neurons *e, int64_t k0, int32_t n, se_stream_row *rows,
                            uint8_t *sub_hh, int32_t *cmax, int32_t *dcmax, int32_t *slot,
                            uint8_t *used, double *sumgf) {
  const int32_t *par = e->parent_copy + k0;
  const uint8_t *hh = e->has_hh_copy + k0;
  const double inv_dt = 1.0 / e->dt;
  for (int32_t i = 0; i < n; i++) {
    cmax[i] = dcmax[i] = -1;
    slot[i] = -1;
    used[i] = 0;
    sumgf[i] = 0.0;
  }
  se_stream_subtree_hh(par, hh, n, sub_hh);
  for (int32_t i = 1; i < n; i++) {
    if (par[i] == i - 1)
      continue;
    if (i > cmax[par[i]])
      cmax[par[i]] = i;
    if (sub_hh[i] && i > dcmax[par[i]])
      dcmax[par[i]] = i;
  }
  /* constants, leaves to root: DCONST rows get 1/d' and f, their g f goes into the parent */
  for (int32_t i = n - 1; i >= 0; i--) {
    const int64_t k = k0 + i;
    se_stream_row *r = &rows[i];
    const double g = i > 0 ? e->g_axial[k] : 0.0;
    double dconst;
    se_stream_row_constants(e, k, hh[i], inv_dt, &r->a, &r->c, &dconst);
    r->g = g;
    r->parent = par[i];
    uint32_t meta = 0;
    if (hh[i]) {
      meta |= SE_STREAM_HH;
      r->d = dconst - sumgf[i];
      r->f = 0.0;
    } else if (sub_hh[i]) {
      r->d = dconst - sumgf[i];
      r->f = 0.0;
    } else {
      meta |= SE_STREAM_DCONST;
      const double dprime = dconst - sumgf[i];
      r->d = 1.0 / dprime;
      r->f = g * r->d;
      if (i > 0)
        sumgf[par[i]] += g * r->f;
    }
    if (i == 0)
      meta |= SE_STREAM_ROOT;
    else if (par[i] == i - 1)
      meta |= SE_STREAM_PREV;
    else {
      if (i == cmax[par[i]])
        meta |= SE_STREAM_FIRST;
      if (sub_hh[i]) {
        meta |= SE_STREAM_DPUSH;
        if (i == dcmax[par[i]])
          meta |= SE_STREAM_DFIRST;
      }
    }
    if (cmax[i] >= 0)
      meta |= SE_STREAM_OWN;
    if (dcmax[i] >= 0)
      meta |= SE_STREAM_DACC;
    r->meta = meta;
  }
  /* accumulator slots: row p's slot is live from its highest non-PREV child down to p (and, in
   * the forward pass, from p up to that child, holding x_p): interval colouring, lowest free */
  int32_t slots = 0;
  for (int32_t i = n - 1; i >= 0; i--) {
    if (i > 0 && (rows[i].meta & SE_STREAM_FIRST)) {
      int32_t s = 0;
      while (used[s])
        s++;
      used[s] = 1;
      slot[par[i]] = s;
      if (s + 1 > slots)
        slots = s + 1;
    }
    if (rows[i].meta & SE_STREAM_OWN)
      used[slot[i]] = 0;
  }
  int fits = slots <= SE_STREAM_MAX_SLOTS;
  for (int32_t i = 0; i < n; i++) {
    uint32_t meta = rows[i].meta;
    if (fits && i > 0 && !(meta & SE_STREAM_PREV))
      meta |= (uint32_t)slot[par[i]];
    if (fits && (meta & SE_STREAM_OWN))
      meta |= (uint32_t)slot[i] << 11;
    rows[i].meta = meta;
  }
  return fits ? slots : -1;
}

int se_stream_build(const struct se_neurons *e, se_stream_tables *tab, se_error *err) {
  memset(tab, 0, sizeof *tab);
  SE_CALLOC(err, tab->rows, e->n_morph_comp > 0 ? e->n_morph_comp : 1, "stream rows");
  int32_t nmax = 1;
  for (int64_t g = 0; g < e->n_groups; g++)
    if (e->groups[g].n_comp > nmax)
      nmax = e->groups[g].n_comp;
  tab->max_rows = nmax;
  uint8_t *sub_hh = calloc((size_t)nmax, 1), *used = calloc((size_t)nmax, 1);
  int32_t *cmax = calloc((size_t)nmax, sizeof *cmax), *dcmax = calloc((size_t)nmax, sizeof *dcmax);
  int32_t *slot = calloc((size_t)nmax, sizeof *slot);
  double *sumgf = calloc((size_t)nmax, sizeof *sumgf);
  int rc = SE_OK;
  if (!sub_hh || !used || !cmax || !dcmax || !slot || !sumgf)
    rc = se_error_set(err, SE_ERR_NOMEM, __FILE__, __LINE__, __func__,
                      "out of memory for the stream tables (%d rows)", nmax);
  int64_t done_base = -1;
  for (int64_t g = 0; g < e->n_groups && rc == SE_OK; g++) {
    /* groups of one morphology are consecutive; a morphology met again is skipped by its
     * table's base (rows are rebuilt identically otherwise, which is harmless) */
    const se_group *grp = &e->groups[g];
    int64_t k0 = e->topology[grp->morphology].base;
    if (k0 == done_base)
      continue;
    done_base = k0;
    int s = build_morphology(e, k0, grp->n_comp, tab->rows + k0, sub_hh, cmax, dcmax, slot, used,
                             sumgf);
    if (s < 0)
      tab->slots = SE_STREAM_MAX_SLOTS + 1;
    else if (s > tab->slots && tab->slots <= SE_STREAM_MAX_SLOTS)
      tab->slots = s;
  }
  free(sub_hh);
  free(used);
  free(cmax);
  free(dcmax);
  free(slot);
  free(sumgf);
  if (rc != SE_OK)
    se_stream_free(tab);
  return rc;
}

/* ---- host reference ------------------------------------------------------------------------ */

void se_stream_clamp_currents(const struct se_neurons *e, double *istim) {
  const double t_mid = e->t + 0.5 * e->dt;
  for (int32_t k = e->n_stim - 1; k >= 0; k--)
    if (se_iclamp_on(t_mid, e->stim_delay[k], e->stim_duration[k]))
      istim[e->stim_slot[k]] += e->stim_amplitude[k];
}

int se_stream_reference_step(struct se_neurons *e, const se_stream_tables *tab, int stack_rows,
                             int acc_onchip, int update_gates, double *root_before,
                             double *root_after, se_error *err) {
  if (acc_onchip && tab->slots > SE_STREAM_MAX_SLOTS)
    SE_FAIL(err, SE_ERR_ARG, "%d accumulator slots do not fit on chip", tab->slots);
  const int W = e->width;
  double *istim = NULL, *stack = NULL, *acc = NULL;
  SE_CALLOC(err, istim, e->n_slots > 0 ? e->n_slots : 1, "reference stimulus");
  stack = calloc((size_t)(stack_rows > 0 ? stack_rows : 1), sizeof *stack);
  acc = calloc((size_t)(tab->slots > 0 ? tab->slots : 1), sizeof *acc);
  if (!stack || !acc) {
    free(istim);
    free(stack);
    free(acc);
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory for the reference scratch");
  }
  se_stream_clamp_currents(e, istim);
  for (int64_t c = 0; c < e->n_cells; c++)
    root_before[c] = e->v[se_neurons_slot(e, c, 0)];
  for (int64_t gi = 0; gi < e->n_groups; gi++) {
    const se_group *grp = &e->groups[gi];
    const int64_t k0 = e->topology[grp->morphology].base;
    const se_stream_row *rows = tab->rows + k0;
    const int32_t n = grp->n_comp;
    for (int lane = 0; lane < grp->lanes; lane++) {
      const int64_t s0 = grp->base + lane;
      double cb = 0.0, cd = 0.0;
      for (int32_t i = n - 1; i >= 0; i--) {
        const se_stream_row *r = &rows[i];
        const uint32_t meta = r->meta;
        const int64_t s = s0 + (int64_t)i * W, k = k0 + i;
        const double v = e->v[s];
        double bx = istim[s], dg = 0.0;
        if (meta & SE_STREAM_HH)
          se_hh_row_terms(v, &e->m[s], &e->h[s], &e->n[s], update_gates, e->dt, e->q10, e->gna[k],
                       e->gk[k], e->ena[k], e->ek[k], &bx, &dg);
        double ab = 0.0, ad = 0.0;
        if (meta & SE_STREAM_OWN)
          ab = acc_onchip ? acc[SE_STREAM_OWN_SLOT(meta)] : e->rhs[s];
        if (meta & SE_STREAM_DACC)
          ad = e->diag[s];
        se_stream_elim el = se_stream_eliminate(r->a, r->c, r->d, r->g, r->f, meta, v, bx, dg, cb,
                                                cd, ab, ad);
        if (!(meta & SE_STREAM_DCONST))
          e->diag[s] = el.f;
        if (n - 1 - i < stack_rows) /* the first rows eliminated stay on chip */
          stack[n - 1 - i] = el.y;
        else
          e->v[s] = el.y;
        if (meta & SE_STREAM_PREV) {
          cb = el.push_b;
          cd = el.push_d;
        } else {
          cb = cd = 0.0;
          if (!(meta & SE_STREAM_ROOT)) {
            const int64_t sp = s0 + (int64_t)r->parent * W;
            double *target = acc_onchip ? &acc[SE_STREAM_PUSH_SLOT(meta)] : &e->rhs[sp];
            *target = (meta & SE_STREAM_FIRST) ? el.push_b : *target + el.push_b;
            if (meta & SE_STREAM_DPUSH)
              e->diag[sp] = (meta & SE_STREAM_DFIRST) ? el.push_d : e->diag[sp] + el.push_d;
          }
        }
      }
      double xprev = 0.0;
      for (int32_t i = 0; i < n; i++) {
        const se_stream_row *r = &rows[i];
        const uint32_t meta = r->meta;
        const int64_t s = s0 + (int64_t)i * W;
        const double y = n - 1 - i < stack_rows ? stack[n - 1 - i] : e->v[s];
        const double f = (meta & SE_STREAM_DCONST) ? r->f : e->diag[s];
        double x = y;
        if (!(meta & SE_STREAM_ROOT)) {
          const double xp = (meta & SE_STREAM_PREV) ? xprev
                            : acc_onchip ? acc[SE_STREAM_PUSH_SLOT(meta)]
                                         : e->rhs[s0 + (int64_t)r->parent * W];
          x = y + f * xp;
        }
        e->v[s] = x;
        if (meta & SE_STREAM_OWN) {
          if (acc_onchip)
            acc[SE_STREAM_OWN_SLOT(meta)] = x;
          else
            e->rhs[s] = x;
        }
        xprev = x;
      }
    }
  }
  for (int64_t c = 0; c < e->n_cells; c++)
    root_after[c] = e->v[se_neurons_slot(e, c, 0)];
  free(istim);
  free(stack);
  free(acc);
  return SE_OK;
}

void se_stream_reference_finish(struct se_neurons *e, const se_stream_tables *tab) {
  for (int64_t gi = 0; gi < e->n_groups; gi++) {
    const se_group *grp = &e->groups[gi];
    const int64_t k0 = e->topology[grp->morphology].base;
    for (int lane = 0; lane < grp->lanes; lane++)
      for (int32_t i = 0; i < grp->n_comp; i++) {
        if (!(tab->rows[k0 + i].meta & SE_STREAM_HH))
          continue;
        const int64_t s = grp->base + lane + (int64_t)i * e->width;
        se_hh_advance_gates(e->v[s], e->q10, e->dt, &e->m[s], &e->h[s], &e->n[s]);
      }
  }
}
