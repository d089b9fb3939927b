//===- PlanBuffers.cpp - record the buffer plan in the IR -----------------===//
//
// The last step of the pipeline (docs/passes.md, step 9): runs the buffer
// planner (analysis/BufferPlan.h) on every function and writes its decisions into
// the IR, so that a dump shows where each tensor lives and `llmc plan`
// reads the peak and its breakdown. Codegen lays the Executable out with
// the same planner and checks that the recorded arena still holds.
//
//===----------------------------------------------------------------------===//

#include "analysis/BufferPlan.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/FormatVariadic.h"

namespace llmc {
#define GEN_PASS_DEF_PLANBUFFERSPASS
#include "passes/Passes.h.inc"
} // namespace llmc

using namespace mlir;

namespace {

struct PlanBuffersPass
    : public llmc::impl::PlanBuffersPassBase<PlanBuffersPass> {
  using Base::Base;

  void runOnOperation() override {
    bool overBudget = false;
    for (auto function : getOperation().getOps<func::FuncOp>()) {
      if (function.isExternal())
        continue;
      // The option decides the mode; the attribute carries it to codegen
      // and to every later planBuffers call (llmc plan).
      if (fusedKernels)
        function->setAttr(llmc::kFusedKernelsAttrName,
                          UnitAttr::get(function.getContext()));
      else
        function->removeAttr(llmc::kFusedKernelsAttrName);
      FailureOr<llmc::BufferPlan> plan = llmc::planBuffers(function);
      if (failed(plan))
        return signalPassFailure();
      record(function, *plan);
      // A pipelined program: each stage's ranks run only their ops, so each
      // stage has its own plan; the arena is the largest of them.
      if (failed(recordStages(function, plan)))
        return signalPassFailure();
      uint64_t budget = static_cast<uint64_t>(budgetBytes);
      if (budget > 0 && plan->arenaBytes > budget) {
        auto gib = [](uint64_t bytes) {
          return static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0);
        };
        function.emitError()
            << "@" << function.getSymName() << " needs "
            << plan->arenaBytes << " bytes ("
            << llvm::formatv("{0:f2}", gib(plan->arenaBytes))
            << " GiB) per device, over the memory budget of " << budget
            << " bytes (" << llvm::formatv("{0:f2}", gib(budget))
            << " GiB); set [memory] remat = \"auto\" (or selective, full), "
               "lower the batch size, or raise budget_gib";
        overBudget = true;
      }
    }
    if (overBudget)
      signalPassFailure();
  }

  static LogicalResult recordStages(func::FuncOp function,
                                    FailureOr<llmc::BufferPlan> &largest) {
    auto pipeline = function->getAttrOfType<DictionaryAttr>("llmc.pipeline");
    auto stages = pipeline ? pipeline.getAs<IntegerAttr>("stages") : nullptr;
    if (!stages)
      return success();
    Builder b(function.getContext());
    SmallVector<Attribute> memories;
    SmallVector<int64_t> arenas;
    for (int64_t s = 0; s < stages.getInt(); ++s) {
      FailureOr<llmc::BufferPlan> plan = llmc::planBuffers(function, s);
      if (failed(plan))
        return failure();
      function.walk([&](Operation *op) {
        auto stage = op->getAttrOfType<IntegerAttr>("llmc.stage");
        if (!stage || stage.getInt() != s || op->getNumResults() == 0)
          return;
        SmallVector<int64_t> offsets;
        for (Value result : op->getResults())
          offsets.push_back(static_cast<int64_t>(plan->offsetOf(result)));
        op->setAttr("llmc.offsets", b.getDenseI64ArrayAttr(offsets));
      });
      memories.push_back(memoryAttr(b, *plan));
      arenas.push_back(static_cast<int64_t>(plan->arenaBytes));
      if (s == 0 || plan->arenaBytes > largest->arenaBytes)
        largest = std::move(*plan);
    }
    function->setAttr("llmc.stage_memory", b.getArrayAttr(memories));
    function->setAttr("llmc.stage_arena_bytes", b.getDenseI64ArrayAttr(arenas));
    function->setAttr("llmc.memory", memoryAttr(b, *largest));
    function->setAttr("llmc.arena_bytes",
                      b.getI64IntegerAttr(
                          static_cast<int64_t>(largest->arenaBytes)));
    return success();
  }

  static DictionaryAttr memoryAttr(Builder &b, const llmc::BufferPlan &plan) {
    const llmc::MemoryBreakdown &m = plan.memory;
    auto bytes = [&](uint64_t n) {
      return b.getI64IntegerAttr(static_cast<int64_t>(n));
    };
    SmallVector<NamedAttribute> memory = {
        b.getNamedAttr("weights", bytes(m.weights)),
        b.getNamedAttr("optimizer_state", bytes(m.optimizerState)),
        b.getNamedAttr("inputs", bytes(m.inputs)),
        b.getNamedAttr("gradients", bytes(m.gradients)),
        b.getNamedAttr("activations", bytes(m.activations)),
        b.getNamedAttr("temporaries", bytes(m.temporaries)),
        b.getNamedAttr("peak_live", bytes(m.peakLive)),
        b.getNamedAttr("peak_step", b.getI64IntegerAttr(m.peakStep)),
        b.getNamedAttr("in_place", b.getI64IntegerAttr(plan.inPlace)),
    };
    // RegionStorage::OneKernel: how many values of elementwise regions
    // have no storage, and the bytes they would have taken.
    if (plan.unstored) {
      memory.push_back(b.getNamedAttr(
          "no_storage", b.getI64IntegerAttr(plan.unstored)));
      memory.push_back(
          b.getNamedAttr("no_storage_bytes", bytes(plan.unstoredBytes)));
    }
    SmallVector<NamedAttribute> donations;
    for (auto [result, argument] : plan.donations)
      donations.push_back(b.getNamedAttr(
          "result" + std::to_string(result),
          b.getI64IntegerAttr(static_cast<int64_t>(argument))));
    memory.push_back(
        b.getNamedAttr("donations", b.getDictionaryAttr(donations)));
    return b.getDictionaryAttr(memory);
  }

  static void record(func::FuncOp function, const llmc::BufferPlan &plan) {
    Builder b(function.getContext());
    for (BlockArgument arg : function.getArguments())
      function.setArgAttr(arg.getArgNumber(), "llmc.offset",
                          b.getI64IntegerAttr(static_cast<int64_t>(
                              plan.offsetOf(arg))));
    function.walk([&](Operation *op) {
      if (op->getNumResults() == 0 || isa<func::FuncOp>(op))
        return;
      SmallVector<int64_t> offsets;
      for (Value result : op->getResults())
        offsets.push_back(static_cast<int64_t>(plan.offsetOf(result)));
      op->setAttr("llmc.offsets", b.getDenseI64ArrayAttr(offsets));
    });
    function->setAttr("llmc.memory", memoryAttr(b, plan));
    function->setAttr("llmc.arena_bytes",
                      b.getI64IntegerAttr(
                          static_cast<int64_t>(plan.arenaBytes)));
  }
};

} // namespace
