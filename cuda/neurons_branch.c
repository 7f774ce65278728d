/* The branch step of the CUDA neurons backend: routing of the cells to the branch plan or to EDD,
 * the branch order of the state and its maps (docs/gpu.md, "branch"). */
#include <stdlib.h>
#include <string.h>

#include "hines_branch.h"
#include "hines_edd.h"
#include "neurons_branch.h"
#include "neurons_gen.h"
#include "se_env.h"

struct se_neurons_branch {
  cudaStream_t stream;
  se_hines_branch_plan *plan; /* NULL when every cell goes through EDD */
  int64_t branch_cells, branch_slots, used_slots, total_slots; /* total: the EDD rows too */
  int64_t n_edd;
  se_hines_edd **edd;         /* [n_edd] */
  int64_t *edd_off;           /* [n_edd] first slot of each EDD cell in the branch order */
  double *edd_g;              /* device: coupling of every EDD row (slots - branch_slots) */
  int64_t n_engine_slots;
  int64_t *slot_of;           /* [n_engine_slots] branch-order slot of each engine slot, -1 */
};

int64_t se_neurons_edd_min_comp(const struct se_neurons *e) {
  if (e->options.gpu_edd_min_comp > 0)
    return e->options.gpu_edd_min_comp;
  const long v = se_env_long("SE_EDD_MIN_COMP", 0);
  return v > 0 ? (int64_t)v : SE_GPU_EDD_MIN_COMP;
}

int se_neurons_gpu_kernel(const struct se_neurons *e) {
  const int k = e->options.gpu_fused;
  if (k != SE_GPU_KERNEL_AUTO)
    return k;
  /* cells per morphology (the groups of a morphology hold its cells), the largest cell */
  int64_t nm = 0, groups32 = 0, max_comp = 0;
  for (int64_t g = 0; g < e->n_groups; g++) {
    if (e->groups[g].morphology + 1 > nm)
      nm = e->groups[g].morphology + 1;
    if (e->groups[g].n_comp > max_comp)
      max_comp = e->groups[g].n_comp;
  }
  int64_t *cells = calloc((size_t)nm + 1, sizeof *cells);
  if (!cells) /* the choice only affects speed: fall back to the padded kernel */
    return SE_GPU_KERNEL_FUSED2;
  for (int64_t g = 0; g < e->n_groups; g++)
    cells[e->groups[g].morphology] += e->groups[g].lanes;
  for (int64_t m = 0; m < nm; m++)
    groups32 += (cells[m] + 31) / 32;
  free(cells);
  if (max_comp >= se_neurons_edd_min_comp(e) ||
      e->n_cells < (int64_t)SE_GPU_AUTO_MIN_LANES * groups32)
    return SE_GPU_KERNEL_BRANCH;
  /* gen for populations of a few morphologies (measured faster than coop and fused2 on each of
   * the six classes and on the six together, docs/gpu.md "gen"); else coop for small and medium
   * cells (measured faster than fused2 there) */
  if (se_neurons_gen_auto(e))
    return SE_GPU_KERNEL_GEN;
  if (max_comp <= SE_GPU_COOP_MAX_COMP)
    return SE_GPU_KERNEL_COOP;
  return SE_GPU_KERNEL_FUSED2;
}

/* Stable order of the clamps by branch-order slot (the clamps of one slot keep model order). */
typedef struct clamp_key {
  int64_t slot, index;
} clamp_key;

static int clamp_cmp(const void *pa, const void *pb) {
  const clamp_key *a = pa, *b = pb;
  if (a->slot != b->slot)
    return a->slot < b->slot ? -1 : 1;
  return (a->index > b->index) - (a->index < b->index);
}

