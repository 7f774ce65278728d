/* Batched mono-morphology Hines solves with several threads per system: the COOP kernel
 * (docs/gpu-hines.md, "The COOP kernel"). Usable from C; the launchers live in hines_coop.cu.
 *
 * A warp serves G = 32 / L adjacent systems with L lanes ("lanes") per system. The tree, shared
 * by all systems, is split on the host into levels: level 1 holds the maximal subtrees of at
 * most m rows, packed into L bins (longest first); the rows above them (the trunk) are split the
 * same way into level 2, and so on. Lane j of each system eliminates the rows of its bin of each
 * level bottom-up, level after level; the forward substitution runs the levels in reverse. The
 * intermediates (h = l / d', g = rhs' / d') of every row stay in shared memory; device memory
 * sees u, l, d, rhs read once and x written once (40 B per compartment). Works on the FULL and
 * BLOCK layouts (the G systems of a warp are adjacent in every row); d is left unchanged, x
 * replaces rhs, as with the other kernels' contract. */
#ifndef SE_HINES_COOP_H
#define SE_HINES_COOP_H

#include <stddef.h>
#include <stdint.h>

#include "hines_mono.h"
#include "simengine/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Settings of the COOP kernel; 0 in a field means the default / automatic value. */
typedef struct se_hines_coop_config {
  int lanes;       /* threads per system: 2, 4, 8 or 16 (default 4) */
  int stages;      /* cp.async pipeline depth in chunks of 2 steps: 2, 3, 4, 5, 6 or 8 (default:
                      6 or 5 where that keeps the 4 or more warps of 4 stages, else 4) */
  int warps;       /* warps per CTA, 1..16 (default: as many as the shared memory holds) */
  int ctas_per_sm; /* CTAs per multiprocessor sharing its shared memory (default 1) */
  int registers;   /* register rows: SE_HINES_COOP_REG_* (default AUTO) */
} se_hines_coop_config;

/* Register rows (8 lanes): the lanes keep (h, g) of the first SE_HINES_COOP_REG_STEPS backward
 * steps in registers, and the rows among them that no other row reads (leaves, rows whose only
 * child passes its contribution in registers) need no shared memory: a warp's cells shrink by
 * 16 B per such row and system (docs/gpu-hines.md, "Session 8", "Session 9"). */
enum { SE_HINES_COOP_REG_STEPS = 32 };
enum {
  SE_HINES_COOP_REG_AUTO = 0, /* with register rows where they hold more warps, or as many with a
                                 deeper pipeline, on a BLOCK layout of one warp's systems (BS 4) */
  SE_HINES_COOP_REG_OFF = 1,
  SE_HINES_COOP_REG_ON = 2 /* 8 lanes and at most 8 warps per CTA */
};

/* What a COOP plan does. */
typedef struct se_hines_coop_info {
  se_hines_coop_config cfg; /* resolved settings */
  int systems_per_warp;     /* G = 32 / lanes */
  int steps;                /* backward (= forward) steps, a multiple of 2 */
  int levels;               /* levels of the schedule; 0: the list schedule (session 9) */
  int bin_rows;             /* rows of the longest bin of level 1 (list: of the busiest lane) */
  int trunk_rows;           /* rows above level 1 (the trunk; list: 0) */
  int roots;                /* rows whose parent runs on another lane (cells of their own) */
  size_t shared_bytes;      /* dynamic shared memory per CTA */
  int reg_steps;            /* backward steps whose (h, g) stay in registers (0: none) */
  int cells;                /* cells of 16 B per system: rows with one, roots, zero, discard */
  double lane_use;          /* n / (lanes x steps): the busy fraction of the lanes */
} se_hines_coop_info;

typedef struct se_hines_coop se_hines_coop; /* a plan for one batch (opaque) */

/* Chooses COOP settings for n_systems systems of the tree (FULL or BLOCK layout with block size
 * bs) on a device with the given limits by the cost model of docs/gpu-hines.md ("Automatic
 * choice"): lanes 4, 2, 8 x 1 or 2 CTAs per multiprocessor, automatic stages; on BLOCK only the
 * lanes whose warp's systems (32 / lanes) fit in a block. Fills *cfg with the cheapest and
 * *cycles with its cost in multiprocessor cycles (the unit of the STREAM model).
 * SE_ERR_UNSUPPORTED: no candidate fits; SE_ERR_ARG: a bad tree or the FLAT layout. Host only;
 * not collective. */
int se_hines_coop_choose(const int32_t *parent, int32_t n, int64_t n_systems,
                         se_hines_layout layout, int32_t bs, const se_hines_device_limits *lim,
                         se_hines_coop_config *cfg, double *cycles, se_error *err);

/* Builds the COOP plan of a batch (host partition of the tree, device copy of the step table).
 * SE_ERR_ARG: bad settings or a FLAT batch; SE_ERR_UNSUPPORTED: one warp's shared memory does
 * not fit the device, or a warp's systems (32 / lanes) do not fit in a block of the BLOCK
 * layout. Synchronous. Not collective. */
int se_hines_coop_create(const se_hines_batch *batch, const se_hines_coop_config *cfg,
                         se_hines_coop **plan, se_error *err);

/* Frees the plan (NULL is allowed). */
void se_hines_coop_destroy(se_hines_coop *plan);

/* Fills *info with what the plan does. */
void se_hines_coop_get_info(const se_hines_coop *plan, se_hines_coop_info *info);

/* Fills *info as se_hines_batch_plan describes a solve (kernel COOP, threads and shared memory
 * per CTA, copy width, lanes, CTAs per multiprocessor). */
void se_hines_coop_get_plan_info(const se_hines_coop *plan, se_hines_plan_info *info);

/* Solves every system of the batch the plan was made for (rhs becomes x). Asynchronous on the
 * batch's stream (se_hines_batch_sync reports execution errors). Not collective. */
int se_hines_coop_solve(const se_hines_coop *plan, se_hines_batch *batch, se_error *err);

/* Runs the COOP kernel's lane code on the host, lane after lane between the warp's
 * synchronisation points, over host arrays in `layout` (FULL or BLOCK; BLOCK arrays padded to
 * whole blocks, se_hines_array_size, as on the device), with cp.async replaced by plain copies
 * and the shared memory pre-filled with NaN. warps and ctas_per_sm are ignored (the
 * shared-memory check assumes one warp per CTA on an H200). For tests without a GPU. */
int se_hines_coop_emulate(const int32_t *parent, int32_t n, int64_t n_systems,
                          se_hines_layout layout, int32_t bs, const se_hines_coop_config *cfg,
                          const double *u, const double *l, const double *d, double *rhs,
                          se_hines_coop_info *info, se_error *err);

#ifdef __cplusplus
}
#endif
#endif
