/* simengine-bench step: whole time steps (currents, assembly, Hines solve, gates, spikes) of the
 * engine on the CPU (all threads) and on the GPU (fused and three-kernel), per compartment-step,
 * next to the step's byte floor and the measured copy bandwidths. */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "neurons_impl.h"

static const char *usage =
    "Usage: simengine-bench step [options]\n"
    "\n"
    "Times whole time steps of populations of one synthetic class per row on the CPU backend\n"
    "(interleaved, all threads) and, when a GPU is visible, on the CUDA backend (fused kernel,\n"
    "three kernels and the streaming kernel fused2; width 32). Prints ns per compartment-step and\n"
    "the ratio of the time to the step's byte floor at the measured copy bandwidth: the state\n"
    "read and written once (v, m, h, n: 64 B per hh compartment, v: 16 B per passive one) plus\n"
    "the constants read once (93 B per compartment of each morphology).\n"
    "\n"
    "Options:\n"
    "  --classes LIST   comma list (default: the six classes of paper 000)\n"
    "  --neurons N      cells per population (default 25600)\n"
    "  --steps N        timed steps (default 40)\n"
    "  --cpu 0|1        include the CPU backend (default 1)\n"
    "  --csv FILE       also write the rows as CSV\n";

/* Bytes a step must move at least: state once in and out, constants once. */
static double floor_bytes(const se_neuron_model *m, se_neurons_t e) {
  double bytes = 0.0;
  for (int64_t c = 0; c < m->n_cells; c++) {
    int32_t mo = m->cell_morphology[c];
    for (int64_t k = m->morph_offsets[mo]; k < m->morph_offsets[mo + 1]; k++)
      bytes += e->has_hh_copy[k] ? 64.0 : 16.0;
  }
  return bytes + 93.0 * (double)se_neuron_model_compartments(m);
}

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

int se_bench_step(int argc, char **argv) {
  const char *classes = "small-low,small-high,medium-low,medium-high,big-low,big-high";
  const char *csv_path = NULL;
  long long neurons = 25600, steps = 40, with_cpu = 1;
  const se_bench_opt opts[] = {{"--classes", SE_BENCH_STRING, &classes},
                               {"--neurons", SE_BENCH_INT, &neurons},
                               {"--steps", SE_BENCH_INT, &steps},
                               {"--cpu", SE_BENCH_INT, &with_cpu},
                               {"--csv", SE_BENCH_STRING, &csv_path}};
  int parsed = se_bench_parse(argc, argv, "step", usage, opts, sizeof opts / sizeof opts[0]);
  if (parsed >= 0)
    return parsed;
  if (neurons < 1 || steps < 1) {
    fprintf(stderr, "simengine-bench step: --neurons and --steps must be positive\n");
    return 2;
  }
  se_error err = {0};
  double gpu_bw = 0.0;
  int gpus = se_gpu_count();
  if (gpus > 0) {
    if (se_gpu_copy_bandwidth(0, (size_t)2 << 30, &gpu_bw, &err) != SE_OK) {
      fprintf(stderr, "simengine-bench step: %s\n", err.message);
      return 1;
    }
    printf("device copy bandwidth (cudaMemcpy device to device, 2 GiB, read + write): %.1f GB/s\n",
           gpu_bw / 1e9);
  } else {
    printf("no GPU visible: CPU rows only\n");
  }
  printf("CPU threads: %d\n\n", omp_get_max_threads());
  printf("%-11s %8s %11s %-14s | %10s %9s %9s\n", "class", "neurons", "compartments", "backend",
         "ns/comp", "floor ns", "x floor");
  FILE *csv = csv_path ? fopen(csv_path, "w") : NULL;
  if (csv_path && !csv) {
    fprintf(stderr, "simengine-bench step: cannot write '%s'\n", csv_path);
    return 1;
  }
  if (csv)
    fprintf(csv, "class,neurons,compartments,backend,ns_per_comp_step,floor_bytes_per_comp,"
                 "copy_GBps,times_floor\n");
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
    double comps = (double)neurons * mo.n_compartments;
    for (int variant = with_cpu ? 0 : 1; variant < (gpus > 0 ? 4 : 1) && !rc; variant++) {
      se_neurons_options opt = se_neurons_default_options();
      const char *name = "cpu";
      double bw = 0.0;
      if (variant > 0) {
        opt.backend = SE_BACKEND_CUDA;
        opt.interleave_width = 32;
        opt.gpu_fused = variant == 3 ? 2 : variant == 1;
        name = variant == 1 ? "cuda fused" : variant == 2 ? "cuda phases" : "cuda fused2";
        bw = gpu_bw;
      }
      se_neurons_t e = NULL;
      double per_step = -1.0;
      if (se_neurons_create(&model, 0, neurons, &opt, &e, &err) == SE_OK)
        per_step = time_steps(e, (int)steps, &err);
      if (per_step < 0.0) {
        fprintf(stderr, "simengine-bench step: %s\n", err.message);
        rc = 1;
      } else {
        double fb = floor_bytes(&model, e), ns = 1e9 * per_step / comps;
        double floor_ns = bw > 0.0 ? 1e9 * fb / bw / comps : 0.0;
        char ratio[32] = "-";
        if (bw > 0.0)
          snprintf(ratio, sizeof ratio, "%.2f", ns / floor_ns);
        printf("%-11s %8lld %11.0f %-14s | %10.4f %9.4f %9s\n", cls, neurons, comps, name, ns,
               floor_ns, ratio);
        if (csv)
          fprintf(csv, "%s,%lld,%.0f,%s,%.5f,%.2f,%.1f,%.3f\n", cls, neurons, comps, name, ns,
                  fb / comps, bw / 1e9, bw > 0.0 ? ns / floor_ns : 0.0);
        fflush(stdout);
      }
      se_neurons_destroy(e);
    }
    se_neuron_model_free(&model);
    se_morphology_free(&mo);
  }
  free(list);
  if (csv)
    fclose(csv);
  return rc;
}
