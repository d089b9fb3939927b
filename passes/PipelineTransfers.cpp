//===- PipelineTransfers.cpp - sends and receives between pipeline stages -===//
//
// Step 5d of llmc-split-pipeline (passes/SplitPipeline.cpp): once every op
// has its llmc.stage and the body is in its global order, each value read
// on another stage gets a send on its stage and a receive on the reader's,
// adjacent in the body (docs/sharding.md, "Pipeline parallelism").
//
//===----------------------------------------------------------------------===//

#include "ir/LlmcOps.h"
#include "ir/Phase.h"
#include "passes/PipelineTransfers.h"
#include "sharding/Sharding.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"

#include <cstdlib>
#include <functional>
#include <map>
#include <string>

using namespace mlir;

namespace llmc {

int64_t pipelineStageOf(Operation *op) {
  auto attr = op->getAttrOfType<IntegerAttr>("llmc.stage");
  return attr ? attr.getInt() : -1;
}

void insertPipelineTransfers(Block &body, int64_t ppAxis,
                             OpBuilder &builder) {
  SmallVector<Operation *> order;
  for (Operation &op : body.without_terminator())
    order.push_back(&op);
  std::map<std::pair<Operation *, int64_t>, Value> received;
  llvm::DenseMap<Operation *, Operation *> lastAfter;
  std::function<Value(Value, int64_t, Operation *)> transfer =
      [&](Value value, int64_t to, Operation *reader) -> Value {
    Operation *def = value.getDefiningOp();
    auto key = std::make_pair(def, to);
    if (auto it = received.find(key); it != received.end())
      return it->second;
    // A scalar read stages away (the clipping scale, from the last stage to
    // every other) travels one stage at a time, each stage passing it on:
    // every stage sends and receives as many whatever the stage count, so
    // a middle stage's program and the first's and last's are those of a
    // pipeline of fewer stages (planner/Probe.h, probeStages), and no
    // stage sends it pp - 1 times.
    int64_t from = pipelineStageOf(def);
    Value source = value;
    if (cast<RankedTensorType>(value.getType()).getRank() == 0 &&
        std::abs(to - from) > 1)
      source = transfer(value, to > from ? to - 1 : to + 1, reader);
    Operation *sender = source.getDefiningOp();
    from = pipelineStageOf(sender);
    Operation *after = lastAfter.lookup(sender);
    builder.setInsertionPointAfter(after ? after : sender);
    Location loc = def->getLoc();
    std::string part = modelPartOf(loc);
    Phase phase = phaseOf(loc);
    std::string what = phase == Phase::Forward    ? "activation"
                       : phase == Phase::Backward ? "gradient"
                                                  : "value";
    auto mb = def->getAttrOfType<IntegerAttr>("llmc.microbatch");
    std::string reason =
        what + " " + (part.empty() ? std::string("(no model part)") : part) +
        " (" + phaseName(phase).str() +
        (mb ? ", microbatch " + std::to_string(mb.getInt()) : "") +
        "): stage " + std::to_string(from) + " -> " + std::to_string(to) +
        ", for " + modelPartOf(reader->getLoc());
    auto send = SendOp::create(builder, loc, source, ppAxis, from, to);
    auto recv = RecvOp::create(builder, loc, value.getType(), ppAxis,
                               from, to);
    int64_t bytes = tensorBytes(value.getType());
    for (auto [op, s] : {std::pair<Operation *, int64_t>{send, from},
                         {recv, to}}) {
      op->setAttr("llmc.stage", builder.getI64IntegerAttr(s));
      op->setAttr("llmc.reason", builder.getStringAttr(reason));
      op->setAttr("llmc.bytes_per_rank", builder.getI64IntegerAttr(bytes));
      if (mb)
        op->setAttr("llmc.microbatch", mb);
      if (auto chunk = def->getAttr("llmc.chunk"))
        op->setAttr("llmc.chunk", chunk);
    }
    lastAfter[sender] = recv;
    received[key] = recv.getResult();
    return recv.getResult();
  };
  for (Operation *op : order) {
    int64_t here = pipelineStageOf(op);
    for (OpOperand &operand : op->getOpOperands()) {
      Operation *def = operand.get().getDefiningOp();
      if (def && pipelineStageOf(def) != here)
        operand.set(transfer(operand.get(), here, op));
    }
  }
}

} // namespace llmc
