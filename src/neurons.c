/* The neurons engine front end: builds the per-slot data of a slice of cells in the chosen
 * layout, dispatches the time-step phases to the backend, detects spikes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hh.h"
#include "neurons_impl.h"
#include "se_error.h"

se_neurons_options se_neurons_default_options(void) {
  se_neurons_options o = {
      .layout = SE_LAYOUT_INTERLEAVED, .interleave_width = 8, .backend = SE_BACKEND_CPU,
      .gpu_device = 0, .gpu_fused = SE_GPU_KERNEL_AUTO};
  return o;
}

/* Assigns local cells to groups: width 1 (flat) or buckets of same-morphology cells cut into
 * groups of `width` lanes, in order of first appearance. */
static int build_groups(se_neurons_t e, const se_neuron_model *model, se_error *err) {
  int64_t nc = e->n_cells;
  SE_CALLOC(err, e->cell_group, nc, "cell groups");
  SE_CALLOC(err, e->cell_lane, nc, "cell lanes");
  SE_CALLOC(err, e->groups, nc, "groups"); /* at most one group per cell */
  int64_t *order = NULL;
  SE_CALLOC(err, order, nc, "cell order");
  /* stable sort of local cells by morphology (counting sort) */
  int64_t nm = model->n_morphologies;
  int64_t *count = calloc((size_t)nm + 1, sizeof *count);
  if (!count) {
    free(order);
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory for %lld morphology counts", (long long)nm);
  }
  for (int64_t c = 0; c < nc; c++)
    count[model->cell_morphology[e->cell_begin + c] + 1]++;
  for (int64_t m = 0; m < nm; m++)
    count[m + 1] += count[m];
  for (int64_t c = 0; c < nc; c++)
    order[count[model->cell_morphology[e->cell_begin + c]]++] = c;
  free(count);

  int64_t slots = 0;
  e->n_groups = 0;
  for (int64_t k = 0; k < nc;) {
    int32_t morph = model->cell_morphology[e->cell_begin + order[k]];
    se_group *g = &e->groups[e->n_groups];
    g->base = slots;
    g->first_cell = order[k];
    g->morphology = morph;
    g->n_comp = (int32_t)(model->morph_offsets[morph + 1] - model->morph_offsets[morph]);
    g->lanes = 0;
    while (k < nc && g->lanes < e->width &&
           model->cell_morphology[e->cell_begin + order[k]] == morph) {
      e->cell_group[order[k]] = e->n_groups;
      e->cell_lane[order[k]] = g->lanes++;
      k++;
    }
    slots += (int64_t)g->n_comp * e->width;
    e->n_groups++;
  }
  e->n_slots = slots;
  free(order);
  return SE_OK;
}

/* Copies the morphology topology (parents, hh presence) for every morphology. */
static int build_topology(se_neurons_t e, const se_neuron_model *model, se_error *err) {
  int64_t nm = model->n_morphologies, C = se_neuron_model_compartments(model);
  SE_CALLOC(err, e->topology, nm, "morphology topology");
  SE_CALLOC(err, e->parent_copy, C, "parents");
  SE_CALLOC(err, e->has_hh_copy, C, "hh presence");
  const se_biophysics *b = &model->bio;
  for (int64_t k = 0; k < C; k++) {
    int32_t r = model->region[k];
    e->parent_copy[k] = model->parent[k];
    e->has_hh_copy[k] = b->gnabar_hh[r] > 0.0 || b->gkbar_hh[r] > 0.0 || b->gl_hh[r] > 0.0;
  }
  for (int64_t m = 0; m < nm; m++) {
    e->topology[m].base = model->morph_offsets[m];
    e->topology[m].parent = e->parent_copy + model->morph_offsets[m];
    e->topology[m].has_hh = e->has_hh_copy + model->morph_offsets[m];
  }
  return SE_OK;
}

/* Axial resistance of compartment k in megaohm: 4 Ra L / (pi d^2), L and d in um. */
static double axial_resistance(const se_neuron_model *model, int64_t k) {
  double d = model->diameter[k];
  return 4.0 * model->bio.ra[model->region[k]] * model->length[k] / (M_PI * d * d) * 1e-2;
}

