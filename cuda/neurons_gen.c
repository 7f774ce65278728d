/* The generated step kernel (neurons_gen.h, docs/gpu.md "gen"): the source written per
 * morphology, compiled by NVRTC, loaded as a CUDA library. */
#include "neurons_gen.h"

#include <errno.h>
#include <limits.h>
#include <nvrtc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "neurons_impl.h"
#include "neurons_stream.h"
#include "se_cuda.h"
#include "se_env.h"
#include "se_error.h"

/* The headers the kernels include, embedded at configure time (cmake/embed.cmake). hh.h's math.h
 * is the host's: NVRTC provides the math functions itself, so it is empty here. */
extern const char se_embedded_hh_h[];
extern const char se_embedded_neurons_math_h[];

/* sm_90's shared memory per multiprocessor (228 KiB): se_gen_options.sm_smem without a device */
#define SE_GEN_SM_SMEM ((size_t)233472)

se_gen_options se_gen_options_from_env(void) {
  se_gen_options o;
  o.register_rows = (int)se_env_long("SE_GEN_REG_ROWS", -1);
  o.window = (int)se_env_long("SE_GEN_WINDOW", 8);
  o.prefetch = (int)se_env_long("SE_GEN_PREFETCH", -1);
  o.prefetch_level = se_env_long("SE_GEN_PREFETCH_LEVEL", 1) == 2 ? 2 : 1;
  o.warp_cost = (int)se_env_long("SE_GEN_WARP_COST", -1);
  o.hh_chunk = (int)se_env_long("SE_GEN_HH_CHUNK", 0);
  o.hh_split = se_env_long("SE_GEN_HH_SPLIT", 1) != 0;
  o.hh_fold = se_env_long("SE_GEN_HH_FOLD", 1) != 0;
  o.scaled = se_env_long("SE_GEN_SCALED", 1) != 0;
  o.warps = (int)se_env_long("SE_GEN_WARPS", -1);
  o.warp_cut = (int)se_env_long("SE_GEN_WARP_CUT", -1);
  o.warp_min_blocks = (int)se_env_long("SE_GEN_WARP_MIN_BLOCKS", -1);
  o.warp_hh = (int)se_env_long("SE_GEN_WARP_HH", -1);
  o.warp_reg_rows = (int)se_env_long("SE_GEN_WARP_REG_ROWS", -1);
  o.streams = se_env_long("SE_GEN_STREAMS", 1) != 0;
  o.warp_levels = (int)se_env_long("SE_GEN_WARP_LEVELS", -1);
  o.contract = se_env_long("SE_GEN_FMAD", 1) != 0;
  o.literals = (int)se_env_long("SE_GEN_LITERALS", -1);
  o.sm_smem = SE_GEN_SM_SMEM;
  o.carveout = (int)se_env_long("SE_GEN_CARVEOUT", -1);
  if (o.register_rows < -1)
    o.register_rows = -1;
  if (o.window < 0)
    o.window = 0;
  if (o.prefetch < -1)
    o.prefetch = -1;
  if (o.warp_cost != -1 && (o.warp_cost < 2 || o.warp_cost > 16))
    o.warp_cost = 0;
  if (o.hh_chunk < 0)
    o.hh_chunk = 0;
  if (o.warp_min_blocks < -1 || o.warp_min_blocks > 32)
    o.warp_min_blocks = -1;
  if (o.warp_hh < -1 || o.warp_hh > 2)
    o.warp_hh = 1;
  if (o.warp_cut < -1 || o.warp_cut > 1)
    o.warp_cut = 1;
  if (o.warp_reg_rows < -1)
    o.warp_reg_rows = -1;
  if (o.warp_levels != 1 && o.warp_levels != 2)
    o.warp_levels = -1;
  if (o.literals < -1 || o.literals > 2)
    o.literals = -1;
  if (o.carveout < -1 || o.carveout > 100)
    o.carveout = -1;
  if (o.warps < -1)
    o.warps = -1;
  if (o.warps > SE_GEN_MAX_WARPS)
    o.warps = SE_GEN_MAX_WARPS;
  return o;
}

/* The morphologies with cells, ascending (malloc'ed), and their number in *count; NULL when out
 * of memory. */
static int32_t *morphology_list(const struct se_neurons *e, int *count) {
  int32_t top = 0;
  for (int64_t g = 0; g < e->n_groups; g++)
    if (e->groups[g].morphology + 1 > top)
      top = e->groups[g].morphology + 1;
  uint8_t *seen = calloc((size_t)top + 1, 1);
  int32_t *list = calloc((size_t)e->n_groups + 1, sizeof *list);
  *count = 0;
  if (seen && list) {
    for (int64_t g = 0; g < e->n_groups; g++)
      seen[e->groups[g].morphology] = 1;
    for (int32_t m = 0; m < top; m++)
      if (seen[m])
        list[(*count)++] = m;
  } else {
    free(list);
    list = NULL;
  }
  free(seen);
  return list;
}

/* morphology_list, or SE_ERR_NOMEM in err. */
static int32_t *morphology_list_or_fail(const struct se_neurons *e, int *count, se_error *err) {
  int32_t *list = morphology_list(e, count);
  if (!list)
    se_error_set(err, SE_ERR_NOMEM, __FILE__, __LINE__, __func__,
                 "out of memory for the morphologies of %lld groups", (long long)e->n_groups);
  return list;
}

int se_neurons_gen_applicable(const struct se_neurons *e, char *why, size_t n) {
  if (e->n_groups == 0 || e->n_cells == 0) {
    snprintf(why, n, "no cells");
    return 0;
  }
  for (int64_t g = 0; g < e->n_groups; g++)
    if (e->groups[g].n_comp > SE_GEN_MAX_ROWS) {
      snprintf(why, n, "a morphology of %d compartments, more than the %d the generator writes out",
               e->groups[g].n_comp, SE_GEN_MAX_ROWS);
      return 0;
    }
  int count = 0;
  int32_t *list = morphology_list(e, &count);
  if (!list) {
    snprintf(why, n, "out of memory counting the morphologies of %lld groups",
             (long long)e->n_groups);
    return 0;
  }
  free(list);
  if (count > SE_GEN_MAX_MORPHOLOGIES) {
    snprintf(why, n, "%d morphologies, more than the %d whose kernels it compiles (a few seconds "
             "each): branch suits populations of many shapes", count, SE_GEN_MAX_MORPHOLOGIES);
    return 0;
  }
  return 1;
}

int se_neurons_gen_auto(const struct se_neurons *e) {
  char why[256];
  int count = 0, ok = se_neurons_gen_applicable(e, why, sizeof why);
  int32_t *list = ok ? morphology_list(e, &count) : NULL;
  ok = list && count <= SE_GEN_AUTO_MAX_MORPHOLOGIES;
  const se_gen_options opt = se_gen_options_from_env();
  for (int k = 0; ok && k < count; k++) /* the plans' (a literal table's room follows the device) */
    ok = se_neurons_gen_smem(e, list[k], &opt, NULL) <= SE_GEN_AUTO_MAX_SMEM;
  free(list);
  return ok;
}

int se_neurons_gen_one_morphology(const struct se_neurons *e) {
  for (int64_t g = 1; g < e->n_groups; g++)
    if (e->groups[g].morphology != e->groups[0].morphology)
      return 0;
  return e->n_groups > 0;
}

/* 1 when e's cells share one morphology and lie group after group in cell order (the engine's
 * layout of such a population): a thread then finds its slots from its cell index alone; else
 * each kernel reads its morphology's group table. */
static int cell_order(const struct se_neurons *e) {
  const int64_t W = e->width;
  if (!se_neurons_gen_one_morphology(e))
    return 0;
  for (int64_t g = 0; g < e->n_groups; g++) {
    const se_group *q = &e->groups[g];
    const int64_t lanes = e->n_cells - g * W < W ? e->n_cells - g * W : W;
    if (q->base != g * W * q->n_comp || q->first_cell != g * W || q->lanes != lanes)
      return 0;
  }
  for (int64_t c = 0; c < e->n_cells; c++)
    if (e->cell_group[c] != c / W || e->cell_lane[c] != (int32_t)(c % W))
      return 0;
  return 1;
}

/* Compartments of morphology m (from a group of it). */
static int morphology_rows(const struct se_neurons *e, int32_t m) {
  for (int64_t g = 0; g < e->n_groups; g++)
    if (e->groups[g].morphology == m)
      return e->groups[g].n_comp;
  return 0;
}

/* The rows of an n-row morphology whose y stays in registers (the rows eliminated last): opt's, or
 * as measured best (docs/bench/s11_gen_rows_h200.txt) 64 of the small classes' 76 rows, 128 of
 * the medium classes' 305-319, all of the big classes' 691-695 (ptxas spills them to local
 * memory, cached in L1; y in shared memory would hold one block per multiprocessor). */
static int register_rows(int n, const se_gen_options *opt) {
  const int r = opt->register_rows >= 0 ? opt->register_rows : n <= 128 ? 64 : n <= 400 ? 128 : n;
  return r < n ? r : n;
}

/* The leaves (rows without children) of morphology m of n rows; n when out of memory. */
static int morphology_leaves(const struct se_neurons *e, int32_t m, int n) {
  const int32_t *parent = e->topology[m].parent;
  uint8_t *inner = calloc((size_t)n + 1, 1);
  if (!inner)
    return n;
  int leaves = n;
  for (int i = 1; i < n; i++)
    if (parent[i] >= 0 && !inner[parent[i]]) {
      inner[parent[i]] = 1;
      leaves--;
    }
  free(inner);
  return leaves;
}

/* Morphology m's hh rows and clamped compartments (over its cells). */
static void morphology_counts(const struct se_neurons *e, int32_t m, int *n_hh, int *n_clamp) {
  const int n = morphology_rows(e, m);
  const uint8_t *hh = e->topology[m].has_hh;
  *n_hh = 0;
  for (int i = 0; i < n; i++)
    *n_hh += hh[i] != 0;
  uint8_t *clamped = calloc((size_t)n + 1, 1);
  *n_clamp = clamped ? 0 : SE_GEN_MAX_CLAMP_ROWS + 1; /* out of memory: as many clamps */
  for (int32_t k = 0; clamped && k < e->n_stim; k++)
    if (e->groups[e->cell_group[e->stim_cell[k]]].morphology == m && !clamped[e->stim_comp[k]]) {
      clamped[e->stim_comp[k]] = 1;
      (*n_clamp)++;
    }
  free(clamped);
}

/* se_neurons_gen_split's rule on a morphology's counts */
static int split_rule(const se_gen_options *opt, int n_hh, int n_clamp) {
  return opt->hh_split && n_hh > 0 && n_clamp <= SE_GEN_MAX_CLAMP_ROWS;
}

/* Rows per leaf at or above which a morphology counts as one of long unbranched sections (the
 * synthetic "low" classes have 13-20, the "high" ones 4-5). */
#define SE_GEN_LONG_SECTIONS 8

/* 1 when a warp kernel of n rows, n_hh of them hh, computes its hh rows itself (opt's warp_hh 1
 * or 2; by default up to 128 rows, measured) rather than splitting them off. */
static int hh_in_block_rule(const se_gen_options *opt, int n, int n_hh) {
  return n_hh > 0 && (opt->warp_hh >= 1 || (opt->warp_hh == -1 && n <= 128));
}

/* The warps per block of a morphology of n rows, n_hh hh rows, n_clamp clamped rows under opt.
 * By default (docs/gpu.md "Session 14" and "Session 15", measured on the six classes): 4 up to
 * 512 rows, else 8. A warp kernel needs its clamp currents in registers and its hh rows split off
 * or computed by its warps. */
static int warps_rule(const se_gen_options *opt, int n, int n_hh, int n_clamp) {
  const int k = opt->warps >= 0 ? opt->warps : n <= 512 ? 4 : 8;
  return k >= 2 && n_clamp <= SE_GEN_MAX_CLAMP_ROWS &&
                 (n_hh == 0 || hh_in_block_rule(opt, n, n_hh) || split_rule(opt, n_hh, n_clamp))
             ? k
             : 1;
}

/* Deals the pieces of threshold T to K warps: the pieces are the largest subtrees of at most T
 * rows, the trunk the rows above them (warp 0 solves it between the barriers), the pieces go
 * largest first (ties by row) to the least loaded warp, warp 0 starting with the trunk's rows
 * when trunk_first. warp[i]: the warp of row i, -1 in the trunk; slot[i]: the shared-memory slot
 * of a piece root outside warp 0 (its y and f go to the trunk, its parent's x comes back), else
 * -1. size: the subtree sizes (with weight, the sums of the rows' weights; NULL: 1 each);
 * piece, load: scratch of n and K. Returns the number of slots; *trunk: the trunk's rows
 * (weights), *most: the most piece rows (weights) of a warp. */
