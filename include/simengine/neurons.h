/* simengine: the neurons workload.
 *
 * se_neuron_model is the in-memory image of a version-1 neurons input file (docs/input-neurons.md,
 * DESIGN.md Section 3): plain data, filled by the HDF5 reader, by simengine-prep or by a test.
 * se_neurons_t is the engine that advances a contiguous slice of the model's cells in time. */
#ifndef SIMENGINE_NEURONS_H
#define SIMENGINE_NEURONS_H

#include <stddef.h>
#include <stdint.h>

#include "simengine/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Per-region biophysics, each array has n_regions entries (region code = SWC type). Units as in
 * NEURON: cm uF/cm2, ra ohm cm, conductances S/cm2, reversal potentials mV. A mechanism is present
 * in a region where its conductances are > 0. */
typedef struct se_biophysics {
  int32_t n_regions;
  double *cm, *ra, *g_pas, *e_pas, *gnabar_hh, *gkbar_hh, *gl_hh, *el_hh, *ena, *ek;
} se_biophysics;

/* NEURON's defaults for a region no dataset describes. */
#define SE_DEFAULT_CM 1.0
#define SE_DEFAULT_RA 35.4
#define SE_DEFAULT_E_PAS -70.0
#define SE_DEFAULT_EL_HH -54.3
#define SE_DEFAULT_ENA 50.0
#define SE_DEFAULT_EK -77.0

/* The largest region code (SWC type) a model may use. The per-region arrays have max region + 1
 * entries, so a corrupt code (2147483647 in an SWC file, say) must not size them: the input
 * reader, the SWC import and simengine-prep's --set refuse larger codes. */
#define SE_MAX_REGION 1000000

/* Number of per-region arrays of se_biophysics (cm .. ek, in declaration order). */
#define SE_BIOPHYSICS_FIELDS 10

/* Address of per-region array `field` of b (0 .. SE_BIOPHYSICS_FIELDS - 1, in declaration order:
 * cm, ra, g_pas, e_pas, gnabar_hh, gkbar_hh, gl_hh, el_hh, ena, ek). Not collective. */
double **se_biophysics_field(se_biophysics *b, int field);

/* Name of per-region array `field`: "cm", "ra", ... (its dataset under /biophysics). */
const char *se_biophysics_field_name(int field);

/* Sets b->n_regions and allocates every array of b that is NULL with n_regions entries of
 * NEURON's defaults (SE_DEFAULT_*, conductances 0); arrays already present are kept (they must
 * have n_regions entries). SE_ERR_NOMEM on failure (arrays allocated so far stay in b for
 * se_biophysics_free). Not collective. */
int se_biophysics_alloc(se_biophysics *b, int32_t n_regions, se_error *err);

/* Frees every array of b and sets them to NULL and n_regions to 0. Not collective. */
void se_biophysics_free(se_biophysics *b);

/* Overwrites every region of b with the defaults of simengine-prep (docs/prep.md): cm 1 uF/cm2
 * and Ra 100 ohm cm everywhere; hh in regions 1 and 2 (soma, axon: gnabar_hh 0.12, gkbar_hh
 * 0.036, gl_hh 0.0003 S/cm2); pas elsewhere (g_pas 1/30000 S/cm2); e_pas -65 mV, el_hh, ena and
 * ek NEURON's defaults. The arrays must be allocated (se_biophysics_alloc). Not collective. */
void se_biophysics_set_prep_defaults(se_biophysics *b);

typedef enum se_record_what { SE_RECORD_SOMA = 0, SE_RECORD_ALL = 1 } se_record_what;

