/* The GPU worker of the tdbem summation and the cuSPARSE front approach (cuda/tdbem_cuda.h,
 * docs/tdbem.md Section 12): building the Full-Blocking and Contiguous-Blocking images on the
 * host, uploading them, and driving the kernels of cuda/tdbem_kernels.cu. */
#include "tdbem_cuda.h"

#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "se_cuda.h"
#include "tdbem_front_ref.h"
#include "tdbem_kernels.h"
#include "tdbem_sum_cpu.h"

/* Bytes of values built on the host and uploaded at once (pinned staging). */
#define STAGE_BYTES ((int64_t)256 << 20)

struct se_tdbem_cuda {
  int device, bc, tiles, chunks, win_max, ng;
  se_tdbem_gpu_kernel kernel;
  se_precision precision;
  int64_t n, kmax, hist_len, first, count, chunk;
  se_tdbem_cuda_stats stats;
  cudaStream_t stream, aux; /* the products; the history updates and the radiation (priority) */
  cudaEvent_t start, stop, pushed, hist_ready;
  /* device */
  double *hist, *partial, *a_d;
  int64_t *blk_ptr, *run_off;
  int32_t *tile_k, *blk_k0, *cb_win;
  void *val, *cb;
  /* the near field for the radiation (p <= near_p), by rows; rad_p: p_max of the pending one */
  int near_p, rad_p;
  int64_t *near_row_ptr, *near_val_ptr;
  int32_t *near_col, *near_kk;
  void *near_val; /* the slices' precision */
  double *rad_d;
  /* pinned host */
  double *out_h, *a_h, *rad_h;
  double *out_mapped; /* out_h seen from the device: the chunk reduction writes it directly */
};

/* ---- the cut-outs ----------------------------------------------------------------------- */

/* The row-vectors of one (slice, tile): ra .. rb-1, rows ascending. */
typedef struct tile_rvs {
  const se_tdbem_slices *s;
  int64_t ra, rb;
} tile_rvs;

static inline int64_t rv_len(const se_tdbem_slices *s, int64_t r) {
  return s->val_ptr[r + 1] - s->val_ptr[r];
}

/* The greedy Full-Blocking cut of paper 002 Section 5.1 within one tile: row-vectors in row order,
 * cut into pieces of at most bc values; a piece joins the open block when the block's k span
 * stays within bc columns and its row is not in the block yet, otherwise it opens a new block.
 * The pieces of one row-vector go to consecutive blocks. Returns the number of blocks; k0 (may
 * be NULL) receives each block's first k, first_blk (may be NULL) each row-vector's first block. */
static int64_t fb_cut(const tile_rvs *t, int bc, int32_t *k0, int64_t *first_blk) {
  int64_t blocks = 0, lo = 0, hi = 0;
  uint32_t used = 0;
  for (int64_t r = t->ra; r < t->rb; r++) {
    const int64_t ks = t->s->kstart[r], d = rv_len(t->s, r);
    const uint32_t bit = 1u << (t->s->row[r] & 31);
    for (int64_t p = 0; p * bc < d; p++) {
      const int64_t ps = ks + p * bc, pe = ps + (d - p * bc < bc ? d - p * bc : bc) - 1;
      const int64_t nlo = ps < lo ? ps : lo, nhi = pe > hi ? pe : hi;
      if (blocks == 0 || (used & bit) || nhi - nlo + 1 > bc) {
        if (blocks > 0 && k0)
          k0[blocks - 1] = (int32_t)lo;
        blocks++;
        lo = ps;
        hi = pe;
        used = 0;
      } else {
        lo = nlo;
        hi = nhi;
      }
      used |= bit;
      if (p == 0 && first_blk)
        first_blk[r - t->ra] = blocks - 1;
    }
  }
  if (blocks > 0 && k0)
    k0[blocks - 1] = (int32_t)lo;
  return blocks;
}

/* The slots of a record: the used lanes by length, longest first (ties by lane). Returns their
 * number. */
static int cb_slots(uint32_t used, const int32_t *d, int *order) {
  int na = 0;
  for (int l = 0; l < 32; l++)
    if (used & (1u << l)) {
      int at = na++;
      for (; at > 0 && d[order[at - 1]] < d[l]; at--)
        order[at] = order[at - 1];
      order[at] = l;
    }
  return na;
}

/* Writes one double record (layout: cuda/tdbem_kernels.h) of vb value bytes at rec. */
static void cb_write_double(const se_tdbem_slices *s, uint32_t used, const int32_t *d,
                            const int32_t *ks, const int64_t *src, int32_t k1, int32_t span,
                            int64_t j, int64_t nv, int64_t dm, int64_t vb, unsigned char *rec) {
  int order[32];
  const int na = cb_slots(used, d, order);
  const int32_t head[4] = {k1, span, (int32_t)j, (int32_t)nv};
  memcpy(rec, head, sizeof head);
  uint32_t meta[32];
  for (int l = 0; l < 32; l++) { /* the values of column l */
    uint32_t count = 0;
    for (int slot = 0; slot < na; slot++)
      count += d[order[slot]] > l;
    meta[l] = count << 26;
  }
  for (int slot = 0; slot < na; slot++) {
    const int l = order[slot];
    meta[l] |= (uint32_t)(k1 - ks[l]) | (uint32_t)d[l] << 16 | (uint32_t)slot << 21;
  }
  memcpy(rec + 16, meta, sizeof meta);
  unsigned char *v = rec + SE_TDBEM_CB_HEAD;
  memset(v, 0, (size_t)vb);
  int64_t x = 0;
  for (int64_t c = 0; c < dm; c++)
    for (int slot = 0; slot < na && d[order[slot]] > c; slot++, x++)
      memcpy(v + x * 8, (const double *)s->val + src[order[slot]] + c, 8);
}

/* Writes one float record in the pair layout (cuda/tdbem_kernels.h) of `bytes` bytes at rec: the
 * pieces of each half-warp (lanes 0-15, 16-31) get slots by length, longest first (ties by lane),
 * so that the 8-byte loads of a half-warp read consecutive entries (distinct banks). */
static void cb_write_pairs(const se_tdbem_slices *s, uint32_t used, const int32_t *d,
                           const int32_t *ks, const int64_t *src, int32_t k1, int32_t span,
                           int64_t j, int64_t dm, int64_t bytes, int stride, unsigned char *rec) {
  int order[2][16], na[2];
  for (int h = 0; h < 2; h++)
    na[h] = cb_slots(used >> 16 * h & 0xffffu, d + 16 * h, order[h]);
  const int32_t pairs = (int32_t)((dm + 1) / 2);
  memset(rec, 0, (size_t)bytes);
  const int32_t head[4] = {k1, span, (int32_t)j, (int32_t)bytes | pairs << 16};
  memcpy(rec, head, sizeof head);
  uint16_t pst[2][12] = {{0}};
  uint32_t meta[32]; /* lanes without a piece read the window at y = SE_TDBEM_CB_PIECE (finite) */
  for (int l = 0; l < 32; l++)
    meta[l] = (uint32_t)(stride + SE_TDBEM_CB_PIECE) / 2;
  for (int h = 0; h < 2; h++)
    for (int slot = 0; slot < na[h]; slot++) {
      const int l = 16 * h + order[h][slot], y = SE_TDBEM_CB_PIECE + k1 - ks[l];
      const uint32_t woff = (uint32_t)(y & 1 ? y - 1 : stride + y);
      meta[l] = woff / 2 | (uint32_t)slot << 16 | (uint32_t)d[l] << 21;
    }
  const float *val = (const float *)s->val;
  float *v = (float *)(rec + SE_TDBEM_CB_HEAD_PAIRS);
  int64_t x = 0; /* pair entries written */
  for (int p = 0; p < pairs; p++)
    for (int h = 0; h < 2; h++) {
      pst[h][p] = (uint16_t)(8 * x);
      for (int slot = 0; slot < na[h] && d[16 * h + order[h][slot]] > 2 * p; slot++, x++) {
        const int l = 16 * h + order[h][slot];
        v[2 * x] = val[src[l] + 2 * p];
        v[2 * x + 1] = 2 * p + 1 < d[l] ? val[src[l] + 2 * p + 1] : 0.0f;
      }
    }
  memcpy(rec + 16, pst, sizeof pst);
  memcpy(rec + 16 + sizeof pst, meta, sizeof meta);
}

