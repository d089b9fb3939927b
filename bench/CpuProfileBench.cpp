//===- CpuProfileBench.cpp - the figures of the cpu device profile --------===//
//
// Measures, through the CPU runtime's own code paths (runCpuKernel on a
// one-thread pool, CpuWorld collectives, runOnDevices), what the cost
// model's `cpu` profile in data/devices.toml needs (docs/planning.md,
// "CPU meshes"):
//   1. launch_us and hbm_gbs: the time of an f32 `Add` kernel over sizes
//      from 16 to 2^20 elements: the smallest's time, and the bandwidth at
//      2^18 (3 MB, about one rank's arena of the tiny models);
//   2. matmul_tflops.f32: OpenBLAS sgemm (1 thread) at the shapes of the
//      tiny models' GEMMs and larger, flops / (time - launch);
//   3. host_cores: R threads each running the same kernels, wall time
//      against one thread (the cores the virtual devices share);
//   4. the memory link class: CPU time per call of all-reduces of 8 ranks
//      (threads) in groups of 2, 4 and 8, all-gathers and send/recv pairs,
//      small and large, and a fit call latency + sent bytes / bandwidth;
//   5. the CPU time of starting the ranks' threads of one step.
// Every figure is the median of repeated timings. Run it on an idle host:
//   build/bin/llmc-bench-cpu
//
//===----------------------------------------------------------------------===//
#include "runtime/Mesh.h"
#include "runtime/cpu/Collectives.h"
#include "runtime/cpu/CpuKernels.h"
#include "runtime/cpu/ThreadPool.h"

#include <algorithm>
#include <cmath>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <time.h>

using namespace llmc::rt;
using Clock = std::chrono::steady_clock;

