/* Sections of simengine-bench (src/bench_*.c). Each prints a table next to its ceilings measured
 * in the same run and can write CSV; each returns the program's exit code. */
#ifndef SE_BENCH_H
#define SE_BENCH_H

#include "simengine/neurons.h"
#include "swc.h"

/* A model of `copies` cells of one morphology with the default biophysics of simengine-prep (hh
 * in soma and axon, pas elsewhere), dt 0.025 ms. */
int se_bench_model(const se_morphology *mo, int64_t copies, se_neuron_model *m, se_error *err);

/* One option of a benchmark section: its name ("--sizes"), kind and where its value goes
 * (const char * for STRING, long long for INT, double for DOUBLE, int set to 1 for FLAG). */
typedef enum se_bench_opt_kind {
  SE_BENCH_STRING,
  SE_BENCH_INT,
  SE_BENCH_DOUBLE,
  SE_BENCH_FLAG
} se_bench_opt_kind;

typedef struct se_bench_opt {
  const char *name;
  se_bench_opt_kind kind;
  void *target;
} se_bench_opt;

/* Parses argv[2..] (argv[1] is the section) against opts. Returns -1 when the section should run,
 * otherwise the exit code: 0 after --help (usage printed), 2 on a bad option (message printed). */
int se_bench_parse(int argc, char **argv, const char *section, const char *usage,
                   const se_bench_opt *opts, int n_opts);

/* simengine-bench step: whole time steps of the engine, CPU and GPU backends, next to the byte
 * floor of a step (src/bench_step.c). */
int se_bench_step(int argc, char **argv);

/* simengine-bench gpu-hines: batched Hines solves on the GPU, mono-morphology variants
 * (src/bench_gpu_hines.c). */
int se_bench_gpu_hines(int argc, char **argv);

/* simengine-bench tridiag: batched tridiagonal solvers against cuSPARSE (src/bench_tridiag.c). */
int se_bench_tridiag(int argc, char **argv);

#endif
