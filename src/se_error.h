/* Private helpers to raise and propagate errors (see include/simengine/error.h). */
#ifndef SE_ERROR_PRIVATE_H
#define SE_ERROR_PRIVATE_H

#include <mpi.h>
#include <stdarg.h>
#include <stdlib.h>

#include "simengine/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Fills err (when not NULL) with code and a message prefixed by "file:line (func): ", returns code. */
int se_error_set(se_error *err, se_code code, const char *file, int line, const char *func,
                 const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Prepends context ("while reading x: ") to an error already set; returns err->code. */
int se_error_prepend(se_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Makes every rank of comm return the same outcome: SE_OK when rc is SE_OK everywhere, else the
 * code and message of the lowest failing rank (prefixed "on rank R: " on the other ranks unless
 * the message already names a rank, as after an earlier agreement). err may be NULL. Collective
 * over comm. */
int se_mpi_agree(MPI_Comm comm, int rc, se_error *err);

#ifdef __cplusplus
}
#endif

/* Set err and return code from the current function. */
#define SE_FAIL(err, code, ...) return se_error_set((err), (code), __FILE__, __LINE__, __func__, __VA_ARGS__)

/* Set err, store code into rc and jump to label (for functions that must clean up). */
#define SE_FAIL_GOTO(err, rc, label, code, ...)                                          \
  do {                                                                                   \
    (rc) = se_error_set((err), (code), __FILE__, __LINE__, __func__, __VA_ARGS__);      \
    goto label;                                                                          \
  } while (0)

/* Propagate a failing se_code (the callee has already filled err). */
#define SE_TRY(call)                \
  do {                              \
    int se_try_rc_ = (call);        \
    if (se_try_rc_ != SE_OK)        \
      return se_try_rc_;            \
  } while (0)

#define SE_TRY_GOTO(rc, label, call) \
  do {                               \
    (rc) = (call);                   \
    if ((rc) != SE_OK)               \
      goto label;                    \
  } while (0)

/* Check an MPI call; on failure report MPI's own error string. */
#define SE_MPI_CHECK(err, call)                                                                   \
  do {                                                                                            \
    int se_mpi_rc_ = (call);                                                                      \
    if (se_mpi_rc_ != MPI_SUCCESS) {                                                              \
      char se_mpi_msg_[MPI_MAX_ERROR_STRING];                                                     \
      int se_mpi_len_ = 0;                                                                        \
      MPI_Error_string(se_mpi_rc_, se_mpi_msg_, &se_mpi_len_);                                    \
      SE_FAIL(err, SE_ERR_MPI, "%s failed: %s", #call, se_mpi_msg_);                              \
    }                                                                                             \
  } while (0)

/* Allocate n elements of *ptr's type, zeroed; fail with SE_ERR_NOMEM naming what. */
#define SE_CALLOC(err, ptr, n, what)                                                              \
  do {                                                                                            \
    size_t se_n_ = (size_t)(n);                                                                   \
    (ptr) = calloc(se_n_ ? se_n_ : 1, sizeof(*(ptr)));                                            \
    if (!(ptr))                                                                                   \
      SE_FAIL(err, SE_ERR_NOMEM, "out of memory allocating %zu x %zu bytes for %s", se_n_,      \
              sizeof(*(ptr)), (what));                                                            \
  } while (0)

/* Reallocate ptr to n elements of its type (the new ones uninitialised); fail with SE_ERR_NOMEM
 * naming what, leaving ptr unchanged. For parallel arrays grown one after the other: on failure
 * the ones already grown are merely larger than their count says. */
#define SE_REALLOC(err, ptr, n, what)                                                             \
  do {                                                                                            \
    size_t se_n_ = (size_t)(n);                                                                   \
    void *se_grown_ = realloc((ptr), (se_n_ ? se_n_ : 1) * sizeof *(ptr));                        \
    if (!se_grown_)                                                                               \
      SE_FAIL(err, SE_ERR_NOMEM, "out of memory reallocating %zu x %zu bytes for %s", se_n_,    \
              sizeof *(ptr), (what));                                                             \
    (ptr) = se_grown_;                                                                            \
  } while (0)

#endif
