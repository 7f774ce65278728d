#include <stdio.h>
#include <string.h>

#include "se_error.h"

const char *se_code_name(se_code code) {
  switch (code) {
  case SE_OK: return "success";
  case SE_ERR_ARG: return "argument error";
  case SE_ERR_INPUT: return "input error";
  case SE_ERR_IO: return "I/O error";
  case SE_ERR_MPI: return "MPI error";
  case SE_ERR_HDF5: return "HDF5 error";
  case SE_ERR_CUDA: return "CUDA error";
  case SE_ERR_NOMEM: return "out of memory";
  case SE_ERR_UNSUPPORTED: return "unsupported";
  case SE_ERR_NUMERIC: return "numerical error";
  }
  return "unknown error";
}

int se_error_set(se_error *err, se_code code, const char *file, int line, const char *func,
                 const char *fmt, ...) {
  if (!err)
    return code;
  err->code = code;
  const char *base = strrchr(file, '/');
  base = base ? base + 1 : file;
  int n = snprintf(err->message, sizeof err->message, "%s:%d (%s): ", base, line, func);
  if (n < 0 || (size_t)n >= sizeof err->message)
    return code;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->message + n, sizeof err->message - (size_t)n, fmt, ap);
  va_end(ap);
  return code;
}

int se_error_prepend(se_error *err, const char *fmt, ...) {
  if (!err)
    return SE_ERR_ARG;
  char prefix[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  char old[sizeof err->message];
  memcpy(old, err->message, sizeof old);
  size_t n = strlen(prefix);
  if (n >= sizeof err->message)
    n = sizeof err->message - 1;
  memcpy(err->message, prefix, n);
  size_t rest = strnlen(old, sizeof old - 1);
  if (rest > sizeof err->message - 1 - n)
    rest = sizeof err->message - 1 - n;
  memcpy(err->message + n, old, rest);
  err->message[n + rest] = '\0';
  return err->code;
}

int se_mpi_agree(MPI_Comm comm, int rc, se_error *err) {
  se_error local = {SE_OK, ""};
  if (!err)
    err = &local;
  int rank = 0;
  SE_MPI_CHECK(err, MPI_Comm_rank(comm, &rank));
  struct {
    int ok, rank;
  } in = {rc == SE_OK, rank}, out;
  SE_MPI_CHECK(err, MPI_Allreduce(&in, &out, 1, MPI_2INT, MPI_MINLOC, comm));
  if (out.ok)
    return SE_OK;
  int code = rc;
  SE_MPI_CHECK(err, MPI_Bcast(&code, 1, MPI_INT, out.rank, comm));
  SE_MPI_CHECK(err, MPI_Bcast(err->message, (int)sizeof err->message, MPI_CHAR, out.rank, comm));
  err->code = (se_code)code;
  if (out.rank != rank && strncmp(err->message, "on rank ", 8) != 0)
    se_error_prepend(err, "on rank %d: ", out.rank);
  return code;
}
