//===- FlashTensorCoreEmulationTest.cpp - tensor-core flash attention on the CPU -===//
//
// Runs the tensor-core flash attention kernels (attention/FlashTc.cuh
//) on the CPU, without a GPU, and compares them with the CPU reference
// (runCpuKernel), so that their indexing, tiling, masking, cp.async double
// buffering and causal skipping are checked on every build.
//
// The kernel files are compiled as C++ (FlashTcPtx.cuh, the functions
// made of PTX, replaced by the emulations below); each CUDA thread of a block is a fiber (ucontext)
// of one OS thread, switched at every barrier, and the warp-wide
// instructions are emulated from their PTX definitions:
//   - mma.sync.m16n8k16 (bf16 in, f32 accumulation: the emulation sums in
//     double and rounds once to f32, the hardware's order is unspecified);
//   - ldmatrix.x4 (.trans): lane l gives the address of row l % 8 of matrix
//     l / 8; lane l receives, of matrix i, row l / 4 columns 2 (l % 4) and
//     + 1 (transposed: column l / 4, rows 2 (l % 4) and + 1);
//   - cp.async: the copy lands only at cp.async.wait_group (so a missing
//     wait reads the poisoned shared memory), destinations must lie in the
//     launch's dynamic shared memory (whose bytes come from flashLaunch);
//   - __shfl_xor_sync, __syncthreads.
// What it cannot check: the real hardware's fragment layouts (it encodes our
// reading of the PTX manual, as the kernels do), timing, races (a thread
// runs alone from one barrier to the next, so a missing __syncthreads
// between a write and another warp's read may not show), and the launcher's
// cudaKernelSetAttributeForDevice.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/CpuKernels.h"
#include "runtime/cpu/ThreadPool.h"
#include "runtime/cuda/kernels/attention/FlashLaunch.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <ucontext.h>

