//===- FlashTcEmulation.h - tensor-core flash kernels on the CPU -*- C++ -*-==//
//
// The CPU emulation of the tensor-core flash kernels (attention/FlashTc.cuh)
// that FlashTensorCoreEmulationTest.cpp (attention) and
// FlashBlockTcEmulationTest.cpp (ring attention's blocks) run against the
// CPU kernels: the CUDA environment of one block, the kernels' files,
// runGrid, and the bf16 helpers. Each test file includes it
// once (everything is in an anonymous namespace).
//
// The kernel files are compiled as C++ (FlashTcPtx.cuh, the functions made
// of PTX, replaced by the emulations below); each CUDA thread of a block is
// a fiber (ucontext) of one OS thread, switched at every barrier, and the warp-wide
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
#ifndef LLMC_TEST_RUNTIME_CUDA_FLASHTCEMULATION_H
#define LLMC_TEST_RUNTIME_CUDA_FLASHTCEMULATION_H

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

#include "EmulatedBlock.h"
#define __trap() ADD_FAILURE() << "trap", std::abort()

constexpr size_t kSharedCapacity = 256 * 1024;
alignas(128) unsigned char llmcFlashTcShared[kSharedCapacity];
unsigned dynamicShared = 0;

/// What each lane shows its warp in a warp-wide instruction.
struct Lane {
  const void *row;
  unsigned a[4], b0, b1;
  float value;
  int integer;   // the position masks' int shuffles
  double wide;   // the prelude's warp sums of doubles (unused here)
};
Lane lanes[kThreads / 32][32];

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
// The entries (extern "C") are instantiated by the test files, each the
// ones it runs.

/// Runs `kernel` for every block of a grid, one block after the other, with
/// `shared` bytes of poisoned dynamic shared memory; a block that ends
/// with cp.async copies not waited for fails the test.
void runGrid(unsigned blocks, unsigned shared,
             const std::function<void()> &kernel) {
  ASSERT_LE(shared, kSharedCapacity);
  dynamicShared = shared;
  runBlocks(
      blocks, kernel, 256 * 1024,
      [] { std::memset(llmcFlashTcShared, 0xcd, sizeof llmcFlashTcShared); },
      [] {
        bool copiesLeft = false;
        for (unsigned t = 0; t < kThreads; ++t) {
          copiesLeft = copiesLeft || !pendingCopies[t].empty();
          pendingCopies[t].clear();
        }
        EXPECT_FALSE(copiesLeft) << "block " << blockIdx.x
                                 << " ended with cp.async copies not waited for";
      });
}

// ---- Helpers of the comparisons ---------------------------------------------

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

} // namespace
} // namespace llmc::rt::cuda::emulated

#endif // LLMC_TEST_RUNTIME_CUDA_FLASHTCEMULATION_H
