/* The coop step's host control: plans built (src/neurons_coop.c), uploaded, shared memory allowed
 * (docs/gpu.md, "coop"). */
#include <stdio.h>
#include <stdlib.h>

#include "neurons_coop_cuda.h"
#include "se_cuda.h"

/* Shared memory per warp of the plans tab. */
static size_t warp_smem(const se_coop_tables *tab) {
  return (size_t)tab->max_slots * (size_t)(32 / tab->lanes) * sizeof(double);
}

int se_neurons_coop_attach(const struct se_neurons *e, int device, se_neurons_device *d,
                           se_coop_device *cp, se_error *err) {
  int smem_block = 0;
  SE_CUDA_CHECK(err, cudaDeviceGetAttribute(&smem_block, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                            device));
  se_stream_tables st;
  SE_TRY(se_stream_build(e, &st, err));
  se_coop_tables tab;
  const char *cap = getenv("SE_COOP_CAP"), *env = getenv("SE_COOP_LANES");
  const int forced = env && *env ? atoi(env) : 0;
  int32_t max_rows = 0;
  for (int64_t g = 0; g < e->n_groups; g++)
    if (e->groups[g].n_comp > max_rows)
      max_rows = e->groups[g].n_comp;
  int lanes = forced ? forced : max_rows <= SE_COOP_FOUR_LANES_MAX_ROWS ? 4 : 8;
  int rc = se_coop_build(e, &st, lanes, cap ? atoi(cap) : 0, &tab, err);
  /* unless forced: more threads per cell (fewer cells per warp) while the cells do not fit */
  while (rc == SE_OK && !forced && lanes < SE_COOP_MAX_LANES &&
         warp_smem(&tab) > (size_t)smem_block) {
    se_coop_free(&tab);
    lanes *= 2;
    rc = se_coop_build(e, &st, lanes, cap ? atoi(cap) : 0, &tab, err);
  }
  if (rc == SE_OK) /* the gate finish (stream_finish) reads the stream rows' hh flags */
    rc = se_neurons_cuda_upload(&d->stream, st.rows,
                                (size_t)(e->n_morph_comp > 0 ? e->n_morph_comp : 1) *
                                    sizeof *st.rows,
                                err);
  se_stream_free(&st);
  SE_TRY(rc);
  const int G = 32 / tab.lanes;
  const size_t smem = warp_smem(&tab);
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
  if (rc == SE_OK && getenv("SE_COOP_VERBOSE"))
    for (int32_t m = 0; m < tab.n_morph; m++)
      if (tab.morph[m].steps > 0)
        fprintf(stderr,
                "coop: morphology %d, %d threads per cell: %d steps, %d hh steps, %d events (%d "
                "trunk rows), %d slots per cell (%d in padding steps), %zu B shared per warp\n",
                m, tab.lanes, tab.morph[m].steps, tab.morph[m].hh_steps, tab.morph[m].n_ev,
                tab.morph[m].trunk, tab.morph[m].slots, tab.morph[m].holes,
                (size_t)tab.morph[m].slots * G * sizeof(double));
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