/* The clamps grouped by branch-order slot, uploaded into d. */
static int upload_clamps(const struct se_neurons *e, const se_neurons_branch *b,
                         se_neurons_device *d, se_error *err) {
  const int64_t ns = e->n_stim;
  clamp_key *key = calloc((size_t)ns + 1, sizeof *key);
  int64_t *slot = calloc((size_t)ns + 1, sizeof *slot), *ptr = calloc((size_t)ns + 2, sizeof *ptr);
  int32_t *order = calloc((size_t)ns + 1, sizeof *order);
  int rc = SE_OK;
  if (!key || !slot || !ptr || !order) {
    rc = se_error_set(err, SE_ERR_NOMEM, __FILE__, __LINE__, __func__,
                      "out of memory for %lld clamps", (long long)ns);
    goto done;
  }
  for (int64_t k = 0; k < ns; k++)
    key[k] = (clamp_key){b->slot_of[e->stim_slot[k]], k};
  qsort(key, (size_t)ns, sizeof *key, clamp_cmp);
  int64_t nq = 0;
  for (int64_t j = 0; j < ns; j++) {
    if (j == 0 || key[j].slot != key[j - 1].slot) {
      slot[nq] = key[j].slot;
      ptr[nq++] = j;
    }
    order[j] = (int32_t)key[j].index;
  }
  ptr[nq] = ns;
  d->n_stim_slots = nq;
  rc = se_neurons_cuda_upload(&d->stim_slot, slot, (size_t)nq * sizeof *slot, err);
  if (rc == SE_OK)
    rc = se_neurons_cuda_upload(&d->stim_slot_ptr, ptr, ((size_t)nq + 1) * sizeof *ptr, err);
  if (rc == SE_OK)
    rc = se_neurons_cuda_upload_clamps(e, order, d, err);
done:
  free(key);
  free(slot);
  free(ptr);
  free(order);
  return rc;
}

/* Routes the cells: the branch plan of the cells below the threshold (with its coupling) and the
 * EDD plans of the others; fills b's slot counts and EDD offsets. */