/* Fills the per-morphology constants (absolute units) for every compartment of the model. */
static int build_constants(se_neurons_t e, const se_neuron_model *model, se_error *err) {
  int64_t C = se_neuron_model_compartments(model);
  e->n_morph_comp = C;
  double **arrays[] = {&e->cap, &e->g_axial, &e->d_axial, &e->g_pas, &e->e_pas, &e->gna,
                       &e->gk,  &e->gl,      &e->el,      &e->ena,   &e->ek};
  for (size_t a = 0; a < sizeof arrays / sizeof arrays[0]; a++)
    SE_CALLOC(err, *arrays[a], C, "per-compartment constants");
  const se_biophysics *b = &model->bio;
  for (int64_t mo = 0; mo < model->n_morphologies; mo++) {
    int64_t off = model->morph_offsets[mo], n = model->morph_offsets[mo + 1] - off;
    for (int64_t i = 0; i < n; i++) {
      int64_t k = off + i;
      int32_t r = model->region[k];
      double area = M_PI * model->diameter[k] * model->length[k]; /* um2 */
      e->cap[k] = b->cm[r] * area * 1e-5;                           /* nF */
      e->g_pas[k] = b->g_pas[r] * area * 1e-2;                      /* uS */
      e->e_pas[k] = b->e_pas[r];
      e->gna[k] = b->gnabar_hh[r] * area * 1e-2;
      e->gk[k] = b->gkbar_hh[r] * area * 1e-2;
      e->gl[k] = b->gl_hh[r] * area * 1e-2;
      e->el[k] = b->el_hh[r];
      e->ena[k] = b->ena[r];
      e->ek[k] = b->ek[r];
      if (i > 0) {
        int64_t p = off + model->parent[k];
        double g = 1.0 / (0.5 * axial_resistance(model, k) + 0.5 * axial_resistance(model, p));
        e->g_axial[k] = g;
        e->d_axial[k] += g;
        e->d_axial[p] += g;
      }
    }
  }
  return SE_OK;
}

/* Allocates the per-slot state, initialised at v_init with the gates at steady state. Padding
 * lanes hold the same values; their rows are solved like the others and never read. */
static int build_state(se_neurons_t e, const se_neuron_model *model, se_error *err) {
  int64_t ns = e->n_slots;
  double **arrays[] = {&e->v, &e->m, &e->h, &e->n};
  for (size_t a = 0; a < sizeof arrays / sizeof arrays[0]; a++)
    SE_CALLOC(err, *arrays[a], ns, "per-compartment state");
  se_hh_rates init = se_hh_rates_at(model->v_init, e->q10);
  for (int64_t s = 0; s < ns; s++) {
    e->v[s] = model->v_init;
    e->m[s] = init.minf;
    e->h[s] = init.hinf;
    e->n[s] = init.ninf;
  }
  for (int64_t c = 0; c < e->n_cells; c++) {
    int32_t mo = model->cell_morphology[e->cell_begin + c];
    e->n_comp_used += model->morph_offsets[mo + 1] - model->morph_offsets[mo];
  }
  return SE_OK;
}

/* Collects the current clamps of owned cells, sorted by group (stable), and each group's range. */
static int build_stimuli(se_neurons_t e, const se_neuron_model *model, se_error *err) {
  int64_t n = 0;
  for (int64_t k = 0; k < model->n_iclamps; k++)
    n += model->iclamp_cell[k] >= e->cell_begin && model->iclamp_cell[k] < e->cell_begin + e->n_cells;
  if (n > INT32_MAX)
    SE_FAIL(err, SE_ERR_INPUT, "%lld current clamps on one rank exceed the supported %d",
            (long long)n, INT32_MAX);
  e->n_stim = (int32_t)n;
  SE_CALLOC(err, e->stim_slot, n, "stimulus slots");
  SE_CALLOC(err, e->stim_cell, n, "stimulus cells");
  SE_CALLOC(err, e->stim_comp, n, "stimulus compartments");
  SE_CALLOC(err, e->stim_delay, n, "stimulus delays");
  SE_CALLOC(err, e->stim_duration, n, "stimulus durations");
  SE_CALLOC(err, e->stim_amplitude, n, "stimulus amplitudes");
  /* counting sort by group */
  int64_t *start = calloc((size_t)e->n_groups + 1, sizeof *start);
  if (!start)
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory for stimulus bookkeeping");
  for (int64_t k = 0; k < model->n_iclamps; k++) {
    int64_t c = model->iclamp_cell[k] - e->cell_begin;
    if (c >= 0 && c < e->n_cells)
      start[e->cell_group[c] + 1]++;
  }
  for (int64_t g = 0; g < e->n_groups; g++)
    start[g + 1] += start[g];
  for (int64_t g = 0; g < e->n_groups; g++) {
    e->groups[g].stim_begin = (int32_t)start[g];
    e->groups[g].stim_end = (int32_t)start[g + 1];
  }
  for (int64_t k = 0; k < model->n_iclamps; k++) {
    int64_t c = model->iclamp_cell[k] - e->cell_begin;
    if (c < 0 || c >= e->n_cells)
      continue;
    int64_t j = start[e->cell_group[c]]++;
    e->stim_slot[j] = se_neurons_slot(e, c, model->iclamp_compartment[k]);
    e->stim_cell[j] = c;
    e->stim_comp[j] = model->iclamp_compartment[k];
    e->stim_delay[j] = model->iclamp_delay[k];
    e->stim_duration[j] = model->iclamp_duration[k];
    e->stim_amplitude[j] = model->iclamp_amplitude[k];
  }
  free(start);
  return SE_OK;
}

