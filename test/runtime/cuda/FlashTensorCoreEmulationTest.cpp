//===- FlashTensorCoreEmulationTest.cpp - tensor-core flash attention on the CPU -===//
//
// Runs the tensor-core flash attention kernels (FlashAttentionTensorCoreSource
// .cpp) on the CPU, without a GPU, and compares them with the CPU reference
// (runCpuKernel), so that their indexing, tiling, masking, cp.async double
// buffering and causal skipping are checked on every build.
//
// The kernel source is compiled as C++ (flash_tc_for_cpu.py drops the
// functions made of PTX); each CUDA thread of a block is a fiber (ucontext)
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
#include "runtime/cuda/KernelSelection.h"

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

#define __device__
#define __forceinline__
#define __global__
#define __launch_bounds__(...)
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
};
Lane lanes[kThreads / 32][32];

int laneId() { return threadIdx.x % 32; }
int warpId() { return threadIdx.x / 32; }
void warpSync() { warpBarriers[warpId()]->arriveAndWait(); }
void __syncthreads() { blockBarrier->arriveAndWait(); }

struct Bf16 {
  uint16_t bits;
};
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
float loadValue(Bf16 value) { return bf16Value(value.bits); }
float __uint_as_float(unsigned word) {
  float value;
  std::memcpy(&value, &word, 4);
  return value;
}
float flashNegativeInfinity() { return -INFINITY; }
long long kvHeadOf(long long head, int heads, int kvHeads) {
  long long b = head / heads;
  int h = static_cast<int>(head % heads);
  return b * kvHeads + h / (heads / kvHeads);
}
long long min(long long a, long long b) { return a < b ? a : b; }

float __shfl_xor_sync(unsigned, float value, int mask) {
  lanes[warpId()][laneId()].value = value;
  warpSync();
  float result = lanes[warpId()][laneId() ^ mask].value;
  warpSync();
  return result;
}

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

#include "flash_tc_for_cpu.inc"
// The entries, as flashAttentionTensorCoreEntries(D) appends them to a unit.
LLMC_FLASH_TC_KERNELS(64)
LLMC_FLASH_TC_KERNELS(128)

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

