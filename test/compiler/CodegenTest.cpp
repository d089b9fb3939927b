// Tests of codegen (IR -> Executable): kernels chosen by op class, reshape
// as a view, buffer reuse, constants, the argument table, and running the
// result in a Session against values computed by hand.
#include "codegen/BuildExecutable.h"
#include "ir/Registration.h"
#include "runtime/Session.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

using namespace mlir;
namespace rt = llmc::rt;

namespace {

class CodegenTest : public ::testing::Test {
protected:
  CodegenTest() {
    DialectRegistry registry;
    llmc::registerLlmcDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  FailureOr<rt::Executable> compile(StringRef text) {
    module = parseSourceString<ModuleOp>(text, &context);
    if (!module)
      return failure();
    return llmc::buildExecutable(*module, llmc::CodegenOptions());
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

constexpr const char *kMlp = R"mlir(
func.func @loss(%x: tensor<2x3xf32> {llmc.name = "x", llmc.role = "input"},
                %w: tensor<3x4xf32> {llmc.name = "fc.weight", llmc.role = "parameter", llmc.init = {kind = "normal", scale = 0.02 : f64}},
                %b: tensor<4xf32> {llmc.name = "fc.bias", llmc.role = "parameter", llmc.init = {kind = "zeros"}}) -> tensor<f32> {
  %y = llmc.matmul %x, %w : tensor<2x3xf32>, tensor<3x4xf32> -> tensor<2x4xf32> loc("fc")
  %bb = llmc.broadcast %b dims [1] : tensor<4xf32> -> tensor<2x4xf32> loc("fc.bias")
  %z = llmc.add %y, %bb : tensor<2x4xf32> loc("fc")
  %flat = llmc.reshape %z : tensor<2x4xf32> -> tensor<8xf32> loc("flatten")
  %half = llmc.constant dense<0.5> : tensor<8xf32> loc("scale")
  %s = llmc.mul %flat, %half : tensor<8xf32> loc("scale")
  %r = llmc.reduce_sum %s dims [0] : tensor<8xf32> -> tensor<f32> loc("sum")
  return %r : tensor<f32>
}
)mlir";

TEST_F(CodegenTest, KernelsComeFromTheOpClass) {
  FailureOr<rt::Executable> exe = compile(kMlp);
  ASSERT_TRUE(succeeded(exe));
  const rt::RankProgram &rank = exe->ranks.front();
  // The reshape is a view and the constant is data: five commands.
  ASSERT_EQ(rank.commands.size(), 5u);
  EXPECT_EQ(rank.commands[0].kind, rt::CommandKind::Gemm);
  EXPECT_EQ(rank.commands[0].kernel, rt::KernelKind::Matmul);
  EXPECT_EQ(rank.commands[0].attrs.ints, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(rank.commands[1].kernel, rt::KernelKind::Broadcast);
  EXPECT_EQ(rank.commands[1].attrs.ints, (std::vector<int64_t>{1}));
  EXPECT_EQ(rank.commands[1].origin, "fc.bias");
  EXPECT_EQ(rank.commands[2].kernel, rt::KernelKind::Add);
  EXPECT_EQ(rank.commands[3].kernel, rt::KernelKind::Mul);
  EXPECT_EQ(rank.commands[4].kernel, rt::KernelKind::ReduceSum);
  ASSERT_EQ(rank.constants.size(), 1u);
  EXPECT_EQ(rank.constants[0].bytes.size(), 8u * 4);
}

TEST_F(CodegenTest, ArgumentsKeepNamesRolesAndInitializers) {
  FailureOr<rt::Executable> exe = compile(kMlp);
  ASSERT_TRUE(succeeded(exe));
  ASSERT_EQ(exe->arguments.size(), 3u);
  EXPECT_EQ(exe->arguments[0].name, "x");
  EXPECT_EQ(exe->arguments[0].role, rt::ArgumentRole::Input);
  EXPECT_EQ(exe->arguments[1].name, "fc.weight");
  EXPECT_EQ(exe->arguments[1].role, rt::ArgumentRole::Parameter);
  EXPECT_EQ(exe->arguments[1].init.kind, rt::InitSpec::Kind::Normal);
  EXPECT_DOUBLE_EQ(exe->arguments[1].init.scale, 0.02);
  EXPECT_EQ(exe->arguments[2].init.kind, rt::InitSpec::Kind::Zeros);
  ASSERT_EQ(exe->outputs.size(), 1u);
  EXPECT_EQ(exe->outputs[0].name, "loss");
}

TEST_F(CodegenTest, ReshapeIsAViewOfItsOperand) {
  FailureOr<rt::Executable> exe = compile(kMlp);
  ASSERT_TRUE(succeeded(exe));
  const rt::RankProgram &rank = exe->ranks.front();
  // %z is written by command 2, %flat is read by command 3.
  int32_t z = rank.commands[2].outputs[0];
  int32_t flat = rank.commands[3].inputs[0];
  EXPECT_NE(z, flat);
  EXPECT_EQ(rank.values[z].offset, rank.values[flat].offset);
}

TEST_F(CodegenTest, DeadValuesShareStorage) {
  // A chain of eight 1 KiB values: each dies when the next is made, and
  // exp is elementwise, so each is written over the one before (in place):
  // the plan needs two buffers, the pinned argument and one for the chain.
  std::string text = "func.func @loss(%x: tensor<256xf32>) -> tensor<256xf32> {\n"
                     "  %v0 = llmc.exp %x : tensor<256xf32>\n";
  for (int i = 1; i < 8; ++i)
    text += "  %v" + std::to_string(i) + " = llmc.exp %v" +
            std::to_string(i - 1) + " : tensor<256xf32>\n";
  text += "  return %v7 : tensor<256xf32>\n}\n";
  FailureOr<rt::Executable> exe = compile(text);
  ASSERT_TRUE(succeeded(exe));
  EXPECT_EQ(llmc::plannedBytes(*exe), 2u * 1024);
}

TEST_F(CodegenTest, DeadValuesShareStorageWithoutInPlace) {
  // The same chain through transposes (not elementwise): each value needs
  // its own buffer while the next is written, so three buffers.
  std::string text =
      "func.func @loss(%x: tensor<16x16xf32>) -> tensor<16x16xf32> {\n"
      "  %v0 = llmc.transpose %x perm [1, 0] : tensor<16x16xf32> -> "
      "tensor<16x16xf32>\n";
  for (int i = 1; i < 8; ++i)
    text += "  %v" + std::to_string(i) + " = llmc.transpose %v" +
            std::to_string(i - 1) +
            " perm [1, 0] : tensor<16x16xf32> -> tensor<16x16xf32>\n";
  text += "  return %v7 : tensor<16x16xf32>\n}\n";
  FailureOr<rt::Executable> exe = compile(text);
  ASSERT_TRUE(succeeded(exe));
  EXPECT_EQ(llmc::plannedBytes(*exe), 3u * 1024);
}

TEST_F(CodegenTest, SelectIsNotWrittenOverItsNarrowerCondition) {
  // An i1 condition of 6 elements and an f64 result both round up to one
  // 64-byte buffer, but element i of the result covers bytes of conditions
  // i+1 ... i+7: the result must not take the condition's buffer.
  FailureOr<rt::Executable> exe = compile(R"mlir(
func.func @loss(%a: tensor<6xf64>, %b: tensor<6xf64>) -> tensor<6xf64> {
  %c = llmc.compare lt %a, %b : (tensor<6xf64>, tensor<6xf64>) -> tensor<6xi1>
  %s = llmc.select %c, %a, %b : (tensor<6xi1>, tensor<6xf64>, tensor<6xf64>) -> tensor<6xf64>
  return %s : tensor<6xf64>
}
)mlir");
  ASSERT_TRUE(succeeded(exe));
  const rt::RankProgram &rank = exe->ranks.front();
  int32_t condition = rank.commands[1].inputs[0];
  int32_t result = rank.commands[1].outputs[0];
  EXPECT_NE(rank.values[condition].offset, rank.values[result].offset);
}

TEST_F(CodegenTest, OpsOfOtherDialectsAreErrorsAtTheirLocation) {
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  FailureOr<rt::Executable> exe = compile(R"mlir(
func.func @loss(%a: tensor<4xf32>) -> tensor<4xf32> {
  %b = arith.addf %a, %a : tensor<4xf32>
  return %b : tensor<4xf32>
}
)mlir");
  EXPECT_TRUE(failed(exe));
  EXPECT_EQ(message, "'arith.addf' op has no kernel in the CPU backend; "
                     "codegen handles the llmc dialect only");
}

// A pipelined program runs on each stage's ranks only the ops of that
// stage and those without llmc.stage. An op without it that reads a value of
// another stage (a pass after llmc-split-pipeline forgot the placement) is
// an error at the op, not a read of slot 0 (the first argument, of another
// shape: GPT-2 pp2 + ZeRO-3 ran a transpose on a [32, 64] weight).
TEST_F(CodegenTest, AnOpReadingAnotherStagesValueIsAnError) {
  std::string message, note;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    for (Diagnostic &n : diag.getNotes())
      note = n.str();
    return success();
  });
  FailureOr<rt::Executable> exe = compile(R"mlir(
module attributes {llmc.mesh_axes = ["pp"]} {
  shard.grid @mesh(shape = 2)
  func.func @loss(%w: tensor<4x2xf32> {llmc.name = "w"}, %a: tensor<2x4xf32> {llmc.name = "a"}) -> tensor<4x2xf32>
      attributes {llmc.partitioned, llmc.pipeline = {stages = 2 : i64}} {
    %b = llmc.neg %a {llmc.stage = 0 : i64} : tensor<2x4xf32>
    %t = llmc.transpose %b perm [1, 0] : tensor<2x4xf32> -> tensor<4x2xf32> loc("h.0.attn")
    return %t : tensor<4x2xf32>
  }
}
)mlir");
  EXPECT_TRUE(failed(exe));
  EXPECT_EQ(message,
            "'llmc.transpose' op codegen: operand #0 does not exist on "
            "pipeline stage 1 (rank 1), which runs this op (it has no "
            "llmc.stage: a pass after llmc-split-pipeline created it without "
            "copyPipelinePlacement)");
  EXPECT_EQ(note, "the operand is made on stage 0 here");
}

TEST_F(CodegenTest, TheExecutableRunsAndMatchesAHandComputation) {
  FailureOr<rt::Executable> exe = compile(kMlp);
  ASSERT_TRUE(succeeded(exe));
  std::unique_ptr<rt::Session> session;
  ASSERT_TRUE(rt::Session::create(*exe, rt::SessionOptions(), session));
  std::vector<float> x = {0.5f, -1.0f, 2.0f, 1.5f, 0.25f, -0.75f};
  std::vector<float> w(12), b = {0.1f, -0.2f, 0.3f, -0.4f};
  for (int i = 0; i < 12; ++i)
    w[i] = 0.1f * static_cast<float>(i) - 0.55f;
  ASSERT_TRUE(session->setArgument("x", rt::DType::F32, {2, 3}, x.data(), 24));
  ASSERT_TRUE(
      session->setArgument("fc.weight", rt::DType::F32, {3, 4}, w.data(), 48));
  ASSERT_TRUE(
      session->setArgument("fc.bias", rt::DType::F32, {4}, b.data(), 16));
  rt::Status status = session->run();
  ASSERT_TRUE(status) << status.message();
  double expected = 0;
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 4; ++j) {
      double y = b[j];
      for (int k = 0; k < 3; ++k)
        y += double(x[i * 3 + k]) * w[k * 4 + j];
      expected += 0.5 * y;
    }
  rt::TensorRef loss;
  ASSERT_TRUE(session->output(0, loss));
  EXPECT_NEAR(*static_cast<float *>(loss.data), expected,
              1e-6 * std::max(1.0, std::fabs(expected)));
}

TEST_F(CodegenTest, UnboundArgumentsAreNamed) {
  FailureOr<rt::Executable> exe = compile(kMlp);
  ASSERT_TRUE(succeeded(exe));
  std::unique_ptr<rt::Session> session;
  ASSERT_TRUE(rt::Session::create(*exe, rt::SessionOptions(), session));
  std::vector<float> x(6, 1.0f);
  ASSERT_TRUE(session->setArgument("x", rt::DType::F32, {2, 3}, x.data(), 24));
  rt::Status status = session->run();
  EXPECT_EQ(status.message(),
            "2 argument(s) were never bound: fc.weight, fc.bias");
  status = session->setArgument("x", rt::DType::F32, {3, 2}, x.data(), 24);
  EXPECT_EQ(status.message(), "argument 'x' is f32[2, 3], got f32[3, 2]");
}

} // namespace

