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

/* Bytes of values built on the host and uploaded at once (pinned staging). */
#define STAGE_BYTES ((int64_t)256 << 20)
/* Largest number of summation vectors. */
enum { NG_MAX = 16 };

struct se_tdbem_cuda {
  int device, bc, tiles, chunks, win_max, ng;
  se_tdbem_gpu_kernel kernel;
  se_precision precision;
  int64_t n, kmax, hist_len, first, count, chunk;
  se_tdbem_cuda_stats stats;
  cudaStream_t stream;
  cudaEvent_t start, stop, pushed;
  /* device */
  double *hist, *partial, *out_d, *a_d;
  int64_t *blk_ptr, *blk_voff;
  int32_t *tile_k, *blk_k0, *slot_ks, *slot_meta;
  void *val;
  /* pinned host */
  double *out_h, *a_h;
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

/* Contiguous-Blocking: the blocks of one tile: runs of at most 32 row-vectors, a new block where a
 * row repeats. Returns the number of blocks; starts (may be NULL) receives each block's first
 * row-vector (and starts[blocks] = rb). */
static int64_t cb_cut(const tile_rvs *t, int64_t *starts) {
  int64_t blocks = 0, in = 0;
  for (int64_t r = t->ra; r < t->rb; r++) {
    if (blocks == 0 || in == 32 || t->s->row[r] == t->s->row[r - 1]) {
      if (starts)
        starts[blocks] = r;
      blocks++;
      in = 0;
    }
    in++;
  }
  if (starts)
    starts[blocks] = t->rb;
  return blocks;
}

/* What pass 1 learns of one (slice, tile). */
typedef struct tile_info {
  int64_t blocks, values; /* values stored, padding included */
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
    ti.blocks = cb_cut(t, NULL);
    ti.values = values;
  }
  ti.k0 = (int32_t)lo;
  ti.k1 = (int32_t)hi;
  return ti;
}

/* The image's host-side index: per (slice, tile) e: blk_ptr[e], the first value voff[e], and the
 * window range. */
typedef struct image_index {
  int64_t entries, blocks, values, max_rvs, max_blocks;
  int64_t *blk_ptr, *voff; /* [entries + 1] */
  int32_t *tile_k;         /* [2 entries] */
} image_index;

