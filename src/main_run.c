/* simengine: runs the workload named in an input file over MPI ranks and writes the output.
 * Usage: mpirun -np N simengine [options] input.h5   (see --help and docs/running.md) */
#include <hdf5.h>
#include <mpi.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "input_neurons.h"
#include "partition.h"
#include "report.h"
#include "se_error.h"
#include "tdbem_run.h"
#include "simengine/simengine.h"

static const char *usage =
    "Usage: mpirun -np N simengine [options] INPUT.h5\n"
    "\n"
    "Advances the workload described in INPUT.h5 (made by simengine-prep, see docs/prep.md)\n"
    "and writes the result with parallel HDF5. For the neurons workload the output holds SONATA\n"
    "reports (voltages) and spikes: see docs/output.md.\n"
    "\n"
    "Options:\n"
    "  -o, --output FILE        output file (default: INPUT with .h5 replaced by .out.h5). It is\n"
    "                           written as FILE.tmp and renamed when the run completes.\n"
    "  --layout flat|interleaved\n"
    "                           CPU memory layout of the compartments (default interleaved: groups\n"
    "                           of same-morphology cells side by side, SIMD over cells). Both give\n"
    "                           bitwise identical results.\n"
    "  --width N                cells per interleaved group (default 8)\n"
    "  --threads N              OpenMP threads per rank (default: OMP_NUM_THREADS or all cores)\n"
    "  --gpus N                 GPUs per rank (default: the node's visible GPUs shared out over\n"
    "                           its ranks, at least 1 when there is one; 0 = CPU only). Rank r of\n"
    "                           a node uses devices (r * N + k) mod (visible devices).\n"
    "  --gpu-kernel fused|phases|fused2\n"
    "                           one fused kernel per step (default), three kernels (assembly,\n"
    "                           solve, update), or the streaming fused kernel (one backward and\n"
    "                           one forward pass per step, docs/gpu.md)\n"
    "  --buffer-frames N        recorded frames kept in memory between collective writes\n"
    "                           (default: as many as fit in 16 MiB per rank, at least 1)\n"
    "  --flush-seconds S        flush the output to disk at most every S seconds (default 60)\n"
    "  --progress S             progress line on rank 0 every S seconds (default 5; 0: none)\n"
    "  --ordering original|morton|hilbert\n"
    "                           tdbem: numbering of the unknowns for the marching (default\n"
    "                           original; morton and hilbert need /tdbem/positions). The output\n"
    "                           is always in the original numbering (docs/tdbem.md)\n"
    "  -q, --quiet              no progress or summary\n"
    "  -h, --help               this text\n"
    "  --version                the engine version\n"
    "\n"
    "Example:\n"
    "  simengine-prep neurons --swc data/morphologies/pyramidal.swc:100 --iclamp-all 5:100:0.5 -o net.h5\n"
    "  mpirun -np 4 simengine net.h5 -o net.out.h5\n"
    "  python3 tools/plot_traces.py net.out.h5 -o traces.png\n";

typedef struct run_options {
  const char *input;
  char output[4096];
  se_neurons_options engine;
  int threads, gpus, width_given, ng;
  se_ordering ordering;
  int64_t buffer_frames;
  double flush_seconds, progress_seconds;
  int quiet;
} run_options;

/* Parses argv; returns 0 to run, 1 when --help or --version was handled, 2 on a usage error
 * (message in err). Every rank parses the same arguments. */
