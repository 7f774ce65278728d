// CUDA support shared by the CUDA backends (see se_cuda.h).
#include "se_cuda.h"

extern "C" int se_cuda_device_count(void) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError(); // clear the sticky "no device" error
    return 0;
  }
  return n;
}

extern "C" int se_cuda_rank_device(int node_local_rank, int gpus_per_rank, int k, int *device,
                                   se_error *err) {
  int n = se_cuda_device_count();
  if (n == 0)
    SE_FAIL(err, SE_ERR_CUDA, "no CUDA device is visible to this process");
  if (gpus_per_rank < 1 || k < 0 || k >= gpus_per_rank)
    SE_FAIL(err, SE_ERR_ARG, "GPU %d of %d per rank is out of range", k, gpus_per_rank);
  *device = (node_local_rank * gpus_per_rank + k) % n;
  return SE_OK;
}

extern "C" int se_cuda_copy_bandwidth(size_t bytes, double *bytes_per_second, se_error *err) {
  void *a = nullptr, *b = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  float best_ms = 1e30f;
  int rc = SE_OK;
  if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess) {
    rc = se_error_set(err, SE_ERR_CUDA, __FILE__, __LINE__, __func__,
                      "cudaMalloc of 2 x %zu bytes for the copy bandwidth failed", bytes);
    goto done;
  }
  if (cudaMemset(a, 1, bytes) != cudaSuccess || cudaEventCreate(&start) != cudaSuccess ||
      cudaEventCreate(&stop) != cudaSuccess) {
    rc = se_error_set(err, SE_ERR_CUDA, __FILE__, __LINE__, __func__, "%s",
                      cudaGetErrorString(cudaGetLastError()));
    goto done;
  }
  for (int rep = 0; rep < 10; rep++) {
    cudaEventRecord(start);
    cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice);
    cudaEventRecord(stop);
    if (cudaEventSynchronize(stop) != cudaSuccess) {
      rc = se_error_set(err, SE_ERR_CUDA, __FILE__, __LINE__, __func__, "copy failed: %s",
                        cudaGetErrorString(cudaGetLastError()));
      goto done;
    }
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, start, stop);
    if (rep > 0 && ms < best_ms) // the first copy warms up
      best_ms = ms;
  }
  *bytes_per_second = 2.0 * (double)bytes / (best_ms * 1e-3);
done:
  if (start)
    cudaEventDestroy(start);
  if (stop)
    cudaEventDestroy(stop);
  cudaFree(a);
  cudaFree(b);
  return rc;
}