static int deal_pieces(const int32_t *parent, const int *size, const int *weight, int n, int K,
                       double T, int trunk_first, int *piece, int64_t *load, int *warp,
                       int *slot, int *trunk, int *most) {
  int n_pieces = 0;
  *trunk = 0;
  for (int i = 0; i < n; i++) {
    warp[i] = size[i] > T ? -1 : 0;
    slot[i] = -1;
    if (size[i] > T)
      *trunk += weight ? weight[i] : 1;
    else if (i > 0 && size[parent[i]] > T)
      piece[n_pieces++] = i;
  }
  for (int a = 1; a < n_pieces; a++) /* largest first, ties by row (insertion sort: n <= 1024) */
    for (int b = a; b > 0 && size[piece[b]] > size[piece[b - 1]]; b--) {
      const int x = piece[b];
      piece[b] = piece[b - 1];
      piece[b - 1] = x;
    }
  for (int q = 0; q < K; q++)
    load[q] = q == 0 && trunk_first ? *trunk : 0;
  int slots = 0;
  for (int p = 0; p < n_pieces; p++) {
    int w = 0;
    for (int q = 1; q < K; q++)
      if (load[q] < load[w])
        w = q;
    load[w] += size[piece[p]];
    warp[piece[p]] = w;
    if (w > 0)
      slot[piece[p]] = slots++;
  }
  for (int i = 1; i < n; i++) /* parents first: a piece's rows take its root's warp */
    if (size[i] <= T && size[parent[i]] <= T)
      warp[i] = warp[parent[i]];
  if (trunk_first)
    load[0] -= *trunk;
  *most = 0;
  for (int q = 0; q < K; q++)
    if (load[q] > *most)
      *most = (int)load[q];
  return slots;
}

/* Rows a second level of pieces must save on a block's critical path to be taken: about what its
 * barrier and shared-memory round trip cost. */
#define SE_GEN_LEVEL_ROWS 4

/* size[i]: the rows of row i's subtree in the n-row tree parent (parent[i] < i), with weight
 * the sum of their weights (NULL: 1 each). */
static void subtree_sizes(const int32_t *parent, int n, const int *weight, int *size) {
  for (int i = 0; i < n; i++)
    size[i] = weight ? weight[i] : 1;
  for (int i = n - 1; i > 0; i--)
    size[parent[i]] += size[i];
}

/* 1 when some row of the n-row tree has a subtree of t rows (other thresholds deal as the next
 * smaller one that some row has). */
static int is_subtree_size(const int *size, int n, int t) {
  for (int i = 0; i < n; i++)
    if (size[i] == t)
      return 1;
  return 0;
}

/* The trunk of deal_pieces's warp (the rows with warp -1) as a tree of its own: row[c] the c-th
 * trunk row (parents first, as in the tree), cparent its parent's index there, csize the
 * subtree sizes within the trunk (with weight, of the weights, cweight theirs). Returns the
 * trunk's rows. */
static int trunk_tree(const int32_t *parent, int n, const int *warp, const int *weight, int *row,
                      int32_t *cparent, int *cweight, int *csize, int *index) {
  int nt = 0;
  for (int i = 0; i < n; i++)
    if (warp[i] < 0) {
      index[i] = nt;
      row[nt] = i;
      if (weight)
        cweight[nt] = weight[i];
      cparent[nt++] = i > 0 ? index[parent[i]] : -1;
    }
  subtree_sizes(cparent, nt, weight ? cweight : NULL, csize);
  return nt;
}

/* Scratch of warp_partition for n rows and K warps. */
typedef struct partition_scratch {
  int *size, *piece, *row, *csize, *cpiece, *cwarp, *cslot, *index, *cweight;
  const int *weight; /* the rows' weights (NULL: 1 each) */
  int32_t *cparent;
  int64_t *load;
  int *pool; /* the int arrays above, n + 1 each, in one allocation */
} partition_scratch;

/* With a second level: the fewest rows on a block's critical path (the most level-0 piece rows
 * of a warp, then the most level-1 rows, then the trunk left), over every pair of thresholds
 * that are subtree sizes; *T0 and *T1 the pair (ties to the smaller trunk). */
static int best_two_levels(const int32_t *parent, int n, int K, partition_scratch *s, int *warp,
                           int *slot, int *T0, int *T1) {
  int best = -1, best_trunk = 0;
  /* thresholds below a quarter of a warp's share deal too many pieces to pay */
  const int total = s->size[0];
  for (int t0 = total / (4 * K) + 1; t0 < total; t0++) {
    if (!is_subtree_size(s->size, n, t0))
      continue;
    int trunk0 = 0, most0 = 0;
    deal_pieces(parent, s->size, s->weight, n, K, t0, 0, s->piece, s->load, warp, slot, &trunk0,
                &most0);
    if (best >= 0 && most0 + 1 >= best)
      continue;
    const int nt = trunk_tree(parent, n, warp, s->weight, s->row, s->cparent, s->cweight,
                              s->csize, s->index),
              ctotal = s->csize[0];
    for (int t1 = ctotal / (4 * K) + 1; t1 < ctotal; t1++) {
      if (!is_subtree_size(s->csize, nt, t1))
        continue;
      int trunk1 = 0, most1 = 0;
      deal_pieces(s->cparent, s->csize, s->weight ? s->cweight : NULL, nt, K, t1, 0, s->cpiece,
                  s->load, s->cwarp, s->cslot, &trunk1, &most1);
      const int rows = most0 + most1 + trunk1;
      if (best < 0 || rows < best || (rows == best && trunk1 < best_trunk)) {
        best = rows;
        best_trunk = trunk1;
        *T0 = t0;
        *T1 = t1;
      }
    }
  }
  return best;
}

/* The warp-per-subtree partition of an n-row tree (parent[i] < i) over K warps (deal_pieces's
 * warp and slot): with cut 0 the threshold n / K, warp 0 starting with the trunk (session 13's
 * measured default); with cut 1 the threshold that makes the rows on a block's critical path
 * (the trunk plus the most piece rows of a warp) fewest, ties to the smaller trunk, the pieces
 * dealt without the trunk. With cut 1 and levels 2, where it saves more than SE_GEN_LEVEL_ROWS
 * rows on the critical path, the trunk is dealt in pieces again (level 1, after a barrier) and
 * only what is left stays warp 0's (best_two_levels); level[i]: 0 or 1 for piece rows, levels
 * for the trunk's. Returns the number of slots (a slot for each row whose parent another warp
 * eliminates), or -1 out of memory; *trunk: the trunk's rows, *most: the most piece rows of a
 * warp (over both levels), *levels: 1 or 2. With weight (SE_GEN_WARP_COST), every count of rows
 * is a sum of the rows' weights (the threshold n / K too). */
static int warp_partition(const int32_t *parent, const int *weight, int n, int K, int cut,
                          int max_levels, int *warp, int *slot, int *level, int *trunk, int *most,
                          int *levels) {
  partition_scratch s = {0};
  s.weight = weight;
  const int two = cut == 1 && max_levels == 2;
  /* size and piece; with two levels also the trunk tree's arrays */
  int **const arrays[] = {&s.size, &s.piece,  &s.row,   &s.csize,  &s.cpiece,
                          &s.cwarp, &s.cslot, &s.index, &s.cweight, &s.cparent};
  const int used = two ? (int)(sizeof arrays / sizeof arrays[0]) : 2;
  s.pool = calloc((size_t)used * ((size_t)n + 1), sizeof *s.pool);
  s.load = calloc((size_t)K, sizeof *s.load);
  for (int a = 0; s.pool && a < used; a++)
    *arrays[a] = s.pool + (size_t)a * ((size_t)n + 1);
  int slots = -1;
  *levels = 1;
  if (!s.pool || !s.load)
    goto done;
  subtree_sizes(parent, n, weight, s.size);
  double T = (double)s.size[0] / K;
  int best = -1;
  if (cut == 1) { /* every threshold below n: O(n^2) for n <= 1024 rows, once per attach */
    int best_trunk = 0;
    for (int t = 1; t < s.size[0]; t++) {
      if (weight && !is_subtree_size(s.size, n, t)) /* (with weights, the sizes that occur) */
        continue;
      deal_pieces(parent, s.size, weight, n, K, t, 0, s.piece, s.load, warp, slot, trunk, most);
      if (best < 0 || *trunk + *most < best || (*trunk + *most == best && *trunk < best_trunk)) {
        best = *trunk + *most;
        best_trunk = *trunk;
        T = t;
      }
    }
  }
  int T0 = 0, T1 = 0;
  if (two && n > 2) {
    const int best2 = best_two_levels(parent, n, K, &s, warp, slot, &T0, &T1);
    if (best2 >= 0 && best2 + SE_GEN_LEVEL_ROWS < best) {
      *levels = 2;
      T = T0;
    }
  }
  slots = deal_pieces(parent, s.size, weight, n, K, T, cut != 1, s.piece, s.load, warp, slot,
                      trunk, most);
  for (int i = 0; i < n; i++)
    level[i] = warp[i] < 0 ? *levels : 0;
  if (*levels == 2) { /* the trunk's pieces: level 1, a slot where the parent is another warp's */
    const int nt = trunk_tree(parent, n, warp, weight, s.row, s.cparent, s.cweight, s.csize,
                              s.index);
    int most1 = 0;
    deal_pieces(s.cparent, s.csize, weight ? s.cweight : NULL, nt, K, T1, 0, s.cpiece, s.load,
                s.cwarp, s.cslot, trunk, &most1);
    for (int c = 0; c < nt; c++)
      if (s.cwarp[c] >= 0) {
        warp[s.row[c]] = s.cwarp[c];
        level[s.row[c]] = 1;
      }
    *most += most1;
    for (int i = 1; i < n; i++) { /* every other row whose parent another warp computes */
      const int own = warp[i] > 0 ? warp[i] : 0, up = warp[parent[i]] > 0 ? warp[parent[i]] : 0;
      if (slot[i] < 0 && own != up)
        slot[i] = slots++;
    }
  }
done:
  free(s.pool);
  free(s.load);
  return slots;
}

/* The rule's prefetch distance in rows (se_gen_options). */
#define SE_GEN_PREFETCH_ROWS 8
/* The weight of a row that divides in the rule's partition above 512 rows (docs/gpu.md "Session
 * 17" and "Session 19", measured with 2 levels of pieces: on the H200 with session 17's code,
 * big-low 1.94x its byte floor with the rows counted, 1.76x, 1.74x, 1.67x, 1.72x at weights 3,
 * 4, 5, 6, big-high 1.48-1.51x throughout; with session 19's scaled rows and FMA, whose passive
 * rows cost less against a dividing one, on an H100: big-low 1.42x, 1.35x, 1.35x, 1.30x at 3, 4,
 * 5, 6, and at 6 its two-level kernel spills 8 B per thread instead of 112 B) */
#define SE_GEN_COST_ROWS 6

/* How morphology m's kernels are written under opt. */
typedef struct gen_plan {
  int n, n_hh, n_clamp;
  int split;  /* the hh rows in a kernel of their own */
  int hh_in_block; /* with warps and warp_hh: the hh rows computed by the kernel's warps first */
  int hh_global;   /* with hh_in_block and warp_hh 2: their b and dg through rhs and diag */
  int warps;  /* warps per block: 1 (a thread per cell), else a warp per subtree */
  int min_blocks; /* with warps: __launch_bounds__'s blocks per multiprocessor (0: none) */
  int cut;        /* with warps: warp_partition's cut */
  int slots;  /* with warps: the piece roots outside warp 0 (3 shared doubles each per cell) */
  int reg_rows; /* with warps: the last rows of each warp whose y stays in registers, -1 all */
  int smem_rows; /* with warps: the rows whose y lives in shared memory (1 double per cell) */
  int trunk, most; /* with warps: the trunk's rows, the most piece rows of a warp */
  int levels; /* with warps: the levels of pieces taken (1, or 2 unless opt's warp_levels is 1) */
  int prefetch; /* with warps: rows ahead that each warp prefetches the loads of (0: none) */
  int cost; /* with warps: the weight of a row with an hh row in its subtree (0: rows) */
  int *warp, *piece, *level; /* with warps: warp_partition's warp, slot and level of each row
                                (else NULL) */
} gen_plan;

