// CUDA support shared by the CUDA backends (see se_cuda.h).
#include "se_cuda.h"
#include "hh.h"

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

// Four hh compartments per thread, every value in registers, `iters` steps each at voltages that
// sweep -70..40 mV as a spiking cell's do: the FP64 work of hh rows without their bytes.
__global__ void hh_rate_kernel(int iters, double q10, double dt, double *out) {
  constexpr int R = 4; // independent rows per thread, as the step kernels' threads have
  const long t = blockIdx.x * (long)blockDim.x + threadIdx.x;
  double v[R], m[R], h[R], n[R], acc = 0.0;
#pragma unroll
  for (int r = 0; r < R; r++) {
    v[r] = -70.0 + 0.37 * (double)((t * R + r) % 97);
    m[r] = 0.05;
    h[r] = 0.6;
    n[r] = 0.32;
  }
  for (int k = 0; k < iters; k++)
#pragma unroll
    for (int r = 0; r < R; r++) {
      se_hh_advance_gates(v[r], q10, dt, &m[r], &h[r], &n[r]);
      const double mm = m[r], nn = n[r], gna = 0.12 * mm * mm * mm * h[r];
      const double gk = 0.036 * nn * nn * nn * nn;
      acc += gna * 50.0 - gk * 77.0 + (gna + gk);
      v[r] = v[r] > 40.0 ? v[r] - 110.0 : v[r] + 1.3;
    }
  out[t] = acc; // keeps the work
}

extern "C" int se_cuda_hh_rate(double q10, double dt, double *seconds, se_error *err) {
  int sms = 0;
  SE_CUDA_CHECK(err, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const int block = 128, grid = 16 * sms, iters = 100, rows = 4;
  const double updates = (double)grid * block * iters * rows;
  double *out = nullptr;
  cudaEvent_t start = nullptr, stop = nullptr;
  float best_ms = 1e30f;
  int rc = SE_OK;
  if (cudaMalloc(&out, sizeof(double) * grid * block) != cudaSuccess ||
      cudaEventCreate(&start) != cudaSuccess || cudaEventCreate(&stop) != cudaSuccess) {
    rc = se_error_set(err, SE_ERR_CUDA, __FILE__, __LINE__, __func__,
                      "setting up the hh rate measurement: %s",
                      cudaGetErrorString(cudaGetLastError()));
    goto done;
  }
  for (int rep = 0; rep < 4; rep++) {
    cudaEventRecord(start);
    hh_rate_kernel<<<grid, block>>>(iters, q10, dt, out);
    cudaEventRecord(stop);
    if (cudaEventSynchronize(stop) != cudaSuccess) {
      rc = se_error_set(err, SE_ERR_CUDA, __FILE__, __LINE__, __func__,
                        "hh rate kernel failed: %s", cudaGetErrorString(cudaGetLastError()));
      goto done;
    }
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, start, stop);
    if (rep > 0 && ms < best_ms) // the first launch warms up
      best_ms = ms;
  }
  *seconds = best_ms * 1e-3 / updates;
done:
  if (start)
    cudaEventDestroy(start);
  if (stop)
    cudaEventDestroy(stop);
  cudaFree(out);
  return rc;
}