namespace llmc::rt::cuda::emulated {
namespace {

// ---- The CUDA environment of one block ------------------------------------

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
#define __trap() ADD_FAILURE() << "trap", std::abort()

constexpr unsigned kThreads = 128;
constexpr size_t kSharedCapacity = 256 * 1024;
alignas(128) unsigned char llmcFlashTcShared[kSharedCapacity];
unsigned dynamicShared = 0;

/// The fibers of a block: thread t runs on fibers[t]; a barrier switches
/// back to the scheduler (runGrid), which resumes every fiber in turn.
ucontext_t scheduler;
std::vector<ucontext_t> fibers(kThreads);
void yieldToScheduler() {
  swapcontext(&fibers[threadIdx.x], &scheduler);
}

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
/// What each lane shows its warp in a warp-wide instruction.
struct Lane {
  const void *row;
  unsigned a[4], b0, b1;
  float value;
  int integer;   // the position masks' int shuffles
  double wide;   // the prelude's warp sums of doubles (unused here)
};
Lane lanes[kThreads / 32][32];

int laneId() { return threadIdx.x % 32; }
int warpId() { return threadIdx.x / 32; }
void warpSync() { warpBarriers[warpId()]->arriveAndWait(); }
void __syncthreads() { blockBarrier->arriveAndWait(); }

struct uint4 {
  unsigned x, y, z, w;
};
float bf16Value(uint16_t bits) {
  uint32_t word = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &word, 4);
  return value;
}
uint16_t roundToBf16(float value) {
  uint32_t word;
  std::memcpy(&word, &value, 4);
  if (std::isnan(value))
    return 0x7fc0;
  return static_cast<uint16_t>((word + 0x7fff + ((word >> 16) & 1)) >> 16);
}
#include "EmulatedBitCasts.h"
long long min(long long a, long long b) { return a < b ? a : b; }

float __shfl_xor_sync(unsigned, float value, int mask) {
  lanes[warpId()][laneId()].value = value;
  warpSync();
  float result = lanes[warpId()][laneId() ^ mask].value;
  warpSync();
  return result;
}
int __shfl_xor_sync(unsigned, int value, int mask) {
  lanes[warpId()][laneId()].integer = value;
  warpSync();
  int result = lanes[warpId()][laneId() ^ mask].integer;
  warpSync();
  return result;
}
double __shfl_xor_sync(unsigned, double value, int mask) {
  lanes[warpId()][laneId()].wide = value;
  warpSync();
  double result = lanes[warpId()][laneId() ^ mask].wide;
  warpSync();
  return result;
}

// The kernels' types and helpers (Bf16, loadValue, ...) as the units have
// them; its warp sums of doubles are not used by these kernels.
#include "common/Prelude.cuh"

void expectFlashTcShared(unsigned bytes) {
  if (dynamicShared < bytes) {
    ADD_FAILURE() << "launched with " << dynamicShared
                  << " bytes of shared memory, the kernel needs " << bytes;
    std::abort();
  }
}
bool inShared(const void *p, size_t bytes) {
  auto address = reinterpret_cast<uintptr_t>(p);
  auto base = reinterpret_cast<uintptr_t>(llmcFlashTcShared);
  return address >= base && address + bytes <= base + dynamicShared;
}

unsigned packBf16(float lo, float hi) {
  return roundToBf16(lo) | (static_cast<unsigned>(roundToBf16(hi)) << 16);
}
float halfOf(unsigned word, int high) {
  return bf16Value(static_cast<uint16_t>(high ? word >> 16 : word & 0xffff));
}

void mmaBf16(float c[4], const unsigned a[4], unsigned b0, unsigned b1) {
  Lane &self = lanes[warpId()][laneId()];
  for (int i = 0; i < 4; ++i)
    self.a[i] = a[i];
  self.b0 = b0;
  self.b1 = b1;
  warpSync();
  float A[16][16], B[16][8];
  for (int l = 0; l < 32; ++l) {
    const Lane &other = lanes[warpId()][l];
    int g = l / 4, t = l % 4;
    for (int j = 0; j < 2; ++j) {
      A[g][2 * t + j] = halfOf(other.a[0], j);
      A[g + 8][2 * t + j] = halfOf(other.a[1], j);
      A[g][2 * t + 8 + j] = halfOf(other.a[2], j);
      A[g + 8][2 * t + 8 + j] = halfOf(other.a[3], j);
      B[2 * t + j][g] = halfOf(other.b0, j);
      B[2 * t + 8 + j][g] = halfOf(other.b1, j);
    }
  }
  warpSync();
  int g = laneId() / 4, t = laneId() % 4;
  for (int e = 0; e < 4; ++e) {
    int row = g + 8 * (e / 2), column = 2 * t + (e & 1);
    double sum = c[e];
    for (int k = 0; k < 16; ++k)
      sum += static_cast<double>(A[row][k]) * B[k][column];
    c[e] = static_cast<float>(sum);
  }
}

void loadMatrixRows(unsigned r[4], const unsigned short *row, bool transposed) {
  if (reinterpret_cast<uintptr_t>(row) % 16 != 0 || !inShared(row, 16)) {
    ADD_FAILURE() << "ldmatrix row unaligned or outside the shared memory";
    std::abort();
  }
  lanes[warpId()][laneId()].row = row;
  warpSync();
  int l = laneId();
  for (int i = 0; i < 4; ++i) {
    uint16_t element[2];
    for (int j = 0; j < 2; ++j) {
      if (!transposed)
        element[j] = static_cast<const uint16_t *>(
            lanes[warpId()][8 * i + l / 4].row)[2 * (l % 4) + j];
      else
        element[j] = static_cast<const uint16_t *>(
            lanes[warpId()][8 * i + 2 * (l % 4) + j].row)[l / 4];
    }
    r[i] = element[0] | (static_cast<unsigned>(element[1]) << 16);
  }
  warpSync();
}
void loadMatrices(unsigned r[4], const unsigned short *row) {
  loadMatrixRows(r, row, false);
}
void loadMatricesTransposed(unsigned r[4], const unsigned short *row) {
  loadMatrixRows(r, row, true);
}

struct PendingCopy {
  void *destination;
  const void *source;
  size_t bytes;
  bool valid;
};
/// Per thread: copies issued and not yet waited for.
std::vector<PendingCopy> pendingCopies[kThreads];
void copyAsync(void *destination, const void *source, size_t bytes,
               bool valid) {
  if (!inShared(destination, bytes)) {
    ADD_FAILURE() << "cp.async outside the dynamic shared memory";
    std::abort();
  }
  pendingCopies[threadIdx.x].push_back({destination, source, bytes, valid});
}
void copyAsync16(void *destination, const void *source, bool valid) {
  copyAsync(destination, source, 16, valid);
}
void copyAsync4(float *destination, const float *source, bool valid) {
  copyAsync(destination, source, 4, valid);
}
void commitAsync() {}
void waitAsync() {
  for (const PendingCopy &copy : pendingCopies[threadIdx.x]) {
    if (copy.valid)
      std::memcpy(copy.destination, copy.source, copy.bytes);
    else
      std::memset(copy.destination, 0, copy.bytes);
  }
  pendingCopies[threadIdx.x].clear();
}

// The kernels' own files (runtime/cuda/kernels/attention/), compiled as
// C++: the guard of the PTX header is defined, so that the emulations above
// stand in for its functions (and llmcFlashTcShared for its shared memory).
#define LLMC_CUDA_ATTENTION_FLASHTCPTX_CUH
#include "attention/FlashTcBackward.cuh"
#include "attention/FlashTcForward.cuh"
// The entries, as units/FlashTcD64.cu and FlashTcD128.cu instantiate them.
LLMC_FLASH_TC_KERNELS(64)
LLMC_FLASH_TC_KERNELS(128)
// Ring attention's blocks, as units/FlashBlockTcD64.cu and D128 do.
LLMC_FLASH_BLOCK_TC_KERNELS(64)
LLMC_FLASH_BLOCK_TC_KERNELS(128)

const std::function<void()> *fiberKernel = nullptr;
std::vector<bool> fiberDone(kThreads);
void fiberMain() {
  (*fiberKernel)();
  fiberDone[threadIdx.x] = true;
  yieldToScheduler();
}

/// Runs `kernel` for every block of a grid, one block after the other, with
/// `shared` bytes of poisoned dynamic shared memory.
void runGrid(unsigned blocks, unsigned shared,
             const std::function<void()> &kernel) {
  ASSERT_LE(shared, kSharedCapacity);
  dynamicShared = shared;
  fiberKernel = &kernel;
  constexpr size_t kStack = 256 * 1024;
  std::vector<std::unique_ptr<char[]>> stacks;
  for (unsigned t = 0; t < kThreads; ++t)
    stacks.push_back(std::make_unique<char[]>(kStack));
  for (unsigned block = 0; block < blocks; ++block) {
    blockIdx.x = block;
    std::memset(llmcFlashTcShared, 0xcd, sizeof llmcFlashTcShared);
    Barrier all(kThreads);
    std::vector<std::unique_ptr<Barrier>> warps;
    for (unsigned w = 0; w < kThreads / 32; ++w) {
      warps.push_back(std::make_unique<Barrier>(32));
      warpBarriers[w] = warps.back().get();
    }
    blockBarrier = &all;
    for (unsigned t = 0; t < kThreads; ++t) {
      getcontext(&fibers[t]);
      fibers[t].uc_stack.ss_sp = stacks[t].get();
      fibers[t].uc_stack.ss_size = kStack;
      fibers[t].uc_link = nullptr;
      makecontext(&fibers[t], fiberMain, 0);
      fiberDone[t] = false;
    }
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
    bool copiesLeft = false;
    for (unsigned t = 0; t < kThreads; ++t) {
      copiesLeft = copiesLeft || !pendingCopies[t].empty();
      pendingCopies[t].clear();
    }
    EXPECT_FALSE(copiesLeft) << "block " << block
                             << " ended with cp.async copies not waited for";
  }
}

// ---- The comparison -----------------------------------------------------

struct Case {
  int64_t batch, heads, kvHeads, seq, kvSeq, headDim;
  bool causal;
};

std::vector<Bf16> randomBf16(std::mt19937 &rng, int64_t n, float range) {
  std::uniform_real_distribution<float> draw(-range, range);
  std::vector<Bf16> values(n);
  for (Bf16 &value : values)
    value.bits = roundToBf16(draw(rng));
  return values;
}

/// Largest |got - want| against 2e-2 of the largest |want| plus one bf16 ulp
/// of the element: the tolerance of the GPU tests (CudaKernelsTest.cpp).
void compare(const std::string &name, const std::vector<Bf16> &got,
             const std::vector<Bf16> &want) {
  double largest = 0.0, worst = 0.0;
  for (Bf16 value : want)
    largest = std::max(largest, std::fabs(double(bf16Value(value.bits))));
  int failures = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double expected = bf16Value(want[i].bits), actual = bf16Value(got[i].bits);
    double bound = 2e-2 * largest;
    if (expected != 0.0)
      bound += std::ldexp(1.0, std::ilogb(expected) - 7);
    double error = std::fabs(actual - expected);
    worst = std::max(worst, error / std::max(largest, 1e-30));
    if (!(error <= bound) && ++failures <= 5)
      ADD_FAILURE() << name << " element " << i << ": emulated " << actual
                    << ", cpu " << expected << ", bound " << bound;
  }
  EXPECT_EQ(failures, 0) << name;
  std::printf("  %-52s max error %.2e of %.3g\n", name.c_str(), worst,
              largest);
}

