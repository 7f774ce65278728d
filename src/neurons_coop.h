/* The cooperative ("coop") time step of the neurons engine: fused2's arithmetic (the v-form row,
 * its elimination and substitution, the deferred gate update: neurons_stream.h) with several
 * threads per cell and every intermediate in shared memory (docs/gpu.md, "coop"). This header
 * holds what the CUDA kernel (cuda/neurons_coop.cu) and the host model (neurons_coop.c, used by
 * the tests) share: the per-morphology plan and the row elimination from precomputed terms.
 *
 * A warp serves G adjacent lanes (cells) of one group of the interleaved layout, with L = 32 / G
 * threads per cell. The rows of a morphology are cut into L contiguous ranges; thread j of a cell
 * owns range j = [s_j, s_{j+1}). A row whose subtree lies inside its range is "complete":
 * thread j eliminates it (rows in decreasing order) and substitutes it
 * (increasing order) alone. The other rows (those with a descendant in a later range, and the
 * root) form the "trunk", a subtree holding the root; a complete row whose parent is in the trunk
 * is a "boundary" row: it leaves its pushes (g y, g f) in shared memory. Step:
 *   0.  each thread copies v of its range's rows into shared memory (asynchronous copies, all in
 *       flight at once), makes it a v + c at each of them (0 at hh rows: a = c = 0 in the
 *       record) and adds the clamps' current of its rows, a compartment's clamps summed first;
 *   1a. hh rows, spread over the threads: v, m, h, n read, the deferred cnexp update, m, h, n
 *       written, b0 = a v + c + (clamps + hh terms) and d0 = d + dg kept;
 *   1b. each thread walks its range downwards in lockstep with the others and eliminates its
 *       complete rows from shared memory (y, f, accumulators);
 *   2.  one thread per cell walks the "events" (trunk rows and boundary rows) downwards: trunk
 *       rows eliminated, boundary rows' pushes applied, in fused2's order, so every accumulator
 *       sums the same terms in the same order as fused2;
 *   3a. the same thread substitutes the trunk rows upwards (x over y in shared memory, x to v);
 *   3b. each thread substitutes its complete rows upwards and writes x to v.
 * DRAM traffic is the byte floor: v read and written once, m, h, n of hh rows read and written
 * once; the plan tables are per morphology (L1/L2-resident). */
#ifndef SE_NEURONS_COOP_H
#define SE_NEURONS_COOP_H

#include <stdint.h>

#include "neurons_stream.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Threads per cell L: 2, 4 or 8; a warp serves G = 32 / L cells. The engine takes 4 or 8, the
 * one whose plans se_coop_estimate finds faster. */
#define SE_COOP_MAX_LANES 8
/* Warps of the coop kernel a multiprocessor can hold at most (its __launch_bounds__: registers
 * per thread). */
#define SE_COOP_MAX_WARPS_PER_SM 16

/* Flags of a row (cfl), kept in the low bits of its record's flags word: the coop records keep
 * only the flag bits of fused2's meta (SE_COOP_META), whose low bits hold fused2's slot numbers.
 * TRUNK also marks the padding steps (no row): phases 1b and 3b skip both. */
#define SE_COOP_TRUNK 1u
#define SE_COOP_BOUNDARY 2u
/* A row whose parent is the next row of its range, DCONST, with no other child (y = (b0 + cb) d,
 * g y to the next row in registers): phase 1b's short path, set only where the morphology's plan
 * has plain set. */
#define SE_COOP_PLAIN 4u
#define SE_COOP_META 0xFFC00000u

/* Flag of an event's meta (bit 31 is free in SE_STREAM_* meta): the event is a trunk row (else a
 * boundary row whose pushes are applied). */
#define SE_COOP_EV_TRUNK (1u << 31)

/* Phase 1b stages the records of its next SE_COOP_RING - 1 steps through a ring of SE_COOP_RING
 * steps in shared memory; phases 0 and 3b (shorter steps) stage theirs in batches or keep the
 * next 2 SE_COOP_RING - 1 in a register ring. The steps of a morphology and its events are
 * rounded up to a multiple of SE_COOP_RING with steps and events that do nothing, and its row
 * table has 2 SE_COOP_RING steps of padding before and after, so the loops have no test of a
 * range's end and the loads ahead no clamp. */
