//===- Models.cpp - trace a model family into a module ----------------------===//
#include "frontend/models/Models.h"

namespace llmc {

mlir::OwningOpRef<mlir::ModuleOp> buildLossModule(mlir::MLIRContext &context,
                                                  const ModelConfig &model,
                                                  int64_t batchSize,
                                                  int64_t seqLen) {
  Tracer tracer(context, "loss");
  Tensor loss;
  switch (model.family) {
  case ModelFamily::Gpt2:
    loss = traceGpt2(tracer, model, batchSize, seqLen);
    break;
  case ModelFamily::Llama:
    loss = traceLlama(tracer, model, batchSize, seqLen);
    break;
  case ModelFamily::Moe:
    loss = traceMoe(tracer, model, batchSize, seqLen);
    break;
  }
  return tracer.finish({loss});
}

} // namespace llmc