/* The counts of morphology m and the choices made from them (no partition). */
static void plan_rules(const struct se_neurons *e, int32_t m, const se_gen_options *opt,
                       gen_plan *p) {
  p->n = morphology_rows(e, m);
  morphology_counts(e, m, &p->n_hh, &p->n_clamp);
  p->warps = warps_rule(opt, p->n, p->n_hh, p->n_clamp);
  /* y in registers for the last rows of each warp (docs/gpu.md "Session 15", measured): all up
   * to 128 rows; 32 for long sections up to 512 rows (4 blocks per multiprocessor at 128
   * registers); else 48 (no spills for more than 512 rows) */
  const int long_sections = p->n >= SE_GEN_LONG_SECTIONS * morphology_leaves(e, m, p->n);
  const int medium_long = p->n > 128 && p->n <= 512 && long_sections;
  p->reg_rows = p->warps < 2              ? -1
                : opt->warp_reg_rows >= 0 ? opt->warp_reg_rows
                : p->n <= 128             ? -1
                : medium_long             ? 32
                                          : 48;
  /* prefetches 8 rows ahead for the long sections of 129 to 512 rows (docs/gpu.md "Session
   * 16", measured: medium-low 1.68x -> 1.59x its byte floor; slower for medium-high and big-low) */
  p->prefetch = p->warps < 2 ? 0 : opt->prefetch >= 0 ? opt->prefetch
                                 : medium_long        ? SE_GEN_PREFETCH_ROWS
                                                      : 0;
  /* above 512 rows the partition weighs a row that divides as SE_GEN_COST_ROWS rows */
  p->cost = p->warps < 2 ? 0 : opt->warp_cost >= 0 ? opt->warp_cost
                             : p->n > 512           ? SE_GEN_COST_ROWS
                                                    : 0;
  p->hh_in_block = p->warps > 1 && hh_in_block_rule(opt, p->n, p->n_hh);
  p->hh_global = p->hh_in_block && opt->warp_hh == 2;
  p->min_blocks = opt->warp_min_blocks >= 0        ? opt->warp_min_blocks
                  : p->warps > 4 && p->warps <= 8 ? 2
                                                  : 0;
  p->cut = opt->warp_cut >= 0 ? opt->warp_cut : p->n > 128;
  p->split = split_rule(opt, p->n_hh, p->n_clamp) && !p->hh_in_block;
  p->slots = p->trunk = p->most = p->smem_rows = 0;
  p->levels = 1;
  p->warp = p->piece = p->level = NULL;
}

/* The rows that each warp of p's partition eliminates (warp 0's with the trunk) in
 * count[0 .. p->warps). */
static void warp_rows(const gen_plan *p, int *count) {
  for (int w = 0; w < p->warps; w++)
    count[w] = 0;
  for (int i = 0; i < p->n; i++)
    count[p->warp[i] >= 0 ? p->warp[i] : 0]++;
}

static void plan_free(gen_plan *p) {
  free(p->warp);
  free(p->piece);
  free(p->level);
  p->warp = p->piece = p->level = NULL;
}

/* The hh rows whose b and dg a warp kernel keeps in shared memory (hh_in_block without
 * hh_global), else 0. */
static int hh_shared_rows(const gen_plan *p) {
  return p->hh_in_block && !p->hh_global ? p->n_hh : 0;
}

/* se_neurons_gen_smem from a plan: with warps the piece roots' y, f and parent's x (and b and dg
 * of each hh row computed in the block); else the y of the rows not in registers, and unless
 * split, b and dg of each hh row (of a chunk). */
static size_t plan_smem(const gen_plan *p, const se_gen_options *opt) {
  if (p->warps > 1)
    return (size_t)(3 * p->slots + 2 * hh_shared_rows(p) + p->smem_rows) * 32 * sizeof(double);
  const int held = p->split                                        ? 0
                   : opt->hh_chunk > 0 && opt->hh_chunk < p->n_hh ? opt->hh_chunk
                                                                  : p->n_hh;
  return (size_t)(p->n - register_rows(p->n, opt) + 2 * held) * 32 * sizeof(double);
}

/* The plan of morphology m, with warps its partition (plan_free frees it); SE_ERR_NOMEM (err may
 * be NULL) when out of memory. */
static int morphology_plan(const struct se_neurons *e, int32_t m, const se_gen_options *opt,
                           gen_plan *p, se_error *err) {
  plan_rules(e, m, opt, p);
  if (p->warps == 1)
    return SE_OK;
  p->warp = calloc((size_t)p->n, sizeof *p->warp);
  p->piece = calloc((size_t)p->n, sizeof *p->piece);
  p->level = calloc((size_t)p->n, sizeof *p->level);
  /* with a cost, a row with an hh row in its subtree (a division per step) weighs more */
  int *weight = p->cost ? calloc((size_t)p->n, sizeof *weight) : NULL;
  uint8_t *divides = p->cost ? calloc((size_t)p->n, 1) : NULL;
  if (weight && divides) {
    se_stream_subtree_hh(e->topology[m].parent, e->topology[m].has_hh, p->n, divides);
    for (int i = 0; i < p->n; i++)
      weight[i] = divides[i] ? p->cost : 1;
  }
  free(divides);
  p->slots = p->warp && p->piece && p->level && (weight || !p->cost)
                 ? warp_partition(e->topology[m].parent, weight, p->n, p->warps, p->cut,
                                  opt->warp_levels == 1 ? 1 : 2, p->warp, p->piece, p->level,
                                  &p->trunk, &p->most, &p->levels)
                 : -1;
  free(weight);
  if (p->slots >= 0 && p->reg_rows >= 0) {
    /* each warp's rows beyond reg_rows keep y in shared memory; the rule's reg_rows grows by 16
     * until the kernel fits in SE_GEN_AUTO_MAX_SMEM (at worst every y in registers) */
    int *count = calloc((size_t)p->warps, sizeof *count);
    if (count)
      warp_rows(p, count);
    else
      p->slots = -1;
    while (count) {
      p->smem_rows = 0;
      for (int w = 0; w < p->warps; w++)
        p->smem_rows += count[w] > p->reg_rows ? count[w] - p->reg_rows : 0;
      if (opt->warp_reg_rows >= 0 || p->smem_rows == 0 ||
          plan_smem(p, opt) <= SE_GEN_AUTO_MAX_SMEM)
        break;
      p->reg_rows += 16;
    }
    free(count);
  }
  if (p->slots >= 0)
    return SE_OK;
  plan_free(p);
  return se_error_set(err, SE_ERR_NOMEM, __FILE__, __LINE__, __func__,
                      "out of memory partitioning a morphology of %d rows", p->n);
}

/* The plans of morphologies list[0 .. count) (*plans malloc'ed; plans_free frees them). */
static int morphology_plans(const struct se_neurons *e, const int32_t *list, int count,
                            const se_gen_options *opt, gen_plan **plans, se_error *err) {
  *plans = calloc((size_t)count + 1, sizeof **plans);
  if (!*plans)
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory for the plans of %d morphologies", count);
  int rc = SE_OK;
  for (int k = 0; k < count && rc == SE_OK; k++)
    rc = morphology_plan(e, list[k], opt, &(*plans)[k], err);
  return rc;
}

static void plans_free(gen_plan *plans, int count) {
  for (int k = 0; plans && k < count; k++)
    plan_free(&plans[k]);
  free(plans);
}

int se_neurons_gen_split(const struct se_neurons *e, int32_t m, const se_gen_options *opt) {
  gen_plan p;
  plan_rules(e, m, opt, &p);
  return p.split;
}

int se_neurons_gen_warps(const struct se_neurons *e, int32_t m, const se_gen_options *opt) {
  gen_plan p;
  plan_rules(e, m, opt, &p);
  return p.warps;
}

/* The rule's literal tables: in shared memory for the warps' kernels above this many rows
 * (docs/gpu.md "Session 20", measured on an H100 in one call, x the byte floor: big-low 1.30 ->
 * 1.20, big-high 1.18 -> 1.08, medium-low 1.23 -> 1.22, medium-high 1.07 -> 1.10; from global
 * memory every class slower, big-low 1.62) */
#define SE_GEN_LITERAL_ROWS 512

/* How the plan's kernel takes its literals (se_gen_options.literals): 0 as immediates, 1 from a
 * table in shared memory, 2 from a table in global memory. Tables only in the warps' kernels of
 * more than 128 rows (the long ones; up to 128 rows the hh work sets the time); by default (-1)
 * in shared memory above SE_GEN_LITERAL_ROWS rows. */
static int literal_mode(const gen_plan *plan, const se_gen_options *opt) {
  if (plan->warps < 2 || plan->n <= 128)
    return 0;
  return opt->literals >= 0 ? opt->literals : plan->n > SE_GEN_LITERAL_ROWS;
}

/* The blocks per multiprocessor a kernel with a literal table in shared memory is built for:
 * the plan's min_blocks, else as many as its shared memory allows within opt's sm_smem
 * (1 KiB of it reserved per block) and its threads at 128 registers each allow (the register
 * file's 64 Ki). */
static int literal_blocks(const gen_plan *plan, const se_gen_options *opt) {
  if (plan->min_blocks > 0)
    return plan->min_blocks;
  const size_t by_smem = opt->sm_smem / (plan_smem(plan, opt) + 1024),
               by_registers = 65536 / (128 * 32 * (size_t)plan->warps);
  const size_t blocks = by_smem < by_registers ? by_smem : by_registers;
  return blocks > 0 ? (int)blocks : 1;
}

/* The entries of the plan's literal table in shared memory (se_gen_options.literals 1; else 0):
 * what the kernel's literal_blocks blocks per multiprocessor leave of opt's sm_smem beside the
 * plan's shared memory. Reserved whole, whatever the table uses: the blocks stay the same. */
static int literal_entries(const gen_plan *plan, const se_gen_options *opt) {
  if (literal_mode(plan, opt) != 1)
    return 0;
  const size_t smem = plan_smem(plan, opt) + 1024,
               share = opt->sm_smem / (size_t)literal_blocks(plan, opt);
  return share > smem ? (int)((share - smem) / sizeof(double)) : 0;
}

/* The kernel's shared memory per block: the plan's, then its literal table's entries. */
static size_t kernel_smem(const gen_plan *plan, const se_gen_options *opt) {
  return plan_smem(plan, opt) + (size_t)literal_entries(plan, opt) * sizeof(double);
}

size_t se_neurons_gen_smem(const struct se_neurons *e, int32_t m, const se_gen_options *opt,
                           size_t *table) {
  gen_plan p;
  if (morphology_plan(e, m, opt, &p, NULL) != SE_OK)
    return SIZE_MAX;
  const size_t smem = plan_smem(&p, opt);
  if (table)
    *table = kernel_smem(&p, opt) - smem;
  plan_free(&p);
  return smem;
}

/* ---- the source ---------------------------------------------------------------------------- */

/* The distinct literal doubles of a kernel in the order of their first use (literals in shared
 * memory, se_gen_options.literals) */
typedef struct literal_pool {
  double *v;
  int n, cap, limit; /* at most limit entries; the literals beyond stay immediates */
} literal_pool;

/* A source being written; with pool, put_literal writes loads from the pool's table. */
typedef struct text {
  char *s;
  size_t len, cap;
  int failed;
  literal_pool *pool;
} text;

static void put(text *t, const char *fmt, ...) {
  if (t->failed)
    return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    const int k = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
    va_end(ap);
    if (k < 0) {
      t->failed = 1;
      return;
    }
    if (t->s && t->len + (size_t)k < t->cap) {
      t->len += (size_t)k;
      return;
    }
    size_t cap = t->cap ? 2 * t->cap : 65536;
    while (cap <= t->len + (size_t)k)
      cap *= 2;
    char *s = realloc(t->s, cap);
    if (!s) {
      t->failed = 1;
      return;
    }
    t->s = s;
    t->cap = cap;
  }
}

/* Inserts the string u into t at byte pos (pos <= t->len). */
static void insert(text *t, size_t pos, const char *u) {
  const size_t k = strlen(u), end = t->len;
  put(t, "%s", u); /* grows t by k bytes */
  if (t->failed)
    return;
  memmove(t->s + pos + k, t->s + pos, end - pos);
  memcpy(t->s + pos, u, k);
}

/* The entry of x in pool p (equal bit patterns share one), else -1. */
static int pool_find(const literal_pool *p, double x) {
  for (int k = 0; k < p->n; k++)
    if (memcmp(&p->v[k], &x, sizeof x) == 0)
      return k;
  return -1;
}

/* Appends x to pool p; 0 when out of memory. */
static int pool_add(literal_pool *p, double x) {
  if (p->n == p->cap) {
    const int cap = p->cap ? 2 * p->cap : 1024;
    double *v = realloc(p->v, (size_t)cap * sizeof *v);
    if (!v)
      return 0;
    p->v = v;
    p->cap = cap;
  }
  p->v[p->n++] = x;
  return 1;
}

/* Writes the literal double x: as an immediate "(x)", or with t->pool as the load "sl[k]" of its
 * entry k in the pool's table (added when new and the pool below its limit, else an
 * immediate). */
