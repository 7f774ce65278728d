/* Multi-morphology Hines solves by branch levels on the GPU (paper 001, Sec. 4; docs/gpu-tridiag.md).
 *
 * Every cell has its own tree. The plan, built once on the host, cuts each tree into branches
 * (maximal unbranched runs: a branch starts at the root or at a child of a compartment with two or
 * more children, and runs down single-child links to a leaf or a branch point, its tail), gives
 * each branch a level (its depth: the root branch 0, a child branch its parent's level + 1) and
 * stores the branches of each level as one variable-size batch of tridiagonal systems, in groups
 * of 32 branches (one warp) block-interleaved: row k of lane l of group g at slot
 * gbase[g] + 32 k + l, the group as tall as its longest branch. Branches of a level can be sorted
 * by length (less padding and divergence).
 *
 * The solve is the Hines elimination reordered, exact: with g_k the coupling of row k to row
 * k - 1 (the head's coupling to its parent's tail for k = 0),
 *   phase 1, levels deepest -> 0, one launch per level, one thread per branch: fold the children's
 *     contributions into the tail (d_t -= f g, r_t += f r' per child head, f = g / d', children in
 *     decreasing compartment index), then Thomas elimination tail -> head
 *     (f = g_k / d'_k, d'_{k-1} = d_{k-1} - f g_k, r'_{k-1} = r_{k-1} + f r'_k), and the head's
 *     contribution (f g, f r') to its parent's tail is stored for the parent level;
 *   phase 2, levels 0 -> deepest: x_head = (r'_0 + g_0 x_parent_tail) / d'_0 (the root: r'/d'),
 *     x_k = (r'_k + g_k x_{k-1}) / d'_k down the branch.
 * These are the operations of the CPU path (src/neurons_cpu.c) in the same order per compartment,
 * so with exact = 1 the result is bitwise the CPU's. exact = 0 stores e = g / d' and r' / d' in
 * phase 1 (x_k = r'_k/d'_k + e_k x_{k-1}): 8 B less per compartment, equal to rounding.
 * Compute padding (CP): every lane of a group runs the group's height, padding rows read but
 * not used or written; no compute padding (NCP): each lane runs its own length.
 *
 * cuSPARSE backend (mode.backend != 0; paper 001's peer): phase 1 runs the levels deepest -> 0;
 * per level a kernel folds the children into each branch's tail and writes the level as one
 * cusparseDgtsvInterleavedBatch batch padded to the level's longest branch (at least 3 rows;
 * padding rows identity with zero right-hand side, the tail's upper coupling 0 so they never
 * couple to real rows) with 2 systems per branch, the matrix A_B twice: A_B y = e_head and
 * A_B z = r_B; a second kernel stores y in d and z in r and the head's contribution to its
 * parent's tail from d'_head = 1 / y_head, r'_head = z_head / y_head as the exact kernel does.
 * Phase 2 (levels 1 -> deepest) is an axpy per branch, x_B = z + (g_head x_parent_tail) y: no
 * second solve. compute_padding and exact do not apply (never bitwise: other operations). The
 * interleaved arrays (4 x the largest level's rows x 2 systems per branch) and the cuSPARSE
 * buffer (the largest need over the levels) are allocated once per plan, at its first cuSPARSE
 * solve (synchronous then; again only when the algorithm changes).
 *
 * Data: device arrays d (diagonal) and r (right-hand side) of se_hines_branch_slots() doubles in
 * the plan's slot order (se_hines_branch_slot_map); the solve leaves x in r and pivots in d.
 * The coupling g is uploaded once (se_hines_branch_set_coupling). Padding slots need no content.
 * Slots are 32-bit: a plan holds fewer than 2^31 slots. Nothing here is collective. */
#ifndef SE_HINES_BRANCH_H
#define SE_HINES_BRANCH_H

#include <stdint.h>

#include "se_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct se_hines_branch_plan se_hines_branch_plan;

/* Solver of the levels (se_hines_branch_mode.backend). */
typedef enum se_hines_branch_backend {
  SE_HINES_BRANCH_KERNELS = 0,         /* our level kernels */
  SE_HINES_BRANCH_CUSPARSE_THOMAS = 1, /* cusparseDgtsvInterleavedBatch algorithm 0 per level */
  SE_HINES_BRANCH_CUSPARSE_LU = 2,     /* algorithm 1 (LU with partial pivoting) */
  SE_HINES_BRANCH_CUSPARSE_QR = 3,     /* algorithm 2 (QR) */
  SE_HINES_BRANCH_BACKENDS = 4
} se_hines_branch_backend;

