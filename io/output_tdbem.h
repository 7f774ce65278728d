/* The output file of the tdbem workload (DESIGN.md Section 4, docs/input-tdbem.md "Output"):
 * /tdbem/state [T x N] (row n = a_n in the original numbering, values in the input's precision)
 * and the /simengine metadata, written collectively with parallel HDF5 under "<path>.tmp",
 * renamed to path on success. Each rank writes its own contiguous range of columns; rows are
 * buffered and written every buffer_steps steps with one collective write. */
#ifndef SE_OUTPUT_TDBEM_H
#define SE_OUTPUT_TDBEM_H

#include <mpi.h>
#include <stdint.h>

#include "simengine/tdbem.h"

typedef struct se_output_tdbem *se_output_tdbem_t;

/* What one rank writes. The ranks' columns tile [0, N) in rank order: rank p writes columns
 * [sum of the local_count of ranks < p, + local_count). n, steps, precision and flush_seconds
 * must be the same on every rank; the smallest buffer_steps of the ranks is used. */
typedef struct se_output_tdbem_spec {
  int64_t n;     /* N, columns */
  int64_t steps; /* T, rows */
  se_precision precision;
  int64_t local_count;  /* this rank's columns */
  int64_t buffer_steps; /* rows buffered before a collective write (>= 1) */
  double flush_seconds; /* H5Fflush at most this often (<= 0: only at close) */
} se_output_tdbem_spec;

/* Creates "<path>.tmp" with /simengine and /tdbem/state sized for the run. Collective over comm. */
int se_output_tdbem_open(const char *path, MPI_Comm comm, const se_output_tdbem_spec *spec,
                         se_output_tdbem_t *out, se_error *err);

/* Appends the next row: local[c] = a_n(first + c) for this rank's columns. Buffered; every
 * buffer_steps rows the buffer is written collectively and the file flushed when flush_seconds
 * have passed. Collective over comm (every rank appends every row). */
int se_output_tdbem_append(se_output_tdbem_t out, const double *local, se_error *err);

/* Attributes of /simengine: a string, an integer or a double (written once per name).
 * Collective (the same value on every rank). */
int se_output_tdbem_meta_string(se_output_tdbem_t out, const char *name, const char *value,
                                se_error *err);
int se_output_tdbem_meta_int(se_output_tdbem_t out, const char *name, int64_t value, se_error *err);
int se_output_tdbem_meta_double(se_output_tdbem_t out, const char *name, double value,
                                se_error *err);

/* Writes every rank's balancing history (one iteration per group of steps_per_iteration steps,
 * items = the rank's slices) into /simengine/balance (io/balance_history.h) with the method's
 * name ("paper", "rate" or "off"). Collective over comm. */
struct se_balance_history;
int se_output_tdbem_balance_history(se_output_tdbem_t out, const struct se_balance_history *h,
                                    const char *method, int64_t steps_per_iteration,
                                    se_error *err);

/* With success non-zero on every rank: writes the buffered rows (all T rows must have been
 * appended), closes the file and renames "<path>.tmp" to path. Otherwise removes "<path>.tmp".
 * Collective over comm. Frees out. */
int se_output_tdbem_close(se_output_tdbem_t out, int success, se_error *err);

#endif
