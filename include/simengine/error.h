/* simengine: error codes and the error record every fallible function fills.
 * There is no global error state: each caller owns an se_error and passes it down. */
#ifndef SIMENGINE_ERROR_H
#define SIMENGINE_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum se_code {
  SE_OK = 0,
  SE_ERR_ARG = 1,         /* a bad argument or option */
  SE_ERR_INPUT = 2,       /* a bad input file: wrong contents, shapes, values */
  SE_ERR_IO = 3,          /* a file could not be opened, read, written or renamed */
  SE_ERR_MPI = 4,         /* an MPI call failed */
  SE_ERR_HDF5 = 5,        /* an HDF5 call failed */
  SE_ERR_CUDA = 6,        /* a CUDA or cuSPARSE call failed */
  SE_ERR_NOMEM = 7,       /* an allocation failed */
  SE_ERR_UNSUPPORTED = 8, /* a feature not in this build (for example a CUDA backend) */
  SE_ERR_NUMERIC = 9      /* a numerical failure (zero pivot, non-finite voltage) */
} se_code;

/* The error record: the code and a message that names the source location, the file, dataset
 * or line concerned and the offending value. */
typedef struct se_error {
  se_code code;
  char message[2048];
} se_error;

/* Short name of an error code ("input error", ...). Not collective. */
const char *se_code_name(se_code code);

#ifdef __cplusplus
}
#endif
#endif
