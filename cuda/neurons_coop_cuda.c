/* The coop step's host control: plans built (src/neurons_coop.c), uploaded, shared memory allowed
 * (docs/gpu.md, "coop"). */
#include <stdio.h>
#include <stdlib.h>

#include "neurons_coop_cuda.h"
#include "se_cuda.h"
#include "se_env.h"

/* SE_COOP_STAGE_SHORT is on up to SE_COOP_STAGE_SHORT_MAX_LANES threads per cell (at 8 a batch
 * is 4 steps, and big-high measured slower with it; docs/gpu.md "coop measured", fifth round). */
#define SE_COOP_STAGE_SHORT_MAX_LANES 4

/* se_coop_estimate of the plans tab with the ring of staged records; 0 where a warp's shared
 * memory exceeds a block's (smem_block) or its multiprocessor's. */
static double estimate(const struct se_neurons *e, const se_coop_tables *tab, int smem_block,
                       int smem_sm) {
  if (se_coop_warp_smem(tab->max_slots, tab->lanes) > (size_t)smem_block)
    return 0.0;
  return se_coop_estimate(e, tab, (size_t)smem_sm, se_coop_ring_bytes(tab->lanes));
}

int se_neurons_coop_attach(const struct se_neurons *e, int device, se_neurons_device *d,
                           se_coop_device *cp, se_error *err) {
  int smem_block = 0, smem_sm = 0;
  SE_CUDA_CHECK(err, cudaDeviceGetAttribute(&smem_block, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                            device));
  SE_CUDA_CHECK(err, cudaDeviceGetAttribute(&smem_sm,
                                            cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
  se_stream_tables st;
  SE_TRY(se_stream_build(e, &st, err));
  se_coop_tables tab = {0};
  const int forced = (int)se_env_long("SE_COOP_LANES", 0),
            cap_percent = (int)se_env_long("SE_COOP_CAP", 0);
  const int short_path = se_env_flag("SE_COOP_SHORT", SE_COOP_SHORT_AUTO);
  /* unless forced: 4 or 8 threads per cell, the faster by se_coop_estimate among those whose
   * cells fit in a block's shared memory (else 8, and the error below) */
  int rc = se_coop_build(e, &st, forced ? forced : 4, cap_percent, short_path, &tab, err);
  if (rc == SE_OK && !forced) {
    se_coop_tables eight;
    rc = se_coop_build(e, &st, 8, cap_percent, short_path, &eight, err);
    const double t4 = estimate(e, &tab, smem_block, smem_sm),
                 t8 = rc == SE_OK ? estimate(e, &eight, smem_block, smem_sm) : 0.0;
    if (rc == SE_OK && (t4 <= 0.0 || (t8 > 0.0 && t8 < t4))) {
      se_coop_free(&tab);
      tab = eight;
    } else {
      se_coop_free(&eight);
    }
  }
  if (rc == SE_OK) /* the gate finish (stream_finish) reads the stream rows' hh flags */
    rc = se_neurons_cuda_upload(&d->stream, st.rows,
                                (size_t)(e->n_morph_comp > 0 ? e->n_morph_comp : 1) *
                                    sizeof *st.rows,
                                err);
  se_stream_free(&st);
  if (rc != SE_OK)
    se_coop_free(&tab);
  SE_TRY(rc);
  const int G = 32 / tab.lanes;
  const int stage_short =
      se_env_flag("SE_COOP_STAGE_SHORT", tab.lanes <= SE_COOP_STAGE_SHORT_MAX_LANES);
  const size_t smem = se_coop_warp_smem(tab.max_slots, tab.lanes);
  if (smem > (size_t)smem_block)
    rc = se_error_set(err, SE_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,
                      "coop GPU step: a morphology needs %zu B of shared memory per %d cells "
                      "(%d slots per cell, %d threads per cell), device %d allows %d B per block: "
                      "use --gpu-kernel fused2 or branch",
                      smem, G, tab.max_slots, tab.lanes, device, smem_block);
  if (rc == SE_OK)
    rc = se_neurons_cuda_upload(&cp->morph, tab.morph,
                                (size_t)(tab.n_morph > 0 ? tab.n_morph : 1) * sizeof *tab.morph,
                                err);
  if (rc == SE_OK)
    rc = se_neurons_cuda_upload(&cp->rec, tab.rec, (size_t)tab.n_rec * sizeof *tab.rec, err);
  if (rc == SE_OK)
    rc = se_neurons_cuda_upload(&cp->hh, tab.hh, (size_t)tab.n_hh * sizeof *tab.hh, err);
  if (rc == SE_OK)
    rc = se_neurons_cuda_upload(&cp->ev, tab.ev, (size_t)tab.n_ev * sizeof *tab.ev, err);
  cp->lanes = tab.lanes;
  cp->slots = tab.max_slots;
  cp->warps_per_group = (d->width + G - 1) / G;
  cp->n_warps = d->n_groups * cp->warps_per_group;
  cp->v_wide = d->width % G == 0;
  cp->stage_short = stage_short;
  if (rc == SE_OK && getenv("SE_COOP_VERBOSE")) {
    fprintf(stderr,
            "coop: v copies %s, phases 0 and 3b's records %s\n",
            cp->v_wide ? "16 B by the warp (cg)" : "8 B per thread (ca)",
            stage_short ? "in shared memory" : "in registers");
    for (int32_t m = 0; m < tab.n_morph; m++)
      if (tab.morph[m].steps > 0)
        fprintf(stderr,
                "coop: morphology %d, %d threads per cell: %d steps, %d hh steps, %d events (%d "
                "trunk rows), %d slots per cell (%d in padding steps), %zu B shared per warp, "
                "short path %s\n",
                m, tab.lanes, tab.morph[m].steps, tab.morph[m].hh_steps, tab.morph[m].n_ev,
                tab.morph[m].trunk, tab.morph[m].slots, tab.morph[m].holes,
                se_coop_warp_smem(tab.morph[m].slots, tab.lanes),
                tab.morph[m].plain ? "on" : "off");
  }
  se_coop_free(&tab);
  SE_TRY(rc);
  /* the device's limit: the attribute is per kernel, and engines of other sizes launch it too */
  SE_CUDA_CHECK(err, se_neurons_cuda_coop_setup((size_t)smem_block));
  return SE_OK;
}

void se_neurons_coop_free(se_coop_device *cp) {
  cudaFree((void *)cp->morph);
  cudaFree((void *)cp->rec);
  cudaFree((void *)cp->hh);
  cudaFree((void *)cp->ev);
  cp->morph = NULL;
  cp->rec = cp->hh = cp->ev = NULL;
}
