/* CPU backend of the neurons engine: OpenMP over groups, the lanes of a group in the innermost
 * loop (SIMD for the interleaved layout). Every lane performs the same operations in the same
 * order whatever the layout, so flat and interleaved runs give bitwise identical results. */
#include <math.h>

#include "neurons_impl.h"
#include "neurons_math.h"
#include "se_error.h"

/* The group kernels take the width as a parameter; the always-inlined calls below with a
 * constant width let the compiler unroll and vectorise the lane loops. */
#define SE_ALWAYS_INLINE static inline __attribute__((always_inline))

/* Membrane currents at v^n, stimulus, axial coupling: diag and rhs of the group's system. */
SE_ALWAYS_INLINE void assemble_group(const struct se_neurons *e, const se_group *g, int W) {
  const se_morph_topology *topo = &e->topology[g->morphology];
  const double inv_dt = 1.0 / e->dt;
  double *restrict diag = e->diag, *restrict rhs = e->rhs;
  const double *restrict v = e->v;
  for (int32_t i = 0; i < g->n_comp; i++) {
    const int64_t row = g->base + (int64_t)i * W, k = topo->base + i;
    const double d_const = e->cap[k] * inv_dt + e->d_axial[k];
    if (topo->has_hh[i]) {
      for (int l = 0; l < W; l++) {
        const int64_t s = row + l;
        se_row r = se_row_hh(v[s], e->m[s], e->h[s], e->n[s], d_const, e->g_pas[k], e->e_pas[k],
                             e->gna[k], e->gk[k], e->gl[k], e->ena[k], e->ek[k], e->el[k]);
        diag[s] = r.diag;
        rhs[s] = r.rhs;
      }
    } else {
      for (int l = 0; l < W; l++) {
        se_row r = se_row_pas(v[row + l], d_const, e->g_pas[k], e->e_pas[k]);
        diag[row + l] = r.diag;
        rhs[row + l] = r.rhs;
      }
    }
  }
  /* current clamps active at the step's midpoint */
  const double t_mid = e->t + 0.5 * e->dt;
  for (int32_t k = g->stim_begin; k < g->stim_end; k++)
    if (se_iclamp_on(t_mid, e->stim_delay[k], e->stim_duration[k]))
      rhs[e->stim_slot[k]] += e->stim_amplitude[k];
  /* axial currents g (v_p - v) into both ends of each connection */
  for (int32_t i = 1; i < g->n_comp; i++) {
    const int64_t row = g->base + (int64_t)i * W;
    const int64_t prow = g->base + (int64_t)topo->parent[i] * W;
    const double ga = e->g_axial[topo->base + i];
    for (int l = 0; l < W; l++) {
      const double flow = ga * (v[prow + l] - v[row + l]);
      rhs[row + l] += flow;
      rhs[prow + l] -= flow;
    }
  }
}

/* Hines solve: eliminate leaves to root, then substitute root to leaves. The off-diagonal
 * between i and its parent is -g_axial[i]. rhs holds dv afterwards. */
SE_ALWAYS_INLINE void solve_group(const struct se_neurons *e, const se_group *g, int W) {
  const se_morph_topology *topo = &e->topology[g->morphology];
  const int32_t *parent = topo->parent;
  const double *ga = e->g_axial + topo->base;
  double *restrict diag = e->diag, *restrict rhs = e->rhs;
  for (int32_t i = g->n_comp - 1; i > 0; i--) {
    const int64_t row = g->base + (int64_t)i * W;
    const int64_t prow = g->base + (int64_t)parent[i] * W;
    const double gi = ga[i];
    for (int l = 0; l < W; l++) {
      const double f = gi / diag[row + l];
      diag[prow + l] -= f * gi;
      rhs[prow + l] += f * rhs[row + l];
    }
  }
  for (int l = 0; l < W; l++)
    rhs[g->base + l] /= diag[g->base + l];
  for (int32_t i = 1; i < g->n_comp; i++) {
    const int64_t row = g->base + (int64_t)i * W;
    const int64_t prow = g->base + (int64_t)parent[i] * W;
    const double gi = ga[i];
    for (int l = 0; l < W; l++)
      rhs[row + l] = (rhs[row + l] + gi * rhs[prow + l]) / diag[row + l];
  }
}

