// The host side of the gen kernels' generated source compiled for the host (with
// tests/gen_host_shim.h, by test_stream.c into a shared object beside that source): the block and
// thread a call runs as, the kernels' shared memory, and the barrier of the warp-per-subtree
// kernels. The test calls a kernel without barriers once per thread of every block, one after
// the other (se_gen_host_at); threads of a block share the shared-memory array, each on its own
// slots (the kernel offsets them by its thread), as on the device. A kernel with barriers runs
// through se_gen_host_launch: each block's threads as fibers (ucontext) on this one thread, each
// running until it reaches a barrier or returns, in turn, so that every thread of the block has
// reached a barrier before any passes it.
#include <ucontext.h>

#include <cstdlib>
#include <vector>

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

namespace {
struct fiber {
  ucontext_t context;
  std::vector<char> stack;
  bool done = false;
};
ucontext_t scheduler;
std::vector<fiber> fibers;
fiber *running = nullptr;
void (*launched_body)(void *) = nullptr;
void *launched_context = nullptr;
const size_t FIBER_STACK = 1 << 20; // the generated kernels keep hundreds of doubles in locals

void fiber_main() {
  launched_body(launched_context);
  running->done = true; // back to the scheduler through uc_link
}
} // namespace

// The barrier: back to the scheduler, which resumes this thread once every thread of its block
// has reached it (or returned).
void se_gen_host_barrier() { swapcontext(&running->context, &scheduler); }

// Runs body(context) as every thread of a grid of grid_x blocks of `threads` threads (blockIdx and
// threadIdx set as on the device), block after block. Returns 0, or -1 when a fiber cannot be
// set up.
extern "C" int se_gen_host_launch(void (*body)(void *), void *context, unsigned grid_x,
                                  unsigned threads) {
  launched_body = body;
  launched_context = context;
  if (fibers.size() < threads)
    fibers.resize(threads);
  for (unsigned b = 0; b < grid_x; b++) {
    for (unsigned t = 0; t < threads; t++) {
      fiber &f = fibers[t];
      f.stack.resize(FIBER_STACK);
      f.done = false;
      if (getcontext(&f.context) != 0)
        return -1;
      f.context.uc_stack.ss_sp = f.stack.data();
      f.context.uc_stack.ss_size = f.stack.size();
      f.context.uc_link = &scheduler;
      makecontext(&f.context, fiber_main, 0);
    }
    for (unsigned left = threads; left > 0;) // rounds: each thread up to its next barrier
      for (unsigned t = 0; t < threads; t++) {
        if (fibers[t].done)
          continue;
        blockIdx.x = b;
        blockIdx.y = 0;
        threadIdx.x = t;
        running = &fibers[t];
        if (swapcontext(&scheduler, &fibers[t].context) != 0)
          return -1;
        left -= fibers[t].done;
      }
  }
  return 0;
}
