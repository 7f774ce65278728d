/* Batched tridiagonal solvers on the GPU (docs/gpu-tridiag.md): many independent systems
 *
 *   a[j] x[j-1] + b[j] x[j] + c[j] x[j+1] = d[j],   j = 0 .. n_s - 1   (a[0] and c[n_s-1] unused)
 *
 * in double precision. Our methods and the cuSPARSE peers sit behind one handle:
 *
 *   SE_TRIDIAG_THOMAS         cuThomasBatch (paper 001, Sec. 4.1.1): one thread per system, Thomas on
 *                             the interleaved layout, c' in a workspace, d' in x, the running values
 *                             read back from memory, two divisions per row (the paper's kernel).
 *   SE_TRIDIAG_THOMAS_REG     one thread per system, running values in registers, one reciprocal
 *                             per row, loads issued ahead. Still 72 B per row: c' and d' go to
 *                             memory and come back (the "extra bytes" of one-thread Thomas).
 *   SE_TRIDIAG_PART           register-partitioned Thomas: K threads per system, each owning a
 *                             chunk of M consecutive rows in registers; a modified Thomas sweep
 *                             reduces each chunk to 2 rows, the 2K-row reduced system is solved in
 *                             shared memory (PCR or one thread's Thomas), then every chunk is
 *                             finished in registers. Each row crosses device memory once
 *                             (a, b, c, d read, x written: the 40 B/row floor).
 *                             With pipeline = 2 the blocks are persistent and stage the next
 *                             group's rows in shared memory while solving the current one; with
 *                             pipeline = 3 they also solve each system in two halves of rows
 *                             (half 0 with its coupling to half 1 kept open in shared memory),
 *                             so that a block holds twice as many systems.
 *   SE_TRIDIAG_AUTO           PART with M, threads per system, systems per block and pipeline
 *                             chosen from (n, count, layout, CP or NCP); THOMAS_REG where PART
 *                             cannot hold the system.
 *   SE_TRIDIAG_CUSPARSE_*     cusparseDgtsvInterleavedBatch algorithms 0 (cuThomas), 1 (LU with
 *                             partial pivoting), 2 (QR), and cusparseDgtsv2StridedBatch (flat layout).
 *
 * Layouts (se_tridiag_index; device arrays of se_tridiag_storage doubles):
 *   interleaved (0; cuSPARSE gtsvInterleavedBatch's, our default): row j of system s at
 *     j * count + s;
 *   block-interleaved (B > 0; ours only, options.block_size = B): systems in blocks of B, each
 *     block a contiguous tile of n rows of B values: row j of system s at
 *     (s / B) * B * n + j * B + s % B (the engine's slot layout, paper 000's Block-Interleaved);
 *     PART then solves one tile per CUDA block, which reads contiguous memory whatever B is;
 *   flat (SE_TRIDIAG_LAYOUT_FLAT; CUSPARSE_STRIDED): row j of system s at s * n + j.
 * x holds the right-hand side on entry and the solution on exit. Our methods never write a, b, c;
 * the cuSPARSE interleaved routines may overwrite them (their prototypes take them non-const).
 *
 * Variable sizes (cuThomasVBatch): create with a device array sizes[count] (1 <= n_s <= n); the
 * storage stays n rows per system (padded). With compute_padding = 1 (CP) every system runs the
 * n rows, the padding rows read from memory and replaced by identity rows in registers (their
 * content is never used) and 0 written to x there; with compute_padding = 0 (NCP) each system
 * touches only its own n_s rows. THOMAS, THOMAS_REG, PART and AUTO accept sizes; cuSPARSE not.
 *
 * Every call checks CUDA and cuSPARSE and fills se_error; nothing synchronises the device except
 * first-time workspace allocations. None of these functions is collective. */
#ifndef SE_TRIDIAG_BATCH_H
#define SE_TRIDIAG_BATCH_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "se_cuda.h"
#include "se_random.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum se_tridiag_method {
  SE_TRIDIAG_AUTO = 0,
  SE_TRIDIAG_THOMAS = 1,
  SE_TRIDIAG_THOMAS_REG = 2,
  SE_TRIDIAG_PART = 3,
  SE_TRIDIAG_CUSPARSE_THOMAS = 4,  /* gtsvInterleavedBatch algo 0 */
  SE_TRIDIAG_CUSPARSE_LU = 5,      /* gtsvInterleavedBatch algo 1 */
  SE_TRIDIAG_CUSPARSE_QR = 6,      /* gtsvInterleavedBatch algo 2 */
  SE_TRIDIAG_CUSPARSE_STRIDED = 7, /* gtsv2StridedBatch, flat layout */
  SE_TRIDIAG_METHODS = 8
} se_tridiag_method;