static void put_literal(text *t, double x) {
  literal_pool *p = t->pool;
  int k = p ? pool_find(p, x) : -1;
  if (p && k < 0 && p->n < p->limit) {
    k = p->n;
    if (!pool_add(p, x))
      t->failed = 1;
  }
  if (k < 0)
    put(t, "(%.17g)", x);
  else
    put(t, "sl[%d]", k);
}

/* The rows in a list schedule with `lanes` virtual lanes (every row after its children): each
 * round every lane takes the parent of the row it took last once that parent is ready, else the
 * deepest ready row (the highest index among equals). Independent branches interleave, so that
 * a row's dependent chain overlaps other rows' work. */
static int list_order(const int32_t *parent, int n, int lanes, int *order, se_error *err) {
  int *depth = NULL, *left = NULL, *ready = NULL, *prev = NULL, *took = NULL;
  int rc = SE_OK;
  depth = calloc((size_t)n, sizeof *depth);
  left = calloc((size_t)n, sizeof *left);
  ready = calloc((size_t)n, sizeof *ready);
  prev = calloc((size_t)lanes, sizeof *prev);
  took = calloc((size_t)lanes, sizeof *took);
  if (!depth || !left || !ready || !prev || !took) {
    rc = se_error_set(err, SE_ERR_NOMEM, __FILE__, __LINE__, __func__,
                      "out of memory for the schedule of %d rows", n);
    goto done;
  }
  for (int v = 1; v < n; v++) {
    depth[v] = depth[parent[v]] + 1;
    left[parent[v]]++;
  }
  for (int v = 0; v < n; v++)
    ready[v] = left[v] == 0;
  for (int j = 0; j < lanes; j++)
    prev[j] = -1;
  int done_rows = 0;
  while (done_rows < n) {
    for (int j = 0; j < lanes; j++) {
      took[j] = -1;
      const int u = prev[j];
      if (u > 0 && ready[parent[u]]) {
        int taken = 0;
        for (int q = 0; q < j; q++)
          taken |= took[q] == parent[u];
        if (!taken)
          took[j] = parent[u];
      }
    }
    for (int j = 0; j < lanes; j++) {
      if (took[j] >= 0)
        continue;
      for (int v = n - 1; v >= 0; v--) {
        if (!ready[v])
          continue;
        int taken = 0;
        for (int q = 0; q < lanes; q++)
          taken |= took[q] == v;
        if (!taken && (took[j] < 0 || depth[v] > depth[took[j]]))
          took[j] = v;
      }
    }
    for (int j = 0; j < lanes; j++) {
      const int v = took[j];
      if (v < 0)
        continue;
      order[done_rows++] = v;
      prev[j] = v;
      ready[v] = 0;
      if (v > 0 && --left[parent[v]] == 0)
        ready[parent[v]] = 1;
    }
  }
done:
  free(depth);
  free(left);
  free(ready);
  free(prev);
  free(took);
  return rc;
}

/* Where a row's y (later x) lives: a register (reg) or shared-memory slot `slot`; with warps, the
 * warp whose code computes it (warp), its level (that of its piece; the trunk's is the plan's
 * levels) and, for a row whose parent another warp computes, its slot among the pieces' (piece,
 * else -1). */
typedef struct y_home {
  int reg, slot, warp, level, piece;
} y_home;

static void put_y(text *t, const y_home *home, int i) {
  if (home[i].reg)
    put(t, "y%d", i);
  else
    put(t, "sy[%d]", home[i].slot * 32);
}

/* y (f: f) of row c as its parent's code sees it: from shared memory when another warp computed
 * it, else its own name. */
static void put_kid(text *t, const y_home *home, int c, int parent, int f) {
  if (home[c].warp != home[parent].warp)
    put(t, "%s[%d]", f ? "sf" : "sr", home[c].piece * 32);
  else if (f)
    put(t, "f%d", c);
  else
    put_y(t, home, c);
}

/* The lanes of the list schedule (docs/gpu.md "Session 9": 4 measured best). */
#define GEN_SCHEDULE_LANES 4

/* Writes the loop over hh rows j = from, from + step, ... < end of morphology m's table (from:
 * an expression): each row through se_gen_hh (its gates stored where `store` holds), its b and
 * dg into shared-memory slots base + 2 j and the next of buf. */
static void put_hh_loop(text *t, int m, const char *from, int end, int step, const char *store,
                        const char *buf, int base) {
  put(t,
      "  for (int j = %s; j < %d; j += %d) { // hh rows: currents, deferred gate update\n"
      "    double b, dg;\n"
      "    se_gen_hh(se_gen_hh_%d[j], V, gm, gh, gn, s0, update, %s, &b, &dg);\n"
      "    %s[(%d + 2 * j) * 32] = b;\n    %s[(%d + 2 * j + 1) * 32] = dg;\n  }\n",
      from, end, step, m, store, buf, base, buf, base);
}

/* Writes hh row j's currents (j: an expression) for the cell whose v, rhs and diag slots start at
 * V, R and D, each line indented by `in`: the deferred gate update stored where `store` holds, b
 * (with fold its a v + c + b) and dg into the row's rhs and diag slots, each store prefixed by
 * `guard` ("" or a condition). */
static void put_hh_currents(text *t, int m, const char *in, const char *j, const char *store,
                            const char *guard, int fold) {
  put(t,
      "%sconst se_gen_hh_row r = se_gen_hh_%d[%s];\n%sdouble b, dg;\n"
      "%sse_gen_hh(r, V, gm, gh, gn, s0, update, %s, &b, &dg);\n",
      in, m, j, in, in, store);
  if (fold)
    put(t,
        "%sconst se_gen_fold f = se_gen_fold_%d[%s];\n"
        "%s%sR[r.off] = f.on ? f.a * V[r.off] + f.c + b : b;\n",
        in, m, j, in, guard);
  else
    put(t, "%s%sR[r.off] = b;\n", in, guard);
  put(t, "%s%sD[r.off] = dg;\n", in, guard);
}

/* Writes row i's assembly and elimination (fused2's se_stream_eliminate): its b from v, the
 * clamps' current ic and the hh current hb (either "" when none), or with folded hb alone (the
 * currents kernel wrote a v + c + the hh current there: hh_fold), and its children's y;
 * y = b / d' and, unless DCONST, f = g / d' (d' with the hh conductance hd and the children's
 * pushes). With scaled, a DCONST row without clamps takes 1 / d' into its constants instead,
 * y = (a / d') v + c / d' + sum (g_c / d') y_c: one multiplication and one literal fewer. */
static void put_backward_row(text *t, const se_stream_row *row, int i, int64_t W,
                             const int *first, const int *kid, const y_home *home, const char *hb,
                             const char *hd, const char *ic, int folded, int scaled) {
  const se_stream_row *r = &row[i];
  /* s: the factor of the row's constants (1 / d' when scaled, the DCONST d slot's value; a
   * DCONST row has no hh row in its subtree, so neither hb nor a fold) */
  const int scale = scaled && (r->meta & SE_STREAM_DCONST) && !ic[0];
  const double s = scale ? r->d : 1.0;
  if (folded) {
    put(t, "  double b%d = %s;\n", i, hb);
  } else {
    put(t, "  const double v%d = V[%lld];\n  double b%d = ", i, (long long)i * W, i);
    put_literal(t, r->a * s);
    put(t, " * v%d + ", i);
    put_literal(t, r->c * s);
    if (ic[0] && hb[0])
      put(t, " + (%s + %s)", ic, hb);
    else if (hb[0] || ic[0])
      put(t, " + %s", hb[0] ? hb : ic);
    put(t, ";\n");
  }
  if (first[i + 1] > first[i]) {
    put(t, "  b%d = b%d + (", i, i);
    for (int q = first[i]; q < first[i + 1]; q++) {
      put(t, "%s", q > first[i] ? " + " : "");
      put_literal(t, row[kid[q]].g * s);
      put(t, " * ");
      put_kid(t, home, kid[q], i, 0);
    }
    put(t, ");\n");
  }
  if (r->meta & SE_STREAM_DCONST) {
    put(t, "  %s", home[i].reg ? "double " : "");
    put_y(t, home, i);
    if (scale) {
      put(t, " = b%d;\n", i);
    } else {
      put(t, " = b%d * ", i);
      put_literal(t, r->d);
      put(t, ";\n");
    }
    return;
  }
  /* fused2's order: inv = 1 / (d0 - (pushes)), y = b inv, f = g inv */
  put(t, "  const double r%d = 1.0 / ((", i);
  put_literal(t, r->d);
  if (hd[0])
    put(t, " + %s", hd);
  put(t, ")");
  int none = 1;
  for (int q = first[i]; q < first[i + 1]; q++) {
    const int c = kid[q];
    if (row[c].meta & SE_STREAM_DCONST)
      continue;
    put(t, "%s", none ? " - (" : " + ");
    put_literal(t, row[c].g);
    put(t, " * ");
    put_kid(t, home, c, i, 1);
    none = 0;
  }
  put(t, "%s);\n  %s", none ? "" : ")", home[i].reg ? "double " : "");
  put_y(t, home, i);
  put(t, " = b%d * r%d;\n", i, i);
  if (i > 0) {
    put(t, "  const double f%d = ", i);
    put_literal(t, r->g);
    put(t, " * r%d;\n", i);
  }
}

/* Writes row i's forward substitution, x = y + f x_parent (x_parent: parent_x, else the parent's
 * y), and x's store to v (only by live threads when guarded). */
static void put_forward_row(text *t, const se_stream_row *row, int i, int64_t W,
                            const y_home *home, const char *parent_x, int guarded) {
  if (i > 0) {
    put(t, "  ");
    put_y(t, home, i);
    put(t, " = ");
    put_y(t, home, i);
    if (row[i].meta & SE_STREAM_DCONST) {
      put(t, " + ");
      put_literal(t, row[i].f);
      put(t, " * ");
    } else {
      put(t, " + f%d * ", i);
    }
    if (parent_x)
      put(t, "%s", parent_x);
    else
      put_y(t, home, row[i].parent);
    put(t, ";\n");
  }
  put(t, "  %sV[%lld] = ", guarded ? "if (live) " : "", (long long)i * W);
  put_y(t, home, i);
  put(t, ";\n");
}

/* Writes the root's spike check (se_root_spike_check's): v0 before, y0 after the step; only live
 * threads report when guarded. */
static void put_spike_check(text *t, const struct se_neurons *e, const y_home *home, int in_order,
                            int guarded) {
  const char *live = guarded ? "live && " : "";
  put(t, "  const double after = ");
  put_y(t, home, 0);
  put(t, ";\n  const bool bad = %s!isfinite(after), fired = %sv0 < %.17g && %.17g <= after;\n",
      live, live, e->spike_threshold, e->spike_threshold);
  if (!in_order) /* the local cell, read only where needed */
    put(t, "  const long long cell = bad || fired ? lane_cell[th] : 0;\n");
  put(t,
      "  if (bad) atomicCAS(bad_cell, 0ULL, (unsigned long long)(cell + 1));\n"
      "  if (fired) {\n"
      "    const unsigned long long k = atomicAdd(spike_count, 1ULL);\n"
      "    if (k < (unsigned long long)spike_capacity) {\n"
      "      spike_time[k] = se_spike_time(t_now, %.17g, %.17g, v0, after);\n"
      "      spike_cell[k] = cell;\n    }\n  }\n",
      e->dt, e->spike_threshold);
}

/* 1 when the currents kernel folds row i's a v + c into its hh current (hh_fold; fold: the
 * option on and the hh rows split off): every split-off hh row but the root (its v is the spike
 * check's) and the clamped rows (their clamp current joins first). */
static int row_folds(int fold, const int *hh_index, const int *clamp_index, int i) {
  return fold && i > 0 && hh_index[i] >= 0 && clamp_index[i] < 0;
}

/* Writes the prefetch of row i's loads into the cache (SE_GEN_PREFETCH): its v unless folded,
 * and with hh its b and dg slots in rhs and diag. */
static void put_prefetch(text *t, int i, int64_t W, int hh, int folded) {
  if (!folded)
    put(t, "  SE_GEN_PREFETCH(V + %lld);\n", (long long)i * W);
  if (hh)
    put(t, "  SE_GEN_PREFETCH(R + %lld);\n  SE_GEN_PREFETCH(D + %lld);\n", (long long)i * W,
        (long long)i * W);
}

/* Writes the warps' code of a warp-per-subtree kernel (docs/gpu.md "gen"): warp w eliminates its
 * pieces (y in its registers; each warp's code is a branch of its own, so their registers do
 * not add up) and leaves each piece root's y and f in shared memory; barrier 1; warp 0
 * eliminates and substitutes through the trunk and leaves each piece root's parent's x; barrier
 * 2; each warp substitutes forward through its pieces. */
