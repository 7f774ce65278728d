/* The in-memory neurons model (include/simengine/neurons.h): defaults, freeing, the per-region
 * biophysics arrays (NEURON's and simengine-prep's defaults), and the check of every invariant of
 * the version-1 input contract (docs/input-neurons.md). Messages use the dataset names of the
 * input file, since the model mirrors it field by field. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "se_error.h"
#include "simengine/neurons.h"

void se_neuron_model_init(se_neuron_model *model) {
  memset(model, 0, sizeof *model);
  model->v_init = -65.0;
  model->celsius = 6.3;
  model->spike_threshold = 10.0;
  model->record_every = 1;
  model->record_what = SE_RECORD_SOMA;
  model->record_float64 = 0;
  strcpy(model->population, "default");
}

void se_neuron_model_free(se_neuron_model *model) {
  free(model->morph_offsets);
  free(model->parent);
  free(model->length);
  free(model->diameter);
  free(model->region);
  free(model->cell_morphology);
  free(model->cell_gid);
  se_biophysics_free(&model->bio);
  free(model->iclamp_cell);
  free(model->iclamp_compartment);
  free(model->iclamp_delay);
  free(model->iclamp_duration);
  free(model->iclamp_amplitude);
  free(model->record_cells);
  se_neuron_model_init(model);
}

static const char *const biophysics_names[SE_BIOPHYSICS_FIELDS] = {
    "cm", "ra", "g_pas", "e_pas", "gnabar_hh", "gkbar_hh", "gl_hh", "el_hh", "ena", "ek"};

double **se_biophysics_field(se_biophysics *b, int field) {
  double **fields[SE_BIOPHYSICS_FIELDS] = {&b->cm,       &b->ra,    &b->g_pas, &b->e_pas,
                                           &b->gnabar_hh, &b->gkbar_hh, &b->gl_hh, &b->el_hh,
                                           &b->ena,      &b->ek};
  return field >= 0 && field < SE_BIOPHYSICS_FIELDS ? fields[field] : NULL;
}

const char *se_biophysics_field_name(int field) {
  return field >= 0 && field < SE_BIOPHYSICS_FIELDS ? biophysics_names[field] : "(no field)";
}

int se_biophysics_alloc(se_biophysics *b, int32_t n_regions, se_error *err) {
  static const double defaults[SE_BIOPHYSICS_FIELDS] = {
      SE_DEFAULT_CM, SE_DEFAULT_RA, 0.0, SE_DEFAULT_E_PAS, 0.0, 0.0, 0.0, SE_DEFAULT_EL_HH,
      SE_DEFAULT_ENA, SE_DEFAULT_EK};
  if (n_regions < 0)
    SE_FAIL(err, SE_ERR_ARG, "biophysics for %d regions (negative)", n_regions);
  b->n_regions = n_regions;
  for (int f = 0; f < SE_BIOPHYSICS_FIELDS; f++) {
    double **values = se_biophysics_field(b, f);
    if (*values)
      continue;
    SE_CALLOC(err, *values, n_regions, biophysics_names[f]);
    for (int32_t r = 0; r < n_regions; r++)
      (*values)[r] = defaults[f];
  }
  return SE_OK;
}

void se_biophysics_free(se_biophysics *b) {
  for (int f = 0; f < SE_BIOPHYSICS_FIELDS; f++) {
    double **values = se_biophysics_field(b, f);
    free(*values);
    *values = NULL;
  }
  b->n_regions = 0;
}

void se_biophysics_set_prep_defaults(se_biophysics *b) {
  for (int32_t r = 0; r < b->n_regions; r++) {
    int hh = r == 1 || r == 2;
    b->cm[r] = 1.0;
    b->ra[r] = 100.0;
    b->g_pas[r] = hh ? 0.0 : 1.0 / 30000.0;
    b->e_pas[r] = -65.0;
    b->gnabar_hh[r] = hh ? 0.12 : 0.0;
    b->gkbar_hh[r] = hh ? 0.036 : 0.0;
    b->gl_hh[r] = hh ? 0.0003 : 0.0;
    b->el_hh[r] = SE_DEFAULT_EL_HH;
    b->ena[r] = SE_DEFAULT_ENA;
    b->ek[r] = SE_DEFAULT_EK;
  }
}

int64_t se_neuron_model_compartments(const se_neuron_model *model) {
  if (!model->morph_offsets || model->n_morphologies < 0)
    return 0;
  return model->morph_offsets[model->n_morphologies];
}

int64_t se_neuron_model_steps(const se_neuron_model *model) {
  return (int64_t)llround(model->tstop / model->dt);
}

/* A gid with the cell that carries it, to find duplicates after sorting. */
typedef struct gid_entry {
  uint64_t gid;
  int64_t cell;
} gid_entry;

