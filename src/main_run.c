/* simengine: runs the workload named in an input file over MPI ranks and writes the output.
 * Usage: mpirun -np N simengine [options] input.h5   (see --help and docs/running.md) */
#include <hdf5.h>
#include <mpi.h>
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "balance.h"
#include "balance_history.h"
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
    "  --width N                cells per interleaved group, 1 to 64 (default 8)\n"
    "  --threads N              OpenMP threads per rank, 1 to 1024 (default: OMP_NUM_THREADS or\n"
    "                           all cores)\n"
    "  --gpus N                 GPUs per rank (default: the node's visible GPUs shared out over\n"
    "                           its ranks, at least 1 when there is one; 0 = CPU only). Rank r of\n"
    "                           a node uses devices (r * N + k) mod (visible devices).\n"
    "  --gpu-kernel fused|phases|fused2|coop|gen|branch|auto\n"
    "                           one fused kernel per step, three kernels (assembly, solve,\n"
    "                           update), the streaming fused kernel (one backward and one forward\n"
    "                           pass per step), coop (fused2's step, 4-8 threads per cell, all on\n"
    "                           chip), gen (fused2's step written out for each morphology and\n"
    "                           compiled at start-up, one thread per cell; the\n"
    "                           compiled kernels are kept in $SE_GEN_CACHE, else\n"
    "                           ~/.cache/simengine; SE_GEN_CACHE=off keeps none),\n"
    "                           every cell its own tree (branch-level solve, EDD for cells\n"
    "                           of 10000+ compartments), or auto: branch when same-\n"
    "                           morphology groups fill < 16 of 32 lanes or a cell is that large,\n"
    "                           else gen for up to 16 morphologies (<= 1024 compartments each),\n"
    "                           else coop when cells have <= 400 compartments, else fused2\n"
    "                           (docs/gpu.md). Default: auto\n"
    "  --cpu-worker on|off      a CPU worker (the OpenMP threads not driving a GPU) beside the\n"
    "                           GPU workers (default: on when --balance is paper or rate, else\n"
    "                           off; a rank without GPUs always has it)\n"
    "  --balance off|paper|rate move cells between the rank's workers after each iteration so that\n"
    "                           they finish together: the paper's update or the rate-based one\n"
    "                           (default off: intervals of equal compartments; docs/balance.md);\n"
    "                           tdbem: slices, one iteration per group of ng steps (docs/tdbem.md)\n"
    "  --balance-steps N        time steps per balancing iteration (default 500)\n"
    "  --balance-iterations N   after N updates keep the best configuration seen (default 20)\n"
    "  --cpu-workers K          split the CPU work over K CPU workers (default 1; for testing\n"
    "                           the balancing and the moves on a machine without GPU)\n"
    "  --buffer-frames N        recorded frames kept in memory between collective writes\n"
    "                           (default: as many as fit in 16 MiB per rank, at least 1)\n"
    "  --flush-seconds S        flush the output to disk at most every S seconds (default 60)\n"
    "  --progress S             progress line on rank 0 every S seconds (default 5; 0: none)\n"
    "  --ng N                   tdbem: summation vectors computed together, 1 to 16 (default 8):\n"
    "                           each stored value is read once per N steps (docs/tdbem.md)\n"
    "  --ordering original|morton|hilbert\n"
    "                           tdbem: numbering of the unknowns for the marching (default\n"
    "                           original; morton and hilbert need /tdbem/positions). The output\n"
    "                           is always in the original numbering (docs/tdbem.md)\n"
    "  --gpu-fraction F         tdbem: share of each rank's stored values summed by its GPU\n"
    "                           workers (default 1; the CPU worker sums the rest)\n"
    "  --tdbem-kernel cb|fb|fb32\n"
    "                           tdbem GPU summation: Contiguous-Blocking (default), Full-Blocking\n"
    "                           with 16- or 32-column blocks (docs/tdbem.md Section 12)\n"
    "  --m0-ranks K             tdbem: the first K ranks solve with M0 (MUMPS; default all)\n"
    "  -q, --quiet              no progress or summary\n"
    "  -h, --help               this text\n"
    "  --version                the engine version\n"
    "\n"
    "Example:\n"
    "  simengine-prep neurons --swc data/morphologies/pyramidal.swc:100 --iclamp-all 5:100:0.5 -o net.h5\n"
    "  mpirun -np 4 simengine net.h5 -o net.out.h5\n"
    "  python3 tools/plot_traces.py net.out.h5 -o traces.png\n"
    "  simengine-prep tdbem --shape sphere --n 2000 --kmax 100 -o case.h5\n"
    "  mpirun -np 2 simengine case.h5 --ng 8 --ordering hilbert\n";

typedef struct run_options {
  const char *input;
  char output[4096];
  se_neurons_options engine;
  int threads, gpus, width_given, ng;
  se_tdbem_run_options tdbem; /* --gpu-fraction, --tdbem-kernel */
  int cpu_worker;          /* -1: default, 0: off, 1: on */
  int cpu_workers;         /* CPU workers when the CPU worker is on (--cpu-workers) */
  int balance;             /* -1: off, else an se_balance_method */
  int64_t balance_steps;   /* time steps per iteration */
  int balance_iterations;  /* updates before the rollback to the best configuration */
  se_ordering ordering;
  int64_t buffer_frames;
  double flush_seconds, progress_seconds;
  int quiet;
} run_options;