/* Contiguous-Blocking: the records of one (slice, tile) (layouts: cuda/tdbem_kernels.h). The
 * row-vectors are cut into pieces of at most SE_TDBEM_CB_PIECE (double) or
 * SE_TDBEM_CB_PIECE_PAIRS (float) values; the pieces, in row order, fill blocks of one piece per
 * row (lane = row mod 32), a new block where a row repeats. k1 and span are the tile's window
 * (k1 - kstart < 65536 checked by the caller), j the local slice. Float values get the pair
 * layout (stride: se_tdbem_cb_pair_stride of the image), double values the column layout. dst
 * NULL: only measures. Returns the bytes; *blocks receives the number of records. */
static int64_t cb_records(const tile_rvs *t, int32_t k1, int32_t span, int64_t j, size_t vsize,
                          int stride, unsigned char *dst, int64_t *blocks) {
  const se_tdbem_slices *s = t->s;
  const int64_t piece = vsize == 4 ? SE_TDBEM_CB_PIECE_PAIRS : SE_TDBEM_CB_PIECE;
  int64_t bytes = 0, nb = 0;
  int64_t src[32]; /* value index of each lane's piece */
  int32_t d[32], ks[32];
  uint32_t used = 0;
  int64_t r = t->ra, p = 0; /* the next piece: row-vector r, piece p */
  while (r < t->rb || used) {
    const int lane = r < t->rb ? (int)(s->row[r] & 31) : 0;
    if (r < t->rb && !(used & (1u << lane))) {
      const int64_t len = rv_len(s, r) - p * piece;
      src[lane] = s->val_ptr[r] + p * piece;
      d[lane] = (int32_t)(len < piece ? len : piece);
      ks[lane] = (int32_t)(s->kstart[r] + p * piece);
      used |= 1u << lane;
      if (len <= piece) {
        r++;
        p = 0;
      } else {
        p++;
      }
      continue;
    }
    /* close the block: its row is taken (or no pieces are left) */
    int64_t nv = 0, np = 0, dm = 0; /* values, pair entries, longest piece */
    for (int l = 0; l < 32; l++)
      if (used & (1u << l)) {
        nv += d[l];
        np += (d[l] + 1) / 2;
        dm = d[l] > dm ? d[l] : dm;
      }
    int64_t rec_bytes;
    if (vsize == 4) {
      rec_bytes = (SE_TDBEM_CB_HEAD_PAIRS + 8 * np + 15) & ~(int64_t)15;
      if (dst)
        cb_write_pairs(s, used, d, ks, src, k1, span, j, dm, rec_bytes, stride, dst + bytes);
    } else {
      const int64_t vb = (nv * 8 + 15) & ~(int64_t)15;
      rec_bytes = SE_TDBEM_CB_HEAD + vb;
      if (dst)
        cb_write_double(s, used, d, ks, src, k1, span, j, nv, dm, vb, dst + bytes);
    }
    bytes += rec_bytes;
    nb++;
    used = 0;
  }
  *blocks = nb;
  return bytes;
}

/* What pass 1 learns of one (slice, tile). */
typedef struct tile_info {
  int64_t blocks, values; /* values stored, padding included */
  int64_t bytes;          /* CB: bytes of the records */
  int32_t k0, k1;         /* k range of the window */
  int64_t rvs;
} tile_info;

/* Pass 1 for one (slice, tile). */
static tile_info tile_measure(const se_tdbem_cuda_t g, const tile_rvs *t, int32_t *k0s) {
  tile_info ti = {0};
  ti.rvs = t->rb - t->ra;
  if (ti.rvs == 0)
    return ti;
  int64_t lo = INT64_MAX, hi = INT64_MIN, values = 0;
  for (int64_t r = t->ra; r < t->rb; r++) {
    const int64_t ks = t->s->kstart[r], d = rv_len(t->s, r);
    lo = ks < lo ? ks : lo;
    hi = ks + d - 1 > hi ? ks + d - 1 : hi;
    values += d;
  }
  if (g->kernel == SE_TDBEM_GPU_FB) {
    ti.blocks = fb_cut(t, g->bc, k0s, NULL);
    ti.values = ti.blocks * 32 * g->bc;
    lo = INT64_MAX;
    hi = INT64_MIN;
    for (int64_t b = 0; b < ti.blocks; b++) {
      lo = k0s[b] < lo ? k0s[b] : lo;
      hi = k0s[b] + g->bc - 1 > hi ? k0s[b] + g->bc - 1 : hi;
    }
  } else {
    ti.values = values;
  }
  ti.k0 = (int32_t)lo;
  ti.k1 = (int32_t)hi;
  if (g->kernel == SE_TDBEM_GPU_CB)
    ti.bytes = cb_records(t, ti.k1, ti.k1 - ti.k0 + 1, 0,
                          g->precision == SE_PRECISION_SINGLE ? 4 : 8, 0, NULL, &ti.blocks);
  return ti;
}

/* The image's host-side index: per (slice, tile) e: blk_ptr[e], the first value voff[e], and the
 * window range; CB also the first row-vector ra[e] and the bytes of the records cbytes[e]; CB
 * with float values the window of each (slice j, thread-block b of SE_TDBEM_WARPS tiles):
 * win[2 (j * tile blocks + b) ..] = k1, span (the k range of the block's tiles; 0, 0: none). */
typedef struct image_index {
  int64_t entries, blocks, values, max_rvs, max_blocks;
  int64_t *blk_ptr, *voff; /* [entries + 1] */
  int32_t *tile_k;         /* [2 entries] */
  int64_t *ra, *cbytes;    /* CB: [entries + 1], [entries] */
  int32_t *win;            /* CB float: [2 x count x tile blocks] */
  int64_t *run_off;        /* CB: [chunks x tiles + 1] (allocate_image) */
} image_index;

static void image_index_free(image_index *ix) {
  free(ix->blk_ptr);
  free(ix->voff);
  free(ix->tile_k);
  free(ix->ra);
  free(ix->cbytes);
  free(ix->win);
  free(ix->run_off);
  *ix = (image_index){0};
}

/* The (slice, tile) row-vector ranges of slice j: calls in order of tiles; bounds[b] .. bounds[b+1]
 * for tile b (bounds has tiles + 1 entries). */
static void slice_tiles(const se_tdbem_slices *s, int64_t j, int tiles, int64_t *bounds) {
  int64_t r = s->slice_ptr[j];
  const int64_t end = s->slice_ptr[j + 1];
  for (int b = 0; b < tiles; b++) {
    bounds[b] = r;
    while (r < end && s->row[r] < (int64_t)(b + 1) * SE_TDBEM_TILE)
      r++;
  }
  bounds[tiles] = end;
}

/* The float CB kernel's windows ix->win: per (slice, thread-block of SE_TDBEM_WARPS tiles) the k
 * range of the tiles with records; g->win_max becomes the longest. */
static int block_windows(se_tdbem_cuda_t g, image_index *ix, se_error *err) {
  const int64_t tile_blocks = (g->tiles + SE_TDBEM_WARPS - 1) / SE_TDBEM_WARPS;
  SE_CALLOC(err, ix->win, 2 * g->count * tile_blocks + 1, "the windows of the GPU image");
  int win_max = 1;
  for (int64_t j = 0; j < g->count; j++)
    for (int64_t b = 0; b < tile_blocks; b++) {
      int32_t lo = INT32_MAX, hi = 0;
      for (int64_t t = b * SE_TDBEM_WARPS; t < (b + 1) * SE_TDBEM_WARPS && t < g->tiles; t++) {
        const int64_t e = j * g->tiles + t;
        if (ix->blk_ptr[e + 1] == ix->blk_ptr[e])
          continue;
        lo = ix->tile_k[2 * e] < lo ? ix->tile_k[2 * e] : lo;
        hi = ix->tile_k[2 * e + 1] > hi ? ix->tile_k[2 * e + 1] : hi;
      }
      if (hi == 0)
        continue;
      ix->win[2 * (j * tile_blocks + b)] = hi;
      ix->win[2 * (j * tile_blocks + b) + 1] = hi - lo + 1;
      win_max = hi - lo + 1 > win_max ? hi - lo + 1 : win_max;
    }
  g->win_max = win_max;
  return SE_OK;
}

