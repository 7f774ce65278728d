/* Per-iteration history of a rank's worker balancing (issue 5), written to /simengine/balance of
 * a run's output (docs/balance.md, docs/output.md) for both workloads.
 *
 * In the file, with I iterations (the largest count over the ranks), R ranks and W worker
 * columns (the largest worker count over the ranks):
 *   /simengine/balance/first   int64   [I][R][W]  first item of the worker's interval (rank-local,
 *                                                 0-based), -1 where the rank has no such worker
 *                                                 or iteration
 *   /simengine/balance/last    int64   [I][R][W]  last item (inclusive), -1 likewise
 *   /simengine/balance/time    float64 [I][R][W]  measured seconds of the worker in that
 *                                                 iteration, NaN likewise
 *   /simengine/balance/workers string  [R]        the rank's worker names, comma separated
 *                                                 ("cpu,cuda:0,cuda:1")
 *   attributes on /simengine/balance: "items" ("cells" or "slices"), "method" ("paper", "rate"
 *   or "off"), "steps_per_iteration" (int64; 1 for tdbem, where an iteration is a step)
 */
#ifndef SE_BALANCE_HISTORY_H
#define SE_BALANCE_HISTORY_H

#include <hdf5.h>
#include <mpi.h>
#include <stdint.h>

#include "simengine/error.h"

/* One rank's history; zero-initialise, set n_workers and names, then append. */
typedef struct se_balance_history {
  int n_workers;
  char names[256];           /* comma-separated worker names of this rank */
  int64_t n_iterations, capacity;
  int64_t *first, *last;     /* [n_iterations][n_workers] */
  double *time;              /* [n_iterations][n_workers] */
} se_balance_history;

/* Appends one iteration: first[w], last[w] (inclusive, rank-local item indices) and the measured
 * time[w] of each of the n_workers workers. Not collective. */
int se_balance_history_append(se_balance_history *h, const int64_t *first, const int64_t *last,
                              const double *time, se_error *err);

/* Writes every rank's history into group /simengine/balance of the open file (created if
 * missing), with the attributes above. Collective over comm (every rank calls it, also ranks with
 * an empty history). file was opened with the MPI-IO driver on comm. */
int se_balance_history_write(hid_t file, MPI_Comm comm, const se_balance_history *h,
                             const char *items, const char *method, int64_t steps_per_iteration,
                             se_error *err);

/* Releases the arrays; safe on a zeroed struct. Not collective. */
void se_balance_history_free(se_balance_history *h);

#endif