typedef struct se_hines_branch_mode {
  int compute_padding; /* 1 = CP, 0 = NCP (our kernels) */
  int exact;           /* 1 = the CPU path's operations (bitwise), 0 = fewer bytes (our kernels) */
  int use_graph;       /* 1 = replay the level launches as a CUDA graph (needs a non-default stream) */
  int backend;         /* se_hines_branch_backend; 0 = our kernels */
} se_hines_branch_mode;

typedef struct se_hines_branch_stats {
  int64_t cells, compartments, branches, groups, slots; /* slots include the padding */
  int32_t levels, max_branch_length;
  int64_t cusparse_rows; /* rows of the cuSPARSE backend's level batches, one system per branch
                            (sum over levels of branches x batch rows; 2 systems per branch) */
} se_hines_branch_stats;

/* Builds the plan of n_cells trees: cell c has compartments offsets[c] .. offsets[c+1]-1 with
 * parent indices local to the cell (-1 at local 0, else < the local index). sort_by_length
 * orders each level's branches by decreasing length. Uploads the plan's tables on stream
 * (synchronously). SE_ERR_ARG for a malformed tree (named by cell and compartment),
 * SE_ERR_UNSUPPORTED past 2^31 slots. */
int se_hines_branch_plan_create(int64_t n_cells, const int64_t *offsets, const int32_t *parent,
                                int sort_by_length, cudaStream_t stream,
                                se_hines_branch_plan **out, se_error *err);

void se_hines_branch_plan_destroy(se_hines_branch_plan *p);

void se_hines_branch_plan_stats(const se_hines_branch_plan *p, se_hines_branch_stats *st);

/* Slot of every compartment (host array of offsets[n_cells] entries, owned by the plan). */
const int32_t *se_hines_branch_slot_map(const se_hines_branch_plan *p);

/* Number of slots of d and r (padding included). */
int64_t se_hines_branch_slots(const se_hines_branch_plan *p);

/* Uploads g (host, one per compartment: the coupling to its parent; ignored at roots) into the
 * plan's slot order. Synchronous. */
int se_hines_branch_set_coupling(se_hines_branch_plan *p, const double *g, se_error *err);

/* Solves every cell's system: r becomes x, d scratch (pivots, or y with cuSPARSE). Asynchronous
 * on the plan's stream, except the first cuSPARSE solve (workspace, see above). SE_ERR_ARG for an
 * unknown backend; SE_ERR_UNSUPPORTED when a level's cuSPARSE batch would pass 2^31 - 1 rows. */
int se_hines_branch_solve(se_hines_branch_plan *p, double *d, double *r,
                          const se_hines_branch_mode *mode, se_error *err);

/* ---- mono-morphology reference ---------------------------------------------------------------
 * Cells sharing morphologies, one thread per cell: cells of one morphology in groups of 32 lanes
 * (compartment i of lane l of group k at slot base[k] + 32 i + l), parent and g shared by the
 * morphology, the CPU path's operations with the running values of unbranched runs in registers.
 * The baseline of the multi-morphology solve (same run, same machine). */
typedef struct se_hines_monoref se_hines_monoref;

/* n_morph morphologies (morph_offsets[n_morph+1], local parent, g per compartment, all host) and
 * n_cells cells (cell_morph[n_cells]). Synchronous uploads on stream. */
int se_hines_monoref_create(int32_t n_morph, const int64_t *morph_offsets, const int32_t *parent,
                         const double *g, int64_t n_cells, const int32_t *cell_morph,
                         cudaStream_t stream, se_hines_monoref **out, se_error *err);

void se_hines_monoref_destroy(se_hines_monoref *m);

/* Slots of d and r (padding lanes included; their content is never used). */
int64_t se_hines_monoref_slots(const se_hines_monoref *m);

/* Slot of compartment i of cell c. */
int64_t se_hines_monoref_slot(const se_hines_monoref *m, int64_t c, int32_t i);

/* Solves every cell: r becomes x, d scratch. Asynchronous on the stream. */
int se_hines_monoref_solve(se_hines_monoref *m, double *d, double *r, se_error *err);

#ifdef __cplusplus
}
#endif
#endif