typedef struct se_neuron_model {
  /* /run */
  double dt, tstop, v_init, celsius, spike_threshold;
  /* /morphologies: compartments of morphology m are morph_offsets[m] .. morph_offsets[m+1]-1 */
  int64_t n_morphologies;
  int64_t *morph_offsets;      /* [n_morphologies + 1] */
  int32_t *parent;             /* [C] local to the morphology, -1 for local index 0 */
  double *length, *diameter;   /* [C] um */
  int32_t *region;             /* [C] */
  /* /cells */
  int64_t n_cells;
  int32_t *cell_morphology;    /* [n_cells] */
  uint64_t *cell_gid;          /* [n_cells] */
  char population[128];
  /* /biophysics */
  se_biophysics bio;
  /* /stimuli/iclamp */
  int64_t n_iclamps;
  int64_t *iclamp_cell;
  int32_t *iclamp_compartment;
  double *iclamp_delay, *iclamp_duration, *iclamp_amplitude;
  /* /record */
  int32_t record_every;        /* steps between frames, >= 1 */
  se_record_what record_what;
  int record_float64;          /* 0: float32 frames, 1: float64 */
  int64_t n_record_cells;      /* cells recorded, ascending, no duplicates */
  int64_t *record_cells;
} se_neuron_model;

/* Sets every field to its documented default and every pointer to NULL. Not collective. */
void se_neuron_model_init(se_neuron_model *model);

/* Frees every array of the model and re-initialises it. Not collective. */
void se_neuron_model_free(se_neuron_model *model);

/* Total number of compartments of all morphologies (morph_offsets[n_morphologies]). */
int64_t se_neuron_model_compartments(const se_neuron_model *model);

/* Checks every invariant of the input contract (parent[i] < i, lengths and diameters > 0, dt > 0,
 * tstop >= 0, indices in range, ...). source names the file in messages. Not collective. */
int se_neuron_model_validate(const se_neuron_model *model, const char *source, se_error *err);

/* Number of time steps of the run: round(tstop / dt). */
int64_t se_neuron_model_steps(const se_neuron_model *model);

/* ---- the engine ---------------------------------------------------------------------------- */

typedef struct se_neurons *se_neurons_t;

typedef enum se_layout {
  SE_LAYOUT_FLAT = 0,        /* each cell's compartments contiguous */
  SE_LAYOUT_INTERLEAVED = 1  /* groups of same-morphology cells, compartment-major, lane-minor */
} se_layout;

typedef enum se_backend_kind {
  SE_BACKEND_CPU = 0,  /* OpenMP threads of this process */
  SE_BACKEND_CUDA = 1  /* one CUDA device (gpu_device) */
} se_backend_kind;

typedef struct se_neurons_options {
  se_layout layout;
  int interleave_width;  /* lanes per group in the interleaved layout (default 8) */
  se_backend_kind backend;
  int gpu_device;        /* CUDA backend: the device */
  int gpu_fused;         /* CUDA backend: 1 = one fused kernel per step, 0 = three kernels,
                            2 = the streaming fused kernel ("fused2": one backward and one
                            forward pass, v solved for directly, gate update deferred to the
                            next step and finished by se_neurons_sync; docs/gpu.md);
                            SE_GPU_KERNEL_* below */
  int64_t gpu_edd_min_comp; /* CUDA backend, branch kernel: cells of at least this many
                               compartments are solved by EDD (0 = SE_GPU_EDD_MIN_COMP) */
} se_neurons_options;

/* Values of se_neurons_options.gpu_fused (docs/gpu.md). BRANCH: every cell its own tree, the
 * branch-level Hines solve (huge cells by EDD); AUTO: BRANCH when the cells fill fewer than
 * SE_GPU_AUTO_MIN_LANES of the 32 lanes of their same-morphology groups on average, or when a
 * cell has at least gpu_edd_min_comp compartments; else GEN for a population of at most 16
 * morphologies (each of at most 1024 compartments, its kernel within 96 KiB of shared memory per
 * block); else COOP when no cell has more than SE_GPU_COOP_MAX_COMP compartments (where each was
 * measured faster); FUSED2 otherwise. */
