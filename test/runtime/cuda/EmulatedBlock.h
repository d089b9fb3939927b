//===- EmulatedBlock.h - one CUDA block as fibers on the CPU ----*- C++ -*-===//
//
// The CUDA environment that the emulation tests compile kernel files in
// (FlashBlockEmulationTest.cpp, FlashTcEmulation.h): threadIdx and blockIdx,
// the qualifiers as no-ops, each thread of a block a fiber (ucontext) of one
// OS thread switched at every barrier, __syncthreads, a warp's barrier for
// the warp-wide instructions each test emulates, and runBlocks, which runs a
// kernel for every block of a grid, one block after the other. A thread runs
// alone from one barrier to the next, so races do not show.
//
// Included inside a test's `namespace llmc::rt::cuda::emulated { namespace
// {` (everything here is the test file's own), after <ucontext.h>,
// <functional>, <memory> and <vector>. Not a header of its own: no guard.
//
//===----------------------------------------------------------------------===//

struct Dim3 {
  unsigned x = 0, y = 0, z = 0;
};
Dim3 threadIdx; // of the running fiber
Dim3 blockIdx;
Dim3 blockDim{128, 1, 1}, gridDim; // for the prelude's grid helpers

#define __device__
#define __forceinline__ inline
#define __global__
#define __launch_bounds__(...)
#define __align__(n) alignas(n)

constexpr unsigned kThreads = 128;

/// The fibers of a block: thread t runs on fibers[t]; a barrier switches
/// back to the scheduler (runBlocks), which resumes every fiber in turn.
ucontext_t scheduler;
std::vector<ucontext_t> fibers(kThreads);
void yieldToScheduler() { swapcontext(&fibers[threadIdx.x], &scheduler); }

/// A reusable barrier of `count` fibers.
class Barrier {
public:
  explicit Barrier(unsigned count) : count_(count) {}
  void arriveAndWait() {
    unsigned generation = generation_;
    if (++arrived_ == count_) {
      arrived_ = 0;
      ++generation_;
      return;
    }
    while (generation == generation_)
      yieldToScheduler();
  }

private:
  unsigned count_, arrived_ = 0, generation_ = 0;
};

Barrier *blockBarrier = nullptr;
Barrier *warpBarriers[kThreads / 32];

int laneId() { return threadIdx.x % 32; }
int warpId() { return threadIdx.x / 32; }
void warpSync() { warpBarriers[warpId()]->arriveAndWait(); }
void __syncthreads() { blockBarrier->arriveAndWait(); }

const std::function<void()> *fiberKernel = nullptr;
std::vector<bool> fiberDone(kThreads);
void fiberMain() {
  (*fiberKernel)();
  fiberDone[threadIdx.x] = true;
  yieldToScheduler();
}

/// Makes fiber `t` start fiberMain on `stack`. A function of its own:
/// getcontext is declared returns_twice, so in runBlocks the compiler
/// warned that the loop's variables might be clobbered (-Wclobbered).
void startFiber(unsigned t, char *stack, size_t stackBytes) {
  getcontext(&fibers[t]);
  fibers[t].uc_stack.ss_sp = stack;
  fibers[t].uc_stack.ss_size = stackBytes;
  fibers[t].uc_link = nullptr;
  makecontext(&fibers[t], fiberMain, 0);
  fiberDone[t] = false;
}

/// Runs `kernel` as every thread of every one of `blocks` blocks, one block
/// after the other, each fiber with `stackBytes` of stack; `beforeBlock`
/// (when given) runs before each block, `afterBlock` after it, with
/// blockIdx set.
void runBlocks(unsigned blocks, const std::function<void()> &kernel,
               size_t stackBytes,
               const std::function<void()> &beforeBlock = {},
               const std::function<void()> &afterBlock = {}) {
  fiberKernel = &kernel;
  std::vector<std::unique_ptr<char[]>> stacks;
  for (unsigned t = 0; t < kThreads; ++t)
    stacks.push_back(std::make_unique<char[]>(stackBytes));
  for (unsigned block = 0; block < blocks; ++block) {
    blockIdx.x = block;
    if (beforeBlock)
      beforeBlock();
    Barrier all(kThreads);
    std::vector<std::unique_ptr<Barrier>> warps;
    for (unsigned w = 0; w < kThreads / 32; ++w) {
      warps.push_back(std::make_unique<Barrier>(32));
      warpBarriers[w] = warps.back().get();
    }
    blockBarrier = &all;
    for (unsigned t = 0; t < kThreads; ++t)
      startFiber(t, stacks[t].get(), stackBytes);
    // Round robin until every thread has returned.
    for (unsigned done = 0; done < kThreads;) {
      done = 0;
      for (unsigned t = 0; t < kThreads; ++t) {
        if (fiberDone[t]) {
          ++done;
          continue;
        }
        threadIdx.x = t;
        swapcontext(&scheduler, &fibers[t]);
      }
    }
    if (afterBlock)
      afterBlock();
  }
}
