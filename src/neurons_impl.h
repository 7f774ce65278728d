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

/* One backend of the neurons engine (DESIGN.md Section 6: one function table per object family).
 * The front end (neurons.c) builds the host arrays in the chosen layout; the backend owns the
 * time stepping, the recorded frames and the spike buffer. */
typedef struct se_neurons_backend {
  const char *name;
  /* takes over the engine's host arrays (the CUDA backend copies them to its device) */
  int (*attach)(se_neurons_t engine, se_error *err);
  /* frees what attach allocated */
  void (*detach)(se_neurons_t engine);
  /* advances every owned cell by dt, detecting spikes (may return before the work is done) */
  int (*step)(se_neurons_t engine, se_error *err);
  /* starts copying the voltages of the recorded slots into engine->record_frame */
  int (*record_begin)(se_neurons_t engine, se_error *err);
  /* waits until engine->record_frame holds what record_begin asked for */
  int (*record_end)(se_neurons_t engine, se_error *err);
  /* moves the spikes detected so far into engine->spike_time / spike_cell */
  int (*collect_spikes)(se_neurons_t engine, se_error *err);
  /* copies the device state back into the host arrays v, m, h, n (no-op on the CPU) */
  int (*sync_state)(se_neurons_t engine, se_error *err);
  /* the inverse: makes the host arrays v, m, h, n the backend's state (no-op on the CPU) */
  int (*load_state)(se_neurons_t engine, se_error *err);
} se_neurons_backend;

extern const se_neurons_backend se_neurons_backend_cpu;

/* The CPU backend's phases, also used by the tests and the CPU benchmark. */
void se_neurons_cpu_assemble(se_neurons_t engine);
void se_neurons_cpu_solve(se_neurons_t engine);
void se_neurons_cpu_update(se_neurons_t engine);

/* Appends one spike (time, global cell) to the engine's host spike list. */
int se_neurons_push_spike(se_neurons_t engine, double time, int64_t cell, se_error *err);

struct se_neurons {
  const se_neurons_backend *backend;
  se_neurons_options options;
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
  /* per slot: the state, on the host; the CPU backend's work arrays (the matrix diagonal and
   * right-hand side of the step's system; NULL with other backends, which keep their own) */
  double *v, *m, *h, *n;
  double *diag, *rhs;
  /* per morphology compartment (topology[m].base + i): constants in absolute units (nF, uS, mV);
   * g_axial is the conductance to the parent, d_axial the sum over the compartment's connections */
  int64_t n_morph_comp;
  double *cap, *g_axial, *d_axial, *g_pas, *e_pas, *gna, *gk, *gl, *el, *ena, *ek;
  /* per local cell: its group and lane */
  int64_t *cell_group;
  int32_t *cell_lane;
  /* current clamps, sorted by group: target slot and timing; stim_cell and stim_comp give the
   * cell (local) and compartment of each, and the clamps of one cell are in model order */
  int32_t n_stim;
  int64_t *stim_slot, *stim_cell;
  int32_t *stim_comp;
  double *stim_delay, *stim_duration, *stim_amplitude;
  /* recording: slots of the recorded (cell, compartment) pairs and the last frame read */
  int64_t n_record;
  int64_t *record_slot;
  double *record_frame;
  /* backend state (the CUDA backend's device buffers and streams) */
  void *backend_data;
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
