/* The TD-BEM matrix M0 (symmetric positive definite, sparse, almost diagonal) solved with MUMPS:
 * analysis (SCOTCH ordering) and factorisation once in se_tdbem_m0_create, one solve per time step
 * in se_tdbem_m0_solve. MUMPS runs over a duplicate of the caller's communicator (every rank: the
 * fastest choice measured, docs/tdbem-m0.md); M0 and the right-hand side are centralised on rank 0.
 * Every MUMPS failure becomes an se_error naming the phase, INFOG(1), its meaning and INFOG(2);
 * since MUMPS makes INFOG identical on all its processes, every rank returns the same error. */
#include <dmumps_c.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "se_error.h"
#include "simengine/tdbem.h"

/* MUMPS job codes and the 1-based MUMPS parameter numbers used below (ICNTL(k) is icntl[k-1]). */
enum {
  JOB_INIT = -1, JOB_END = -2, JOB_ANALYSE = 1, JOB_FACTORISE = 2, JOB_SOLVE = 3,
  SYM_SPD = 1,           /* SYM = 1: symmetric positive definite */
  PAR_HOST_WORKS = 1,    /* PAR = 1: the host (rank 0) takes part in the factorisation */
  FACTORISE_ATTEMPTS = 4 /* factorisations tried, ICNTL(14) doubled after a workspace error */
};
#define ICNTL(id, k) ((id)->icntl[(k) - 1])
#define INFOG(id, k) ((id)->infog[(k) - 1])

struct se_tdbem_m0_solver {
  MPI_Comm comm;     /* duplicate of the caller's communicator, MUMPS's communicator */
  int rank;
  int64_t n;
  int mumps_started; /* JOB = -1 succeeded: JOB = -2 is owed */
  DMUMPS_STRUC_C id; /* the MUMPS instance; it stays at this address between calls */
};

/* ---- MUMPS's error codes (MUMPS 5.5.1 user guide, INFOG(1) < 0) -------------------------- */

/* One documented error: the se_code it maps to, what went wrong, and what INFOG(2) holds (NULL
 * when it holds nothing). millions: a negative INFOG(2) counts millions. */
typedef struct mumps_error_text {
  int code;
  se_code se;
  const char *what;
  const char *info2;
  int millions;
} mumps_error_text;

