//===- CanonicalizePrimitives.cpp - rewrites of primitive ops ------------===//
//
// Canonicalization patterns of the primitive ops (the folders are beside
// the ops in LlmcDialect.cpp).
//
// add of zero-padded concats. The derivative of a slice is the slice's
// gradient padded with zeros to the sliced tensor's shape (a concat with
// zero broadcasts, VjpPrimitives.cpp), and autodiff adds the gradients of
// every slice of one tensor. GPT-2's attention slices q, k and v out of one
// [B, T, 3C] projection, so its backward built three [B, T, 3C] concats,
// two thirds zeros each, and added them: per layer 750 MB of traffic for
// what one concat of dq, dk and dv does with 150 MB. When at every position
// along the concat dimension at most one of the two sides is not zero, the
// sum is one concat of the non-zero pieces (zeros in the gaps). x + 0 = x
// exactly, so the result is the same bits (up to the sign of a zero).
//
// cast of a broadcast. The precision pass casts an f32 value where a bf16
// op reads it; when that value is a broadcast, the cast runs over the
// broadcast's every element. Casting the input first and broadcasting the
// result is the same values (a broadcast copies, a cast is elementwise) and
// keeps a bias vector a vector of the computing type, which a GEMM's
// epilogue can add (the classifier's padding mask, models/Layers.h).
//
//===----------------------------------------------------------------------===//
#include "ir/LlmcOps.h"
#include "ir/Matchers.h"
#include "ir/VjpHelpers.h"

#include "mlir/IR/PatternMatch.h"

#include <algorithm>

using namespace mlir;

namespace llmc {
namespace {

/// A piece of a concat that is not zero: [begin, end) along the dimension.
struct Piece {
  int64_t begin, end;
  Value value;
};

/// The non-zero pieces of `concat` along its dimension, appended to
/// `pieces`.
void nonZeroPieces(ConcatOp concat, SmallVectorImpl<Piece> &pieces) {
  int64_t dim = concat.getDim(), at = 0;
  for (Value input : concat.getInputs()) {
    int64_t size = cast<RankedTensorType>(input.getType()).getDimSize(dim);
    if (!isZeroSplat(input))
      pieces.push_back({at, at + size, input});
    at += size;
  }
}

struct AddOfZeroPaddedConcats : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp op,
                                PatternRewriter &rewriter) const override {
    auto lhs = op.getLhs().getDefiningOp<ConcatOp>();
    auto rhs = op.getRhs().getDefiningOp<ConcatOp>();
    if (!lhs || !rhs || lhs.getDim() != rhs.getDim())
      return rewriter.notifyMatchFailure(op, "not two concats along one dim");
    SmallVector<Piece> pieces;
    nonZeroPieces(lhs, pieces);
    nonZeroPieces(rhs, pieces);
    llvm::sort(pieces,
               [](const Piece &a, const Piece &b) { return a.begin < b.begin; });
    for (size_t i = 1; i < pieces.size(); ++i)
      if (pieces[i].begin < pieces[i - 1].end)
        return rewriter.notifyMatchFailure(op, "non-zero pieces overlap");
    auto type = cast<RankedTensorType>(op.getType());
    int64_t dim = lhs.getDim();
    SmallVector<Value> inputs;
    auto zeros = [&](int64_t size) {
      SmallVector<int64_t> shape(type.getShape());
      shape[dim] = size;
      inputs.push_back(vjp::splat(rewriter, op.getLoc(),
                                  RankedTensorType::get(shape,
                                                        type.getElementType()),
                                  0.0));
    };
    int64_t at = 0;
    for (const Piece &piece : pieces) {
      if (piece.begin > at)
        zeros(piece.begin - at);
      inputs.push_back(piece.value);
      at = piece.end;
    }
    if (at < type.getDimSize(dim))
      zeros(type.getDimSize(dim) - at);
    if (inputs.size() == 1) {
      rewriter.replaceOp(op, inputs.front());
      return success();
    }
    rewriter.replaceOpWithNewOp<ConcatOp>(op, type, inputs, dim);
    return success();
  }
};

struct CastOfBroadcast : OpRewritePattern<CastOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(CastOp op,
                                PatternRewriter &rewriter) const override {
    auto broadcast = op.getInput().getDefiningOp<BroadcastOp>();
    if (!broadcast)
      return rewriter.notifyMatchFailure(op, "not a cast of a broadcast");
    auto input = cast<RankedTensorType>(broadcast.getInput().getType());
    auto type = cast<RankedTensorType>(op.getType());
    Value narrow = CastOp::create(
        rewriter, op.getLoc(),
        RankedTensorType::get(input.getShape(), type.getElementType()),
        broadcast.getInput());
    rewriter.replaceOpWithNewOp<BroadcastOp>(op, type, narrow,
                                             broadcast.getDimsAttr());
    return success();
  }
};

} // namespace

void CastOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                         MLIRContext *context) {
  patterns.add<CastOfBroadcast>(context);
}

void AddOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                        MLIRContext *context) {
  patterns.add<AddOfZeroPaddedConcats>(context);
}

} // namespace llmc

bool llmc::isZeroSplat(Value value) {
  Operation *producer = value.getDefiningOp();
  if (auto broadcast = dyn_cast_or_null<BroadcastOp>(producer))
    return isZeroSplat(broadcast.getInput());
  auto constant = dyn_cast_or_null<ConstantOp>(producer);
  if (!constant)
    return false;
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat())
    return false;
  if (auto f = dyn_cast<FloatType>(dense.getElementType()))
    return dense.getSplatValue<APFloat>().isZero();
  return dense.getSplatValue<APInt>().isZero();
}

mlir::Operation *llmc::foldableResidualAdd(Operation *op) {
  if (!op || !isa<LayerNormGradOp, RmsNormGradOp>(op))
    return nullptr;
  Operation *next = op->getNextNode();
  if (next && isa<AddOp>(next) &&
      llvm::is_contained(next->getOperands(), op->getResult(0)))
    return next;
  return nullptr;
}
