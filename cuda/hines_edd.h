/* One very large Hines matrix on the GPU by Exact Domain Decomposition with fine decomposition
 * and recursion (paper 004, R-FINE-TPT; docs/edd.md). Usable from C; the launchers live in
 * hines_edd.cu.
 *
 * The plan is built on the host (src/hines_edd_plan.h: the system's form, the decomposition,
 * the recursion rule) and uploaded once. A solve, all on the device and asynchronous on the
 * object's stream:
 *   levels 0 .. T-1 (the levels of more than tail_rows rows): one grid launch per level going
 *     down (one thread per junction: eliminate the chains below it, write its row of the next
 *     level and the bottom junctions' couplings), and one per level coming back up (the
 *     junction's value from the next level, then its chains' rows);
 *   levels T .. L-1 and the sequential sweep of level L: one launch of a single CTA that runs
 *     the same per-junction code level after level with __syncthreads() between levels, and the
 *     sweep of level L by one thread (in shared memory when level L fits);
 * replayed as one CUDA graph (per d, g, r pointers) when use_graph is set and the stream is not
 * the default stream. Each thread runs the CPU executor's code (hines_edd_plan.h), so the GPU's
 * x is the CPU executor's bit for bit (the build disables FMA contraction in device code).
 * A plan of depth 0 runs the plain sequential sweep on one GPU thread: the baseline EDD beats.
 * Nothing here is collective. */
#ifndef SE_HINES_EDD_H
#define SE_HINES_EDD_H

#include <stdint.h>

#include "hines_edd_plan.h"
#include "se_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct se_hines_edd_gpu_options {
  int32_t tail_rows; /* levels of at most this many rows run inside the single-CTA tail launch
                        (0 = only the sequential sweep there) */
  int use_graph;     /* 1 = replay the launches of a solve as one CUDA graph */
} se_hines_edd_gpu_options;

/* tail_rows and use_graph of the measured defaults (docs/edd.md). */
se_hines_edd_gpu_options se_hines_edd_gpu_options_default(void);

typedef struct se_hines_edd se_hines_edd; /* a plan on the device (opaque) */

/* Uploads the plan (not kept: the host plan may be destroyed afterwards) to the current device,
 * with the level workspace, for solves on `stream`. opt NULL = the defaults. Synchronous. */
int se_hines_edd_create(const se_hines_edd_plan *plan, const se_hines_edd_gpu_options *opt,
                        cudaStream_t stream, se_hines_edd **out, se_error *err);

void se_hines_edd_destroy(se_hines_edd *e);

/* Solves the system of device arrays d, g, r (n rows each in the tree's row order; the form of
 * hines_edd_plan.h): r becomes x, d and g are not modified. Asynchronous on the stream; launch
 * errors are reported here, execution errors at the next synchronisation. */
int se_hines_edd_solve(se_hines_edd *e, const double *d, const double *g, double *r,
                       se_error *err);

/* Waits for the object's stream and reports an execution error. */
int se_hines_edd_sync(se_hines_edd *e, se_error *err);

cudaStream_t se_hines_edd_stream(const se_hines_edd *e);

/* Kernel launches of one solve (grid levels x 2 + the tail) and the first level of the tail. */
int se_hines_edd_launches(const se_hines_edd *e);
int se_hines_edd_tail_level(const se_hines_edd *e);

/* Device bytes held by the object (index tables and level workspace). */
int64_t se_hines_edd_device_bytes(const se_hines_edd *e);

#ifdef __cplusplus
}
#endif
#endif