static void put_warps(text *t, const struct se_neurons *e, const se_stream_row *row, int n,
                      int warps, int levels, const int *order, const int *first, const int *kid,
                      const y_home *home, const int *clamp_index, const int *hh_index,
                      int hh_in_block, int fold, int in_order, const se_gen_options *opt,
                      int prefetch, int *seq) {
  const int64_t W = e->width;
  for (int w = 0; w < warps; w++) {
    put(t, "  %sif (w == %d) {\n", w ? "} else " : "", w);
    /* the warp's rows in the order it eliminates them (seq), for the prefetches */
    int count = 0;
    for (int pass = 0; prefetch > 0 && pass <= levels && (pass < levels || w == 0); pass++)
      for (int k = 0; k < n; k++)
        if (home[order[k]].warp == w && home[order[k]].level == pass)
          seq[count++] = order[k];
    int rows = 0;
    /* pass p < levels: the warp's pieces of level p; pass levels: the trunk (warp 0) */
    for (int pass = 0; pass <= levels; pass++) {
      if (pass == levels && w > 0)
        break;
      if (pass > 0)
        put(t, "  SE_GEN_BAR(1, %d);\n", 32 * warps);
      for (int k = 0; k < n; k++) {
        const int i = order[k];
        if (home[i].warp != w || home[i].level != pass)
          continue;
        if (opt->window > 0 && rows > 0 && rows % opt->window == 0)
          put(t, "  asm volatile(\"\" ::: \"memory\");\n");
        /* the loads of the row prefetch rows ahead (from the first row, those up to it) */
        for (int q = rows ? rows + prefetch : 1; q <= rows + prefetch && q < count; q++)
          put_prefetch(t, seq[q], W, hh_index[seq[q]] >= 0 && !hh_in_block,
                       row_folds(fold, hh_index, clamp_index, seq[q]));
        rows++;
        char hb[48] = "", hd[48] = "", ic[48] = "";
        if (hh_index[i] >= 0 && hh_in_block) { /* from the block's hh phase */
          snprintf(hb, sizeof hb, "sh[%d]", 2 * hh_index[i] * 32);
          snprintf(hd, sizeof hd, "sh[%d]", (2 * hh_index[i] + 1) * 32);
        } else if (hh_index[i] >= 0) { /* split off: b and dg in the rhs and diag slots */
          snprintf(hb, sizeof hb, "R[%lld]", (long long)i * W);
          snprintf(hd, sizeof hd, "D[%lld]", (long long)i * W);
        }
        if (clamp_index[i] >= 0)
          snprintf(ic, sizeof ic, "ic%d", clamp_index[i]);
        put_backward_row(t, row, i, W, first, kid, home, hb, hd, ic,
                         row_folds(fold, hh_index, clamp_index, i), opt->scaled);
        if (home[i].piece >= 0) {
          put(t, "  sr[%d] = ", home[i].piece * 32);
          put_y(t, home, i);
          put(t, ";\n");
          if (!(row[i].meta & SE_STREAM_DCONST))
            put(t, "  sf[%d] = f%d;\n", home[i].piece * 32, i);
        }
      }
    }
    if (w > 0)
      put(t, "  SE_GEN_BAR(1, %d);\n", 32 * warps);
    /* the forward substitution, the trunk (warp 0) first, then the levels down; after each, the
     * x of the rows whose children in slots wait for it, a barrier between */
    for (int pass = levels; pass >= 0; pass--) {
      if (pass == levels && w > 0)
        continue;
      if (pass < levels)
        put(t, "  SE_GEN_BAR(2, %d);\n", 32 * warps);
      for (int k = n - 1; k >= 0; k--) {
        const int i = order[k];
        if (home[i].warp != w || home[i].level != pass)
          continue;
        char px[32] = "";
        if (home[i].piece >= 0)
          snprintf(px, sizeof px, "sx[%d]", home[i].piece * 32);
        put_forward_row(t, row, i, W, home, px[0] ? px : NULL, 1);
      }
      for (int i = 1; pass > 0 && i < n; i++) {
        const int p = row[i].parent;
        if (home[i].piece >= 0 && home[p].warp == w && home[p].level == pass) {
          put(t, "  sx[%d] = ", home[i].piece * 32);
          put_y(t, home, p);
          put(t, ";\n");
        }
      }
    }
    if (w == 0)
      put_spike_check(t, e, home, in_order, 1);
  }
  put(t, "  }\n");
}

/* Inserts morphology m's literal table (pool) into t: its values as se_gen_lit_<m> at byte
 * kernel_at (before the step kernel), and at byte copy_at (the step kernel's start, copy_at >=
 * kernel_at) sl, the table the loads read: with global, se_gen_lit_<m> itself (not const, so that
 * the compiler cannot fold its entries back into immediates); else the block's copy of it in
 * shared memory at byte offset smem (after the plan's shared memory), then a barrier of the
 * block's 32 * warps threads. */
static void put_literal_table(text *t, const literal_pool *pool, int m, size_t kernel_at,
                              size_t copy_at, size_t smem, int warps, int global) {
  text u = {0};
  if (global)
    put(&u, "  const double *__restrict__ const sl = se_gen_lit_%d;\n", m);
  else
    put(&u, "  double *const sl = se_gen_smem + %zu;\n"
            "  for (int k = threadIdx.x; k < %d; k += %d)\n"
            "    sl[k] = se_gen_lit_%d[k];\n"
            "  SE_GEN_BAR(4, %d);\n",
        smem / sizeof(double), pool->n, 32 * warps, m, 32 * warps);
  if (u.failed)
    t->failed = 1;
  else
    insert(t, copy_at, u.s);
  u.len = 0;
  put(&u, "// morphology %d's %d distinct literals%s\n__device__ %sdouble se_gen_lit_%d[%d] = {", m,
      pool->n, global ? ", read from global memory" : ", copied by each block into shared memory",
      global ? "" : "const ", m, pool->n);
  for (int k = 0; k < pool->n; k++)
    put(&u, "%s%.17g", k == 0 ? "\n  " : k % 4 ? ", " : ",\n  ", pool->v[k]);
  put(&u, "\n};\n");
  if (u.failed)
    t->failed = 1;
  else
    insert(t, kernel_at, u.s);
  free(u.s);
}

/* Writes into *out the kernel se_gen_step_<m> of morphology m (and with split its currents
 * kernel): in cell order (in_order) the thread of cell c finds its slots from c, else from its
 * morphology's group table. */