static int build_plans(const struct se_neurons *e, se_neurons_branch *b, int64_t min_comp,
                       int32_t **bcell_slot, se_error *err) {
  int64_t nb = 0, nbc = 0;
  for (int64_t c = 0; c < e->n_cells; c++) {
    const int32_t n = e->groups[e->cell_group[c]].n_comp;
    if (n >= min_comp)
      b->n_edd++;
    else {
      nb++;
      nbc += n;
    }
  }
  b->branch_cells = nb;
  SE_CALLOC(err, b->edd, b->n_edd + 1, "EDD plans");
  SE_CALLOC(err, b->edd_off, b->n_edd + 1, "EDD offsets");
  if (nb > 0) {
    int64_t *off = calloc((size_t)nb + 1, sizeof *off);
    int32_t *par = malloc((size_t)nbc * sizeof *par + 1);
    double *g = malloc((size_t)nbc * sizeof *g + 1);
    int rc = SE_OK;
    if (!off || !par || !g)
      rc = se_error_set(err, SE_ERR_NOMEM, __FILE__, __LINE__, __func__,
                        "out of memory for the branch plan of %lld compartments", (long long)nbc);
    for (int64_t c = 0, j = 0; rc == SE_OK && c < e->n_cells; c++) {
      const se_group *grp = &e->groups[e->cell_group[c]];
      if (grp->n_comp >= min_comp)
        continue;
      const se_morph_topology *t = &e->topology[grp->morphology];
      memcpy(par + off[j], t->parent, (size_t)grp->n_comp * sizeof *par);
      memcpy(g + off[j], e->g_axial + t->base, (size_t)grp->n_comp * sizeof *g);
      off[j + 1] = off[j] + grp->n_comp;
      j++;
    }
    if (rc == SE_OK)
      rc = se_hines_branch_plan_create(nb, off, par, 1, b->stream, &b->plan, err);
    if (rc == SE_OK)
      rc = se_hines_branch_set_coupling(b->plan, g, err);
    if (rc == SE_OK) {
      b->branch_slots = se_hines_branch_slots(b->plan);
      *bcell_slot = malloc((size_t)nbc * sizeof **bcell_slot + 1);
      if (!*bcell_slot)
        rc = se_error_set(err, SE_ERR_NOMEM, __FILE__, __LINE__, __func__,
                          "out of memory for the slot map");
      else
        memcpy(*bcell_slot, se_hines_branch_slot_map(b->plan), (size_t)nbc * sizeof **bcell_slot);
    }
    free(off);
    free(par);
    free(g);
    SE_TRY(rc);
  }
  /* EDD cells after the branch plan's slots, with their couplings (g_0 unused: 0) */
  int64_t edd_rows = 0, q = 0;
  for (int64_t c = 0; c < e->n_cells; c++) {
    const int32_t n = e->groups[e->cell_group[c]].n_comp;
    if (n >= min_comp) {
      b->edd_off[q++] = b->branch_slots + edd_rows;
      edd_rows += n;
    }
  }
  b->used_slots = nbc + edd_rows;
  b->total_slots = b->branch_slots + edd_rows;
  if (b->n_edd == 0)
    return SE_OK;
  double *g = calloc((size_t)edd_rows, sizeof *g);
  if (!g)
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory for %lld EDD couplings", (long long)edd_rows);
  int rc = SE_OK;
  q = 0;
  for (int64_t c = 0; rc == SE_OK && c < e->n_cells; c++) {
    const se_group *grp = &e->groups[e->cell_group[c]];
    if (grp->n_comp < min_comp)
      continue;
    const se_morph_topology *t = &e->topology[grp->morphology];
    memcpy(g + (b->edd_off[q] - b->branch_slots) + 1, e->g_axial + t->base + 1,
           (size_t)(grp->n_comp - 1) * sizeof *g);
    se_hines_edd_plan *plan = NULL;
    rc = se_hines_edd_plan_create(t->parent, grp->n_comp, NULL, &plan, err);
    if (rc == SE_OK)
      rc = se_hines_edd_create(plan, NULL, b->stream, &b->edd[q], err);
    se_hines_edd_plan_destroy(plan);
    q++;
  }
  if (rc == SE_OK)
    rc = se_neurons_cuda_upload(&b->edd_g, g, (size_t)edd_rows * sizeof *g, err);
  free(g);
  return rc;
}

/* Host arrays of the branch order, filled cell by cell. */
typedef struct branch_host {
  uint8_t *flags;
  int32_t *cell;
  double *val[11]; /* a, c, d, gna, gk, ena, ek, v, m, h, n */
} branch_host;

static void branch_host_free(branch_host *h) {
  free(h->flags);
  free(h->cell);
  for (int a = 0; a < 11; a++)
    free(h->val[a]);
}

