/* The streaming ("fused2") time step of the neurons engine: one backward pass that assembles and
 * eliminates each row at once, one forward pass, the voltage solved for directly (v-form) and the
 * gate update of a step deferred to the start of the next (docs/gpu.md). This header holds what
 * the CUDA kernel (cuda/neurons_kernels.cu) and the host reference (neurons_stream.c, used by the
 * tests) share: the per-morphology row table and the per-row arithmetic.
 *
 * v-form. NEURON's step (docs/model.md) solves for dv:
 *   (C/dt + g) dv_i - sum_j g_ij (dv_j - dv_i) = -i_ion + I + sum_j g_ij (v_j - v_i).
 * With x = v + dv and i_ion = g v - sum_x g_x e_x (exact: the currents are linear in v at fixed
 * gates), the axial terms of v cancel and the same matrix gives x = v^{n+1} directly:
 *   (C/dt + d_axial + g) x_i - sum_j g_ij x_j = C/dt v_i + sum_x g_x e_x + I_i.
 * No axial flows enter the right-hand side, and x can overwrite v in place.
 *
 * Elimination (parents before children, rows i = n-1 .. 0), with d'_i, b'_i the eliminated
 * diagonal and right-hand side, y_i = b'_i / d'_i and f_i = g_i / d'_i:
 *   b'_p += g_i y_i,  d'_p -= g_i f_i      (p = parent of i)
 * and substitution x_0 = y_0, x_i = y_i + f_i x_p. Where the subtree of i holds no hh, d'_i does
 * not depend on the state: it is computed once per morphology (DCONST rows keep 1/d'_i and f_i in
 * the table and their contributions to the parent's d' are folded into the parent's row). */
#ifndef SE_NEURONS_STREAM_H
#define SE_NEURONS_STREAM_H

#include <stdint.h>

#include "hh.h"
#include "neurons_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One row of a morphology (index topology[m].base + i), 48 bytes; the last 16 bytes (f, parent,
 * meta) are all the forward pass reads, as one aligned 16-byte load. */
typedef struct se_stream_row {
  double a;        /* C/dt: coefficient of v in the right-hand side */
  double c;        /* constant right-hand side: g_pas e_pas (+ gl el with hh) */
  double d;        /* DCONST: 1/d'; else the constant part of d': C/dt + d_axial + g_pas (+ gl)
                      minus the DCONST children's g_c f_c */
  double g;        /* axial conductance to the parent (0 at the root) */
  double f;        /* DCONST: g/d' */
  int32_t parent;  /* -1 at the root */
  uint32_t meta;   /* SE_STREAM_* bits and slots below */
} se_stream_row;

/* meta: bits 0-10 the accumulator slot of the parent (rows that push to a slot), bits 11-21 the
 * row's own slot (rows with OWN), then flags. */
#define SE_STREAM_MAX_SLOTS 2047
#define SE_STREAM_PUSH_SLOT(meta) ((int)((meta) & 0x7FFu))
#define SE_STREAM_OWN_SLOT(meta) ((int)(((meta) >> 11) & 0x7FFu))
#define SE_STREAM_HH (1u << 22)     /* the row has hh */
#define SE_STREAM_DCONST (1u << 23) /* no hh in the row's subtree: d' precomputed */
#define SE_STREAM_PREV (1u << 24)   /* parent == i - 1: contributions travel in registers */
#define SE_STREAM_ROOT (1u << 25)   /* row 0 */
#define SE_STREAM_FIRST (1u << 26)  /* first push (highest index) into the parent's slot */
#define SE_STREAM_OWN (1u << 27)    /* children other than i + 1: an accumulator slot */
#define SE_STREAM_DPUSH (1u << 28)  /* state-dependent push of g f to a non-PREV parent (diag) */
#define SE_STREAM_DFIRST (1u << 29) /* first such push into the parent */
#define SE_STREAM_DACC (1u << 30)   /* a child has DPUSH: read the d accumulator in diag */

/* The state-independent parts of the row of per-morphology compartment k (v-form, above):
 * *a = C/dt, *c = g_pas e_pas (+ gl el with hh), *d = C/dt + d_axial + g_pas (+ gl with hh).
 * fused2's table and the branch step's per-slot constants both come from here. */
