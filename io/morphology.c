/* Compartment trees (io/swc.h) and their place in a neurons model: freeing, and laying out
 * morphologies and their copies as the /morphologies and /cells parts of se_neuron_model. */
#include <stdlib.h>
#include <string.h>

#include "se_error.h"
#include "swc.h"

void se_morphology_free(se_morphology *morph) {
  if (!morph)
    return;
  free(morph->parent);
  free(morph->length);
  free(morph->diameter);
  free(morph->region);
  memset(morph, 0, sizeof *morph);
}

int se_neuron_model_set_cells(se_neuron_model *m, int32_t n_morph, const se_morphology *morphs,
                              const int64_t *copies, se_error *err) {
  if (n_morph < 0 || (n_morph > 0 && (!morphs || !copies)))
    SE_FAIL(err, SE_ERR_ARG, "se_neuron_model_set_cells: %d morphologies, arrays missing", n_morph);
  int64_t total = 0, cells = 0;
  for (int32_t k = 0; k < n_morph; k++) {
    if (morphs[k].n_compartments < 0 || copies[k] < 0)
      SE_FAIL(err, SE_ERR_ARG, "se_neuron_model_set_cells: morphology %d has %d compartments and "
              "%lld copies (negative)", k, morphs[k].n_compartments, (long long)copies[k]);
    total += morphs[k].n_compartments;
    cells += copies[k];
  }
  m->n_morphologies = n_morph;
  m->n_cells = cells;
  SE_CALLOC(err, m->morph_offsets, (int64_t)n_morph + 1, "/morphologies/offsets");
  SE_CALLOC(err, m->parent, total, "/morphologies/parent");
  SE_CALLOC(err, m->length, total, "/morphologies/length");
  SE_CALLOC(err, m->diameter, total, "/morphologies/diameter");
  SE_CALLOC(err, m->region, total, "/morphologies/region");
  SE_CALLOC(err, m->cell_morphology, cells, "/cells/morphology");
  SE_CALLOC(err, m->cell_gid, cells, "/cells/gid");
  int64_t at = 0, cell = 0;
  for (int32_t k = 0; k < n_morph; k++) {
    const se_morphology *mo = &morphs[k];
    size_t n = (size_t)mo->n_compartments;
    memcpy(m->parent + at, mo->parent, n * sizeof *mo->parent);
    memcpy(m->length + at, mo->length, n * sizeof *mo->length);
    memcpy(m->diameter + at, mo->diameter, n * sizeof *mo->diameter);
    memcpy(m->region + at, mo->region, n * sizeof *mo->region);
    at += mo->n_compartments;
    m->morph_offsets[k + 1] = at;
    for (int64_t c = 0; c < copies[k]; c++, cell++) {
      m->cell_morphology[cell] = k;
      m->cell_gid[cell] = (uint64_t)cell;
    }
  }
  return SE_OK;
}
