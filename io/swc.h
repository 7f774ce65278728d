/* Morphologies for simengine-prep: SWC import and the synthetic classes of paper 000, Table 1.
 * The result is a compartment tree ready for /morphologies (docs/morphologies.md). */
#ifndef SE_SWC_H
#define SE_SWC_H

#include <stdint.h>

#include "simengine/neurons.h"

/* How sections are cut into compartments. */
typedef struct se_discretization {
  double max_length;   /* um; 0 = no length limit */
  double d_lambda;     /* fraction of the AC length constant at `frequency`; 0 = rule off */
  double frequency;    /* Hz, for the d_lambda rule (NEURON's default 100) */
  double min_radius;   /* repair: radii below this are raised to it (0 = no repair, refuse) */
} se_discretization;

/* A compartment tree: parents before children, each branch (section) contiguous. */
typedef struct se_morphology {
  int32_t n_compartments;
  int32_t *parent;            /* -1 for compartment 0 */
  double *length, *diameter;  /* um */
  int32_t *region;            /* SWC type of the section */
  int32_t n_branches;         /* sections */
} se_morphology;

/* The default discretization: d_lambda = 0.1 at 100 Hz, no length limit. */
se_discretization se_discretization_default(void);

/* Reads an SWC file and discretises it. bio gives Ra and cm per region for the d_lambda rule.
 * Malformed files are refused with a message naming the file, the line and the problem. */
int se_swc_load(const char *path, const se_discretization *disc, const se_biophysics *bio,
                se_morphology *morph, se_error *err);

/* Builds synthetic class `name` (small-low, small-high, medium-low, medium-high, big-low,
 * big-high: paper 000, Table 1) with the given random seed. */
int se_morphology_synthetic(const char *name, uint64_t seed, se_morphology *morph, se_error *err);

/* Frees the arrays of morph and zeroes it (nothing when morph is NULL). Not collective. */
void se_morphology_free(se_morphology *morph);

/* Fills the /morphologies and /cells parts of m (whose arrays there must be NULL, as after
 * se_neuron_model_init) from n_morph morphologies with copies[k] cells of morphology k: the
 * morphologies' compartments one after the other, the cells laid out morphology by morphology
 * (the copies of one consecutive), cell i with gid i. Not collective. */
int se_neuron_model_set_cells(se_neuron_model *m, int32_t n_morph, const se_morphology *morphs,
                              const int64_t *copies, se_error *err);

#endif
