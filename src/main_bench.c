/* simengine-bench: benchmarks that print a table and write CSV. Each figure is printed next to
 * its ceiling measured in the same run (see docs/performance.md).
 *   simengine-bench hines [options]   batched Hines solves and full time steps on the CPU */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "neurons_impl.h"
#include "se_error.h"
#include "bench.h"
#include "bench_edd.h"
#include "bench_tdbem.h"
#include "swc.h"

static const char *usage =
    "Usage: simengine-bench SECTION [options]   (SECTION --help for its options)\n"
    "  hines   CPU batched Hines solves and time steps, flat and interleaved, 1 and all threads\n"
    "  step    whole time steps, CPU and GPU backends, against the step's byte floor\n"
    "  gpu-hines  GPU batched Hines solves, mono-morphology kernels, against the copy bandwidth\n"
    "  tridiag    GPU tridiagonal batches against cuSPARSE, and branch-level multi-morphology Hines\n"
    "  edd        one huge neuron: Exact Domain Decomposition on the GPU against sequential sweeps\n"
    "  tdbem      TD-BEM slice summation on the CPU (ng 1..16) against the front approach\n"
    "  gen-source the source of gen's generated step kernels per class, for SASS inspection\n"
    "\n"
    "simengine-bench hines [options]\n"
    "\n"
    "Times the CPU neuron engine on populations of one synthetic morphology class (paper 000,\n"
    "Table 1) per row: the Hines solve alone and the whole time step (currents, assembly, solve,\n"
    "gates), flat and interleaved layouts, one thread and all threads. Prints ns per\n"
    "compartment per step, the effective bandwidth of the solve at its byte floor (40 B per\n"
    "compartment: diag, rhs, the coupling and the parent index read once, the solution written\n"
    "once) and that bandwidth as a fraction of the memory copy bandwidth measured at the start.\n"
    "\n"
    "Options:\n"
    "  --classes LIST   comma list (default small-low,small-high,medium-low,medium-high,big-low,big-high)\n"
    "  --sizes LIST     neurons per population (default 256,2560,25600,256000)\n"
    "  --max-compartments N  skip populations larger than N compartments (default 200000000)\n"
    "  --threads N      threads of the parallel rows (default: all)\n"
    "  --min-time S     repeat each measurement for at least S seconds (default 0.3)\n"
    "  --csv FILE       also write the rows as CSV\n";

/* Copy bandwidth of the host memory (read + write bytes per second), best of a few memcpy of a
 * buffer much larger than the caches, with the given number of threads. */
static double copy_bandwidth(size_t bytes, int threads) {
  char *a = malloc(bytes), *b = malloc(bytes);
  if (!a || !b) {
    free(a);
    free(b);
    return 0.0;
  }
  memset(a, 1, bytes);
  memset(b, 2, bytes);
  double best = 1e30;
  for (int rep = 0; rep < 5; rep++) {
    double t0 = omp_get_wtime();
#pragma omp parallel num_threads(threads)
    {
      int n = omp_get_num_threads(), id = omp_get_thread_num();
      size_t chunk = bytes / (size_t)n, off = chunk * (size_t)id;
      memcpy(b + off, a + off, id == n - 1 ? bytes - off : chunk);
    }
    double t = omp_get_wtime() - t0;
    if (t < best)
      best = t;
  }
  free(a);
  free(b);
  return 2.0 * (double)bytes / best;
}

int se_bench_model(const se_morphology *mo, int64_t copies, se_neuron_model *m, se_error *err) {
  se_neuron_model_init(m);
  m->dt = 0.025;
  m->tstop = 1.0;
  SE_TRY(se_neuron_model_set_cells(m, 1, mo, &copies, err));
  int32_t nreg = 0;
  for (int32_t i = 0; i < mo->n_compartments; i++)
    if (mo->region[i] + 1 > nreg)
      nreg = mo->region[i] + 1;
  SE_TRY(se_biophysics_alloc(&m->bio, nreg, err));
  se_biophysics_set_prep_defaults(&m->bio);
  return se_neuron_model_validate(m, "benchmark model", err);
}

typedef struct timing {
  double solve_s, step_s; /* per step */
} timing;

/* Times the solve phase (after an untimed assembly, so every solve sees a fresh system) and the
 * whole step, each repeated for at least min_time seconds. */
static timing time_engine(se_neurons_t e, double min_time) {
  timing t = {0};
  int reps = 0;
  double solve = 0.0, t0 = omp_get_wtime();
  do {
    se_neurons_cpu_assemble(e);
    double s0 = omp_get_wtime();
    se_neurons_cpu_solve(e);
    solve += omp_get_wtime() - s0;
    reps++;
  } while (omp_get_wtime() - t0 < min_time || reps < 3);
  t.solve_s = solve / reps;
  se_error err = {0};
  reps = 0;
  t0 = omp_get_wtime();
  do {
    if (se_neurons_step(e, &err) != SE_OK) {
      fprintf(stderr, "simengine-bench: %s\n", err.message);
      exit(1);
    }
    reps++;
  } while (omp_get_wtime() - t0 < min_time || reps < 3);
  t.step_s = (omp_get_wtime() - t0) / reps;
  return t;
}