// A row_reduction region of exactly mul(x, x) and a reduce_sum of every
// dimension (llmc-fuse makes one per gradient-norm term) is one SumSquares
// command reading x; the same ops outside a region, or a region squaring
// something else, stay Mul + ReduceSum. Both programs give the same bits
// on the CPU (SumSquares rounds each square to f32 and sums in f64 in
// order, as the pair does).
constexpr const char *kSquares = R"mlir(
func.func @loss(%x: tensor<37x29xf32> {llmc.name = "x", llmc.role = "input"},
                %y: tensor<37x29xf32> {llmc.name = "y", llmc.role = "input"}) -> (tensor<f32>, tensor<f32>, tensor<f32>) {
  %a = llmc.fused row_reduction (%x) : (tensor<37x29xf32>) -> tensor<f32> {
  ^bb0(%g: tensor<37x29xf32>):
    %sq = llmc.mul %g, %g : tensor<37x29xf32>
    %s = llmc.reduce_sum %sq dims [0, 1] : tensor<37x29xf32> -> tensor<f32>
    llmc.yield %s : tensor<f32>
  } loc("norm.x")
  %sq2 = llmc.mul %x, %x : tensor<37x29xf32>
  %b = llmc.reduce_sum %sq2 dims [0, 1] : tensor<37x29xf32> -> tensor<f32>
  %c = llmc.fused row_reduction (%x, %y) : (tensor<37x29xf32>, tensor<37x29xf32>) -> tensor<f32> {
  ^bb0(%g: tensor<37x29xf32>, %h: tensor<37x29xf32>):
    %p = llmc.mul %g, %h : tensor<37x29xf32>
    %s = llmc.reduce_sum %p dims [0, 1] : tensor<37x29xf32> -> tensor<f32>
    llmc.yield %s : tensor<f32>
  }
  return %a, %b, %c : tensor<f32>, tensor<f32>, tensor<f32>
}
)mlir";

