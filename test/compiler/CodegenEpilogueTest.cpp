// Tests of codegen's GEMM epilogues (codegen/LowerMatmulEpilogue.cpp): a
// matmul_epilogue region whose body is matmul; elementwise{broadcast(bias),
// add [, gelu tanh | , add residual]} becomes one MatmulEpilogue command,
// which runs in a CPU Session bitwise equal (f32) to the same ops unfused;
// any other body (gelu erf, a bias over another dimension, a product read
// twice) lowers op by op. A reduce_sum of dY (the bias gradient) whose dY
// a later weight-gradient GEMM reads becomes that GEMM's bias_gradient
// output, unless something reads it before the GEMM.
#include "codegen/BuildExecutable.h"
#include "ir/Registration.h"
#include "runtime/Session.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>

using namespace mlir;
namespace rt = llmc::rt;

namespace {

class CodegenEpilogueTest : public ::testing::Test {
protected:
  CodegenEpilogueTest() {
    DialectRegistry registry;
    llmc::registerLlmcDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  FailureOr<rt::Executable> compile(const std::string &text) {
    OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(text, &context);
    if (!module)
      return failure();
    return llmc::buildExecutable(*module, llmc::CodegenOptions());
  }

  /// Runs `exe` on fixed random x [4, 6, 8], w [8, 16], b [16], r
  /// [4, 6, 16] and returns the bytes of every output.
  std::vector<std::vector<uint8_t>> run(const rt::Executable &exe) {
    std::unique_ptr<rt::Session> session;
    rt::Status status = rt::Session::create(exe, rt::SessionOptions(), session);
    EXPECT_TRUE(status) << status.message();
    if (!session)
      return {};
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> value(-2.0f, 2.0f);
    auto bind = [&](const char *name, rt::Shape shape) {
      std::vector<float> data(static_cast<size_t>(rt::numElements(shape)));
      for (float &v : data)
        v = value(rng);
      EXPECT_GE(exe.findArgument(name), 0) << name;
      rt::Status bound = session->setArgument(name, rt::DType::F32, shape,
                                              data.data(), data.size() * 4);
      EXPECT_TRUE(bound) << bound.message();
    };
    bind("x", {4, 6, 8});
    bind("w", {8, 16});
    bind("b", {16});
    bind("r", {4, 6, 16});
    status = session->run();
    EXPECT_TRUE(status) << status.message();
    std::vector<std::vector<uint8_t>> outputs;
    for (size_t i = 0; i < exe.outputs.size(); ++i) {
      rt::TensorRef out;
      EXPECT_TRUE(session->output(i, out));
      auto *bytes = static_cast<const uint8_t *>(out.data);
      outputs.emplace_back(bytes, bytes + out.bytes());
    }
    return outputs;
  }

  MLIRContext context;
};

/// A function of x, w, b, r returning `results` (types `resultTypes`),
/// whose body is the matmul and `epilogue` (ops over %p, the product, and
/// %bias, %res: the nested region's bias and residual), either as one
/// matmul_epilogue region with a nested elementwise region (`fused`) or
/// as plain ops.
std::string program(bool fused, const std::string &epilogue,
                    const std::string &yields, const std::string &yieldTypes,
                    const std::string &broadcastDims = "[2]",
                    const std::string &biasType = "tensor<16xf32>") {
  const std::string t = "tensor<4x6x16xf32>";
  std::string head =
      "func.func @loss(%x: tensor<4x6x8xf32> {llmc.name = \"x\"}, %w: "
      "tensor<8x16xf32> {llmc.name = \"w\"}, %b: " +
      biasType + " {llmc.name = \"b\"}, %r: " + t +
      " {llmc.name = \"r\"}) -> (" + yieldTypes + ") {\n";
  std::string bias = "  %bb = llmc.broadcast %bias dims " + broadcastDims +
                     " : " + biasType + " -> " + t + "\n";
  if (!fused)
    return head + "  %p = llmc.matmul %x, %w : tensor<4x6x8xf32>, "
                  "tensor<8x16xf32> -> " + t + "\n" +
           "  %bias = llmc.reshape %b : " + biasType + " -> " + biasType +
           "\n  %res = llmc.reshape %r : " + t + " -> " + t + "\n" + bias +
           epilogue + "  return " + yields + " : " + yieldTypes + "\n}\n";
  return head + "  %o:" + std::to_string(std::count(yields.begin(),
                                                      yields.end(), '%')) +
         " = llmc.fused matmul_epilogue (%x, %w, %b, %r) : "
         "(tensor<4x6x8xf32>, tensor<8x16xf32>, " + biasType + ", " + t +
         ") -> (" + yieldTypes + ") {\n"
         "  ^bb0(%xa: tensor<4x6x8xf32>, %wa: tensor<8x16xf32>, %ba: " +
         biasType + ", %ra: " + t + "):\n"
         "    %pa = llmc.matmul %xa, %wa : tensor<4x6x8xf32>, "
         "tensor<8x16xf32> -> " + t + "\n"
         "    %e:" + std::to_string(std::count(yields.begin(), yields.end(),
                                               '%')) +
         " = llmc.fused elementwise (%ba, %pa, %ra) : (" + biasType + ", " +
         t + ", " + t + ") -> (" + yieldTypes + ") {\n"
         "    ^bb0(%bias: " + biasType + ", %p: " + t + ", %res: " + t +
         "):\n" + bias + epilogue + "      llmc.yield " + yields + " : " +
         yieldTypes + "\n    }\n    llmc.yield %e#0" +
         (yieldTypes.find(',') != std::string::npos ? ", %e#1" : "") + " : " +
         yieldTypes + "\n  }\n  return %o#0" +
         (yieldTypes.find(',') != std::string::npos ? ", %o#1" : "") + " : " +
         yieldTypes + "\n}\n";
}

const char *kT = "tensor<4x6x16xf32>";

/// The kernels of `exe`'s commands, in order.
std::vector<rt::KernelKind> kernels(const rt::Executable &exe) {
  std::vector<rt::KernelKind> kinds;
  for (const rt::Command &command : exe.ranks.front().commands)
    kinds.push_back(command.kernel);
  return kinds;
}

struct Variant {
  const char *name;
  std::string epilogue, yields, yieldTypes;
  rt::MatmulEpilogueKind kind;
};

TEST_F(CodegenEpilogueTest, RecognizedBodiesBecomeOneCommandWithTheSameBits) {
  std::string t = kT;
  const Variant variants[] = {
      {"bias", "  %s = llmc.add %p, %bb : " + t + "\n", "%s", t,
       rt::MatmulEpilogueKind::Bias},
      {"bias, bias first", "  %s = llmc.add %bb, %p : " + t + "\n", "%s", t,
       rt::MatmulEpilogueKind::Bias},
      {"bias+gelu",
       "  %s = llmc.add %p, %bb : " + t + "\n  %g = llmc.gelu %s tanh : " +
           t + "\n",
       "%g", t, rt::MatmulEpilogueKind::BiasGelu},
      {"bias+gelu, pre-activation yielded",
       "  %s = llmc.add %p, %bb : " + t + "\n  %g = llmc.gelu %s tanh : " +
           t + "\n",
       "%s, %g", t + ", " + t, rt::MatmulEpilogueKind::BiasGeluAux},
      {"bias+residual",
       "  %s = llmc.add %p, %bb : " + t + "\n  %a = llmc.add %res, %s : " +
           t + "\n",
       "%a", t, rt::MatmulEpilogueKind::BiasResidual},
  };
  for (const Variant &v : variants) {
    SCOPED_TRACE(v.name);
    FailureOr<rt::Executable> fused =
        compile(program(true, v.epilogue, v.yields, v.yieldTypes));
    FailureOr<rt::Executable> plain =
        compile(program(false, v.epilogue, v.yields, v.yieldTypes));
    ASSERT_TRUE(succeeded(fused));
    ASSERT_TRUE(succeeded(plain));
    const rt::RankProgram &rank = fused->ranks.front();
    ASSERT_EQ(rank.commands.size(), 1u);
    const rt::Command &command = rank.commands[0];
    EXPECT_EQ(command.kind, rt::CommandKind::Gemm);
    EXPECT_EQ(command.kernel, rt::KernelKind::MatmulEpilogue);
    EXPECT_EQ(command.attrs.ints,
              (std::vector<int64_t>{0, 0, static_cast<int64_t>(v.kind)}));
    // lhs, rhs, bias[, residual] are the arguments x, w, b[, r].
    std::vector<int32_t> inputs = {0, 1, 2};
    if (v.kind == rt::MatmulEpilogueKind::BiasResidual)
      inputs.push_back(3);
    EXPECT_EQ(command.inputs, inputs);
    EXPECT_EQ(command.outputs.size(),
              v.kind == rt::MatmulEpilogueKind::BiasGeluAux ? 2u : 1u);
    // f32: the one command computes the unfused ops' bits.
    std::vector<std::vector<uint8_t>> got = run(*fused), want = run(*plain);
    ASSERT_EQ(got.size(), want.size());
    ASSERT_FALSE(got.empty());
    EXPECT_EQ(got, want);
    EXPECT_TRUE(std::any_of(got[0].begin(), got[0].end(),
                            [](uint8_t byte) { return byte != 0; }));
  }
}

TEST_F(CodegenEpilogueTest, OtherBodiesLowerOpByOp) {
  std::string t = kT;
  struct Case {
    const char *name;
    std::string text;
  };
  const Case cases[] = {
      {"gelu erf",
       program(true,
               "  %s = llmc.add %p, %bb : " + t +
                   "\n  %g = llmc.gelu %s erf : " + t + "\n",
               "%g", t)},
      {"a bias over another dimension",
       program(true, "  %s = llmc.add %p, %bb : " + t + "\n", "%s", t,
               "[1]", "tensor<6xf32>")},
      {"a multiply instead of the add",
       program(true, "  %s = llmc.mul %p, %bb : " + t + "\n", "%s", t)},
      {"the product yielded too",
       program(true, "  %s = llmc.add %p, %bb : " + t + "\n", "%p, %s",
               t + ", " + t)},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.name);
    FailureOr<rt::Executable> exe = compile(c.text);
    ASSERT_TRUE(succeeded(exe));
    std::vector<rt::KernelKind> kinds = kernels(*exe);
    ASSERT_FALSE(kinds.empty());
    EXPECT_EQ(kinds.front(), rt::KernelKind::Matmul);
    EXPECT_EQ(std::count(kinds.begin(), kinds.end(),
                         rt::KernelKind::MatmulEpilogue),
              0);
  }
}

/// A bias gradient and a weight-gradient region (dW = X^T dY, then two
/// elementwise ops), with `between` after the reduce_sum; `fused` false
/// gives the same ops without regions.
std::string weightGradient(bool fused, const std::string &between = "") {
  std::string head = R"mlir(
func.func @loss(%x: tensor<6x8xf32> {llmc.name = "x"}, %dy: tensor<2x3x16xf32> {llmc.name = "dy"}) -> (tensor<8x16xf32>, tensor<16xf32>) {
  %g = llmc.reduce_sum %dy dims [0, 1] : tensor<2x3x16xf32> -> tensor<16xf32>
)mlir" + between + R"mlir(
  %d2 = llmc.reshape %dy : tensor<2x3x16xf32> -> tensor<6x16xf32>
)mlir";
  if (!fused)
    return head + R"mlir(
  %p = llmc.matmul %x, %d2 transpose_a : tensor<6x8xf32>, tensor<6x16xf32> -> tensor<8x16xf32>
  %m = llmc.mul %p, %p : tensor<8x16xf32>
  %n = llmc.add %m, %p : tensor<8x16xf32>
  return %n, %g : tensor<8x16xf32>, tensor<16xf32>
}
)mlir";
  return head + R"mlir(
  %w = llmc.fused matmul_epilogue (%x, %d2) : (tensor<6x8xf32>, tensor<6x16xf32>) -> tensor<8x16xf32> {
  ^bb0(%a: tensor<6x8xf32>, %b: tensor<6x16xf32>):
    %p = llmc.matmul %a, %b transpose_a : tensor<6x8xf32>, tensor<6x16xf32> -> tensor<8x16xf32>
    %e = llmc.fused elementwise (%p) : (tensor<8x16xf32>) -> tensor<8x16xf32> {
    ^bb0(%q: tensor<8x16xf32>):
      %m = llmc.mul %q, %q : tensor<8x16xf32>
      %n = llmc.add %m, %q : tensor<8x16xf32>
      llmc.yield %n : tensor<8x16xf32>
    }
    llmc.yield %e : tensor<8x16xf32>
  }
  return %w, %g : tensor<8x16xf32>, tensor<16xf32>
}
)mlir";
}

