/* Reading version-1 tdbem input files (DESIGN.md Section 4, docs/input-tdbem.md) with parallel
 * HDF5: every rank reads only what it needs (its interval of slices with hyperslabs); the whole
 * file is never read on every rank. Every call is collective and agreed: when one rank fails,
 * every rank returns the lowest failing rank's message. */
#ifndef SE_INPUT_TDBEM_H
#define SE_INPUT_TDBEM_H

#include <mpi.h>
#include <stdint.h>

#include "simengine/tdbem.h"

typedef struct se_input_tdbem *se_input_tdbem_t;

/* Opens the tdbem input file path over comm and checks it: the root attributes, /run steps,
 * /tdbem N, kmax and precision, the presence, shape and dtype of every dataset (the value
 * datasets must have the dtype of precision), and the slice pointers (slice_ptr, and val_ptr at
 * the slice boundaries, read once on rank 0). meta receives the sizes on every rank.
 * Collective over comm. */
int se_input_tdbem_open(const char *path, MPI_Comm comm, se_input_tdbem_t *in, se_tdbem_meta *meta,
                        se_error *err);

/* The stored values of each slice: values[j] for j = 0 .. N-1 (the weights of the partition).
 * Not collective (known since open). */
void se_input_tdbem_slice_values(se_input_tdbem_t in, int64_t *values);

/* Reads slices [first, first + count) (this rank's interval; ranks may ask for any intervals,
 * overlapping or empty) into s, with hyperslab reads of the slice datasets, and checks them:
 * val_ptr non-decreasing, row indices in [0, N), kstart >= 1 and every row-vector ending by kmax.
 * Free s with se_tdbem_slices_free. Collective over comm. */
int se_input_tdbem_read_slices(se_input_tdbem_t in, int64_t first, int64_t count,
                               se_tdbem_slices *s, se_error *err);

/* Reads M0 on rank 0 (values in double) and checks it: indices in [0, N), no entry above the
 * diagonal (row >= col), every diagonal entry present and > 0. Other ranks get n = N, nnz = 0 and
 * no arrays. Free with se_tdbem_m0_free. Collective over comm. */
int se_input_tdbem_read_m0(se_input_tdbem_t in, se_tdbem_m0 *m0, se_error *err);

/* Reads /tdbem/positions [N x 3] into positions (3 N doubles) on every rank; an input error when
 * the file has none (meta.has_positions). Collective over comm. */
int se_input_tdbem_read_positions(se_input_tdbem_t in, double *positions, se_error *err);

/* Reads the illumination rows l_step .. l_{step+count-1} into rows[q N + i] (doubles) on rank 0;
 * other ranks read nothing and may pass NULL. Collective over comm. */
int se_input_tdbem_read_illumination(se_input_tdbem_t in, int64_t step, int64_t count, double *rows,
                                     se_error *err);

/* Closes the file and frees in. Collective over comm. */
int se_input_tdbem_close(se_input_tdbem_t in, se_error *err);

#endif
