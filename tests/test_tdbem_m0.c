/* The M0 solver (src/tdbem_m0_mumps.c) on 1, 2 or 3 ranks: random sparse, symmetric positive
 * definite, almost diagonal M0 given on rank 0 as its lower triangle; several right-hand sides
 * solved in a row against a dense Cholesky solve; the ordering reported, with SCOTCH held to
 * one thread (reproducible orderings); the failures (not
 * positive definite, singular, entries above the diagonal or out of range, no right-hand side)
 * reported on every rank without hanging. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "se_random.h"
#include "se_test.h"
#include "se_test_mpi.h"
#include "simengine/tdbem.h"


/* A random M0 of order n, lower triangle: about `per_row` off-diagonal entries per row, most near
 * the diagonal, some anywhere, with values in [-0.5, 0.5]; the diagonal is 1 + the sum of the
 * absolute off-diagonal values of its row and column (strict diagonal dominance: SPD). */
static se_tdbem_m0 random_m0(int64_t n, int per_row, uint64_t seed) {
  se_tdbem_m0 m = {n, 0, NULL, NULL, NULL};
  const int64_t cap = n * (per_row + 1);
  m.row = malloc((size_t)cap * sizeof *m.row);
  m.col = malloc((size_t)cap * sizeof *m.col);
  m.val = malloc((size_t)cap * sizeof *m.val);
  double *dominance = calloc((size_t)n, sizeof *dominance);
  for (int64_t i = 1; i < n; i++)
    for (int e = 0; e < per_row; e++) {
      int64_t j = se_rand_u01(&seed) < 0.8 ? i - 1 - (int64_t)(se_rand_u01(&seed) * 4)
                                       : (int64_t)(se_rand_u01(&seed) * (double)i);
      if (j < 0)
        continue;
      double v = se_rand_u01(&seed) - 0.5;
      m.row[m.nnz] = (int32_t)i;
      m.col[m.nnz] = (int32_t)j;
      m.val[m.nnz++] = v;
      dominance[i] += fabs(v);
      dominance[j] += fabs(v);
    }
  for (int64_t i = 0; i < n; i++) {
    m.row[m.nnz] = m.col[m.nnz] = (int32_t)i;
    m.val[m.nnz++] = 1.0 + dominance[i] + se_rand_u01(&seed);
  }
  free(dominance);
  return m;
}

static void free_m0(se_tdbem_m0 *m) {
  free(m->row);
  free(m->col);
  free(m->val);
}

/* Dense reference on rank 0: the lower Cholesky factor L (row-major, n x n) of M0; returns 0
 * when M0 is not positive definite. */
static int dense_cholesky(const se_tdbem_m0 *m, double *l) {
  const int64_t n = m->n;
  memset(l, 0, (size_t)(n * n) * sizeof *l);
  for (int64_t k = 0; k < m->nnz; k++)
    l[(int64_t)m->row[k] * n + m->col[k]] += m->val[k];
  for (int64_t i = 0; i < n; i++) {
    double *li = l + i * n;
    for (int64_t j = 0; j <= i; j++) {
      const double *lj = l + j * n;
      double s = li[j];
      for (int64_t k = 0; k < j; k++)
        s -= li[k] * lj[k];
      if (j < i)
        li[j] = s / lj[j];
      else if (s <= 0)
        return 0;
      else
        li[i] = sqrt(s);
    }
  }
  return 1;
}

/* Solves L L^T x = b in place with the dense factor. */
static void dense_solve(const double *l, int64_t n, double *x) {
  for (int64_t i = 0; i < n; i++) {
    double s = x[i];
    for (int64_t k = 0; k < i; k++)
      s -= l[i * n + k] * x[k];
    x[i] = s / l[i * n + i];
  }
  for (int64_t i = n - 1; i >= 0; i--) {
    double s = x[i];
    for (int64_t k = i + 1; k < n; k++)
      s -= l[k * n + i] * x[k];
    x[i] = s / l[i * n + i];
  }
}

/* Creates the solver for m (read on rank 0), solves n_rhs random right-hand sides in a row and
 * compares them with the dense Cholesky solve. */