static int parse_options(int argc, char **argv, run_options *o, int rank, se_error *err) {
  *o = (run_options){.engine = se_neurons_default_options(), .gpus = -1, .ng = 8,
                     .flush_seconds = 60.0,
                     .progress_seconds = 5.0};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *next = i + 1 < argc ? argv[i + 1] : NULL;
#define NEED_VALUE()                                                                   \
  do {                                                                                 \
    if (!next) {                                                                       \
      se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__, "option %s needs a value", a); \
      return 2;                                                                        \
    }                                                                                  \
    i++;                                                                               \
  } while (0)
    char *end = NULL;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      if (rank == 0)
        fputs(usage, stdout);
      return 1;
    } else if (!strcmp(a, "--version")) {
      if (rank == 0)
        printf("simengine %s\nCUDA devices visible: %d%s\n", SIMENGINE_VERSION, se_gpu_count(),
#ifdef SIMENGINE_HAVE_CUDA
               ""
#else
               " (this build has no CUDA backend)"
#endif
        );
      return 1;
    } else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
      NEED_VALUE();
      snprintf(o->output, sizeof o->output, "%s", next);
    } else if (!strcmp(a, "--layout")) {
      NEED_VALUE();
      if (!strcmp(next, "flat"))
        o->engine.layout = SE_LAYOUT_FLAT;
      else if (!strcmp(next, "interleaved"))
        o->engine.layout = SE_LAYOUT_INTERLEAVED;
      else {
        se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__,
                     "--layout '%s': expected flat or interleaved", next);
        return 2;
      }
    } else if (!strcmp(a, "--ordering")) {
      NEED_VALUE();
      if (!strcmp(next, "original"))
        o->ordering = SE_ORDER_ORIGINAL;
      else if (!strcmp(next, "morton"))
        o->ordering = SE_ORDER_MORTON;
      else if (!strcmp(next, "hilbert"))
        o->ordering = SE_ORDER_HILBERT;
      else {
        se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__,
                     "--ordering '%s': expected original, morton or hilbert", next);
        return 2;
      }
    } else if (!strcmp(a, "--ng")) {
      NEED_VALUE();
      long long v = strtoll(next, &end, 10);
      if (!*next || *end || v < 1 || v > 16) {
        se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__,
                     "--ng '%s': expected an integer from 1 to 16", next);
        return 2;
      }
      o->ng = (int)v;
    } else if (!strcmp(a, "--width") || !strcmp(a, "--threads") || !strcmp(a, "--gpus") ||
               !strcmp(a, "--buffer-frames")) {
      NEED_VALUE();
      long long v = strtoll(next, &end, 10);
      if (!*next || *end || v < 0 || (v == 0 && strcmp(a, "--gpus"))) {
        se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__,
                     "%s '%s': expected a %s integer", a, next,
                     strcmp(a, "--gpus") ? "positive" : "non-negative");
        return 2;
      }
      if (!strcmp(a, "--width")) {
        o->engine.interleave_width = (int)v;
        o->width_given = 1;
      }
      else if (!strcmp(a, "--threads"))
        o->threads = (int)v;
      else if (!strcmp(a, "--gpus"))
        o->gpus = (int)v;
      else
        o->buffer_frames = v;
    } else if (!strcmp(a, "--flush-seconds") || !strcmp(a, "--progress")) {
      NEED_VALUE();
      double v = strtod(next, &end);
      if (!*next || *end || !(v >= 0.0)) {
        se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__,
                     "%s '%s': expected a non-negative number of seconds", a, next);
        return 2;
      }
      if (!strcmp(a, "--progress"))
        o->progress_seconds = v;
      else
        o->flush_seconds = v;
    } else if (!strcmp(a, "--gpu-kernel")) {
      NEED_VALUE();
      if (!strcmp(next, "fused") || !strcmp(next, "phases") || !strcmp(next, "fused2"))
        o->engine.gpu_fused = !strcmp(next, "fused2") ? 2 : !strcmp(next, "fused");
      else {
        se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__,
                     "--gpu-kernel '%s': expected fused, phases or fused2", next);
        return 2;
      }
    } else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
      o->quiet = 1;
    } else if (a[0] == '-' && a[1]) {
      se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__,
                   "unknown option '%s' (simengine --help lists the options)", a);
      return 2;
    } else if (o->input) {
      se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__,
                   "more than one input file: '%s' and '%s'", o->input, a);
      return 2;
    } else {
      o->input = a;
    }