static void image_index_free(image_index *ix) {
  free(ix->blk_ptr);
  free(ix->voff);
  free(ix->tile_k);
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

/* Pass 1 over every slice (OpenMP): the index. */
static int image_measure(se_tdbem_cuda_t g, const se_tdbem_slices *s, image_index *ix,
                         se_error *err) {
  const int tiles = g->tiles;
  ix->entries = s->count * tiles;
  SE_CALLOC(err, ix->blk_ptr, ix->entries + 1, "the block pointers of the GPU image");
  SE_CALLOC(err, ix->voff, ix->entries + 1, "the value offsets of the GPU image");
  SE_CALLOC(err, ix->tile_k, 2 * ix->entries + 1, "the window ranges of the GPU image");
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
  return SE_OK;
}

/* Host staging of one piece of slices [ja, jb): the values and the block data of its blocks. */
typedef struct stage {
  void *val;
  int32_t *k0, *ks, *meta;
  int64_t *voff;
  int64_t blocks_cap, values_cap;
} stage;

/* Copies value v of the slices s into dst[x] in the slices' precision. */
static inline void copy_value(const se_tdbem_slices *s, int64_t v, void *dst, int64_t x) {
  if (s->precision == SE_PRECISION_SINGLE)
    ((float *)dst)[x] = ((const float *)s->val)[v];
  else
    ((double *)dst)[x] = ((const double *)s->val)[v];
}

/* Pass 2 for one (slice, tile): its blocks from block index b_loc and values from v_loc of st. */
static void tile_fill(se_tdbem_cuda_t g, const tile_rvs *t, stage *st, int64_t b_loc,
                      int64_t v_loc, int32_t *k0s, int64_t *firsts, int64_t v_abs) {
  const se_tdbem_slices *s = t->s;
  if (g->kernel == SE_TDBEM_GPU_FB) {
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
    return;
  }
  int64_t *starts = firsts; /* CB: block starts */
  const int64_t blocks = cb_cut(t, starts);
  int64_t v = v_loc;
  for (int64_t b = 0; b < blocks; b++) {
    int64_t order[32];
    const int64_t n_in = starts[b + 1] - starts[b];
    for (int64_t k = 0; k < n_in; k++) { /* insertion sort by length, descending, stable */
      int64_t r = starts[b] + k, at = k;
      while (at > 0 && rv_len(s, order[at - 1]) < rv_len(s, r)) {
        order[at] = order[at - 1];
        at--;
      }
      order[at] = r;
    }
    int32_t *ks = st->ks + (b_loc + b) * 32, *meta = st->meta + (b_loc + b) * 32;
    for (int k = 0; k < 32; k++) {
      ks[k] = k < n_in ? s->kstart[order[k]] : 0;
      meta[k] = k < n_in ? (int32_t)((s->row[order[k]] & 31) | (rv_len(s, order[k]) << 5)) : 0;
    }
    st->voff[b_loc + b] = v_abs + (v - v_loc);
    const int64_t dmax = n_in > 0 ? rv_len(s, order[0]) : 0;
    for (int64_t c = 0; c < dmax; c++)
      for (int64_t k = 0; k < n_in && rv_len(s, order[k]) > c; k++)
        copy_value(s, s->val_ptr[order[k]] + c, st->val, v++);
  }
}

static void free_device(se_tdbem_cuda_t g) {
  void *p[] = {g->hist, g->partial, g->out_d, g->a_d, g->blk_ptr, g->blk_voff, g->tile_k,
               g->blk_k0, g->slot_ks, g->slot_meta, g->val};
  for (size_t k = 0; k < sizeof p / sizeof p[0]; k++)
    cudaFree(p[k]);
  cudaFreeHost(g->out_h);
  cudaFreeHost(g->a_h);
  g->hist = g->partial = g->out_d = g->a_d = g->out_h = g->a_h = NULL;
  g->blk_ptr = g->blk_voff = NULL;
  g->tile_k = g->blk_k0 = g->slot_ks = g->slot_meta = NULL;
  g->val = NULL;
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
  if (n < 1 || n > INT32_MAX - 32 || kmax < 1 || kmax > INT32_MAX / 2 || hist_len < kmax + 1)
    SE_FAIL(err, SE_ERR_ARG, "GPU worker: bad sizes N = %lld, kmax = %lld, history %lld",
            (long long)n, (long long)kmax, (long long)hist_len);
  se_tdbem_cuda_t w;
  SE_CALLOC(err, w, 1, "a GPU worker");
  *w = (struct se_tdbem_cuda){.device = device, .bc = kernel == SE_TDBEM_GPU_FB ? bc : 16,
                              .kernel = kernel, .precision = precision, .n = n, .kmax = kmax,
                              .hist_len = hist_len, .tiles = (int)((n + 31) / 32)};
  *g = w;
  SE_CUDA_CHECK(err, cudaSetDevice(device));
  SE_CUDA_CHECK(err, cudaStreamCreateWithFlags(&w->stream, cudaStreamNonBlocking));
  SE_CUDA_CHECK(err, cudaEventCreate(&w->start));
  SE_CUDA_CHECK(err, cudaEventCreate(&w->stop));
  SE_CUDA_CHECK(err, cudaEventCreateWithFlags(&w->pushed, cudaEventDisableTiming));
  return SE_OK;
}

/* Allocates the device arrays of the image and the per-step buffers for count slices. */
static int allocate_image(se_tdbem_cuda_t g, const image_index *ix, se_error *err) {
  const size_t size = g->precision == SE_PRECISION_SINGLE ? sizeof(float) : sizeof(double);
  int sms = 0;
  SE_CUDA_CHECK(err, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, g->device));
  const int64_t target = (int64_t)sms * 64; /* warps: enough to fill the device twice */
  int64_t chunks = (target + g->tiles - 1) / g->tiles;
  chunks = chunks < 1 ? 1 : (chunks > g->count ? g->count : chunks);
  g->chunk = (g->count + chunks - 1) / chunks;
  g->chunks = (int)((g->count + g->chunk - 1) / g->chunk);
  SE_CUDA_CHECK(err, cudaMalloc((void **)&g->hist, (size_t)(g->count * g->hist_len) * sizeof(double)));
  SE_CUDA_CHECK(err, cudaMalloc((void **)&g->partial, (size_t)g->chunks * NG_MAX * g->n * sizeof(double)));
  SE_CUDA_CHECK(err, cudaMalloc((void **)&g->out_d, (size_t)NG_MAX * g->n * sizeof(double)));
  SE_CUDA_CHECK(err, cudaMalloc((void **)&g->a_d, (size_t)g->count * sizeof(double)));
  SE_CUDA_CHECK(err, cudaMallocHost((void **)&g->out_h, (size_t)NG_MAX * g->n * sizeof(double)));
  SE_CUDA_CHECK(err, cudaMallocHost((void **)&g->a_h, (size_t)g->count * sizeof(double)));
  SE_CUDA_CHECK(err, cudaMalloc((void **)&g->blk_ptr, (size_t)(ix->entries + 1) * sizeof(int64_t)));
  SE_CUDA_CHECK(err, cudaMalloc((void **)&g->tile_k, (size_t)(2 * ix->entries + 1) * sizeof(int32_t)));
  SE_CUDA_CHECK(err, cudaMalloc(&g->val, (size_t)(ix->values + 1) * size));
  const size_t blocks = (size_t)ix->blocks + 1;
  if (g->kernel == SE_TDBEM_GPU_FB) {
    SE_CUDA_CHECK(err, cudaMalloc((void **)&g->blk_k0, blocks * sizeof(int32_t)));
  } else {
    SE_CUDA_CHECK(err, cudaMalloc((void **)&g->slot_ks, 32 * blocks * sizeof(int32_t)));
    SE_CUDA_CHECK(err, cudaMalloc((void **)&g->slot_meta, 32 * blocks * sizeof(int32_t)));
    SE_CUDA_CHECK(err, cudaMalloc((void **)&g->blk_voff, blocks * sizeof(int64_t)));
  }
  SE_CUDA_CHECK(err, cudaMemcpy(g->blk_ptr, ix->blk_ptr, (size_t)(ix->entries + 1) * sizeof(int64_t),
                                cudaMemcpyHostToDevice));
  SE_CUDA_CHECK(err, cudaMemcpy(g->tile_k, ix->tile_k, (size_t)(2 * ix->entries + 1) * sizeof(int32_t),
                                cudaMemcpyHostToDevice));
  return SE_OK;
}