enum {
  SE_GPU_KERNEL_PHASES = 0,
  SE_GPU_KERNEL_FUSED = 1,
  SE_GPU_KERNEL_FUSED2 = 2,
  SE_GPU_KERNEL_BRANCH = 3,
  SE_GPU_KERNEL_AUTO = 4,
  SE_GPU_KERNEL_COOP = 5, /* fused2's step, several threads per cell, on chip (docs/gpu.md) */
  SE_GPU_KERNEL_GEN = 6   /* fused2's step written out per morphology at start-up and compiled
                             (NVRTC), one kernel per morphology (docs/gpu.md, "gen") */
};
/* The name of a SE_GPU_KERNEL_* value as --gpu-kernel spells it ("phases", "fused", "fused2",
 * "branch", "auto", "coop", "gen"); NULL for any other value. */
const char *se_gpu_kernel_name(int kernel);

#define SE_GPU_AUTO_MIN_LANES 16
/* coop measured faster than fused2 up to the medium classes (305-319 compartments) and slower
 * on the big ones (691-695; docs/gpu.md, "coop, session 5") */
#define SE_GPU_COOP_MAX_COMP 400
#define SE_GPU_EDD_MIN_COMP 10000

/* Default options: CPU backend, interleaved layout of width 8, GPU kernel SE_GPU_KERNEL_AUTO. */
se_neurons_options se_neurons_default_options(void);

/* Builds the engine for cells [cell_begin, cell_end) of model, initialised at t = 0 (v = v_init,
 * gates at steady state). The model must have passed se_neuron_model_validate and must outlive
 * nothing: the engine copies what it needs. Not collective. */
int se_neurons_create(const se_neuron_model *model, int64_t cell_begin, int64_t cell_end,
                      const se_neurons_options *options, se_neurons_t *engine, se_error *err);

/* Advances every owned cell by one time step dt (OpenMP over cells). Not collective. */
int se_neurons_step(se_neurons_t engine, se_error *err);

/* Current time in ms (steps taken x dt). */
double se_neurons_time(se_neurons_t engine);

/* Number of owned cells, and of their compartments. */
int64_t se_neurons_cell_count(se_neurons_t engine);
int64_t se_neurons_compartment_count(se_neurons_t engine);

/* Name of the engine's backend ("cpu" or "cuda"). */
const char *se_neurons_backend_name(se_neurons_t engine);

/* Copies the backend's state into host memory so that se_neurons_voltage reads it (needed after
 * steps on the CUDA backend; free on the CPU backend). Not collective. */
int se_neurons_sync(se_neurons_t engine, se_error *err);

/* Voltage (mV) of compartment comp of owned cell local_cell (0-based within the slice), as of the
 * last se_neurons_sync on the CUDA backend. */
double se_neurons_voltage(se_neurons_t engine, int64_t local_cell, int32_t comp);

/* Sets what each recorded frame holds: the voltages of n (local_cell, comp) pairs, in this order.
 * Not collective. */
int se_neurons_set_recording(se_neurons_t engine, int64_t n, const int64_t *local_cell,
                             const int32_t *comp, se_error *err);

/* Starts copying the current voltages of the recorded pairs (asynchronous on the CUDA backend:
 * the copy overlaps the following steps). Not collective. */
int se_neurons_record_begin(se_neurons_t engine, se_error *err);

/* Waits for the copy started by se_neurons_record_begin; *frame then points to the n values
 * (owned by the engine, valid until the next se_neurons_record_begin). Not collective. */
int se_neurons_record_end(se_neurons_t engine, const double **frame, se_error *err);

/* Spikes detected since the last call: *count entries of (time ms, global cell index); the arrays
 * stay owned by the engine until the next step. Reports a non-finite voltage found by the
 * backend. Not collective. */
int se_neurons_take_spikes(se_neurons_t engine, int64_t *count, const double **time,
                           const int64_t **cell, se_error *err);

/* Number of CUDA devices visible to this process; 0 in a build without CUDA. Not collective. */
int se_gpu_count(void);

/* Device-to-device copy bandwidth of CUDA device `device` (bytes read + written per second,
 * best of several copies of `bytes` bytes): the ceiling GPU figures are printed next to.
 * SE_ERR_UNSUPPORTED in a build without CUDA. Not collective. */
int se_gpu_copy_bandwidth(int device, size_t bytes, double *bytes_per_second, se_error *err);