/* Parses argv; returns 0 to run, 1 when --help or --version was handled, 2 on a usage error
 * (message in err). Every rank parses the same arguments. */
static int parse_options(int argc, char **argv, run_options *o, int rank, se_error *err) {
  *o = (run_options){.engine = se_neurons_default_options(), .gpus = -1, .ng = 8,
                      .tdbem = {.gpu_fraction = 1.0, .kernel = SE_TDBEM_GPU_CB, .bc = 16},
                     .cpu_worker = -1, .cpu_workers = 1, .balance = -1, .balance_steps = 500,
                     .balance_iterations = 20,
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
    } else if (!strcmp(a, "--gpu-fraction")) {
      NEED_VALUE();
      double v = strtod(next, &end);
      if (!*next || *end || !(v >= 0.0 && v <= 1.0)) {
        se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__,
                     "--gpu-fraction '%s': expected a number in [0, 1]", next);
        return 2;
      }
      o->tdbem.gpu_fraction = v;
    } else if (!strcmp(a, "--tdbem-kernel")) {
      NEED_VALUE();
      if (!strcmp(next, "cb") || !strcmp(next, "fb") || !strcmp(next, "fb32")) {
        o->tdbem.kernel = strcmp(next, "cb") ? SE_TDBEM_GPU_FB : SE_TDBEM_GPU_CB;
        o->tdbem.bc = strcmp(next, "fb32") ? 16 : 32;
      } else {
        se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__,
                     "--tdbem-kernel '%s': expected cb, fb or fb32", next);
        return 2;
      }
    } else if (!strcmp(a, "--m0-ranks")) {
      NEED_VALUE();
      long long v = strtoll(next, &end, 10);
      if (!*next || *end || v < 1 || v > INT32_MAX) {
        se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__,
                     "--m0-ranks '%s': expected a positive integer", next);
        return 2;
      }
      o->tdbem.m0_ranks = (int)v;
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
      /* bounded before the casts to int: --threads 100000 crashed the OpenMP runtime, a width of
       * 99999999999 wrapped round */
      const long long least = strcmp(a, "--gpus") ? 1 : 0,
                      most = !strcmp(a, "--width")           ? 64
                             : !strcmp(a, "--buffer-frames") ? INT64_MAX
                                                             : 1024;
      if (!*next || *end || v < least || v > most) {
        se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__,
                     "%s '%s': expected an integer from %lld to %lld", a, next, least, most);
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
      int k = 0;
      while (se_gpu_kernel_name(k) && strcmp(next, se_gpu_kernel_name(k)))
        k++;
      if (se_gpu_kernel_name(k))
        o->engine.gpu_fused = k;
      else {
        se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__,
                     "--gpu-kernel '%s': expected fused, phases, fused2, coop, gen, branch or auto",
                     next);
        return 2;
      }
    } else if (!strcmp(a, "--cpu-worker")) {
      NEED_VALUE();
      if (strcmp(next, "on") && strcmp(next, "off")) {
        se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__,
                     "--cpu-worker '%s': expected on or off", next);
        return 2;
      }
      o->cpu_worker = !strcmp(next, "on");
    } else if (!strcmp(a, "--balance")) {
      NEED_VALUE();
      se_balance_method method;
      if (!strcmp(next, "off"))
        o->balance = -1;
      else if (se_balance_method_parse(next, &method, err) == SE_OK)
        o->balance = (int)method;
      else {
        se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__,
                     "--balance '%s': expected off, paper or rate", next);
        return 2;
      }
    } else if (!strcmp(a, "--balance-steps") || !strcmp(a, "--balance-iterations") ||
               !strcmp(a, "--cpu-workers")) {
      NEED_VALUE();
      long long v = strtoll(next, &end, 10);
      long long most = !strcmp(a, "--cpu-workers") ? 16 : !strcmp(a, "--balance-iterations") ? 1000000 : INT64_MAX;
      if (!*next || *end || v < 1 || v > most) {
        se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__,
                     "%s '%s': expected an integer from 1 to %lld", a, next, most);
        return 2;
      }
      if (!strcmp(a, "--balance-steps"))
        o->balance_steps = v;
      else if (!strcmp(a, "--balance-iterations"))
        o->balance_iterations = (int)v;
      else
        o->cpu_workers = (int)v;
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
  if (o->cpu_worker < 0)
    o->cpu_worker = o->balance >= 0;
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

/* One worker of the rank (docs/balance.md): an engine over a contiguous interval of the rank's
 * cells, CPU (OpenMP threads) or one GPU. */
typedef struct worker {
  se_neurons_t engine;
  int device;                 /* CUDA device, -1 for a CPU worker */
  int64_t first, count;       /* rank-local cells [first, first + count) */
  int64_t rec_begin, rec_end; /* its columns of the rank's recorded frame */
  int64_t capacity;           /* most cells it may hold (GPU memory), -1: no cap */
  double busy;                /* seconds of work in the current iteration */
  spike_list spikes;          /* its spikes over the run */
  int rc;                     /* outcome of its last segment (workers on their own thread) */
  se_error err;
} worker;

