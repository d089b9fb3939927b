//===- PipelineCollectives.cpp - the update's collectives issued early ----===//
//
// See PipelineCollectives.h: a step of llmc-split-pipeline between placing
// the ops into units and scheduling the units.
//
//===----------------------------------------------------------------------===//
#include "passes/PipelineCollectives.h"

#include "ir/LlmcOps.h"
#include "ir/Matchers.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "llvm/ADT/SetVector.h"

#include <tuple>

using namespace mlir;

namespace llmc::pipeline {

bool issueCollectivesEarly(ArrayRef<Operation *> ops,
                           llvm::DenseMap<Operation *, Placement> &place) {
  llvm::DenseMap<Operation *, size_t> position;
  for (size_t i = 0; i < ops.size(); ++i)
    position[ops[i]] = i;
  auto inTail = [&](Operation *op) {
    auto it = place.find(op);
    return it != place.end() && it->second.part == Part::Tail;
  };
  bool moved = false;
  for (Operation *op : SmallVector<Operation *>(ops)) {
    if (!isa<shard::AllReduceOp, shard::ReduceScatterOp>(op) || !inTail(op))
      continue;
    // The tree of ops that feed only the collective: the tail's concats
    // and views, and the backward's adds that sum a gradient over the
    // microbatches (made after the last microbatch's whole backward, they
    // move up to their last operand too).
    llvm::SetVector<Operation *> tree;
    tree.insert(op);
    for (size_t i = 0; i < tree.size(); ++i)
      for (Value v : tree[i]->getOperands()) {
        Operation *def = v.getDefiningOp();
        if (!def || !def->hasOneUse())
          continue;
        auto it = place.find(def);
        if (it == place.end())
          continue;
        if ((it->second.part == Part::Tail &&
             isa<ConcatOp, ReshapeOp, TransposeOp>(def)) ||
            (it->second.part == Part::Backward && isa<AddOp>(def)))
          tree.insert(def);
      }
    // Its inputs: the latest backward op that makes one, all in one chunk.
    Operation *latest = nullptr;
    bool early = true;
    for (Operation *member : tree)
      for (Value v : member->getOperands()) {
        Operation *def = v.getDefiningOp();
        if (def && tree.contains(def))
          continue;
        auto it = def ? place.find(def) : place.end();
        if (it == place.end() || it->second.part != Part::Backward) {
          early = false;
          break;
        }
        const Placement &p = it->second;
        if (latest) {
          const Placement &q = place[latest];
          if (p.chunk != q.chunk) {
            early = false;
            break;
          }
          if (std::tie(p.microbatch, position[def]) <
              std::tie(q.microbatch, position[latest]))
            continue;
        }
        latest = def;
      }
    if (!early || !latest)
      continue;
    // In program order after `latest`, into its unit.
    SmallVector<Operation *> members(tree.begin(), tree.end());
    llvm::sort(members, [&](Operation *a, Operation *b) {
      return position[a] < position[b];
    });
    // After a norm gradient's residual add (findFoldedAdds folds it only
    // when it comes next); the add is in the same unit.
    Operation *after = latest;
    if (Operation *add = foldableResidualAdd(latest))
      after = add;
    for (Operation *member : members) {
      member->moveAfter(after);
      place[member] = place[latest];
      after = member;
    }
    moved = true;
  }
  return moved;
}

} // namespace llmc::pipeline
