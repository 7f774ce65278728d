/* Small HDF5 helpers shared by the readers and writers in io/. */
#ifndef SE_H5_UTIL_H
#define SE_H5_UTIL_H

#include <hdf5.h>
#include <stddef.h>

#include "se_error.h"

/* Writes the innermost messages of HDF5's current error stack into buf (empty if none). */
void se_h5_error_string(char *buf, size_t size);

/* Check an HDF5 call (negative = failure); the message is the caller's context followed by
 * HDF5's own description of the failure. */
#define SE_H5_CHECK(err, call, ...)                                                       \
  do {                                                                                    \
    if ((call) < 0) {                                                                     \
      char se_h5_ctx_[768], se_h5_msg_[768];                                              \
      snprintf(se_h5_ctx_, sizeof se_h5_ctx_, __VA_ARGS__);                               \
      se_h5_error_string(se_h5_msg_, sizeof se_h5_msg_);                                  \
      SE_FAIL(err, SE_ERR_HDF5, "%s: %s failed%s%s", se_h5_ctx_, #call,                  \
              se_h5_msg_[0] ? ": " : "", se_h5_msg_);                                     \
    }                                                                                     \
  } while (0)

#endif
