/* The cooperative ("coop") step of the CUDA neurons backend (src/neurons_coop.h, docs/gpu.md):
 * the device image of its plans, the host control (neurons_coop_cuda.c) and the extern "C"
 * launcher of its kernel (neurons_coop.cu). */
#ifndef SE_NEURONS_COOP_CUDA_H
#define SE_NEURONS_COOP_CUDA_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#include "neurons_coop.h"
#include "neurons_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Device plans of an engine, passed by value to the kernel. One warp (one block) per G = 32 /
 * lanes cells: lanes w G .. w G + G - 1 of a group (launch order of neurons_cuda.c's groups). */
typedef struct se_coop_device {
  const se_coop_morph *morph;           /* [morphologies] */
  const se_coop_chunk *rec, *hh, *ev;   /* the tables of neurons_coop.h */
  int32_t lanes;                        /* L: threads per cell (2, 4 or 8) */
  int32_t warps_per_group;              /* ceil(width / G) */
  int32_t slots;                        /* shared-memory slots per cell (max over morphologies) */
  int32_t v_wide;      /* the width is a multiple of G: the G cells' v of a row are G * 8
                          contiguous bytes, copied 16 bytes at a time by the warp past the L1 (a
                          group whose v is not 16-byte aligned takes 8-byte copies) */
  int32_t stage_short; /* phases 0 and 3b's records staged through shared memory in batches (else
                          register rings) */
  int64_t n_warps;
} se_coop_device;

/* Bytes per warp of the ring of staged records, which phases 0, 1b, 2, 3a and 3b use in turn:
 * phase 1b's SE_COOP_RING steps of 3 chunks per thread, or 3 batches of 32 chunks (G steps of
 * phases 0 and 3b, 8 events). */
static inline size_t se_coop_ring_bytes(int lanes) {
  const size_t rows = (size_t)SE_COOP_RING * 3 * (size_t)lanes, batches = 3 * 32;
  return (rows > batches ? rows : batches) * sizeof(se_coop_chunk);
}

/* Shared memory per warp (bytes) of plans of `slots` slots per cell at `lanes` threads per cell,
 * with the ring of staged records (se_coop_ring_bytes). */
static inline size_t se_coop_warp_smem(int32_t slots, int lanes) {
  return (size_t)slots * (size_t)(32 / lanes) * sizeof(double) + se_coop_ring_bytes(lanes);
}

/* Builds the coop plans of e (and fused2's row table, d->stream, which the gate finish reads)
 * for 4 and 8 threads per cell and keeps those that se_coop_estimate finds faster among those
 * whose cells fit in a block's shared memory (for experiments the environment's SE_COOP_LANES,
 * 2, 4 or 8, forces a count, SE_COOP_CAP sets the longest range in % of n / L, SE_COOP_SHORT=0|1
 * turns phase 1b's short path off or on in every plan instead of where it is estimated to pay,
 * SE_COOP_STAGE_SHORT=0|1 sets stage_short above instead of its default by thread count:
 * docs/gpu.md "coop", Knobs), uploads them and allows the kernel its shared memory.
 * SE_ERR_UNSUPPORTED when a morphology's cells need more shared memory than a block may have. d
 * must hold the group layout (attach_groups of neurons_cuda.c). Not collective. */
int se_neurons_coop_attach(const struct se_neurons *e, int device, se_neurons_device *d,
                           se_coop_device *cp, se_error *err);

/* Frees what se_neurons_coop_attach allocated (device buffers of cp). */
void se_neurons_coop_free(se_coop_device *cp);

/* One coop step from time t (the gates of the last step brought up to date first when
 * update_gates, as fused2). */
cudaError_t se_neurons_cuda_step_coop(const se_neurons_device *d, const se_coop_device *cp,
                                      double t, int update_gates, cudaStream_t stream);

/* Allows the coop kernel smem_bytes of dynamic shared memory per block. */
cudaError_t se_neurons_cuda_coop_setup(size_t smem_bytes);

#ifdef __cplusplus
}
#endif
#endif
