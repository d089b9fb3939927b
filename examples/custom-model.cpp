//===- custom-model.cpp - a model of one's own, traced with the C++ API ----===//
//
// A small language model that is none of the built-in families: each token
// sees a causal mean of the embeddings before it ("bag of words"), then a
// two-layer MLP predicts the next token. It shows parameters with
// initializers, scopes that name model parts, operators with broadcasting,
// and the composite ops, using only frontend/Trace.h.
//
//   build/bin/llmc-example-custom-model            prints the @loss program
//
//===----------------------------------------------------------------------===//

#include "frontend/Parameters.h"
#include "frontend/Trace.h"
#include "ir/Registration.h"

#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

using llmc::DType;
using llmc::Init;
using llmc::Tensor;

int main() {
  mlir::DialectRegistry registry;
  llmc::registerLlmcDialects(registry);
  mlir::MLIRContext context(registry);

  const int64_t batch = 4, seq = 32, vocab = 96, width = 48, hidden = 192;
  llmc::Tracer tracer(context, "loss");
  Tensor tokens = tracer.input("tokens", {batch, seq}, DType::I32);
  Tensor targets = tracer.input("targets", {batch, seq}, DType::I32);

  Tensor x;
  {
    auto s = tracer.scope("embed");
    Tensor table = tracer.parameter("weight", {vocab, width}, DType::F32,
                                    Init::normal(0.02));
    x = llmc::embedding(table, tokens);
  }
  {
    // Causal mean over positions: a lower-triangular [T, T] averaging
    // matrix, built from iota and compare, applied as a batched matmul.
    auto s = tracer.scope("context");
    Tensor row = tracer.iota({seq, seq}, 0);
    Tensor col = tracer.iota({seq, seq}, 1);
    Tensor visible = llmc::compare(llmc::Compare::Le, col, row);
    Tensor ones = tracer.constant(1.0, {seq, seq}, DType::F32);
    Tensor zeros = tracer.constant(0.0, {seq, seq}, DType::F32);
    Tensor mask = llmc::select(visible, ones, zeros);
    Tensor average = mask / llmc::sum(mask, {1}, /*keepDims=*/true);
    x = x + llmc::matmul(llmc::broadcastTo(average, {batch, seq, seq}), x);
  }
  {
    auto s = tracer.scope("mlp");
    Tensor w1 = tracer.parameter("fc1.weight", {width, hidden}, DType::F32,
                                 Init::normal(0.02));
    Tensor b1 = tracer.parameter("fc1.bias", {hidden}, DType::F32, Init::zeros());
    Tensor w2 = tracer.parameter("fc2.weight", {hidden, width}, DType::F32,
                                 Init::normal(0.02));
    Tensor gamma = tracer.parameter("norm.weight", {width}, DType::F32,
                                    Init::ones());
    Tensor h = llmc::gelu(llmc::matmul(x, w1) + b1, llmc::GeluApprox::Erf);
    x = llmc::rmsNorm(x + llmc::matmul(h, w2), gamma, 1e-6);
  }
  Tensor loss;
  {
    auto s = tracer.scope("head");
    Tensor w = tracer.parameter("weight", {vocab, width}, DType::F32,
                                Init::normal(0.02));
    loss = llmc::crossEntropy(llmc::matmul(x, w, llmc::Transpose::B), targets);
  }

  mlir::OwningOpRef<mlir::ModuleOp> module = tracer.finish({loss});
  if (!module)
    return 1;
  module->print(llvm::outs(),
                mlir::OpPrintingFlags().enableDebugInfo(true).useLocalScope());
  llmc::ParameterSummary summary = llmc::summarizeParameters(
      *module->getOps<mlir::func::FuncOp>().begin());
  llvm::outs() << "\n// parameters: " << summary.elements << " in "
               << summary.tensors << " tensors\n";
  return 0;
}