int se_neurons_branch_create(struct se_neurons *e, cudaStream_t stream, se_neurons_device *d,
                             se_neurons_branch **out, se_error *err) {
  se_neurons_branch *b = NULL;
  SE_CALLOC(err, b, 1, "branch step");
  *out = b;
  b->stream = stream;
  b->n_engine_slots = e->n_slots;
  const int64_t min_comp = se_neurons_edd_min_comp(e);
  int32_t *bslot = NULL;
  int rc = build_plans(e, b, min_comp, &bslot, err);
  const int64_t total = b->total_slots;
  branch_host h = {0};
  if (rc == SE_OK) {
    b->slot_of = malloc((size_t)e->n_slots * sizeof *b->slot_of + 1);
    h.flags = calloc((size_t)total + 1, 1);
    h.cell = calloc((size_t)total + 1, sizeof *h.cell);
    int ok = b->slot_of && h.flags && h.cell;
    for (int a = 0; a < 11; a++)
      ok &= (h.val[a] = calloc((size_t)total + 1, sizeof(double))) != NULL;
    if (!ok)
      rc = se_error_set(err, SE_ERR_NOMEM, __FILE__, __LINE__, __func__,
                        "out of memory for %lld slots of the branch order", (long long)total);
  }
  if (rc == SE_OK) {
    for (int64_t s = 0; s < e->n_slots; s++)
      b->slot_of[s] = -1;
    const double inv_dt = 1.0 / e->dt;
    int64_t jb = 0, q = 0; /* next compartment of the branch cells, next EDD cell */
    for (int64_t c = 0; c < e->n_cells; c++) {
      const se_group *grp = &e->groups[e->cell_group[c]];
      const se_morph_topology *t = &e->topology[grp->morphology];
      const int edd = grp->n_comp >= min_comp;
      for (int32_t i = 0; i < grp->n_comp; i++) {
        const int64_t s = edd ? b->edd_off[q] + i : bslot[jb + i];
        const int64_t es = se_neurons_slot(e, c, i), k = t->base + i;
        b->slot_of[es] = s;
        h.flags[s] = (uint8_t)(SE_SLOT_USED | (t->has_hh[i] ? SE_SLOT_HH : 0u) |
                               (i == 0 ? SE_SLOT_SOMA : 0u));
        h.cell[s] = (int32_t)c;
        /* the fused2 table's constants, per slot */
        se_stream_row_constants(e, k, t->has_hh[i], inv_dt, &h.val[0][s], &h.val[1][s],
                                &h.val[2][s]);
        if (t->has_hh[i]) {
          h.val[3][s] = e->gna[k];
          h.val[4][s] = e->gk[k];
          h.val[5][s] = e->ena[k];
          h.val[6][s] = e->ek[k];
        }
        h.val[7][s] = e->v[es];
        h.val[8][s] = e->m[es];
        h.val[9][s] = e->h[es];
        h.val[10][s] = e->n[es];
      }
      if (edd)
        q++;
      else
        jb += grp->n_comp;
    }
    d->n_branch_slots = total;
    const size_t D = sizeof(double), T = (size_t)total;
    rc = se_neurons_cuda_upload(&d->slot_flags, h.flags, T, err);
    if (rc == SE_OK)
      rc = se_neurons_cuda_upload(&d->slot_cell, h.cell, T * sizeof *h.cell, err);
    const double **dst_const[] = {&d->slot_a,   &d->slot_c,  &d->slot_d,  &d->slot_gna,
                                  &d->slot_gk,  &d->slot_ena, &d->slot_ek};
    for (int a = 0; rc == SE_OK && a < 7; a++)
      rc = se_neurons_cuda_upload(dst_const[a], h.val[a], T * D, err);
    double **dst_state[] = {&d->v, &d->m, &d->h, &d->n};
    for (int a = 0; rc == SE_OK && a < 4; a++)
      rc = se_neurons_cuda_upload(dst_state[a], h.val[7 + a], T * D, err);
  }
  branch_host_free(&h);
  free(bslot);
  SE_TRY(rc);
  double **work[] = {&d->diag, &d->rhs};
  for (int a = 0; a < 2; a++) {
    SE_CUDA_CHECK(err, cudaMalloc((void **)work[a], (size_t)total * sizeof(double) + 8));
    SE_CUDA_CHECK(err, cudaMemset(*work[a], 0, (size_t)total * sizeof(double) + 8));
  }
  return upload_clamps(e, b, d, err);
}

void se_neurons_branch_destroy(se_neurons_branch *b) {
  if (!b)
    return;
  se_hines_branch_plan_destroy(b->plan);
  for (int64_t q = 0; q < b->n_edd && b->edd; q++)
    se_hines_edd_destroy(b->edd[q]);
  free(b->edd);
  free(b->edd_off);
  cudaFree(b->edd_g);
  free(b->slot_of);
  free(b);
}