static const mumps_error_text mumps_errors[] = {
  {-1, SE_ERR_MPI, "an error occurred on another MUMPS process", "the process's rank", 0},
  {-2, SE_ERR_INPUT, "NNZ (the number of entries of M0) is out of range", "NNZ", 0},
  {-3, SE_ERR_ARG,
    "MUMPS was called with an invalid JOB (a phase missing or failed before, or JOB differing "
    "between the processes)",
    "the local JOB", 0},
  {-4, SE_ERR_ARG, "the user-given permutation PERM_IN is wrong", "the position in PERM_IN", 0},
  {-5, SE_ERR_NOMEM,
    "a real workspace allocation failed during the analysis",
    "the number of reals requested", 1},
  {-6, SE_ERR_NUMERIC, "M0 is structurally singular", "the structural rank", 0},
  {-7, SE_ERR_NOMEM,
    "an integer workspace allocation failed during the analysis",
    "the number of integers requested", 1},
  {-8, SE_ERR_NOMEM,
    "the main integer workspace IS is too small for the factorisation (ICNTL(14) too small)",
    NULL, 0},
  {-9, SE_ERR_NOMEM,
    "the main real workspace S is too small for the factorisation (ICNTL(14) too small)",
    "the number of entries missing in S", 1},
  {-10, SE_ERR_NUMERIC,
    "M0 is numerically singular (a zero pivot): it is not positive definite",
    "the number of pivots eliminated before the failure", 0},
  {-11, SE_ERR_NOMEM,
    "the real workspace S is too small for the solve",
    "the number of entries missing", 0},
  {-12, SE_ERR_NOMEM, "the real workspace S is too small for the iterative refinement", NULL, 0},
  {-13, SE_ERR_NOMEM,
    "a workspace allocation failed during the factorisation or the solve (out of memory)",
    "the number of entries requested", 1},
  {-14, SE_ERR_NOMEM, "the integer workspace IS is too small for the solve", NULL, 0},
  {-15, SE_ERR_NOMEM,
    "the integer workspace IS is too small for the iterative refinement or error analysis",
    NULL, 0},
  {-16, SE_ERR_INPUT, "N (the order of M0) is out of range", "N", 0},
  {-17, SE_ERR_NOMEM, "the internal send buffer is too small (ICNTL(14) too small)", NULL, 0},
  {-18, SE_ERR_ARG,
    "the blocking size for multiple right-hand sides (ICNTL(27)) is too large",
    "the largest usable ICNTL(27)", 0},
  {-19, SE_ERR_NOMEM,
    "the working memory allowed by ICNTL(23) is too small for the factorisation",
    "the number of entries missing", 1},
  {-20, SE_ERR_NOMEM,
    "the internal reception buffer is too small (ICNTL(14) too small)",
    "the bytes the buffer needs", 0},
  {-21, SE_ERR_ARG, "PAR = 0 needs at least two processes", NULL, 0},
  {-22, SE_ERR_ARG,
    "an array given to MUMPS is missing, too small, or given where it must not be (for example no "
    "right-hand side on rank 0)",
    "which array (1 IRN, 2 JCN, 4 A, 7 RHS, 16 IRN_loc/JCN_loc/A_loc, ...)", 0},
  {-23, SE_ERR_MPI, "MPI was not initialised before MUMPS's JOB = -1", NULL, 0},
  {-24, SE_ERR_ARG, "NELT (elemental format) is out of range", "NELT", 0},
  {-25, SE_ERR_MPI, "the BLACS (ScaLAPACK's communication layer) failed to initialise", NULL, 0},
  {-26, SE_ERR_ARG,
    "LRHS (the leading dimension of the right-hand side) is out of range",
    "LRHS", 0},
  {-27, SE_ERR_ARG, "NZ_RHS and IRHS_PTR(NRHS+1) do not match", "IRHS_PTR(NRHS+1)", 0},
  {-28, SE_ERR_ARG, "IRHS_PTR(1) is not 1", "IRHS_PTR(1)", 0},
  {-29, SE_ERR_ARG, "LSOL_loc is smaller than INFO(23)", "LSOL_loc", 0},
  {-30, SE_ERR_ARG, "SCHUR_LLD is out of range", "SCHUR_LLD", 0},
  {-31, SE_ERR_ARG,
    "a 2D block-cyclic symmetric Schur complement needs MBLOCK = NBLOCK",
    "MBLOCK - NBLOCK", 0},
  {-32, SE_ERR_ARG, "NRHS does not agree with ICNTL(25)", "NRHS", 0},
  {-33, SE_ERR_ARG,
    "ICNTL(26) was asked for but no Schur complement was requested at the analysis",
    "ICNTL(26)", 0},
  {-34, SE_ERR_ARG, "LREDRHS is out of range", "LREDRHS", 0},
  {-35, SE_ERR_ARG,
    "the expansion phase (ICNTL(26) = 2) was called without the reduction phase",
    "ICNTL(26)", 0},
  {-36, SE_ERR_ARG, "ICNTL(25) does not agree with INFOG(28)", "ICNTL(25)", 0},
  {-37, SE_ERR_ARG,
    "ICNTL(25) is incompatible with another parameter",
    "the number xx of the ICNTL(xx) concerned", 0},
  {-38, SE_ERR_UNSUPPORTED,
    "parallel analysis (ICNTL(28) = 2) was asked for but this MUMPS has neither PT-SCOTCH nor "
    "ParMETIS",
    NULL, 0},
  {-39, SE_ERR_ARG,
    "parallel analysis is incompatible with ICNTL(5), ICNTL(19) or ICNTL(6)",
    NULL, 0},
  {-40, SE_ERR_NUMERIC,
    "M0 is not positive definite: a negative or zero pivot appeared in the root front factorised "
    "by ScaLAPACK (SYM = 1)",
    NULL, 0},
  {-41, SE_ERR_ARG, "LWK_USER differs between the factorisation and the solve", NULL, 0},
  {-42, SE_ERR_ARG,
    "ICNTL(32) = 1 needs the same positive NRHS at analysis, factorisation and solve",
    "NRHS at the analysis", 0},
  {-43, SE_ERR_ARG,
    "ICNTL(32) is incompatible with another parameter",
    "the number xx of the ICNTL(xx) concerned", 0},
  {-44, SE_ERR_ARG, "the solve cannot run: the factors were discarded (ICNTL(31))", "ICNTL(31)", 0},
  {-45, SE_ERR_ARG, "NRHS <= 0", "NRHS", 0},
  {-46, SE_ERR_ARG, "NZ_RHS <= 0 is not allowed here", "NZ_RHS", 0},
  {-47, SE_ERR_ARG, "entries of the inverse were requested with NRHS != N", "NRHS", 0},
  {-48, SE_ERR_ARG,
    "ICNTL(30) is incompatible with another parameter",
    "the number xx of the ICNTL(xx) concerned", 0},
  {-49, SE_ERR_ARG, "SIZE_SCHUR is wrong or changed since the analysis", "SIZE_SCHUR", 0},
  {-50, SE_ERR_NUMERIC,
    "the fill-reducing ordering failed (the ordering library returned an error or a wrong result)",
    NULL, 0},
  {-51, SE_ERR_UNSUPPORTED,
    "the graph is too large for a 32-bit ordering library",
    "the size needed (a negative value: millions)", 1},
  {-52, SE_ERR_UNSUPPORTED,
    "the ordering library was not built with 64-bit integers like MUMPS",
    "which library (1 METIS/ParMETIS, 2 SCOTCH/PT-SCOTCH, 3 PORD)", 0},
  {-53, SE_ERR_ARG, "an internal error, possibly inconsistent input between two calls", NULL, 0},
  {-54, SE_ERR_ARG,
    "the factorisation asks for BLR compression (ICNTL(35)) that the analysis did not prepare",
    NULL, 0},
  {-55, SE_ERR_ARG,
    "LRHS_loc is smaller than Nloc_RHS (distributed right-hand side)",
    "LRHS_loc", 0},
  {-56, SE_ERR_ARG, "RHS_loc and SOL_loc share an array but LRHS_loc < LSOL_loc", "LRHS_loc", 0},
  {-57, SE_ERR_ARG,
    "the block format (ICNTL(15)) was given wrongly",
    "the issue (1 NBLK, 2 BLKPTR, 3 BLKVAR, 4 ICNTL(15) < 0 with BLKPTR)", 0},
  {-70, SE_ERR_IO, "the file to save the instance to exists already", NULL, 0},
  {-71, SE_ERR_IO, "a file to save the instance could not be created", NULL, 0},
  {-72, SE_ERR_IO, "saving the instance failed (a write did not succeed)", "the bytes to write", 1},
  {-73, SE_ERR_IO,
    "the saved instance does not match this one",
    "which parameter (1 Fortran version, 2 integer size, 3 processes, 4 number of processes, 5 "
    "arithmetic, 6 SYM, 7 PAR)", 0},
  {-74, SE_ERR_IO, "the file of a saved instance could not be opened", "the rank that failed", 0},
  {-75, SE_ERR_IO,
    "restoring the instance failed (a read did not succeed)",
    "the size still to read", 1},
  {-76, SE_ERR_IO, "the files of a saved instance could not be deleted", "the rank that failed", 0},
  {-77, SE_ERR_IO, "neither SAVE_DIR nor MUMPS_SAVE_DIR is defined", NULL, 0},
  {-78, SE_ERR_NOMEM,
    "a workspace allocation failed while restoring an instance",
    "the size still to allocate", 1},
  {-79, SE_ERR_IO,
    "MUMPS found no free Fortran unit for its files",
    "where (1 WRITE_PROBLEM at the analysis, 2 save/restore)", 0},
  {-90, SE_ERR_IO, "the out-of-core management failed", NULL, 0},
  {-800, SE_ERR_UNSUPPORTED,
    "a temporary restriction of this MUMPS release",
    "the case (5: elemental format with BLR)", 0},
};