TEST_F(CodegenEpilogueTest, TheBiasGradientJoinsTheWeightGradientGemm) {
  FailureOr<rt::Executable> fused = compile(weightGradient(true));
  FailureOr<rt::Executable> plain = compile(weightGradient(false));
  ASSERT_TRUE(succeeded(fused));
  ASSERT_TRUE(succeeded(plain));
  const rt::RankProgram &rank = fused->ranks.front();
  // No ReduceSum: the GEMM writes the bias gradient; then the marker of the
  // nested elementwise region and its two ops.
  EXPECT_EQ(kernels(*fused),
            (std::vector<rt::KernelKind>{rt::KernelKind::MatmulEpilogue,
                                         rt::KernelKind::FusedElementwise,
                                         rt::KernelKind::Mul,
                                         rt::KernelKind::Add}));
  const rt::Command &gemm = rank.commands[0];
  EXPECT_EQ(gemm.attrs.ints,
            (std::vector<int64_t>{
                1, 0,
                static_cast<int64_t>(rt::MatmulEpilogueKind::BiasGradient)}));
  ASSERT_EQ(gemm.outputs.size(), 2u);
  EXPECT_EQ(gemm.outputs[1], fused->outputs[1].value); // %g, returned
  EXPECT_EQ(gemm.inputs[0], 0);                         // x
  // Bitwise the unfused program (Matmul, then ReduceSum's own f64 sums).
  std::unique_ptr<rt::Session> a, b;
  ASSERT_TRUE(rt::Session::create(*fused, rt::SessionOptions(), a));
  ASSERT_TRUE(rt::Session::create(*plain, rt::SessionOptions(), b));
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> value(-2.0f, 2.0f);
  std::vector<float> x(48), dy(96);
  for (float &v : x)
    v = value(rng);
  for (float &v : dy)
    v = value(rng);
  for (rt::Session *session : {a.get(), b.get()}) {
    ASSERT_TRUE(session->setArgument("x", rt::DType::F32, {6, 8}, x.data(),
                                     x.size() * 4));
    ASSERT_TRUE(session->setArgument("dy", rt::DType::F32, {2, 3, 16},
                                     dy.data(), dy.size() * 4));
    rt::Status status = session->run();
    ASSERT_TRUE(status) << status.message();
  }
  for (size_t i = 0; i < 2; ++i) {
    rt::TensorRef got, want;
    ASSERT_TRUE(a->output(i, got));
    ASSERT_TRUE(b->output(i, want));
    ASSERT_EQ(got.bytes(), want.bytes());
    EXPECT_EQ(std::memcmp(got.data, want.data, got.bytes()), 0) << i;
  }
}