namespace {

enum class Timer { Wall, ThreadCpu, ProcessCpu };

double seconds(Timer timer) {
  if (timer == Timer::Wall)
    return std::chrono::duration<double>(Clock::now().time_since_epoch())
        .count();
  if (timer == Timer::ThreadCpu) {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto s = [](const timeval &v) {
    return static_cast<double>(v.tv_sec) + 1e-6 * static_cast<double>(v.tv_usec);
  };
  return s(usage.ru_utime) + s(usage.ru_stime);
}

/// Median seconds of `repeats` timings of `iterations` calls of `body`,
/// per call. CPU time where the host is shared: another process taking a
/// core slows the wall clock, not the work.
double timePerCall(const std::function<void()> &body, int iterations,
                   int repeats = 7, Timer timer = Timer::ThreadCpu) {
  std::vector<double> samples;
  body(); // warm caches and first-touch allocations
  for (int r = 0; r < repeats; ++r) {
    double begin = seconds(timer);
    for (int i = 0; i < iterations; ++i)
      body();
    samples.push_back((seconds(timer) - begin) / iterations);
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

void check(const Status &status) {
  if (!status) {
    std::fprintf(stderr, "llmc-bench-cpu: %s\n", status.message().c_str());
    std::exit(1);
  }
}

struct AddKernel {
  std::vector<float> a, b, c;
  std::vector<TensorRef> inputs, outputs;
  explicit AddKernel(int64_t n) : a(n, 1.0f), b(n, 2.0f), c(n) {
    inputs = {{a.data(), DType::F32, {n}}, {b.data(), DType::F32, {n}}};
    outputs = {{c.data(), DType::F32, {n}}};
  }
  void run(ThreadPool &pool) {
    check(runCpuKernel(KernelKind::Add, {}, inputs, outputs, pool));
  }
};

/// 1. The launch cost and the memory bandwidth of one device (thread).
void measureElementwise(double &launch, double &bandwidth) {
  ThreadPool pool(1);
  std::vector<double> bytes, seconds;
  std::printf("1. f32 Add on one thread (3 x 4 bytes per element):\n");
  for (int64_t n : {16, 256, 4096, 16384, 65536, 262144, 1048576}) {
    AddKernel add(n);
    double t = timePerCall([&] { add.run(pool); },
                           static_cast<int>(std::max<int64_t>(20, 4000000 / (n + 1000))));
    bytes.push_back(12.0 * static_cast<double>(n));
    seconds.push_back(t);
    std::printf("   %8lld elements: %9.3f us, %6.2f GB/s\n",
                static_cast<long long>(n), t * 1e6, 12.0 * n / t / 1e9);
  }
  // The fixed cost: the smallest Add. The bandwidth: 2^18 elements, 3 MB
  // read and written, about one rank's arena of the tiny models (smaller
  // sizes stay in L2 and run faster, larger ones slower).
  launch = seconds[0];
  bandwidth = bytes[5] / (seconds[5] - launch);
}

/// 2. sgemm through the Matmul kernel on one thread.
double measureMatmul(double launch) {
  ThreadPool pool(1);
  std::printf("2. f32 Matmul (OpenBLAS sgemm, 1 thread):\n");
  double mid = 0;
  struct Shape3 {
    int64_t m, k, n;
  };
  for (Shape3 s : {Shape3{64, 64, 64}, Shape3{64, 64, 192}, Shape3{64, 64, 256},
                   Shape3{128, 128, 344}, Shape3{256, 256, 256},
                   Shape3{1024, 1024, 1024}}) {
    std::vector<float> a(s.m * s.k, 0.5f), b(s.k * s.n, 0.25f), c(s.m * s.n);
    std::vector<TensorRef> in = {{a.data(), DType::F32, {s.m, s.k}},
                                 {b.data(), DType::F32, {s.k, s.n}}};
    std::vector<TensorRef> out = {{c.data(), DType::F32, {s.m, s.n}}};
    KernelAttrs attrs;
    attrs.ints = {0, 0};
    double flops = 2.0 * s.m * s.k * s.n;
    double t = timePerCall(
        [&] { check(runCpuKernel(KernelKind::Matmul, attrs, in, out, pool)); },
        static_cast<int>(std::max(3.0, 2e8 / flops)));
    double rate = flops / std::max(1e-9, t - launch);
    std::printf("   %4lld x %4lld x %4lld: %9.2f us, %6.1f GFLOP/s (after the "
                "launch cost)\n",
                static_cast<long long>(s.m), static_cast<long long>(s.k),
                static_cast<long long>(s.n), t * 1e6, rate / 1e9);
    if (s.m == 64 && s.n == 256)
      mid = rate;
  }
  return mid;
}

/// 3. R threads each running the same work: the cores they share.
void measureSharing() {
  std::printf("3. R threads, each 2000 Adds of 4096 elements and a 128 x "
              "128 x 344 matmul x 20 (wall time; 1 thread = 1.00):\n");
  auto work = [] {
    ThreadPool pool(1);
    AddKernel add(4096);
    std::vector<float> a(128 * 128, 0.5f), b(128 * 344, 0.25f),
        c(128 * 344);
    std::vector<TensorRef> in = {{a.data(), DType::F32, {128, 128}},
                                 {b.data(), DType::F32, {128, 344}}};
    std::vector<TensorRef> out = {{c.data(), DType::F32, {128, 344}}};
    KernelAttrs attrs;
    attrs.ints = {0, 0};
    for (int i = 0; i < 2000; ++i)
      add.run(pool);
    for (int i = 0; i < 20; ++i)
      check(runCpuKernel(KernelKind::Matmul, attrs, in, out, pool));
  };
  double one = 0;
  for (int r : {1, 2, 4, 8}) {
    double t = timePerCall(
        [&] {
          check(runOnDevices(r, [&](int) {
            work();
            return Status::ok();
          }));
        },
        1, 5, Timer::Wall);
    if (r == 1)
      one = t;
    std::printf("   R = %d: %7.2f ms, %.2f x one thread: %.2f cores\n", r,
                t * 1e3, t / one, r * one / t);
  }
}

/// 4. CPU seconds per call and rank of a collective on 8 ranks (threads),
/// all in groups of `n` consecutive ranks at once. kind: 0 all-reduce,
/// 1 all-gather, 2 send/recv pairs (even ranks send to the next odd one;
/// the pair's CPU time counted once, as the model costs a send).
double collectiveCpu(int kind, int n, int64_t elements, int calls) {
  CpuWorld world(8);
  int64_t outElements = kind == 1 ? elements * n : elements;
  std::vector<std::vector<float>> in(8, std::vector<float>(elements, 1.0f)),
      out(8, std::vector<float>(outElements));
  std::vector<DeviceGroup> groups(8);
  for (int r = 0; r < 8; ++r) {
    std::vector<int> ranks;
    for (int i = r / n * n; i < r / n * n + n; ++i)
      ranks.push_back(i);
    check(DeviceGroup::create(ranks, groups[r]));
  }
  double perRun = timePerCall(
      [&] {
        check(runOnDevices(8, [&](int r) {
          TensorRef input{in[r].data(), DType::F32, {elements}};
          TensorRef output{out[r].data(), DType::F32, {outElements}};
          for (int i = 0; i < calls; ++i) {
            Status s = Status::ok();
            if (kind == 0)
              s = world.allReduce(r, groups[r], ReduceOp::Sum, input, output);
            else if (kind == 1)
              s = world.allGather(r, groups[r], input, output);
            else if (r % 2 == 0)
              s = world.send(r, r + 1, i, input);
            else
              s = world.recv(r, r - 1, i, output);
            if (!s)
              return s;
          }
          return Status::ok();
        }));
      },
      1, 5, Timer::ProcessCpu);
  return perRun / calls / (kind == 2 ? 4 : 8);
}

void measureCollectives(double spawnCpu) {
  std::printf("4. collectives of 8 ranks (threads) in groups of n at once: "
              "CPU time per call and rank (a send/recv pair counted once):\n");
  struct Case {
    int kind, n;
    int64_t elements;
  };
  const char *names[] = {"all-reduce", "all-gather", "send/recv"};
  std::vector<double> steps, sent, cpu;
  for (Case c : {Case{0, 2, 256}, Case{0, 2, 65536}, Case{0, 4, 256},
                 Case{0, 4, 65536}, Case{0, 8, 256}, Case{0, 8, 65536},
                 Case{1, 8, 256}, Case{1, 8, 8192}, Case{2, 2, 256},
                 Case{2, 2, 65536}}) {
    int calls = c.elements > 1000 ? 50 : 500;
    double t = collectiveCpu(c.kind, c.n, c.elements, calls) -
               spawnCpu / (8.0 * calls);
    double bytes = 4.0 * static_cast<double>(c.elements);
    int s = c.kind == 0 ? 2 * (c.n - 1) : c.kind == 1 ? c.n - 1 : 1;
    // The model's sent bytes per rank (ir/Communication.h).
    double b = c.kind == 0   ? 2.0 * (c.n - 1) / c.n * bytes
               : c.kind == 1 ? (c.n - 1) * bytes
                             : bytes;
    std::printf("   %-10s n = %d, %6lld floats: %8.2f us (ring steps %2d, "
                "sent %8.0f bytes)\n",
                names[c.kind], c.n, static_cast<long long>(c.elements),
                t * 1e6, s, b);
    steps.push_back(s);
    sent.push_back(b);
    cpu.push_back(t);
  }
  // Least squares in relative error: t = a + bytes / beta.
  double s00 = 0, s01 = 0, s11 = 0, r0 = 0, r1 = 0;
  for (size_t i = 0; i < cpu.size(); ++i) {
    double w = 1.0 / (cpu[i] * cpu[i]);
    s00 += w;
    s01 += w * sent[i];
    s11 += w * sent[i] * sent[i];
    r0 += w * cpu[i];
    r1 += w * sent[i] * cpu[i];
  }
  double det = s00 * s11 - s01 * s01;
  double a = (r0 * s11 - r1 * s01) / det;
  double inverseBeta = (s00 * r1 - s01 * r0) / det;
  double worst = 0;
  for (size_t i = 0; i < cpu.size(); ++i)
    worst = std::max(worst,
                     std::abs(a + sent[i] * inverseBeta - cpu[i]) / cpu[i]);
  std::printf("   fit (relative least squares): %.2f us per call + sent bytes "
              "/ %.2f GB/s; worst relative error %.0f%%\n",
              a * 1e6, 1.0 / inverseBeta / 1e9, 100 * worst);
}

} // namespace

int main() {
  setBlasThreads(1);
  double launch = 0, bandwidth = 0;
  measureElementwise(launch, bandwidth);
  double matmul = measureMatmul(launch);
  measureSharing();
  double spawn = timePerCall(
      [] { check(runOnDevices(8, [](int) { return Status::ok(); })); }, 50, 7,
      Timer::ProcessCpu);
  std::printf("5. starting and joining 8 rank threads (runOnDevices): %.1f "
              "us of CPU time\n",
              spawn * 1e6);
  measureCollectives(spawn);
  std::printf("\nfor data/devices.toml [cpu]: launch_us = %.2f (16 "
              "elements), hbm_gbs = %.1f (2^18 elements), "
              "matmul_tflops.f32 = %.4f (64 x 64 x 256)\n",
              launch * 1e6, bandwidth / 1e9, matmul / 1e12);
  return 0;
}