/* Fills err from the failed MUMPS call: the phase, INFOG(1) and its meaning, INFOG(2). Returns
 * the mapped se_code. The same on every process (INFOG is global). */
static int mumps_fail(const DMUMPS_STRUC_C *id, const char *phase, int64_t n, se_error *err) {
  const int code = INFOG(id, 1), info2 = INFOG(id, 2);
  const mumps_error_text *e = NULL;
  for (size_t i = 0; i < sizeof mumps_errors / sizeof mumps_errors[0]; i++)
    if (mumps_errors[i].code == code)
      e = &mumps_errors[i];
  char detail[384] = "";
  if (!e)
    snprintf(detail, sizeof detail, "; INFOG(2) = %d", info2);
  else if (e->info2 && e->millions && info2 < 0)
    snprintf(detail, sizeof detail, "; INFOG(2) = %d: %s, %lld", info2, e->info2,
             -1000000LL * info2);
  else if (e->info2)
    snprintf(detail, sizeof detail, "; INFOG(2) = %d: %s", info2, e->info2);
  SE_FAIL(err, e ? e->se : SE_ERR_ARG,
          "MUMPS %s %s of M0 (N = %lld) failed with INFOG(1) = %d: %s%s", id->version_number,
          phase, (long long)n, code,
          e ? e->what : "an error code not documented in the MUMPS 5.5.1 user guide", detail);
}

