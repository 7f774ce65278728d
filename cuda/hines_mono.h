/* Batched Hines solves on the GPU, one morphology shared by every system ("mono-morphology"),
 * one thread per system (docs/gpu-hines.md). Usable from C; the launchers live in hines_mono.cu.
 *
 * The system (paper 000, Algorithm 1). A tree of n rows, parent p(i) < i for i >= 1, p(0) = -1,
 * shared by all S systems of a batch. Each system s has four arrays of n doubles u, l, d, rhs:
 *
 *     row i:  d_i x_i + l_i x_p(i) + sum_{c : p(c) = i} u_c x_c = rhs_i
 *
 * i.e. l_i is the entry of row i in the column of its parent (below the diagonal) and u_i the
 * entry of row p(i) in column i (above the diagonal); u_0 and l_0 are not used. This is exactly
 * Algorithm 1 of paper 000:
 *
 *     for i = n-1 .. 1:  f = u_i / d_i;  d_p(i) -= f l_i;  rhs_p(i) -= f rhs_i
 *     rhs_0 /= d_0
 *     for i = 1 .. n-1:  rhs_i -= l_i rhs_p(i);  rhs_i /= d_i
 *
 * A solve leaves the solution x in rhs, keeps u and l, and overwrites d (every kernel). The
 * neuron engine's matrix is symmetric (u_i = l_i = -g_i,p(i)); the kernels do not assume it.
 *
 * Layouts (se_hines_index below gives the position of row i of system s in each array):
 *   FLAT   system-contiguous:            s n + i
 *   FULL   Full-Interleaved, row-major:  i S + s
 *   BLOCK  Block-Interleaved, BS systems per block, interleaved inside the block:
 *          (s / BS) n BS + i BS + s % BS; the last block is padded to BS systems (padding
 *          systems are never computed).
 */
#ifndef SE_HINES_MONO_H
#define SE_HINES_MONO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "simengine/error.h"
#include "hines_tree.h"
#include "se_random.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__CUDACC__)
#define SE_HINES_HD __host__ __device__
#else
#define SE_HINES_HD
#endif

typedef enum se_hines_layout {
  SE_HINES_LAYOUT_FLAT = 0,
  SE_HINES_LAYOUT_FULL = 1,
  SE_HINES_LAYOUT_BLOCK = 2
} se_hines_layout;

/* The kernels. The paper's four are Algorithm 1 written plainly for their layout; STREAM is the
 * optimised kernel (any layout; docs/gpu-hines.md says where its bytes go). */
typedef enum se_hines_kernel {
  SE_HINES_KERNEL_AUTO = 0,         /* the cheaper of STREAM and COOP by the cost model (COOP
                                       only on FULL and BLOCK, and only when no STREAM setting
                                       is given); else the layout's paper kernel */
  SE_HINES_KERNEL_FLAT = 1,         /* paper: Flat (FLAT layout) */
  SE_HINES_KERNEL_FULL = 2,         /* paper: Full-Interleaved (FULL layout) */
  SE_HINES_KERNEL_BLOCK = 3,        /* paper: Block-Interleaved (BLOCK layout, BS 32, 64 or 128) */
  SE_HINES_KERNEL_BLOCK_SHARED = 4, /* paper: Block-Shared, rhs in shared memory (BLOCK layout) */
  SE_HINES_KERNEL_STREAM = 5,       /* streaming kernel, any layout */
  SE_HINES_KERNEL_COOP = 6          /* several lanes per system (hines_coop.h), FULL and BLOCK;
                                       settings by the cost model */
} se_hines_kernel;

/* Settings of the STREAM kernel; 0 (or -1 for tail_rows) in a field means "automatic": the
 * batch chooses it by the cost model of docs/gpu-hines.md ("Automatic choice"). */
typedef struct se_hines_stream_config {
  int threads;     /* systems (threads) per CTA: 32, 64 or 128 */
  int stages;      /* depth of the cp.async pipeline: 4 or 8 stages of 256 row-values each */
  int ctas_per_sm; /* the shared memory of a multiprocessor is split between this many CTAs */
  int tail_rows;   /* rows 0..R-1 keep their intermediates in shared memory: -1 = as many as
                      fit, 0 = none (everything through device memory), R > 0 = at most R */
} se_hines_stream_config;

/* What a solve with a given kernel and configuration does (se_hines_batch_plan). */
typedef struct se_hines_plan_info {
  se_hines_kernel kernel;        /* resolved: never AUTO */
  se_hines_stream_config stream; /* resolved settings (STREAM only) */
  int tail_rows;                 /* R (STREAM) */
  int slots;                     /* branch-point accumulators in shared memory (STREAM) */
  size_t shared_bytes;           /* dynamic shared memory per CTA */
  int threads_per_cta;
  int copy16;                    /* STREAM: 1 = warp-cooperative 16-byte copies (FULL with an
                                    even S, BLOCK), 0 = 8-byte copies per thread */
  double model_bytes;            /* device-memory bytes per compartment by the byte model of
                                    docs/gpu-hines.md (40 = the floor) */
  int coop_lanes;                /* COOP: lanes per system */
  int coop_ctas_per_sm;          /* COOP: CTAs per multiprocessor */
} se_hines_plan_info;

