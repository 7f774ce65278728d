/* Sections of simengine-bench (src/bench_*.c). Each prints a table next to its ceilings measured
 * in the same run and can write CSV; each returns the program's exit code. */
#ifndef SE_BENCH_H
#define SE_BENCH_H

#include "simengine/neurons.h"
#include "swc.h"

/* A model of `copies` cells of one morphology with the default biophysics of simengine-prep (hh
 * in soma and axon, pas elsewhere), dt 0.025 ms. */
int se_bench_model(const se_morphology *mo, int64_t copies, se_neuron_model *m, se_error *err);

/* simengine-bench step: whole time steps of the engine, CPU and GPU backends, next to the byte
 * floor of a step (src/bench_step.c). */
int se_bench_step(int argc, char **argv);

/* simengine-bench gpu-hines: batched Hines solves on the GPU, mono-morphology variants
 * (src/bench_gpu_hines.c). */
int se_bench_gpu_hines(int argc, char **argv);

/* simengine-bench tridiag: batched tridiagonal solvers against cuSPARSE (src/bench_tridiag.c). */
int se_bench_tridiag(int argc, char **argv);

#endif
