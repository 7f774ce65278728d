/* Launchers of the tdbem GPU kernels (cuda/tdbem_kernels.cu), called by cuda/tdbem_cuda.c. The
 * device image is described in docs/tdbem.md Section 12. */
#ifndef SE_TDBEM_KERNELS_H
#define SE_TDBEM_KERNELS_H

#include <cuda_runtime_api.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Rows per tile: one warp, one row per lane; tiles (warps) per thread-block of the summation
 * kernels (grid: tiles / SE_TDBEM_WARPS x chunks); most slices of a chunk (a CB run: a product's
 * thread-block lives about its slices' records long, so that the radiation's blocks, on the
 * priority stream, find free multiprocessors soon; the float CB kernel sets up the windows of a
 * chunk's slices with one thread each). */
enum { SE_TDBEM_TILE = 32, SE_TDBEM_WARPS = 4, SE_TDBEM_CHUNK_SLICES = 128 };

/* The CB stream: records of SE_TDBEM_CB_HEAD bytes of header and metadata, then the values padded
 * to 16 bytes; a warp's ring holds SE_TDBEM_CB_RING bytes (a power of 2), filled by groups of
 * SE_TDBEM_CB_GROUP bytes (32 per lane); row-vectors are cut into pieces of at most
 * SE_TDBEM_CB_PIECE values so that a record (+ the next header) fits in the ring behind the
 * group being loaded: HEAD + 32 PIECE 8 + 16 <= RING - GROUP. */
enum { SE_TDBEM_CB_HEAD = 144, SE_TDBEM_CB_PIECE = 24, SE_TDBEM_CB_GROUP = 1024 };
/* Float records (the pair layout, docs/tdbem.md Section 16): pieces of at most
 * SE_TDBEM_CB_PIECE_PAIRS values (11 pair columns: a record fits in the 4 KB ring behind a
 * group); 16 bytes of header, two tables (one per half-warp) of 12 16-bit offsets, 32 x 4 bytes
 * of metadata, then the value pairs from byte SE_TDBEM_CB_HEAD_PAIRS. */
enum { SE_TDBEM_CB_PIECE_PAIRS = 22, SE_TDBEM_CB_HEAD_PAIRS = 16 + 48 + 128 };
/* Ring bytes for values of `size` bytes: 4 KB for float (a smaller ring: more warps per
 * multiprocessor), 8 KB for double. */
#define SE_TDBEM_CB_RING(size) ((size) == 4 ? 4096 : 8192)

/* The window of the float (pair) kernel, one per (slice, thread-block of SE_TDBEM_WARPS tiles):
 * two float copies E and O of this many entries each (the same for every ng <= 16):
 * SE_TDBEM_CB_PIECE zeros, then E[SE_TDBEM_CB_PIECE + x] = window entry x (x < win_max + ng - 1,
 * win_max: the longest k range of a block's tiles in a slice) and O[i] = E[i - 1], so that any
 * two consecutive entries are one aligned 8-byte load from E or O. 16 mod 32 entries: O's banks
 * sit half a bank row from E's, so that lanes reading nearby entries of E and O rarely share a
 * bank. */
#ifdef __CUDACC__
__host__ __device__
#endif
static inline int se_tdbem_cb_pair_stride(int win_max) {
  return (SE_TDBEM_CB_PIECE + win_max + 16 + 2 + 15) / 32 * 32 + 16;
}

/* Entries of a warp's CB window in shared memory (the double kernel; float: the pair stride
 * above): SE_TDBEM_CB_PIECE zeros before position 0, the longest window (win_max + ng - 1
 * entries) and room to spare, rounded so that every warp's window starts 16-byte aligned; size:
 * bytes per entry. */
#ifdef __CUDACC__
__host__ __device__
#endif
static inline int se_tdbem_cb_window_stride(int win_max, int ng, int size) {
  const int per16 = 16 / size, entries = SE_TDBEM_CB_PIECE + win_max + ng;
  return (entries + per16 - 1) / per16 * per16;
}

/* Everything a summation kernel reads (device pointers). For (local slice j, tile b),
 * e = j * tiles + b: the blocks are blk_ptr[e] .. blk_ptr[e+1]-1 and the k range of their
 * values is [tile_k[2e], tile_k[2e+1]] (FB: the blocks' columns, padding included).
 * FB: block b has corner blk_k0[b] and values val[(b * bc + c) * 32 + lane] (k = corner + c, row
 *     tile * 32 + lane).
 * CB: a run r = chunk * tiles + tile is the bytes [run_off[r], run_off[r+1]) of stream: the
 *     records of the tile's blocks for the chunk's slices in order. A record (16-byte aligned):
 *     int32 k1, window span k1 - k0 + 1, local slice j, values nv; then 32 int32
 *     (k1 - kstart) | length << 16 | slot << 21 | count << 26 of the piece of row tile * 32 +
 *     lane (slots number the record's pieces by length, longest first, ties by lane; length 0:
 *     no piece; count: the number of pieces longer than c = lane, i.e. the values of column c,
 *     whatever the lane's own piece); then the nv
 *     values column-major, column c holding the values of the pieces longer than c in slot order
 *     (so the value of slot s is the column's s-th), padded with zeros to 16 bytes; double values.
 *     Float values use the pair layout: int32 k1, span, local slice j, record bytes | (number of
 *     pair columns) << 16, where k1 and span are those of the window of the record's slice and
 *     thread-block of tiles (the k range of the block's SE_TDBEM_WARPS tiles in the slice:
 *     cb_win[2 (j * tile blocks + tile / SE_TDBEM_WARPS) ..] = k1, span; span 0: no records;
 *     the kernel reads the window from cb_win); then uint16 pst[h][p], h < 2, p < 12: the byte
 *     offset, from the first value byte, of the half-warp h part of pair column p; then 32 uint32
 *     woff / 2 | slot << 16 | length << 21, slot numbering the pieces of the lane's half-warp by
 *     length, longest first (ties by lane), and the lane's window pairs starting at entry woff of E
 *     (from E's start, O = E + stride: se_tdbem_cb_pair_stride): with y = SE_TDBEM_CB_PIECE + k1 -
 *     kstart, woff = y - 1 in E for odd y, y in O for even y (lanes without a piece: y =
 *     SE_TDBEM_CB_PIECE); then the pair columns p = 0, 1, ..: for half-warp 0, then 1, for each
 *     slot s whose piece is longer than 2p, values 2p and 2p + 1 of its piece (0 after an odd
 *     length) as 8 bytes, so that the pair of slot s of half h is at pst[h][p] + 8 s; the record is
 *     padded with zeros to 16 bytes. The products are float for float values (summed over up to 4
 *     records in float, accumulated in double) and double for double values. */
typedef struct se_tdbem_kernel_args {
  int64_t n, count, hist_len, chunk;
  int tiles, chunks, ng, bc, win_max;
  /* a_m counted for m < known <= time: time mod hist_len, hist_len (< 2^30), min(time,
   * INT32_MAX), time - known, kmax */
  int time_slot, hist_len32, time32, lag32, kmax32;
  const double *hist; /* [count x hist_len] */
  const int64_t *blk_ptr;
  const int32_t *tile_k;
  const int32_t *blk_k0;
  const int64_t *run_off;
  const int32_t *cb_win; /* CB, float values: [count x tile blocks] (k1, span) */
  const void *stream;
  const void *val;
  double *partial; /* [chunks x ng x n] */
} se_tdbem_kernel_args;

/* The near field of a GPU worker for the radiation, by rows (device pointers): row i has the
 * entries row_ptr[i] .. row_ptr[i+1]-1 (slices ascending); entry e: local slice col[e],
 * kk[e] = kstart | (values kept) << 16 and those values (k = kstart ..) from val[val_ptr[e]]
 * (float when single, else double: the slices' precision). p_max <= SE_TDBEM_RAD_PMAX; out
 * [p_max x n]. */
enum { SE_TDBEM_RAD_PMAX = 31 };
typedef struct se_tdbem_radiate_args {
  int64_t n;
  int p_max, single;
  const int64_t *row_ptr, *val_ptr;
  const int32_t *col, *kk;
  const void *val;
  const double *a;
  double *out;
} se_tdbem_radiate_args;

/* out[(p-1) n + i] = sum_e M_p(i, col[e]) a[col[e]] (every entry for p <= p_max written). */
cudaError_t se_tdbem_launch_radiate(const se_tdbem_radiate_args *r, cudaStream_t stream);

/* The summation into a->partial (every entry written): kernel 0 CB, 1 FB; single: float values.
 * Returns the launch's error (cudaGetLastError). */
cudaError_t se_tdbem_launch_sum(int kernel, int single, const se_tdbem_kernel_args *a,
                                cudaStream_t stream);

/* The thread-blocks of the summation kernel (kernel 0 CB, 1 FB; single; ng; FB's bc) that one
 * multiprocessor holds at once for windows of win_max columns (0 if it cannot run). */
cudaError_t se_tdbem_sum_blocks_per_sm(int kernel, int single, int ng, int bc, int win_max,
                                       int *blocks);

/* out[q * n + i] = sum_c partial[(c * ng + q) * n + i]: the chunks summed in 8 consecutive groups
 * (each in chunk order), then the groups in order (deterministic for a given number of chunks);
 * out may be mapped pinned host memory. */
cudaError_t se_tdbem_launch_reduce(const double *partial, int chunks, int ng, int64_t n,
                                   double *out, cudaStream_t stream);

/* hist[j * hist_len + slot] = a[j], j = 0 .. count-1. */
cudaError_t se_tdbem_launch_push(double *hist, int64_t hist_len, int64_t count, int64_t slot,
                                 const double *a, cudaStream_t stream);

/* Fills v[0 .. n) with a deterministic pattern in [-1, 1) (benchmark histories). */
cudaError_t se_tdbem_launch_fill(void *v, int single, int64_t n, cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