/// The elements of a [B, H, T, D] tensor laid out as `layout` (1: bthd,
/// [B, T, H, D]; 2: packed, heads [first, first + H) of a
/// [B, T, all, D] tensor), and back.
struct Placement {
  int64_t layout, batch, heads, seq, headDim, all, first;
  int64_t at(int64_t b, int64_t h, int64_t t) const {
    if (layout == 0)
      return ((b * heads + h) * seq + t) * headDim;
    if (layout == 1)
      return ((b * seq + t) * heads + h) * headDim;
    return ((b * seq + t) * all + first + h) * headDim;
  }
  void place(const std::vector<Bf16> &bhtd, std::vector<Bf16> &laid) const {
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t t = 0; t < seq; ++t)
          std::memcpy(&laid[at(b, h, t)],
                      &bhtd[((b * heads + h) * seq + t) * headDim],
                      headDim * sizeof(Bf16));
  }
  std::vector<Bf16> gather(const std::vector<Bf16> &laid) const {
    std::vector<Bf16> bhtd(batch * heads * seq * headDim);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t t = 0; t < seq; ++t)
          std::memcpy(&bhtd[((b * heads + h) * seq + t) * headDim],
                      &laid[at(b, h, t)], headDim * sizeof(Bf16));
    return bhtd;
  }
};

const char *layoutName(int64_t layout) {
  return layout == 0 ? "bhtd" : layout == 1 ? "bthd" : "packed";
}

/// The CPU reference in the bhtd layout (out, dq, dk, dv), against which
/// every layout is compared.
struct Reference {
  std::vector<Bf16> out, dq, dk, dv;
};

/// A case's operands in one layout: where each lies, the laid-out shapes
/// and data (packed: q, k and v are one tensor, the same bytes three times).
struct LaidOperands {
  Placement qAt, kAt, vAt, oAt;
  Shape q, kv, o;
  std::vector<Bf16> lq, lk, lv, lout, ldout;
};

LaidOperands layOut(const Case &c, int64_t layout, const std::vector<Bf16> &q,
                    const std::vector<Bf16> &k, const std::vector<Bf16> &v,
                    const std::vector<Bf16> &out,
                    const std::vector<Bf16> &dout) {
  const int64_t batch = c.batch, all = c.heads + 2 * c.kvHeads;
  LaidOperands laid{
      {layout, batch, c.heads, c.seq, c.headDim, all, 0},
      {layout, batch, c.kvHeads, c.kvSeq, c.headDim, all, c.heads},
      {layout, batch, c.kvHeads, c.kvSeq, c.headDim, all, c.heads + c.kvHeads},
      {layout == 2 ? 1 : layout, batch, c.heads, c.seq, c.headDim, all, 0},
      {batch, c.heads, c.seq, c.headDim},
      {batch, c.kvHeads, c.kvSeq, c.headDim},
      {batch, c.heads, c.seq, c.headDim},
      {}, {}, {}, {}, {}};
  if (layout != 0) {
    laid.q = {batch, c.seq, c.heads, c.headDim};
    laid.kv = {batch, c.kvSeq, c.kvHeads, c.headDim};
    laid.o = laid.q;
  }
  if (layout == 2)
    laid.q = laid.kv = {batch, c.seq, all, c.headDim};
  int64_t qCount = numElements(laid.o);
  laid.lq.resize(numElements(laid.q));
  laid.lk.resize(numElements(laid.kv));
  laid.lv.resize(numElements(laid.kv));
  laid.lout.resize(qCount);
  laid.ldout.resize(qCount);
  laid.qAt.place(q, laid.lq);
  laid.kAt.place(k, layout == 2 ? laid.lq : laid.lk);
  laid.vAt.place(v, layout == 2 ? laid.lq : laid.lv);
  if (layout == 2)
    laid.lk = laid.lv = laid.lq;
  laid.oAt.place(out, laid.lout);
  laid.oAt.place(dout, laid.ldout);
  return laid;
}

