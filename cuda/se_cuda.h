/* CUDA support shared by every CUDA backend: checked calls, device selection, the device copy
 * bandwidth ceiling. Usable from C (host API only) and from .cu files. */
#ifndef SE_CUDA_H
#define SE_CUDA_H

#include <cuda_runtime_api.h>
#include <cusparse.h>

#include "se_error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Check a CUDA runtime call; on failure report CUDA's error name and string. */
#define SE_CUDA_CHECK(err, call)                                                              \
  do {                                                                                        \
    cudaError_t se_cuda_rc_ = (call);                                                         \
    if (se_cuda_rc_ != cudaSuccess)                                                           \
      SE_FAIL(err, SE_ERR_CUDA, "%s failed: %s (%s)", #call, cudaGetErrorName(se_cuda_rc_),   \
              cudaGetErrorString(se_cuda_rc_));                                               \
  } while (0)

/* Check a kernel launch: cudaGetLastError right after it (what names the kernel). */
#define SE_CUDA_CHECK_LAUNCH(err, what)                                                       \
  do {                                                                                        \
    cudaError_t se_launch_rc_ = cudaGetLastError();                                           \
    if (se_launch_rc_ != cudaSuccess)                                                         \
      SE_FAIL(err, SE_ERR_CUDA, "launch of %s failed: %s (%s)", (what),                       \
              cudaGetErrorName(se_launch_rc_), cudaGetErrorString(se_launch_rc_));            \
  } while (0)

/* Check a cuSPARSE call; on failure report cuSPARSE's status name and string. */
#define SE_CUSPARSE_CHECK(err, call)                                                          \
  do {                                                                                        \
    cusparseStatus_t se_sp_rc_ = (call);                                                      \
    if (se_sp_rc_ != CUSPARSE_STATUS_SUCCESS)                                                 \
      SE_FAIL(err, SE_ERR_CUDA, "%s failed: %s (%s)", #call, cusparseGetErrorName(se_sp_rc_), \
              cusparseGetErrorString(se_sp_rc_));                                             \
  } while (0)

/* Number of CUDA devices visible to this process (0 when there is no driver or no device; never
 * fails). Not collective. */
int se_cuda_device_count(void);

/* Selects the device of a rank: device (node_local_rank * gpus_per_rank + k) % count for its k-th
 * GPU, so ranks of one node spread over the node's GPUs instead of all using device 0.
 * node_local_rank comes from MPI_Comm_split_type(..., MPI_COMM_TYPE_SHARED, ...).
 * Not collective. */
int se_cuda_rank_device(int node_local_rank, int gpus_per_rank, int k, int *device,
                        se_error *err);

/* Measures the device-to-device copy bandwidth of the current device (bytes read + written per
 * second, best of several cudaMemcpyAsync of `bytes` bytes), the ceiling every GPU figure is
 * printed next to. Not collective. */
int se_cuda_copy_bandwidth(size_t bytes, double *bytes_per_second, se_error *err);

/* Measures the current device's time for one hh compartment-step (cnexp gate update at q10 and
 * dt, then gna and gk) with every value in registers (seconds per compartment, best of several
 * launches): the FP64 ceiling of hh rows, printed next to the byte floor. Not collective. */
int se_cuda_hh_rate(double q10, double dt, double *seconds, se_error *err);

#ifdef __cplusplus
}
#endif
#endif