static void stage_free(stage *st) {
  cudaFreeHost(st->val);
  cudaFreeHost(st->k0);
  cudaFreeHost(st->ks);
  cudaFreeHost(st->meta);
  cudaFreeHost(st->voff);
  *st = (stage){0};
}

/* Pass 2: fills the blocks of slices [ja, jb) (OpenMP over slices) into the staging and uploads
 * them. */
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
        tile_fill(g, &t, st, ix->blk_ptr[e] - b_base, ix->voff[e] - v_base, k0s, firsts,
                  ix->voff[e]);
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
  if (g->kernel == SE_TDBEM_GPU_FB) {
    SE_CUDA_CHECK(err, cudaMemcpy(g->blk_k0 + b_base, st->k0, (size_t)b_n * sizeof(int32_t),
                                  cudaMemcpyHostToDevice));
  } else {
    SE_CUDA_CHECK(err, cudaMemcpy(g->slot_ks + 32 * b_base, st->ks, (size_t)(32 * b_n) * sizeof(int32_t),
                                  cudaMemcpyHostToDevice));
    SE_CUDA_CHECK(err, cudaMemcpy(g->slot_meta + 32 * b_base, st->meta,
                                  (size_t)(32 * b_n) * sizeof(int32_t), cudaMemcpyHostToDevice));
    SE_CUDA_CHECK(err, cudaMemcpy(g->blk_voff + b_base, st->voff, (size_t)b_n * sizeof(int64_t),
                                  cudaMemcpyHostToDevice));
  }
  return SE_OK;
}

/* Pass 2 over every slice, in pieces of about STAGE_BYTES of values. */
static int fill_image(se_tdbem_cuda_t g, const se_tdbem_slices *s, const image_index *ix,
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
      (g->kernel == SE_TDBEM_GPU_FB && cudaMallocHost((void **)&st.k0, bb * sizeof(int32_t)) != cudaSuccess) ||
      (g->kernel == SE_TDBEM_GPU_CB &&
       (cudaMallocHost((void **)&st.ks, 32 * bb * sizeof(int32_t)) != cudaSuccess ||
        cudaMallocHost((void **)&st.meta, 32 * bb * sizeof(int32_t)) != cudaSuccess ||
        cudaMallocHost((void **)&st.voff, bb * sizeof(int64_t)) != cudaSuccess)))
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
  if (rc == SE_OK)
    rc = allocate_image(g, &ix, err);
  if (rc == SE_OK)
    rc = fill_image(g, s, &ix, err);
  if (rc == SE_OK && cudaMemcpy(g->hist, hist, (size_t)(s->count * g->hist_len) * sizeof(double),
                                cudaMemcpyHostToDevice) != cudaSuccess)
    rc = se_error_set(err, SE_ERR_CUDA, __FILE__, __LINE__, __func__,
                      "uploading the history of %lld slices failed: %s", (long long)s->count,
                      cudaGetErrorString(cudaGetLastError()));
  if (rc == SE_OK) {
    const double size = g->precision == SE_PRECISION_SINGLE ? 4.0 : 8.0;
    g->stats = (se_tdbem_cuda_stats){.slices = s->count, .blocks = ix.blocks, .stored = ix.values};
    g->stats.bytes = (double)ix.values * size + (double)ix.entries * 16.0 +
                     (double)ix.blocks * (g->kernel == SE_TDBEM_GPU_FB ? 4.0 : 264.0);
  } else {
    free_device(g);
  }
  image_index_free(&ix);
  return rc;
}