#undef NEED_VALUE
  }
  if (!o->input) {
    se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__,
                 "no input file given (simengine --help shows the usage)");
    return 2;
  }
  if (!o->output[0]) {
    size_t n = strlen(o->input);
    if (n > 3 && !strcmp(o->input + n - 3, ".h5"))
      snprintf(o->output, sizeof o->output, "%.*s.out.h5", (int)(n - 3), o->input);
    else
      snprintf(o->output, sizeof o->output, "%s.out.h5", o->input);
  }
  return 0;
}

/* Makes every rank agree on failure: returns the largest code of all ranks, and gives every rank
 * the message of the lowest-numbered rank that failed (prefixed with that rank when it is not 0),
 * so that rank 0 alone reports it. Collective. */
static int agree(MPI_Comm comm, int rc, se_error *err) {
  int rank, size, worst = rc;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  if (MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, comm) != MPI_SUCCESS)
    return SE_ERR_MPI;
  if (worst == SE_OK)
    return SE_OK;
  int mine = rc != SE_OK ? rank : size, first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm);
  char message[sizeof err->message];
  if (rank == first)
    snprintf(message, sizeof message, "%s", err->message);
  MPI_Bcast(message, (int)sizeof message, MPI_CHAR, first, comm);
  if (first != 0 && !strncmp(message, "on rank ", 8))
    snprintf(err->message, sizeof err->message, "%s", message);
  else if (first != 0)
    snprintf(err->message, sizeof err->message, "on rank %d: %.2000s", first, message);
  else
    snprintf(err->message, sizeof err->message, "%s", message);
  err->code = (se_code)worst;
  return worst;
}

/* What this rank records: (local cell, compartment) pairs in output column order. */
typedef struct recording {
  int64_t n_cells, n_elements;
  uint64_t *node_ids;
  int64_t *elements_per_cell;
  uint32_t *element_ids;
  int64_t *local_cell;
  int32_t *comp;
  double *frame;
} recording;

static void recording_free(recording *r) {
  free(r->node_ids);
  free(r->elements_per_cell);
  free(r->element_ids);
  free(r->local_cell);
  free(r->comp);
  free(r->frame);
}

static int recording_build(const se_neuron_model *m, int64_t begin, int64_t end, recording *r,
                           se_error *err) {
  *r = (recording){0};
  int64_t n_list = m->record_cells ? m->n_record_cells : m->n_cells;
  for (int pass = 0; pass < 2; pass++) {
    r->n_cells = r->n_elements = 0;
    for (int64_t k = 0; k < n_list; k++) {
      int64_t cell = m->record_cells ? m->record_cells[k] : k;
      if (cell < begin || cell >= end)
        continue;
      int32_t morph = m->cell_morphology[cell];
      int32_t n = m->record_what == SE_RECORD_ALL
                      ? (int32_t)(m->morph_offsets[morph + 1] - m->morph_offsets[morph])
                      : 1;
      if (pass == 1) {
        r->node_ids[r->n_cells] = m->cell_gid[cell];
        r->elements_per_cell[r->n_cells] = n;
        for (int32_t i = 0; i < n; i++) {
          r->element_ids[r->n_elements + i] = (uint32_t)i;
          r->local_cell[r->n_elements + i] = cell - begin;
          r->comp[r->n_elements + i] = i;
        }
      }
      r->n_cells++;
      r->n_elements += n;
    }
    if (pass == 0) {
      SE_CALLOC(err, r->node_ids, r->n_cells, "recorded node ids");
      SE_CALLOC(err, r->elements_per_cell, r->n_cells, "recorded elements");
      SE_CALLOC(err, r->element_ids, r->n_elements, "recorded element ids");
      SE_CALLOC(err, r->local_cell, r->n_elements, "recorded cells");
      SE_CALLOC(err, r->comp, r->n_elements, "recorded compartments");
      SE_CALLOC(err, r->frame, r->n_elements, "recorded frame");
    }
  }
  return SE_OK;
}

/* The rank's workers: one CPU engine, or one engine per GPU, each owning a contiguous part of the
 * rank's cells; their recorded elements are consecutive in the rank's frame. */