/// The CPU kernels in `layout` (attrs carry it) compute the same bits as in
/// bhtd: only the addressing differs.
void expectCpuLayoutMatches(LaidOperands &laid, const KernelAttrs &attrs,
                            const Reference &want, int64_t layout,
                            ThreadPool &pool) {
  auto ref = [](std::vector<Bf16> &data, const Shape &shape) {
    return TensorRef{data.data(), DType::BF16, shape};
  };
  std::vector<Bf16> cpuOut(numElements(laid.o)), cpuDq(numElements(laid.q)),
      cpuDk(numElements(laid.kv)), cpuDv(numElements(laid.kv));
  ASSERT_TRUE(runCpuKernel(KernelKind::Attention, attrs,
                           {ref(laid.lq, laid.q), ref(laid.lk, laid.kv),
                            ref(laid.lv, laid.kv)},
                           {ref(cpuOut, laid.o)}, pool)
                  .isOk());
  std::vector<TensorRef> grads = {ref(cpuDq, laid.q), ref(cpuDk, laid.kv),
                                  ref(cpuDv, laid.kv)};
  if (layout == 2)
    grads.resize(1);
  ASSERT_TRUE(runCpuKernel(KernelKind::AttentionGrad, attrs,
                           {ref(laid.lq, laid.q), ref(laid.lk, laid.kv),
                            ref(laid.lv, laid.kv), ref(laid.lout, laid.o),
                            ref(laid.ldout, laid.o)},
                           grads, pool)
                  .isOk());
  auto same = [&](const char *what, const std::vector<Bf16> &got,
                  const std::vector<Bf16> &expected) {
    EXPECT_EQ(0, std::memcmp(got.data(), expected.data(),
                             expected.size() * sizeof(Bf16)))
        << "the CPU's " << what << " in " << layoutName(layout)
        << " differs from bhtd";
  };
  same("out", laid.oAt.gather(cpuOut), want.out);
  same("dq", laid.qAt.gather(cpuDq), want.dq);
  same("dk", laid.kAt.gather(layout == 2 ? cpuDq : cpuDk), want.dk);
  same("dv", laid.vAt.gather(layout == 2 ? cpuDq : cpuDv), want.dv);
}

// The emulated kernels' signatures (FlashTc.cuh's entries).
using Forward = void (*)(const Bf16 *, const Bf16 *, const Bf16 *, Bf16 *,
                         float *, int, int, long long, long long, int, float,
                         FlashLayout);
using Rows = void (*)(const Bf16 *, const Bf16 *, const Bf16 *, const Bf16 *,
                      const Bf16 *, const float *, Bf16 *, float *, float *,
                      int, int, long long, long long, int, float,
                      FlashLayout);
using Keys = void (*)(const Bf16 *, const Bf16 *, const Bf16 *, const Bf16 *,
                      const float *, const float *, Bf16 *, Bf16 *, int, int,
                      long long, long long, int, float, FlashLayout);

/// The emulated forward's log-sum-exp against the CPU's.
void expectLseClose(const std::vector<float> &gpuLse,
                    const std::vector<float> &cpuLse) {
  const int64_t rowCount = static_cast<int64_t>(cpuLse.size());
  // The log-sum-exp ([B, Hq, T] in every layout): f32 sums of bf16
  // products against f64 ones, within 1e-4 of max(1, |lse|) (scores here
  // are at most a few units).
  int lseFailures = 0;
  for (int64_t i = 0; i < rowCount; ++i) {
    double bound = 1e-4 * std::max(1.0, std::fabs(double(cpuLse[i])));
    if (!(std::fabs(double(gpuLse[i]) - cpuLse[i]) <= bound) &&
        ++lseFailures <= 5)
      ADD_FAILURE() << "lse row " << i << ": emulated " << gpuLse[i]
                    << ", cpu " << cpuLse[i];
  }
  EXPECT_EQ(lseFailures, 0);
}

/// Every element of a packed gradient written: no `poison` left.
void expectNoPoison(const std::vector<Bf16> &gradient, Bf16 poison) {
  for (size_t i = 0; i < gradient.size(); ++i)
    if (gradient[i].bits == poison.bits) {
      ADD_FAILURE() << "packed gradient element " << i << " not written";
      break;
    }
}