static void check_solves(se_test_state *st, int rank, int64_t n, int per_row, int n_rhs,
                         uint64_t seed) {
  se_tdbem_m0 m = {0, 0, NULL, NULL, NULL};
  double *l = NULL;
  if (rank == 0) {
    m = random_m0(n, per_row, seed);
    l = malloc((size_t)(n * n) * sizeof *l);
    SE_EXPECT(st, dense_cholesky(&m, l), "N = %lld: the reference Cholesky failed", (long long)n);
  }
  se_tdbem_m0_solver_t solver = NULL;
  se_error err = {SE_OK, ""};
  char ordering[32] = "?";
  int rc = se_tdbem_m0_create(MPI_COMM_WORLD, rank == 0 ? &m : NULL, &solver, ordering,
                              sizeof ordering, &err);
  SE_EXPECT(st, rc == SE_OK, "N = %lld, rank %d: create failed: %s", (long long)n, rank,
            err.message);
  SE_EXPECT(st, !strcmp(ordering, "SCOTCH") || !strcmp(ordering, "PT-SCOTCH"),
            "N = %lld, rank %d: the ordering used is '%s', not SCOTCH or PT-SCOTCH", (long long)n,
            rank, ordering);
  if (rank == 0)
    printf("N = %lld, nnz = %lld: ordering %s\n", (long long)n, (long long)m.nnz, ordering);
  if (rc != SE_OK) {
    free(l);
    free_m0(&m);
    return;
  }
  double *x = rank == 0 ? malloc((size_t)n * sizeof *x) : NULL;
  double *ref = rank == 0 ? malloc((size_t)n * sizeof *ref) : NULL;
  for (int r = 0; r < n_rhs; r++) {
    if (rank == 0)
      for (int64_t i = 0; i < n; i++)
        x[i] = ref[i] = se_rand_u01(&seed) - 0.5 + (r == 0 ? 1.0 : 0.0);
    rc = se_tdbem_m0_solve(solver, x, &err);
    SE_EXPECT(st, rc == SE_OK, "N = %lld, rhs %d, rank %d: solve failed: %s", (long long)n, r,
              rank, err.message);
    if (rank == 0) {
      dense_solve(l, n, ref);
      double diff = 0, norm = 0;
      for (int64_t i = 0; i < n; i++) {
        diff += (x[i] - ref[i]) * (x[i] - ref[i]);
        norm += ref[i] * ref[i];
      }
      SE_EXPECT(st, sqrt(diff) <= 1e-12 * sqrt(norm),
                "N = %lld, rhs %d: relative error %.3e vs the dense Cholesky", (long long)n, r,
                sqrt(diff / norm));
    }
  }
  se_tdbem_m0_destroy(solver);
  free(x);
  free(ref);
  free(l);
  free_m0(&m);
}

/* Expects create to fail on every rank with `code` and a message containing `needle`. */
static void expect_create_fails(se_test_state *st, int rank, const char *what, se_tdbem_m0 *m,
                                int code, const char *needle) {
  se_tdbem_m0_solver_t solver = (se_tdbem_m0_solver_t)st; /* must come back NULL */
  se_error err = {SE_OK, ""};
  char ordering[32];
  int rc = se_tdbem_m0_create(MPI_COMM_WORLD, rank == 0 ? m : NULL, &solver, ordering,
                              sizeof ordering, &err);
  SE_EXPECT(st, rc == code, "%s, rank %d: code %d, expected %d (%s)", what, rank, rc, code,
            err.message);
  SE_EXPECT(st, strstr(err.message, needle), "%s, rank %d: message lacks '%s': %s", what, rank,
            needle, err.message);
  SE_EXPECT(st, solver == NULL, "%s, rank %d: solver not NULL after a failure", what, rank);
  if (rank == 0)
    printf("%s: %s\n", what, err.message);
  if (rc == SE_OK)
    se_tdbem_m0_destroy(solver);
}

