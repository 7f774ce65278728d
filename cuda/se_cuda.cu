// CUDA support shared by the CUDA backends (see se_cuda.h).
#include "se_cuda.h"
#include "neurons_stream.h"

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

// Times reps launches of launch() on the current device with events and sets *best_ms to the
// fastest but the first (which warms up); `what` names the work in the error message.
template <class Launch>
static int best_time_ms(Launch launch, int reps, const char *what, float *best_ms, se_error *err) {
  cudaEvent_t start = nullptr, stop = nullptr;
  int rc = SE_OK;
  *best_ms = 1e30f;
  if (cudaEventCreate(&start) != cudaSuccess || cudaEventCreate(&stop) != cudaSuccess) {
    rc = se_error_set(err, SE_ERR_CUDA, __FILE__, __LINE__, __func__, "events for %s: %s", what,
                      cudaGetErrorString(cudaGetLastError()));
    goto done;
  }
  for (int rep = 0; rep < reps; rep++) {
    cudaEventRecord(start);
    launch();
    cudaEventRecord(stop);
    if (cudaGetLastError() != cudaSuccess || cudaEventSynchronize(stop) != cudaSuccess) {
      rc = se_error_set(err, SE_ERR_CUDA, __FILE__, __LINE__, __func__, "%s failed: %s", what,
                        cudaGetErrorString(cudaGetLastError()));
      goto done;
    }
    float ms = 0.0f;
    cudaEventElapsedTime(&ms, start, stop);
    if (rep > 0 && ms < *best_ms)
      *best_ms = ms;
  }
done:
  if (start)
    cudaEventDestroy(start);
  if (stop)
    cudaEventDestroy(stop);
  return rc;
}

extern "C" int se_cuda_copy_bandwidth(size_t bytes, double *bytes_per_second, se_error *err) {
  void *a = nullptr, *b = nullptr;
  float best_ms = 0.0f;
  int rc = SE_OK;
  if (cudaMalloc(&a, bytes) != cudaSuccess || cudaMalloc(&b, bytes) != cudaSuccess) {
    rc = se_error_set(err, SE_ERR_CUDA, __FILE__, __LINE__, __func__,
                      "cudaMalloc of 2 x %zu bytes for the copy bandwidth failed", bytes);
  } else if (cudaMemset(a, 1, bytes) != cudaSuccess) {
    rc = se_error_set(err, SE_ERR_CUDA, __FILE__, __LINE__, __func__, "%s",
                      cudaGetErrorString(cudaGetLastError()));
  } else {
    rc = best_time_ms([&] { cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice); }, 10,
                      "device-to-device copy", &best_ms, err);
    if (rc == SE_OK)
      *bytes_per_second = 2.0 * (double)bytes / (best_ms * 1e-3);
  }
  cudaFree(a);
  cudaFree(b);
  return rc;
}

// Four hh compartments per thread, every value in registers, `iters` steps each at voltages that
// sweep -70..40 mV as a spiking cell's do: the FP64 work of hh rows (se_hh_row_terms, as the step
// kernels call it) without their bytes.
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
      double dg = 0.0;
      se_hh_row_terms(v[r], &m[r], &h[r], &n[r], 1, dt, q10, 0.12, 0.036, 50.0, -77.0, &acc, &dg);
      acc += dg;
      v[r] = v[r] > 40.0 ? v[r] - 110.0 : v[r] + 1.3;
    }
  out[t] = acc; // keeps the work
}

extern "C" int se_cuda_hh_rate(double q10, double dt, double *seconds, se_error *err) {
  int device = 0, sms = 0;
  SE_CUDA_CHECK(err, cudaGetDevice(&device));
  SE_CUDA_CHECK(err, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  const int block = 128, grid = 16 * sms, iters = 100, rows = 4;
  double *out = nullptr;
  float best_ms = 0.0f;
  SE_CUDA_CHECK(err, cudaMalloc(&out, sizeof(double) * grid * block));
  int rc = best_time_ms([&] { hh_rate_kernel<<<grid, block>>>(iters, q10, dt, out); }, 4,
                        "hh rate kernel", &best_ms, err);
  if (rc == SE_OK)
    *seconds = best_ms * 1e-3 / ((double)grid * block * iters * rows);
  cudaFree(out);
  return rc;
}