/* The rank's workers, in order: the CPU workers, then one worker per GPU. Worker 0 runs on the
 * main thread (the one that calls MPI), every other worker on a thread of its own, so that all
 * work at the same time; they meet after each segment of steps (up to a recorded frame or the
 * end of a balancing iteration). */
typedef struct workers {
  int n, n_cpu, n_gpu;
  worker *w;
  char names[256];
  const se_neuron_model *model;
  const recording *rec;
  const run_options *opt;
  int64_t begin;              /* the rank's first cell in the model */
  int64_t *state_offset;      /* [cells + 1] first double of each rank cell in a moved state */
  int omp_threads;            /* the rank's OpenMP threads before the workers were built */
  int cpu_threads;            /* OpenMP threads of each CPU worker */
  /* the segment in progress: steps [seg_begin, seg_end), recorded values into frame */
  int64_t seg_begin, seg_end;
  double *frame;
  /* threads of workers 1 .. n-1 */
  pthread_t *threads;
  void *thread_args;          /* [n - 1] worker_thread_arg */
  int n_threads;
  pthread_mutex_t lock;
  pthread_cond_t go, done;
  int sync_ready;
  int64_t generation;
  int finished, stop;
} workers;

/* Points a worker's recording at its columns of rec: the run of rec's elements whose cell is in
 * its interval (rec lists elements by ascending cell). */
static int worker_set_recording(workers *ws, worker *wk, se_error *err) {
  const recording *rec = ws->rec;
  int64_t e = 0;
  while (e < rec->n_elements && rec->local_cell[e] < wk->first)
    e++;
  wk->rec_begin = e;
  while (e < rec->n_elements && rec->local_cell[e] < wk->first + wk->count)
    e++;
  wk->rec_end = e;
  int64_t n = wk->rec_end - wk->rec_begin;
  int64_t *cells = malloc((size_t)(n + 1) * sizeof *cells);
  if (!cells)
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory for the recording of a worker");
  for (int64_t j = 0; j < n; j++)
    cells[j] = rec->local_cell[wk->rec_begin + j] - wk->first;
  int rc = se_neurons_set_recording(wk->engine, n, cells, rec->comp + wk->rec_begin, err);
  free(cells);
  return rc;
}

/* Builds a worker's engine for its interval, and its recording. */
static int worker_create(workers *ws, worker *wk, se_error *err) {
  se_neurons_options opt = ws->opt->engine;
  if (wk->device >= 0) {
    opt.backend = SE_BACKEND_CUDA;
    opt.gpu_device = wk->device;
    if (!ws->opt->width_given)
      opt.interleave_width = 32; /* a warp of same-morphology cells */
  }
  int64_t b = ws->begin + wk->first;
  SE_TRY(se_neurons_create(ws->model, b, b + wk->count, &opt, &wk->engine, err));
  return worker_set_recording(ws, wk, err);
}

/* Runs the current segment on a worker: its steps, its part of a recorded frame, its spikes
 * (taking them waits for a GPU to finish, so the time measured is what the worker cost). */
static int worker_segment(workers *ws, worker *wk, se_error *err) {
  double t0 = omp_get_wtime();
  const int64_t every = ws->model->record_every;
  for (int64_t s = ws->seg_begin; s < ws->seg_end; s++) {
    const int record = s % every == 0;
    if (record)
      SE_TRY(se_neurons_record_begin(wk->engine, err));
    SE_TRY(se_neurons_step(wk->engine, err));
    if (record) {
      const double *part;
      SE_TRY(se_neurons_record_end(wk->engine, &part, err));
      memcpy(ws->frame + wk->rec_begin, part, (size_t)(wk->rec_end - wk->rec_begin) * sizeof *part);
    }
  }
  SE_TRY(spikes_collect(&wk->spikes, wk->engine, ws->model, err));
  wk->busy += omp_get_wtime() - t0;
  return SE_OK;
}

typedef struct worker_thread_arg {
  workers *ws;
  int k;
} worker_thread_arg;

/* The thread of worker k >= 1: runs each segment the main thread starts (workers_run). */
static void *worker_thread(void *arg) {
  workers *ws = ((worker_thread_arg *)arg)->ws;
  worker *wk = &ws->w[((worker_thread_arg *)arg)->k];
  if (wk->device < 0)
    omp_set_num_threads(ws->cpu_threads);
  int64_t seen = 0;
  pthread_mutex_lock(&ws->lock);
  for (;;) {
    while (ws->generation == seen && !ws->stop)
      pthread_cond_wait(&ws->go, &ws->lock);
    if (ws->stop)
      break;
    seen = ws->generation;
    pthread_mutex_unlock(&ws->lock);
    wk->rc = worker_segment(ws, wk, &wk->err);
    pthread_mutex_lock(&ws->lock);
    if (++ws->finished == ws->n_threads)
      pthread_cond_signal(&ws->done);
  }
  pthread_mutex_unlock(&ws->lock);
  return NULL;
}

/* Runs steps [begin, end) on every worker at once; the recorded values go into frame. Returns
 * the first failure of a worker (in worker order). Not collective. */
