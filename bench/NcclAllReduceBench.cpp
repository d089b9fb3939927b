//===- NcclAllReduceBench.cpp - NCCL all-reduce bus bandwidth --------------===//
//
// `nccl-allreduce-bench [--gpus N] [--dtype f32|bf16] [--iters K]`: one
// process drives N GPUs (ncclCommInitAll) and times ncclAllReduce (sum) of
// sizes from 1 MiB to 1 GiB, K timed calls after 5 warm-up calls each.
// Prints one JSON line per size:
//
//   {"bytes": S, "gpus": N, "dtype": "f32", "us": t,
//    "algbw_gbs": S / t, "busbw_gbs": S / t * 2 (N - 1) / N}
//
// busbw is what a ring all-reduce moves over each link (the convention of
// nccl-tests): comparable across N, and what the ring closed form of
// ir/Communication.h divides by to predict a collective's time.
// bench/scaling.sh reads it. Needs GPUs; no MLIR.
//
//===----------------------------------------------------------------------===//
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

bool check(cudaError_t status, const char *what) {
  if (status == cudaSuccess)
    return true;
  std::fprintf(stderr, "nccl-allreduce-bench: %s: %s\n", what,
               cudaGetErrorString(status));
  return false;
}

bool check(ncclResult_t status, const char *what) {
  if (status == ncclSuccess)
    return true;
  std::fprintf(stderr, "nccl-allreduce-bench: %s: %s\n", what,
               ncclGetErrorString(status));
  return false;
}

} // namespace

int main(int argc, char **argv) {
  int gpus = 0, iters = 20;
  std::string dtype = "f32";
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--gpus" && i + 1 < argc)
      gpus = std::atoi(argv[++i]);
    else if (arg == "--iters" && i + 1 < argc)
      iters = std::atoi(argv[++i]);
    else if (arg == "--dtype" && i + 1 < argc)
      dtype = argv[++i];
    else {
      std::fprintf(stderr,
                   "usage: %s [--gpus N] [--dtype f32|bf16] [--iters K]\n",
                   argv[0]);
      return 2;
    }
  }
  if (dtype != "f32" && dtype != "bf16") {
    std::fprintf(stderr, "nccl-allreduce-bench: --dtype is f32 or bf16, not "
                         "'%s'\n", dtype.c_str());
    return 2;
  }
  int visible = 0;
  if (!check(cudaGetDeviceCount(&visible), "cudaGetDeviceCount"))
    return 1;
  if (gpus <= 0)
    gpus = visible;
  if (gpus > visible || iters < 1) {
    std::fprintf(stderr,
                 "nccl-allreduce-bench: %d GPUs asked for, %d visible; "
                 "iters %d\n", gpus, visible, iters);
    return 1;
  }
  ncclDataType_t type = dtype == "f32" ? ncclFloat32 : ncclBfloat16;
  size_t element = dtype == "f32" ? 4 : 2;
  const size_t maxBytes = size_t(1) << 30;

  std::vector<ncclComm_t> comms(gpus);
  std::vector<int> devices(gpus);
  for (int g = 0; g < gpus; ++g)
    devices[g] = g;
  if (!check(ncclCommInitAll(comms.data(), gpus, devices.data()),
             "ncclCommInitAll"))
    return 1;
  std::vector<void *> buffers(gpus);
  std::vector<cudaStream_t> streams(gpus);
  for (int g = 0; g < gpus; ++g) {
    if (!check(cudaSetDevice(g), "cudaSetDevice") ||
        !check(cudaMalloc(&buffers[g], maxBytes), "cudaMalloc") ||
        !check(cudaMemset(buffers[g], 0, maxBytes), "cudaMemset") ||
        !check(cudaStreamCreateWithFlags(&streams[g], cudaStreamNonBlocking),
               "cudaStreamCreate"))
      return 1;
  }
  auto allReduce = [&](size_t bytes) {
    if (!check(ncclGroupStart(), "ncclGroupStart"))
      return false;
    for (int g = 0; g < gpus; ++g)
      if (!check(ncclAllReduce(buffers[g], buffers[g], bytes / element, type,
                               ncclSum, comms[g], streams[g]),
                 "ncclAllReduce"))
        return false;
    return check(ncclGroupEnd(), "ncclGroupEnd");
  };
  auto synchronize = [&] {
    for (int g = 0; g < gpus; ++g) {
      cudaSetDevice(g);
      if (!check(cudaStreamSynchronize(streams[g]), "cudaStreamSynchronize"))
        return false;
    }
    return true;
  };
  for (size_t bytes = size_t(1) << 20; bytes <= maxBytes; bytes *= 4) {
    for (int i = 0; i < 5; ++i)
      if (!allReduce(bytes))
        return 1;
    if (!synchronize())
      return 1;
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < iters; ++i)
      if (!allReduce(bytes))
        return 1;
    if (!synchronize())
      return 1;
    double us = std::chrono::duration<double, std::micro>(
                    std::chrono::steady_clock::now() - start)
                    .count() /
                iters;
    double algbw = static_cast<double>(bytes) / us / 1e3; // GB/s
    double busbw = algbw * 2.0 * (gpus - 1) / gpus;
    std::printf("{\"bytes\": %zu, \"gpus\": %d, \"dtype\": \"%s\", "
                "\"us\": %.1f, \"algbw_gbs\": %.2f, \"busbw_gbs\": %.2f}\n",
                bytes, gpus, dtype.c_str(), us, algbw, busbw);
    std::fflush(stdout);
  }
  for (int g = 0; g < gpus; ++g) {
    cudaSetDevice(g);
    cudaFree(buffers[g]);
    cudaStreamDestroy(streams[g]);
    ncclCommDestroy(comms[g]);
  }
  return 0;
}