/* The backend named by the options: CPU, or CUDA on a device (src/backends.c). */
const se_neurons_backend *se_neurons_backend_for(const se_neurons_options *opt, se_error *err);

int se_neurons_create(const se_neuron_model *model, int64_t cell_begin, int64_t cell_end,
                      const se_neurons_options *options, se_neurons_t *engine, se_error *err) {
  *engine = NULL;
  if (!model || cell_begin < 0 || cell_end < cell_begin || cell_end > model->n_cells)
    SE_FAIL(err, SE_ERR_ARG, "cell range [%lld, %lld) is not within the model's %lld cells",
            (long long)cell_begin, (long long)cell_end, model ? (long long)model->n_cells : 0LL);
  se_neurons_options opt = options ? *options : se_neurons_default_options();
  if (opt.layout == SE_LAYOUT_INTERLEAVED && (opt.interleave_width < 1 || opt.interleave_width > 64))
    SE_FAIL(err, SE_ERR_ARG, "interleave width %d is not in 1..64", opt.interleave_width);
  const se_neurons_backend *backend = se_neurons_backend_for(&opt, err);
  if (!backend)
    return err->code;
  se_neurons_t e = calloc(1, sizeof *e);
  if (!e)
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory for the engine");
  e->backend = backend;
  e->options = opt;
  e->layout = opt.layout;
  e->width = opt.layout == SE_LAYOUT_FLAT ? 1 : opt.interleave_width;
  e->dt = model->dt;
  e->celsius = model->celsius;
  e->q10 = se_hh_q10(model->celsius);
  e->spike_threshold = model->spike_threshold;
  e->cell_begin = cell_begin;
  e->n_cells = cell_end - cell_begin;
  int rc = build_groups(e, model, err);
  if (rc == SE_OK)
    rc = build_topology(e, model, err);
  if (rc == SE_OK)
    rc = build_constants(e, model, err);
  if (rc == SE_OK)
    rc = build_state(e, model, err);
  if (rc == SE_OK)
    rc = build_stimuli(e, model, err);
  if (rc == SE_OK)
    rc = e->backend->attach(e, err);
  if (rc != SE_OK) {
    se_neurons_destroy(e);
    return rc;
  }
  *engine = e;
  return SE_OK;
}

int se_neurons_push_spike(se_neurons_t e, double time, int64_t cell, se_error *err) {
  if (e->n_spikes == e->spike_capacity) {
    int64_t cap = e->spike_capacity ? 2 * e->spike_capacity : 1024;
    SE_REALLOC(err, e->spike_time, cap, "spike times");
    SE_REALLOC(err, e->spike_cell, cap, "spike cells");
    e->spike_capacity = cap;
  }
  e->spike_time[e->n_spikes] = time;
  e->spike_cell[e->n_spikes] = cell;
  e->n_spikes++;
  return SE_OK;
}

int se_neurons_step(se_neurons_t e, se_error *err) {
  SE_TRY(e->backend->step(e, err));
  e->steps_taken++;
  e->t = (double)e->steps_taken * e->dt;
  return SE_OK;
}

double se_neurons_time(se_neurons_t e) { return e->t; }
int64_t se_neurons_cell_count(se_neurons_t e) { return e->n_cells; }
int64_t se_neurons_compartment_count(se_neurons_t e) { return e->n_comp_used; }
const char *se_neurons_backend_name(se_neurons_t e) { return e->backend->name; }
int se_neurons_sync(se_neurons_t e, se_error *err) { return e->backend->sync_state(e, err); }

double se_neurons_voltage(se_neurons_t e, int64_t local_cell, int32_t comp) {
  return e->v[se_neurons_slot(e, local_cell, comp)];
}