static int workers_run(workers *ws, int64_t begin, int64_t end, double *frame, se_error *err) {
  ws->seg_begin = begin;
  ws->seg_end = end;
  ws->frame = frame;
  if (ws->n_threads > 0) {
    pthread_mutex_lock(&ws->lock);
    ws->finished = 0;
    ws->generation++;
    pthread_cond_broadcast(&ws->go);
    pthread_mutex_unlock(&ws->lock);
  }
  int rc = ws->n > 0 ? worker_segment(ws, &ws->w[0], err) : SE_OK;
  if (ws->n_threads > 0) {
    pthread_mutex_lock(&ws->lock);
    while (ws->finished < ws->n_threads)
      pthread_cond_wait(&ws->done, &ws->lock);
    pthread_mutex_unlock(&ws->lock);
    for (int k = 1; k < ws->n && rc == SE_OK; k++)
      if ((rc = ws->w[k].rc) != SE_OK)
        *err = ws->w[k].err;
  }
  return rc;
}

static void workers_free(workers *ws) {
  if (ws->n_threads > 0) {
    pthread_mutex_lock(&ws->lock);
    ws->stop = 1;
    pthread_cond_broadcast(&ws->go);
    pthread_mutex_unlock(&ws->lock);
    for (int t = 0; t < ws->n_threads; t++)
      pthread_join(ws->threads[t], NULL);
  }
  if (ws->sync_ready) {
    pthread_mutex_destroy(&ws->lock);
    pthread_cond_destroy(&ws->go);
    pthread_cond_destroy(&ws->done);
  }
  if (ws->omp_threads > 0)
    omp_set_num_threads(ws->omp_threads);
  for (int k = 0; k < ws->n && ws->w; k++) {
    se_neurons_destroy(ws->w[k].engine);
    free(ws->w[k].spikes.time);
    free(ws->w[k].spikes.gid);
  }
  free(ws->w);
  free(ws->state_offset);
  free(ws->threads);
  free(ws->thread_args);
  *ws = (workers){0};
}

static int int64_descending(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x < y) - (x > y);
}

/* Most of the rank's cells [begin, begin + n) a GPU worker may hold: its share of the device's
 * free memory (the ranks of the node that use the device share it equally), less 10% and the
 * engine's fixed arrays, over the device bytes of the CUDA backend per cell
 * (se_gpu_bytes_estimate, an upper bound over the step kernels), counted for the largest cells
 * (so any interval of that many cells fits). Fixed: every morphology's constants and plans, and
 * one partial group of padding lanes per morphology. -1 when every cell fits. Not collective. */
static int gpu_capacity(const se_neuron_model *m, const int64_t *weights, int64_t begin, int64_t n,
                        int device, int sharers, int width, int64_t *capacity, se_error *err) {
  size_t free_bytes = 0, total_bytes = 0;
  SE_TRY(se_gpu_memory(device, &free_bytes, &total_bytes, err));
  int64_t per_comp, per_cell, per_morph_comp;
  se_gpu_bytes_estimate(&per_comp, &per_cell, &per_morph_comp);
  double budget = 0.9 * (double)free_bytes / sharers -
                  (double)per_morph_comp * (double)se_neuron_model_compartments(m);
  uint8_t *seen = calloc((size_t)m->n_morphologies + 1, 1);
  int64_t *cost = malloc((size_t)(n + 1) * sizeof *cost);
  if (!seen || !cost) {
    free(seen);
    free(cost);
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory for the GPU capacity of %lld cells", (long long)n);
  }
  for (int64_t c = 0; c < n; c++) {
    int32_t mo = m->cell_morphology[begin + c];
    cost[c] = per_comp * weights[begin + c] + per_cell;
    if (!seen[mo])
      budget -= (double)(width - 1) * (double)cost[c];
    seen[mo] = 1;
  }
  qsort(cost, (size_t)n, sizeof *cost, int64_descending); /* the largest cells first */
  int64_t k = 0;
  while (k < n && budget >= (double)cost[k])
    budget -= (double)cost[k++];
  free(seen);
  free(cost);
  if (k == 0 && n > 0)
    SE_FAIL(err, SE_ERR_NOMEM, "GPU %d: this rank's share of its free memory (%.0f MiB of %.0f MiB "
            "free, %d rank(s) on it) holds none of the rank's cells", device,
            (double)free_bytes / sharers / 1048576.0, (double)free_bytes / 1048576.0, sharers);
  *capacity = k >= n ? -1 : k;
  return SE_OK;
}

/* At most 16 CPU workers (--cpu-workers) and 64 GPUs per rank. */
#define MAX_WORKERS 80

/* Plans the rank's workers for cells [begin, end): the CPU workers (when the CPU worker is on, or
 * the rank has no GPU), then one worker per GPU; with balancing, each GPU worker's capacity; the
 * first intervals: equal compartments (se_partition_contiguous). A rank with fewer cells than
 * workers keeps its first max(1, cells) workers. Builds no engine. Not collective. */