/* ---- helpers -------------------------------------------------------------------------------- */

/* Checks M0 on rank 0 before MUMPS sees it: sizes, arrays, every entry in range, in the lower
 * triangle (row >= col) and finite. Not collective. */
static int check_m0(const se_tdbem_m0 *m0, se_error *err) {
  if (!m0)
    SE_FAIL(err, SE_ERR_ARG, "M0 is NULL on rank 0");
  if (m0->n < 1 || m0->n > INT32_MAX)
    SE_FAIL(err, SE_ERR_INPUT, "M0: N = %lld is out of range [1, %d]", (long long)m0->n, INT32_MAX);
  if (m0->nnz < 1)
    SE_FAIL(err, SE_ERR_INPUT, "M0: nnz = %lld, it must be at least 1", (long long)m0->nnz);
  if (!m0->row || !m0->col || !m0->val)
    SE_FAIL(err, SE_ERR_ARG, "M0: row, col or val is NULL (nnz = %lld)", (long long)m0->nnz);
  for (int64_t k = 0; k < m0->nnz; k++) {
    const int32_t i = m0->row[k], j = m0->col[k];
    if (i < 0 || i >= m0->n || j < 0 || j >= m0->n)
      SE_FAIL(err, SE_ERR_INPUT, "M0 entry %lld: (row %d, col %d) is out of range [0, %lld)",
              (long long)k, i, j, (long long)m0->n);
    if (i < j)
      SE_FAIL(err, SE_ERR_INPUT,
              "M0 entry %lld: (row %d, col %d) is above the diagonal; M0 must be given as its "
              "lower triangle (row >= col)", (long long)k, i, j);
    if (!isfinite(m0->val[k]))
      SE_FAIL(err, SE_ERR_INPUT, "M0 entry %lld: (row %d, col %d) has the value %g", (long long)k,
              i, j, m0->val[k]);
  }
  return SE_OK;
}

/* Copies M0 on rank 0 into MUMPS's centralised assembled input (1-based indices). */
static int give_m0(DMUMPS_STRUC_C *id, const se_tdbem_m0 *m0, se_error *err) {
  SE_CALLOC(err, id->irn, m0->nnz, "the row indices of M0 for MUMPS");
  SE_CALLOC(err, id->jcn, m0->nnz, "the column indices of M0 for MUMPS");
  SE_CALLOC(err, id->a, m0->nnz, "the values of M0 for MUMPS");
  for (int64_t k = 0; k < m0->nnz; k++) {
    id->irn[k] = (MUMPS_INT)m0->row[k] + 1;
    id->jcn[k] = (MUMPS_INT)m0->col[k] + 1;
    id->a[k] = m0->val[k];
  }
  id->nnz = (MUMPS_INT8)m0->nnz;
  return SE_OK;
}

/* Frees the copies of M0 (MUMPS needs them only up to the factorisation). */
static void drop_m0(DMUMPS_STRUC_C *id) {
  free(id->irn);
  free(id->jcn);
  free(id->a);
  id->irn = id->jcn = NULL;
  id->a = NULL;
}

/* The ordering MUMPS used, in words: INFOG(7) read as ICNTL(7) after a sequential analysis
 * (INFOG(32) = 1) or as ICNTL(29) after a parallel one (INFOG(32) = 2). */