/* Pass 1 over every slice (OpenMP): the index. */
static int image_measure(se_tdbem_cuda_t g, const se_tdbem_slices *s, image_index *ix,
                         se_error *err) {
  const int tiles = g->tiles;
  ix->entries = s->count * tiles;
  SE_CALLOC(err, ix->blk_ptr, ix->entries + 1, "the block pointers of the GPU image");
  SE_CALLOC(err, ix->voff, ix->entries + 1, "the value offsets of the GPU image");
  SE_CALLOC(err, ix->tile_k, 2 * ix->entries + 1, "the window ranges of the GPU image");
  if (g->kernel == SE_TDBEM_GPU_CB) {
    SE_CALLOC(err, ix->ra, ix->entries + 1, "the row-vector ranges of the GPU image");
    SE_CALLOC(err, ix->cbytes, ix->entries + 1, "the record sizes of the GPU image");
    ix->ra[ix->entries] = s->slice_ptr[s->count];
  }
  int64_t max_rvs = 0, max_blocks = 0;
  int bad = 0;
#pragma omp parallel reduction(max : max_rvs, max_blocks) reduction(| : bad)
  {
    int64_t *bounds = calloc((size_t)tiles + 1, sizeof *bounds), cap = 0;
    int32_t *k0s = NULL;
    bad |= !bounds;
#pragma omp for schedule(dynamic, 16)
    for (int64_t j = 0; j < s->count; j++) {
      if (!bounds)
        continue;
      slice_tiles(s, j, tiles, bounds);
      for (int b = 0; b < tiles; b++) {
        tile_rvs t = {s, bounds[b], bounds[b + 1]};
        int64_t need = 0; /* FB pieces bound the blocks */
        for (int64_t r = t.ra; r < t.rb; r++)
          need += (rv_len(s, r) + g->bc - 1) / g->bc;
        if (need > cap) {
          int32_t *k = realloc(k0s, (size_t)need * sizeof *k);
          if (!k) {
            bad = 1;
            continue;
          }
          k0s = k;
          cap = need;
        }
        const tile_info ti = tile_measure(g, &t, k0s);
        const int64_t e = j * tiles + b;
        ix->blk_ptr[e + 1] = ti.blocks;
        ix->voff[e + 1] = ti.values;
        ix->tile_k[2 * e] = ti.k0;
        ix->tile_k[2 * e + 1] = ti.k1;
        if (ix->ra) {
          ix->ra[e] = bounds[b];
          ix->cbytes[e] = ti.bytes;
        }
        max_rvs = ti.rvs > max_rvs ? ti.rvs : max_rvs;
        max_blocks = ti.blocks > max_blocks ? ti.blocks : max_blocks;
      }
    }
    free(k0s);
    free(bounds);
  }
  if (bad)
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory cutting %lld slices into blocks",
            (long long)s->count);
  int win_max = 1;
  for (int64_t e = 0; e < ix->entries; e++) {
    ix->blk_ptr[e + 1] += ix->blk_ptr[e];
    ix->voff[e + 1] += ix->voff[e];
    if (ix->blk_ptr[e + 1] > ix->blk_ptr[e] && ix->tile_k[2 * e + 1] - ix->tile_k[2 * e] + 1 > win_max)
      win_max = ix->tile_k[2 * e + 1] - ix->tile_k[2 * e] + 1;
  }
  ix->blocks = ix->blk_ptr[ix->entries];
  ix->values = ix->voff[ix->entries];
  ix->max_rvs = max_rvs;
  ix->max_blocks = max_blocks;
  g->win_max = win_max;
  if (g->kernel == SE_TDBEM_GPU_CB && g->precision == SE_PRECISION_SINGLE)
    return block_windows(g, ix, err);
  return SE_OK;
}

/* Host staging of one piece of slices [ja, jb) (FB): the values and the corners of its blocks. */
typedef struct stage {
  void *val;
  int32_t *k0;
  int64_t blocks_cap, values_cap;
} stage;

/* Copies value v of the slices s into dst[x] in the slices' precision. */
static inline void copy_value(const se_tdbem_slices *s, int64_t v, void *dst, int64_t x) {
  if (s->precision == SE_PRECISION_SINGLE)
    ((float *)dst)[x] = ((const float *)s->val)[v];
  else
    ((double *)dst)[x] = ((const double *)s->val)[v];
}

/* Pass 2 (FB) for one (slice, tile): its blocks from block index b_loc and values from v_loc of
 * st. */
static void tile_fill(se_tdbem_cuda_t g, const tile_rvs *t, stage *st, int64_t b_loc,
                      int64_t v_loc, int32_t *k0s, int64_t *firsts) {
  const se_tdbem_slices *s = t->s;
  const int bc = g->bc;
  const int64_t blocks = fb_cut(t, bc, k0s, firsts);
  memcpy(st->k0 + b_loc, k0s, (size_t)blocks * sizeof *k0s);
  const size_t size = s->precision == SE_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
  memset((char *)st->val + (size_t)v_loc * size, 0, (size_t)blocks * 32 * bc * size);
  for (int64_t r = t->ra; r < t->rb; r++) {
    const int64_t ks = s->kstart[r], d = rv_len(s, r), lane = s->row[r] & 31;
    for (int64_t x = 0; x < d; x++) {
      const int64_t b = firsts[r - t->ra] + x / bc, c = ks + x - k0s[b];
      copy_value(s, s->val_ptr[r] + x, st->val, v_loc + (b * bc + c) * 32 + lane);
    }
  }
}

static void free_device(se_tdbem_cuda_t g) {
  void *p[] = {g->hist,         g->partial,      g->a_d,      g->blk_ptr,
               g->run_off,      g->tile_k,       g->blk_k0,   g->cb_win,  g->val,
               g->cb,           g->near_row_ptr, g->near_val_ptr, g->near_col, g->near_kk,
               g->near_val,     g->rad_d};
  for (size_t k = 0; k < sizeof p / sizeof p[0]; k++)
    cudaFree(p[k]);
  cudaFreeHost(g->out_h);
  cudaFreeHost(g->a_h);
  cudaFreeHost(g->rad_h);
  g->hist = g->partial = g->a_d = g->out_h = g->out_mapped = g->a_h = g->rad_h = NULL;
  g->near_row_ptr = g->near_val_ptr = NULL;
  g->near_col = g->near_kk = NULL;
  g->near_val = g->rad_d = NULL;
  g->blk_ptr = g->run_off = NULL;
  g->tile_k = g->blk_k0 = g->cb_win = NULL;
  g->val = g->cb = NULL;
  g->count = 0;
  g->stats = (se_tdbem_cuda_stats){0};
}

