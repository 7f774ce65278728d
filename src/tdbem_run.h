/* The tdbem marching on in time over MPI ranks (DESIGN.md Section 4, docs/input-tdbem.md
 * "Running"): reads a tdbem input file, marches every step and writes the output file. */
#ifndef SE_TDBEM_RUN_H
#define SE_TDBEM_RUN_H

#include <mpi.h>

#include "simengine/error.h"

/* Runs the case in input and writes output (under "<output>.tmp", renamed on success). Each rank
 * owns a contiguous interval of slices with about equal stored values (se_partition_contiguous)
 * and keeps the history of its unknowns; every ng steps (1 .. 16) it computes its part of the
 * ng next summation vectors at once (se_tdbem_sum_cpu), then for each step the partial sums are
 * reduced to rank 0, rank 0 subtracts them from l_n, M0 a_n = l_n - s_n is solved over comm
 * (MUMPS), a_n is broadcast, every rank updates the history of its slices, radiates a_n into the
 * vectors still open (se_tdbem_radiate_cpu on the near field) and writes its columns of
 * /tdbem/state. Rank 0 prints a progress line. The result does not depend on the number of
 * ranks except for the rounding of the reduction order. Collective over comm. */
int se_tdbem_run(const char *input, const char *output, MPI_Comm comm, int ng, se_error *err);

#endif