static int put_kernel(text *out, const struct se_neurons *e, const se_stream_tables *tab,
                      int32_t m, const gen_plan *plan, int in_order, const se_gen_options *opt,
                      se_error *err) {
  const int n = plan->n;
  const int64_t W = e->width, mb = e->topology[m].base;
  const se_stream_row *row = tab->rows + mb;
  int *order = calloc((size_t)n, sizeof *order), *hh_index = calloc((size_t)n, sizeof *hh_index);
  int *clamp_index = calloc((size_t)n, sizeof *clamp_index);
  int32_t *parent = calloc((size_t)n, sizeof *parent);
  /* the children of row i: kid[first[i] .. first[i + 1]) */
  int *first = calloc((size_t)n + 1, sizeof *first), *kid = calloc((size_t)n, sizeof *kid);
  y_home *home = calloc((size_t)n, sizeof *home);
  int *per_warp = calloc(2 * (size_t)plan->warps, sizeof *per_warp); /* warp_rows, so far */
  int *seq = calloc((size_t)n, sizeof *seq); /* a warp's rows in order (put_warps) */
  int rc = SE_OK;
  text t = *out;
  if (!order || !hh_index || !clamp_index || !parent || !first || !kid || !home || !per_warp ||
      !seq) {
    rc = se_error_set(err, SE_ERR_NOMEM, __FILE__, __LINE__, __func__,
                      "out of memory for the generated kernel of %d rows", n);
    goto done;
  }
  for (int i = 0; i < n; i++) {
    parent[i] = row[i].parent;
    if (i > 0)
      first[parent[i] + 2]++;
  }
  for (int i = 0; i + 2 <= n; i++)
    first[i + 2] += first[i + 1];
  for (int i = 1; i < n; i++) /* first[p + 1] counts p's children placed so far */
    kid[first[parent[i] + 1]++] = i;
  SE_TRY_GOTO(rc, done, list_order(parent, n, GEN_SCHEDULE_LANES, order, err));
  /* the hh rows numbered in elimination order: a chunk of them is consecutive in the table */
  int n_hh = 0, n_clamp = 0, slots = 0;
  for (int k = 0; k < n; k++) {
    hh_index[order[k]] = (row[order[k]].meta & SE_STREAM_HH) ? n_hh++ : -1;
    clamp_index[order[k]] = -1;
  }
  const int chunk = opt->hh_chunk > 0 && opt->hh_chunk < n_hh ? opt->hh_chunk : n_hh;
  for (int32_t k = 0; k < e->n_stim; k++) /* the clamps of this morphology's cells */
    if (e->groups[e->cell_group[e->stim_cell[k]]].morphology == m &&
        clamp_index[e->stim_comp[k]] < 0)
      clamp_index[e->stim_comp[k]] = n_clamp++;
  const int split = plan->split, warps = plan->warps, in_registers = register_rows(n, opt);
  const int fold = (split || plan->hh_global) && opt->hh_fold;
  for (int k = 0; k < n; k++) {
    const int i = order[k];
    home[i].reg = warps > 1 || k >= n - in_registers;
    home[i].slot = home[i].reg ? -1 : slots++;
    home[i].warp = warps > 1 && plan->warp[i] > 0 ? plan->warp[i] : 0;
    home[i].piece = warps > 1 ? plan->piece[i] : -1;
    home[i].level = warps > 1 ? plan->level[i] : 0;
  }
  /* with warps and reg_rows R, each warp keeps the y of the last R rows it eliminates (its
   * pieces', then warp 0's trunk's) in registers, the earlier ones in shared-memory slots: as
   * many as the plan counted */
  const int R = plan->reg_rows;
  if (warps > 1 && R >= 0)
    warp_rows(plan, per_warp);
  for (int pass = 0; warps > 1 && R >= 0 && pass <= plan->levels; pass++)
    for (int k = 0; k < n; k++) {
      const int i = order[k], w = home[i].warp;
      if (home[i].level == pass && per_warp[warps + w]++ < per_warp[w] - R) {
        home[i].reg = 0;
        home[i].slot = slots++;
      }
    }
  /* shared memory per thread: the y slots, then b and dg of the hh rows of one chunk
   * (se_neurons_gen_smem); with warps per cell of a block (plan_smem), after the pieces' y, f and
   * parent x, the hh rows' b and dg (hh_shared_rows), then the y slots */
  const int hh_slot = slots, warp_hh_base = 3 * plan->slots * 32,
            warp_y_base = warp_hh_base + 2 * hh_shared_rows(plan) * 32;

  /* with warps, the plan's blocks per multiprocessor for ptxas's register budget */
  char min_blocks[16] = "";
  if (warps > 1 && plan->min_blocks > 0)
    snprintf(min_blocks, sizeof min_blocks, ", %d", plan->min_blocks);
  else if (literal_entries(plan, opt) > 0) /* registers for the blocks of its table's room */
    snprintf(min_blocks, sizeof min_blocks, ", %d", literal_blocks(plan, opt));
  put(&t, "// morphology %d: %d rows (%d hh)", (int)m, n, n_hh);
  if (warps > 1)
    put(&t, ", %d warps per 32 cells (%d pieces to share, a trunk of %d rows, at most %d piece "
        "rows per warp%s%s)", warps, plan->slots, plan->trunk, plan->most,
        plan->levels > 1 ? " over 2 levels" : "",
        plan->cost ? "; rows weighted by their cost" : "");
  put(&t, "\n");
  if (n_hh > 0) {
    put(&t, "__constant__ se_gen_hh_row se_gen_hh_%d[%d] = {\n", (int)m, n_hh);
    for (int k = 0; k < n; k++) {
      const int i = order[k];
      if (hh_index[i] >= 0)
        put(&t, "  {%lld, %.17g, %.17g, %.17g, %.17g},\n", (long long)i * W, e->gna[mb + i],
            e->gk[mb + i], e->ena[mb + i], e->ek[mb + i]);
    }
    put(&t, "};\n");
  }
  if (n_hh > 0 && fold) { /* each hh row's a and c where the currents kernel folds them */
    put(&t, "__constant__ se_gen_fold se_gen_fold_%d[%d] = {\n", (int)m, n_hh);
    for (int k = 0; k < n; k++) {
      const int i = order[k];
      if (hh_index[i] >= 0)
        put(&t, "  {%.17g, %.17g, %d},\n", row[i].a, row[i].c,
            row_folds(fold, hh_index, clamp_index, i));
    }
    put(&t, "};\n");
  }
  /* the slot of the cell (and the engine's thread th): in cell order from the thread tm, else
   * from its group */
  char where[320];
  if (in_order) /* thread tm: cell tm, the engine's thread tm (its clamp list) */
    snprintf(where, sizeof where,
             "  const long long th = tm, cell = tm, s0 = tm / %lld * %lldLL + tm %% %lld;\n",
             (long long)W, (long long)W * n, (long long)W);
  else /* thread tm: lane tm % W of the morphology's group tm / W */
    snprintf(where, sizeof where,
             "  const se_gen_group g = groups[tm / %lld];\n  const int lane = (int)(tm %% %lld);\n"
             "  if (lane >= g.lanes) return;\n"
             "  const long long th = g.thread0 + lane, s0 = g.base + lane;\n",
             (long long)W, (long long)W);
  if (split) { /* the hh rows' kernel: thread tm's cell, hh row blockIdx.y; b (with fold, its
                  a v + c + b) and dg to rhs, diag */
    put(&t,
        "extern \"C\" __global__ void __launch_bounds__(256) se_gen_currents_%d(\n"
        "    const double *__restrict__ v, double *__restrict__ gm, double *__restrict__ gh,\n"
        "    double *__restrict__ gn, double *__restrict__ rhs, double *__restrict__ diag,\n"
        "    const se_gen_group *__restrict__ groups, long long threads, int update) {\n"
        "  const long long tm = (long long)blockIdx.x * 256 + threadIdx.x;\n"
        "  if (tm >= threads) return;\n%s"
        "  const double *const V = v + s0;\n"
        "  double *const R = rhs + s0, *const D = diag + s0;\n",
        (int)m, where);
    put_hh_currents(&t, (int)m, "  ", "blockIdx.y", "true", "", fold);
    put(&t, "}\n");
  }
  const size_t kernel_at = t.len; /* where a literal table goes (literals) */
  put(&t,
      "extern \"C\" __global__ void __launch_bounds__(%d%s) se_gen_step_%d(\n"
      "    double *__restrict__ v, double *__restrict__ gm, double *__restrict__ gh,\n"
      "    double *__restrict__ gn, const long long *__restrict__ stim_ptr,\n"
      "    const int *__restrict__ stim_comp, const double *__restrict__ stim_delay,\n"
      "    const double *__restrict__ stim_duration, const double *__restrict__ stim_amplitude,\n"
      "    unsigned long long *spike_count, double *spike_time, long long *spike_cell,\n"
      "    long long spike_capacity, unsigned long long *bad_cell, double *__restrict__ rhs,\n"
      "    double *__restrict__ diag, const se_gen_group *__restrict__ groups,\n"
      "    const long long *__restrict__ lane_cell, long long threads, double t_now,\n"
      "    int update) {\n"
      "  extern __shared__ double se_gen_smem[];\n", 32 * warps, min_blocks, (int)m);
  if (warps == 1) {
    put(&t, "  const long long tm = (long long)blockIdx.x * 32 + threadIdx.x;\n"
            "  if (tm >= threads) return;\n%s", where);
  } else {
    /* every thread reaches the barriers: a thread past the cells (or its group's lanes) takes a
     * live cell's slots, computes as that cell's thread does and stores nothing */
    put(&t, "  const int w = threadIdx.x >> 5;\n"
            "  const long long tm0 = (long long)blockIdx.x * 32 + (threadIdx.x & 31);\n"
            "  const long long tm = tm0 < threads ? tm0 : threads - 1;\n");
    if (in_order)
      put(&t, "  const bool live = tm0 < threads;\n"
              "  const long long th = tm, cell = tm, s0 = tm / %lld * %lldLL + tm %% %lld;\n",
          (long long)W, (long long)W * n, (long long)W);
    else
      put(&t, "  const se_gen_group g = groups[tm / %lld];\n"
              "  const bool live = tm0 < threads && (int)(tm %% %lld) < g.lanes;\n"
              "  const int lane = live ? (int)(tm %% %lld) : 0;\n"
              "  const long long th = g.thread0 + lane, s0 = g.base + lane;\n",
          (long long)W, (long long)W, (long long)W);
    put(&t, "  double *const sr = se_gen_smem + (threadIdx.x & 31), *const sf = sr + %d,"
            " *const sx = sf + %d;\n", plan->slots * 32, plan->slots * 32);
    if (plan->smem_rows > 0)
      put(&t, "  double *const sy = sr + %d;\n", warp_y_base);
  }
  const size_t copy_at = t.len; /* where the table's copy into shared memory goes */
  put(&t, "  double *const V = v + s0, *const R = rhs + s0, *const D = diag + s0;\n");
  if (warps == 1)
    put(&t, "  double *const sy = se_gen_smem + threadIdx.x;\n");
  const double dt = e->dt;
  /* the clamps' current of each clamped row, a compartment's clamps summed from the last as
   * fused2: in registers ic<q> for a few rows, else in the row's rhs slot (zeroed first at every
   * row that any cell clamps) */
  const int clamp_regs = n_clamp <= SE_GEN_MAX_CLAMP_ROWS;
  if (n_clamp > 0) {
    put(&t, "  const double t_mid = t_now + 0.5 * %.17g;\n", dt);
    if (clamp_regs) {
      put(&t, "  double");
      for (int q = 0; q < n_clamp; q++)
        put(&t, "%s ic%d = 0.0", q ? "," : "", q);
      put(&t, ";\n");
    } else {
      for (int i = 0; i < n; i++)
        if (clamp_index[i] >= 0)
          put(&t, "  R[%lld] = 0.0;\n", (long long)i * W);
    }
    put(&t, "  for (long long k = stim_ptr[th + 1] - 1; k >= stim_ptr[th]; k--) {\n"
            "    if (!se_iclamp_on(t_mid, stim_delay[k], stim_duration[k])) continue;\n"
            "    const int r = stim_comp[k];\n    const double a = stim_amplitude[k];\n   ");
    if (clamp_regs) {
      for (int i = 0; i < n; i++)
        if (clamp_index[i] >= 0)
          put(&t, " if (r == %d) ic%d += a; else", i, clamp_index[i]);
      put(&t, " {}\n  }\n");
    } else {
      put(&t, " R[(long long)r * %lld] += a;\n  }\n", (long long)W);
    }
  }
  if (warps > 1 && plan->hh_global) {
    /* the hh rows first, row j by warp j % warps for the block's 32 cells (the deferred gate
     * update with them), b (with fold its a v + c + b) and dg to the rhs and diag slots, as the
     * currents kernel writes them; barrier 3 */
    put(&t, "  for (int j = w; j < %d; j += %d) { // hh rows: currents, deferred gate update\n",
        n_hh, warps);
    put_hh_currents(&t, (int)m, "    ", "j", "live", "if (live) ", fold);
    put(&t, "  }\n  SE_GEN_BAR(3, %d);\n", 32 * warps);
  } else if (warps > 1 && plan->hh_in_block) {
    /* the hh rows first, row j by warp j % warps for the block's 32 cells (the deferred gate
     * update with them), b and dg to shared memory after the pieces' slots; barrier 3 */
    put(&t, "  double *const sh = sr + %d;\n", warp_hh_base);
    put_hh_loop(&t, (int)m, "w", n_hh, warps, "live", "sh", 0);
    put(&t, "  SE_GEN_BAR(3, %d);\n", 32 * warps);
  }
  if (warps > 1) {
    const int literals = literal_mode(plan, opt);
    literal_pool pool = {.limit = literals == 1 ? literal_entries(plan, opt) : INT_MAX};
    t.pool = literals ? &pool : NULL;
    put_warps(&t, e, row, n, warps, plan->levels, order, first, kid, home, clamp_index, hh_index,
              hh_shared_rows(plan) > 0, fold, in_order, opt, plan->prefetch, seq);
    put(&t, "}\n");
    t.pool = NULL;
    if (pool.n > 0)
      put_literal_table(&t, &pool, (int)m, kernel_at, copy_at, plan_smem(plan, opt), warps,
                        literals == 2);
    free(pool.v);
    goto done;
  }
  /* backward: assemble and eliminate each row; unless split, first (all hh rows in one chunk) or
   * before the first hh row of each chunk, the chunk's hh rows (currents into b and dg slots, the
   * deferred gate update) in one loop over the table */
  for (int k = 0; k < n; k++) {
    const int i = order[k];
    if (opt->window > 0 && k > 0 && k % opt->window == 0)
      put(&t, "  asm volatile(\"\" ::: \"memory\");\n");
    if (!split && (chunk == n_hh ? n_hh > 0 && k == 0
                                 : hh_index[i] >= 0 && hh_index[i] % chunk == 0)) {
      const int j0 = chunk == n_hh ? 0 : hh_index[i], j1 = j0 + chunk < n_hh ? j0 + chunk : n_hh;
      char from[16];
      snprintf(from, sizeof from, "%d", j0);
      put_hh_loop(&t, (int)m, from, j1, 1, "true", "sy", hh_slot - 2 * j0);
    }
    /* row i's hh current b and conductance dg (hh rows only), its clamps' current */
    char hb[48] = "", hd[48] = "", ic[48] = "";
    if (hh_index[i] >= 0 && split) {
      snprintf(hb, sizeof hb, "R[%lld]", (long long)i * W);
      snprintf(hd, sizeof hd, "D[%lld]", (long long)i * W);
    } else if (hh_index[i] >= 0) {
      const int hs = hh_slot + 2 * (hh_index[i] % chunk);
      snprintf(hb, sizeof hb, "sy[%d]", hs * 32);
      snprintf(hd, sizeof hd, "sy[%d]", (hs + 1) * 32);
    }
    if (clamp_index[i] >= 0 && clamp_regs)
      snprintf(ic, sizeof ic, "ic%d", clamp_index[i]);
    else if (clamp_index[i] >= 0)
      snprintf(ic, sizeof ic, "R[%lld]", (long long)i * W);
    put_backward_row(&t, row, i, W, first, kid, home, hb, hd, ic,
                     row_folds(fold, hh_index, clamp_index, i), opt->scaled);
  }
  /* forward: x = y + f x_parent, parents first; x to v */
  for (int k = n - 1; k >= 0; k--)
    put_forward_row(&t, row, order[k], W, home, NULL, 0);
  put_spike_check(&t, e, home, in_order, 0);
  put(&t, "}\n");
done:
  free(first);
  free(kid);
  free(order);
  free(hh_index);
  free(clamp_index);
  free(parent);
  free(home);
  free(per_warp);
  free(seq);
  *out = t;
  return rc;
}

/* The source of the kernels of morphologies list[0 .. count) of e, from e's fused2 tables and
 * the morphologies' plans. */
static int write_source(const struct se_neurons *e, const se_stream_tables *tab,
                        const int32_t *list, const gen_plan *plans, int count, int in_order,
                        const se_gen_options *opt, char **source, se_error *err) {
  int rc = SE_OK;
  text t = {0};
  /* the cell count is an argument: the source, and so the cubin cache's entry, depends on the
   * morphologies, the width and the clamped rows, not on which cells an engine holds */
  put(&t, "// Generated by simengine (cuda/neurons_gen.c): the step of %d morpholog%s, width "
          "%lld%s.\n#include \"hh.h\"\n#include \"neurons_math.h\"\n"
          "struct se_gen_hh_row { long long off; double gna, gk, ena, ek; };\n"
          "// one hh row r of the cell at slots s0 (V = v + s0): its current b and conductance\n"
          "// dg, and the deferred gate update (the gates stored when store)\n"
          "SE_HD static inline void se_gen_hh(const se_gen_hh_row r, const double *V, double *gm,\n"
          "    double *gh, double *gn, long long s0, int update, bool store, double *b,\n"
          "    double *dg) {\n"
          "  double m = gm[s0 + r.off], h = gh[s0 + r.off], n = gn[s0 + r.off];\n"
          "  *b = 0.0;\n  *dg = 0.0;\n"
          "  se_hh_row_terms(V[r.off], &m, &h, &n, update, %.17g, %.17g, r.gna, r.gk, r.ena,"
          " r.ek, b, dg);\n"
          "  if (update && store) { gm[s0 + r.off] = m; gh[s0 + r.off] = h; gn[s0 + r.off] = n; }\n"
          "}\n"
          "#ifndef SE_GEN_BAR // a barrier of the block's threads (from branches of their own)\n"
          "#define SE_GEN_BAR(id, threads) "
          "asm volatile(\"bar.sync \" #id \", \" #threads \";\" ::: \"memory\")\n#endif\n"
          "#ifndef SE_GEN_PREFETCH // the line of address p into the L%d cache\n"
          "#define SE_GEN_PREFETCH(p) asm volatile(\"prefetch.L%d [%%0];\" :: \"l\"(p))\n"
          "#endif\n"
          "struct se_gen_group { long long base, thread0; int lanes, pad; };\n",
      count, count == 1 ? "y" : "ies", (long long)e->width, in_order ? ", cells in order" : "",
      e->dt, e->q10, opt->prefetch_level == 2 ? 2 : 1, opt->prefetch_level == 2 ? 2 : 1);
  if (opt->hh_fold) /* a split-off hh row's a and c, and whether its currents kernel folds them */
    put(&t, "struct se_gen_fold { double a, c; int on; };\n");
  for (int k = 0; rc == SE_OK && k < count; k++)
    rc = put_kernel(&t, e, tab, list[k], &plans[k], in_order, opt, err);
  if (rc == SE_OK && t.failed)
    rc = se_error_set(err, SE_ERR_NOMEM, __FILE__, __LINE__, __func__,
                      "out of memory writing the generated kernels of %d morphologies", count);
  if (rc == SE_OK)
    *source = t.s;
  else
    free(t.s);
  return rc;
}

