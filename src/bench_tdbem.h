/* simengine-bench tdbem: the tdbem summation (docs/tdbem.md Section 11). */
#ifndef SE_BENCH_TDBEM_H
#define SE_BENCH_TDBEM_H

/* simengine-bench tdbem: builds a synthetic case in memory (io/prep_tdbem.h, sizes from the
 * options), times the CPU multi-vector/vector product (se_tdbem_sum_cpu) for each ng in single
 * and double values and the front approach (one CSR SpMV per k, src/tdbem_front_ref.h) on the
 * same matrices, next to the bandwidth floor from the host memcpy bandwidth measured in the same
 * run; prints a table and optionally writes CSV. argv[1] is "tdbem". Returns the exit code: 0,
 * 1 (a failure) or 2 (bad options). Not collective (no MPI). */
int se_bench_tdbem(int argc, char **argv);

#endif
