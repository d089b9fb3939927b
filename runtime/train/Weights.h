//===- Weights.h - bind Hugging Face weights into a session -----*- C++ -*-===//
//
// The initial parameters of a run from a Hugging Face checkpoint (a folder,
// a safetensors file or a shard index): runtime/io/HfWeights.h finds each
// parameter's tensors, and this binds them, each converted to the
// parameter's type where it lives (DeviceSession::setArgumentConverting: on
// the GPU for a CUDA session, on the host's threads for the CPU). A
// tensor that is the whole parameter is bound straight from the file's
// memory map; stacked or split experts are assembled on the host one
// parameter at a time, so no second copy of the model is ever held.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_TRAIN_WEIGHTS_H
#define LLMC_RUNTIME_TRAIN_WEIGHTS_H

#include "runtime/DeviceSession.h"
#include "runtime/Executable.h"
#include "runtime/Status.h"

#include <cstdio>
#include <string>

namespace llmc::rt {

/// The artifact metadata keys of a model from a Hugging Face folder (written
/// by the llmc driver, read by the runtime).
constexpr const char *kHfWeightsKey = "hf.weights"; ///< the folder
constexpr const char *kHfStrictKey = "hf.strict";   ///< "true" / "false"

/// The checkpoint a run starts from: `given` (--weights) when not empty,
/// else the artifact's hf.weights, else "" (initializers). `strict` is the
/// artifact's hf.strict (true when absent).
std::string initialWeights(const Executable &exe, const std::string &given,
                           bool &strict);

struct WeightsReport {
  size_t parameters = 0; ///< bound
  size_t converted = 0;  ///< of another type than the file's
  size_t files = 0;
  double seconds = 0;
};

/// Binds every parameter argument of `session` from the checkpoint at
/// `path` (WeightFiles::open's forms). Fails, naming the checkpoint, as
/// planWeights does; with `strict` false the unused tensors are a warning
/// on `log`. Arguments of other roles are not touched (file tensors of
/// their names are not reported as unused: an inputs file may share it).
Status bindWeights(DeviceSession &session, const std::string &path,
                   bool strict, std::FILE *log, unsigned threads,
                   WeightsReport &report);

} // namespace llmc::rt

#endif // LLMC_RUNTIME_TRAIN_WEIGHTS_H