/* What the source is written from: the morphologies with cells (*list, malloc'ed, *count of
 * them), their plans under opt (*plans) and fused2's tables (*tab). Freed by source_inputs_free,
 * also on failure. */
static int source_inputs(const struct se_neurons *e, const se_gen_options *opt, int32_t **list,
                         int *count, gen_plan **plans, se_stream_tables *tab, se_error *err) {
  *plans = NULL;
  *list = morphology_list_or_fail(e, count, err);
  if (!*list)
    return SE_ERR_NOMEM;
  SE_TRY(morphology_plans(e, *list, *count, opt, plans, err));
  return se_stream_build(e, tab, err);
}

static void source_inputs_free(int32_t *list, int count, gen_plan *plans, se_stream_tables *tab) {
  se_stream_free(tab);
  plans_free(plans, count);
  free(list);
}

int se_neurons_gen_source(const struct se_neurons *e, const se_gen_options *opt, char **source,
                          se_error *err) {
  int count = 0;
  int32_t *list = NULL;
  gen_plan *plans = NULL;
  se_stream_tables tab = {0};
  int rc = source_inputs(e, opt, &list, &count, &plans, &tab, err);
  if (rc == SE_OK)
    rc = write_source(e, &tab, list, plans, count, cell_order(e), opt, source, err);
  source_inputs_free(list, count, plans, &tab);
  return rc;
}

int se_neurons_gen_in_cell_order(const struct se_neurons *e) { return cell_order(e); }

/* ---- NVRTC and the library ----------------------------------------------------------------- */

#define NVRTC_CHECK(err, call)                                                                 \
  do {                                                                                         \
    nvrtcResult se_nvrtc_rc_ = (call);                                                         \
    if (se_nvrtc_rc_ != NVRTC_SUCCESS)                                                         \
      SE_FAIL_GOTO(err, rc, done, SE_ERR_CUDA, "%s failed: %s", #call,                         \
                   nvrtcGetErrorString(se_nvrtc_rc_));                                         \
  } while (0)

int se_neurons_gen_compile(const char *source, int major, int minor, int contract, char **cubin,
                           size_t *size, se_error *err) {
  nvrtcProgram prog = NULL;
  int rc = SE_OK;
  char *log = NULL;
  const char *headers[] = {se_embedded_hh_h, se_embedded_neurons_math_h, ""};
  const char *names[] = {"hh.h", "neurons_math.h", "math.h"};
  NVRTC_CHECK(err, nvrtcCreateProgram(&prog, source, "se_gen_step.cu", 3, headers, names));
  char arch[32];
  snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d", major, minor);
  const char *options[] = {arch, contract ? "--fmad=true" : "--fmad=false", "--std=c++17"};
  const nvrtcResult compiled = nvrtcCompileProgram(prog, 3, options);
  if (compiled != NVRTC_SUCCESS) {
    size_t log_size = 0;
    if (nvrtcGetProgramLogSize(prog, &log_size) == NVRTC_SUCCESS && (log = malloc(log_size + 1)) &&
        nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS)
      log[log_size] = '\0';
    SE_FAIL_GOTO(err, rc, done, SE_ERR_CUDA, "NVRTC could not compile the generated step kernel "
                 "for sm_%d%d (--gpu-kernel coop or fused2 runs without it): %s: %.1500s", major,
                 minor, nvrtcGetErrorString(compiled), log ? log : "(no log)");
  }
  NVRTC_CHECK(err, nvrtcGetCUBINSize(prog, size));
  *cubin = malloc(*size ? *size : 1);
  if (!*cubin)
    SE_FAIL_GOTO(err, rc, done, SE_ERR_NOMEM, "out of memory for a cubin of %zu bytes", *size);
  NVRTC_CHECK(err, nvrtcGetCUBIN(prog, *cubin));
done:
  free(log);
  if (prog)
    nvrtcDestroyProgram(&prog);
  return rc;
}

/* ---- the cubin cache ------------------------------------------------------------------------ */

const char *se_neurons_gen_cache_dir(char *buf, size_t n) {
  const char *env = getenv("SE_GEN_CACHE"), *xdg = getenv("XDG_CACHE_HOME"),
             *home = getenv("HOME");
  int k = -1;
  if (env)
    k = env[0] && strcmp(env, "off") ? snprintf(buf, n, "%s", env) : -1;
  else if (xdg && xdg[0])
    k = snprintf(buf, n, "%s/simengine", xdg);
  else if (home && home[0])
    k = snprintf(buf, n, "%s/.cache/simengine", home);
  return k > 0 && (size_t)k < n ? buf : NULL;
}

/* FNV-1a over n bytes at p, continuing from h. */
static uint64_t fnv1a(uint64_t h, const void *p, size_t n) {
  for (size_t k = 0; k < n; k++)
    h = (h ^ ((const unsigned char *)p)[k]) * 0x100000001b3ull;
  return h;
}

/* FNV-1a over the pieces of a cache key, each with its NUL, from the offset basis `basis` (two
 * bases: two independent 64-bit hashes, one names the entry, the other is checked inside it). */
static uint64_t key_hash(uint64_t basis, const char *const *piece, int n_pieces) {
  uint64_t h = basis;
  for (int p = 0; p < n_pieces; p++)
    h = fnv1a(h, piece[p], strlen(piece[p]) + 1);
  return h;
}

/* Creates dir and its parents (mode 0755); 0 when it exists afterwards. */
static int make_dirs(const char *dir) {
  char path[4096];
  if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
    return -1;
  for (char *p = path + 1; *p; p++)
    if (*p == '/') {
      *p = '\0';
      if (mkdir(path, 0755) != 0 && errno != EEXIST)
        return -1;
      *p = '/';
    }
  return mkdir(path, 0755) == 0 || errno == EEXIST ? 0 : -1;
}

/* A cache entry: magic, the second hash of the key, the cubin's size and hash, the cubin. */
static const char CACHE_MAGIC[8] = {'S', 'E', 'G', 'E', 'N', 'C', '0', '2'};

static uint64_t bytes_hash(const char *p, size_t n) { return fnv1a(0xcbf29ce484222325ull, p, n); }

static char *cache_read(const char *path, uint64_t check, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  char magic[8];
  uint64_t h = 0, n = 0, hc = 0;
  char *cubin = NULL;
  if (fread(magic, 1, 8, f) == 8 && !memcmp(magic, CACHE_MAGIC, 8) && fread(&h, 8, 1, f) == 1 &&
      h == check && fread(&n, 8, 1, f) == 1 && n > 0 && n < ((uint64_t)1 << 32) &&
      fread(&hc, 8, 1, f) == 1 && (cubin = malloc((size_t)n)) &&
      fread(cubin, 1, (size_t)n, f) == (size_t)n && fgetc(f) == EOF &&
      bytes_hash(cubin, (size_t)n) == hc) {
    *size = (size_t)n;
  } else {
    free(cubin);
    cubin = NULL;
  }
  fclose(f);
  return cubin;
}

static void cache_write(const char *dir, const char *path, uint64_t check, const char *cubin,
                        size_t size) {
  char tmp[4200];
  if (make_dirs(dir) != 0 ||
      snprintf(tmp, sizeof tmp, "%s.%ld.tmp", path, (long)getpid()) >= (int)sizeof tmp)
    return;
  FILE *f = fopen(tmp, "wb");
  if (!f)
    return;
  const uint64_t n = size, hc = bytes_hash(cubin, size);
  const int ok = fwrite(CACHE_MAGIC, 1, 8, f) == 8 && fwrite(&check, 8, 1, f) == 1 &&
                 fwrite(&n, 8, 1, f) == 1 && fwrite(&hc, 8, 1, f) == 1 &&
                 fwrite(cubin, 1, size, f) == size;
  if (fclose(f) == 0 && ok && rename(tmp, path) == 0)
    return;
  remove(tmp);
}

int se_neurons_gen_cubin(const char *source, int major, int minor, int contract,
                         const char *cache_dir, char **cubin, size_t *size, int *cached,
                         se_error *err) {
  *cached = 0;
  int nv_major = 0, nv_minor = 0;
  if (nvrtcVersion(&nv_major, &nv_minor) != NVRTC_SUCCESS)
    nv_major = nv_minor = -1;
  char options[96];
  snprintf(options, sizeof options, "sm_%d%d fmad %d nvrtc %d.%d", major, minor, contract,
           nv_major, nv_minor);
  const char *key[] = {options, source, se_embedded_hh_h, se_embedded_neurons_math_h};
  const uint64_t name = key_hash(0xcbf29ce484222325ull, key, 4),
                 check = key_hash(0x84222325cbf29ce4ull, key, 4);
  char path[4096];
  const int have_path = cache_dir && snprintf(path, sizeof path, "%s/gen-%016llx-sm%d%d.cubin",
                                              cache_dir, (unsigned long long)name, major,
                                              minor) < (int)sizeof path;
  if (have_path && (*cubin = cache_read(path, check, size))) {
    *cached = 1;
    return SE_OK;
  }
  SE_TRY(se_neurons_gen_compile(source, major, minor, contract, cubin, size, err));
  if (have_path)
    cache_write(cache_dir, path, check, *cubin, *size);
  return SE_OK;
}

/* The group table entry of the generated source's se_gen_group (same layout). */
typedef struct gen_group {
  int64_t base, thread0;
  int32_t lanes, pad;
} gen_group;

/* Uploads morphology m's group table (its groups in the engine's order; thread0 from the launch
 * position of each group) into k->groups and counts its threads. */
static int upload_groups(const struct se_neurons *e, const int64_t *position, int32_t m,
                         se_gen_kernel *k, se_error *err) {
  int64_t ng = 0;
  for (int64_t g = 0; g < e->n_groups; g++)
    ng += e->groups[g].morphology == m;
  gen_group *tab = calloc((size_t)ng + 1, sizeof *tab);
  if (!tab)
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory for the group table of %lld groups", (long long)ng);
  int64_t q = 0;
  for (int64_t g = 0; g < e->n_groups; g++)
    if (e->groups[g].morphology == m)
      tab[q++] = (gen_group){e->groups[g].base, position[g] * e->width, e->groups[g].lanes, 0};
  k->threads = ng * e->width;
  const int rc = se_neurons_cuda_upload(&k->groups, tab, (size_t)ng * sizeof *tab, err);
  free(tab);
  return rc;
}

/* Takes plan p of morphology m (the kernel's shared memory, hh rows, warps, register rows and
 * levels) into k; SE_ERR_ARG when its shared memory exceeds device's smem_max. */
static int take_plan(const struct se_neurons *e, int32_t m, const gen_plan *p,
                     const se_gen_options *opt, int device, int smem_max, se_gen_kernel *k,
                     se_error *err) {
  k->morphology = m;
  k->smem = kernel_smem(p, opt);
  k->n_hh = p->split ? p->n_hh : 0;
  k->warps = p->warps;
  k->reg_rows = p->reg_rows;
  k->levels = p->warps > 1 ? p->levels : 0;
  k->literals = literal_mode(p, opt);
  if (k->smem > (size_t)smem_max)
    SE_FAIL(err, SE_ERR_ARG, "the gen kernel of morphology %d (%d compartments) needs %zu B of "
            "shared memory per block, more than device %d's %d B: raise %s or use --gpu-kernel "
            "coop", (int)m, morphology_rows(e, m), k->smem, device, smem_max,
            p->warps > 1 ? "SE_GEN_WARP_REG_ROWS (or unset it)" : "SE_GEN_REG_ROWS");
  return SE_OK;
}