typedef struct workers {
  int n;
  se_neurons_t *engine;
  int64_t *record_offset; /* [n + 1] */
  char names[256];
} workers;

static void workers_free(workers *w) {
  for (int k = 0; k < w->n && w->engine; k++)
    se_neurons_destroy(w->engine[k]);
  free(w->engine);
  free(w->record_offset);
  *w = (workers){0};
}

/* Splits cells [begin, end) over the workers by compartment counts and builds their engines.
 * gpus = 0: one CPU worker; else one CUDA worker per GPU of this rank. */
static int workers_build(workers *w, const se_neuron_model *m, const int64_t *weights,
                         int64_t begin, int64_t end, const run_options *o, int gpus,
                         int node_rank, const recording *rec, se_error *err) {
  *w = (workers){.n = gpus > 0 ? gpus : 1};
  SE_CALLOC(err, w->engine, w->n, "workers");
  SE_CALLOC(err, w->record_offset, w->n + 1, "worker record offsets");
  int64_t bounds[65];
  if (w->n > 64)
    SE_FAIL(err, SE_ERR_ARG, "%d GPUs per rank: at most 64 are supported", w->n);
  se_partition_contiguous(weights + begin, end - begin, w->n, bounds);
  int64_t e = 0;
  for (int k = 0; k < w->n; k++) {
    se_neurons_options opt = o->engine;
    if (gpus > 0) {
      opt.backend = SE_BACKEND_CUDA;
      SE_TRY(se_gpu_device_for_rank(node_rank, gpus, k, &opt.gpu_device, err));
      if (!o->width_given)
        opt.interleave_width = 32; /* a warp of same-morphology cells */
    }
    int64_t wb = begin + bounds[k], we = begin + bounds[k + 1];
    SE_TRY(se_neurons_create(m, wb, we, &opt, &w->engine[k], err));
    /* this worker's recorded elements: the run of rec's elements whose cell is in [wb, we) */
    int64_t first = e;
    while (e < rec->n_elements && begin + rec->local_cell[e] < we)
      e++;
    w->record_offset[k + 1] = e;
    int64_t n = e - first;
    int64_t *cells = malloc((size_t)(n + 1) * sizeof *cells);
    if (!cells)
      SE_FAIL(err, SE_ERR_NOMEM, "out of memory for the recording of worker %d", k);
    for (int64_t j = 0; j < n; j++)
      cells[j] = begin + rec->local_cell[first + j] - wb;
    int rc = se_neurons_set_recording(w->engine[k], n, cells, rec->comp + first, err);
    free(cells);
    SE_TRY(rc);
    size_t used = strlen(w->names);
    if (gpus > 0)
      snprintf(w->names + used, sizeof w->names - used, "%scuda:%d", k ? "," : "", opt.gpu_device);
    else
      snprintf(w->names + used, sizeof w->names - used, "cpu");
  }
  return SE_OK;
}

/* Records one frame of every worker into frame: starts all copies, then steps, then waits: the
 * device-to-host copies overlap the step's kernels. */
static int workers_step(workers *w, int record, double *frame, se_error *err) {
  if (record)
    for (int k = 0; k < w->n; k++)
      SE_TRY(se_neurons_record_begin(w->engine[k], err));
  for (int k = 0; k < w->n; k++)
    SE_TRY(se_neurons_step(w->engine[k], err));
  if (record)
    for (int k = 0; k < w->n; k++) {
      const double *part;
      SE_TRY(se_neurons_record_end(w->engine[k], &part, err));
      memcpy(frame + w->record_offset[k], part,
             (size_t)(w->record_offset[k + 1] - w->record_offset[k]) * sizeof *frame);
    }
  return SE_OK;
}

/* Spikes of this rank over the whole run (time, gid). */
typedef struct spike_list {
  int64_t n, capacity;
  double *time;
  uint64_t *gid;
} spike_list;

