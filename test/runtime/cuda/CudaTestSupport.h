//===- CudaTestSupport.h - what the GPU tests share -------------*- C++ -*-===//
//
// Header-only support of the GoogleTest files in test/runtime/cuda that need
// a GPU (cuda-kernel-tests, cuda-session-tests, cuda-nccl-tests):
// ASSERT_OK, the GpuTest fixture that skips without a device, binaryDir(),
// the event timing of launches, DeviceTensor (a tensor's host bytes and its
// device copy) and the element helpers by dtype. Only the CUDA runtime and
// llmc's runtime: no MLIR.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_TEST_RUNTIME_CUDA_CUDATESTSUPPORT_H
#define LLMC_TEST_RUNTIME_CUDA_CUDATESTSUPPORT_H

#include "runtime/DType.h"
#include "runtime/Executable.h"
#include "runtime/Kernel.h"
#include "runtime/Status.h"
#include "runtime/cpu/KernelImpl.h"
#include "runtime/cuda/libs/CudaModule.h"
#include "codegen/cuda/DeviceUnits.h"
#include "codegen/cuda/LaunchSelected.h"
#include "codegen/cuda/PlanKernels.h"
#include "runtime/cuda/kernels/DeviceKernels.h"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

/// Fails the test (and returns from the function) unless `expr`, an
/// llmc::rt::Status, is ok; the message is the status.
#define ASSERT_OK(expr)                                                        \
  do {                                                                         \
    ::llmc::rt::Status status_ = (expr);                                       \
    ASSERT_TRUE(status_.isOk()) << status_.toString();                         \
  } while (0)

namespace llmc::rt::cuda::testing {

//===----------------------------------------------------------------------===//
// Programs built by hand
//===----------------------------------------------------------------------===//

/// A one-rank program whose inputs are arguments and whose results are
/// outputs, laid out one after another.
struct HandProgram {
  Executable exe;
  uint64_t next = 0;
  HandProgram() { exe.ranks.resize(1); }
  RankProgram &rank() { return exe.ranks[0]; }

  /// `misalign` bytes past a 64-byte boundary.
  int32_t value(DType dtype, Shape shape, uint64_t misalign = 0) {
    ValueInfo info{dtype, std::move(shape), (next + 63) / 64 * 64 + misalign};
    next = info.offset + info.bytes();
    rank().arenaBytes = (next + 63) / 64 * 64;
    rank().values.push_back(info);
    return static_cast<int32_t>(rank().values.size() - 1);
  }
  int32_t input(DType dtype, Shape shape, uint64_t misalign = 0) {
    int32_t slot = value(dtype, std::move(shape), misalign);
    exe.arguments.push_back({"in" + std::to_string(slot),
                             ArgumentRole::Input, slot, {}});
    return slot;
  }
  int32_t output(DType dtype, Shape shape) {
    int32_t slot = value(dtype, std::move(shape));
    exe.outputs.push_back({"out" + std::to_string(slot), slot});
    return slot;
  }
  /// A Kernel command (its origin "command<index>").
  void command(KernelKind kind, std::vector<int32_t> inputs,
               std::vector<int32_t> outputs, std::vector<int64_t> ints = {}) {
    Command c;
    c.kind = CommandKind::Kernel;
    c.kernel = kind;
    c.inputs = std::move(inputs);
    c.outputs = std::move(outputs);
    c.attrs.ints = std::move(ints);
    c.origin = "command" + std::to_string(rank().commands.size());
    rank().commands.push_back(std::move(c));
  }
  /// A Collective command over the group [0]: `reduce` 0 sums, 1 takes the
  /// max (Executable.h's attrs [collective, reduce, peer, tag, n, ranks]).
  void collective(CollectiveKind kind, std::vector<int32_t> inputs,
                  std::vector<int32_t> outputs, int reduce = 0) {
    command(KernelKind::Count, std::move(inputs), std::move(outputs),
            {static_cast<int64_t>(kind), reduce, -1, 0, 1, 0});
    rank().commands.back().kind = CommandKind::Collective;
  }
};

//===----------------------------------------------------------------------===//
// The device, and fixtures that skip without one
//===----------------------------------------------------------------------===//

/// True when cudaGetDeviceCount finds a device. Otherwise clears the sticky
/// error and sets `why` to the skip message, "no CUDA device
/// (cudaGetDeviceCount: <0 devices or the error>); <what> need a GPU".
inline bool haveDevice(const std::string &what, std::string &why) {
  int count = 0;
  cudaError_t error = cudaGetDeviceCount(&count);
  if (error == cudaSuccess && count > 0)
    return true;
  (void)cudaGetLastError();
  why = std::string("no CUDA device (cudaGetDeviceCount: ") +
        (error == cudaSuccess ? "0 devices" : cudaGetErrorString(error)) +
        "); " + what + " need a GPU";
  return false;
}

/// Whether GpuTest::SetUp makes device 0 current. Tests that only create
/// CudaSessions leave it to them (a session selects its own device).
enum class SelectDevice { Zero, Leave };

/// A fixture whose tests skip, saying why, without a CUDA device. `what`
/// names them in the message ("the CUDA kernel tests"). A derived SetUp
/// calls GpuTest::SetUp() first and returns when stopped().
class GpuTest : public ::testing::Test {
protected:
  explicit GpuTest(std::string what, SelectDevice select = SelectDevice::Zero)
      : what_(std::move(what)), select_(select) {}