static const char *ordering_name(int analysis, int ordering) {
  static const char *const sequential[] = {"AMD", "user-given (PERM_IN)", "AMF", "SCOTCH",
                                           "PORD", "METIS", "QAMD", "automatic"};
  static const char *const parallel[] = {"automatic", "PT-SCOTCH", "ParMETIS"};
  if (analysis == 1 && ordering >= 0 && ordering < 8)
    return sequential[ordering];
  if (analysis == 2 && ordering >= 0 && ordering < 3)
    return parallel[ordering];
  return "unknown";
}

/* Runs one MUMPS phase; on failure fills err (the same on every process). */
static int run_job(se_tdbem_m0_solver_t s, int job, const char *phase, se_error *err) {
  s->id.job = job;
  dmumps_c(&s->id);
  if (INFOG(&s->id, 1) < 0)
    return mumps_fail(&s->id, phase, s->n, err);
  return SE_OK;
}

/* Factorises; after a workspace error (-8, -9, -17, -20: MUMPS's estimate from the analysis was
 * exceeded, which its dynamic scheduling can do on several processes) doubles ICNTL(14), the
 * workspace margin in percent, and tries again, as the MUMPS guide advises. */
static int factorise(se_tdbem_m0_solver_t s, se_error *err) {
  for (int attempt = 1;; attempt++) {
    int rc = run_job(s, JOB_FACTORISE, "factorisation (JOB = 2)", err);
    const int code = INFOG(&s->id, 1);
    if (rc == SE_OK || (code != -8 && code != -9 && code != -17 && code != -20))
      return rc;
    if (attempt == FACTORISE_ATTEMPTS)
      return se_error_prepend(err, "after %d attempts, the last with ICNTL(14) = %d: ", attempt,
                              ICNTL(&s->id, 14));
    ICNTL(&s->id, 14) = 2 * (ICNTL(&s->id, 14) > 20 ? ICNTL(&s->id, 14) : 20);
  }
}

/* Ends the MUMPS instance (when started) and frees the solver. Collective over s->comm. */
static void release(se_tdbem_m0_solver_t s) {
  if (!s)
    return;
  if (s->mumps_started) {
    s->id.job = JOB_END;
    dmumps_c(&s->id);
  }
  drop_m0(&s->id);
  if (s->comm != MPI_COMM_NULL)
    MPI_Comm_free(&s->comm);
  free(s);
}

/* ---- public functions ------------------------------------------------------------------------ */

