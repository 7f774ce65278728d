/* simengine-bench step: whole time steps (currents, assembly, Hines solve, gates, spikes) of the
 * engine on the CPU (all threads) and on the GPU (fused, three-kernel, fused2, coop, branch), per
 * compartment-step, next to the step's byte floor and the measured copy bandwidths: populations
 * of one synthetic class, of the six classes' shapes, a mixed population (every cell its own
 * shape) and one huge cell. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "neurons_impl.h"
#include "swc.h"

static const char *usage =
    "Usage: simengine-bench step [options]\n"
    "\n"
    "Times whole time steps of populations of one synthetic class per row on the CPU backend\n"
    "(interleaved, all threads) and, when a GPU is visible, on the CUDA backend (fused kernel,\n"
    "three kernels, the streaming kernel fused2, coop and branch; width 32). Prints ns per\n"
    "compartment-step and the ratio of the time to the step's byte floor at the measured copy\n"
    "bandwidth: the state read and written once (v, m, h, n: 64 B per hh compartment, v: 16 B\n"
    "per passive one) plus the constants read once (93 B per compartment of each morphology).\n"
    "Next to it the FP64 floor of the hh rows: the time of one hh compartment-step with every\n"
    "value in registers (measured in the same run) times the hh compartments, per compartment.\n"
    "\n"
    "Options:\n"
    "  --classes LIST   comma list (default: the six classes of paper 000)\n"
    "  --neurons N      cells per population (default 25600)\n"
    "  --steps N        timed steps (default 40)\n"
    "  --cpu 0|1        include the CPU backend (default 1)\n"
    "  --csv FILE       also write the rows as CSV\n"
    "  --six N          then a population of N cells of six morphologies (each class's first\n"
    "                   shape, N / 6 copies of each), on the CPU, fused2, coop, gen and branch\n"
    "                   (default 0: none)\n"
    "  --mixed N        then a mixed population of N cells, every cell its own shape (cell i:\n"
    "                   class i %% 6, seed 1 + i / 6), on the CPU, fused2 and branch (default\n"
    "                   25600; 0: none)\n"
    "  --huge-swc FILE  then one huge cell, this SWC refined by --huge-max-length, on the CPU,\n"
    "                   one GPU thread (fused, width 1), the branch plan alone and EDD (default\n"
    "                   data/morphologies/EC2-609291-4.CNG.swc; \"\": none)\n"
    "  --huge-max-length UM   longest compartment of the huge cell (default 0.5)\n"
    "  --huge-steps N   timed steps of the huge cell (default 10)\n"
    "  --only LIST      comma list of the rows to run, by backend name without \"cuda \" (cpu,\n"
    "                   fused, phases, fused2, coop, gen, branch, 1 thread, edd; default: all)\n";

/* Bytes a step must move at least (state once in and out, constants once), and its hh
 * compartments. */
static double floor_bytes(const se_neuron_model *m, se_neurons_t e, double *n_hh) {
  double bytes = 0.0;
  *n_hh = 0.0;
  for (int64_t c = 0; c < m->n_cells; c++) {
    int32_t mo = m->cell_morphology[c];
    for (int64_t k = m->morph_offsets[mo]; k < m->morph_offsets[mo + 1]; k++) {
      bytes += e->has_hh_copy[k] ? 64.0 : 16.0;
      *n_hh += e->has_hh_copy[k] ? 1.0 : 0.0;
    }
  }
  return bytes + 93.0 * (double)se_neuron_model_compartments(m);
}

/* The GPU's ceilings measured at start-up: copy bandwidth (bytes/s) and seconds per hh
 * compartment-step with every value in registers; 0 without a GPU. */
typedef struct gpu_ceilings {
  double copy_bw, hh_seconds;
} gpu_ceilings;

/* Seconds per step over `steps` steps after one untimed step; spikes are drained so the GPU's
 * queued work is included. */
static double time_steps(se_neurons_t e, int steps, se_error *err) {
  int64_t n;
  const double *t;
  const int64_t *cell;
  if (se_neurons_step(e, err) != SE_OK || se_neurons_take_spikes(e, &n, &t, &cell, err) != SE_OK)
    return -1.0;
  double t0 = omp_get_wtime();
  for (int s = 0; s < steps; s++)
    if (se_neurons_step(e, err) != SE_OK)
      return -1.0;
  if (se_neurons_take_spikes(e, &n, &t, &cell, err) != SE_OK)
    return -1.0;
  return (omp_get_wtime() - t0) / steps;
}

