//===- CudaTrainSupport.h - a short training run on the CPU or the GPU ----===//
//
// What the precision session tests (CudaFp16SessionTest, CudaFp8Test) share:
// `steps` steps of an artifact through rt::train on "cpu" or "cuda", on the
// built-in corpus, with no sampling, no checkpoints and no log, so that the
// two devices start from the same state and see the same data.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_TEST_RUNTIME_CUDA_CUDATRAINSUPPORT_H
#define LLMC_TEST_RUNTIME_CUDA_CUDATRAINSUPPORT_H

#include "runtime/cuda/session/CudaSession.h"
#include "runtime/train/Trainer.h"

#include <string>

namespace llmc::rt::cuda {

inline Status trainShortRun(const Executable &exe, const std::string &device,
                            int steps, TrainReport &report) {
  TrainOptions options;
  LLMC_RETURN_IF_ERROR(readTrainSettings(exe.metadata, options.settings));
  options.settings.devices = device;
  options.settings.trainData.clear(); // the built-in corpus
  options.settings.sampleTokens = 0;
  options.settings.checkpointDir.clear();
  options.stopAfterStep = steps;
  options.threads = 4;
  options.log = nullptr;
  options.cudaSession = createCudaDeviceSession;
  options.cudaDeviceCount = cudaDeviceCount;
  return train(exe, options, report);
}

} // namespace llmc::rt::cuda

#endif // LLMC_TEST_RUNTIME_CUDA_CUDATRAINSUPPORT_H