static int workers_plan(workers *ws, const se_neuron_model *m, const int64_t *weights,
                        int64_t begin, int64_t end, const run_options *o, int gpus, int node_rank,
                        int node_size, const recording *rec, se_error *err) {
  *ws = (workers){.model = m, .rec = rec, .opt = o, .begin = begin,
                  .omp_threads = omp_get_max_threads()};
  if (gpus > 64)
    SE_FAIL(err, SE_ERR_ARG, "%d GPUs per rank: at most 64 are supported", gpus);
  const int64_t cells = end - begin;
  int n_cpu = o->cpu_worker || gpus == 0 ? o->cpu_workers : 0, n = n_cpu + gpus;
  if (n > cells)
    n = cells > 0 ? (int)cells : 1;
  ws->n = n;
  ws->n_cpu = n_cpu < n ? n_cpu : n;
  ws->n_gpu = n - ws->n_cpu;
  SE_CALLOC(err, ws->w, n, "workers");
  SE_CALLOC(err, ws->state_offset, cells + 1, "cell state offsets");
  for (int64_t c = 0; c < cells; c++)
    ws->state_offset[c + 1] =
        ws->state_offset[c] + SE_NEURONS_STATE_PER_COMPARTMENT * weights[begin + c];
  int64_t bounds[MAX_WORKERS + 1];
  se_partition_contiguous(weights + begin, cells, n, bounds);
  const int visible = ws->n_gpu > 0 ? se_gpu_count() : 0;
  const int width = o->engine.layout == SE_LAYOUT_FLAT ? 1
                    : o->width_given                  ? o->engine.interleave_width
                                                      : 32;
  for (int k = 0; k < n; k++) {
    worker *wk = &ws->w[k];
    *wk = (worker){.device = -1, .capacity = -1, .first = bounds[k],
                   .count = bounds[k + 1] - bounds[k]};
    size_t used = strlen(ws->names);
    if (k < ws->n_cpu) {
      snprintf(ws->names + used, sizeof ws->names - used, ws->n_cpu > 1 ? "%scpu:%d" : "%scpu",
               k ? "," : "", k);
      continue;
    }
    SE_TRY(se_gpu_device_for_rank(node_rank, gpus, k - ws->n_cpu, &wk->device, err));
    snprintf(ws->names + used, sizeof ws->names - used, "%scuda:%d", k ? "," : "", wk->device);
    int sharers = 0;
    for (int r = 0; r < node_size; r++)
      for (int j = 0; j < gpus; j++)
        sharers += (r * gpus + j) % visible == wk->device;
    if (o->balance >= 0)
      SE_TRY(gpu_capacity(m, weights, begin, cells, wk->device, sharers, width, &wk->capacity,
                          err));
  }
  if (strlen(ws->names) + 1 >= sizeof ws->names)
    SE_FAIL(err, SE_ERR_ARG, "%d workers per rank: their names exceed %zu characters", n,
            sizeof ws->names - 2);
  return SE_OK;
}

/* Builds the workers' engines and starts the threads of workers 1 .. n-1. The CPU workers share
 * the rank's OpenMP threads less one per GPU worker (that thread drives its GPU, as in paper 002,
 * Sec. 6.2). Not collective. */
static int workers_start(workers *ws, se_error *err) {
  for (int k = 0; k < ws->n; k++)
    SE_TRY(worker_create(ws, &ws->w[k], err));
  if (ws->n_cpu > 0) {
    int t = (ws->omp_threads - ws->n_gpu) / ws->n_cpu;
    ws->cpu_threads = t > 1 ? t : 1;
    omp_set_num_threads(ws->cpu_threads);
  }
  if (ws->n < 2)
    return SE_OK;
  if (pthread_mutex_init(&ws->lock, NULL) || pthread_cond_init(&ws->go, NULL) ||
      pthread_cond_init(&ws->done, NULL))
    SE_FAIL(err, SE_ERR_NOMEM, "cannot create the workers' synchronisation");
  ws->sync_ready = 1;
  worker_thread_arg *args = NULL;
  SE_CALLOC(err, ws->threads, ws->n - 1, "worker threads");
  SE_CALLOC(err, args, ws->n - 1, "worker threads");
  ws->thread_args = args;
  for (int k = 1; k < ws->n; k++) {
    args[k - 1] = (worker_thread_arg){ws, k};
    int e = pthread_create(&ws->threads[k - 1], NULL, worker_thread, &args[k - 1]);
    if (e)
      SE_FAIL(err, SE_ERR_NOMEM, "cannot start the thread of worker %d: %s", k, strerror(e));
    ws->n_threads++;
  }
  return SE_OK;
}

/* Takes the intervals of b for the workers whose interval changed: their cells' state goes
 * through one host buffer (se_neurons_export_state), their engines are destroyed (freeing GPU
 * memory before it is taken again), rebuilt for the new intervals, and continue from that state
 * (se_neurons_import_state). *rebuilt: cells of the rebuilt engines. Not collective. */