void runCase(const Case &c, int64_t layout, ThreadPool &pool) {
  std::string name = std::string(layoutName(layout)) +
                     " B=" + std::to_string(c.batch) +
                     " Hq=" + std::to_string(c.heads) +
                     " Hkv=" + std::to_string(c.kvHeads) +
                     " T=" + std::to_string(c.seq) +
                     " S=" + std::to_string(c.kvSeq) +
                     " D=" + std::to_string(c.headDim) +
                     (c.causal ? " causal" : "");
  SCOPED_TRACE(name);
  const int64_t batch = c.batch;
  Shape qShape = {batch, c.heads, c.seq, c.headDim};
  Shape kvShape = {batch, c.kvHeads, c.kvSeq, c.headDim};
  int64_t qCount = batch * c.heads * c.seq * c.headDim;
  int64_t kvCount = batch * c.kvHeads * c.kvSeq * c.headDim;
  std::mt19937 rng(static_cast<unsigned>(c.seq * 131 + c.kvSeq * 7 +
                                         c.headDim + c.causal));
  std::vector<Bf16> q = randomBf16(rng, qCount, 2.0f),
                    k = randomBf16(rng, kvCount, 2.0f),
                    v = randomBf16(rng, kvCount, 1.0f),
                    dout = randomBf16(rng, qCount, 1.0f);
  KernelAttrs attrs;
  attrs.ints = {c.causal ? 1 : 0};
  attrs.floats = {1.0 / std::sqrt(static_cast<double>(c.headDim))};
  auto ref = [](std::vector<Bf16> &data, const Shape &shape) {
    return TensorRef{data.data(), DType::BF16, shape};
  };

  // The CPU in the bhtd layout: out and the rows' log-sum-exp, then dq,
  // dk, dv from that out.
  Shape rowShape = {batch, c.heads, c.seq};
  int64_t rowCount = batch * c.heads * c.seq;
  std::vector<float> cpuLse(rowCount);
  Reference want{std::vector<Bf16>(qCount), std::vector<Bf16>(qCount),
                 std::vector<Bf16>(kvCount), std::vector<Bf16>(kvCount)};
  ASSERT_TRUE(runCpuKernel(KernelKind::Attention, attrs,
                           {ref(q, qShape), ref(k, kvShape), ref(v, kvShape)},
                           {ref(want.out, qShape),
                            TensorRef{cpuLse.data(), DType::F32, rowShape}},
                           pool)
                  .isOk());
  ASSERT_TRUE(runCpuKernel(KernelKind::AttentionGrad, attrs,
                           {ref(q, qShape), ref(k, kvShape), ref(v, kvShape),
                            ref(want.out, qShape), ref(dout, qShape)},
                           {ref(want.dq, qShape), ref(want.dk, kvShape),
                            ref(want.dv, kvShape)},
                           pool)
                  .isOk());

  // The operands in `layout`; the CPU computes the same bits there.
  LaidOperands laid = layOut(c, layout, q, k, v, want.out, dout);
  attrs.ints.push_back(layout);
  if (layout != 0)
    expectCpuLayoutMatches(laid, attrs, want, layout, pool);
  const Placement &qAt = laid.qAt, &kAt = laid.kAt, &vAt = laid.vAt,
                  &oAt = laid.oAt;
  const Shape &laidQ = laid.q, &laidKv = laid.kv, &laidO = laid.o;
  std::vector<Bf16> &lq = laid.lq, &lk = laid.lk, &lv = laid.lv,
                    &lout = laid.lout, &ldout = laid.ldout;

  // The emulated kernels with the launch's grids, shared memory and
  // strides.
  FlashLaunch forward, backward;
  TensorRef qRef{nullptr, DType::BF16, laidQ},
      kvRef{nullptr, DType::BF16, laidKv}, oRef{nullptr, DType::BF16, laidO};
  ASSERT_EQ(flashLaunch({qRef, kvRef, kvRef}, attrs, forward, &oRef), "");
  ASSERT_EQ(flashLaunch({qRef, kvRef, kvRef, oRef, oRef}, attrs, backward),
            "");
  ASSERT_TRUE(forward.tensorCores && backward.tensorCores);
  ASSERT_TRUE(forward.stridesAligned16 && backward.stridesAligned16);
#ifdef LLMC_FLASH_EMULATION_D64_TILES
  // cuda-flash-emulation-tiles: the kernels compiled with the D = 64 sizes
  // of this target's LLMC_FLASH_TC_D64_* definitions, launched with them.
  if (c.headDim == 64) {
    FlashTcTileSizes tiles = {
        LLMC_FLASH_TC_D64_FORWARD_ROW_BLOCKS, LLMC_FLASH_TC_D64_FORWARD_KEYS,
        LLMC_FLASH_TC_D64_ROWS_ROW_BLOCKS,    LLMC_FLASH_TC_D64_ROWS_KEYS,
        LLMC_FLASH_TC_D64_KEYS_ROW_BLOCKS,    LLMC_FLASH_TC_D64_KEYS_QUERIES};
    flashTensorCoreLaunch(tiles, true, qShape, kvShape, forward);
    flashTensorCoreLaunch(tiles, false, qShape, kvShape, backward);
  }
#endif
  FlashLayout forwardLayout, backwardLayout;
  static_assert(sizeof(FlashLayout) == sizeof(FlashOperands));
  std::memcpy(&forwardLayout, &forward.layout, sizeof forwardLayout);
  std::memcpy(&backwardLayout, &backward.layout, sizeof backwardLayout);
  const Bf16 poison{0x7f7f};
  std::vector<Bf16> gpuOut(qCount, poison), gpuDq(lq.size(), poison),
      gpuDk(lk.size(), poison), gpuDv(lv.size(), poison);
  // Packed: one gradient buffer for dq, dk and dv.
  Bf16 *dkData = layout == 2 ? gpuDq.data() : gpuDk.data();
  Bf16 *dvData = layout == 2 ? gpuDq.data() : gpuDv.data();
  std::vector<float> gpuLse(rowCount, NAN), lse(rowCount, NAN),
      delta(rowCount, NAN);
  int heads = static_cast<int>(c.heads), kvHeads = static_cast<int>(c.kvHeads);
  long long seq = c.seq, kvSeq = c.kvSeq;
  int causal = c.causal ? 1 : 0;
  float scale = static_cast<float>(attrs.floats[0]);
  bool wide = c.headDim == 128;
  Forward forwardKernel = wide ? llmc_flash_attention_tc_forward_bf16_d128
                               : llmc_flash_attention_tc_forward_bf16_d64;
  Rows rowsKernel = wide ? llmc_flash_attention_tc_grad_rows_bf16_d128
                         : llmc_flash_attention_tc_grad_rows_bf16_d64;
  Keys keysKernel = wide ? llmc_flash_attention_tc_grad_keys_bf16_d128
                         : llmc_flash_attention_tc_grad_keys_bf16_d64;
  runGrid(forward.tensorCoreQueryBlocks, forward.tensorCoreForwardShared, [&] {
    forwardKernel(lq.data(), lk.data(), lv.data(), gpuOut.data(),
                  gpuLse.data(), heads, kvHeads, seq, kvSeq, causal, scale,
                  forwardLayout);
  });
  compare("attention " + name, oAt.gather(gpuOut), want.out);
  expectLseClose(gpuLse, cpuLse);

  // The backward twice: recomputing the statistics (forwardLse null), and
  // reading the forward's log-sum-exp as the autodiff pass arranges.
  for (const float *forwardLse : {(const float *)nullptr,
                                  (const float *)gpuLse.data()}) {
    std::string how = forwardLse ? " (forward lse) " : " ";
    std::fill(gpuDq.begin(), gpuDq.end(), poison);
    std::fill(gpuDk.begin(), gpuDk.end(), poison);
    std::fill(gpuDv.begin(), gpuDv.end(), poison);
    std::fill(lse.begin(), lse.end(), NAN);
    runGrid(backward.tensorCoreQueryBlocks, backward.tensorCoreRowsShared, [&] {
      rowsKernel(lq.data(), lk.data(), lv.data(), lout.data(), ldout.data(),
                 forwardLse, gpuDq.data(), lse.data(), delta.data(), heads,
                 kvHeads, seq, kvSeq, causal, scale, backwardLayout);
    });
    const float *keysLse = forwardLse ? forwardLse : lse.data();
    runGrid(backward.tensorCoreKeyBlocks, backward.tensorCoreKeysShared, [&] {
      keysKernel(lq.data(), lk.data(), lv.data(), ldout.data(), keysLse,
                 delta.data(), dkData, dvData, heads, kvHeads, seq, kvSeq,
                 causal, scale, backwardLayout);
    });
    compare("attention_grad dq" + how + name, qAt.gather(gpuDq), want.dq);
    compare("attention_grad dk" + how + name,
            kAt.gather(layout == 2 ? gpuDq : gpuDk), want.dk);
    compare("attention_grad dv" + how + name,
            vAt.gather(layout == 2 ? gpuDq : gpuDv), want.dv);
    // Packed: every element of the gradient written (no poison left).
    if (layout == 2)
      expectNoPoison(gpuDq, poison);
  }
}