#define SE_COOP_RING 4

/* 16 bytes; the tables below are arrays of these. Device loads are 16 bytes wide, and the
 * records of the L threads of a step are interleaved chunk by chunk so that the
 * threads' loads of one chunk are 128 contiguous bytes. */
typedef union se_coop_chunk {
  double d[2];
  int32_t i[4];
  uint32_t u[4];
} se_coop_chunk;

/* Shared-memory slots of a cell (doubles; the kernel interleaves the G cells of a
 * warp slot by slot, so slot x of a cell lies x * G * 8 bytes after its slot 0: the records hold
 * these byte offsets, "offset" below). Slots [0, steps * L): the row that thread j meets at step
 * k (row s_{j+1} - 1 - k) has slot k * L + j, holding b0 = a v + c + bx (phases 0 and 1a), then
 * y, then x. The other slots: f of each state-dependent row (d0 = d + dg of an hh row before
 * it), the b accumulator of each row with OWN (and the d accumulator in the next slot with
 * DACC), the push g y of each boundary row (and g f in the next slot unless DCONST), a "zero"
 * slot (0.0, never written after phase 0) and a "dump" slot (written with what no one reads).
 * The single ones go first into the slots of the padding steps of short ranges, then after
 * steps * L (the zero slot always after: phase 0 writes the padding steps' slots).
 *
 * Row record of step k, thread j: chunks q = 0..3 at rec + (k * 4 + q) * L + j:
 *   q0: d, g
 *   q1: d[0] f (DCONST rows) or i[0] the offset of the own f slot (others), i[2] the parent's
 *       slot's offset, u[3] flags (SE_COOP_META bits of the stream meta | cfl; a boundary row's
 *       have FIRST and DFIRST set and PREV cleared: its pushes set its push slots)
 *   q2: the targets of phase 1b, so that it needs no test of the row's kind: i[0] where g y
 *       goes (the push slot of a boundary row, the parent's b accumulator, or the dump slot for a
 *       PREV row), i[1] the own b accumulator (the zero slot without OWN), i[2] the own d
 *       accumulator (the zero slot without DACC), i[3] where g f goes (the push slot's second
 *       slot of a non-DCONST boundary row, the parent's d accumulator with DPUSH, else the dump)
 *   q3: a, c (phase 0 alone reads it; 0, 0 for hh rows, whose b0 phase 1a makes: phase 0 leaves
 *       their clamps' current alone in the slot).
 * Phase 1b stages q0-q2 of step k + 3 while step k computes, phase 0 q3 of step k + 7 (register
 * ring) or the next batches, phase 3b q1 likewise downwards. A padding step's record is zero but
 * for the flags (TRUNK).
 * hh record of hh step k, thread j (hh row number k * L + j): chunks q = 0..4 at
 *   hh + (k * 5 + q) * L + j:  q0: gnabar, gkbar  q1: ena, ek  q2: a, c  q3: d
 *   q4: i[0] row (-1: none), i[1] its slot's offset, i[2] its f slot's offset.
 * Event e (decreasing row order): chunks q = 0..3 at ev + e * 4 + q:
 *   q0: d, g   q1: f, i[2] slot offset, i[3] parent's slot offset   q2: u[0] flags (as q1 of
 *   a row record) | SE_COOP_EV_TRUNK, i[1] own f slot offset, i[2] push slot offset (boundary),
 *   i[3] own accumulators' offset   q3: i[0] row, i[1] the parent's accumulators' offset.
 *   The padding events after the last (the root) have the flags ROOT | DCONST: no effect.
 * Offsets of slots a row does not have are 0 (read only under the flags that imply them). */