/* The cost model shared by the automatic choices of STREAM and COOP settings (docs/gpu-hines.md),
 * in multiprocessor cycles. Host only; not collective. */

/* A launch of `blocks` CTAs, at most `ctas` resident per multiprocessor on `sms`: *waves waves,
 * *resident CTAs per multiprocessor (fewer than ctas when one partial wave spreads them). */
void se_hines_auto_waves(int64_t blocks, int ctas, int sms, double *waves, int64_t *resident);

/* Cost of a launch whose latency limit is t_lat cycles and that moves model_bytes per
 * compartment (n rows x n_systems) at the H200's bytes per cycle and multiprocessor (95% of
 * 4.27 TB/s over 132 SMs at 1.98 GHz): the larger of the two limits plus 1/4 of the smaller. */
double se_hines_auto_cost(double model_bytes, int32_t n, int64_t n_systems, int sms,
                          double t_lat);

typedef struct se_hines_batch se_hines_batch; /* a device batch (opaque) */

/* Position of row i of system s in an array of the given layout (see the top of this file). */
static inline SE_HINES_HD int64_t se_hines_index(se_hines_layout layout, int32_t n,
                                                 int64_t n_systems, int32_t bs, int64_t s,
                                                 int32_t i) {
  switch (layout) {
  case SE_HINES_LAYOUT_FULL:
    return (int64_t)i * n_systems + s;
  case SE_HINES_LAYOUT_BLOCK:
    return (s / bs) * (int64_t)n * bs + (int64_t)i * bs + s % bs;
  default:
    return s * (int64_t)n + i;
  }
}

/* Block sizes of the BLOCK layout: 32, 64, 128 (every kernel) and 4, 8, 16 (a block of one
 * warp's systems for the COOP kernel with 8, 4 or 2 lanes: each array of a warp's group is then
 * contiguous, row after row; the paper's Block kernel runs on them too, STREAM and Block-Shared
 * need 32 or more). */
static inline bool se_hines_block_size_ok(int32_t bs) {
  return bs == 4 || bs == 8 || bs == 16 || bs == 32 || bs == 64 || bs == 128;
}

/* Whether the batched kernels copy a row's values 16 bytes (two systems) at a time: BLOCK (padded
 * to whole blocks of an even size) and FULL with an even number of systems; FLAT rows are not
 * contiguous. */
static inline bool se_hines_copy16(se_hines_layout layout, int64_t n_systems) {
  return layout == SE_HINES_LAYOUT_BLOCK || (layout == SE_HINES_LAYOUT_FULL && n_systems % 2 == 0);
}

/* Number of doubles of each array in a layout (BLOCK includes the padding of the last block). */
static inline SE_HINES_HD int64_t se_hines_array_size(se_hines_layout layout, int32_t n,
                                                      int64_t n_systems, int32_t bs) {
  if (layout == SE_HINES_LAYOUT_BLOCK)
    return (n_systems + bs - 1) / bs * (int64_t)bs * n;
  return n_systems * (int64_t)n;
}

/* The reproducible random systems of the benchmark and the tests: a splitmix64 hash of (seed,
 * s, i, k) mapped to [0, 1). Row i of system s: u_i = -(0.1 + 0.9 U0), l_i = -(0.1 + 0.9 U1)
 * (0 for i = 0), rhs_i = 2 U2 - 1, d_i = 1.5 + children(i) + U3: strictly diagonally dominant
 * by at least 0.5 in every row and column. Bitwise the same on host and device. */
static inline SE_HINES_HD double se_hines_unit(uint64_t seed, int64_t s, int32_t i, int k) {
  return se_rand_unit(se_mix64(se_mix64(se_mix64(seed) + (uint64_t)s) +
                               4ull * (uint64_t)(uint32_t)i + (uint64_t)k));
}

/* Row i of random system s (see above); children = number of rows c with p(c) = i. */
static inline SE_HINES_HD void se_hines_random_row(uint64_t seed, int64_t s, int32_t i,
                                                   int32_t children, double *u, double *l,
                                                   double *d, double *rhs) {
  *u = i > 0 ? -(0.1 + 0.9 * se_hines_unit(seed, s, i, 0)) : 0.0;
  *l = i > 0 ? -(0.1 + 0.9 * se_hines_unit(seed, s, i, 1)) : 0.0;
  *rhs = 2.0 * se_hines_unit(seed, s, i, 2) - 1.0;
  *d = 1.5 + (double)children + se_hines_unit(seed, s, i, 3);
}

/* Creates a device batch of n_systems systems on the tree parent[0..n-1] (parent[0] = -1,
 * parent[i] < i), stored in `layout` (bs = BS for BLOCK, see se_hines_block_size_ok; ignored
 * otherwise), with its own CUDA stream on the current device. The arrays are allocated, not
 * initialised. Not collective. */
int se_hines_batch_create(const int32_t *parent, int32_t n, int64_t n_systems,
                         se_hines_layout layout, int32_t bs, se_hines_batch **batch,
                         se_error *err);