TEST_F(CodegenEpilogueTest, ABiasGradientReadBeforeTheGemmStaysAReduction) {
  FailureOr<rt::Executable> exe = compile(weightGradient(
      true, "  %early = llmc.neg %g : tensor<16xf32>\n"));
  ASSERT_TRUE(succeeded(exe));
  std::vector<rt::KernelKind> kinds = kernels(*exe);
  ASSERT_FALSE(kinds.empty());
  EXPECT_EQ(kinds.front(), rt::KernelKind::ReduceSum);
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), rt::KernelKind::Matmul), 1);
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(),
                       rt::KernelKind::MatmulEpilogue),
            0);
}

} // namespace

namespace {

std::string replaceAll(std::string text, const std::string &from,
                       const std::string &to) {
  for (size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
  return text;
}

// 16-bit operands join an epilogue only when every leading dimension is a
// multiple of 8 elements (cuBLASLt's bf16 epilogues missed their bound on
// the H200 with K = 65; runtime/cuda/libs/CublasLt.cpp refuses such problems).
TEST_F(CodegenEpilogueTest, Bf16EpiloguesNeedLeadingDimensionsOf16Bytes) {
  std::string t = kT;
  std::string f32 =
      program(true, "  %s = llmc.add %p, %bb : " + t + "\n", "%s", t);
  std::string aligned = replaceAll(f32, "xf32>", "xbf16>");
  std::string unaligned = replaceAll(
      replaceAll(aligned, "4x6x8x", "4x6x5x"), "tensor<8x16x", "tensor<5x16x");
  auto epilogues = [&](const std::string &text) {
    FailureOr<rt::Executable> exe = compile(text);
    EXPECT_TRUE(succeeded(exe)) << text;
    if (failed(exe))
      return -1;
    std::vector<rt::KernelKind> kinds = kernels(*exe);
    return static_cast<int>(std::count(kinds.begin(), kinds.end(),
                                       rt::KernelKind::MatmulEpilogue));
  };
  EXPECT_EQ(epilogues(aligned), 1);   // K = 8, N = 16
  EXPECT_EQ(epilogues(unaligned), 0); // K = 5: op by op
}

} // namespace