/* Time of one hh compartment-step (the cnexp update of m, h, n at temperature factor q10 and step
 * dt ms, then gna and gk) on CUDA device `device` with every value in registers, in seconds per
 * compartment: the FP64 ceiling hh rows are printed next to. SE_ERR_UNSUPPORTED in a build
 * without CUDA. Not collective. */
int se_gpu_hh_rate(int device, double q10, double dt, double *seconds, se_error *err);

/* The device of a rank's k-th GPU: (node_local_rank * gpus_per_rank + k) modulo the visible
 * devices, so the ranks of a node spread over its GPUs. SE_ERR_UNSUPPORTED in a build without
 * CUDA. Not collective. */
int se_gpu_device_for_rank(int node_local_rank, int gpus_per_rank, int k, int *device,
                           se_error *err);

/* ---- moving cells between engines (the workers of a rank, docs/balance.md) ------------------ */

/* Doubles of state per compartment: v, m, h, n. */
#define SE_NEURONS_STATE_PER_COMPARTMENT 4

/* Number of doubles that hold the state of `count` owned cells from local cell `first`:
 * SE_NEURONS_STATE_PER_COMPARTMENT per compartment. The state is all that carries over from one step to the next:
 * spike detection compares the root voltage before and after each step, within the step. */
int64_t se_neurons_state_size(se_neurons_t engine, int64_t first, int64_t count);

/* Copies the state of owned cells [first, first + count) into state (se_neurons_state_size
 * doubles): cell after cell, for each cell v of its compartments in order, then m, then h, then
 * n. Synchronises the backend first (se_neurons_sync: on the CUDA backend one device-to-host copy
 * of the engine's state). SE_ERR_ARG for a range outside the engine. Not collective. */
int se_neurons_export_state(se_neurons_t engine, int64_t first, int64_t count, double *state,
                            se_error *err);

/* Replaces the state of every owned cell with state (the layout of se_neurons_export_state, all
 * of the engine's cells) and sets the engine's step count to steps_taken (time = steps_taken x
 * dt), so that the engine continues a run that another engine started, bit for bit on the CPU.
 * Spikes the backend still holds are moved to the engine's list first (nothing is lost); then
 * only the state moves into the backend (on CUDA: v, m, h, n are uploaded; the constants and
 * plans stay). The recording set with se_neurons_set_recording stays. Not collective. */
int se_neurons_import_state(se_neurons_t engine, int64_t steps_taken, const double *state,
                            se_error *err);

/* Number of time steps the engine has taken (its time is this times dt). */
int64_t se_neurons_steps_taken(se_neurons_t engine);

/* The step an engine runs: "cpu" on the CPU backend, else its GPU kernel with
 * SE_GPU_KERNEL_AUTO resolved ("phases", "fused", "fused2", "branch", "coop" or "gen"). Not
 * collective. */
const char *se_neurons_step_name(se_neurons_t engine);

/* Free and total memory of CUDA device `device` in bytes (cudaMemGetInfo). SE_ERR_UNSUPPORTED in
 * a build without CUDA. Not collective. */
int se_gpu_memory(int device, size_t *free_bytes, size_t *total_bytes, se_error *err);

/* Device memory the CUDA backend takes, an upper bound over its step kernels (every kernel's
 * allocations at attach: state, work arrays, branch-order constants and padding, spike buffers,
 * per-morphology constants and plans): *per_compartment bytes for each compartment of an owned
 * cell, *per_cell bytes for each owned cell, *per_morphology_compartment bytes for each
 * compartment of each morphology used on the device; the lanes of a partly filled interleaved
 * group at width w add at most (w - 1) cells per morphology. All 0 in a build without CUDA. Not
 * collective. */
void se_gpu_bytes_estimate(int64_t *per_compartment, int64_t *per_cell,
                           int64_t *per_morphology_compartment);

/* Frees the engine. */
void se_neurons_destroy(se_neurons_t engine);

#ifdef __cplusplus
}
#endif
#endif