void runCase(const Case &c, ThreadPool &pool) {
  std::string name = "B=" + std::to_string(c.batch) +
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

  // The CPU: out and the rows' log-sum-exp, then dq, dk, dv from that out.
  Shape rowShape = {batch, c.heads, c.seq};
  int64_t rowCount = batch * c.heads * c.seq;
  std::vector<Bf16> out(qCount), dq(qCount), dk(kvCount), dv(kvCount);
  std::vector<float> cpuLse(rowCount);
  ASSERT_TRUE(runCpuKernel(KernelKind::Attention, attrs,
                           {ref(q, qShape), ref(k, kvShape), ref(v, kvShape)},
                           {ref(out, qShape),
                            TensorRef{cpuLse.data(), DType::F32, rowShape}},
                           pool)
                  .isOk());
  ASSERT_TRUE(runCpuKernel(KernelKind::AttentionGrad, attrs,
                           {ref(q, qShape), ref(k, kvShape), ref(v, kvShape),
                            ref(out, qShape), ref(dout, qShape)},
                           {ref(dq, qShape), ref(dk, kvShape),
                            ref(dv, kvShape)},
                           pool)
                  .isOk());

  // The emulated kernels with the launch's grids and shared memory.
  FlashLaunch forward, backward;
  TensorRef qRef{nullptr, DType::BF16, qShape}, kvRef{nullptr, DType::BF16,
                                                      kvShape};
  ASSERT_EQ(flashLaunch({qRef, kvRef, kvRef}, attrs, forward), "");
  ASSERT_EQ(flashLaunch({qRef, kvRef, kvRef, qRef, qRef}, attrs, backward),
            "");
  ASSERT_TRUE(forward.tensorCores && backward.tensorCores);
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
  const Bf16 poison{0x7f7f};
  std::vector<Bf16> gpuOut(qCount, poison), gpuDq(qCount, poison),
      gpuDk(kvCount, poison), gpuDv(kvCount, poison);
  std::vector<float> gpuLse(rowCount, NAN), lse(rowCount, NAN),
      delta(rowCount, NAN);
  int heads = static_cast<int>(c.heads), kvHeads = static_cast<int>(c.kvHeads);
  long long seq = c.seq, kvSeq = c.kvSeq;
  int causal = c.causal ? 1 : 0;
  float scale = static_cast<float>(attrs.floats[0]);
  using Forward = void (*)(const Bf16 *, const Bf16 *, const Bf16 *, Bf16 *,
                           float *, int, int, long long, long long, int, float);
  using Rows = void (*)(const Bf16 *, const Bf16 *, const Bf16 *, const Bf16 *,
                        const Bf16 *, const float *, Bf16 *, float *, float *,
                        int, int, long long, long long, int, float);
  using Keys = void (*)(const Bf16 *, const Bf16 *, const Bf16 *, const Bf16 *,
                        const float *, const float *, Bf16 *, Bf16 *, int, int,
                        long long, long long, int, float);
  bool wide = c.headDim == 128;
  Forward forwardKernel = wide ? llmc_flash_attention_tc_forward_bf16_d128
                               : llmc_flash_attention_tc_forward_bf16_d64;
  Rows rowsKernel = wide ? llmc_flash_attention_tc_grad_rows_bf16_d128
                         : llmc_flash_attention_tc_grad_rows_bf16_d64;
  Keys keysKernel = wide ? llmc_flash_attention_tc_grad_keys_bf16_d128
                         : llmc_flash_attention_tc_grad_keys_bf16_d64;
  runGrid(forward.tensorCoreQueryBlocks, forward.tensorCoreForwardShared, [&] {
    forwardKernel(q.data(), k.data(), v.data(), gpuOut.data(), gpuLse.data(),
                  heads, kvHeads, seq, kvSeq, causal, scale);
  });
  compare("attention " + name, gpuOut, out);
  // The log-sum-exp: f32 sums of bf16 products against f64 ones, within
  // 1e-4 of max(1, |lse|) (scores here are at most a few units).
  int lseFailures = 0;
  for (int64_t i = 0; i < rowCount; ++i) {
    double bound = 1e-4 * std::max(1.0, std::fabs(double(cpuLse[i])));
    if (!(std::fabs(double(gpuLse[i]) - cpuLse[i]) <= bound) &&
        ++lseFailures <= 5)
      ADD_FAILURE() << "lse row " << i << ": emulated " << gpuLse[i]
                    << ", cpu " << cpuLse[i];
  }
  EXPECT_EQ(lseFailures, 0);

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
      rowsKernel(q.data(), k.data(), v.data(), out.data(), dout.data(),
                 forwardLse, gpuDq.data(), lse.data(), delta.data(), heads,
                 kvHeads, seq, kvSeq, causal, scale);
    });
    const float *keysLse = forwardLse ? forwardLse : lse.data();
    runGrid(backward.tensorCoreKeyBlocks, backward.tensorCoreKeysShared, [&] {
      keysKernel(q.data(), k.data(), v.data(), dout.data(), keysLse,
                 delta.data(), gpuDk.data(), gpuDv.data(), heads, kvHeads, seq,
                 kvSeq, causal, scale);
    });
    compare("attention_grad dq" + how + name, gpuDq, dq);
    compare("attention_grad dk" + how + name, gpuDk, dk);
    compare("attention_grad dv" + how + name, gpuDv, dv);
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
      runCase({1, 2, 1, seq, seq, 64, causal}, pool);
  runCase({1, 2, 1, 20, 100, 64, false}, pool);
  runCase({1, 2, 1, 130, 70, 64, false}, pool);
  runCase({2, 2, 2, 100, 100, 64, true}, pool);
  return;
#endif
  for (int64_t headDim : {64, 128})
    for (bool causal : {false, true})
      for (int64_t seq : {13, 64, 130})
        runCase({1, 2, 1, seq, seq, headDim, causal}, pool);
  for (int64_t headDim : {64, 128}) {
    runCase({1, 2, 1, 20, 100, headDim, false}, pool);
    runCase({1, 2, 1, 130, 70, headDim, false}, pool);
  }
  runCase({2, 2, 2, 100, 100, 64, true}, pool);
  runCase({2, 8, 2, 70, 70, 128, true}, pool);
}

} // namespace
} // namespace llmc::rt::cuda::emulated
