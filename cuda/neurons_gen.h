/* The generated ("gen") time step of the neurons engine (docs/gpu.md, "gen"). For each
 * morphology of a population, fused2's step (neurons_stream.h: the v-form row, the gate update
 * deferred to the next step, DCONST pivots precomputed) is written out at attach time as
 * straight-line code for that morphology (one kernel per morphology, launched over its groups)
 * and compiled by NVRTC for the device: one thread per cell, the tree in the code (no row
 * table), every per-row constant an immediate, the rows in a list schedule that interleaves
 * independent branches, y in registers (the rows eliminated last) and in shared memory. The hh
 * rows go through one loop over a table in constant memory before the elimination: their code
 * once (inlined at every hh row the code overflows the instruction cache; docs/gpu.md "Session
 * 11"); or (the default) in a kernel of their own (hh_split). Morphologies of more than 128 rows
 * take a warp per subtree instead of a thread per cell (warps). */
#ifndef SE_NEURONS_GEN_H
#define SE_NEURONS_GEN_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

#include "neurons_cuda.h"
#include "simengine/error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct se_neurons;

/* Largest morphology the generator writes out (its code grows with the rows). */
#define SE_GEN_MAX_ROWS 1024
/* Most morphologies per engine: each is a kernel that NVRTC compiles (0.5-5 s). */
#define SE_GEN_MAX_MORPHOLOGIES 64
/* Clamped compartments (over a morphology's cells) whose current its kernel keeps in registers;
 * with more, in their rows' rhs slots. */
#define SE_GEN_MAX_CLAMP_ROWS 8
/* Most warps per block of 32 cells (1024 threads). */
#define SE_GEN_MAX_WARPS 32

/* The compiled kernel of one morphology. */
typedef struct se_gen_kernel {
  int32_t morphology;
  cudaKernel_t kernel;
  size_t smem;     /* dynamic shared memory per block of 32 threads */
  int64_t threads; /* threads launched: the morphology's cells (in cell order), else its groups
                      times the width */
  void *groups;    /* device table of the morphology's groups (NULL in cell order) */
  cudaKernel_t currents; /* with hh_split: the hh rows' kernel "se_gen_currents_<m>", else NULL */
  int n_hh;              /* the currents kernel's hh rows (grid.y); 0 without one */
  int warps;             /* warps per block of 32 cells: 1 (a thread per cell) or a warp per
                            subtree (se_neurons_gen_warps) */
  int reg_rows;          /* with warps: the last rows of each warp whose y stays in registers
                            (-1: all), the rest in shared memory */
  int levels;            /* with warps: the levels of pieces (1 or 2), else 0 */
  int literals;          /* how the kernel takes its literals: 0 immediates, 1 a table in shared
                            memory, 2 in global memory (se_gen_options.literals) */
  size_t two_level_local; /* under the default warp_levels, the local memory per thread of the
                             morphology's two-level kernel: kept (levels 2) up to
                             SE_GEN_LEVEL_LOCAL, else dropped (levels 1); 0 otherwise */
} se_gen_kernel;

/* The compiled step: one library, a kernel per morphology with cells. */
typedef struct se_gen_step {
  cudaLibrary_t library;
  int n;
  se_gen_kernel *k;
  int in_order; /* one morphology, cells group after group in cell order: no group table */
  /* with streams (several morphologies): each morphology's launches on a stream of its own,
   * forked from and joined back to the step's stream by events */
  cudaStream_t *streams;
  cudaEvent_t fork, *joined;
} se_gen_step;