int se_tdbem_cuda_create(int device, se_tdbem_gpu_kernel kernel, int bc, int64_t n, int64_t kmax,
                         se_precision precision, int64_t hist_len, se_tdbem_cuda_t *g,
                         se_error *err) {
  *g = NULL;
  if (kernel != SE_TDBEM_GPU_CB && kernel != SE_TDBEM_GPU_FB)
    SE_FAIL(err, SE_ERR_ARG, "GPU summation kernel %d: expected CB (0) or FB (1)", (int)kernel);
  if (kernel == SE_TDBEM_GPU_FB && bc != 16 && bc != 32)
    SE_FAIL(err, SE_ERR_ARG, "Full-Blocking block width bc = %d: expected 16 or 32", bc);
  if (n < 1 || n > INT32_MAX - 32 || kmax < 1 || kmax > INT32_MAX / 2 || hist_len < kmax + 1 ||
      hist_len > (1 << 30))
    SE_FAIL(err, SE_ERR_ARG, "GPU worker: bad sizes N = %lld, kmax = %lld, history %lld",
            (long long)n, (long long)kmax, (long long)hist_len);
  se_tdbem_cuda_t w;
  SE_CALLOC(err, w, 1, "a GPU worker");
  *w = (struct se_tdbem_cuda){.device = device, .bc = kernel == SE_TDBEM_GPU_FB ? bc : 16,
                              .kernel = kernel, .precision = precision, .n = n, .kmax = kmax,
                              .hist_len = hist_len, .tiles = (int)((n + 31) / 32)};
  const int64_t reach = 2 * (hist_len - kmax) - 1; /* 2 ng - 1: into the next group */
  w->near_p = (int)(reach < SE_TDBEM_RAD_PMAX ? reach : SE_TDBEM_RAD_PMAX);
  *g = w;
  SE_CUDA_CHECK(err, cudaSetDevice(device));
  SE_CUDA_CHECK(err, cudaStreamCreateWithFlags(&w->stream, cudaStreamNonBlocking));
  int least = 0, greatest = 0; /* the radiation is on the step's critical path: first */
  SE_CUDA_CHECK(err, cudaDeviceGetStreamPriorityRange(&least, &greatest));
  SE_CUDA_CHECK(err, cudaStreamCreateWithPriority(&w->aux, cudaStreamNonBlocking, greatest));
  SE_CUDA_CHECK(err, cudaEventCreateWithFlags(&w->hist_ready, cudaEventDisableTiming));
  SE_CUDA_CHECK(err, cudaEventCreate(&w->start));
  SE_CUDA_CHECK(err, cudaEventCreate(&w->stop));
  SE_CUDA_CHECK(err, cudaEventCreateWithFlags(&w->pushed, cudaEventDisableTiming));
  return SE_OK;
}

/* Allocates the device arrays of the image and the per-step buffers for count slices; CB: the run
 * offsets ix->run_off (run r = chunk * tiles + tile: the chunk's records of the tile). */
static int allocate_image(se_tdbem_cuda_t g, image_index *ix, se_error *err) {
  const size_t size = g->precision == SE_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
  int sms = 0;
  SE_CUDA_CHECK(err, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, g->device));
  const int64_t target = (int64_t)sms * 64; /* warps: enough to fill the device twice */
  int64_t chunks = (target + g->tiles - 1) / g->tiles;
  const int64_t short_runs = (g->count + SE_TDBEM_CHUNK_SLICES - 1) / SE_TDBEM_CHUNK_SLICES;
  chunks = chunks < short_runs ? short_runs : chunks;
  if (g->kernel == SE_TDBEM_GPU_CB) {
    /* whole waves: the thread-blocks (chunks x tile blocks) fill the smallest number of waves of
     * resident blocks (of the ng 8 kernel) that holds them, so that no wave runs nearly empty */
    int per_sm = 0;
    SE_CUDA_CHECK(err, se_tdbem_sum_blocks_per_sm(0, g->precision == SE_PRECISION_SINGLE, 8,
                                                  g->bc, g->win_max, &per_sm));
    const int64_t wave = (int64_t)per_sm * sms;
    const int64_t tile_blocks = (g->tiles + SE_TDBEM_WARPS - 1) / SE_TDBEM_WARPS;
    if (wave > 0) {
      const int64_t waves = (chunks * tile_blocks + wave - 1) / wave;
      chunks = waves * wave / tile_blocks;
    }
  }
  chunks = chunks < 1 ? 1 : (chunks > g->count ? g->count : chunks);
  g->chunk = (g->count + chunks - 1) / chunks;
  g->chunks = (int)((g->count + g->chunk - 1) / g->chunk);
  SE_CUDA_CHECK(err, cudaMalloc((void **)&g->hist, (size_t)(g->count * g->hist_len) * sizeof(double)));
  SE_CUDA_CHECK(err, cudaMalloc((void **)&g->partial,
                                (size_t)g->chunks * SE_TDBEM_NG_MAX * g->n * sizeof(double)));
  SE_CUDA_CHECK(err, cudaMalloc((void **)&g->a_d, (size_t)g->count * sizeof(double)));
  SE_CUDA_CHECK(err, cudaMallocHost((void **)&g->out_h,
                                    (size_t)SE_TDBEM_NG_MAX * g->n * sizeof(double)));
  SE_CUDA_CHECK(err, cudaHostGetDevicePointer((void **)&g->out_mapped, g->out_h, 0));
  SE_CUDA_CHECK(err, cudaMallocHost((void **)&g->a_h, (size_t)g->count * sizeof(double)));
  if (g->kernel == SE_TDBEM_GPU_CB) {
    const int64_t runs = (int64_t)g->chunks * g->tiles;
    SE_CALLOC(err, ix->run_off, runs + 1, "the run offsets of the GPU image");
    for (int64_t r = 0; r < runs; r++) {
      const int64_t c = r / g->tiles, t = r % g->tiles;
      const int64_t j1 = (c + 1) * g->chunk < g->count ? (c + 1) * g->chunk : g->count;
      int64_t bytes = 0;
      for (int64_t j = c * g->chunk; j < j1; j++)
        bytes += ix->cbytes[j * g->tiles + t];
      if (bytes > INT32_MAX - SE_TDBEM_CB_RING(8))
        SE_FAIL(err, SE_ERR_UNSUPPORTED,
                "GPU image: the CB records of tile %lld over %lld slices take %lld bytes (the "
                "kernel addresses a run with 32-bit offsets)",
                (long long)t, (long long)(j1 - c * g->chunk), (long long)bytes);
      ix->run_off[r + 1] = ix->run_off[r] + bytes;
    }
    SE_CUDA_CHECK(err, cudaMalloc((void **)&g->run_off, (size_t)(runs + 1) * sizeof(int64_t)));
    /* slack: the float kernel copies whole groups, also past the end of the last run */
    SE_CUDA_CHECK(err, cudaMalloc(&g->cb, (size_t)ix->run_off[runs] + SE_TDBEM_CB_GROUP));
    SE_CUDA_CHECK(err, cudaMemcpy(g->run_off, ix->run_off, (size_t)(runs + 1) * sizeof(int64_t),
                                  cudaMemcpyHostToDevice));
    if (ix->win) {
      const int64_t tile_blocks = (g->tiles + SE_TDBEM_WARPS - 1) / SE_TDBEM_WARPS;
      const size_t wb = (size_t)(2 * g->count * tile_blocks) * sizeof(int32_t);
      SE_CUDA_CHECK(err, cudaMalloc((void **)&g->cb_win, wb));
      SE_CUDA_CHECK(err, cudaMemcpy(g->cb_win, ix->win, wb, cudaMemcpyHostToDevice));
    }
    return SE_OK;
  }
  SE_CUDA_CHECK(err, cudaMalloc((void **)&g->blk_ptr, (size_t)(ix->entries + 1) * sizeof(int64_t)));
  SE_CUDA_CHECK(err, cudaMalloc((void **)&g->tile_k, (size_t)(2 * ix->entries + 1) * sizeof(int32_t)));
  SE_CUDA_CHECK(err, cudaMalloc(&g->val, (size_t)(ix->values + 1) * size));
  SE_CUDA_CHECK(err, cudaMalloc((void **)&g->blk_k0, ((size_t)ix->blocks + 1) * sizeof(int32_t)));
  SE_CUDA_CHECK(err, cudaMemcpy(g->blk_ptr, ix->blk_ptr, (size_t)(ix->entries + 1) * sizeof(int64_t),
                                cudaMemcpyHostToDevice));
  SE_CUDA_CHECK(err, cudaMemcpy(g->tile_k, ix->tile_k, (size_t)(2 * ix->entries + 1) * sizeof(int32_t),
                                cudaMemcpyHostToDevice));
  return SE_OK;
}

static void stage_free(stage *st) {
  cudaFreeHost(st->val);
  cudaFreeHost(st->k0);
  *st = (stage){0};
}