  void SetUp() override {
    std::string why;
    if (!haveDevice(what_, why))
      GTEST_SKIP() << why;
    if (select_ == SelectDevice::Zero) {
      ASSERT_EQ(cudaSetDevice(0), cudaSuccess);
    }
  }

  /// True when GpuTest::SetUp skipped the test or failed: the derived
  /// SetUp must not go on.
  static bool stopped() { return IsSkipped() || HasFatalFailure(); }

private:
  std::string what_;
  SelectDevice select_;
};

/// A GpuTest whose suite shares one CudaKernels (`kernels_`), created once
/// for the suite so that its NVRTC units compile once; each test fails if
/// the creation did.
class SharedKernelsTest : public GpuTest {
protected:
  explicit SharedKernelsTest(std::string what)
      : GpuTest(std::move(what), SelectDevice::Leave) {}

  static void SetUpTestSuite() {
    std::string why;
    if (!haveDevice("", why))
      return;
    (void)cudaSetDevice(0);
    Status status = createHandWrittenKernels(kernels_);
    if (!status)
      ADD_FAILURE() << status.toString();
  }
  static void TearDownTestSuite() { kernels_.reset(); }
  void SetUp() override {
    GpuTest::SetUp();
    if (stopped())
      return;
    ASSERT_TRUE(kernels_) << "CudaKernels::create failed";
  }

  static inline std::unique_ptr<CudaKernels> kernels_;
};

/// The folder of the running test binary, where the build puts the .llmcx
/// programs the tests read; "." when /proc/self/exe cannot be read.
inline std::string binaryDir() {
  char path[4096];
  ssize_t length = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (length <= 0)
    return ".";
  path[length] = 0;
  std::string text(path);
  return text.substr(0, text.rfind('/'));
}

//===----------------------------------------------------------------------===//
// Timing
//===----------------------------------------------------------------------===//

/// The milliseconds per call of `calls` calls of `launch` (each enqueues
/// its work on the default stream and returns its status) back to back
/// between two CUDA events: the events' time divided by `calls` in f32.
/// The first failing call or CUDA call ends it with that status.
inline Status launchMs(const std::function<Status()> &launch, int calls,
                       double &ms) {
  struct Events {
    cudaEvent_t start = nullptr, stop = nullptr;
    ~Events() {
      if (start)
        (void)cudaEventDestroy(start);
      if (stop)
        (void)cudaEventDestroy(stop);
    }
  } events;
  LLMC_CUDA_CHECK(cudaEventCreate(&events.start), "cudaEventCreate");
  LLMC_CUDA_CHECK(cudaEventCreate(&events.stop), "cudaEventCreate");
  LLMC_CUDA_CHECK(cudaEventRecord(events.start, nullptr), "cudaEventRecord");
  for (int i = 0; i < calls; ++i)
    LLMC_RETURN_IF_ERROR(launch());
  LLMC_CUDA_CHECK(cudaEventRecord(events.stop, nullptr), "cudaEventRecord");
  LLMC_CUDA_CHECK(cudaEventSynchronize(events.stop), "cudaEventSynchronize");
  float elapsed = 0.0f;
  LLMC_CUDA_CHECK(cudaEventElapsedTime(&elapsed, events.start, events.stop),
                  "cudaEventElapsedTime");
  ms = elapsed / calls;
  return Status::ok();
}

/// The median of `runs` times of one call of `launch` (launchMs), the
/// first `dropped` (warm-ups: the first compile, cold caches) left out.
inline Status medianLaunchMs(const std::function<Status()> &launch, int runs,
                             int dropped, double &ms) {
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    double elapsed = 0.0;
    LLMC_RETURN_IF_ERROR(launchMs(launch, 1, elapsed));
    if (i >= dropped)
      times.push_back(elapsed);
  }
  std::sort(times.begin(), times.end());
  ms = times[times.size() / 2];
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// bf16 units
//===----------------------------------------------------------------------===//

/// One bf16 ulp at `x` (2^(exponent - 7)); at zero, the smallest bf16
/// subnormal 2^-133.
inline double bf16Ulp(double x) {
  return x == 0 ? 0x1p-133 : std::ldexp(1.0, std::ilogb(x) - 7);
}

/// One f16 ulp at `x` (2^(exponent - 10)), at least the subnormal step
/// 2^-24.
inline double f16Ulp(double x) {
  return x == 0 ? 0x1p-24 : std::max(0x1p-24, std::ldexp(1.0, std::ilogb(x) - 10));
}

/// bf16Ulp or f16Ulp by `dtype`; 0 for other types.
inline double halfUlp(DType dtype, double x) {
  return dtype == DType::BF16  ? bf16Ulp(x)
         : dtype == DType::F16 ? f16Ulp(x)
                               : 0.0;
}

//===----------------------------------------------------------------------===//
// DeviceTensor
//===----------------------------------------------------------------------===//

/// A tensor's host bytes and, once allocated, its device copy. `device`
/// points `offset` elements past the start of `allocation` (cudaMalloc
/// aligns it to 256 bytes), so that a test can misalign an operand.
/// A test that only needs host values (a CPU reference) never allocates.
struct DeviceTensor {
  DType dtype;
  Shape shape;
  std::vector<uint8_t> host;
  void *allocation = nullptr;
  void *device = nullptr;
  size_t allocatedBytes = 0;