// D = 64 and 128, causal and not, grouped heads (B = 1, Hq = 2, Hkv = 1):
// one partial tile (T = 13 < 16), exact tiles (64), partial last tiles past
// one and two tiles of every kernel (T = 130: 128- and 64-row tiles; 16-,
// 32- and 64-key or -query tiles, so both cp.async buffers alternate), and
// cross attention; then B = 2 with 2 and 8 query heads over 2 key/value
// heads. About 20 s on the 2-core build machine (a fiber switch per thread
// and barrier).
TEST(FlashTensorCoreEmulation, MatchesTheCpu) {
  ThreadPool pool;
#ifdef LLMC_FLASH_EMULATION_D64_TILES
  // Only D = 64 has other sizes here.
  for (bool causal : {false, true})
    for (int64_t seq : {13, 64, 130, 200})
      runCase({1, 2, 1, seq, seq, 64, causal}, 0, pool);
  runCase({1, 2, 1, 20, 100, 64, false}, 0, pool);
  runCase({1, 2, 1, 130, 70, 64, false}, 0, pool);
  runCase({2, 2, 2, 100, 100, 64, true}, 0, pool);
  return;
#endif
  for (int64_t headDim : {64, 128})
    for (bool causal : {false, true})
      for (int64_t seq : {13, 64, 130})
        runCase({1, 2, 1, seq, seq, headDim, causal}, 0, pool);
  for (int64_t headDim : {64, 128}) {
    runCase({1, 2, 1, 20, 100, headDim, false}, 0, pool);
    runCase({1, 2, 1, 130, 70, headDim, false}, 0, pool);
  }
  runCase({2, 2, 2, 100, 100, 64, true}, 0, pool);
  runCase({2, 8, 2, 70, 70, 128, true}, 0, pool);
}

// The [B, T, H, D] layouts (docs/cuda.md, "Attention on [B, T, H, D]"):
// bthd and packed (q, k, v one [B, T, Hq + 2 Hkv, D] tensor, one packed
// gradient), D = 64 and 128, causal and not, grouped heads, batches of 2
// (the batch stride), partial tiles; cross attention in bthd (packed is
// self-attention only). The CPU in each layout gives the bits of bhtd; the
// kernels compare with the tolerance above. About 40 s here.
TEST(FlashTensorCoreEmulation, StridedLayoutsMatchTheCpu) {
  ThreadPool pool;
  for (int64_t layout : {1, 2})
    for (int64_t headDim : {64, 128})
      runCase({2, 4, 2, 70, 70, headDim, true}, layout, pool);
  runCase({1, 2, 1, 70, 70, 64, false}, 2, pool);
  runCase({1, 2, 1, 20, 100, 64, false}, 1, pool);
}

// ---- Ring attention's blocks ---------------------------------------------

/// The zigzag positions of rank `rank` of `ranks` in a sequence of `global`
/// (chunks rank and 2 ranks - 1 - rank).
std::vector<int32_t> zigzag(int64_t global, int64_t ranks, int64_t rank) {
  int64_t chunk = global / (2 * ranks);
  std::vector<int32_t> positions;
  for (int64_t first : {rank * chunk, (2 * ranks - 1 - rank) * chunk})
    for (int64_t i = 0; i < chunk; ++i)
      positions.push_back(static_cast<int32_t>(first + i));
  return positions;
}

struct BlockCase {
  int64_t batch, heads, kvHeads, seq, kvSeq, headDim;
  std::vector<int32_t> queryPositions, keyPositions;
  std::string what;
  /// The backward's global lse keeps the block's -inf (rows that see no key
  /// anywhere) instead of a finite value another block would give them.
  bool infiniteGlobalLse = false;
};

// The emulated block kernels' signatures (LLMC_FLASH_BLOCK_TC_KERNELS).
using BlockForward = void (*)(const Bf16 *, const Bf16 *, const Bf16 *,
                              Bf16 *, float *, const int *, const int *, int,
                              int, long long, long long, float, FlashLayout);
using BlockRows = void (*)(const Bf16 *, const Bf16 *, const Bf16 *,
                           const Bf16 *, const Bf16 *, const float *, Bf16 *,
                           float *, float *, const int *, const int *, int,
                           int, long long, long long, float, FlashLayout);