/* Writes the kernels of plans (morphologies list[0 .. g->n)), compiles them (or reads them from
 * the cache), loads them as g->library (unloading the one before) and takes each kernel's
 * handles into g->k. */
static int load_kernels(const struct se_neurons *e, const se_stream_tables *tab,
                        const int32_t *list, const gen_plan *plans, const se_gen_options *opt,
                        int device, int major, int minor, se_gen_step *g, se_error *err) {
  char *source = NULL, *cubin = NULL;
  size_t cubin_size = 0;
  SE_TRY(write_source(e, tab, list, plans, g->n, g->in_order, opt, &source, err));
  char dir_buf[4096];
  const char *dir = se_neurons_gen_cache_dir(dir_buf, sizeof dir_buf);
  int cached = 0;
  const int rc = se_neurons_gen_cubin(source, major, minor, opt->contract, dir, &cubin,
                                      &cubin_size, &cached, err);
  if (rc == SE_OK && getenv("SE_GEN_VERBOSE")) {
    fprintf(stderr, "gen: %d morpholog%s, %zu B of source, %zu B of cubin (%s);", g->n,
            g->n == 1 ? "y" : "ies", strlen(source), cubin_size,
            cached ? "from the cache" : "compiled");
    for (int k = 0; k < g->n; k++) {
      const se_gen_kernel *kk = &g->k[k];
      fprintf(stderr, " %d rows: %zu B shared per block, %d warp%s per 32 cells%s",
              morphology_rows(e, kk->morphology), kk->smem, kk->warps, kk->warps == 1 ? "" : "s",
              kk->n_hh > 0 ? ", hh rows split off" : "");
      if (kk->reg_rows >= 0)
        fprintf(stderr, ", y in registers for the last %d rows of each warp", kk->reg_rows);
      if (kk->levels == 2 && kk->two_level_local > 0)
        fprintf(stderr, ", 2 levels of pieces (%zu B of local memory per thread)",
                kk->two_level_local);
      else if (kk->levels == 2)
        fprintf(stderr, ", 2 levels of pieces");
      else if (kk->two_level_local > 0)
        fprintf(stderr, ", 1 level of pieces (with 2, %zu B of local memory per thread)",
                kk->two_level_local);
      if (kk->literals)
        fprintf(stderr, ", literals from a table in %s memory",
                kk->literals == 1 ? "shared" : "global");
      fprintf(stderr, ";");
    }
    fprintf(stderr, "\n");
  }
  free(source);
  SE_TRY(rc);
  if (g->library) {
    cudaLibraryUnload(g->library);
    g->library = NULL;
  }
  cudaError_t cr = cudaLibraryLoadData(&g->library, cubin, NULL, NULL, 0, NULL, NULL, 0);
  free(cubin);
  if (cr != cudaSuccess)
    SE_FAIL(err, SE_ERR_CUDA, "loading the generated step kernels on device %d failed: %s (%s)",
            device, cudaGetErrorName(cr), cudaGetErrorString(cr));
  for (int k = 0; k < g->n; k++) {
    char name[64];
    snprintf(name, sizeof name, "se_gen_step_%d", (int)g->k[k].morphology);
    SE_CUDA_CHECK(err, cudaLibraryGetKernel(&g->k[k].kernel, g->library, name));
    SE_CUDA_CHECK(err, cudaKernelSetAttributeForDevice(
                           g->k[k].kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           (int)g->k[k].smem, device));
    if (opt->carveout >= 0)
      SE_CUDA_CHECK(err, cudaKernelSetAttributeForDevice(
                             g->k[k].kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                             opt->carveout, device));
    if (getenv("SE_GEN_VERBOSE")) { /* the occupancy calculator's resident blocks */
      int blocks = 0;
      SE_CUDA_CHECK(err, cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                             &blocks, (const void *)g->k[k].kernel, 32 * g->k[k].warps,
                             g->k[k].smem));
      fprintf(stderr, "gen: morphology %d's step kernel: %d blocks per multiprocessor (the "
              "occupancy calculator's)%s\n",
              (int)g->k[k].morphology, blocks,
              opt->carveout >= 0 ? ", shared-memory carveout preferred" : "");
    }
    g->k[k].currents = NULL;
    if (g->k[k].n_hh > 0) {
      snprintf(name, sizeof name, "se_gen_currents_%d", (int)g->k[k].morphology);
      SE_CUDA_CHECK(err, cudaLibraryGetKernel(&g->k[k].currents, g->library, name));
    }
  }
  return SE_OK;
}

/* The rule's second level of pieces only where its kernel spills little (SE_GEN_LEVEL_LOCAL):
 * each two-level kernel's local memory per thread is noted (two_level_local), and each
 * morphology whose two-level kernel in g uses more is planned again with one level (plans[k]
 * replaced) and *again set. */
static int drop_spilling_levels(const struct se_neurons *e, const int32_t *list, gen_plan *plans,
                                const se_gen_options *opt, int device, int smem_max,
                                se_gen_step *g, int *again, se_error *err) {
  se_gen_options one = *opt;
  one.warp_levels = 1;
  *again = 0;
  for (int k = 0; k < g->n; k++) {
    if (g->k[k].levels != 2)
      continue;
    struct cudaFuncAttributes a;
    SE_CUDA_CHECK(err, cudaFuncGetAttributes(&a, (const void *)g->k[k].kernel));
    g->k[k].two_level_local = a.localSizeBytes;
    if (a.localSizeBytes <= SE_GEN_LEVEL_LOCAL)
      continue;
    plan_free(&plans[k]);
    SE_TRY(morphology_plan(e, list[k], &one, &plans[k], err));
    SE_TRY(take_plan(e, list[k], &plans[k], opt, device, smem_max, &g->k[k], err));
    *again = 1;
  }
  return SE_OK;
}

int se_neurons_gen_attach(const struct se_neurons *e, int device, const int64_t *position,
                          se_neurons_device *d, se_gen_step *g, se_error *err) {
  char why[256];
  if (!se_neurons_gen_applicable(e, why, sizeof why))
    SE_FAIL(err, SE_ERR_ARG, "the gen kernel cannot step this population: %s (--gpu-kernel coop "
            "or auto can)", why);
  se_gen_options opt = se_gen_options_from_env();
  int major = 0, minor = 0, smem_max = 0, sm_smem = 0;
  SE_CUDA_CHECK(err, cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  SE_CUDA_CHECK(err, cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device));
  SE_CUDA_CHECK(err, cudaDeviceGetAttribute(&smem_max, cudaDevAttrMaxSharedMemoryPerBlockOptin,
                                            device));
  SE_CUDA_CHECK(err, cudaDeviceGetAttribute(&sm_smem,
                                            cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
  opt.sm_smem = (size_t)sm_smem; /* the literal tables' room: this device's */
  /* one kernel per morphology with cells, written from fused2's tables, which also go to the
   * device: the deferred gate update at the end (stream_finish) reads them */
  int count = 0;
  int32_t *list = NULL;
  gen_plan *plans = NULL;
  se_stream_tables tab = {0};
  int rc = source_inputs(e, &opt, &list, &count, &plans, &tab, err);
  if (rc == SE_OK)
    rc = se_neurons_cuda_upload(&d->stream, tab.rows,
                                (size_t)(e->n_morph_comp > 0 ? e->n_morph_comp : 1) *
                                    sizeof *tab.rows, err);
  g->in_order = cell_order(e);
  g->k = rc == SE_OK ? calloc((size_t)count, sizeof *g->k) : NULL;
  if (rc == SE_OK && !g->k)
    rc = se_error_set(err, SE_ERR_NOMEM, __FILE__, __LINE__, __func__,
                      "out of memory for %d kernels", count);
  g->n = g->k ? count : 0;
  for (int k = 0; k < g->n && rc == SE_OK; k++) {
    rc = take_plan(e, list[k], &plans[k], &opt, device, smem_max, &g->k[k], err);
    if (rc == SE_OK && g->in_order)
      g->k[k].threads = e->n_cells;
    else if (rc == SE_OK)
      rc = upload_groups(e, position, list[k], &g->k[k], err);
  }
  int again = 0;
  if (rc == SE_OK)
    rc = load_kernels(e, &tab, list, plans, &opt, device, major, minor, g, err);
  if (rc == SE_OK && opt.warp_levels < 0)
    rc = drop_spilling_levels(e, list, plans, &opt, device, smem_max, g, &again, err);
  if (rc == SE_OK && again)
    rc = load_kernels(e, &tab, list, plans, &opt, device, major, minor, g, err);
  source_inputs_free(list, count, plans, &tab);
  SE_TRY(rc);
  if (opt.streams && g->n > 1) { /* a stream per morphology, events to fork and join */
    g->streams = calloc((size_t)g->n, sizeof *g->streams);
    g->joined = calloc((size_t)g->n, sizeof *g->joined);
    if (!g->streams || !g->joined)
      SE_FAIL(err, SE_ERR_NOMEM, "out of memory for %d streams", g->n);
    SE_CUDA_CHECK(err, cudaEventCreateWithFlags(&g->fork, cudaEventDisableTiming));
    for (int k = 0; k < g->n; k++) {
      SE_CUDA_CHECK(err, cudaStreamCreateWithFlags(&g->streams[k], cudaStreamNonBlocking));
      SE_CUDA_CHECK(err, cudaEventCreateWithFlags(&g->joined[k], cudaEventDisableTiming));
    }
  }
  return SE_OK;
}

cudaError_t se_neurons_gen_launch(const se_gen_step *g, const se_neurons_device *d, double t_now,
                                  int update, cudaStream_t stream) {
  double *v = d->v, *m = d->m, *h = d->h, *n = d->n, *spike_time = d->spike_time;
  const long long *stim_ptr = (const long long *)d->stim_ptr;
  const int *stim_comp = d->stim_comp;
  const double *delay = d->stim_delay, *duration = d->stim_duration, *amp = d->stim_amplitude;
  unsigned long long *spike_count = d->spike_count, *bad_cell = d->bad_cell;
  long long *spike_cell = (long long *)d->spike_cell;
  long long capacity = d->spike_capacity;
  double *rhs = d->rhs, *diag = d->diag;
  const long long *lane_cell = (const long long *)d->lane_cell;
  cudaError_t rc = g->streams ? cudaEventRecord(g->fork, stream) : cudaSuccess;
  for (int k = 0; k < g->n && rc == cudaSuccess; k++) {
    const void *groups = g->k[k].groups;
    long long threads = g->k[k].threads;
    const cudaStream_t s = g->streams ? g->streams[k] : stream;
    if (g->streams)
      rc = cudaStreamWaitEvent(s, g->fork, 0);
    if (rc == cudaSuccess && g->k[k].currents) { /* the hh rows first, a thread per cell and row */
      void *hargs[] = {&v, &m, &h, &n, &rhs, &diag, &groups, &threads, &update};
      const dim3 hgrid = {(unsigned)((threads + 255) / 256), (unsigned)g->k[k].n_hh, 1},
                 hblock = {256, 1, 1};
      rc = cudaLaunchKernel((const void *)g->k[k].currents, hgrid, hblock, hargs, 0, s);
    }
    void *args[] = {&v,          &m,        &h,        &n,      &stim_ptr,  &stim_comp,
                    &delay,      &duration, &amp,      &spike_count,         &spike_time,
                    &spike_cell, &capacity, &bad_cell, &rhs,    &diag,      &groups,
                    &lane_cell,  &threads,  &t_now,    &update};
    const dim3 grid = {(unsigned)((threads + 31) / 32), 1, 1},
               block = {32 * (unsigned)g->k[k].warps, 1, 1};
    if (rc == cudaSuccess)
      rc = cudaLaunchKernel((const void *)g->k[k].kernel, grid, block, args, g->k[k].smem, s);
    if (rc == cudaSuccess && g->streams)
      rc = cudaEventRecord(g->joined[k], s);
    if (rc == cudaSuccess && g->streams)
      rc = cudaStreamWaitEvent(stream, g->joined[k], 0);
  }
  return rc;
}

void se_neurons_gen_free(se_gen_step *g) {
  for (int k = 0; g->streams && k < g->n; k++) {
    if (g->streams[k])
      cudaStreamDestroy(g->streams[k]);
    if (g->joined && g->joined[k])
      cudaEventDestroy(g->joined[k]);
  }
  if (g->fork)
    cudaEventDestroy(g->fork);
  free(g->streams);
  free(g->joined);
  if (g->library)
    cudaLibraryUnload(g->library);
  for (int k = 0; k < g->n; k++)
    cudaFree(g->k[k].groups);
  free(g->k);
  memset(g, 0, sizeof *g);
}