  DeviceTensor(DType dtype, Shape shape)
      : dtype(dtype), shape(std::move(shape)),
        host(static_cast<size_t>(numElements(this->shape)) * dtypeSize(dtype)) {
  }
  ~DeviceTensor() { release(); }
  DeviceTensor(const DeviceTensor &) = delete;
  DeviceTensor &operator=(const DeviceTensor &) = delete;

  int64_t count() const { return numElements(shape); }
  size_t bytes() const { return host.size(); }

  /// Allocates bytes() + `padding` on the device (room for `offset` and
  /// for what a test poisons past the end) and points `device` `offset`
  /// elements into it. An earlier allocation is freed.
  Status allocate(int64_t offset = 0, size_t padding = 64) {
    release();
    LLMC_CUDA_CHECK(cudaMalloc(&allocation, bytes() + padding), "cudaMalloc");
    allocatedBytes = bytes() + padding;
    device = static_cast<uint8_t *>(allocation) + offset * dtypeSize(dtype);
    return Status::ok();
  }
  /// Copies the host bytes to `device`; allocates exactly bytes() first
  /// when nothing is allocated.
  Status upload() {
    if (!allocation)
      LLMC_RETURN_IF_ERROR(allocate(0, 0));
    LLMC_CUDA_CHECK(
        cudaMemcpy(device, host.data(), bytes(), cudaMemcpyHostToDevice),
        "cudaMemcpy to device");
    return Status::ok();
  }
  /// Waits for the device, then copies the device bytes to the host.
  Status download() {
    LLMC_CUDA_CHECK(cudaDeviceSynchronize(), "the work before a download");
    LLMC_CUDA_CHECK(
        cudaMemcpy(host.data(), device, bytes(), cudaMemcpyDeviceToHost),
        "cudaMemcpy to host");
    return Status::ok();
  }
  /// Sets every device byte of the tensor to `byte`, so that an element a
  /// kernel never writes shows.
  Status poison(uint8_t byte = 0x7f) {
    LLMC_CUDA_CHECK(cudaMemset(device, byte, bytes()), "cudaMemset");
    return Status::ok();
  }

  /// Host element `i` as a double (the CPU kernels' loadFloat: exact for
  /// every float dtype, integers by value, i1 as 0 or 1).
  double get(int64_t i) const {
    return loadFloat(TensorRef{const_cast<uint8_t *>(host.data()), dtype, {}},
                     i);
  }
  /// Stores host element `i` as the CPU kernels' storeFloat does (rounded
  /// through f32 to bf16/f16, integers truncated, i1 as value != 0).
  void set(int64_t i, double value) {
    storeFloat(TensorRef{host.data(), dtype, {}}, i, value);
  }
  /// Every host element drawn in order from U(low, high) in f32, then
  /// stored (bf16: rounded).
  template <class Random>
  void fillUniform(Random &random, float low, float high) {
    std::uniform_real_distribution<float> draw(low, high);
    for (int64_t i = 0; i < count(); ++i)
      set(i, draw(random));
  }

