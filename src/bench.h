/* Sections of simengine-bench (src/bench_*.c). Each prints a table next to its ceilings measured
 * in the same run and can write CSV; each returns the program's exit code. */
#ifndef SE_BENCH_H
#define SE_BENCH_H

/* simengine-bench gpu-hines: batched Hines solves on the GPU, mono-morphology variants
 * (src/bench_gpu_hines.c). */
int se_bench_gpu_hines(int argc, char **argv);

/* simengine-bench tridiag: batched tridiagonal solvers against cuSPARSE (src/bench_tridiag.c). */
int se_bench_tridiag(int argc, char **argv);

#endif