static int compare_gid_entry(const void *a, const void *b) {
  const gid_entry *x = a, *y = b;
  if (x->gid != y->gid)
    return x->gid < y->gid ? -1 : 1;
  return x->cell < y->cell ? -1 : (x->cell > y->cell);
}

/* Fails unless every gid is distinct, naming the first two cells that share one. */
static int check_gids_unique(const se_neuron_model *m, const char *src, se_error *err) {
  if (m->n_cells < 2)
    return SE_OK;
  gid_entry *e;
  SE_CALLOC(err, e, m->n_cells, "the gid uniqueness check");
  for (int64_t i = 0; i < m->n_cells; i++)
    e[i] = (gid_entry){m->cell_gid[i], i};
  qsort(e, (size_t)m->n_cells, sizeof *e, compare_gid_entry);
  for (int64_t i = 1; i < m->n_cells; i++) {
    if (e[i].gid == e[i - 1].gid) {
      gid_entry a = e[i - 1], b = e[i];
      free(e);
      SE_FAIL(err, SE_ERR_INPUT, "%s: /cells/gid[%lld] = %llu repeats /cells/gid[%lld] (gids must be unique)",
              src, (long long)b.cell, (unsigned long long)b.gid, (long long)a.cell);
    }
  }
  free(e);
  return SE_OK;
}

/* One per-region biophysics array with its dataset name and the lower bound it must respect. */
typedef struct bio_field {
  const char *name;
  const double *values;
  int bound; /* 0: any finite value, 1: >= 0 (conductance), 2: > 0 (cm, ra) */
} bio_field;

static int check_biophysics(const se_neuron_model *m, const char *src, se_error *err) {
  const se_biophysics *b = &m->bio;
  if (b->n_regions < 0)
    SE_FAIL(err, SE_ERR_INPUT, "%s: /biophysics has %d regions (negative)", src, b->n_regions);
  const bio_field fields[] = {
      {"cm", b->cm, 2},         {"ra", b->ra, 2},           {"g_pas", b->g_pas, 1},
      {"e_pas", b->e_pas, 0},   {"gnabar_hh", b->gnabar_hh, 1}, {"gkbar_hh", b->gkbar_hh, 1},
      {"gl_hh", b->gl_hh, 1},   {"el_hh", b->el_hh, 0},     {"ena", b->ena, 0},
      {"ek", b->ek, 0}};
  for (size_t f = 0; f < sizeof fields / sizeof fields[0]; f++) {
    const bio_field *bf = &fields[f];
    if (b->n_regions > 0 && !bf->values)
      SE_FAIL(err, SE_ERR_ARG, "%s: /biophysics/%s: no array for %d regions", src, bf->name,
              b->n_regions);
    for (int32_t r = 0; r < b->n_regions; r++) {
      double v = bf->values[r];
      if (!isfinite(v))
        SE_FAIL(err, SE_ERR_INPUT, "%s: /biophysics/%s[%d] = %g is not finite", src, bf->name, r, v);
      if (bf->bound == 2 && !(v > 0))
        SE_FAIL(err, SE_ERR_INPUT, "%s: /biophysics/%s[%d] = %g is not > 0", src, bf->name, r, v);
      if (bf->bound == 1 && !(v >= 0))
        SE_FAIL(err, SE_ERR_INPUT, "%s: /biophysics/%s[%d] = %g is negative (a conductance must be >= 0)",
                src, bf->name, r, v);
    }
  }
  return SE_OK;
}

