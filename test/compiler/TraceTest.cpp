// Tests of the tracing API: scopes name parameters and locate ops,
// broadcasting operators, and errors reported at the scope that made them.
#include "frontend/Trace.h"
#include "ir/LlmcOps.h"
#include "ir/Registration.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using llmc::DType;
using llmc::Init;
using llmc::Tensor;

namespace {

class TraceTest : public ::testing::Test {
protected:
  TraceTest() {
    DialectRegistry registry;
    llmc::registerLlmcDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Collects "<location>: <message>" of every error while alive.
  struct Errors {
    explicit Errors(MLIRContext &context)
        : handler(&context, [this](Diagnostic &diag) {
            std::string loc;
            llvm::raw_string_ostream os(loc);
            diag.getLocation().print(os);
            messages.push_back(loc + ": " + diag.str());
            return success();
          }) {}
    std::vector<std::string> messages;
    ScopedDiagnosticHandler handler;
  };

  MLIRContext context;
};

TEST_F(TraceTest, ScopesNameParametersAndLocateOps) {
  llmc::Tracer tracer(context);
  Tensor x = tracer.input("x", {2, 4}, DType::F32);
  Tensor y;
  {
    auto outer = tracer.scope("blocks.3");
    auto inner = tracer.scope("mlp");
    Tensor w = tracer.parameter("weight", {4, 8}, DType::F32, Init::normal(1.0));
    EXPECT_EQ(tracer.scopePath(), "blocks.3.mlp");
    y = llmc::matmul(x, w);
  }
  EXPECT_EQ(tracer.scopePath(), "");
  auto module = tracer.finish({y});
  ASSERT_TRUE(module);
  auto fn = module->lookupSymbol<func::FuncOp>("loss");
  EXPECT_EQ(fn.getArgAttrOfType<StringAttr>(0, "llmc.name").getValue(),
            "blocks.3.mlp.weight");
  // The parameter moved before the input that was declared first.
  EXPECT_EQ(fn.getArgAttrOfType<StringAttr>(1, "llmc.name").getValue(), "x");
  llmc::MatmulOp matmul = *fn.getOps<llmc::MatmulOp>().begin();
  EXPECT_EQ(cast<NameLoc>(matmul->getLoc()).getName(), "blocks.3.mlp");
}

TEST_F(TraceTest, OperatorsBroadcastLikeNumpy) {
  llmc::Tracer tracer(context);
  Tensor x = tracer.input("x", {2, 3, 4}, DType::F32);
  Tensor bias = tracer.input("bias", {4}, DType::F32);
  Tensor column = tracer.input("column", {3, 1}, DType::F32);
  Tensor y = (x + bias) * column;
  EXPECT_EQ(y.shape(), ArrayRef<int64_t>({2, 3, 4}));
  Tensor z = y * 0.5;
  auto module = tracer.finish({z});
  ASSERT_TRUE(module);
  auto broadcasts = llvm::to_vector(
      module->lookupSymbol<func::FuncOp>("loss").getOps<llmc::BroadcastOp>());
  ASSERT_EQ(broadcasts.size(), 2u);
  // [4] -> [2, 3, 4] along the last dim; [3, 1] -> [2, 3, 4] along 1 and 2.
  EXPECT_EQ(broadcasts[0].getDims(), ArrayRef<int64_t>({2}));
  EXPECT_EQ(broadcasts[1].getDims(), ArrayRef<int64_t>({1, 2}));
}

TEST_F(TraceTest, ReshapeInfersOneDimension) {
  llmc::Tracer tracer(context);
  Tensor x = tracer.input("x", {2, 3, 4}, DType::F32);
  EXPECT_EQ(llmc::reshape(x, {-1, 4}).shape(), ArrayRef<int64_t>({6, 4}));
  EXPECT_EQ(llmc::reshape(x, {2, -1}).shape(), ArrayRef<int64_t>({2, 12}));
}

TEST_F(TraceTest, IncompatibleShapesAreReportedAtTheScope) {
  Errors errors(context);
  llmc::Tracer tracer(context);
  Tensor a = tracer.input("a", {2, 3}, DType::F32);
  Tensor b = tracer.input("b", {2, 4}, DType::F32);
  Tensor c;
  {
    auto s = tracer.scope("blocks.0.attn");
    c = a + b;
  }
  EXPECT_TRUE(tracer.failed());
  EXPECT_FALSE(tracer.finish({c}));
  ASSERT_FALSE(errors.messages.empty());
  EXPECT_EQ(errors.messages.front(),
            "loc(\"blocks.0.attn\"): cannot broadcast shapes [2, 3] and "
            "[2, 4] together: aligned from the right, each dimension must "
            "match or be 1");
}

TEST_F(TraceTest, VerifierErrorsNameTheModelPart) {
  Errors errors(context);
  llmc::Tracer tracer(context);
  Tensor a = tracer.input("a", {2, 3}, DType::F32);
  Tensor w = tracer.input("w", {4, 5}, DType::F32);
  {
    auto s = tracer.scope("mlp.c_fc");
    (void)llmc::matmul(a, w);
  }
  EXPECT_TRUE(tracer.failed());
  ASSERT_FALSE(errors.messages.empty());
  EXPECT_EQ(errors.messages.front(),
            "loc(\"mlp.c_fc\"): 'llmc.matmul' op expected contraction sizes "
            "to match, got 3 and 4");
}

TEST_F(TraceTest, DuplicateParameterNamesAreRejected) {
  Errors errors(context);
  llmc::Tracer tracer(context);
  auto s = tracer.scope("ln");
  Tensor w1 = tracer.parameter("weight", {4}, DType::F32, Init::ones());
  Tensor w2 = tracer.parameter("weight", {4}, DType::F32, Init::ones());
  EXPECT_EQ(w1.value(), w2.value());
  EXPECT_TRUE(tracer.failed());
  ASSERT_FALSE(errors.messages.empty());
  EXPECT_EQ(errors.messages.front(),
            "loc(\"ln\"): expected a unique name, but 'ln.weight' was already "
            "declared");
}

TEST_F(TraceTest, EveryCompositeTraces) {
  llmc::Tracer tracer(context);
  Tensor x = tracer.input("x", {2, 4, 8, 16}, DType::F32); // [B, H, T, D]
  Tensor kv = tracer.input("kv", {2, 2, 8, 16}, DType::F32);
  Tensor gamma = tracer.input("gamma", {16}, DType::F32);
  Tensor ids = tracer.input("ids", {6}, DType::I32);
  Tensor h = llmc::rope(x, 10000.0);
  h = llmc::attention(h, kv, kv, /*causal=*/true);
  h = llmc::layerNorm(h, gamma, gamma, 1e-5);
  h = llmc::rmsNorm(h, gamma, 1e-6);
  h = llmc::softmax(h);
  h = llmc::gelu(h, llmc::GeluApprox::Erf);
  h = llmc::swiglu(llmc::silu(h), h);
  Tensor flat = llmc::reshape(h, {-1, 16});                 // [128, 16]
  auto [weights, experts] = llmc::moeTopK(llmc::sliceDim(flat, 1, 0, 4), 2, true);
  Tensor buffers = llmc::moeDispatch(flat, experts, 4, 64); // [4, 64, 16]
  Tensor combined = llmc::moeCombine(buffers, weights, experts);
  Tensor rows = llmc::embedding(combined, ids);            // [6, 16]
  Tensor loss = llmc::crossEntropy(rows, ids);
  EXPECT_FALSE(tracer.failed());
  EXPECT_TRUE(tracer.finish({loss}));
}

} // namespace