using BlockKeys = void (*)(const Bf16 *, const Bf16 *, const Bf16 *,
                           const Bf16 *, const float *, const float *, Bf16 *,
                           Bf16 *, const int *, const int *, int, int,
                           long long, long long, float, FlashLayout);

/// The tensor-core block kernels on the launch's grids against the CPU's
/// AttentionBlock and AttentionBlockGrad (runtime/cpu/AttentionBlock.cpp):
/// bf16 outputs within 2e-2 of the largest magnitude plus one ulp (as
/// above), lse within 1e-4 of max(1, |lse|) and -inf exactly where the CPU
/// has it. The backward reads the CPU's out and a global lse.
void runBlockCase(const BlockCase &c, ThreadPool &pool) {
  std::string name = c.what + " Hq=" + std::to_string(c.heads) +
                     " Hkv=" + std::to_string(c.kvHeads) +
                     " T=" + std::to_string(c.seq) +
                     " S=" + std::to_string(c.kvSeq) +
                     " D=" + std::to_string(c.headDim);
  SCOPED_TRACE(name);
  Shape qShape = {c.batch, c.heads, c.seq, c.headDim};
  Shape kvShape = {c.batch, c.kvHeads, c.kvSeq, c.headDim};
  Shape rows = {c.batch, c.heads, c.seq};
  std::mt19937 rng(static_cast<unsigned>(c.seq * 131 + c.kvSeq * 7 +
                                         c.headDim + c.what.size()));
  std::vector<Bf16> q = randomBf16(rng, numElements(qShape), 2.0f),
                    k = randomBf16(rng, numElements(kvShape), 2.0f),
                    v = randomBf16(rng, numElements(kvShape), 1.0f),
                    dout = randomBf16(rng, numElements(qShape), 1.0f);
  std::vector<int32_t> qpos = c.queryPositions, kpos = c.keyPositions;
  auto ref = [](std::vector<Bf16> &data, const Shape &shape) {
    return TensorRef{data.data(), DType::BF16, shape};
  };
  TensorRef qposRef{qpos.data(), DType::I32, {c.seq}};
  TensorRef kposRef{kpos.data(), DType::I32, {c.kvSeq}};
  KernelAttrs attrs{{}, {1.0 / std::sqrt(static_cast<double>(c.headDim))}};

  // 1. The CPU.
  std::vector<Bf16> out(q.size()), dq(q.size()), dk(k.size()), dv(v.size());
  std::vector<float> lse(numElements(rows)), globalLse(lse.size());
  std::vector<TensorRef> forwardIn = {ref(q, qShape), ref(k, kvShape),
                                      ref(v, kvShape), qposRef, kposRef};
  std::vector<TensorRef> forwardOut = {
      ref(out, qShape), TensorRef{lse.data(), DType::F32, rows}};
  ASSERT_TRUE(runCpuKernel(KernelKind::AttentionBlock, attrs, forwardIn,
                           forwardOut, pool)
                  .isOk());
  for (size_t i = 0; i < lse.size(); ++i)
    globalLse[i] =
        std::isinf(lse[i]) && !c.infiniteGlobalLse ? 0.75f : lse[i];
  std::vector<TensorRef> gradIn = {
      ref(q, qShape),    ref(k, kvShape),
      ref(v, kvShape),   ref(out, qShape),
      ref(dout, qShape), TensorRef{globalLse.data(), DType::F32, rows},
      qposRef,           kposRef};
  std::vector<TensorRef> gradOut = {ref(dq, qShape), ref(dk, kvShape),
                                    ref(dv, kvShape)};
  ASSERT_TRUE(
      runCpuKernel(KernelKind::AttentionBlockGrad, attrs, gradIn, gradOut, pool)
          .isOk());

  // 2. The emulated tensor-core kernels with the launch's grids and shared
  //    memory, outputs poisoned.
  FlashLaunch forward, backward;
  ASSERT_EQ(flashBlockLaunch(KernelKind::AttentionBlock, forwardIn, forwardOut,
                             attrs, forward),
            "");
  ASSERT_EQ(flashBlockLaunch(KernelKind::AttentionBlockGrad, gradIn, gradOut,
                             attrs, backward),
            "");
  EXPECT_TRUE(forward.tensorCores && backward.tensorCores);
  ASSERT_TRUE(forward.stridesAligned16 && backward.stridesAligned16);
  // The tensor-core grids and shared memory of the default tiles (as
  // flashBlockLaunch fills them where the tensor-core kernels apply).
  flashTensorCoreLaunch(flashTcTileSizes(c.headDim), true, qShape, kvShape,
                        forward);
  flashTensorCoreLaunch(flashTcTileSizes(c.headDim), false, qShape, kvShape,
                        backward);
#ifdef LLMC_FLASH_EMULATION_D64_TILES
  // cuda-flash-emulation-tiles: the D = 64 kernels' other sizes.
  if (c.headDim == 64) {
    FlashTcTileSizes tiles = {
        LLMC_FLASH_TC_D64_FORWARD_ROW_BLOCKS, LLMC_FLASH_TC_D64_FORWARD_KEYS,
        LLMC_FLASH_TC_D64_ROWS_ROW_BLOCKS,    LLMC_FLASH_TC_D64_ROWS_KEYS,
        LLMC_FLASH_TC_D64_KEYS_ROW_BLOCKS,    LLMC_FLASH_TC_D64_KEYS_QUERIES};
    flashTensorCoreLaunch(tiles, true, qShape, kvShape, forward);
    flashTensorCoreLaunch(tiles, false, qShape, kvShape, backward);
  }
#endif
  FlashLayout layout;
  std::memcpy(&layout, &forward.layout, sizeof layout);
  const Bf16 poison{0x7f7f};
  std::vector<Bf16> eOut(out.size(), poison), eDq(dq.size(), poison),
      eDk(dk.size(), poison), eDv(dv.size(), poison);
  std::vector<float> eLse(lse.size(), NAN), scratchLse(lse.size(), NAN),
      delta(lse.size(), NAN);
  bool wide = c.headDim == 128;
  BlockForward forwardKernel = wide ? llmc_flash_block_tc_forward_bf16_d128
                                    : llmc_flash_block_tc_forward_bf16_d64;
  BlockRows rowsKernel = wide ? llmc_flash_block_tc_grad_rows_bf16_d128
                              : llmc_flash_block_tc_grad_rows_bf16_d64;
  BlockKeys keysKernel = wide ? llmc_flash_block_tc_grad_keys_bf16_d128
                              : llmc_flash_block_tc_grad_keys_bf16_d64;
  runGrid(forward.tensorCoreQueryBlocks, forward.tensorCoreForwardShared, [&] {
    forwardKernel(q.data(), k.data(), v.data(), eOut.data(), eLse.data(),
                  qpos.data(), kpos.data(), forward.heads, forward.kvHeads,
                  forward.seq, forward.kvSeq, forward.scale, layout);
  });
  runGrid(backward.tensorCoreQueryBlocks, backward.tensorCoreRowsShared, [&] {
    rowsKernel(q.data(), k.data(), v.data(), out.data(), dout.data(),
               globalLse.data(), eDq.data(), scratchLse.data(), delta.data(),
               qpos.data(), kpos.data(), backward.heads, backward.kvHeads,
               backward.seq, backward.kvSeq, backward.scale, layout);
  });
  runGrid(backward.tensorCoreKeyBlocks, backward.tensorCoreKeysShared, [&] {
    keysKernel(q.data(), k.data(), v.data(), dout.data(), globalLse.data(),
               delta.data(), eDk.data(), eDv.data(), qpos.data(), kpos.data(),
               backward.heads, backward.kvHeads, backward.seq, backward.kvSeq,
               backward.scale, layout);
  });
  compare("attention_block out " + name, eOut, out);
  int lseFailures = 0;
  for (size_t i = 0; i < lse.size(); ++i) {
    bool ok = std::isinf(lse[i])
                  ? eLse[i] == lse[i]
                  : std::fabs(double(eLse[i]) - lse[i]) <=
                        1e-4 * std::max(1.0, std::fabs(double(lse[i])));
    if (!ok && ++lseFailures <= 5)
      ADD_FAILURE() << "lse row " << i << ": emulated " << eLse[i] << ", cpu "
                    << lse[i];
  }
  EXPECT_EQ(lseFailures, 0);
  compare("attention_block_grad dq " + name, eDq, dq);
  compare("attention_block_grad dk " + name, eDk, dk);
  compare("attention_block_grad dv " + name, eDv, dv);
}