typedef struct se_coop_morph {
  int64_t rec, hh, ev;       /* first chunk of the morphology's row (step 0), hh and event
                                (event 0) records; the row table's padding lies before and
                                after */
  int32_t steps;             /* steps of phases 0, 1b and 3b: the longest range, rounded up to a
                                multiple of SE_COOP_RING */
  int32_t hh_steps;          /* ceil(hh rows / L) */
  int32_t n_ev;              /* events: trunk rows and boundary rows, rounded up to a multiple of
                                SE_COOP_RING */
  int32_t zero, dump;        /* the zero and dump slots' offsets */
  int32_t plain;             /* the PLAIN rows are marked (phase 1b's short path pays) */
  int32_t slots;             /* shared-memory slots per cell */
  int32_t trunk;             /* trunk rows (statistics) */
  int32_t holes;             /* padding slots given to single slots (statistics) */
  int32_t s[SE_COOP_MAX_LANES + 1]; /* the ranges: thread j owns rows [s[j], s[j + 1]) */
} se_coop_morph;

/* The plans of every morphology of an engine (morphologies without cells have steps = 0). */
typedef struct se_coop_tables {
  int32_t lanes;         /* L: threads per cell */
  int32_t n_morph;
  se_coop_morph *morph;  /* [n_morph] */
  se_coop_chunk *rec, *hh, *ev;
  int64_t n_rec, n_hh, n_ev; /* chunks */
  int32_t max_slots;     /* max over morphologies of slots per cell */
} se_coop_tables;

/* The push of an eliminated row (pushes pb, pd; flags meta) to its parent, in the host model and
 * the kernel alike: in registers (PREV: the parent is the next row met), else into the parent's
 * accumulators A[0] (b) and A[next] (d) in the slots (FIRST/DFIRST: the first push sets). */
SE_HD static inline void se_coop_push_parent(uint32_t meta, double pb, double pd, double *A,
                                             int next, double *cb, double *cd) {
  if (meta & SE_STREAM_PREV) {
    *cb = pb;
    *cd = pd;
    return;
  }
  *cb = *cd = 0.0;
  if (meta & SE_STREAM_ROOT)
    return;
  A[0] = (meta & SE_STREAM_FIRST) ? pb : A[0] + pb;
  if (meta & SE_STREAM_DPUSH)
    A[next] = (meta & SE_STREAM_DFIRST) ? pd : A[next] + pd;
}

/* Builds the plans of e's morphologies for `lanes` (L: 2, 4 or 8) threads per cell from fused2's
 * row tables st (se_stream_build). cap_percent: 0 picks each morphology's longest range by an
 * estimated cost; else the longest range is this percentage of n / L (at least 100).
 * short_path: phase 1b's short path for PLAIN rows where an estimate says it pays
 * (SE_COOP_SHORT_AUTO), never (0) or in every plan with PLAIN rows (1). Not collective. */
#define SE_COOP_SHORT_AUTO (-1)
int se_coop_build(const struct se_neurons *e, const se_stream_tables *st, int lanes,
                  int cap_percent, int short_path, se_coop_tables *tab, se_error *err);
/* An estimate of the time of one coop step of e's groups with the plans tab, on a device with
 * smem_per_sm bytes of shared memory per multiprocessor and ring_bytes per warp beside the slots
 * (the ring of staged records), in arbitrary units: it compares the plans of other thread
 * counts. Per warp: its lockstep steps (about 80 instructions each, phases 0,
 * 1b and 3b in the sm_90 SASS) and its events, walked by one thread per cell (about 106, phases
 * 2 and 3a); divided by the warps a multiprocessor holds (by shared memory, at most
 * SE_COOP_MAX_WARPS_PER_SM): the step is latency-bound, so its time falls with the warps
 * resident. 0 when a warp's shared memory does not fit. Not collective. */
double se_coop_estimate(const struct se_neurons *e, const se_coop_tables *tab,
                        size_t smem_per_sm, size_t ring_bytes);
/* Frees the arrays of tab (a zeroed or partly built tab is allowed). Not collective. */
void se_coop_free(se_coop_tables *tab);

/* One coop step of every group of e on the host, as the kernel performs it (phases, shared-memory
 * slots, order of operations); e's host arrays stand for device memory. update_gates and the
 * root voltages as se_stream_reference_step. Not collective. */
int se_coop_reference_step(struct se_neurons *e, const se_coop_tables *tab, int update_gates,
                           double *root_before, double *root_after, se_error *err);

#ifdef __cplusplus
}
#endif
#endif