/* Pass 2 (FB): fills the blocks of slices [ja, jb) (OpenMP over slices) into the staging and
 * uploads them. */
static int fill_piece(se_tdbem_cuda_t g, const se_tdbem_slices *s, const image_index *ix,
                      int64_t ja, int64_t jb, stage *st, se_error *err) {
  const int tiles = g->tiles;
  const int64_t b_base = ix->blk_ptr[ja * tiles], v_base = ix->voff[ja * tiles];
  const int64_t b_n = ix->blk_ptr[jb * tiles] - b_base, v_n = ix->voff[jb * tiles] - v_base;
  int bad = 0;
#pragma omp parallel reduction(| : bad)
  {
    int64_t *bounds = calloc((size_t)tiles + 1, sizeof *bounds);
    int64_t *firsts = calloc((size_t)(ix->max_rvs + ix->max_blocks + 2), sizeof *firsts);
    int32_t *k0s = calloc((size_t)ix->max_blocks + 1, sizeof *k0s);
    bad |= !bounds || !firsts || !k0s;
#pragma omp for schedule(dynamic, 4)
    for (int64_t j = ja; j < jb; j++) {
      if (!bounds || !firsts || !k0s)
        continue;
      slice_tiles(s, j, tiles, bounds);
      for (int b = 0; b < tiles; b++) {
        const int64_t e = j * tiles + b;
        if (ix->blk_ptr[e + 1] == ix->blk_ptr[e])
          continue;
        tile_rvs t = {s, bounds[b], bounds[b + 1]};
        tile_fill(g, &t, st, ix->blk_ptr[e] - b_base, ix->voff[e] - v_base, k0s, firsts);
      }
    }
    free(k0s);
    free(firsts);
    free(bounds);
  }
  if (bad)
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory filling the blocks of slices [%lld, %lld)",
            (long long)ja, (long long)jb);
  const size_t size = g->precision == SE_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
  SE_CUDA_CHECK(err, cudaMemcpy((char *)g->val + (size_t)v_base * size, st->val, (size_t)v_n * size,
                                cudaMemcpyHostToDevice));
  SE_CUDA_CHECK(err, cudaMemcpy(g->blk_k0 + b_base, st->k0, (size_t)b_n * sizeof(int32_t),
                                cudaMemcpyHostToDevice));
  return SE_OK;
}

/* Pass 2 (FB) over every slice, in pieces of about STAGE_BYTES of values. */
static int fill_image_fb(se_tdbem_cuda_t g, const se_tdbem_slices *s, const image_index *ix,
                         se_error *err) {
  const int tiles = g->tiles;
  const int64_t size = g->precision == SE_PRECISION_SINGLE ? 4 : 8;
  stage st = {0};
  /* capacities: the largest piece (a piece grows until STAGE_BYTES or one slice) */
  for (int64_t ja = 0, jb; ja < s->count; ja = jb) {
    for (jb = ja + 1; jb < s->count && (ix->voff[(jb + 1) * tiles] - ix->voff[ja * tiles]) * size <= STAGE_BYTES; jb++)
      ;
    const int64_t v_n = ix->voff[jb * tiles] - ix->voff[ja * tiles];
    const int64_t b_n = ix->blk_ptr[jb * tiles] - ix->blk_ptr[ja * tiles];
    st.values_cap = v_n > st.values_cap ? v_n : st.values_cap;
    st.blocks_cap = b_n > st.blocks_cap ? b_n : st.blocks_cap;
  }
  int rc = SE_OK;
  const size_t vb = (size_t)(st.values_cap + 1) * (size_t)size, bb = (size_t)st.blocks_cap + 1;
  if (cudaMallocHost(&st.val, vb) != cudaSuccess ||
      cudaMallocHost((void **)&st.k0, bb * sizeof(int32_t)) != cudaSuccess)
    rc = se_error_set(err, SE_ERR_CUDA, __FILE__, __LINE__, __func__,
                      "cudaMallocHost of the GPU image staging (%zu bytes of values) failed: %s", vb,
                      cudaGetErrorString(cudaGetLastError()));
  for (int64_t ja = 0, jb; rc == SE_OK && ja < s->count; ja = jb) {
    for (jb = ja + 1; jb < s->count && (ix->voff[(jb + 1) * tiles] - ix->voff[ja * tiles]) * size <= STAGE_BYTES; jb++)
      ;
    rc = fill_piece(g, s, ix, ja, jb, &st, err);
  }
  stage_free(&st);
  return rc;
}

/* Pass 2 (CB): the records of the runs, in pieces of consecutive runs of about STAGE_BYTES
 * (OpenMP over the runs of a piece), staged and uploaded. */
static int fill_image_cb(se_tdbem_cuda_t g, const se_tdbem_slices *s, const image_index *ix,
                         se_error *err) {
  const int64_t runs = (int64_t)g->chunks * g->tiles, *off = ix->run_off;
  const size_t vsize = g->precision == SE_PRECISION_SINGLE ? 4 : 8;
  const int stride = se_tdbem_cb_pair_stride(g->win_max);
  const int64_t tile_blocks = (g->tiles + SE_TDBEM_WARPS - 1) / SE_TDBEM_WARPS;
  int64_t cap = 0;
  for (int64_t ra = 0, rb; ra < runs; ra = rb) {
    for (rb = ra + 1; rb < runs && off[rb + 1] - off[ra] <= STAGE_BYTES; rb++)
      ;
    cap = off[rb] - off[ra] > cap ? off[rb] - off[ra] : cap;
  }
  unsigned char *st = NULL;
  if (cudaMallocHost((void **)&st, (size_t)cap + 16) != cudaSuccess)
    SE_FAIL(err, SE_ERR_CUDA, "cudaMallocHost of the GPU image staging (%lld bytes) failed: %s",
            (long long)cap, cudaGetErrorString(cudaGetLastError()));
  int rc = SE_OK;
  for (int64_t ra = 0, rb; rc == SE_OK && ra < runs; ra = rb) {
    for (rb = ra + 1; rb < runs && off[rb + 1] - off[ra] <= STAGE_BYTES; rb++)
      ;
#pragma omp parallel for schedule(dynamic, 1)
    for (int64_t r = ra; r < rb; r++) {
      const int64_t c = r / g->tiles, t = r % g->tiles;
      const int64_t j1 = (c + 1) * g->chunk < g->count ? (c + 1) * g->chunk : g->count;
      int64_t pos = off[r] - off[ra], nb;
      for (int64_t j = c * g->chunk; j < j1; j++) {
        const int64_t e = j * g->tiles + t;
        if (ix->cbytes[e] == 0)
          continue;
        const tile_rvs tr = {s, ix->ra[e], ix->ra[e + 1]};
        /* the window: the tile's (double) or its thread-block's (float) */
        const int32_t *w = ix->win ? ix->win + 2 * (j * tile_blocks + t / SE_TDBEM_WARPS) : NULL;
        const int32_t k1 = w ? w[0] : ix->tile_k[2 * e + 1];
        const int32_t span = w ? w[1] : ix->tile_k[2 * e + 1] - ix->tile_k[2 * e] + 1;
        pos += cb_records(&tr, k1, span, j, vsize, stride, st + pos, &nb);
      }
    }
    if (cudaMemcpy((unsigned char *)g->cb + off[ra], st, (size_t)(off[rb] - off[ra]),
                   cudaMemcpyHostToDevice) != cudaSuccess)
      rc = se_error_set(err, SE_ERR_CUDA, __FILE__, __LINE__, __func__,
                        "uploading %lld bytes of CB records failed: %s",
                        (long long)(off[rb] - off[ra]), cudaGetErrorString(cudaGetLastError()));
  }
  cudaFreeHost(st);
  return rc;
}

/* The near field of the slices s by rows (radiate_kernel's layout): the row-vectors of
 * se_tdbem_slices_near(s, g->near_p) (kstart <= near_p, values up to k = near_p, the slices'
 * precision), a row's entries in slice order; uploaded. */