static int spikes_collect(spike_list *s, se_neurons_t engine, const se_neuron_model *m,
                          se_error *err) {
  int64_t n;
  const double *t;
  const int64_t *cell;
  SE_TRY(se_neurons_take_spikes(engine, &n, &t, &cell, err));
  if (s->n + n > s->capacity) {
    int64_t cap = s->capacity ? s->capacity : 1024;
    while (cap < s->n + n)
      cap *= 2;
    SE_REALLOC(err, s->time, cap, "spike times");
    SE_REALLOC(err, s->gid, cap, "spike gids");
    s->capacity = cap;
  }
  for (int64_t k = 0; k < n; k++) {
    s->time[s->n] = t[k];
    s->gid[s->n] = m->cell_gid[cell[k]];
    s->n++;
  }
  return SE_OK;
}

/* Writes the run's metadata under /simengine. Collective. */
static int write_metadata(se_report_t rep, const run_options *o, const se_neuron_model *m,
                          int ranks, const char *worker_names, int64_t steps,
                          const double timings[4], int64_t spikes, se_error *err) {
  SE_TRY(se_report_meta_string(rep, "version", SIMENGINE_VERSION, err));
  SE_TRY(se_report_meta_string(rep, "workload", "neurons", err));
  SE_TRY(se_report_meta_string(rep, "input", o->input, err));
  SE_TRY(se_report_meta_int(rep, "ranks", ranks, err));
  SE_TRY(se_report_meta_int(rep, "threads_per_rank", omp_get_max_threads(), err));
  SE_TRY(se_report_meta_string(rep, "workers_rank0", worker_names, err));
  static const char *const kernel_names[] = {"phases", "fused", "fused2"};
  SE_TRY(se_report_meta_string(rep, "gpu_kernel", kernel_names[o->engine.gpu_fused], err));
  SE_TRY(se_report_meta_string(rep, "layout",
                               o->engine.layout == SE_LAYOUT_FLAT ? "flat" : "interleaved", err));
  SE_TRY(se_report_meta_int(rep, "interleave_width",
                            o->engine.layout == SE_LAYOUT_FLAT ? 1 : o->engine.interleave_width, err));
  SE_TRY(se_report_meta_int(rep, "steps", steps, err));
  SE_TRY(se_report_meta_double(rep, "dt", m->dt, err));
  SE_TRY(se_report_meta_double(rep, "tstop", m->tstop, err));
  SE_TRY(se_report_meta_int(rep, "cells", m->n_cells, err));
  SE_TRY(se_report_meta_int(rep, "spikes", spikes, err));
  SE_TRY(se_report_meta_double(rep, "time_read_s", timings[0], err));
  SE_TRY(se_report_meta_double(rep, "time_setup_s", timings[1], err));
  SE_TRY(se_report_meta_double(rep, "time_run_s", timings[2], err));
  SE_TRY(se_report_meta_double(rep, "time_output_s", timings[3], err));
  return SE_OK;
}

