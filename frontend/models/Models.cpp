//===- Models.cpp - trace a model family into a module ----------------------===//
#include "frontend/models/Models.h"

namespace llmc {

namespace {

mlir::OwningOpRef<mlir::ModuleOp> buildModule(mlir::MLIRContext &context,
                                              const ModelConfig &model,
                                              int64_t batchSize, int64_t seqLen,
                                              ModelOutput output) {
  Tracer tracer(context, output == ModelOutput::Loss ? "loss" : "logits");
  Tensor result;
  switch (model.family) {
  case ModelFamily::Gpt2:
    result = traceGpt2(tracer, model, batchSize, seqLen, output);
    break;
  case ModelFamily::Llama:
    result = traceLlama(tracer, model, batchSize, seqLen, output);
    break;
  case ModelFamily::Moe:
    result = traceMoe(tracer, model, batchSize, seqLen, output);
    break;
  }
  return tracer.finish({result});
}

} // namespace

mlir::OwningOpRef<mlir::ModuleOp> buildLossModule(mlir::MLIRContext &context,
                                                  const ModelConfig &model,
                                                  int64_t batchSize,
                                                  int64_t seqLen) {
  return buildModule(context, model, batchSize, seqLen, ModelOutput::Loss);
}

mlir::OwningOpRef<mlir::ModuleOp> buildLogitsModule(mlir::MLIRContext &context,
                                                    const ModelConfig &model,
                                                    int64_t batchSize,
                                                    int64_t seqLen) {
  return buildModule(context, model, batchSize, seqLen, ModelOutput::Logits);
}

} // namespace llmc