static int check_run(const se_neuron_model *m, const char *src, se_error *err) {
  if (!isfinite(m->dt) || !(m->dt > 0))
    SE_FAIL(err, SE_ERR_INPUT, "%s: /run attribute dt = %g is not a finite value > 0", src, m->dt);
  if (!isfinite(m->tstop) || !(m->tstop >= 0))
    SE_FAIL(err, SE_ERR_INPUT, "%s: /run attribute tstop = %g is not a finite value >= 0", src,
            m->tstop);
  if (!(fabs(m->tstop / m->dt) < 9.0e18))
    SE_FAIL(err, SE_ERR_INPUT, "%s: /run attributes tstop = %g, dt = %g give too many steps", src,
            m->tstop, m->dt);
  const struct { const char *name; double v; } attrs[] = {
      {"v_init", m->v_init}, {"celsius", m->celsius}, {"spike_threshold", m->spike_threshold}};
  for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++)
    if (!isfinite(attrs[i].v))
      SE_FAIL(err, SE_ERR_INPUT, "%s: /run attribute %s = %g is not finite", src, attrs[i].name,
              attrs[i].v);
  return SE_OK;
}

static int check_morphologies(const se_neuron_model *m, const char *src, se_error *err) {
  if (m->n_morphologies < 0)
    SE_FAIL(err, SE_ERR_INPUT, "%s: /morphologies: %lld morphologies (negative)", src,
            (long long)m->n_morphologies);
  if (!m->morph_offsets)
    SE_FAIL(err, SE_ERR_ARG, "%s: /morphologies/offsets: no array", src);
  const int64_t *off = m->morph_offsets;
  if (off[0] != 0)
    SE_FAIL(err, SE_ERR_INPUT, "%s: /morphologies/offsets[0] = %lld is not 0", src, (long long)off[0]);
  for (int64_t k = 1; k <= m->n_morphologies; k++)
    if (off[k] <= off[k - 1])
      SE_FAIL(err, SE_ERR_INPUT,
              "%s: /morphologies/offsets[%lld] = %lld is not > offsets[%lld] = %lld (morphology %lld "
              "would have no compartments)",
              src, (long long)k, (long long)off[k], (long long)(k - 1), (long long)off[k - 1],
              (long long)(k - 1));
  int64_t c = off[m->n_morphologies];
  if (c > 0 && (!m->parent || !m->length || !m->diameter || !m->region))
    SE_FAIL(err, SE_ERR_ARG, "%s: /morphologies: missing arrays for %lld compartments", src,
            (long long)c);
  for (int64_t k = 0; k < m->n_morphologies; k++) {
    for (int64_t i = off[k]; i < off[k + 1]; i++) {
      int64_t local = i - off[k];
      int32_t p = m->parent[i];
      if (local == 0 && p != -1)
        SE_FAIL(err, SE_ERR_INPUT,
                "%s: /morphologies/parent[%lld] = %d is not -1 (morphology %lld, local index 0 is the root)",
                src, (long long)i, p, (long long)k);
      if (local > 0 && p < 0)
        SE_FAIL(err, SE_ERR_INPUT,
                "%s: /morphologies/parent[%lld] = %d is negative (morphology %lld, local index %lld; "
                "only local index 0 has no parent)",
                src, (long long)i, p, (long long)k, (long long)local);
      if (local > 0 && p >= local)
        SE_FAIL(err, SE_ERR_INPUT,
                "%s: /morphologies/parent[%lld] = %d is not < %lld (morphology %lld, local index %lld)",
                src, (long long)i, p, (long long)local, (long long)k, (long long)local);
      const struct { const char *name; double v; } dims[] = {{"length", m->length[i]},
                                                             {"diameter", m->diameter[i]}};
      for (int d = 0; d < 2; d++)
        if (!isfinite(dims[d].v) || !(dims[d].v > 0))
          SE_FAIL(err, SE_ERR_INPUT,
                  "%s: /morphologies/%s[%lld] = %g is not a finite value > 0 (morphology %lld, local "
                  "index %lld)",
                  src, dims[d].name, (long long)i, dims[d].v, (long long)k, (long long)local);
      if (m->region[i] < 0 || m->region[i] >= m->bio.n_regions)
        SE_FAIL(err, SE_ERR_INPUT,
                "%s: /morphologies/region[%lld] = %d is not in [0, %d) (the /biophysics arrays have %d "
                "entries; morphology %lld, local index %lld)",
                src, (long long)i, m->region[i], m->bio.n_regions, m->bio.n_regions, (long long)k,
                (long long)local);
    }
  }
  return SE_OK;
}

