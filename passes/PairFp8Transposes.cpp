//===- PairFp8Transposes.cpp - one cast into both layouts of FP8 codes ----===//
//
// After partitioning, remat and the pipeline split, before fusion
// (docs/precision.md, "FP8"; Passes.td): a rank-2 llmc.scaled_cast whose
// codes are used as they are and through llmc.transpose perm [1, 0] becomes
// one llmc.scaled_cast_transpose, so the transposed codes are written by the
// pass over the input that writes the codes, not by a second kernel that
// reads them back. On each rank's local program, hence no sharding rule.
//
//===----------------------------------------------------------------------===//

#include "ir/LlmcOps.h"
#include "ir/Phase.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace llmc {
#define GEN_PASS_DEF_PAIRFP8TRANSPOSESPASS
#include "passes/Passes.h.inc"
} // namespace llmc

using namespace mlir;

namespace {

/// The pipeline placement llmc-split-pipeline gives an op (Phase.h).
bool samePlacement(Operation *a, Operation *b) {
  for (StringRef name : {"llmc.stage", "llmc.chunk", "llmc.microbatch"})
    if (a->getAttr(name) != b->getAttr(name))
      return false;
  return true;
}

bool isMatrixTranspose(Operation *op) {
  auto transpose = dyn_cast<llmc::TransposeOp>(op);
  return transpose && transpose.getPermutation().size() == 2 &&
         transpose.getPermutation()[0] == 1 &&
         transpose.getPermutation()[1] == 0;
}

struct PairFp8TransposesPass
    : public llmc::impl::PairFp8TransposesPassBase<PairFp8TransposesPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<llmc::ScaledCastOp> casts;
    getOperation().walk([&](llmc::ScaledCastOp op) { casts.push_back(op); });
    for (llmc::ScaledCastOp castOp : casts)
      pair(castOp);
  }

private:
  void pair(llmc::ScaledCastOp castOp) {
    auto codes = castOp.getType();
    if (codes.getRank() != 2)
      return;
    SmallVector<llmc::TransposeOp> transposes;
    bool usedAsIs = false;
    for (Operation *user : castOp->getUsers()) {
      if (isMatrixTranspose(user) && samePlacement(user, castOp))
        transposes.push_back(cast<llmc::TransposeOp>(user));
      else
        usedAsIs = true;
    }
    // Codes used in one layout only keep their one kernel.
    if (transposes.empty() || !usedAsIs)
      return;
    OpBuilder b(castOp);
    auto transposedType = RankedTensorType::get(
        {codes.getDimSize(1), codes.getDimSize(0)}, codes.getElementType());
    auto both = llmc::ScaledCastTransposeOp::create(
        b, castOp.getLoc(), codes, transposedType, castOp.getInput(),
        castOp.getScale());
    // The cast's other attributes (its pipeline placement) stay with it.
    both->setDiscardableAttrs(castOp->getDiscardableAttrDictionary());
    llmc::copyPipelinePlacement(castOp, both);
    for (llmc::TransposeOp transpose : transposes) {
      transpose.replaceAllUsesWith(both.getTransposed());
      transpose.erase();
    }
    castOp.replaceAllUsesWith(both.getResult());
    castOp.erase();
  }
};

} // namespace