/* The generator's choices (environment knobs for experiments): register_rows rows eliminated last
 * keep y in registers (SE_GEN_REG_ROWS; default -1: 64 of up to 128 rows, 128 of up to 400, else
 * all, as measured best), hh_chunk: the hh rows computed hh_chunk at a time, each chunk just before
 * its first row is eliminated, their b and dg in 2 hh_chunk shared-memory slots (SE_GEN_HH_CHUNK;
 * default 0: all of them before the elimination), hh_split: the hh rows in a kernel of their own
 * before the step, one thread per cell and hh row, their b and dg through the rhs and diag slots
 * (SE_GEN_HH_SPLIT, default 1; only for morphologies whose clamp currents stay in registers,
 * se_neurons_gen_split), hh_fold: with the split, the currents kernel writes a v + c + b (the row's
 * whole right-hand side, in the step kernel's order of operations) instead of b for every hh row
 * but the root and the clamped ones, so the step kernel does not load their v (SE_GEN_HH_FOLD,
 * default 1 since session 19: 8 B per such row and step, about 3% of medium-low's byte floor;
 * measured with scaled and contract), scaled: each passive row with a constant d' (no hh row below
 * it) and no clamp takes 1 / d' into its literals, y = (a / d') v + c / d' + sum (g_c / d') y_c,
 * one multiplication and one literal (two uniform moves in SASS) fewer per row (SE_GEN_SCALED,
 * default 1 since session 19, measured in docs/gpu.md "Session 19"), warps: a warp per subtree and
 * K warps per block of 32 cells (SE_GEN_WARPS; default -1, the rule measured best on the six
 * classes (docs/gpu.md "Session 14" and "Session 15"): 4 up to 512 rows, else 8; 0 or 1: a thread
 * per cell; se_neurons_gen_warps), warp_cut: the warps' partition, 1 the threshold that makes the
 * trunk plus the most piece rows of a warp fewest, 0 the threshold n / K with warp 0 starting with
 * the trunk (SE_GEN_WARP_CUT, default -1: 0 up to 128 rows, else 1, measured), warp_min_blocks:
 * with warps, the blocks per multiprocessor ptxas budgets registers for (__launch_bounds__'s second
 * value; SE_GEN_WARP_MIN_BLOCKS, default -1: 2 for 5 to 8 warps, else none, measured; 0: none),
 * warp_hh: with warps, the hh rows computed by the kernel's warps (row j by warp j % K) before the
 * elimination, b and dg in shared memory, instead of split off (SE_GEN_WARP_HH, default -1: up to
 * 128 rows, measured; 0 never, 1 always; 2 always with b and dg, with hh_fold b as a v + c + b,
 * through the rows' rhs and diag slots as the currents kernel writes them, so no currents kernel
 * and no shared memory for them: session 20, not yet measured), warp_reg_rows: with warps, each
 * warp keeps the y of only the last R rows it eliminates (warp 0's trunk included) in registers,
 * the earlier ones in shared memory (SE_GEN_WARP_REG_ROWS=R, default -1: all up to 128 rows, 32 for
 * long sections up to 512 rows, else 48, raised by 16 until the kernel fits in
 * SE_GEN_AUTO_MAX_SMEM; measured, docs/gpu.md "Session 15"; a value at least the rows keeps every y
 * in registers), warp_levels: with warps and cut 1, 2 lets the partition deal the trunk in pieces
 * again (a second level of pieces after a barrier, only what is left warp 0's) where that saves
 * more than SE_GEN_LEVEL_ROWS rows on a block's critical path (SE_GEN_WARP_LEVELS, default -1: 2
 * where the two-level kernel compiles with at most SE_GEN_LEVEL_LOCAL bytes of local memory per
 * thread, else 1, se_neurons_gen_attach; measured, docs/gpu.md "Session 16" and "Session 17"; 1 or
 * 2 forces it), prefetch: with warps, each warp prefetches the loads of the row it eliminates
 * prefetch rows later (v, and rhs and diag of split-off hh rows) into the L1 cache, or with
 * prefetch_level 2 into L2 (SE_GEN_PREFETCH, default -1: 8 for long sections of 129 to 512 rows,
 * else none, measured in docs/gpu.md "Session 16"; 0 none; SE_GEN_PREFETCH_LEVEL, default 1),
 * warp_cost: the partition weighs the rows, a row with an hh row in its subtree (a division per
 * step: about 36 SASS instructions in its elimination against 13 for a passive row, docs/gpu.md
 * "Session 16" item 10) as warp_cost passive rows (SE_GEN_WARP_COST=W, 2 to 16; default -1: 6 above
 * 512 rows (5 until session 19), else rows, measured in docs/gpu.md "Session 17" and "Session 19";
 * 0 rows), a compiler barrier every window rows keeps the loads from being hoisted into spills
 * (SE_GEN_WINDOW, default 8, 0 none), contract: FMA contraction (SE_GEN_FMAD, default 1 since
 * session 19: 14% fewer instructions in big-low's step kernel; 0 performs the CPU path's
 * operations, docs/model.md, which the scaled rows do not anyway), literals: the warps' kernels of
 * more than 128 rows load the rows' literal doubles from a table (each distinct value once) instead
 * of writing immediates, which sm_90's ptxas materialises with two uniform moves each: 1, a table
 * that each block copies into shared memory at its start (after the plan's shared memory, as many
 * as the kernel's blocks per multiprocessor leave room for; the rest stay immediates); 2, the table
 * read in place from global memory (through L1); 0, immediates (SE_GEN_LITERALS; default -1: 1
 * above 512 rows, else 0, measured in docs/gpu.md "Session 20": the table in shared memory made
 * big-low 8% faster and medium-high 3% slower, the one in global memory every class slower); and
 * launch choices, streams: several morphologies' kernels on a stream each, concurrently
 * (SE_GEN_STREAMS, default 1), carveout: the step kernels' preferred shared-memory carveout in
 * percent of the most a multiprocessor offers, so that fewer blocks leave the L1 cache more
 * (SE_GEN_CARVEOUT, 0 to 100; default -1, not set: the driver's choice, as many blocks as fit;
 * session 20, not yet measured). sm_smem: the shared memory per multiprocessor that a table in
 * shared memory leaves room within (sm_90's 228 KiB by default, for sources written without a
 * device; se_neurons_gen_attach takes the device's). */