/* v^{n+1} = v^n + dv, then the hh gates with cnexp at v^{n+1}. */
SE_ALWAYS_INLINE void update_group(const struct se_neurons *e, const se_group *g, int W) {
  const uint8_t *has_hh = e->topology[g->morphology].has_hh;
  const double dt = e->dt, q10 = e->q10;
  for (int32_t i = 0; i < g->n_comp; i++) {
    const int64_t row = g->base + (int64_t)i * W;
    for (int l = 0; l < W; l++)
      e->v[row + l] += e->rhs[row + l];
    if (!has_hh[i])
      continue;
    for (int l = 0; l < W; l++) {
      const int64_t s = row + l;
      se_hh_advance_gates(e->v[s], q10, dt, &e->m[s], &e->h[s], &e->n[s]);
    }
  }
}

/* Runs PHASE over every group in parallel, with the width known at compile time for the flat
 * layout (1) and the default interleaved width (8). */
#define SE_FOR_EACH_GROUP(e, PHASE)                                            \
  do {                                                                         \
    const int64_t ng_ = (e)->n_groups;                                         \
    const int w_ = (e)->width;                                                 \
    _Pragma("omp parallel for schedule(dynamic, 4)")                           \
    for (int64_t gi_ = 0; gi_ < ng_; gi_++) {                                  \
      const se_group *g_ = &(e)->groups[gi_];                                  \
      if (w_ == 1)                                                             \
        PHASE(e, g_, 1);                                                       \
      else if (w_ == 8)                                                        \
        PHASE(e, g_, 8);                                                       \
      else                                                                     \
        PHASE(e, g_, w_);                                                      \
    }                                                                          \
  } while (0)

/* The whole step of one group while its state is in cache: one pass over memory per step
 * instead of one per phase; groups are disjoint, so the results equal the phase-by-phase ones. */
SE_ALWAYS_INLINE void step_group(const struct se_neurons *e, const se_group *g, int W) {
  assemble_group(e, g, W);
  solve_group(e, g, W);
  update_group(e, g, W);
}

void se_neurons_cpu_assemble(se_neurons_t e) { SE_FOR_EACH_GROUP(e, assemble_group); }
void se_neurons_cpu_solve(se_neurons_t e) { SE_FOR_EACH_GROUP(e, solve_group); }
void se_neurons_cpu_update(se_neurons_t e) { SE_FOR_EACH_GROUP(e, update_group); }

/* Per-engine CPU state: the root voltages before the step, for spike detection. */
typedef struct cpu_data {
  double *v_root_before;
} cpu_data;

static int attach_cpu(se_neurons_t e, se_error *err) {
  cpu_data *d = NULL;
  SE_CALLOC(err, d, 1, "CPU backend");
  e->backend_data = d;
  SE_CALLOC(err, d->v_root_before, e->n_cells, "root voltages");
  SE_CALLOC(err, e->diag, e->n_slots, "matrix diagonals");
  SE_CALLOC(err, e->rhs, e->n_slots, "right-hand sides");
  return SE_OK;
}

static void detach_cpu(se_neurons_t e) {
  cpu_data *d = e->backend_data;
  if (d)
    free(d->v_root_before);
  free(d);
  free(e->diag);
  free(e->rhs);
  e->diag = e->rhs = NULL;
  e->backend_data = NULL;
}

static int step_cpu(se_neurons_t e, se_error *err) {
  cpu_data *d = e->backend_data;
  for (int64_t c = 0; c < e->n_cells; c++)
    d->v_root_before[c] = e->v[se_neurons_slot(e, c, 0)];
  SE_FOR_EACH_GROUP(e, step_group);
  const double thr = e->spike_threshold;
  for (int64_t c = 0; c < e->n_cells; c++) {
    const double before = d->v_root_before[c], after = e->v[se_neurons_slot(e, c, 0)];
    if (!isfinite(after))
      SE_FAIL(err, SE_ERR_NUMERIC,
              "voltage of cell %lld became %g at t = %g ms: reduce dt or check the biophysics",
              (long long)(e->cell_begin + c), after, e->t + e->dt);
    if (before < thr && thr <= after)
      SE_TRY(se_neurons_push_spike(e, se_spike_time(e->t, e->dt, thr, before, after),
                                   e->cell_begin + c, err));
  }
  return SE_OK;
}

static int record_begin_cpu(se_neurons_t e, se_error *err) {
  for (int64_t k = 0; k < e->n_record; k++)
    e->record_frame[k] = e->v[e->record_slot[k]];
  return SE_OK;
}

static int nothing_to_wait(se_neurons_t e, se_error *err) { return SE_OK; }

const se_neurons_backend se_neurons_backend_cpu = {
    .name = "cpu",
    .attach = attach_cpu,
    .detach = detach_cpu,
    .step = step_cpu,
    .record_begin = record_begin_cpu,
    .record_end = nothing_to_wait,
    .collect_spikes = nothing_to_wait,
    .sync_state = nothing_to_wait,
    .load_state = nothing_to_wait,
};
