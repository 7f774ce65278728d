// The host side of the gen kernels' generated source compiled for the host (with
// tests/gen_host_shim.h, by test_stream.c into a shared object beside that source): the block and
// thread a call runs as, and the kernels' shared memory. The test calls each kernel once per
// thread of every block of 32, one after the other; threads of a block share the shared-memory
// array, each on its own slots (the kernel offsets them by threadIdx.x), as on the device.
#include "gen_host_shim.h"

se_gen_dim3 blockIdx, threadIdx;
// the kernels' dynamic shared memory: at most (1024 + 2 * 1024) slots of 32 doubles
double se_gen_smem[(1024 + 2 * 1024) * 32];

// Sets the block (x, y) and thread the next kernel call runs as.
extern "C" void se_gen_host_at(unsigned block_x, unsigned block_y, unsigned thread) {
  blockIdx.x = block_x;
  blockIdx.y = block_y;
  threadIdx.x = thread;
}
