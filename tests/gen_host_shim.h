/* Host stand-ins for the CUDA constructs of the gen kernel's generated source (cuda/neurons_gen.c),
 * so that tests compile that source with the host C++ compiler and run it thread by thread (the
 * warp-per-subtree kernels as fibers that meet at their barriers)
 * (tests/gen_host_driver.cpp, test_stream.c's run_gen_host): no GPU needed. Included first
 * (-include). */
#ifndef SE_GEN_HOST_SHIM_H
#define SE_GEN_HOST_SHIM_H

#define __global__
#define __constant__
#define __device__
#define __shared__
#define __launch_bounds__(...)

struct se_gen_dim3 {
  unsigned x, y, z;
};
/* the block and thread the driver runs */
extern se_gen_dim3 blockIdx, threadIdx;

/* the warp-per-subtree kernels' barrier: the driver's fibers (tests/gen_host_driver.cpp) */
void se_gen_host_barrier();
#define SE_GEN_BAR(id, threads) se_gen_host_barrier()
/* a prefetch only moves data into a cache: nothing to do on the host */
#define SE_GEN_PREFETCH(p) ((void)(p))

static inline unsigned long long atomicCAS(unsigned long long *p, unsigned long long expected,
                                           unsigned long long value) {
  const unsigned long long old = *p;
  if (old == expected)
    *p = value;
  return old;
}

static inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long value) {
  const unsigned long long old = *p;
  *p += value;
  return old;
}

#endif
