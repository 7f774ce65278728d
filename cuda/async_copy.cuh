// Asynchronous global -> shared copies (cp.async, sm_80+) with host fallbacks, so that a
// kernel's thread code also runs on the host (the emulations of hines_mono.cu and hines_coop.cu).
#ifndef SE_ASYNC_COPY_CUH
#define SE_ASYNC_COPY_CUH

#ifndef SE_HD
#define SE_HD __host__ __device__
#endif

// Unrolled on the device (register arrays need compile-time indices); the host compiler decides.
#ifdef __CUDA_ARCH__
#define SE_UNROLL _Pragma("unroll")
#else
#define SE_UNROLL
#endif

// The copies to a shared-memory address (__cvta_generic_to_shared), for loops that advance the
// address themselves: 16 bytes bypassing L1 (cp.async.cg), 8 bytes (cp.async.ca). Device only.
__device__ static inline void copy16_async_s(unsigned dst_shared, const void *src_global) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst_shared), "l"(src_global)
               : "memory");
}
// The 16-byte copy that asks L2 to fetch the whole 128-byte line (.L2::128B), for warps that
// copy 32- or 64-byte pieces of lines that other warps copy soon after: the COOP Hines kernel
// (+0.7 to +5 points of the copy bandwidth on the H200, docs/gpu-hines.md "Session 8") and the
// coop step's v copies (0.3-1% per step, docs/gpu.md "Session 9").
__device__ static inline void copy16_async_s_l2(unsigned dst_shared, const void *src_global) {
  asm volatile("cp.async.cg.shared.global.L2::128B [%0], [%1], 16;\n" ::"r"(dst_shared),
               "l"(src_global)
               : "memory");
}
__device__ static inline void copy8_async_s(unsigned dst_shared, const void *src_global) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 8;\n" ::"r"(dst_shared), "l"(src_global)
               : "memory");
}

// One 8-byte copy (cp.async.ca); a plain copy on the host.
SE_HD static inline void copy8_async(double *dst_shared, const double *src_global) {
#ifdef __CUDA_ARCH__
  copy8_async_s((unsigned)__cvta_generic_to_shared(dst_shared), src_global);
#else
  *dst_shared = *src_global;
#endif
}

// One 16-byte copy bypassing L1 (cp.async.cg), no zero fill.
SE_HD static inline void copy16_async(double *dst_shared, const double *src_global) {
#ifdef __CUDA_ARCH__
  copy16_async_s((unsigned)__cvta_generic_to_shared(dst_shared), src_global);
#else
  dst_shared[0] = src_global[0];
  dst_shared[1] = src_global[1];
#endif
}

// copy16_async_s_l2 to a shared-memory pointer; a plain copy on the host.
SE_HD static inline void copy16_async_l2(double *dst_shared, const double *src_global) {
#ifdef __CUDA_ARCH__
  copy16_async_s_l2((unsigned)__cvta_generic_to_shared(dst_shared), src_global);
#else
  copy16_async(dst_shared, src_global);
#endif
}

// One 16-byte copy bypassing L1 (cp.async.cg) of which `bytes` (8 or 16) are read, the rest of
// the 16 zero-filled.
SE_HD static inline void copy16_async(double *dst_shared, const double *src_global, int bytes) {
#ifdef __CUDA_ARCH__
  unsigned dst = (unsigned)__cvta_generic_to_shared(dst_shared);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src_global),
               "r"(bytes)
               : "memory");
#else
  dst_shared[0] = src_global[0];
  dst_shared[1] = bytes == 16 ? src_global[1] : 0.0;
#endif
}

// Closes this thread's group of copies.
SE_HD static inline void copy_commit() {
#ifdef __CUDA_ARCH__
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Waits until at most N committed groups of this thread are still in flight.
template <int N> SE_HD static inline void copy_wait() {
#ifdef __CUDA_ARCH__
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
#endif
}

#endif
