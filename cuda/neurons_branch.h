/* The branch step of the CUDA neurons backend (SE_GPU_KERNEL_BRANCH, docs/gpu.md): every cell is
 * solved as its own tree, not padded to a 32-lane group of its morphology. Cells below the EDD
 * threshold go into one branch-level Hines plan (cuda/hines_branch.h: branches of all cells by
 * level, exact mode); each cell of at least the threshold gets its own EDD plan
 * (cuda/hines_edd.h). The device state is kept in the "branch order": the branch plan's slots
 * (padding included), then each EDD cell's rows in its compartment order. Assembly and update are
 * per-slot kernels of the v-form system (neurons_kernels.cu), so one step is: assemble, the
 * branch solve, one EDD solve per huge cell, update; all on the engine's compute stream.
 * Host-side control; nothing here is collective. */
#ifndef SE_NEURONS_BRANCH_H
#define SE_NEURONS_BRANCH_H

#include "neurons_cuda.h"
#include "se_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct se_neurons_branch se_neurons_branch;

/* The step kernel an engine runs: options.gpu_fused, with SE_GPU_KERNEL_AUTO resolved by the rule
 * of neurons.h (mean lanes used per 32-lane same-morphology group < SE_GPU_AUTO_MIN_LANES, or a
 * cell of at least se_neurons_edd_min_comp compartments: BRANCH; else GEN for at most
 * SE_GEN_AUTO_MAX_MORPHOLOGIES morphologies whose kernels need at most SE_GEN_AUTO_MAX_SMEM of
 * shared memory each (se_neurons_gen_auto); else COOP when no cell has
 * more than SE_GPU_COOP_MAX_COMP compartments; else FUSED2). */
int se_neurons_gpu_kernel(const struct se_neurons *e);

/* The EDD threshold in compartments: options.gpu_edd_min_comp, else SE_EDD_MIN_COMP from the
 * environment (experiments), else SE_GPU_EDD_MIN_COMP. */
int64_t se_neurons_edd_min_comp(const struct se_neurons *e);

/* Builds the plans of e's cells on the current device and the branch-order arrays of d
 * (n_branch_slots, slot_*, v, m, h, n from e's host state, diag, rhs, clamps by slot) for steps on
 * `stream`. Synchronous. */
int se_neurons_branch_create(struct se_neurons *e, cudaStream_t stream, se_neurons_device *d,
                             se_neurons_branch **out, se_error *err);

/* Frees the plans and the host maps (the device arrays of d are the caller's to free). */
void se_neurons_branch_destroy(se_neurons_branch *b);

/* One time step from t: assembly, the solves, update. Asynchronous on the stream. */
int se_neurons_branch_step(se_neurons_branch *b, const se_neurons_device *d, double t,
                           se_error *err);

/* Slot of the branch order of engine slot s (e's layout); -1 for an engine padding lane. */
int64_t se_neurons_branch_slot(const se_neurons_branch *b, int64_t s);

/* Copies e's host arrays v, m, h, n (e's layout) into the branch order on the device, after the
 * work queued on the stream. */
int se_neurons_branch_upload_state(const se_neurons_branch *b, se_neurons_device *d,
                                   const struct se_neurons *e, se_error *err);

/* Copies v, m, h, n of the branch order back into e's host arrays (e's layout). Waits for the
 * stream. */
int se_neurons_branch_download(const se_neurons_branch *b, const se_neurons_device *d,
                               struct se_neurons *e, se_error *err);

/* Figures of the routing, for the benchmark and messages. */
typedef struct se_neurons_branch_stats {
  int64_t branch_cells, edd_cells, slots, padding; /* cells in the branch plan / through EDD,
                                                     slots of the branch order, padding slots */
  int32_t levels;                                 /* of the branch plan */
} se_neurons_branch_stats;

void se_neurons_branch_get_stats(const se_neurons_branch *b, se_neurons_branch_stats *st);

#ifdef __cplusplus
}
#endif
#endif