int se_neurons_branch_step(se_neurons_branch *b, const se_neurons_device *d, double t,
                           se_error *err) {
  cudaError_t rc = se_neurons_cuda_branch_assemble(d, t, b->stream);
  if (rc != cudaSuccess)
    SE_FAIL(err, SE_ERR_CUDA, "branch assembly launch failed: %s (%s)", cudaGetErrorName(rc),
            cudaGetErrorString(rc));
  if (b->plan) {
    const se_hines_branch_mode mode = {.compute_padding = 1, .exact = 1, .use_graph = 1};
    SE_TRY(se_hines_branch_solve(b->plan, d->diag, d->rhs, &mode, err));
  }
  for (int64_t q = 0; q < b->n_edd; q++) {
    const int64_t o = b->edd_off[q];
    SE_TRY(se_hines_edd_solve(b->edd[q], d->diag + o, b->edd_g + (o - b->branch_slots),
                              d->rhs + o, err));
  }
  rc = se_neurons_cuda_branch_update(d, t, b->stream);
  if (rc != cudaSuccess)
    SE_FAIL(err, SE_ERR_CUDA, "branch update launch failed: %s (%s)", cudaGetErrorName(rc),
            cudaGetErrorString(rc));
  return SE_OK;
}

int64_t se_neurons_branch_slot(const se_neurons_branch *b, int64_t s) {
  return s >= 0 && s < b->n_engine_slots ? b->slot_of[s] : -1;
}

/* Copies v, m, h, n between e's host arrays (e's layout) and the device's branch order, through
 * one host buffer of the branch order: up (host to device; padding slots become 0, as at attach)
 * or down. Waits for the stream first. */
static int branch_copy_state(const se_neurons_branch *b, const se_neurons_device *d,
                             struct se_neurons *e, int up, se_error *err) {
  SE_CUDA_CHECK(err, cudaStreamSynchronize(b->stream));
  const size_t T = (size_t)d->n_branch_slots;
  double *buf = calloc(T + 1, sizeof *buf);
  if (!buf)
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory for %zu slots", T);
  double *device[] = {d->v, d->m, d->h, d->n};
  double *host[] = {e->v, e->m, e->h, e->n};
  for (int a = 0; a < 4; a++) {
    cudaError_t rc = cudaSuccess;
    if (up) {
      for (int64_t s = 0; s < b->n_engine_slots; s++)
        if (b->slot_of[s] >= 0)
          buf[b->slot_of[s]] = host[a][s];
      rc = cudaMemcpy(device[a], buf, T * sizeof *buf, cudaMemcpyHostToDevice);
    } else {
      rc = cudaMemcpy(buf, device[a], T * sizeof *buf, cudaMemcpyDeviceToHost);
      for (int64_t s = 0; rc == cudaSuccess && s < b->n_engine_slots; s++)
        if (b->slot_of[s] >= 0)
          host[a][s] = buf[b->slot_of[s]];
    }
    if (rc != cudaSuccess) {
      free(buf);
      SE_FAIL(err, SE_ERR_CUDA, "copying the state %s failed: %s (%s)",
              up ? "to the device" : "back", cudaGetErrorName(rc), cudaGetErrorString(rc));
    }
  }
  free(buf);
  if (up) /* the uploads' DMA done before the non-blocking stream's next kernel */
    SE_CUDA_CHECK(err, cudaDeviceSynchronize());
  return SE_OK;
}

int se_neurons_branch_upload_state(const se_neurons_branch *b, se_neurons_device *d,
                                   const struct se_neurons *e, se_error *err) {
  return branch_copy_state(b, d, (struct se_neurons *)e, 1, err);
}

int se_neurons_branch_download(const se_neurons_branch *b, const se_neurons_device *d,
                               struct se_neurons *e, se_error *err) {
  return branch_copy_state(b, d, e, 0, err);
}

void se_neurons_branch_get_stats(const se_neurons_branch *b, se_neurons_branch_stats *st) {
  memset(st, 0, sizeof *st);
  st->branch_cells = b->branch_cells;
  st->edd_cells = b->n_edd;
  st->slots = b->total_slots;
  if (b->plan) {
    se_hines_branch_stats bs;
    se_hines_branch_plan_stats(b->plan, &bs);
    st->levels = bs.levels;
  }
  st->padding = st->slots - b->used_slots;
}