static int near_upload(se_tdbem_cuda_t g, const se_tdbem_slices *s, se_error *err) {
  const int64_t n = g->n, P = g->near_p;
  se_tdbem_slices nf = {0};
  SE_TRY(se_tdbem_slices_near(s, (int)P, &nf, err));
  const int64_t entries = nf.n_rowvectors, values = nf.n_values;
  int64_t *row_ptr = calloc((size_t)n + 1, sizeof *row_ptr);
  int64_t *vptr = malloc(((size_t)entries + 1) * sizeof *vptr);
  int32_t *col = malloc(((size_t)entries + 1) * sizeof *col);
  int32_t *kk = malloc(((size_t)entries + 1) * sizeof *kk);
  const size_t vsize = s->precision == SE_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
  int rc = row_ptr && vptr && col && kk ? SE_OK : SE_ERR_NOMEM;
  if (rc == SE_OK) {
    for (int64_t r = 0; r < entries; r++)
      row_ptr[nf.row[r] + 1]++;
    for (int64_t i = 0; i < n; i++)
      row_ptr[i + 1] += row_ptr[i];
    /* the row-vectors in slice order, each at its row's next entry (row_ptr[i] counts up to
     * row i + 1's start, then moves back) */
    for (int64_t j = 0; j < nf.count; j++)
      for (int64_t r = nf.slice_ptr[j]; r < nf.slice_ptr[j + 1]; r++) {
        const int64_t at = row_ptr[nf.row[r]]++;
        col[at] = (int32_t)j;
        kk[at] = (int32_t)(nf.kstart[r] | rv_len(&nf, r) << 16);
        vptr[at] = nf.val_ptr[r];
      }
    for (int64_t i = n; i > 0; i--)
      row_ptr[i] = row_ptr[i - 1];
    row_ptr[0] = 0;
    vptr[entries] = values;
  }
  if (rc == SE_OK &&
      (cudaMalloc((void **)&g->near_row_ptr, ((size_t)n + 1) * sizeof(int64_t)) != cudaSuccess ||
       cudaMalloc((void **)&g->near_val_ptr, ((size_t)entries + 1) * sizeof(int64_t)) != cudaSuccess ||
       cudaMalloc((void **)&g->near_col, ((size_t)entries + 1) * sizeof(int32_t)) != cudaSuccess ||
       cudaMalloc((void **)&g->near_kk, ((size_t)entries + 1) * sizeof(int32_t)) != cudaSuccess ||
       cudaMalloc(&g->near_val, ((size_t)values + 1) * vsize) != cudaSuccess ||
       cudaMalloc((void **)&g->rad_d, (size_t)(P * n) * sizeof(double)) != cudaSuccess ||
       cudaMallocHost((void **)&g->rad_h, (size_t)(P * n) * sizeof(double)) != cudaSuccess ||
       cudaMemcpy(g->near_row_ptr, row_ptr, ((size_t)n + 1) * sizeof(int64_t), cudaMemcpyHostToDevice) != cudaSuccess ||
       cudaMemcpy(g->near_val_ptr, vptr, ((size_t)entries + 1) * sizeof(int64_t), cudaMemcpyHostToDevice) != cudaSuccess ||
       cudaMemcpy(g->near_col, col, (size_t)entries * sizeof(int32_t), cudaMemcpyHostToDevice) != cudaSuccess ||
       cudaMemcpy(g->near_kk, kk, (size_t)entries * sizeof(int32_t), cudaMemcpyHostToDevice) != cudaSuccess ||
       cudaMemcpy(g->near_val, nf.val, (size_t)values * vsize, cudaMemcpyHostToDevice) != cudaSuccess))
    rc = SE_ERR_CUDA;
  free(row_ptr);
  free(vptr);
  free(col);
  free(kk);
  se_tdbem_slices_free(&nf);
  if (rc == SE_ERR_NOMEM)
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory building the near field (%lld entries)",
            (long long)entries);
  if (rc != SE_OK)
    SE_FAIL(err, SE_ERR_CUDA, "uploading the near field (%lld entries, %lld values) failed: %s",
            (long long)entries, (long long)values, cudaGetErrorString(cudaGetLastError()));
  return SE_OK;
}

int se_tdbem_cuda_set_interval(se_tdbem_cuda_t g, const se_tdbem_slices *s, const double *hist,
                               se_error *err) {
  if (!g || !s)
    SE_FAIL(err, SE_ERR_ARG, "GPU worker: no worker or no slices");
  if (s->n != g->n || s->kmax != g->kmax || s->precision != g->precision || s->count < 0)
    SE_FAIL(err, SE_ERR_ARG,
            "GPU worker: slices of N = %lld, kmax = %lld do not match the worker's N = %lld, "
            "kmax = %lld (or another precision)",
            (long long)s->n, (long long)s->kmax, (long long)g->n, (long long)g->kmax);
  SE_CUDA_CHECK(err, cudaSetDevice(g->device));
  SE_CUDA_CHECK(err, cudaStreamSynchronize(g->stream));
  SE_CUDA_CHECK(err, cudaStreamSynchronize(g->aux));
  free_device(g);
  g->first = s->first;
  if (s->count == 0)
    return SE_OK;
  for (int64_t r = s->slice_ptr[0]; r < s->slice_ptr[s->count]; r++) /* what the blocks assume */
    if (s->kstart[r] < 1 || s->kstart[r] + rv_len(s, r) - 1 > s->kmax || s->row[r] < 0 ||
        s->row[r] >= s->n)
      SE_FAIL(err, SE_ERR_INPUT,
              "GPU worker: row-vector %lld (row %d, kstart %d, %lld values) is outside rows "
              "[0, %lld) or k in [1, %lld]",
              (long long)r, s->row[r], s->kstart[r], (long long)rv_len(s, r), (long long)s->n,
              (long long)s->kmax);
  g->count = s->count;
  image_index ix = {0};
  int rc = image_measure(g, s, &ix, err);
  /* CB metadata: 16 bits for k1 - kstart (double) or half the window offset (float) */
  const int span_max = g->precision == SE_PRECISION_SINGLE ? 65000 : 65535;
  if (rc == SE_OK && g->kernel == SE_TDBEM_GPU_CB && g->win_max > span_max)
    rc = se_error_set(err, SE_ERR_INPUT, __FILE__, __LINE__, __func__,
                      "GPU worker (CB): the k range of a tile (double values) or of a "
                      "thread-block's tiles (float) spans %d > %d columns", g->win_max,
                      span_max);
  if (rc == SE_OK)
    rc = allocate_image(g, &ix, err);
  if (rc == SE_OK)
    rc = g->kernel == SE_TDBEM_GPU_CB ? fill_image_cb(g, s, &ix, err) : fill_image_fb(g, s, &ix, err);
  if (rc == SE_OK && g->near_p > 0)
    rc = near_upload(g, s, err);
  if (rc == SE_OK && cudaMemcpy(g->hist, hist, (size_t)(s->count * g->hist_len) * sizeof(double),
                                cudaMemcpyHostToDevice) != cudaSuccess)
    rc = se_error_set(err, SE_ERR_CUDA, __FILE__, __LINE__, __func__,
                      "uploading the history of %lld slices failed: %s", (long long)s->count,
                      cudaGetErrorString(cudaGetLastError()));
  /* the uploads' DMA (legacy stream) done before the worker's non-blocking streams use them */
  if (rc == SE_OK && cudaDeviceSynchronize() != cudaSuccess)
    rc = se_error_set(err, SE_ERR_CUDA, __FILE__, __LINE__, __func__,
                      "waiting for the slices' upload failed: %s",
                      cudaGetErrorString(cudaGetLastError()));
  if (rc == SE_OK) {
    const double size = g->precision == SE_PRECISION_SINGLE ? 4.0 : 8.0;
    g->stats = (se_tdbem_cuda_stats){.blocks = ix.blocks, .stored = ix.values};
    g->stats.bytes = g->kernel == SE_TDBEM_GPU_CB
                         ? (double)ix.run_off[(int64_t)g->chunks * g->tiles]
                         : (double)ix.values * size + (double)ix.entries * 12.0 + (double)ix.blocks * 4.0;
  } else {
    free_device(g);
  }
  image_index_free(&ix);
  return rc;
}

