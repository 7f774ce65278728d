/* Builders of small in-memory neuron models for the tests. */
#ifndef SE_TEST_MODELS_H
#define SE_TEST_MODELS_H

#include <stdint.h>
#include <stdlib.h>

#include "simengine/neurons.h"
#include "se_random.h"

/* Allocates a model with one morphology of n compartments (no geometry yet: parent[0] = -1, the
 * rest zero), n_cells cells of it, n_regions regions of NEURON's defaults (se_biophysics_alloc:
 * every conductance zero) but ra 100 and e_pas -65, dt and tstop. Exits on allocation failure
 * (tests only). */
static inline void se_test_model_alloc(se_neuron_model *m, int32_t n, int64_t n_cells,
                                       int32_t n_regions, double dt, double tstop) {
  se_neuron_model_init(m);
  m->dt = dt;
  m->tstop = tstop;
  m->n_morphologies = 1;
  m->morph_offsets = calloc(2, sizeof *m->morph_offsets);
  m->parent = calloc((size_t)n, sizeof *m->parent);
  m->length = calloc((size_t)n, sizeof *m->length);
  m->diameter = calloc((size_t)n, sizeof *m->diameter);
  m->region = calloc((size_t)n, sizeof *m->region);
  m->n_cells = n_cells;
  m->cell_morphology = calloc((size_t)n_cells, sizeof *m->cell_morphology);
  m->cell_gid = calloc((size_t)n_cells, sizeof *m->cell_gid);
  se_error err;
  if (!m->morph_offsets || !m->parent || !m->length || !m->diameter || !m->region ||
      !m->cell_morphology || !m->cell_gid || se_biophysics_alloc(&m->bio, n_regions, &err) != SE_OK)
    abort();
  m->morph_offsets[1] = n;
  m->parent[0] = -1;
  for (int64_t c = 0; c < n_cells; c++)
    m->cell_gid[c] = (uint64_t)c;
  for (int32_t r = 0; r < n_regions; r++) {
    m->bio.ra[r] = 100.0;
    m->bio.e_pas[r] = -65.0;
  }
}

/* Adds one current clamp. */
static inline void se_test_model_add_iclamp(se_neuron_model *m, int64_t cell, int32_t comp,
                                            double delay, double duration, double amplitude) {
  int64_t k = m->n_iclamps++;
  m->iclamp_cell = realloc(m->iclamp_cell, (size_t)m->n_iclamps * sizeof *m->iclamp_cell);
  m->iclamp_compartment = realloc(m->iclamp_compartment, (size_t)m->n_iclamps * sizeof(int32_t));
  m->iclamp_delay = realloc(m->iclamp_delay, (size_t)m->n_iclamps * sizeof(double));
  m->iclamp_duration = realloc(m->iclamp_duration, (size_t)m->n_iclamps * sizeof(double));
  m->iclamp_amplitude = realloc(m->iclamp_amplitude, (size_t)m->n_iclamps * sizeof(double));
  if (!m->iclamp_cell || !m->iclamp_compartment || !m->iclamp_delay || !m->iclamp_duration ||
      !m->iclamp_amplitude)
    abort();
  m->iclamp_cell[k] = cell;
  m->iclamp_compartment[k] = comp;
  m->iclamp_delay[k] = delay;
  m->iclamp_duration[k] = duration;
  m->iclamp_amplitude[k] = amplitude;
}

#endif