typedef struct se_gen_options {
  int register_rows, window, contract, hh_chunk, hh_split, warps, warp_cut, warp_min_blocks,
      warp_hh, warp_reg_rows, warp_levels, streams, prefetch, prefetch_level, warp_cost, hh_fold,
      scaled, literals, carveout;
  size_t sm_smem;
} se_gen_options;

/* The options from the environment (defaults above). */
se_gen_options se_gen_options_from_env(void);

/* Shared memory per block that the plan of e's morphology m needs under opt: a thread per cell,
 * the y of the rows not in registers and (unless split) b and dg of each hh row; with warps, 3
 * values per piece root outside warp 0 (with warp_hh 1 b and dg of each hh row, with
 * warp_reg_rows the y of the rows beyond them), per cell. *table (unless NULL): what its kernel
 * reserves after that for a literal table in shared memory, the entries the table may take
 * within opt's sm_smem (reserved whole; 0 without one). SIZE_MAX when out of memory. Not
 * collective. */
size_t se_neurons_gen_smem(const struct se_neurons *e, int32_t m, const se_gen_options *opt,
                           size_t *table);

/* The auto choice takes gen only where each morphology's kernel needs at most this much shared
 * memory per block before its literal table, whose room follows the device's (every GPU from
 * sm_70 offers it; the six classes need at most 95.5 KiB, the big ones' warp kernels), and
 * for at most SE_GEN_AUTO_MAX_MORPHOLOGIES morphologies (NVRTC takes 0.5-5 s for each, once per
 * machine with the cache; six measured 2.8x faster than coop, docs/gpu.md "gen"). */
#define SE_GEN_AUTO_MAX_SMEM (96 * 1024)

/* The most local memory per thread (spills) the default rule accepts in a two-level kernel
 * (docs/gpu.md "Session 17": big-low's, its rows weighted by their cost, spilled 32-36 B at
 * weight 3 and 88 B at weight 5 and ran 10% and 14% faster than one level; with the rows
 * counted it spilled 96 B and ran 2% slower: the partition decides, not these spills; a clamped
 * big-low's with the rows counted spilled 256 B). */
#define SE_GEN_LEVEL_LOCAL 128
#define SE_GEN_AUTO_MAX_MORPHOLOGIES 16

/* 1 when e can take the gen step: cells, at most SE_GEN_MAX_MORPHOLOGIES morphologies, each of at
 * most SE_GEN_MAX_ROWS compartments; else 0 with the reason in why[0 .. n). Not collective. */
int se_neurons_gen_applicable(const struct se_neurons *e, char *why, size_t n);

/* 1 when morphology m of e takes its hh rows in a kernel of their own under opt: hh_split, hh
 * rows, at most SE_GEN_MAX_CLAMP_ROWS clamped compartments (the rhs slots then free), and not
 * computed by a warp kernel's warps (warp_hh). Not collective. */