void se_tdbem_cuda_interval(se_tdbem_cuda_t g, int64_t *first, int64_t *count) {
  *first = g->first;
  *count = g->count;
}

void se_tdbem_cuda_get_stats(se_tdbem_cuda_t g, se_tdbem_cuda_stats *st) { *st = g->stats; }

int se_tdbem_cuda_push(se_tdbem_cuda_t g, const double *a, int64_t m, se_error *err) {
  if (g->count == 0)
    return SE_OK;
  SE_CUDA_CHECK(err, cudaSetDevice(g->device));
  SE_CUDA_CHECK(err, cudaEventSynchronize(g->pushed)); /* a_h free again */
  memcpy(g->a_h, a, (size_t)g->count * sizeof *a);
  SE_CUDA_CHECK(err, cudaMemcpyAsync(g->a_d, g->a_h, (size_t)g->count * sizeof *a,
                                     cudaMemcpyHostToDevice, g->stream));
  SE_CUDA_CHECK(err, cudaEventRecord(g->pushed, g->stream));
  SE_CUDA_CHECK(err, se_tdbem_launch_push(g->hist, g->hist_len, g->count, m % g->hist_len, g->a_d,
                                          g->stream));
  return SE_OK;
}

int se_tdbem_cuda_sum_start(se_tdbem_cuda_t g, int64_t n, int ng, se_error *err) {
  if (ng < 1 || ng > NG_MAX || g->hist_len < g->kmax + ng || n < 0)
    SE_FAIL(err, SE_ERR_ARG, "GPU summation: ng = %d (1 .. 16, history %lld >= kmax + ng), n = %lld",
            ng, (long long)g->hist_len, (long long)n);
  g->ng = ng;
  if (g->count == 0)
    return SE_OK;
  SE_CUDA_CHECK(err, cudaSetDevice(g->device));
  const se_tdbem_kernel_args a = {.n = g->n, .count = g->count, .hist_len = g->hist_len,
                                  .time = n, .kmax = g->kmax, .chunk = g->chunk,
                                  .tiles = g->tiles, .chunks = g->chunks, .ng = ng, .bc = g->bc,
                                  .win_max = g->win_max, .hist = g->hist, .blk_ptr = g->blk_ptr,
                                  .tile_k = g->tile_k, .blk_k0 = g->blk_k0,
                                  .slot_ks = g->slot_ks, .slot_meta = g->slot_meta,
                                  .blk_voff = g->blk_voff, .val = g->val, .partial = g->partial};
  SE_CUDA_CHECK(err, cudaEventRecord(g->start, g->stream));
  SE_CUDA_CHECK(err, se_tdbem_launch_sum(g->kernel == SE_TDBEM_GPU_FB, g->precision == SE_PRECISION_SINGLE,
                                         &a, g->stream));
  SE_CUDA_CHECK(err, se_tdbem_launch_reduce(g->partial, g->chunks, ng, g->n, g->out_d, g->stream));
  SE_CUDA_CHECK(err, cudaEventRecord(g->stop, g->stream));
  SE_CUDA_CHECK(err, cudaMemcpyAsync(g->out_h, g->out_d, (size_t)ng * g->n * sizeof(double),
                                     cudaMemcpyDeviceToHost, g->stream));
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
  free_device(g);
  if (g->start)
    cudaEventDestroy(g->start);
  if (g->stop)
    cudaEventDestroy(g->stop);
  if (g->pushed)
    cudaEventDestroy(g->pushed);
  if (g->stream)
    cudaStreamDestroy(g->stream);
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