/* The neurons workload end to end. Collective over comm. */
static int run_neurons(const run_options *o, MPI_Comm comm, se_error *err) {
  int rank, size;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  double t0 = MPI_Wtime(), timings[4] = {0};
  se_neuron_model model;
  se_neuron_model_init(&model);
  workers w = {0};
  se_report_t rep = NULL;
  recording rec = {0};
  spike_list spikes = {0};
  int64_t *weights = NULL, *bounds = NULL;

  int rc = agree(comm, se_input_read_neurons(o->input, comm, &model, err), err);
  if (rc != SE_OK)
    goto done;
  timings[0] = MPI_Wtime() - t0;

  /* contiguous cell slices of about equal compartment counts */
  weights = malloc((size_t)(model.n_cells + 1) * sizeof *weights);
  bounds = malloc((size_t)(size + 1) * sizeof *bounds);
  if (!weights || !bounds)
    SE_FAIL_GOTO(err, rc, done, SE_ERR_NOMEM, "out of memory for the partition");
  for (int64_t c = 0; c < model.n_cells; c++) {
    int32_t mo = model.cell_morphology[c];
    weights[c] = model.morph_offsets[mo + 1] - model.morph_offsets[mo];
  }
  se_partition_contiguous(weights, model.n_cells, size, bounds);
  int64_t begin = bounds[rank], end = bounds[rank + 1];

  /* GPUs per rank: as asked, or the node's visible GPUs shared out over its ranks */
  MPI_Comm node;
  int node_rank = 0, node_size = 1;
  if (MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    MPI_Comm_rank(node, &node_rank);
    MPI_Comm_size(node, &node_size);
    MPI_Comm_free(&node);
  }
  int gpus = o->gpus;
  if (gpus < 0) {
    int visible = se_gpu_count();
    gpus = visible == 0 ? 0 : (visible / node_size > 0 ? visible / node_size : 1);
  }
  rc = recording_build(&model, begin, end, &rec, err);
  if (rc == SE_OK)
    rc = workers_build(&w, &model, weights, begin, end, o, gpus, node_rank, &rec, err);
  if ((rc = agree(comm, rc, err)) != SE_OK)
    goto done;

  int64_t steps = se_neuron_model_steps(&model), every = model.record_every;
  int64_t frames = (steps + every - 1) / every;
  int64_t buffer = o->buffer_frames;
  if (buffer <= 0) {
    int64_t bytes_per_frame = rec.n_elements * (model.record_float64 ? 8 : 4);
    buffer = bytes_per_frame > 0 ? (16 << 20) / bytes_per_frame : frames;
  }
  if (buffer > frames)
    buffer = frames;
  if (buffer < 1)
    buffer = 1;
  se_report_spec spec = {.population = model.population,
                         .float64 = model.record_float64,
                         .n_frames = frames,
                         .t_start = 0.0,
                         .t_stop = (double)(frames * every) * model.dt,
                         .t_step = (double)every * model.dt,
                         .n_local_cells = rec.n_cells,
                         .local_node_ids = rec.node_ids,
                         .local_elements_per_cell = rec.elements_per_cell,
                         .local_element_ids = rec.element_ids,
                         .buffer_frames = buffer,
                         .flush_seconds = o->flush_seconds};
  if ((rc = se_report_open(o->output, comm, &spec, &rep, err)) != SE_OK)
    goto done;
  timings[1] = MPI_Wtime() - t0 - timings[0];

  int64_t local_comp = 0, total_comp = 0;
  for (int k = 0; k < w.n; k++)
    local_comp += se_neurons_compartment_count(w.engine[k]);
  MPI_Allreduce(&local_comp, &total_comp, 1, MPI_INT64_T, MPI_SUM, comm);
  if (rank == 0 && !o->quiet)
    printf("simengine: %lld cells, %lld compartments, %lld steps of %g ms on %d rank(s) x %d "
           "thread(s); rank 0 workers: %s\n",
           (long long)model.n_cells, (long long)total_comp, (long long)steps, model.dt, size,
           omp_get_max_threads(), w.names);

  double run_start = MPI_Wtime(), last_progress = run_start;
  for (int64_t s = 0; s < steps; s++) {
    const int record = s % every == 0;
    rc = workers_step(&w, record, rec.frame, err);
    if (rc == SE_OK && record)
      rc = se_report_append(rep, rec.frame, err);
    for (int k = 0; k < w.n && rc == SE_OK && ((s + 1) % every == 0 || s + 1 == steps); k++)
      rc = spikes_collect(&spikes, w.engine[k], &model, err);
    /* agree before every recorded frame (the next append is collective) and at the end; a rank
     * that failed goes there at once: the others reach it before any other collective call */
    if (rc != SE_OK || (s + 1) % every == 0 || s + 1 == steps)
      if ((rc = agree(comm, rc, err)) != SE_OK)
        break;
    double now = MPI_Wtime();
    if (rank == 0 && !o->quiet && o->progress_seconds > 0 && now - last_progress >= o->progress_seconds) {
      double rate = (double)(s + 1) / (now - run_start);
      printf("simengine: step %lld/%lld (%.0f%%), t = %.2f ms, %.0f steps/s, ETA %.0f s\n",
             (long long)(s + 1), (long long)steps, 100.0 * (double)(s + 1) / (double)steps,
             (double)(s + 1) * model.dt, rate, (double)(steps - s - 1) / rate);
      fflush(stdout);
      last_progress = now;
    }
  }
  if (rc != SE_OK)
    goto done;
  timings[2] = MPI_Wtime() - run_start;

  double out_start = MPI_Wtime();
  int64_t total_spikes = 0;
  MPI_Allreduce(&spikes.n, &total_spikes, 1, MPI_INT64_T, MPI_SUM, comm);
  if ((rc = se_report_write_spikes(rep, spikes.n, spikes.time, spikes.gid, err)) != SE_OK)
    goto done;
  timings[3] = MPI_Wtime() - out_start;
  double reduced[4];
  MPI_Allreduce(timings, reduced, 4, MPI_DOUBLE, MPI_MAX, comm);
  if ((rc = write_metadata(rep, o, &model, size, w.names, steps, reduced, total_spikes, err)) !=
      SE_OK)
    goto done;
  se_report_t closing = rep;
  rep = NULL;
  if ((rc = se_report_close(closing, 1, err)) != SE_OK)
    goto done;
  if (rank == 0 && !o->quiet)
    printf("simengine: done in %.2f s (read %.2f s, setup %.2f s, run %.2f s = %.3f ns per "
           "compartment-step, output %.2f s)\n"
           "simengine: %lld cells, %lld compartments, %lld spikes -> %s\n",
           MPI_Wtime() - t0, reduced[0], reduced[1], reduced[2],
           steps > 0 && total_comp > 0 ? 1e9 * reduced[2] * size / ((double)steps * (double)total_comp) : 0.0,
           reduced[3], (long long)model.n_cells, (long long)total_comp, (long long)total_spikes,
           o->output);

done:
  if (rep) {
    se_error ignored = {0};
    se_report_close(rep, 0, &ignored);
  }
  free(spikes.time);
  free(spikes.gid);
  recording_free(&rec);
  free(weights);
  free(bounds);
  workers_free(&w);
  se_neuron_model_free(&model);
  return rc;
}