TEST_F(CodegenTest, SumOfSquaresRegionIsOneKernelWithTheSameBits) {
  FailureOr<rt::Executable> exe = compile(kSquares);
  ASSERT_TRUE(succeeded(exe));
  const rt::RankProgram &rank = exe->ranks.front();
  ASSERT_EQ(rank.commands.size(), 5u);
  EXPECT_EQ(rank.commands[0].kernel, rt::KernelKind::SumSquares);
  EXPECT_EQ(rank.commands[0].origin, "norm.x");
  EXPECT_EQ(rank.commands[0].inputs,
            std::vector<int32_t>{exe->arguments[0].value});
  EXPECT_EQ(rank.commands[0].outputs,
            std::vector<int32_t>{exe->outputs[0].value});
  EXPECT_EQ(rank.commands[1].kernel, rt::KernelKind::Mul);
  EXPECT_EQ(rank.commands[2].kernel, rt::KernelKind::ReduceSum);
  EXPECT_EQ(rank.commands[3].kernel, rt::KernelKind::Mul);
  EXPECT_EQ(rank.commands[4].kernel, rt::KernelKind::ReduceSum);

  std::unique_ptr<rt::Session> session;
  ASSERT_TRUE(rt::Session::create(*exe, rt::SessionOptions(), session));
  std::vector<float> x(37 * 29), y(37 * 29);
  uint32_t state = 20261130;
  for (std::vector<float> *values : {&x, &y})
    for (float &v : *values) {
      state = state * 1664525u + 1013904223u;
      v = static_cast<float>(state >> 8) / 16777216.0f * 6.0f - 3.0f;
    }
  ASSERT_TRUE(session->setArgument("x", rt::DType::F32, {37, 29}, x.data(),
                                   x.size() * 4));
  ASSERT_TRUE(session->setArgument("y", rt::DType::F32, {37, 29}, y.data(),
                                   y.size() * 4));
  rt::Status status = session->run();
  ASSERT_TRUE(status) << status.message();
  rt::TensorRef fused, plain;
  ASSERT_TRUE(session->output(0, fused));
  ASSERT_TRUE(session->output(1, plain));
  float a = *static_cast<float *>(fused.data);
  float b = *static_cast<float *>(plain.data);
  EXPECT_EQ(std::memcmp(&a, &b, 4), 0) << a << " vs " << b;
  EXPECT_GT(a, 100.0f);
}