void se_tdbem_cuda_get_stats(se_tdbem_cuda_t g, se_tdbem_cuda_stats *st) { *st = g->stats; }

int se_tdbem_cuda_push(se_tdbem_cuda_t g, const double *a, int64_t m, se_error *err) {
  if (g->count == 0)
    return SE_OK;
  SE_CUDA_CHECK(err, cudaSetDevice(g->device));
  SE_CUDA_CHECK(err, cudaEventSynchronize(g->pushed)); /* a_h free again */
  memcpy(g->a_h, a, (size_t)g->count * sizeof *a);
  SE_CUDA_CHECK(err, cudaMemcpyAsync(g->a_d, g->a_h, (size_t)g->count * sizeof *a,
                                     cudaMemcpyHostToDevice, g->aux));
  SE_CUDA_CHECK(err, cudaEventRecord(g->pushed, g->aux));
  SE_CUDA_CHECK(err, se_tdbem_launch_push(g->hist, g->hist_len, g->count, m % g->hist_len, g->a_d,
                                          g->aux));
  SE_CUDA_CHECK(err, cudaEventRecord(g->hist_ready, g->aux));
  return SE_OK;
}

int se_tdbem_cuda_radiate_start(se_tdbem_cuda_t g, int p_max, se_error *err) {
  if (p_max < 0 || p_max > g->near_p)
    SE_FAIL(err, SE_ERR_ARG, "GPU radiation: p_max = %d outside [0, %d] (history %lld, kmax %lld)",
            p_max, g->near_p, (long long)g->hist_len, (long long)g->kmax);
  g->rad_p = g->count > 0 ? p_max : 0;
  if (g->rad_p == 0)
    return SE_OK;
  SE_CUDA_CHECK(err, cudaSetDevice(g->device));
  const se_tdbem_radiate_args a = {.n = g->n, .p_max = p_max,
                                   .single = g->precision == SE_PRECISION_SINGLE,
                                   .row_ptr = g->near_row_ptr,
                                   .val_ptr = g->near_val_ptr, .col = g->near_col,
                                   .kk = g->near_kk, .val = g->near_val, .a = g->a_d,
                                   .out = g->rad_d};
  SE_CUDA_CHECK(err, se_tdbem_launch_radiate(&a, g->aux));
  SE_CUDA_CHECK(err, cudaMemcpyAsync(g->rad_h, g->rad_d, (size_t)(p_max * g->n) * sizeof(double),
                                     cudaMemcpyDeviceToHost, g->aux));
  return SE_OK;
}

int se_tdbem_cuda_radiate_finish(se_tdbem_cuda_t g, double *out, se_error *err) {
  if (g->rad_p == 0)
    return SE_OK;
  SE_CUDA_CHECK(err, cudaSetDevice(g->device));
  SE_CUDA_CHECK(err, cudaStreamSynchronize(g->aux));
  const int64_t total = (int64_t)g->rad_p * g->n;
#pragma omp parallel for schedule(static)
  for (int64_t x = 0; x < total; x++)
    out[x] += g->rad_h[x];
  g->rad_p = 0;
  return SE_OK;
}

int se_tdbem_cuda_sum_start(se_tdbem_cuda_t g, int64_t n, int ng, se_error *err) {
  return se_tdbem_cuda_sum_start_known(g, n, n, ng, err);
}

int se_tdbem_cuda_sum_start_known(se_tdbem_cuda_t g, int64_t n, int64_t known, int ng,
                                  se_error *err) {
  if (known > n || known < n - ng)
    SE_FAIL(err, SE_ERR_ARG, "GPU summation: known = %lld outside [n - ng, n] = [%lld, %lld]",
            (long long)known, (long long)(n - ng), (long long)n);
  if (ng < 1 || ng > SE_TDBEM_NG_MAX || g->hist_len < g->kmax + ng || n < 0)
    SE_FAIL(err, SE_ERR_ARG,
            "GPU summation: ng = %d (1 .. %d, history %lld >= kmax + ng), n = %lld", ng,
            SE_TDBEM_NG_MAX, (long long)g->hist_len, (long long)n);
  g->ng = ng;
  if (g->count == 0)
    return SE_OK;
  SE_CUDA_CHECK(err, cudaSetDevice(g->device));
  const se_tdbem_kernel_args a = {.n = g->n, .count = g->count, .hist_len = g->hist_len,
                                  .chunk = g->chunk,
                                  .tiles = g->tiles, .chunks = g->chunks, .ng = ng, .bc = g->bc,
                                  .win_max = g->win_max, .time_slot = (int)(n % g->hist_len),
                                  .time32 = (int)(n < INT32_MAX ? n : INT32_MAX),
                                  .lag32 = (int)(n - known), .kmax32 = (int)g->kmax,
                                  .hist_len32 = (int)g->hist_len,
                                  .hist = g->hist, .blk_ptr = g->blk_ptr,
                                  .tile_k = g->tile_k, .blk_k0 = g->blk_k0,
                                  .run_off = g->run_off, .cb_win = g->cb_win, .stream = g->cb,
                                  .val = g->val,
                                  .partial = g->partial};
  SE_CUDA_CHECK(err, cudaStreamWaitEvent(g->stream, g->hist_ready, 0)); /* the pushes so far */
  SE_CUDA_CHECK(err, cudaEventRecord(g->start, g->stream));
  SE_CUDA_CHECK(err, se_tdbem_launch_sum(g->kernel == SE_TDBEM_GPU_FB, g->precision == SE_PRECISION_SINGLE,
                                         &a, g->stream));
  /* the sums go straight into the pinned host buffer (no separate download) */
  SE_CUDA_CHECK(err, se_tdbem_launch_reduce(g->partial, g->chunks, ng, g->n, g->out_mapped,
                                            g->stream));
  SE_CUDA_CHECK(err, cudaEventRecord(g->stop, g->stream));
  return SE_OK;
}

int se_tdbem_cuda_sum_finish(se_tdbem_cuda_t g, double *out, double *device_s, se_error *err) {
  if (device_s)
    *device_s = 0.0;
  if (g->count == 0)
    return SE_OK;
  SE_CUDA_CHECK(err, cudaSetDevice(g->device));
  SE_CUDA_CHECK(err, cudaStreamSynchronize(g->stream));
  if (device_s) {
    float ms = 0.0f;
    SE_CUDA_CHECK(err, cudaEventElapsedTime(&ms, g->start, g->stop));
    *device_s = 1e-3 * ms;
  }
  const int64_t total = (int64_t)g->ng * g->n;
#pragma omp parallel for schedule(static)
  for (int64_t x = 0; x < total; x++)
    out[x] += g->out_h[x];
  return SE_OK;
}

void se_tdbem_cuda_destroy(se_tdbem_cuda_t g) {
  if (!g)
    return;
  cudaSetDevice(g->device);
  if (g->stream)
    cudaStreamSynchronize(g->stream);
  if (g->aux)
    cudaStreamSynchronize(g->aux);
  free_device(g);
  if (g->start)
    cudaEventDestroy(g->start);
  if (g->stop)
    cudaEventDestroy(g->stop);
  if (g->pushed)
    cudaEventDestroy(g->pushed);
  if (g->hist_ready)
    cudaEventDestroy(g->hist_ready);
  if (g->stream)
    cudaStreamDestroy(g->stream);
  if (g->aux)
    cudaStreamDestroy(g->aux);
  free(g);
}

/* ---- the cuSPARSE front approach ------------------------------------------------------- */

struct se_tdbem_cusparse_front {
  int64_t n, count, kmax, nnz;
  cudaDataType type;
  cusparseHandle_t handle;
  cusparseSpMatDescr_t *mat; /* [kmax], NULL where M_k is empty */
  cusparseDnVecDescr_t *x;   /* [kmax] */
  cusparseDnVecDescr_t y;
  int32_t *row_ptr, *col;
  void *val, *past, *out, *buffer;
};