  TensorRef hostRef() { return {host.data(), dtype, shape}; }
  TensorRef deviceRef() const { return {device, dtype, shape}; }

private:
  void release() {
    if (allocation)
      (void)cudaFree(allocation);
    allocation = device = nullptr;
    allocatedBytes = 0;
  }
};

//===----------------------------------------------------------------------===//
// Timing
//===----------------------------------------------------------------------===//

/// The milliseconds per launch of `kind` on the default stream: 3
/// warm-ups, then the median of 7 runs of 20 back-to-back launches (the
/// host's selection of each launch overlaps the kernels before it, as a
/// session's graph has no host work between kernels).
inline void msPerLaunch(CudaKernels &kernels, KernelKind kind,
                        const KernelAttrs &attrs,
                        const std::vector<TensorRef> &inputs,
                        const std::vector<TensorRef> &outputs, double &ms) {
  ASSERT_OK(prepareSelected(kernels, kind, attrs, inputs, outputs));
  for (int i = 0; i < 3; ++i)
    ASSERT_OK(launchSelected(kernels, kind, attrs, inputs, outputs, nullptr));
  cudaEvent_t start, stop;
  ASSERT_EQ(cudaEventCreate(&start), cudaSuccess);
  ASSERT_EQ(cudaEventCreate(&stop), cudaSuccess);
  std::vector<float> times;
  for (int run = 0; run < 7; ++run) {
    ASSERT_EQ(cudaEventRecord(start, nullptr), cudaSuccess);
    for (int i = 0; i < 20; ++i)
      ASSERT_OK(launchSelected(kernels, kind, attrs, inputs, outputs, nullptr));
    ASSERT_EQ(cudaEventRecord(stop, nullptr), cudaSuccess);
    ASSERT_EQ(cudaEventSynchronize(stop), cudaSuccess);
    float elapsed = 0.0f;
    ASSERT_EQ(cudaEventElapsedTime(&elapsed, start, stop), cudaSuccess);
    times.push_back(elapsed / 20);
  }
  (void)cudaEventDestroy(start);
  (void)cudaEventDestroy(stop);
  std::sort(times.begin(), times.end());
  ms = times[times.size() / 2];
}

//===----------------------------------------------------------------------===//
// Comparisons
//===----------------------------------------------------------------------===//

/// What compareToLargest found.
struct CompareResult {
  int64_t failures = 0; ///< elements beyond the bound
  int64_t inexact = 0;  ///< elements not bitwise equal
  double worst = 0.0;   ///< the largest |got - want| / `largest`
  double largest = 0.0; ///< the largest |want|
};

/// Compares the host values of `got` with those of `want` (same dtype and
/// count), element by element, against `relative` times want's largest
/// magnitude, plus one bf16 ulp of a nonzero element for bf16 (the two
/// sides' roundings of nearby values may land on neighbours): for results
/// whose elements cancel, where an element-wise relative bound means
/// nothing near zero. Reports the first 5 elements beyond the bound,
/// EXPECTs none; the caller prints the summary.
inline CompareResult compareToLargest(const std::string &name,
                                      const DeviceTensor &got,
                                      const DeviceTensor &want,
                                      double relative) {
  CompareResult result;
  for (int64_t i = 0; i < want.count(); ++i)
    result.largest = std::max(result.largest, std::fabs(want.get(i)));
  size_t width = dtypeSize(got.dtype);
  for (int64_t i = 0; i < got.count(); ++i) {
    double actual = got.get(i), expected = want.get(i);
    if (std::memcmp(got.host.data() + i * width, want.host.data() + i * width,
                    width) != 0)
      ++result.inexact;
    double bound = relative * result.largest;
    if ((got.dtype == DType::BF16 || got.dtype == DType::F16) &&
        expected != 0.0)
      bound += halfUlp(got.dtype, expected);
    double error = std::fabs(actual - expected);
    result.worst =
        std::max(result.worst, error / std::max(result.largest, 1e-30));
    if (!(error <= bound) && ++result.failures <= 5)
      ADD_FAILURE() << name << " element " << i << ": gpu " << actual
                    << ", cpu " << expected << ", bound " << bound;
  }
  EXPECT_EQ(result.failures, 0) << name;
  return result;
}

} // namespace llmc::rt::cuda::testing

#endif // LLMC_TEST_RUNTIME_CUDA_CUDATESTSUPPORT_H