// The tensor-core block kernels (POSITIONS): the zigzag blocks of cp = 2
// over 256 tokens (chunks of 64: whole tiles skipped, the other rank's
// block half visible with rows that see no key) and of cp = 4 over 128
// (chunks of 16: tiles masked inside), grouped queries, D = 64 and 128;
// positions out of order with S != T and rows that see nothing (the
// backward's global lse finite there, and once -inf); a fully masked
// block; one where every key is visible (no per-element mask); one where
// a single row sees two keys. About 4 s here.
TEST(FlashTensorCoreEmulation, BlockPositionMasksMatchTheCpu) {
  ThreadPool pool;
  for (int64_t headDim : {64, 128}) {
    runBlockCase({1, 2, 1, 128, 128, headDim, zigzag(256, 2, 0),
                  zigzag(256, 2, 0), "cp2 rank 0, own block"},
                 pool);
    runBlockCase({1, 2, 1, 128, 128, headDim, zigzag(256, 2, 0),
                  zigzag(256, 2, 1), "cp2 rank 0, block of rank 1"},
                 pool);
    runBlockCase({1, 4, 2, 32, 32, headDim, zigzag(128, 4, 1),
                  zigzag(128, 4, 3), "cp4 rank 1, block of rank 3"},
                 pool);
  }
  // Out of order, S != T, rows 0..9 below every key.
  std::vector<int32_t> queries, keys;
  for (int32_t i = 0; i < 100; ++i)
    queries.push_back((i * 37) % 100);
  for (int32_t i = 0; i < 70; ++i)
    keys.push_back(10 + (i * 11) % 70);
  runBlockCase({1, 2, 1, 100, 70, 64, queries, keys, "shuffled positions"},
               pool);
  runBlockCase({1, 2, 1, 100, 70, 128, queries, keys,
                "shuffled positions, -inf global lse", true},
               pool);
  // Every key after every query; every key before every query.
  std::vector<int32_t> early(64), late(64);
  for (int32_t i = 0; i < 64; ++i) {
    early[i] = i;
    late[i] = 100 + i;
  }
  runBlockCase({1, 2, 2, 64, 64, 64, early, late, "fully masked"}, pool);
  runBlockCase({1, 2, 2, 64, 64, 128, early, late, "fully masked, -inf lse",
                true},
               pool);
  runBlockCase({1, 2, 1, 64, 64, 64, late, early, "fully visible"}, pool);
  // Keys 0 and 1 at position 63, the others after it: row 63 alone sees
  // two keys (a softmax over one key would make every gradient 0), a key
  // tile's smallest position equal to a row tile's largest (the skipping
  // tests are strict).
  std::vector<int32_t> touching(64);
  for (int32_t i = 0; i < 64; ++i)
    touching[i] = i < 2 ? 63 : 62 + i;
  for (int64_t headDim : {64, 128})
    runBlockCase({1, 2, 1, 64, 64, headDim, early, touching, "one row sees"},
                 pool);
}

} // namespace
} // namespace llmc::rt::cuda::emulated