static int workers_move(workers *ws, const se_balance *b, int64_t *rebuilt, se_error *err) {
  int64_t first[MAX_WORKERS], count[MAX_WORKERS], lo = INT64_MAX, hi = 0;
  int changed[MAX_WORKERS], any = 0;
  *rebuilt = 0;
  for (int k = 0; k < ws->n; k++) {
    int64_t last;
    se_balance_interval(b, k, &first[k], &last);
    count[k] = last - first[k] + 1;
    const worker *wk = &ws->w[k];
    changed[k] = first[k] != wk->first || count[k] != wk->count;
    if (changed[k]) {
      any = 1;
      lo = wk->first < lo ? wk->first : lo;
      hi = wk->first + wk->count > hi ? wk->first + wk->count : hi;
    }
  }
  if (!any)
    return SE_OK;
  /* the changed workers' old and new intervals cover the same cells [lo, hi) */
  const int64_t *off = ws->state_offset;
  double *state = malloc((size_t)(off[hi] - off[lo] + 1) * sizeof *state);
  if (!state)
    SE_FAIL(err, SE_ERR_NOMEM, "out of memory for the state of %lld moved cells",
            (long long)(hi - lo));
  const int64_t steps = se_neurons_steps_taken(ws->w[0].engine);
  int rc = SE_OK;
  for (int k = 0; k < ws->n && rc == SE_OK; k++)
    if (changed[k])
      rc = se_neurons_export_state(ws->w[k].engine, 0, ws->w[k].count,
                                   state + off[ws->w[k].first] - off[lo], err);
  for (int k = 0; k < ws->n && rc == SE_OK; k++)
    if (changed[k]) {
      se_neurons_destroy(ws->w[k].engine);
      ws->w[k].engine = NULL;
    }
  for (int k = 0; k < ws->n && rc == SE_OK; k++) {
    worker *wk = &ws->w[k];
    if (!changed[k])
      continue;
    wk->first = first[k];
    wk->count = count[k];
    rc = worker_create(ws, wk, err);
    if (rc == SE_OK)
      rc = se_neurons_import_state(wk->engine, steps, state + off[wk->first] - off[lo], err);
    *rebuilt += wk->count;
  }
  free(state);
  return rc;
}

/* The rank's spikes: every worker's, one after the other (the writer sorts them). */
static int workers_spikes(const workers *ws, spike_list *all, se_error *err) {
  *all = (spike_list){0};
  for (int k = 0; k < ws->n; k++)
    all->capacity += ws->w[k].spikes.n;
  SE_CALLOC(err, all->time, all->capacity, "spike times");
  SE_CALLOC(err, all->gid, all->capacity, "spike gids");
  for (int k = 0; k < ws->n; k++) {
    const spike_list *s = &ws->w[k].spikes;
    if (s->n == 0)
      continue; /* a worker without spikes may have no arrays: memcpy wants valid pointers */
    memcpy(all->time + all->n, s->time, (size_t)s->n * sizeof *s->time);
    memcpy(all->gid + all->n, s->gid, (size_t)s->n * sizeof *s->gid);
    all->n += s->n;
  }
  return SE_OK;
}

/* What the balancing did, for the summary. */
typedef struct balance_stats {
  int64_t moves, cells_rebuilt, kept; /* kept: updates not applied (would not pay back) */
  double move_seconds;
} balance_stats;

/* Ends a full iteration: appends the workers' intervals and times to the history; with a
 * balancer (b not NULL) updates it with the times (se_balance_update_paying: a move must pay
 * back over the iterations_left iterations still to run at the measured cost per rebuilt cell of
 * the earlier moves) and moves the cells. With verbose, prints a line per iteration until the balancer
 * has rolled back. Not collective. */
static int balance_iteration(workers *ws, se_balance *b, se_balance_history *h,
                             balance_stats *st, int64_t iterations_left, int verbose,
                             se_error *err) {
  int64_t first[MAX_WORKERS], last[MAX_WORKERS];
  double t[MAX_WORKERS], wall = 0.0;
  for (int k = 0; k < ws->n; k++) {
    first[k] = ws->w[k].first;
    last[k] = ws->w[k].first + ws->w[k].count - 1;
    t[k] = ws->w[k].busy;
    wall = t[k] > wall ? t[k] : wall;
    ws->w[k].busy = 0.0;
  }
  SE_TRY(se_balance_history_append(h, first, last, t, err));
  if (!b)
    return SE_OK;
  const int was_frozen = b->frozen;
  const double cost_per_cell = st->cells_rebuilt > 0 ? st->move_seconds / (double)st->cells_rebuilt
                                                     : -1.0;
  int64_t to_move;
  int kept;
  SE_TRY(se_balance_update_paying(b, t, cost_per_cell, iterations_left, &to_move, &kept, err));
  st->kept += kept;
  double t0 = omp_get_wtime();
  int64_t rebuilt = 0;
  if (to_move > 0)
    SE_TRY(workers_move(ws, b, &rebuilt, err));
  double seconds = omp_get_wtime() - t0;
  if (rebuilt > 0) {
    st->moves++;
    st->cells_rebuilt += rebuilt;
    st->move_seconds += seconds;
  }
  if (verbose && !was_frozen) {
    printf("simengine: balance iteration %lld: wall %.4f s (", (long long)h->n_iterations, wall);
    for (int k = 0; k < ws->n; k++)
      printf("%s%.4f s for %lld cells", k ? ", " : "", t[k], (long long)(last[k] - first[k] + 1));
    printf(")%s", b->frozen ? ", kept the best configuration" : "");
    if (rebuilt > 0)
      printf(", rebuilt %lld cells in %.4f s", (long long)rebuilt, seconds);
    if (kept)
      printf(", kept the configuration (a move would not pay back)");
    printf("\n");
    fflush(stdout);
  }
  return SE_OK;
}