int main(int argc, char **argv) {
  int provided;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    fprintf(stderr, "simengine: MPI_Init_thread failed\n");
    return 1;
  }
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  se_error err = {0};
  run_options o;
  int parsed = parse_options(argc, argv, &o, rank, &err);
  int rc = SE_OK;
  if (parsed == 2) {
    rc = SE_ERR_ARG;
  } else if (parsed == 0) {
    if (o.threads > 0)
      omp_set_num_threads(o.threads);
    char workload[64] = "";
    rc = agree(MPI_COMM_WORLD, se_input_workload(o.input, MPI_COMM_WORLD, workload, sizeof workload, &err), &err);
    if (rc == SE_OK && o.gpus > 0 && se_gpu_count() == 0)
      rc = se_error_set(&err, SE_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,
                        "--gpus %d: no CUDA device is visible to this process%s; use --gpus 0",
                        o.gpus, se_gpu_count() == 0 ? " (or this build has no CUDA)" : "");
    if (rc == SE_OK && !strcmp(workload, "neurons"))
      rc = run_neurons(&o, MPI_COMM_WORLD, &err);
    else if (rc == SE_OK && !strcmp(workload, "tdbem"))
      rc = se_tdbem_run(o.input, o.output, MPI_COMM_WORLD, o.ng, o.ordering, &err);
    else if (rc == SE_OK)
      rc = se_error_set(&err, SE_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,
                        "%s: workload '%s' is not supported (neurons or tdbem)", o.input, workload);
  }
  /* failures are agreed on (agree()), so rank 0 holds the message; argument errors are the
   * same on every rank */
  if (rc != SE_OK && rank == 0)
    fprintf(stderr, "simengine: %s: %s\n", se_code_name((se_code)rc), err.message);
  MPI_Finalize();
  return rc == SE_OK ? 0 : (rc == SE_ERR_ARG ? 2 : 1);
}