/* Reduced-system solver of SE_TRIDIAG_PART. */
typedef enum se_tridiag_reduced {
  SE_TRIDIAG_REDUCED_DEFAULT = 0,
  SE_TRIDIAG_REDUCED_PCR = 1,   /* parallel cyclic reduction, all K threads of a system */
  SE_TRIDIAG_REDUCED_THOMAS = 2 /* Thomas by the first thread of each system */
} se_tridiag_reduced;

#define SE_TRIDIAG_LAYOUT_INTERLEAVED 0
#define SE_TRIDIAG_LAYOUT_FLAT (-1)

typedef struct se_tridiag_options {
  se_tridiag_method method;
  int block_size;        /* our methods: 0 = interleaved layout, B > 0 = block-interleaved */
  int rows_per_thread;   /* PART: chunk rows M (4, 8 or 16); 0 = chosen from (n, count) */
  int systems_per_block; /* PART: systems per CUDA block G; 0 = chosen (block_size when set) */
  int reduced;           /* PART: se_tridiag_reduced */
  int pipeline;          /* PART: 1 = one group of G systems per block, 2 = persistent blocks
                            that copy the next group's rows into shared memory (cp.async) while
                            solving the current one, 3 = as 2 with each system solved in two
                            halves of rows (G ceil(K / 2) threads per block; PCR only, K >= 2);
                            0 = chosen */
  int compute_padding;   /* variable sizes: 1 = CP, 0 = NCP */
} se_tridiag_options;

typedef struct se_tridiag se_tridiag;

/* Creates a solver for count systems of n rows (or of sizes[s] <= n rows when sizes, a device
 * array, is not NULL) on stream (0 = the default stream). Allocates the workspace of the method
 * (cuSPARSE: its handle; the buffer is sized at the first solve, which then synchronises).
 * SE_ERR_ARG for bad sizes or options, SE_ERR_UNSUPPORTED for sizes with a cuSPARSE method or
 * a PART configuration that does not fit a CUDA block. Not collective. */
int se_tridiag_create(const se_tridiag_options *opt, int n, int count, const int *sizes,
                      cudaStream_t stream, se_tridiag **out, se_error *err);

/* Solves the batch: device arrays a (lower), b (diagonal), c (upper), x (right-hand side in,
 * solution out) in the method's layout. Asynchronous on the solver's stream. Not collective. */
int se_tridiag_solve(se_tridiag *t, double *a, double *b, double *c, double *x, se_error *err);

void se_tridiag_destroy(se_tridiag *t);

/* The cuSPARSE interleaved methods (cusparse-thomas, -lu, -qr) on batches of other shapes through
 * one handle and one buffer, e.g. one batch per level of a branch-level Hines plan: count systems
 * of n rows (1 <= n <= the solver's n, 1 <= count <= its count) on the interleaved layout of that
 * count (row j of system s at j * count + s). SE_ERR_UNSUPPORTED for any other method, SE_ERR_ARG
 * for a shape larger than the solver's. Not collective. */

/* Bytes of cuSPARSE buffer that solving (a, b, c, x) of that shape needs (host query). */
int se_tridiag_shape_buffer(se_tridiag *t, int n, int count, double *a, double *b, double *c,
                            double *x, size_t *bytes, se_error *err);

/* Grows the solver's cuSPARSE buffer to at least bytes (synchronous when it allocates). */
int se_tridiag_reserve(se_tridiag *t, size_t bytes, se_error *err);

/* Solves a batch of that shape; grows the buffer first when it is too small (then synchronous),
 * else asynchronous on the solver's stream. */
int se_tridiag_solve_shape(se_tridiag *t, int n, int count, double *a, double *b, double *c,
                           double *x, se_error *err);

/* "thomas", "thomas-reg", "part", "auto", "cusparse-thomas", "cusparse-lu", "cusparse-qr",
 * "cusparse-strided"; NULL for an unknown method. */
const char *se_tridiag_method_name(se_tridiag_method m);

/* Parses a name of se_tridiag_method_name; -1 when unknown. */
int se_tridiag_method_parse(const char *name);