static int bench_hines(int argc, char **argv) {
  const char *classes = "small-low,small-high,medium-low,medium-high,big-low,big-high";
  const char *sizes = "256,2560,25600,256000";
  const char *csv_path = NULL;
  long long threads = omp_get_max_threads(), max_comp = 200000000LL;
  double min_time = 0.3;
  const se_bench_opt opts[] = {{"--classes", SE_BENCH_STRING, &classes},
                               {"--sizes", SE_BENCH_STRING, &sizes},
                               {"--csv", SE_BENCH_STRING, &csv_path},
                               {"--threads", SE_BENCH_INT, &threads},
                               {"--min-time", SE_BENCH_DOUBLE, &min_time},
                               {"--max-compartments", SE_BENCH_INT, &max_comp}};
  int parsed = se_bench_parse(argc, argv, "hines", usage, opts, sizeof opts / sizeof opts[0]);
  if (parsed >= 0)
    return parsed;
  if (threads < 1) {
    fprintf(stderr, "simengine-bench: --threads must be positive\n");
    return 2;
  }
  FILE *csv = NULL;
  if (csv_path && !(csv = fopen(csv_path, "w"))) {
    fprintf(stderr, "simengine-bench: cannot write '%s'\n", csv_path);
    return 1;
  }
  double bw1 = copy_bandwidth((size_t)1 << 30, 1),
         bwn = copy_bandwidth((size_t)1 << 30, (int)threads);
  printf("memory copy bandwidth (memcpy of 1 GiB, read + write): 1 thread %.1f GB/s, %lld threads "
         "%.1f GB/s\n\n",
         bw1 / 1e9, threads, bwn / 1e9);
  printf("%-11s %8s %11s %-11s %3s | %9s %8s %6s | %9s\n", "class", "neurons", "compartments",
         "layout", "thr", "solve ns", "GB/s", "%copy", "step ns");
  if (csv)
    fprintf(csv, "class,neurons,compartments,layout,threads,solve_ns_per_comp,solve_GBps,"
                 "copy_GBps,solve_fraction_of_copy,step_ns_per_comp\n");
  char *cls_list = strdup(classes), *save_c = NULL;
  for (char *cls = strtok_r(cls_list, ",", &save_c); cls; cls = strtok_r(NULL, ",", &save_c)) {
    se_error err = {0};
    se_morphology mo = {0};
    if (se_morphology_synthetic(cls, 1, &mo, &err) != SE_OK) {
      fprintf(stderr, "simengine-bench: %s\n", err.message);
      return 2;
    }
    char *size_list = strdup(sizes), *save_s = NULL;
    for (char *sz = strtok_r(size_list, ",", &save_s); sz; sz = strtok_r(NULL, ",", &save_s)) {
      int64_t neurons = atoll(sz);
      if ((long long)neurons * mo.n_compartments > max_comp) {
        printf("%-11s %8lld  skipped: more than --max-compartments %lld\n", cls,
               (long long)neurons, max_comp);
        continue;
      }
      se_neuron_model model;
      if (se_bench_model(&mo, neurons, &model, &err) != SE_OK) {
        fprintf(stderr, "simengine-bench: %s\n", err.message);
        return 1;
      }
      for (int lay = 0; lay < 2; lay++) {
        se_neurons_options opt = {.layout = lay ? SE_LAYOUT_INTERLEAVED : SE_LAYOUT_FLAT,
                                  .interleave_width = 8};
        se_neurons_t e = NULL;
        if (se_neurons_create(&model, 0, neurons, &opt, &e, &err) != SE_OK) {
          fprintf(stderr, "simengine-bench: %s\n", err.message);
          return 1;
        }
        const int thread_counts[2] = {1, (int)threads};
        for (int tc = 0; tc < (threads > 1 ? 2 : 1); tc++) {
          omp_set_num_threads(thread_counts[tc]);
          timing t = time_engine(e, min_time);
          double comps = (double)neurons * mo.n_compartments;
          double solve_ns = 1e9 * t.solve_s / comps, step_ns = 1e9 * t.step_s / comps;
          double gbps = 40.0 * comps / t.solve_s / 1e9;
          double copy = (thread_counts[tc] == 1 ? bw1 : bwn) / 1e9;
          printf("%-11s %8lld %11.0f %-11s %3d | %9.2f %8.1f %5.0f%% | %9.2f\n", cls,
                 (long long)neurons, comps, lay ? "interleaved" : "flat", thread_counts[tc],
                 solve_ns, gbps, 100.0 * gbps / copy, step_ns);
          fflush(stdout);
          if (csv)
            fprintf(csv, "%s,%lld,%.0f,%s,%d,%.4f,%.3f,%.3f,%.4f,%.4f\n", cls, (long long)neurons,
                    comps, lay ? "interleaved" : "flat", thread_counts[tc], solve_ns, gbps, copy,
                    gbps / copy, step_ns);
        }
        se_neurons_destroy(e);
      }
      se_neuron_model_free(&model);
    }
    free(size_list);
    se_morphology_free(&mo);
  }
  free(cls_list);
  if (csv)
    fclose(csv);
  return 0;
}

int main(int argc, char **argv) {
  if (argc >= 2 && !strcmp(argv[1], "hines"))
    return bench_hines(argc, argv);
  if (argc >= 2 && !strcmp(argv[1], "step"))
    return se_bench_step(argc, argv);
  if (argc >= 2 && !strcmp(argv[1], "gpu-hines"))
    return se_bench_gpu_hines(argc, argv);
  if (argc >= 2 && !strcmp(argv[1], "tridiag"))
    return se_bench_tridiag(argc, argv);
  if (argc >= 2 && !strcmp(argv[1], "edd"))
    return se_bench_edd(argc, argv);
  if (argc >= 2 && !strcmp(argv[1], "tdbem"))
    return se_bench_tdbem(argc, argv);
  if (argc >= 2 && !strcmp(argv[1], "gen-source"))
    return se_bench_gen_source(argc, argv);
  fputs(usage, argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) ? stdout : stderr);
  return argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) ? 0 : 2;
}