/* One backend variant of a row: name, backend, gpu kernel, EDD threshold (0: the default). */
typedef struct variant {
  const char *name;
  se_backend_kind backend;
  int kernel, width;
  int64_t edd_min_comp;
} variant;

/* Whether variant `name` is in the comma list `only` (NULL or "": every variant), by its name
 * without the "cuda " prefix. */
static int wanted(const char *only, const char *name) {
  if (!only || !only[0])
    return 1;
  if (!strncmp(name, "cuda ", 5))
    name += 5;
  const size_t len = strlen(name);
  for (const char *p = only; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
    if (!strncmp(p, name, len) && (p[len] == ',' || p[len] == '\0'))
      return 1;
  return 0;
}

/* Times `steps` steps of model's cells under each variant in `only` and prints (and writes to
 * csv) one row per variant. Returns 0 or 1 (message printed). */
static int bench_rows(const char *label, const se_neuron_model *model, const variant *vs, int nv,
                      const char *only, int steps, gpu_ceilings gpu, FILE *csv) {
  double n_comp = 0.0;
  for (int64_t c = 0; c < model->n_cells; c++) {
    int32_t mo = model->cell_morphology[c];
    n_comp += (double)(model->morph_offsets[mo + 1] - model->morph_offsets[mo]);
  }
  for (int k = 0; k < nv; k++) {
    if (!wanted(only, vs[k].name))
      continue;
    se_error err = {0};
    se_neurons_options opt = se_neurons_default_options();
    opt.backend = vs[k].backend;
    opt.interleave_width = vs[k].width;
    opt.gpu_fused = vs[k].kernel;
    opt.gpu_edd_min_comp = vs[k].edd_min_comp;
    const double bw = vs[k].backend == SE_BACKEND_CUDA ? gpu.copy_bw : 0.0;
    se_neurons_t e = NULL;
    double per_step = -1.0;
    if (se_neurons_create(model, 0, model->n_cells, &opt, &e, &err) == SE_OK)
      per_step = time_steps(e, steps, &err);
    if (per_step < 0.0) {
      fprintf(stderr, "simengine-bench step: %s\n", err.message);
      se_neurons_destroy(e);
      return 1;
    }
    double n_hh, fb = floor_bytes(model, e, &n_hh), ns = 1e9 * per_step / n_comp;
    double floor_ns = bw > 0.0 ? 1e9 * fb / bw / n_comp : 0.0;
    double hh_ns = bw > 0.0 ? 1e9 * gpu.hh_seconds * n_hh / n_comp : 0.0;
    char ratio[32] = "-", hh[32] = "-";
    if (bw > 0.0) {
      snprintf(ratio, sizeof ratio, "%.2f", ns / floor_ns);
      snprintf(hh, sizeof hh, "%.4f", hh_ns);
    }
    printf("%-11s %8lld %11.0f %-14s | %10.4f %9.4f %9s %9s\n", label, (long long)model->n_cells,
           n_comp, vs[k].name, ns, floor_ns, ratio, hh);
    if (csv)
      fprintf(csv, "%s,%lld,%.0f,%s,%.5f,%.2f,%.1f,%.3f,%.5f\n", label, (long long)model->n_cells,
              n_comp, vs[k].name, ns, fb / n_comp, bw / 1e9, bw > 0.0 ? ns / floor_ns : 0.0,
              hh_ns);
    fflush(stdout);
    se_neurons_destroy(e);
  }
  return 0;
}

/* A model of n cells of the six classes with se_bench_model's biophysics and run. distinct: every
 * cell its own shape (cell i of class i % 6, seed 1 + i / 6); otherwise six morphologies (each
 * class's seed 1), n / 6 copies of each (the first n % 6 one more). */
static int population_model(int64_t n, int distinct, se_neuron_model *model, se_error *err) {
  static const char *const cls[6] = {"small-low",  "small-high", "medium-low",
                                     "medium-high", "big-low",   "big-high"};
  const int64_t n_morph = distinct ? n : (n < 6 ? n : 6);
  se_morphology *mo = calloc((size_t)n_morph, sizeof *mo);
  int64_t *copies = calloc((size_t)n_morph, sizeof *copies);
  se_neuron_model one;
  se_neuron_model_init(&one);
  int rc = mo && copies ? SE_OK
                        : se_error_set(err, SE_ERR_NOMEM, __FILE__, __LINE__, __func__,
                                       "out of memory for %lld morphologies", (long long)n);
  for (int64_t i = 0; rc == SE_OK && i < n_morph; i++) {
    copies[i] = distinct ? 1 : n / 6 + (i < n % 6);
    rc = se_morphology_synthetic(cls[i % 6], distinct ? 1 + (uint64_t)(i / 6) : 1, &mo[i], err);
  }
  /* the run and biophysics of se_bench_model (the classes share their regions) */
  if (rc == SE_OK)
    rc = se_bench_model(&mo[0], 1, &one, err);
  if (rc == SE_OK) {
    se_neuron_model_init(model);
    model->dt = one.dt;
    model->tstop = one.tstop;
    rc = se_neuron_model_set_cells(model, (int32_t)n_morph, mo, copies, err);
  }
  if (rc == SE_OK) {
    model->bio = one.bio;
    memset(&one.bio, 0, sizeof one.bio);
    rc = se_neuron_model_validate(model, "population benchmark model", err);
  }
  se_neuron_model_free(&one);
  for (int64_t i = 0; mo && i < n_morph; i++)
    se_morphology_free(&mo[i]);
  free(mo);
  free(copies);
  return rc;
}

/* A model of one cell: the SWC refined to max_length, se_bench_model's biophysics. */
static int huge_model(const char *path, double max_length, se_neuron_model *model, se_error *err) {
  se_biophysics bio = {0};
  SE_TRY(se_biophysics_alloc(&bio, 8, err));
  se_biophysics_set_prep_defaults(&bio);
  se_discretization disc = se_discretization_default();
  disc.max_length = max_length;
  se_morphology mo = {0};
  int rc = se_swc_load(path, &disc, &bio, &mo, err);
  se_biophysics_free(&bio);
  if (rc == SE_OK)
    rc = se_bench_model(&mo, 1, model, err);
  se_morphology_free(&mo);
  return rc;
}

int se_bench_step(int argc, char **argv) {
  const char *classes = "small-low,small-high,medium-low,medium-high,big-low,big-high";
  const char *csv_path = NULL, *huge_swc = "data/morphologies/EC2-609291-4.CNG.swc", *only = "";
  long long neurons = 25600, steps = 40, with_cpu = 1, mixed = 25600, six = 0, huge_steps = 10;
  double huge_max_length = 0.5;
  const se_bench_opt opts[] = {{"--classes", SE_BENCH_STRING, &classes},
                               {"--neurons", SE_BENCH_INT, &neurons},
                               {"--steps", SE_BENCH_INT, &steps},
                               {"--cpu", SE_BENCH_INT, &with_cpu},
                               {"--csv", SE_BENCH_STRING, &csv_path},
                               {"--mixed", SE_BENCH_INT, &mixed},
                               {"--six", SE_BENCH_INT, &six},
                               {"--huge-swc", SE_BENCH_STRING, &huge_swc},
                               {"--huge-max-length", SE_BENCH_DOUBLE, &huge_max_length},
                               {"--huge-steps", SE_BENCH_INT, &huge_steps},
                               {"--only", SE_BENCH_STRING, &only}};
  int parsed = se_bench_parse(argc, argv, "step", usage, opts, sizeof opts / sizeof opts[0]);
  if (parsed >= 0)
    return parsed;
  if (neurons < 1 || steps < 1 || mixed < 0 || six < 0 || huge_steps < 1 ||
      huge_max_length < 0.0) {
    fprintf(stderr, "simengine-bench step: --neurons, --steps and --huge-steps must be positive, "
                    "--six, --mixed and --huge-max-length not negative\n");
    return 2;
  }
  se_error err = {0};
  gpu_ceilings gpu = {0.0, 0.0};
  int gpus = se_gpu_count();
  if (gpus > 0) {
    if (se_gpu_copy_bandwidth(0, (size_t)2 << 30, &gpu.copy_bw, &err) != SE_OK ||
        se_gpu_hh_rate(0, 1.0, 0.025, &gpu.hh_seconds, &err) != SE_OK) {
      fprintf(stderr, "simengine-bench step: %s\n", err.message);
      return 1;
    }
    printf("device copy bandwidth (cudaMemcpy device to device, 2 GiB, read + write): %.1f GB/s\n",
           gpu.copy_bw / 1e9);
    printf("hh compartment-step with every value in registers (FP64 work alone): %.4f ns\n",
           1e9 * gpu.hh_seconds);
  } else {
    printf("no GPU visible: CPU rows only\n");
  }
  printf("CPU threads: %d\n\n", omp_get_max_threads());
  printf("%-11s %8s %11s %-14s | %10s %9s %9s %9s\n", "class", "neurons", "compartments",
         "backend", "ns/comp", "floor ns", "x floor", "hh ns");
  FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
  if (csv_path && !csv) {
    fprintf(stderr, "simengine-bench step: cannot write '%s'\n", csv_path);
    return 1;
  }
  if (csv)
    fprintf(csv, "class,neurons,compartments,backend,ns_per_comp_step,floor_bytes_per_comp,"
                 "copy_GBps,times_floor,hh_fp64_ns_per_comp\n");
  const se_backend_kind C = SE_BACKEND_CPU, G = SE_BACKEND_CUDA;
  /* the CPU row first when asked, GPU rows only with a GPU */
  const int first = with_cpu ? 0 : 1, last = gpus > 0 ? -1 : 1;
  const variant per_class[] = {{"cpu", C, SE_GPU_KERNEL_FUSED, 8, 0},
                               {"cuda fused", G, SE_GPU_KERNEL_FUSED, 32, 0},
                               {"cuda phases", G, SE_GPU_KERNEL_PHASES, 32, 0},
                               {"cuda fused2", G, SE_GPU_KERNEL_FUSED2, 32, 0},
                               {"cuda coop", G, SE_GPU_KERNEL_COOP, 32, 0},
                               {"cuda gen", G, SE_GPU_KERNEL_GEN, 32, 0},
                               {"cuda branch", G, SE_GPU_KERNEL_BRANCH, 32, 0}};
  const variant per_six[] = {{"cpu", C, SE_GPU_KERNEL_FUSED, 8, 0},
                             {"cuda fused2", G, SE_GPU_KERNEL_FUSED2, 32, 0},
                             {"cuda coop", G, SE_GPU_KERNEL_COOP, 32, 0},
                             {"cuda gen", G, SE_GPU_KERNEL_GEN, 32, 0},
                             {"cuda branch", G, SE_GPU_KERNEL_BRANCH, 32, 0}};
  const variant per_mixed[] = {{"cpu", C, SE_GPU_KERNEL_FUSED, 8, 0},
                               {"cuda fused2", G, SE_GPU_KERNEL_FUSED2, 32, 0},
                               {"cuda branch", G, SE_GPU_KERNEL_BRANCH, 32, 0}};
  const variant per_huge[] = {{"cpu", C, SE_GPU_KERNEL_FUSED, 1, 0},
                              {"cuda 1 thread", G, SE_GPU_KERNEL_FUSED, 1, 0},
                              {"cuda branch", G, SE_GPU_KERNEL_BRANCH, 32, INT64_MAX},
                              {"cuda edd", G, SE_GPU_KERNEL_BRANCH, 32, 0}};
#define SE_VARIANTS(a) (a) + first, (last < 0 ? (int)(sizeof(a) / sizeof((a)[0])) : last) - first
  char *list = strdup(classes), *save = NULL;
  int rc = 0;
  for (char *cls = strtok_r(list, ",", &save); cls && !rc; cls = strtok_r(NULL, ",", &save)) {
    se_morphology mo = {0};
    se_neuron_model model;
    if (se_morphology_synthetic(cls, 1, &mo, &err) != SE_OK ||
        se_bench_model(&mo, neurons, &model, &err) != SE_OK) {
      fprintf(stderr, "simengine-bench step: %s\n", err.message);
      rc = 1;
      break;
    }
    rc = bench_rows(cls, &model, SE_VARIANTS(per_class), only, (int)steps, gpu, csv);
    se_neuron_model_free(&model);
    se_morphology_free(&mo);
  }
  free(list);
  for (int distinct = 0; distinct < 2 && !rc; distinct++) {
    const long long n = distinct ? mixed : six;
    if (n <= 0)
      continue;
    se_neuron_model model;
    rc = population_model(n, distinct, &model, &err);
    if (rc)
      fprintf(stderr, "simengine-bench step: %s\n", err.message);
    else if (distinct)
      rc = bench_rows("mixed", &model, SE_VARIANTS(per_mixed), only, (int)steps, gpu, csv);
    else
      rc = bench_rows("six", &model, SE_VARIANTS(per_six), only, (int)steps, gpu, csv);
    se_neuron_model_free(&model);
  }
  if (!rc && huge_swc[0]) {
    se_neuron_model model;
    rc = huge_model(huge_swc, huge_max_length, &model, &err);
    if (rc)
      fprintf(stderr, "simengine-bench step: %s\n", err.message);
    else
      rc = bench_rows("huge", &model, SE_VARIANTS(per_huge), only, (int)huge_steps, gpu,
                      csv);
    se_neuron_model_free(&model);
  }
#undef SE_VARIANTS
  if (csv)
    fclose(csv);
  return rc;
}
