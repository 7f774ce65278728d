/* The collective end of a test run on several MPI ranks. */
#ifndef SE_TEST_MPI_H
#define SE_TEST_MPI_H

#include <mpi.h>

#include "se_test.h"

/* Adds up the failures of every rank of comm; rank 0 prints the summary line with that total.
 * Returns the exit code on every rank: 1 when any rank failed. Collective. */
static inline int se_test_finish_all(se_test_state *st, const char *name, MPI_Comm comm) {
  int rank, total = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Allreduce(&st->failures, &total, 1, MPI_INT, MPI_SUM, comm);
  st->failures = total;
  if (rank == 0)
    se_test_finish(st, name);
  return total ? 1 : 0;
}

#endif
