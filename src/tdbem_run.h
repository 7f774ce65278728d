/* The tdbem marching on in time over MPI ranks (DESIGN.md Section 4, docs/input-tdbem.md
 * "Running"): reads a tdbem input file, marches every step and writes the output file. */
#ifndef SE_TDBEM_RUN_H
#define SE_TDBEM_RUN_H

#include <mpi.h>

#include "simengine/error.h"
#include "simengine/tdbem.h"

/* Runs the case in input and writes output (under "<output>.tmp", renamed on success). The
 * unknowns are renumbered by ordering (original, Morton or Hilbert over /tdbem/positions, which
 * the curves need: an input error names the dataset when it is missing); rank 0 prints the
 * ordering-quality score of the original and of the chosen numbering. Each rank owns a
 * contiguous interval of slices of the new numbering with about equal stored values
 * (se_partition_contiguous), reads the old slices it is made of (one collective read per run of
 * consecutive old slices), renumbers them (se_tdbem_slices_permute) and keeps the history of its
 * unknowns; every ng steps (1 .. 16) it computes its part of the
 * ng next summation vectors at once (se_tdbem_sum_cpu), then for each step the partial sums are
 * reduced to rank 0, rank 0 subtracts them from l_n (un-permuted: l_n and M0 stay in the original
 * numbering), M0 a_n = l_n - s_n is solved over comm (MUMPS), a_n is broadcast, every rank
 * updates the history of its slices (permuted), radiates a_n into the vectors still open
 * (se_tdbem_radiate_cpu on the near field) and writes its interval of columns of /tdbem/state,
 * always in the original numbering. Rank 0 prints a progress line. The result does not depend
 * on the number of ranks or the ordering except for rounding (the reduction order, the order of
 * the terms in a sum). Collective over comm. */
int se_tdbem_run(const char *input, const char *output, MPI_Comm comm, int ng, se_ordering ordering,
                 se_error *err);

/* The workers of a rank (docs/tdbem.md Section 13): one CPU worker (OpenMP) and gpus GPU workers
 * (one per GPU) split the rank's interval of slices into contiguous parts, CPU first. */
typedef struct se_tdbem_run_options {
  int ng;                     /* 1 .. 16 */
  se_ordering ordering;       /* original, Morton or Hilbert */
  int gpus;                   /* GPU workers per rank; < 0: the node's visible GPUs shared out
                                 over its ranks (at least 1 when there is one); 0: CPU only */
  double gpu_fraction;        /* share of the rank's stored values given to the GPU workers
                                 (split equally between them by values), in [0, 1] */
  se_tdbem_gpu_kernel kernel; /* the GPU summation kernel */
  int bc;                     /* Full-Blocking block width, 16 or 32 */
  int cpu_workers;            /* CPU workers (< 1: 1); several only to test the balancing on a
                                 machine without GPU (they run one after the other) */
  int balance;                /* 0: static split; 1 + se_balance_method (partition/balance.h):
                                 the workers' intervals move after every group of ng steps */
  int balance_iterations;     /* updates before the balancer keeps the best split (< 1: 20) */
  int m0_ranks;               /* ranks 0 .. m0_ranks-1 solve with M0 (MUMPS); < 1: all */
} se_tdbem_run_options;

/* se_tdbem_run with workers: as se_tdbem_run, the summation of each group split between the CPU
 * worker(s) and the GPU workers (started on the GPUs first, then the CPU workers' parts; the
 * partial sums are added every group before the steps' reduction over the ranks); the radiation
 * likewise (each GPU worker radiates its slices on the device). Rank r of a node uses devices
 * (r * gpus + k) mod (visible devices). With balance, each group is an iteration of the dynamic
 * balancer over the rank's slices (items; GPU caps from the device's free memory): the workers'
 * times (CPU: wall clock of its summation, GPU: device time of its kernels) go to
 * se_balance_update and the slices move before the next group; the per-iteration history is
 * written to /simengine/balance of the output (io/balance_history.h). Fails on every rank when
 * GPUs are asked for and none is visible or the build has no CUDA. Collective over comm. */
int se_tdbem_run_workers(const char *input, const char *output, MPI_Comm comm,
                         const se_tdbem_run_options *opt, se_error *err);

#endif