static int check_cells(const se_neuron_model *m, const char *src, se_error *err) {
  if (m->n_cells < 0)
    SE_FAIL(err, SE_ERR_INPUT, "%s: /cells: %lld cells (negative)", src, (long long)m->n_cells);
  if (m->n_cells > 0 && (!m->cell_morphology || !m->cell_gid))
    SE_FAIL(err, SE_ERR_ARG, "%s: /cells: missing arrays for %lld cells", src, (long long)m->n_cells);
  for (int64_t i = 0; i < m->n_cells; i++)
    if (m->cell_morphology[i] < 0 || m->cell_morphology[i] >= m->n_morphologies)
      SE_FAIL(err, SE_ERR_INPUT, "%s: /cells/morphology[%lld] = %d is not in [0, %lld) (the morphologies)",
              src, (long long)i, m->cell_morphology[i], (long long)m->n_morphologies);
  if (m->population[0] == '\0' || !memchr(m->population, '\0', sizeof m->population))
    SE_FAIL(err, SE_ERR_INPUT, "%s: /cells/gid attribute population is empty or longer than %zu bytes",
            src, sizeof m->population - 1);
  if (strchr(m->population, '/') || strcmp(m->population, ".") == 0)
    SE_FAIL(err, SE_ERR_INPUT,
            "%s: /cells/gid attribute population = \"%s\" cannot name an HDF5 group (no '/', not \".\")",
            src, m->population);
  return check_gids_unique(m, src, err);
}