/* The layout the solver takes: SE_TRIDIAG_LAYOUT_FLAT (cusparse-strided), 0 (interleaved) or the
 * block size B of a block-interleaved layout. */
int se_tridiag_layout(const se_tridiag *t);

/* The block size B of the block-interleaved layout that AUTO runs best for (n, count) (from the
 * H200 sweep of docs/gpu-tridiag.md). */
int se_tridiag_block_size(int n, int count);

/* The configuration actually used, e.g. "part M=8 K=64 G=4 pcr", "part M=16 K=32 G=8 pcr pipe",
 * "part M=16 K=32 G=16 pcr split" or "cusparse-lu". */
void se_tridiag_describe(const se_tridiag *t, char *buf, size_t size);

/* Device bytes held by the solver besides the caller's arrays (workspace, cuSPARSE buffer). */
size_t se_tridiag_workspace_bytes(const se_tridiag *t);

/* ---- test and benchmark data ---------------------------------------------------------------- */

/* Fills a batch with random strictly diagonally dominant systems (see se_tridiag_random_row) in
 * the given layout; rows j >= sizes[s] get identity rows (0, 1, 0, 0). Asynchronous on stream.
 * Not collective. */
int se_tridiag_fill_random(int n, int count, const int *sizes, uint64_t seed, int layout,
                           double *a, double *b, double *c, double *x, cudaStream_t stream,
                           se_error *err);

/* Copies an array of n rows x count systems from layout `from` into layout `to` (src and dst
 * must not overlap). Asynchronous on stream. Not collective. */
int se_tridiag_relayout(int n, int count, int from, int to, const double *src, double *dst,
                        cudaStream_t stream, se_error *err);

#ifdef __CUDACC__
#define SE_TRIDIAG_HD __host__ __device__
#else
#define SE_TRIDIAG_HD
#endif

/* Position of row j of system s in a layout (see the top of this file). */
static inline SE_TRIDIAG_HD size_t se_tridiag_index(int layout, int n, int count, int s, int j) {
  if (layout == SE_TRIDIAG_LAYOUT_FLAT)
    return (size_t)s * (size_t)n + (size_t)j;
  if (layout > 0)
    return (size_t)(s / layout) * (size_t)layout * (size_t)n + (size_t)j * (size_t)layout +
           (size_t)(s % layout);
  return (size_t)j * (size_t)count + (size_t)s;
}

/* Doubles of one array of a batch in a layout (block-interleaved: whole blocks). */
static inline SE_TRIDIAG_HD size_t se_tridiag_storage(int layout, int n, int count) {
  if (layout > 0)
    return (size_t)((count + layout - 1) / layout) * (size_t)layout * (size_t)n;
  return (size_t)n * (size_t)count;
}

/* Uniform in [0, 1) from (seed, system, row, which). */
static inline SE_TRIDIAG_HD double se_tridiag_u01(uint64_t seed, uint64_t system, uint64_t row,
                                                  uint64_t which) {
  return se_rand_unit(se_mix64(seed ^ se_mix64(system * 0x100000001B3ull + row * 4u + which)));
}

/* Row j of random system s of size ns: a, c uniform in [-1, 1) (a = 0 at j = 0, c = 0 at
 * j = ns - 1), b = |a| + |c| + margin with margin uniform in [0.1, 1.1), d uniform in [-1, 1);
 * j >= ns gives the identity row (0, 1, 0, 0). Host and device compute the same doubles. */
static inline SE_TRIDIAG_HD void se_tridiag_random_row(uint64_t seed, uint64_t s, int j, int ns,
                                                       double *a, double *b, double *c,
                                                       double *d) {
  if (j >= ns) {
    *a = 0.0;
    *b = 1.0;
    *c = 0.0;
    *d = 0.0;
    return;
  }
  double av = j == 0 ? 0.0 : 2.0 * se_tridiag_u01(seed, s, (uint64_t)j, 0) - 1.0;
  double cv = j == ns - 1 ? 0.0 : 2.0 * se_tridiag_u01(seed, s, (uint64_t)j, 1) - 1.0;
  *a = av;
  *c = cv;
  *b = fabs(av) + fabs(cv) + 0.1 + se_tridiag_u01(seed, s, (uint64_t)j, 2);
  *d = 2.0 * se_tridiag_u01(seed, s, (uint64_t)j, 3) - 1.0;
}

#ifdef __cplusplus
}
#endif
#endif