/* Frees the batch and its device memory (NULL is allowed). */
void se_hines_batch_destroy(se_hines_batch *batch);

/* The batch's stream: every operation below is ordered on it. */
cudaStream_t se_hines_batch_stream(const se_hines_batch *batch);

/* Copies host arrays (each of n x n_systems doubles, arranged in host_layout with bs = the
 * batch's BS for BLOCK; padding systems of a BLOCK host array need not exist: host BLOCK arrays
 * are read up to se_hines_array_size) into the batch, converting to the batch's layout. Any of
 * u, l, d, rhs may be NULL (left as is). Synchronous. Not collective. */
int se_hines_batch_upload(se_hines_batch *batch, se_hines_layout host_layout, const double *u,
                         const double *l, const double *d, const double *rhs, se_error *err);

/* Copies the rhs array (the solution after a solve) to the host in host_layout. Synchronous. */
int se_hines_batch_download(const se_hines_batch *batch, se_hines_layout host_layout, double *x,
                           se_error *err);

/* Copies rows 0..n-1 of system s of one array (0 u, 1 l, 2 d, 3 rhs) to x[0..n-1]. Synchronous. */
int se_hines_batch_download_system(const se_hines_batch *batch, int which, int64_t s, double *x,
                                  se_error *err);

/* The device limits a kernel setting is checked against (shared memory and multiprocessors). */
typedef struct se_hines_device_limits {
  size_t smem_per_sm, smem_optin, smem_reserved; /* bytes of shared memory */
  int sms;                                       /* multiprocessors */
} se_hines_device_limits;

/* The H200's limits (host-side choices and the emulations). */
const se_hines_device_limits *se_hines_h200_limits(void);

/* The device arrays and shape of a batch, for kernel families in other files (hines_coop.cu). */
typedef struct se_hines_batch_view {
  int32_t n, bs;            /* rows; BS (1 unless BLOCK) */
  int64_t n_systems;
  se_hines_layout layout;
  const int32_t *parent;    /* host copy of the tree, n entries */
  const double *u, *l;      /* device arrays in the batch's layout */
  double *d, *rhs;
  cudaStream_t stream;
  se_hines_device_limits limits; /* of the batch's device */
} se_hines_batch_view;

/* Fills *view with the batch's arrays, tree, stream and device limits (valid while the batch
 * lives). */
void se_hines_batch_get_view(const se_hines_batch *batch, se_hines_batch_view *view);

/* Fills u, l, d, rhs on the device with the random systems of se_hines_random_row (seed).
 * Asynchronous on the batch's stream. */
int se_hines_batch_fill_random(se_hines_batch *batch, uint64_t seed, se_error *err);

/* Keeps a device copy of d and rhs (the arrays a solve overwrites) / puts it back
 * (asynchronous device-to-device copies on the batch's stream). */
int se_hines_batch_save(se_hines_batch *batch, se_error *err);
int se_hines_batch_restore(se_hines_batch *batch, se_error *err);

/* Resolves kernel (AUTO allowed) and cfg (NULL = automatic) for this batch without solving.
 * SE_ERR_ARG: the kernel does not work on the batch's layout; SE_ERR_UNSUPPORTED: its shared
 * memory does not fit the device. The automatic rule is in docs/gpu-hines.md. When COOP is the
 * kernel, the first call builds its plan (a device copy of its step table). */
int se_hines_batch_plan(se_hines_batch *batch, se_hines_kernel kernel,
                       const se_hines_stream_config *cfg, se_hines_plan_info *info,
                       se_error *err);

/* Solves every system of the batch in place (rhs becomes x, d is overwritten) with the given
 * kernel (AUTO: see se_hines_batch_plan) and STREAM settings (NULL = automatic). Asynchronous on
 * the batch's stream; launch errors are reported here, execution errors at the next
 * synchronisation (se_hines_batch_sync). Not collective. */
int se_hines_batch_solve(se_hines_batch *batch, se_hines_kernel kernel,
                        const se_hines_stream_config *cfg, se_error *err);

/* Waits for the batch's stream and reports an execution error. */
int se_hines_batch_sync(se_hines_batch *batch, se_error *err);

/* Runs the thread bodies of a kernel on the host, thread after thread, over host arrays in the
 * given layout (FLAT kernel on FLAT, ...; STREAM on any): the same code and index arithmetic
 * as on the device, with cp.async replaced by plain copies. STREAM settings must be explicit
 * except tail_rows (-1 = as many as fit in the shared memory of an H200 multiprocessor).
 * For tests without a GPU. Not collective. */
int se_hines_emulate(const int32_t *parent, int32_t n, int64_t n_systems,
                          se_hines_layout layout, int32_t bs, se_hines_kernel kernel,
                          const se_hines_stream_config *cfg, const double *u, const double *l,
                          double *d, double *rhs, se_error *err);

/* Name of a kernel ("flat", "full", "block", "block-shared", "stream", "auto") and a layout. */
const char *se_hines_kernel_name(se_hines_kernel kernel);
const char *se_hines_layout_name(se_hines_layout layout);

#ifdef __cplusplus
}
#endif
#endif
