//===- Layers.cpp - building blocks shared by the built-in models ---------===//
#include "frontend/models/Layers.h"

#include <algorithm>

namespace llmc {

Tensor linear(Tracer &tracer, Tensor x, int64_t in, int64_t out,
              WeightLayout layout, bool bias, Init weightInit,
              LinearSplit split) {
  bool inOut = layout == WeightLayout::InOut;
  const int64_t inDim = inOut ? 0 : 1, outDim = inOut ? 1 : 0;
  TensorParallelSplit weightSplit, biasSplit;
  switch (split.kind) {
  case LinearSplit::Kind::Replicated:
    break;
  case LinearSplit::Kind::Column:
    weightSplit = TensorParallelSplit::along(outDim, split.groups);
    biasSplit = TensorParallelSplit::along(0, split.groups);
    break;
  case LinearSplit::Kind::Row:
    weightSplit = TensorParallelSplit::along(inDim);
    break;
  }
  Tensor weight = tracer.parameter(
      "weight", inOut ? llvm::ArrayRef<int64_t>{in, out}
                      : llvm::ArrayRef<int64_t>{out, in},
      DType::F32, weightInit, weightSplit);
  Tensor y = matmul(x, weight, inOut ? Transpose::None : Transpose::B);
  if (!bias)
    return y;
  return y + tracer.parameter("bias", {out}, DType::F32, Init::zeros(),
                              biasSplit);
}

Tensor swigluMlp(Tracer &tracer, Tensor x, int64_t width, int64_t ffnWidth,
                 SwigluNames names, TensorParallelLayout tpLayout, bool bias) {
  Init init = Init::normal(0.02);
  bool megatron = tpLayout == TensorParallelLayout::Megatron;
  auto project = [&](llvm::StringRef name, Tensor input, int64_t in,
                     int64_t out, LinearSplit split) {
    auto s = tracer.scope(name);
    return linear(tracer, input, in, out, WeightLayout::OutIn, bias, init,
                  megatron ? split : LinearSplit::replicated());
  };
  Tensor gate = project(names.gate, x, width, ffnWidth, LinearSplit::column());
  Tensor up = project(names.up, x, width, ffnWidth, LinearSplit::column());
  return project(names.down, swiglu(gate, up), ffnWidth, width,
                 LinearSplit::row());
}

Tensor splitHeads(Tensor x, int64_t heads) {
  int64_t batch = x.dim(0), seq = x.dim(1), width = x.dim(2);
  Tensor split = reshape(x, {batch, seq, heads, width / heads});
  return transpose(split, {0, 2, 1, 3});
}

Tensor mergeHeads(Tensor x) {
  int64_t batch = x.dim(0), heads = x.dim(1), seq = x.dim(2), dim = x.dim(3);
  return reshape(transpose(x, {0, 2, 1, 3}), {batch, seq, heads * dim});
}

Tensor classifier(Tracer &t, Tensor x, Tensor head, const ModelConfig &m,
                  ModelOutput output) {
  const int64_t vocab = m.vocabSize, multiple = std::max<int64_t>(1, m.vocabPadMultiple);
  const int64_t padded = (vocab + multiple - 1) / multiple * multiple;
  if (padded == vocab)
    return matmul(x, head, Transpose::B);
  const int64_t extra = padded - vocab, width = m.hiddenSize;
  Tensor rows = concat({head, t.constant(0.0, {extra, width}, DType::F32)}, 0);
  Tensor mask = concat({t.constant(0.0, {vocab}, DType::F32),
                        t.constant(-30000.0, {extra}, DType::F32)},
                       0);
  Tensor logits = matmul(x, rows, Transpose::B);
  logits = logits + broadcastInDims(mask, logits.shape(),
                                    {static_cast<int64_t>(logits.shape().size()) - 1});
  if (output == ModelOutput::Logits)
    return sliceDim(logits, static_cast<int64_t>(logits.shape().size()) - 1, 0,
                    vocab);
  return logits;
}

} // namespace llmc