static inline void se_stream_row_constants(const struct se_neurons *e, int64_t k, int hh,
                                           double inv_dt, double *a, double *c, double *d) {
  *a = e->cap[k] * inv_dt;
  const double dbase = *a + e->d_axial[k] + e->g_pas[k];
  *c = hh ? e->g_pas[k] * e->e_pas[k] + e->gl[k] * e->el[k] : e->g_pas[k] * e->e_pas[k];
  *d = hh ? dbase + e->gl[k] : dbase;
}

/* Per-row tables of every morphology of an engine. */
typedef struct se_stream_tables {
  se_stream_row *rows; /* [engine->n_morph_comp]; rows of morphologies without cells are zero */
  int32_t slots;       /* accumulator slots per lane (max over the morphologies) */
  int32_t max_rows;    /* largest n_comp of a morphology with cells */
} se_stream_tables;

/* sub[i] = 1 when the subtree of row i of an n-row tree (parent[i] < i) holds an hh row (hh[j]
 * != 0): its d' changes every step (not DCONST). Not collective. */
void se_stream_subtree_hh(const int32_t *parent, const uint8_t *hh, int32_t n, uint8_t *sub);

/* Builds the tables of e's morphologies (those with cells). Not collective. */
int se_stream_build(const struct se_neurons *e, se_stream_tables *tab, se_error *err);
void se_stream_free(se_stream_tables *tab);

/* The eliminated row: y = b'/d', f = g/d', and what goes to the parent (push_b = g y,
 * push_d = g f, the latter 0 for DCONST rows whose term is folded into the table). */
typedef struct se_stream_elim {
  double y, f, push_b, push_d;
} se_stream_elim;

/* Backward step of one row from b0 = a v + c + bx and d0 = d + dg (d itself, 1/d', for DCONST
 * rows); cb, cd: the contributions of child i + 1 (PREV); ab, ad: the accumulated ones of the
 * other children. */
SE_HD static inline se_stream_elim se_stream_eliminate_from(double b0, double d0, double g,
                                                            double f, uint32_t meta, double cb,
                                                            double cd, double ab, double ad) {
  se_stream_elim r;
  const double b = b0 + (cb + ab);
  if (meta & SE_STREAM_DCONST) {
    r.y = b * d0;
    r.f = f;
    r.push_d = 0.0;
  } else {
    const double inv = 1.0 / (d0 - (cd + ad));
    r.y = b * inv;
    r.f = g * inv;
    r.push_d = g * r.f;
  }
  r.push_b = g * r.y;
  return r;
}

/* Backward step of one row. bx: stimulus and hh e-terms; dg: hh conductance; cb, cd, ab, ad as
 * se_stream_eliminate_from. */
SE_HD static inline se_stream_elim se_stream_eliminate(double a, double c, double d, double g,
                                                       double f, uint32_t meta, double v,
                                                       double bx, double dg, double cb,
                                                       double cd, double ab, double ad) {
  return se_stream_eliminate_from(a * v + c + bx, (meta & SE_STREAM_DCONST) ? d : d + dg, g, f,
                                  meta, cb, cd, ab, ad);
}

/* ---- host reference (tests) --------------------------------------------------------------- */

/* Adds into istim[slot] (zeroed by the caller) the current of every clamp on at the step's
 * midpoint, a compartment's clamps summed from the last in model order, as the fused2 and coop
 * kernels walk them. Not collective. */
void se_stream_clamp_currents(const struct se_neurons *e, double *istim);

/* One streaming step of every group of e on the host, with e's host arrays standing for device
 * memory (v holds y then x in place; diag and rhs are the fallback accumulators) and a per-lane
 * scratch for the on-chip stack (the y of the first `stack_rows` rows eliminated, i >= n -
 * stack_rows) and the slots (acc_onchip = 0: the
 * accumulators in rhs as on the device when the slots do not fit). update_gates = 0 on the first
 * step after the gates were made current (start, se_stream_reference_finish). Writes each cell's
 * root voltage before and after into root_before/root_after [n_cells]. Not collective. */
int se_stream_reference_step(struct se_neurons *e, const se_stream_tables *tab, int stack_rows,
                             int acc_onchip, int update_gates, double *root_before,
                             double *root_after, se_error *err);

/* Brings the deferred gates up to date (the update of the last step, at the current v). */
void se_stream_reference_finish(struct se_neurons *e, const se_stream_tables *tab);

#ifdef __cplusplus
}
#endif
#endif