static int check_iclamps(const se_neuron_model *m, const char *src, se_error *err) {
  if (m->n_iclamps < 0)
    SE_FAIL(err, SE_ERR_INPUT, "%s: /stimuli/iclamp: %lld stimuli (negative)", src,
            (long long)m->n_iclamps);
  if (m->n_iclamps > 0 && (!m->iclamp_cell || !m->iclamp_compartment || !m->iclamp_delay ||
                           !m->iclamp_duration || !m->iclamp_amplitude))
    SE_FAIL(err, SE_ERR_ARG, "%s: /stimuli/iclamp: missing arrays for %lld stimuli", src,
            (long long)m->n_iclamps);
  for (int64_t s = 0; s < m->n_iclamps; s++) {
    int64_t cell = m->iclamp_cell[s];
    if (cell < 0 || cell >= m->n_cells)
      SE_FAIL(err, SE_ERR_INPUT, "%s: /stimuli/iclamp/cell[%lld] = %lld is not in [0, %lld) (the cells)",
              src, (long long)s, (long long)cell, (long long)m->n_cells);
    int32_t morph = m->cell_morphology[cell];
    int64_t size = m->morph_offsets[morph + 1] - m->morph_offsets[morph];
    int32_t comp = m->iclamp_compartment[s];
    if (comp < 0 || comp >= size)
      SE_FAIL(err, SE_ERR_INPUT,
              "%s: /stimuli/iclamp/compartment[%lld] = %d is not in [0, %lld) (cell %lld has "
              "morphology %d with %lld compartments)",
              src, (long long)s, comp, (long long)size, (long long)cell, morph, (long long)size);
    if (!isfinite(m->iclamp_delay[s]))
      SE_FAIL(err, SE_ERR_INPUT, "%s: /stimuli/iclamp/delay[%lld] = %g is not finite", src,
              (long long)s, m->iclamp_delay[s]);
    if (!isfinite(m->iclamp_duration[s]) || !(m->iclamp_duration[s] >= 0))
      SE_FAIL(err, SE_ERR_INPUT, "%s: /stimuli/iclamp/duration[%lld] = %g is not a finite value >= 0",
              src, (long long)s, m->iclamp_duration[s]);
    if (!isfinite(m->iclamp_amplitude[s]))
      SE_FAIL(err, SE_ERR_INPUT, "%s: /stimuli/iclamp/amplitude[%lld] = %g is not finite", src,
              (long long)s, m->iclamp_amplitude[s]);
  }
  return SE_OK;
}

static int check_record(const se_neuron_model *m, const char *src, se_error *err) {
  if (m->record_every < 1)
    SE_FAIL(err, SE_ERR_INPUT, "%s: /record attribute every = %d is not >= 1", src, m->record_every);
  if (m->record_what != SE_RECORD_SOMA && m->record_what != SE_RECORD_ALL)
    SE_FAIL(err, SE_ERR_INPUT, "%s: /record attribute compartments: unknown choice %d", src,
            (int)m->record_what);
  if (m->record_float64 != 0 && m->record_float64 != 1)
    SE_FAIL(err, SE_ERR_INPUT, "%s: /record attribute dtype: unknown choice %d", src,
            m->record_float64);
  if (m->n_record_cells < 0 || m->n_record_cells > m->n_cells)
    SE_FAIL(err, SE_ERR_INPUT, "%s: /record/cells has %lld entries, more than the %lld cells", src,
            (long long)m->n_record_cells, (long long)m->n_cells);
  if (m->n_record_cells > 0 && !m->record_cells)
    SE_FAIL(err, SE_ERR_ARG, "%s: /record/cells: no array for %lld entries", src,
            (long long)m->n_record_cells);
  for (int64_t r = 0; r < m->n_record_cells; r++) {
    int64_t c = m->record_cells[r];
    if (c < 0 || c >= m->n_cells)
      SE_FAIL(err, SE_ERR_INPUT, "%s: /record/cells[%lld] = %lld is not in [0, %lld) (the cells)", src,
              (long long)r, (long long)c, (long long)m->n_cells);
    if (r > 0 && c <= m->record_cells[r - 1])
      SE_FAIL(err, SE_ERR_INPUT,
              "%s: /record/cells[%lld] = %lld is not > /record/cells[%lld] = %lld (ascending, no "
              "duplicates)",
              src, (long long)r, (long long)c, (long long)(r - 1), (long long)m->record_cells[r - 1]);
  }
  return SE_OK;
}

int se_neuron_model_validate(const se_neuron_model *model, const char *source, se_error *err) {
  if (!model)
    SE_FAIL(err, SE_ERR_ARG, "no model to validate");
  const char *src = source ? source : "(model)";
  SE_TRY(check_run(model, src, err));
  SE_TRY(check_biophysics(model, src, err));
  SE_TRY(check_morphologies(model, src, err));
  SE_TRY(check_cells(model, src, err));
  SE_TRY(check_iclamps(model, src, err));
  SE_TRY(check_record(model, src, err));
  return SE_OK;
}
