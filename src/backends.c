/* The registry of engine backends: the one place that knows whether this build has CUDA. */
#include "neurons_impl.h"
#include "se_error.h"

#ifdef SIMENGINE_HAVE_CUDA
#include "neurons_branch.h"
#include "neurons_cuda.h"
#include "se_cuda.h"
extern const se_neurons_backend se_neurons_backend_cuda;
#endif

const se_neurons_backend *se_neurons_backend_for(const se_neurons_options *opt, se_error *err) {
  if (opt->backend == SE_BACKEND_CPU)
    return &se_neurons_backend_cpu;
#ifdef SIMENGINE_HAVE_CUDA
  int count = se_cuda_device_count();
  if (opt->gpu_device < 0 || opt->gpu_device >= count) {
    se_error_set(err, SE_ERR_CUDA, __FILE__, __LINE__, __func__,
                 "GPU device %d requested, but %d CUDA device(s) are visible", opt->gpu_device,
                 count);
    return NULL;
  }
  return &se_neurons_backend_cuda;
#else
  se_error_set(err, SE_ERR_UNSUPPORTED, __FILE__, __LINE__, __func__,
               "GPU device %d requested, but this build has no CUDA backend (configure with a "
               "CUDA compiler, see docs/development.md)", opt->gpu_device);
  return NULL;
#endif
}

int se_gpu_count(void) {
#ifdef SIMENGINE_HAVE_CUDA
  return se_cuda_device_count();
#else
  return 0;
#endif
}

int se_gpu_device_for_rank(int node_local_rank, int gpus_per_rank, int k, int *device,
                           se_error *err) {
#ifdef SIMENGINE_HAVE_CUDA
  return se_cuda_rank_device(node_local_rank, gpus_per_rank, k, device, err);
#else
  SE_FAIL(err, SE_ERR_UNSUPPORTED, "GPUs requested, but this build has no CUDA backend");
#endif
}

int se_gpu_copy_bandwidth(int device, size_t bytes, double *bytes_per_second, se_error *err) {
#ifdef SIMENGINE_HAVE_CUDA
  SE_CUDA_CHECK(err, cudaSetDevice(device));
  return se_cuda_copy_bandwidth(bytes, bytes_per_second, err);
#else
  SE_FAIL(err, SE_ERR_UNSUPPORTED, "no CUDA backend in this build (device %d, %zu bytes)", device,
          bytes);
#endif
}

int se_gpu_hh_rate(int device, double q10, double dt, double *seconds, se_error *err) {
#ifdef SIMENGINE_HAVE_CUDA
  SE_CUDA_CHECK(err, cudaSetDevice(device));
  return se_cuda_hh_rate(q10, dt, seconds, err);
#else
  SE_FAIL(err, SE_ERR_UNSUPPORTED, "no CUDA backend in this build (device %d, q10 %g, dt %g)",
          device, q10, dt);
#endif
}

int se_gpu_memory(int device, size_t *free_bytes, size_t *total_bytes, se_error *err) {
#ifdef SIMENGINE_HAVE_CUDA
  SE_CUDA_CHECK(err, cudaSetDevice(device));
  SE_CUDA_CHECK(err, cudaMemGetInfo(free_bytes, total_bytes));
  return SE_OK;
#else
  *free_bytes = *total_bytes = 0;
  SE_FAIL(err, SE_ERR_UNSUPPORTED, "no CUDA backend in this build (device %d)", device);
#endif
}

void se_gpu_bytes_estimate(int64_t *per_compartment, int64_t *per_cell,
                           int64_t *per_morphology_compartment) {
#ifdef SIMENGINE_HAVE_CUDA
  se_neurons_cuda_bytes_estimate(per_compartment, per_cell, per_morphology_compartment);
#else
  *per_compartment = *per_cell = *per_morphology_compartment = 0;
#endif
}

const char *se_gpu_kernel_name(int kernel) {
  static const char *const names[] = {"phases", "fused", "fused2", "branch",
                                      "auto",   "coop",  "gen"};
  return kernel >= 0 && kernel <= SE_GPU_KERNEL_GEN ? names[kernel] : NULL;
}

const char *se_neurons_step_name(se_neurons_t engine) {
  if (engine->backend == &se_neurons_backend_cpu)
    return "cpu";
#ifdef SIMENGINE_HAVE_CUDA
  const char *name = se_gpu_kernel_name(se_neurons_gpu_kernel(engine));
  return name ? name : "unknown";
#else
  return "unknown";
#endif
}