int se_neurons_set_recording(se_neurons_t e, int64_t n, const int64_t *local_cell,
                             const int32_t *comp, se_error *err) {
  free(e->record_slot);
  free(e->record_frame);
  e->record_slot = NULL;
  e->record_frame = NULL;
  e->n_record = 0;
  SE_CALLOC(err, e->record_slot, n, "recorded slots");
  SE_CALLOC(err, e->record_frame, n, "recorded frame");
  for (int64_t k = 0; k < n; k++) {
    if (local_cell[k] < 0 || local_cell[k] >= e->n_cells)
      SE_FAIL(err, SE_ERR_ARG, "recorded cell %lld is not one of the engine's %lld cells",
              (long long)local_cell[k], (long long)e->n_cells);
    const se_group *g = &e->groups[e->cell_group[local_cell[k]]];
    if (comp[k] < 0 || comp[k] >= g->n_comp)
      SE_FAIL(err, SE_ERR_ARG, "recorded compartment %d of cell %lld is not in 0..%d", comp[k],
              (long long)local_cell[k], g->n_comp - 1);
    e->record_slot[k] = se_neurons_slot(e, local_cell[k], comp[k]);
  }
  e->n_record = n;
  return SE_OK;
}

int se_neurons_record_begin(se_neurons_t e, se_error *err) { return e->backend->record_begin(e, err); }

int se_neurons_record_end(se_neurons_t e, const double **frame, se_error *err) {
  SE_TRY(e->backend->record_end(e, err));
  *frame = e->record_frame;
  return SE_OK;
}

int se_neurons_take_spikes(se_neurons_t e, int64_t *count, const double **time,
                           const int64_t **cell, se_error *err) {
  SE_TRY(e->backend->collect_spikes(e, err));
  *count = e->n_spikes;
  *time = e->spike_time;
  *cell = e->spike_cell;
  e->n_spikes = 0;
  return SE_OK;
}

void se_neurons_destroy(se_neurons_t e) {
  if (!e)
    return;
  if (e->backend)
    e->backend->detach(e);
  void *arrays[] = {e->groups,      e->topology,     e->parent_copy,   e->has_hh_copy,
                    e->v,           e->m,            e->h,             e->n,
                    e->cap,         e->g_axial,      e->d_axial,       e->g_pas,
                    e->e_pas,       e->gna,          e->gk,            e->gl,
                    e->el,          e->ena,          e->ek,            e->cell_group,
                    e->cell_lane,   e->stim_slot,
                    e->stim_cell,   e->stim_comp,    e->stim_delay,    e->stim_duration,
                    e->stim_amplitude, e->spike_time, e->spike_cell,   e->record_slot,
                    e->record_frame};
  for (size_t a = 0; a < sizeof arrays / sizeof arrays[0]; a++)
    free(arrays[a]);
  free(e);
}

/* ---- moving cells between engines (docs/balance.md) ---------------------------------------- */

/* Compartments of owned cell c. */
static int32_t cell_compartments(const struct se_neurons *e, int64_t c) {
  return e->groups[e->cell_group[c]].n_comp;
}

int64_t se_neurons_state_size(se_neurons_t e, int64_t first, int64_t count) {
  int64_t n = 0;
  for (int64_t c = first; c < first + count; c++)
    n += SE_NEURONS_STATE_PER_COMPARTMENT * (int64_t)cell_compartments(e, c);
  return n;
}

int se_neurons_export_state(se_neurons_t e, int64_t first, int64_t count, double *state,
                            se_error *err) {
  if (first < 0 || count < 0 || first + count > e->n_cells)
    SE_FAIL(err, SE_ERR_ARG, "cells [%lld, %lld) are not within the engine's %lld cells",
            (long long)first, (long long)(first + count), (long long)e->n_cells);
  SE_TRY(e->backend->sync_state(e, err));
  const double *arrays[4] = {e->v, e->m, e->h, e->n};
  for (int64_t c = first; c < first + count; c++) {
    const int32_t nc = cell_compartments(e, c);
    for (int a = 0; a < 4; a++)
      for (int32_t i = 0; i < nc; i++)
        *state++ = arrays[a][se_neurons_slot(e, c, i)];
  }
  return SE_OK;
}

int se_neurons_import_state(se_neurons_t e, int64_t steps_taken, const double *state,
                            se_error *err) {
  if (steps_taken < 0)
    SE_FAIL(err, SE_ERR_ARG, "step count %lld is negative", (long long)steps_taken);
  SE_TRY(e->backend->collect_spikes(e, err));
  double *arrays[4] = {e->v, e->m, e->h, e->n};
  for (int64_t c = 0; c < e->n_cells; c++) {
    const int32_t nc = cell_compartments(e, c);
    for (int a = 0; a < 4; a++)
      for (int32_t i = 0; i < nc; i++)
        arrays[a][se_neurons_slot(e, c, i)] = *state++;
  }
  e->steps_taken = steps_taken;
  e->t = (double)steps_taken * e->dt;
  return e->backend->load_state(e, err);
}

int64_t se_neurons_steps_taken(se_neurons_t e) { return e->steps_taken; }