int se_neurons_gen_split(const struct se_neurons *e, int32_t m, const se_gen_options *opt);

/* The warps per block of 32 cells of morphology m's kernel under opt: 1 (a thread per cell), or
 * opt's warps (by default the rule of se_gen_options) where its clamp currents stay in
 * registers and its hh rows (if any) are split off (se_neurons_gen_split) or, with warp_hh,
 * computed by the kernel's warps. Not collective. */
int se_neurons_gen_warps(const struct se_neurons *e, int32_t m, const se_gen_options *opt);

/* 1 when the auto choice may take gen for e: applicable, at most SE_GEN_AUTO_MAX_MORPHOLOGIES
 * morphologies, each kernel within SE_GEN_AUTO_MAX_SMEM before its literal table. Not
 * collective. */
int se_neurons_gen_auto(const struct se_neurons *e);

/* 1 when e's cells all share one morphology. Not collective. */
int se_neurons_gen_one_morphology(const struct se_neurons *e);

/* 1 when e's cells share one morphology and lie group after group in cell order: its kernel then
 * runs one thread per cell in cell order (the thread of cell c is the CUDA backend's thread c) and
 * takes the cell count, else one thread per lane of its morphology's groups. Not collective. */
int se_neurons_gen_in_cell_order(const struct se_neurons *e);

/* The CUDA C++ source of e's step kernels, "se_gen_step_<m>" for each morphology m with cells.
 * *source is malloc'ed (the caller frees it). e must be applicable. Not collective. */
int se_neurons_gen_source(const struct se_neurons *e, const se_gen_options *opt, char **source,
                          se_error *err);

/* Compiles source with NVRTC for compute capability major.minor into a cubin (*cubin malloc'ed,
 * *size bytes); needs no GPU. On failure err holds NVRTC's log. Not collective. */
int se_neurons_gen_compile(const char *source, int major, int minor, int contract, char **cubin,
                           size_t *size, se_error *err);

/* The cache of compiled kernels: the directory SE_GEN_CACHE names ("" or "off": none), else
 * $XDG_CACHE_HOME/simengine, else $HOME/.cache/simengine, else none (NULL). buf holds the path.
 * Not collective. */
const char *se_neurons_gen_cache_dir(char *buf, size_t n);

/* The cubin of source for compute capability major.minor (contract: FMA contraction): read from
 * cache_dir when it holds an entry compiled from the same source, embedded headers, options and
 * NVRTC version, else compiled (se_neurons_gen_compile) and stored there (under a temporary name,
 * then renamed, so ranks that compile one kernel at once do not clash). A cache that cannot be
 * read or written is passed over: the kernel is compiled. cache_dir NULL: no cache. *cached: 1
 * when read from the cache. *cubin malloc'ed. Not collective. */
int se_neurons_gen_cubin(const char *source, int major, int minor, int contract,
                         const char *cache_dir, char **cubin, size_t *size, int *cached,
                         se_error *err);

/* Generates, compiles (or finds in the cache) and loads e's kernels for device, uploads each
 * morphology's group table (position[g]: the launch position of engine group g, whose lanes are
 * the CUDA backend's threads position[g] * width + lane) and fused2's row tables to d (the
 * deferred gate update's kernel reads them). Under the default warp_levels, a morphology whose
 * two-level kernel uses more than SE_GEN_LEVEL_LOCAL bytes of local memory per thread (spills)
 * is written and compiled again with one level (its se_gen_kernel's two_level_local says how
 * much). Synchronous. */
int se_neurons_gen_attach(const struct se_neurons *e, int device, const int64_t *position,
                          se_neurons_device *d, se_gen_step *g, se_error *err);

/* One step from t_now (update: the deferred gate update first) on stream: per morphology its
 * currents kernel (hh_split) and its step kernel, on stream or, with streams, on the
 * morphology's own stream joined back to stream. Asynchronous. */
cudaError_t se_neurons_gen_launch(const se_gen_step *g, const se_neurons_device *d, double t_now,
                                  int update, cudaStream_t stream);

/* Unloads the kernels, frees the group tables. */
void se_neurons_gen_free(se_gen_step *g);

#ifdef __cplusplus
}
#endif
#endif
