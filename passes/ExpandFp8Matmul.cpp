//===- ExpandFp8Matmul.cpp - llmc.fp8_matmul as its explicit FP8 steps ----===//
//
// After --llmc-autodiff with policy fp8 (docs/precision.md, "FP8"): each
// llmc.fp8_matmul of the forward program becomes the amax and scale of each
// operand, the scaled casts to f8E4M3FN (the weight transposed, since the
// FP8 GEMM takes both operands with the contraction innermost), one
// llmc.scaled_matmul and the reshape back. Its derivative rule already built
// the backward's steps with the same builders (ir/Fp8.h); the CSE after this
// pass keeps one of each scale the two share.
//
//===----------------------------------------------------------------------===//

#include "ir/Fp8.h"
#include "ir/LlmcOps.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace llmc {
#define GEN_PASS_DEF_EXPANDFP8MATMULPASS
#include "passes/Passes.h.inc"
} // namespace llmc

using namespace mlir;

namespace {

struct ExpandFp8MatmulPass
    : public llmc::impl::ExpandFp8MatmulPassBase<ExpandFp8MatmulPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<llmc::Fp8MatmulOp> matmuls;
    getOperation().walk([&](llmc::Fp8MatmulOp op) { matmuls.push_back(op); });
    for (llmc::Fp8MatmulOp op : matmuls)
      expand(op);
  }

private:
  /// y = x · w (w [K, N]) or x · wᵀ (w [N, K]) as
  /// scaled_matmul(fp8(x as [M', K]), fp8(w as [N, K])).
  void expand(llmc::Fp8MatmulOp op) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    Type e4m3 = b.getType<Float8E4M3FNType>();
    auto x = cast<RankedTensorType>(op.getLhs().getType());
    auto y = cast<RankedTensorType>(op.getType());
    int64_t k = x.getShape().back();
    int64_t rows = x.getNumElements() / k;
    Value x2 = op.getLhs();
    if (x.getRank() != 2)
      x2 = llmc::ReshapeOp::create(
          b, loc, RankedTensorType::get({rows, k}, x.getElementType()), x2);
    llmc::Fp8Scale xs = llmc::buildFp8Scale(b, loc, x2, e4m3);
    llmc::Fp8Scale ws = llmc::buildFp8Scale(b, loc, op.getRhs(), e4m3);
    Value y2 = llmc::buildScaledMatmul(b, loc, x2, false, xs, e4m3,
                                       op.getRhs(), !op.getTransposeB(), ws,
                                       e4m3, y.getElementType());
    if (y.getRank() != 2)
      y2 = llmc::ReshapeOp::create(b, loc, y, y2);
    op.replaceAllUsesWith(y2);
    op.erase();
  }
};

} // namespace
