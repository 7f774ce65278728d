/* Private layout of the neurons engine, shared by the front end (neurons.c), the CPU backend
 * (neurons_cpu.c) and the benchmark. */
#ifndef SE_NEURONS_IMPL_H
#define SE_NEURONS_IMPL_H

#include <stdint.h>

#include "simengine/neurons.h"

/* A group: `width` cells of the same morphology stored compartment-major, lane-minor:
 * compartment i of lane l lives at slot base + i * width + l. The flat layout is groups of
 * width 1; the interleaved layout groups of width W (lanes beyond `lanes` are padding: they
 * carry a copy of the morphology's system at rest, are solved with the others, and never read). */
typedef struct se_group {
  int64_t base;         /* first slot */
  int64_t first_cell;   /* local index of lane 0's cell */
  int32_t n_comp;       /* compartments per lane */
  int32_t lanes;        /* lanes in use (<= width) */
  int32_t morphology;   /* model morphology index */
  int32_t stim_begin, stim_end; /* this group's current clamps in the clamp arrays */
} se_group;

/* Where a morphology's compartments start in the per-morphology arrays (parent, has_hh and the
 * constants below are shared by every cell of that morphology). */
typedef struct se_morph_topology {
  int64_t base;          /* index of compartment 0 in the per-morphology arrays */
  const int32_t *parent; /* [n_comp] parent, -1 at 0 (points into the engine's copy) */
  const uint8_t *has_hh; /* [n_comp] 1 where the hh mechanism is present */
} se_morph_topology;

/* One backend of the neurons engine: the three phases of a time step over all groups. */
typedef struct se_neurons_backend {
  const char *name;
  /* currents at v^n, stimulus, matrix assembly (diag, rhs) */
  void (*assemble)(se_neurons_t engine);
  /* Hines solve of every group's system: rhs holds dv afterwards */
  void (*solve)(se_neurons_t engine);
  /* v += dv, gates at v^{n+1} (cnexp) */
  void (*update)(se_neurons_t engine);
} se_neurons_backend;

extern const se_neurons_backend se_neurons_backend_cpu;

struct se_neurons {
  const se_neurons_backend *backend;
  se_layout layout;
  int width;
  double dt, t, celsius, q10, spike_threshold;
  int64_t steps_taken;
  int64_t cell_begin, n_cells, n_comp_used;
  int64_t n_groups, n_slots;
  se_group *groups;
  se_morph_topology *topology;  /* [n_morphologies] */
  int32_t *parent_copy;         /* all morphologies' parents */
  uint8_t *has_hh_copy;
  /* per slot: state and work */
  double *v, *m, *h, *n, *diag, *rhs;
  /* per morphology compartment (topology[m].base + i): constants in absolute units (nF, uS, mV);
   * g_axial is the conductance to the parent, d_axial the sum over the compartment's connections */
  int64_t n_morph_comp;
  double *cap, *g_axial, *d_axial, *g_pas, *e_pas, *gna, *gk, *gl, *el, *ena, *ek;
  /* per local cell: its group and lane, the root voltage before the step */
  int64_t *cell_group;
  int32_t *cell_lane;
  double *v_root_before;
  /* current clamps, sorted by group: target slot and timing */
  int32_t n_stim;
  int64_t *stim_slot;
  double *stim_delay, *stim_duration, *stim_amplitude;
  /* spikes found since the last se_neurons_take_spikes */
  int64_t n_spikes, spike_capacity;
  double *spike_time;
  int64_t *spike_cell;
};

/* Slot of compartment comp of local cell c. */
static inline int64_t se_neurons_slot(const struct se_neurons *e, int64_t c, int32_t comp) {
  const se_group *g = &e->groups[e->cell_group[c]];
  return g->base + (int64_t)comp * e->width + e->cell_lane[c];
}

#endif
