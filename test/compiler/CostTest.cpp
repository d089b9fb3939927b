// Tests of CostOpInterface: every op implements it, and the numbers of the
// ops the planner relies on most (matmul, attention, data movement) are the
// ones computed by hand here.
#include "ir/LlmcOps.h"
#include "ir/Registration.h"
#include "sharding/Registration.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace {

class CostTest : public ::testing::Test {
protected:
  CostTest() {
    DialectRegistry registry;
    llmc::registerLlmcDialects(registry);
    llmc::registerShardingRuleModels(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  /// Parses `body` as the body of a function with the given arguments and
  /// returns the first llmc op in it.
  llmc::CostOpInterface firstOp(StringRef args, StringRef body) {
    std::string text = ("func.func @f(" + args + ") {\n" + body +
                        "\n  return\n}\n")
                           .str();
    module = parseSourceString<ModuleOp>(text, &context);
    EXPECT_TRUE(module) << text;
    if (!module)
      return nullptr;
    llmc::CostOpInterface found;
    module->walk([&](llmc::CostOpInterface op) {
      if (!found)
        found = op;
    });
    return found;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(CostTest, EveryLlmcOpHasACost) {
  int ops = 0;
  for (RegisteredOperationName name : context.getRegisteredOperations()) {
    if (name.getDialectNamespace() != "llmc")
      continue;
    ++ops;
    EXPECT_TRUE(name.hasInterface<llmc::CostOpInterface>())
        << name.getStringRef().str() << " has no CostOpInterface";
    EXPECT_TRUE(name.hasInterface<llmc::ShardingRuleOpInterface>())
        << name.getStringRef().str() << " has no ShardingRuleOpInterface";
  }
  // The op set of docs/ir.md: 29 primitives, 20 composites (ring
  // attention's attention_block and attention_block_grad among them), the
  // structure
  // ops llmc.fused and llmc.yield, llmc.axis_offset of partitioned
  // programs and llmc.send / llmc.recv of pipelined ones, and the FP8 ops
  // (amax, scaled_cast, scaled_cast_transpose, scaled_matmul, fp8_matmul).
  EXPECT_EQ(ops, 59);
}

TEST_F(CostTest, MatmulIsTwoFlopsPerMultiplyAdd) {
  // [2, 4, 8] x [16, 8]^T: 2*4*16 outputs, each a dot product of length 8.
  auto op = firstOp(
      "%x: tensor<2x4x8xbf16>, %w: tensor<16x8xbf16>",
      "%y = llmc.matmul %x, %w transpose_b : tensor<2x4x8xbf16>, "
      "tensor<16x8xbf16> -> tensor<2x4x16xf32>");
  ASSERT_TRUE(op);
  EXPECT_DOUBLE_EQ(op.getFlops(), 2.0 * 2 * 4 * 16 * 8);
  EXPECT_EQ(op.getBytesRead(), (2 * 4 * 8 + 16 * 8) * 2);
  EXPECT_EQ(op.getBytesWritten(), 2 * 4 * 16 * 4);
}

TEST_F(CostTest, TransposedLhsContractsOverItsRows) {
  // lhs [K=6, M=3] under transpose_a: the contraction length is 6.
  auto op = firstOp("%a: tensor<6x3xf32>, %b: tensor<6x5xf32>",
                    "%y = llmc.matmul %a, %b transpose_a : tensor<6x3xf32>, "
                    "tensor<6x5xf32> -> tensor<3x5xf32>");
  ASSERT_TRUE(op);
  EXPECT_DOUBLE_EQ(op.getFlops(), 2.0 * 3 * 5 * 6);
}

TEST_F(CostTest, CausalAttentionCountsHalfTheScores) {
  const char *args = "%q: tensor<2x8x64x32xbf16>, %k: tensor<2x2x64x32xbf16>, "
                     "%v: tensor<2x2x64x32xbf16>";
  const char *types = " : (tensor<2x8x64x32xbf16>, tensor<2x2x64x32xbf16>, "
                      "tensor<2x2x64x32xbf16>) -> tensor<2x8x64x32xbf16>";
  auto full = firstOp(args, std::string("%o = llmc.attention %q, %k, %v") +
                                types);
  ASSERT_TRUE(full);
  double scores = 2.0 * 8 * 64 * 64;
  double fullFlops = full.getFlops();
  EXPECT_DOUBLE_EQ(fullFlops, scores * (4.0 * 32 + 5.0));
  // The next parse replaces the module that holds `full`.
  auto causal = firstOp(
      args, std::string("%o = llmc.attention %q, %k, %v causal") + types);
  ASSERT_TRUE(causal);
  EXPECT_DOUBLE_EQ(causal.getFlops(), fullFlops / 2);
}

TEST_F(CostTest, AttentionGradCountsSixContractionsPerScore) {
  const char *args = "%q: tensor<2x8x64x32xbf16>, %k: tensor<2x2x64x32xbf16>, "
                     "%v: tensor<2x2x64x32xbf16>, %o: tensor<2x8x64x32xbf16>, "
                     "%g: tensor<2x8x64x32xbf16>";
  const char *types =
      " : (tensor<2x8x64x32xbf16>, tensor<2x2x64x32xbf16>, "
      "tensor<2x2x64x32xbf16>, tensor<2x8x64x32xbf16>, "
      "tensor<2x8x64x32xbf16>) -> (tensor<2x8x64x32xbf16>, "
      "tensor<2x2x64x32xbf16>, tensor<2x2x64x32xbf16>)";
  auto causal = firstOp(
      args, std::string("%dq, %dk, %dv = llmc.attention_grad %q, %k, %v, %o, "
                        "%g causal") +
                types);
  ASSERT_TRUE(causal);
  double scores = 2.0 * 8 * 64 * 64;
  EXPECT_DOUBLE_EQ(causal.getFlops(), scores * (12.0 * 32 + 8.0) / 2);
}

// Ring attention's blocks count half their scores, as causal attention
// (their positions are known only at run time; the zigzag split makes
// every block half visible), the backward without a statistics pass.
TEST_F(CostTest, AttentionBlocksCountHalfTheScores) {
  const char *args = "%q: tensor<2x8x64x32xf32>, %k: tensor<2x2x48x32xf32>, "
                     "%qp: tensor<64xi32>, %kp: tensor<48xi32>, "
                     "%o: tensor<2x8x64x32xf32>, %l: tensor<2x8x64xf32>";
  double scores = 2.0 * 8 * 64 * 48;
  auto block = firstOp(
      args, "%o2, %l2 = llmc.attention_block %q, %k, %k positions(%qp, %kp) "
            ": (tensor<2x8x64x32xf32>, tensor<2x2x48x32xf32>, "
            "tensor<2x2x48x32xf32>, tensor<64xi32>, tensor<48xi32>) -> "
            "(tensor<2x8x64x32xf32>, tensor<2x8x64xf32>)");
  ASSERT_TRUE(block);
  EXPECT_DOUBLE_EQ(block.getFlops(), scores * (4.0 * 32 + 5.0) / 2);
  auto grad = firstOp(
      args, "%dq, %dk, %dv = llmc.attention_block_grad %q, %k, %k, %o, %o, "
            "%l positions(%qp, %kp) : (tensor<2x8x64x32xf32>, "
            "tensor<2x2x48x32xf32>, tensor<2x2x48x32xf32>, "
            "tensor<2x8x64x32xf32>, tensor<2x8x64x32xf32>, "
            "tensor<2x8x64xf32>, tensor<64xi32>, tensor<48xi32>) -> "
            "(tensor<2x8x64x32xf32>, tensor<2x2x48x32xf32>, "
            "tensor<2x2x48x32xf32>)");
  ASSERT_TRUE(grad);
  EXPECT_DOUBLE_EQ(grad.getFlops(), scores * (10.0 * 32 + 8.0) / 2);
}

// The loss gradient: the statistics (4 per logit) and the gradient (3 per
// logit); it reads the logits, targets and dloss once and writes dlogits
// once (the kernel reads the logits twice, which the cost model, counting
// an op's operands once, does not see).
TEST_F(CostTest, CrossEntropyGradReadsTheLogitsAndWritesTheirGradient) {
  auto op = firstOp(
      "%l: tensor<4x8x100xbf16>, %t: tensor<4x8xi32>, %g: tensor<f32>",
      "%d = llmc.cross_entropy_grad %l, %t, %g reduction mean : "
      "(tensor<4x8x100xbf16>, tensor<4x8xi32>, tensor<f32>) -> "
      "tensor<4x8x100xbf16>");
  ASSERT_TRUE(op);
  EXPECT_DOUBLE_EQ(op.getFlops(), 7.0 * 4 * 8 * 100);
  EXPECT_EQ(op.getBytesRead(), 4 * 8 * 100 * 2 + 4 * 8 * 4 + 4);
  EXPECT_EQ(op.getBytesWritten(), 4 * 8 * 100 * 2);
}

// With the forward's lse as an operand the statistics are not recomputed:
// 4 flops per logit (x - lse, exp, - onehot, * w); the lse adds 4 bytes a
// position to what is read.
TEST_F(CostTest, CrossEntropyGradWithLseSkipsTheStatistics) {
  auto op = firstOp(
      "%l: tensor<4x8x100xbf16>, %t: tensor<4x8xi32>, %g: tensor<f32>, "
      "%s: tensor<4x8xf32>",
      "%d = llmc.cross_entropy_grad %l, %t, %g lse %s reduction mean : "
      "(tensor<4x8x100xbf16>, tensor<4x8xi32>, tensor<f32>, tensor<4x8xf32>) "
      "-> tensor<4x8x100xbf16>");
  ASSERT_TRUE(op);
  EXPECT_DOUBLE_EQ(op.getFlops(), 4.0 * 4 * 8 * 100);
  EXPECT_EQ(op.getBytesRead(), 4 * 8 * 100 * 2 + 4 * 8 * 4 + 4 + 4 * 8 * 4);
  EXPECT_EQ(op.getBytesWritten(), 4 * 8 * 100 * 2);
}

TEST_F(CostTest, ReshapeIsFreeAndTransposeMovesBytes) {
  auto reshape = firstOp("%x: tensor<4x6xf32>",
                         "%y = llmc.reshape %x : tensor<4x6xf32> -> "
                         "tensor<24xf32>");
  ASSERT_TRUE(reshape);
  EXPECT_EQ(reshape.getFlops(), 0.0);
  EXPECT_EQ(reshape.getBytesRead() + reshape.getBytesWritten(), 0);

  auto transpose = firstOp("%x: tensor<4x6xf32>",
                           "%y = llmc.transpose %x perm [1, 0] : "
                           "tensor<4x6xf32> -> tensor<6x4xf32>");
  ASSERT_TRUE(transpose);
  EXPECT_EQ(transpose.getFlops(), 0.0);
  EXPECT_EQ(transpose.getBytesRead(), 96);
  EXPECT_EQ(transpose.getBytesWritten(), 96);
}

TEST_F(CostTest, EmbeddingReadsOnlyTheLookedUpRows) {
  auto op = firstOp("%t: tensor<1000x16xf32>, %ids: tensor<2x3xi32>",
                    "%y = llmc.embedding %t[%ids] : (tensor<1000x16xf32>, "
                    "tensor<2x3xi32>) -> tensor<2x3x16xf32>");
  ASSERT_TRUE(op);
  // 6 ids (4 bytes each) and 6 rows of 16 floats, not the 1000-row table.
  EXPECT_EQ(op.getBytesRead(), 6 * 4 + 6 * 16 * 4);
}

TEST_F(CostTest, BoolTensorsCountOneBytePerElement) {
  auto op = firstOp("%a: tensor<10xi32>, %b: tensor<10xi32>",
                    "%m = llmc.compare lt %a, %b : (tensor<10xi32>, "
                    "tensor<10xi32>) -> tensor<10xi1>");
  ASSERT_TRUE(op);
  EXPECT_EQ(op.getBytesWritten(), 10);
}

} // namespace
