/* simengine-bench edd: one huge neuron solved by Exact Domain Decomposition on the GPU
 * (src/bench_edd.c, docs/edd.md). */
#ifndef SE_BENCH_EDD_H
#define SE_BENCH_EDD_H

/* Times EDD solves of one refined morphology against the sequential Hines sweep on one GPU
 * thread, on one CPU core and the branch-level GPU solve, next to the device copy bandwidth;
 * returns the program's exit code (options: --help). Not collective. */
int se_bench_edd(int argc, char **argv);

#endif