void se_tdbem_cusparse_front_destroy(se_tdbem_cusparse_front_t f) {
  if (!f)
    return;
  for (int64_t k = 0; f->mat && k < f->kmax; k++) {
    if (f->mat[k])
      cusparseDestroySpMat(f->mat[k]);
    if (f->x[k])
      cusparseDestroyDnVec(f->x[k]);
  }
  if (f->y)
    cusparseDestroyDnVec(f->y);
  if (f->handle)
    cusparseDestroy(f->handle);
  cudaFree(f->row_ptr);
  cudaFree(f->col);
  cudaFree(f->val);
  cudaFree(f->past);
  cudaFree(f->out);
  cudaFree(f->buffer);
  free(f->mat);
  free(f->x);
  free(f);
}

/* Uploads the CSR matrices of h (32-bit row offsets per matrix) and makes the descriptors. */
static int front_upload(se_tdbem_cusparse_front_t f, const se_tdbem_front *h, se_error *err) {
  const size_t size = h->precision == SE_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
  const int64_t n = h->n, kmax = h->kmax;
  int32_t *rp;
  SE_CALLOC(err, rp, kmax * (n + 1), "32-bit CSR row offsets");
  int rc = SE_OK;
  for (int64_t k = 0; k < kmax && rc == SE_OK; k++) {
    const int64_t *src = h->row_ptr + k * (n + 1);
    if (src[n] - src[0] > INT32_MAX)
      rc = se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__,
                        "M_%lld has %lld entries: more than cuSPARSE's 32-bit offsets",
                        (long long)(k + 1), (long long)(src[n] - src[0]));
    for (int64_t i = 0; i <= n; i++)
      rp[k * (n + 1) + i] = (int32_t)(src[i] - src[0]);
  }
  if (rc == SE_OK &&
      (cudaMalloc((void **)&f->row_ptr, (size_t)(kmax * (n + 1)) * sizeof(int32_t)) != cudaSuccess ||
       cudaMalloc((void **)&f->col, (size_t)(h->nnz + 1) * sizeof(int32_t)) != cudaSuccess ||
       cudaMalloc(&f->val, (size_t)(h->nnz + 1) * size) != cudaSuccess ||
       cudaMemcpy(f->row_ptr, rp, (size_t)(kmax * (n + 1)) * sizeof(int32_t), cudaMemcpyHostToDevice) != cudaSuccess ||
       cudaMemcpy(f->col, h->col, (size_t)h->nnz * sizeof(int32_t), cudaMemcpyHostToDevice) != cudaSuccess ||
       cudaMemcpy(f->val, h->val, (size_t)h->nnz * size, cudaMemcpyHostToDevice) != cudaSuccess))
    rc = se_error_set(err, SE_ERR_CUDA, __FILE__, __LINE__, __func__,
                      "uploading %lld CSR entries failed: %s", (long long)h->nnz,
                      cudaGetErrorString(cudaGetLastError()));
  free(rp);
  return rc;
}

int se_tdbem_cusparse_front_create(const se_tdbem_slices *s, se_tdbem_cusparse_front_t *out,
                                   se_error *err) {
  *out = NULL;
  se_tdbem_cusparse_front_t f;
  SE_CALLOC(err, f, 1, "the cuSPARSE front");
  *out = f;
  se_tdbem_front h = {0};
  SE_TRY(se_tdbem_front_create(s, &h, err));
  f->n = h.n;
  f->count = h.count;
  f->kmax = h.kmax;
  f->nnz = h.nnz;
  f->type = h.precision == SE_PRECISION_SINGLE ? CUDA_R_32F : CUDA_R_64F;
  const size_t size = h.precision == SE_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
  int rc = front_upload(f, &h, err);
  int64_t *nnz_k = NULL;
  if (rc == SE_OK) {
    nnz_k = calloc((size_t)h.kmax, sizeof *nnz_k);
    f->mat = calloc((size_t)h.kmax, sizeof *f->mat);
    f->x = calloc((size_t)h.kmax, sizeof *f->x);
    if (!nnz_k || !f->mat || !f->x)
      rc = se_error_set(err, SE_ERR_NOMEM, __FILE__, __LINE__, __func__,
                        "out of memory for %lld cuSPARSE descriptors", (long long)h.kmax);
  }
  for (int64_t k = 0; rc == SE_OK && k < h.kmax; k++)
    nnz_k[k] = h.row_ptr[k * (h.n + 1) + h.n] - h.row_ptr[k * (h.n + 1)];
  se_tdbem_front_free(&h);
  if (rc != SE_OK) {
    free(nnz_k);
    return rc;
  }
  rc = SE_ERR_CUDA;
  size_t buffer = 0;
  const double one = 1.0;
  const float onef = 1.0f;
  const void *alpha = f->type == CUDA_R_32F ? (const void *)&onef : (const void *)&one;
  do {
    if (cudaMalloc(&f->past, (size_t)(f->kmax * f->count + 1) * size) != cudaSuccess ||
        cudaMalloc(&f->out, (size_t)f->n * size) != cudaSuccess ||
        se_tdbem_launch_fill(f->past, f->type == CUDA_R_32F, f->kmax * f->count, 0) != cudaSuccess ||
        cusparseCreate(&f->handle) != CUSPARSE_STATUS_SUCCESS ||
        cusparseCreateDnVec(&f->y, f->n, f->out, f->type) != CUSPARSE_STATUS_SUCCESS)
      break;
    int64_t off = 0, k;
    for (k = 0; k < f->kmax; k++) {
      if (nnz_k[k] > 0) {
        size_t b = 0;
        if (cusparseCreateCsr(&f->mat[k], f->n, f->count, nnz_k[k], f->row_ptr + k * (f->n + 1),
                              f->col + off, (char *)f->val + (size_t)off * size, CUSPARSE_INDEX_32I,
                              CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO,
                              f->type) != CUSPARSE_STATUS_SUCCESS ||
            cusparseCreateDnVec(&f->x[k], f->count, (char *)f->past + (size_t)(k * f->count) * size,
                                f->type) != CUSPARSE_STATUS_SUCCESS ||
            cusparseSpMV_bufferSize(f->handle, CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, f->mat[k],
                                    f->x[k], alpha, f->y, f->type, CUSPARSE_SPMV_CSR_ALG1,
                                    &b) != CUSPARSE_STATUS_SUCCESS)
          break;
        buffer = b > buffer ? b : buffer;
      }
      off += nnz_k[k];
    }
    if (k < f->kmax || cudaMalloc(&f->buffer, buffer + 16) != cudaSuccess)
      break;
    rc = SE_OK;
  } while (0);
  free(nnz_k);
  if (rc != SE_OK)
    SE_FAIL(err, SE_ERR_CUDA, "setting up the cuSPARSE front (%lld matrices, %lld entries) failed: %s",
            (long long)f->kmax, (long long)f->nnz, cudaGetErrorString(cudaGetLastError()));
  return SE_OK;
}

int se_tdbem_cusparse_front_step(se_tdbem_cusparse_front_t f, int64_t *nnz, se_error *err) {
  if (nnz)
    *nnz = f->nnz;
  const double one = 1.0;
  const float onef = 1.0f;
  const int single = f->type == CUDA_R_32F;
  const size_t size = single ? sizeof(float) : sizeof(double);
  SE_CUDA_CHECK(err, cudaMemset(f->out, 0, (size_t)f->n * size));
  for (int64_t k = 0; k < f->kmax; k++) {
    if (!f->mat[k])
      continue;
    SE_CUSPARSE_CHECK(err, cusparseSpMV(f->handle, CUSPARSE_OPERATION_NON_TRANSPOSE,
                                        single ? (const void *)&onef : (const void *)&one,
                                        f->mat[k], f->x[k],
                                        single ? (const void *)&onef : (const void *)&one, f->y,
                                        f->type, CUSPARSE_SPMV_CSR_ALG1, f->buffer));
  }
  SE_CUDA_CHECK(err, cudaDeviceSynchronize());
  return SE_OK;
}
