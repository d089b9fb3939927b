// Tests of the C++ side of the dialect: ops built with T::create, the
// convenience builders that infer result types, verification through the C++
// API, and the traits passes ask instead of op names.
#include "ir/LlmcOps.h"
#include "ir/Registration.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

class BuilderTest : public ::testing::Test {
protected:
  BuilderTest() : builder(&context) {
    DialectRegistry registry;
    llmc::registerLlmcDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    module = ModuleOp::create(builder.getUnknownLoc());
    builder.setInsertionPointToEnd(module->getBody());
  }

  /// A function with arguments of the given types; the builder is left at
  /// the start of its body.
  func::FuncOp function(TypeRange args) {
    auto fn = func::FuncOp::create(builder, builder.getUnknownLoc(), "f",
                                   builder.getFunctionType(args, {}));
    Block *body = fn.addEntryBlock();
    builder.setInsertionPointToStart(body);
    return fn;
  }

  RankedTensorType tensor(ArrayRef<int64_t> shape, Type element) {
    return RankedTensorType::get(shape, element);
  }

  /// Verifies `op` with diagnostics captured; returns the first message.
  std::string verifyMessage(Operation *op) {
    std::string message;
    ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
      if (message.empty())
        message = diag.str();
      return success();
    });
    (void)verify(op);
    return message;
  }

  MLIRContext context;
  OpBuilder builder;
  OwningOpRef<ModuleOp> module;
};

TEST_F(BuilderTest, BinaryBuilderInfersTheResultType) {
  Type f32 = builder.getF32Type();
  func::FuncOp fn = function({tensor({4, 8}, f32), tensor({4, 8}, f32)});
  Location loc = NameLoc::get(builder.getStringAttr("blocks.0.mlp.add"));
  auto add = llmc::AddOp::create(builder, loc, fn.getArgument(0),
                                 fn.getArgument(1));
  EXPECT_EQ(add.getType(), tensor({4, 8}, f32));
  func::ReturnOp::create(builder, loc);
  EXPECT_TRUE(succeeded(verify(*module)));
  EXPECT_EQ(cast<NameLoc>(add->getLoc()).getName(), "blocks.0.mlp.add");
}

TEST_F(BuilderTest, VerifierReportsExpectedAndFoundShapes) {
  Type f32 = builder.getF32Type();
  func::FuncOp fn = function({tensor({4, 8}, f32), tensor({8, 16}, f32)});
  // Wrong result shape: [4, 8] x [8, 16] is [4, 16].
  auto matmul = llmc::MatmulOp::create(
      builder, builder.getUnknownLoc(), tensor({4, 8}, f32),
      fn.getArgument(0), fn.getArgument(1), /*transpose_a=*/false,
      /*transpose_b=*/false);
  EXPECT_EQ(verifyMessage(matmul),
            "'llmc.matmul' op expected result of shape [4, 16], got [4, 8]");
}

TEST_F(BuilderTest, TraitsSeparateElementwiseAndCompositeOps) {
  Type f32 = builder.getF32Type();
  func::FuncOp fn = function({tensor({4, 8}, f32), tensor({8}, f32)});
  Location loc = builder.getUnknownLoc();
  auto exp = llmc::ExpOp::create(builder, loc, fn.getArgument(0));
  auto norm = llmc::RmsNormOp::create(builder, loc, tensor({4, 8}, f32),
                                      fn.getArgument(0), fn.getArgument(1),
                                      builder.getF64FloatAttr(1e-6));
  EXPECT_TRUE(exp->hasTrait<llmc::OpTrait::Elementwise>());
  EXPECT_FALSE(exp->hasTrait<llmc::OpTrait::Composite>());
  EXPECT_TRUE(norm->hasTrait<llmc::OpTrait::Composite>());
  EXPECT_FALSE(norm->hasTrait<llmc::OpTrait::Elementwise>());
}

TEST_F(BuilderTest, ConstantsFoldAndCastsToTheSameTypeVanish) {
  Type f32 = builder.getF32Type();
  func::FuncOp fn = function({tensor({4}, f32)});
  Location loc = builder.getUnknownLoc();
  auto cast = llmc::CastOp::create(builder, loc, tensor({4}, f32),
                                   fn.getArgument(0));
  SmallVector<OpFoldResult> folded;
  ASSERT_TRUE(succeeded(cast->fold(folded)));
  ASSERT_EQ(folded.size(), 1u);
  EXPECT_EQ(dyn_cast<Value>(folded[0]), fn.getArgument(0));
}

} // namespace
