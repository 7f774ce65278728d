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

/* Splits the comma-separated list s into at most max integers (atoll each) in out; returns how
 * many. */
int se_bench_parse_list(const char *s, long long *out, int max);

/* Seconds on the monotonic clock. */
double se_bench_now(void);

/* Sorts v[0..n) ascending. */
void se_bench_sort(double *v, int n);

/* Sorts v[0..n) (n >= 1) and returns its median (the mean of the two middle values when n is
 * even). */
double se_bench_median(double *v, int n);

#ifdef SIMENGINE_HAVE_CUDA
#include "se_cuda.h"

/* One untimed (restore) or timed (solve) step of se_bench_time_solve on ctx. */
typedef int (*se_bench_step_fn)(void *ctx, se_error *err);

/* Times solve() alone with CUDA events on stream, restore() untimed before each: warmup solves
 * first, then at least min_reps, until min_time seconds of solves or max_reps. Gives the median
 * in seconds and the number of timed solves. */
int se_bench_time_solve(cudaStream_t stream, double min_time, int warmup, int min_reps,
                        int max_reps, se_bench_step_fn restore, se_bench_step_fn solve, void *ctx,
                        double *median_s, int *reps_out, se_error *err);
#endif

/* simengine-bench step: whole time steps of the engine, CPU and GPU backends, next to the byte
 * floor of a step (src/bench_step.c). */
int se_bench_step(int argc, char **argv);

/* simengine-bench gpu-hines: batched Hines solves on the GPU, mono-morphology variants
 * (src/bench_gpu_hines.c). */
int se_bench_gpu_hines(int argc, char **argv);

/* simengine-bench tridiag: batched tridiagonal solvers against cuSPARSE (src/bench_tridiag.c). */
int se_bench_tridiag(int argc, char **argv);

/* simengine-bench gen-source: writes gen's generated kernel source per synthetic class
 * (src/bench_gen.c). */
int se_bench_gen_source(int argc, char **argv);

#endif