/* Writes the run's metadata under /simengine. Collective. */
static int write_metadata(se_report_t rep, const run_options *o, const se_neuron_model *m,
                          int ranks, const char *worker_names, const char *gpu_step,
                          int64_t steps, const double timings[4], int64_t spikes, se_error *err) {
  SE_TRY(se_report_meta_string(rep, "version", SIMENGINE_VERSION, err));
  SE_TRY(se_report_meta_string(rep, "workload", "neurons", err));
  SE_TRY(se_report_meta_string(rep, "input", o->input, err));
  SE_TRY(se_report_meta_int(rep, "ranks", ranks, err));
  SE_TRY(se_report_meta_int(rep, "threads_per_rank", omp_get_max_threads(), err));
  SE_TRY(se_report_meta_string(rep, "workers_rank0", worker_names, err));
  SE_TRY(se_report_meta_string(rep, "gpu_kernel", se_gpu_kernel_name(o->engine.gpu_fused), err));
  SE_TRY(se_report_meta_string(rep, "gpu_kernel_rank0", gpu_step, err));
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

/* Starts the balancer for the planned workers of a rank with cells >= workers: the GPU
 * capacities are its caps; its first configuration is the planned one (equal compartments) when
 * that gives every worker a cell within its cap, else the balancer's own (equal counts within
 * the caps), which the workers then take. Not collective. */
static int balance_start(workers *ws, int64_t cells, const run_options *o, se_balance *b,
                         se_error *err) {
  int64_t caps[MAX_WORKERS];
  int planned_fits = 1;
  for (int k = 0; k < ws->n; k++) {
    caps[k] = ws->w[k].capacity;
    planned_fits &= ws->w[k].count >= 1 && (caps[k] < 0 || ws->w[k].count <= caps[k]);
  }
  if (se_balance_init(b, ws->n, cells, caps, (se_balance_method)o->balance, o->balance_iterations,
                      err) != SE_OK)
    return se_error_prepend(err, "the rank's %lld cells over its workers %s (with --gpus only, "
                            "--cpu-worker on or more ranks take what the GPUs cannot hold): ",
                            (long long)cells, ws->names);
  if (planned_fits) {
    int64_t counts[MAX_WORKERS];
    for (int k = 0; k < ws->n; k++)
      counts[k] = ws->w[k].count;
    return se_balance_set_counts(b, counts, err);
  }
  for (int k = 0; k < ws->n; k++) {
    int64_t last;
    se_balance_interval(b, k, &ws->w[k].first, &last);
    ws->w[k].count = last - ws->w[k].first + 1;
  }
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
  se_balance balancer = {0}, *bal = NULL;
  se_balance_history history = {0};
  const char *method =
      o->balance < 0 ? "off" : se_balance_method_name((se_balance_method)o->balance);

  int rc = se_mpi_agree(comm, se_input_read_neurons(o->input, comm, &model, err), err);
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
    rc = workers_plan(&w, &model, weights, begin, end, o, gpus, node_rank, node_size, &rec, err);
  if (rc == SE_OK && o->balance >= 0 && end > begin) {
    rc = balance_start(&w, end - begin, o, &balancer, err);
    bal = &balancer;
  }
  /* every rank has read its GPUs' free memory before any engine takes some */
  if ((rc = se_mpi_agree(comm, rc, err)) != SE_OK)
    goto done;
  if ((rc = se_mpi_agree(comm, workers_start(&w, err), err)) != SE_OK)
    goto done;
  history.n_workers = w.n;
  snprintf(history.names, sizeof history.names, "%s", w.names);

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
    local_comp += se_neurons_compartment_count(w.w[k].engine);
  MPI_Allreduce(&local_comp, &total_comp, 1, MPI_INT64_T, MPI_SUM, comm);
  if (rank == 0 && !o->quiet)
    printf("simengine: %lld cells, %lld compartments, %lld steps of %g ms on %d rank(s) x %d "
           "thread(s); rank 0 workers: %s; balance %s every %lld steps\n",
           (long long)model.n_cells, (long long)total_comp, (long long)steps, model.dt, size,
           w.omp_threads, w.names, method, (long long)o->balance_steps);

  double run_start = MPI_Wtime(), last_progress = run_start;
  balance_stats moved = {0};
  for (int64_t s = 0; s < steps;) {
    /* a segment runs up to the next recorded frame or the end of the balancing iteration, so
     * only its first step can record */
    const int64_t iteration_end = (s / o->balance_steps + 1) * o->balance_steps;
    int64_t seg_end = (s / every + 1) * every;
    seg_end = seg_end < iteration_end ? seg_end : iteration_end;
    seg_end = seg_end < steps ? seg_end : steps;
    const int record = s % every == 0;
    if (rc == SE_OK)
      rc = workers_run(&w, s, seg_end, rec.frame, err);
    /* agree before every append (collective): a rank that failed (here, or in the last append
     * or move) has run nothing since, and the others reach this before any other collective */
    if ((rc = se_mpi_agree(comm, rc, err)) != SE_OK)
      break;
    if (record)
      rc = se_report_append(rep, rec.frame, err);
    s = seg_end;
    if (rc == SE_OK && s == iteration_end)
      rc = balance_iteration(&w, bal, &history, &moved,
                             (steps - s + o->balance_steps - 1) / o->balance_steps,
                             rank == 0 && !o->quiet, err);
    double now = MPI_Wtime();
    if (rank == 0 && !o->quiet && o->progress_seconds > 0 && now - last_progress >= o->progress_seconds) {
      double rate = (double)s / (now - run_start);
      printf("simengine: step %lld/%lld (%.0f%%), t = %.2f ms, %.0f steps/s, ETA %.0f s\n",
             (long long)s, (long long)steps, 100.0 * (double)s / (double)steps,
             (double)s * model.dt, rate, (double)(steps - s) / rate);
      fflush(stdout);
      last_progress = now;
    }
  }
  omp_set_num_threads(w.omp_threads);
  if ((rc = se_mpi_agree(comm, rc, err)) != SE_OK)
    goto done;
  timings[2] = MPI_Wtime() - run_start;

  double out_start = MPI_Wtime();
  if ((rc = se_mpi_agree(comm, workers_spikes(&w, &spikes, err), err)) != SE_OK)
    goto done;
  int64_t total_spikes = 0;
  MPI_Allreduce(&spikes.n, &total_spikes, 1, MPI_INT64_T, MPI_SUM, comm);
  if ((rc = se_report_write_spikes(rep, spikes.n, spikes.time, spikes.gid, err)) != SE_OK)
    goto done;
  timings[3] = MPI_Wtime() - out_start;
  double reduced[4];
  MPI_Allreduce(timings, reduced, 4, MPI_DOUBLE, MPI_MAX, comm);
  /* attributes hold one value for all ranks: rank 0's worker names and GPU step */
  char names0[256], gpu_step0[16];
  snprintf(names0, sizeof names0, "%s", w.names);
  snprintf(gpu_step0, sizeof gpu_step0, "%s",
           w.n_gpu > 0 ? se_neurons_step_name(w.w[w.n_cpu].engine) : "none");
  MPI_Bcast(names0, sizeof names0, MPI_CHAR, 0, comm);
  MPI_Bcast(gpu_step0, sizeof gpu_step0, MPI_CHAR, 0, comm);
  if ((rc = write_metadata(rep, o, &model, size, names0, gpu_step0, steps, reduced, total_spikes,
                           err)) !=
      SE_OK)
    goto done;
  if ((rc = se_balance_history_write(se_report_file(rep), comm, &history, "cells", method,
                                     o->balance_steps, err)) != SE_OK)
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
  if (rank == 0 && !o->quiet && bal) {
    printf("simengine: balance %s: %lld iterations, rank 0 rebuilt engines %lld times (%lld "
           "cells, %.3f s), kept its configuration %lld times (no payback); its intervals:",
           method, (long long)history.n_iterations, (long long)moved.moves,
           (long long)moved.cells_rebuilt, moved.move_seconds, (long long)moved.kept);
    for (int k = 0; k < w.n; k++)
      printf(" %lld..%lld", (long long)w.w[k].first, (long long)(w.w[k].first + w.w[k].count - 1));
    printf(" (%s)\n", w.names);
  }

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
  se_balance_free(&balancer);
  se_balance_history_free(&history);
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
    rc = se_mpi_agree(MPI_COMM_WORLD,
                      se_input_workload(o.input, MPI_COMM_WORLD, workload, sizeof workload, &err),
                      &err);
    if (rc == SE_OK && o.gpus > 0 && se_gpu_count() == 0)
      rc = se_error_set(&err, SE_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,
                        "--gpus %d: no CUDA device is visible to this process%s; use --gpus 0",
                        o.gpus, se_gpu_count() == 0 ? " (or this build has no CUDA)" : "");
    if (rc == SE_OK && !strcmp(workload, "neurons"))
      rc = run_neurons(&o, MPI_COMM_WORLD, &err);
    else if (rc == SE_OK && !strcmp(workload, "tdbem"))
      rc = se_tdbem_run_workers(o.input, o.output, MPI_COMM_WORLD,
                                &(se_tdbem_run_options){.ng = o.ng, .ordering = o.ordering,
                                                        .gpus = o.gpus,
                                                        .gpu_fraction = o.tdbem.gpu_fraction,
                                                        .kernel = o.tdbem.kernel,
                                                        .bc = o.tdbem.bc,
                                                        .cpu_workers = o.cpu_workers,
                                                        .balance = o.balance < 0 ? 0 : o.balance + 1,
                                                        .balance_iterations = o.balance_iterations,
                                                        .m0_ranks = o.tdbem.m0_ranks},
                                &err);
    else if (rc == SE_OK)
      rc = se_error_set(&err, SE_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,
                        "%s: workload '%s' is not supported (neurons or tdbem)", o.input, workload);
  }
  /* failures are agreed on (se_mpi_agree), so rank 0 holds the message; argument errors are the
   * same on every rank; a numerical failure comes from the input's values, so it names the input */
  const int numeric = rc == SE_ERR_NUMERIC && o.input;
  if (rc != SE_OK && rank == 0)
    fprintf(stderr, "simengine: %s: %s%s%s%s\n", se_code_name((se_code)rc), err.message,
            numeric ? " (input " : "", numeric ? o.input : "", numeric ? ")" : "");
  MPI_Finalize();
  return rc == SE_OK ? 0 : (rc == SE_ERR_ARG ? 2 : 1);
}