static void check_failures(se_test_state *st, int rank) {
  const int64_t n = 60;
  se_tdbem_m0 m = {0, 0, NULL, NULL, NULL};

  /* Indefinite: one diagonal entry made negative. */
  if (rank == 0) {
    m = random_m0(n, 3, 7);
    m.val[m.nnz - 20] = -m.val[m.nnz - 20];
  }
  expect_create_fails(st, rank, "indefinite M0", &m, SE_ERR_NUMERIC, "INFOG(");

  /* Indefinite and larger, with long-range couplings: on several ranks the root front goes to
   * ScaLAPACK, whose Cholesky fails (INFOG(1) = -40); on one rank INFOG(12) counts the negative
   * pivots. Either way "not positive definite". */
  if (rank == 0) {
    free_m0(&m);
    m = random_m0(3000, 8, 5);
    for (int64_t i = 0; i < m.n; i += 3)
      m.val[m.nnz - m.n + i] = -m.val[m.nnz - m.n + i];
  }
  expect_create_fails(st, rank, "indefinite M0, large root front", &m, SE_ERR_NUMERIC,
                      "not positive definite");

  /* Singular: one unknown decoupled with a zero diagonal entry. */
  if (rank == 0) {
    free_m0(&m);
    m = random_m0(n, 3, 8);
    for (int64_t k = 0; k < m.nnz; k++)
      if (m.row[k] == 33 || m.col[k] == 33)
        m.val[k] = 0.0;
  }
  expect_create_fails(st, rank, "singular M0", &m, SE_ERR_NUMERIC, "INFOG(");

  /* Not given as the lower triangle: entry 7 swapped above the diagonal. */
  if (rank == 0) {
    free_m0(&m);
    m = random_m0(n, 3, 9);
    int32_t t = m.row[7];
    m.row[7] = m.col[7];
    m.col[7] = t;
  }
  expect_create_fails(st, rank, "entry above the diagonal", &m, SE_ERR_INPUT,
                      "M0 entry 7: (row ");
  /* Out of range: entry 11 with row N. */
  if (rank == 0) {
    int32_t t = m.row[7];
    m.row[7] = m.col[7];
    m.col[7] = t;
    m.row[11] = (int32_t)n;
  }
  expect_create_fails(st, rank, "entry out of range", &m, SE_ERR_INPUT,
                      "M0 entry 11: (row 60, col");
  /* A NaN value. */
  if (rank == 0) {
    m.row[11] = m.col[11];
    m.val[5] = NAN;
  }
  expect_create_fails(st, rank, "NaN entry", &m, SE_ERR_INPUT, "M0 entry 5:");
  if (rank == 0)
    free_m0(&m);

  /* A solve without a right-hand side on rank 0: MUMPS's -22, on every rank. */
  if (rank == 0)
    m = random_m0(n, 3, 10);
  se_tdbem_m0_solver_t solver = NULL;
  se_error err = {SE_OK, ""};
  int rc = se_tdbem_m0_create(MPI_COMM_WORLD, rank == 0 ? &m : NULL, &solver, NULL, 0, &err);
  SE_EXPECT(st, rc == SE_OK, "rank %d: create failed: %s", rank, err.message);
  if (rc == SE_OK) {
    rc = se_tdbem_m0_solve(solver, NULL, &err);
    SE_EXPECT(st, rc == SE_ERR_ARG && strstr(err.message, "INFOG(1) = -22"),
              "rank %d: solve without b gave %d: %s", rank, rc, err.message);
    if (rank == 0)
      printf("no right-hand side: %s\n", err.message);
    se_tdbem_m0_destroy(solver);
  }
  if (rank == 0)
    free_m0(&m);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  se_test_state st = {0, 0};
  const char *threads = getenv("SCOTCH_PTHREAD_NUMBER");
  const int threads_unset = threads == NULL;
  check_solves(&st, rank, 50, 2, 3, 1);
  threads = getenv("SCOTCH_PTHREAD_NUMBER");
  SE_EXPECT(&st, !threads_unset || (threads && !strcmp(threads, "1")),
            "rank %d: SCOTCH_PTHREAD_NUMBER is '%s' after create, expected 1", rank,
            threads ? threads : "(unset)");
  check_solves(&st, rank, 1, 0, 2, 2);
  check_solves(&st, rank, 437, 4, 4, 3);
  check_solves(&st, rank, 2000, 6, 5, 4);
  check_failures(&st, rank);
  const int rc = se_test_finish_all(&st, "tdbem_m0", MPI_COMM_WORLD);
  MPI_Finalize();
  return rc;
}