int se_tdbem_m0_create(MPI_Comm comm, const se_tdbem_m0 *m0, se_tdbem_m0_solver_t *solver,
                       char *ordering_used, size_t ordering_size, se_error *err) {
  int rank;
  SE_MPI_CHECK(err, MPI_Comm_rank(comm, &rank));
  if (solver)
    *solver = NULL;
  if (ordering_used && ordering_size)
    ordering_used[0] = '\0';

  /* Local checks, agreed before anything collective. */
  int rc = SE_OK;
  if (!solver)
    rc = se_error_set(err, SE_ERR_ARG, __FILE__, __LINE__, __func__, "solver is NULL on rank %d",
                      rank);
  else if (rank == 0)
    rc = check_m0(m0, err);
  SE_TRY(se_mpi_agree(comm, rc, err));

  se_tdbem_m0_solver_t s = calloc(1, sizeof *s);
  rc = s ? SE_OK
         : se_error_set(err, SE_ERR_NOMEM, __FILE__, __LINE__, __func__,
                        "out of memory allocating the M0 solver (%zu bytes) on rank %d",
                        sizeof *s, rank);
  if ((rc = se_mpi_agree(comm, rc, err)) != SE_OK) {
    free(s);
    return rc;
  }
  s->comm = MPI_COMM_NULL;
  s->rank = rank;
  s->n = rank == 0 ? m0->n : 0;
  int mpi_rc = MPI_Bcast(&s->n, 1, MPI_INT64_T, 0, comm);
  if (mpi_rc == MPI_SUCCESS)
    mpi_rc = MPI_Comm_dup(comm, &s->comm);
  if (mpi_rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(mpi_rc, text, &len);
    release(s);
    SE_FAIL(err, SE_ERR_MPI, "setting up the M0 solver's communicator failed: %s", text);
  }

  /* The instance: SPD, the host works, over s->comm. */
  s->id.sym = SYM_SPD;
  s->id.par = PAR_HOST_WORKS;
  s->id.comm_fortran = (MUMPS_INT)MPI_Comm_c2f(s->comm);
  SE_TRY_GOTO(rc, fail, run_job(s, JOB_INIT, "initialisation (JOB = -1)", err));
  s->mumps_started = 1;

  /* Settings (docs/tdbem-m0.md): silent; assembled matrix centralised on the host; sequential
   * analysis with SCOTCH; dense right-hand side and solution centralised on the host. */
  ICNTL(&s->id, 1) = -1; /* error messages: off */
  ICNTL(&s->id, 2) = -1; /* diagnostics and warnings: off */
  ICNTL(&s->id, 3) = -1; /* global information: off */
  ICNTL(&s->id, 4) = 0;  /* print level: nothing */
  ICNTL(&s->id, 5) = 0;  /* assembled matrix */
  ICNTL(&s->id, 7) = 3;  /* sequential ordering: SCOTCH */
  ICNTL(&s->id, 18) = 0; /* matrix centralised on the host */
  ICNTL(&s->id, 20) = 0; /* dense right-hand side on the host */
  ICNTL(&s->id, 21) = 0; /* solution centralised on the host */
  ICNTL(&s->id, 28) = 1; /* sequential analysis */
  s->id.n = (MUMPS_INT)s->n;

  /* SCOTCH 7 orders with several threads by default, and then differently from run to run (the
   * factors' size varied by up to 10%); one thread makes the ordering reproducible, and with it
   * the solutions on one rank (on several, MUMPS's dynamic scheduling still varies the order of
   * the sums), at no measured cost (docs/tdbem-m0.md). A value the user set stays. */
  if (setenv("SCOTCH_PTHREAD_NUMBER", "1", 0) != 0)
    rc = se_error_set(err, SE_ERR_NOMEM, __FILE__, __LINE__, __func__,
                      "setenv(SCOTCH_PTHREAD_NUMBER) failed on rank %d: %s", rank, strerror(errno));
  else if (rank == 0)
    rc = give_m0(&s->id, m0, err);
  SE_TRY_GOTO(rc, fail, se_mpi_agree(comm, rc, err));
  SE_TRY_GOTO(rc, fail, run_job(s, JOB_ANALYSE, "analysis (JOB = 1)", err));
  if (ordering_used && ordering_size)
    snprintf(ordering_used, ordering_size, "%s",
             ordering_name(INFOG(&s->id, 32), INFOG(&s->id, 7)));
  SE_TRY_GOTO(rc, fail, factorise(s, err));
  drop_m0(&s->id);

  /* SYM = 1 factorises without pivoting: a negative pivot outside the ScaLAPACK root front is
   * only counted (INFOG(12)), so M0 that is not positive definite is caught here. */
  if (INFOG(&s->id, 12) > 0) {
    rc = se_error_set(err, SE_ERR_NUMERIC, __FILE__, __LINE__, __func__,
                      "MUMPS %s factorisation (JOB = 2) of M0 (N = %lld) ended with INFOG(1) = "
                      "%d but met INFOG(12) = %d negative pivots: M0 is not positive definite",
                      s->id.version_number, (long long)s->n, INFOG(&s->id, 1),
                      INFOG(&s->id, 12));
    goto fail;
  }
  *solver = s;
  return SE_OK;

fail:
  release(s);
  return rc;
}

int se_tdbem_m0_solve(se_tdbem_m0_solver_t solver, double *b, se_error *err) {
  if (!solver)
    SE_FAIL(err, SE_ERR_ARG, "the M0 solver is NULL");
  /* b matters on rank 0 only; a NULL b there is MUMPS's error -22 (RHS), seen by every rank. */
  if (solver->rank == 0) {
    solver->id.rhs = b;
    solver->id.nrhs = 1;
    solver->id.lrhs = (MUMPS_INT)solver->n;
  }
  return run_job(solver, JOB_SOLVE, "solve (JOB = 3)", err);
}

void se_tdbem_m0_destroy(se_tdbem_m0_solver_t solver) { release(solver); }
