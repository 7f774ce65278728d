/* Synthetic TD-BEM cases (simengine-prep tdbem, docs/prep.md "tdbem", docs/input-tdbem.md):
 * unknowns on a closed surface, every pair (i, j) interacting through one row-vector that starts
 * at the delay k = 1 + floor(d(i, j) / (c dt)), values decaying with distance, an almost diagonal
 * symmetric positive definite M0 and a plane-wave illumination. The values are scaled so that the
 * marching on in time stays bounded (docs/prep.md gives the argument). */
#ifndef SE_PREP_TDBEM_H
#define SE_PREP_TDBEM_H

#include <stdint.h>

#include "simengine/tdbem.h"

typedef enum se_prep_shape { SE_PREP_SPHERE = 0, SE_PREP_AIRPLANE = 1 } se_prep_shape;

/* What to generate; se_prep_tdbem_defaults fills the documented defaults. */
typedef struct se_prep_tdbem_params {
  se_prep_shape shape;
  int64_t n;          /* unknowns N (>= 4) */
  int64_t kmax;       /* largest k; 0: derived from c_dt (then c_dt must be given) */
  int64_t dmax;       /* longest row-vector (>= 1) */
  double mean_length; /* mean row-vector length, in [1, dmax] */
  int64_t steps;      /* T */
  se_precision precision;
  double c_dt; /* wave speed x time step (length units of the body); 0: chosen from kmax */
  uint64_t seed;
  int64_t block_values; /* most values generated and written at once; 0: 16 Mi (tests use less) */
} se_prep_tdbem_params;

/* What was generated. */
typedef struct se_prep_tdbem_summary {
  int64_t n, kmax, steps;
  double c_dt;     /* the one used */
  double diameter; /* largest distance between two unknowns */
  double spacing;  /* mean distance to the nearest unknown */
  int64_t n_rowvectors, n_values, nnz0, longest;
  double coupling; /* the bound of sum_j sum_k |M_k(i, j)| over the rows */
  double bytes;    /* size of the file's datasets */
} se_prep_tdbem_summary;

/* A whole case in memory (tests, small cases): slices over every unknown (first 0, count N), the
 * values as the file holds them (rounded to float for single precision, also in M0 and the
 * illumination). */
typedef struct se_tdbem_case {
  se_tdbem_meta meta;
  double *positions; /* [N x 3], or NULL (not written) */
  se_tdbem_m0 m0;
  se_tdbem_slices slices;
  double *illumination; /* [T x N] */
} se_tdbem_case;

/* The defaults: sphere, N 2000, kmax 100, dmax 15, mean length 9.5, 1000 steps, single, c dt
 * from kmax, seed 1. Not collective. */
void se_prep_tdbem_defaults(se_prep_tdbem_params *p);

/* Writes the case p describes to path (under "<path>.tmp", renamed on success), streaming: the
 * slices are generated and written block by block, never all in memory; fails before writing
 * when the disk lacks the room. sum (may be NULL) receives what was written. One process
 * (OpenMP inside); not collective. */
int se_prep_tdbem_write(const char *path, const se_prep_tdbem_params *p, se_prep_tdbem_summary *sum,
                        se_error *err);

/* Builds the same case as se_prep_tdbem_write in memory (for small cases and tests); free with
 * se_tdbem_case_free. Not collective. */
int se_prep_tdbem_build(const se_prep_tdbem_params *p, se_tdbem_case *c, se_error *err);

/* Writes c to path as it is, without any check (tests make bad files with it), under
 * "<path>.tmp", renamed on success. Not collective. */
int se_prep_tdbem_write_case(const char *path, const se_tdbem_case *c, se_error *err);

/* Frees what se_prep_tdbem_build allocated and zeroes c. */
void se_tdbem_case_free(se_tdbem_case *c);

/* simengine-prep tdbem: parses argv[first..argc) (docs/prep.md), writes the file, prints a
 * summary. Returns the exit status: 0, 1 (a failure) or 2 (bad options). */
int se_prep_tdbem_main(int argc, char **argv, int first);

#endif
