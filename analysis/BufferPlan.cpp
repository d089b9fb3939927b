//===- BufferPlan.cpp - where every value of a program lives --------------===//
#include "analysis/BufferPlan.h"

#include "ir/LlmcOps.h"
#include "ir/Phase.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"

#include <algorithm>
#include <optional>

using namespace mlir;

namespace llmc {

namespace {

enum class StorageKind { Parameter, State, Input, Constant, Op };

struct Storage {
  uint64_t bytes = 0;
  int64_t first = 0, last = 0; ///< live range in steps; pinned: whole run
  StorageKind kind = StorageKind::Op;
  Operation *def = nullptr;      ///< the op of its first value (Op kind)
  Operation *lastUser = nullptr; ///< null when returned
  bool returned = false;
  uint64_t offset = 0;
  int mergedInto = -1; ///< after a donation: the argument storage
  /// A parameter or moment the program returns a new value of (same
  /// llmc.name): its buffer is free after its last read, for that value.
  bool donor = false;
  /// A pipelined program's argument that only another stage reads: the
  /// runtime never binds it on this stage, so it takes no memory (offset 0).
  bool unbound = false;
  /// A donor whose new value could not be placed in its buffer: the caller
  /// copies the new value into it after the run, so no returned value may
  /// share its bytes (it would be overwritten before it is read).
  bool feedbackTarget = false;
  /// RegionStorage::OneKernel: only values that an elementwise region's
  /// kernel keeps in registers use it, so it takes no memory (kNoStorage).
  bool unstored = false;
};

uint64_t alignedBytes(Type type) {
  uint64_t bytes = static_cast<uint64_t>(tensorBytes(type));
  return (bytes + kBufferAlignment - 1) / kBufferAlignment * kBufferAlignment;
}

bool isElementwise(Operation *op) {
  return op->hasTrait<OpTrait::Elementwise>() && op->getNumResults() == 1;
}

/// The operands whose buffer `op`'s result may take when they die at `op`:
/// an all-reduce's input; any operand of an elementwise op; the logits of cross_entropy_grad,
/// whose kernels (CPU and CUDA) read each row whole before writing that
/// row of dlogits, or, given the forward's lse, each element before the
/// same thread writes it (the classifier's bf16 [B, T, V] logits, 1.6 GB
/// for GPT-2 124M at B=16, hold dlogits then).
SmallVector<Value> inPlaceOperands(Operation *op) {
  // An all-reduce in place (NCCL's in == out, and the CPU's and the virtual
  // ranks' collectives): a bucket's flat buffer holds its sum, so the
  // kernels after an early bucket do not take its bytes and wait for it.
  if (op->getName().getStringRef() == "shard.all_reduce")
    return SmallVector<Value>(op->getOperands());
  if (isElementwise(op))
    return SmallVector<Value>(op->getOperands());
  if (auto grad = dyn_cast<CrossEntropyGradOp>(op))
    return {grad.getLogits()};
  return {};
}

/// Whether a kernel may write `result` over `operand` in place: element i
/// of both must sit at the same bytes (same element width and count), so a
/// kernel that reads element i before writing it never clobbers an element
/// it has yet to read.
bool sameLayout(Value operand, Value result) {
  auto a = cast<ShapedType>(operand.getType());
  auto b = cast<ShapedType>(result.getType());
  return a.getNumElements() == b.getNumElements() &&
         tensorBytes(a) == tensorBytes(b);
}

class Planner {
public:
  Planner(func::FuncOp function, int64_t stage)
      : function(function), stage(stage),
        stageName(StringAttr::get(function.getContext(), "llmc.stage")),
        regions(regionStorageOf(function)) {}
  FailureOr<BufferPlan> run();

private:
  Value resolve(Value value) const;
  void collectSteps(Block &block);
  LogicalResult checkStageReads(Block &body) const;
  void markKernelInternal(Operation &region, int64_t firstStep);
  int storageOf(Value value) const {
    int s = storageIds.lookup(resolve(value));
    while (storages[s].mergedInto >= 0)
      s = storages[s].mergedInto;
    return s;
  }
  int addStorage(Storage storage) {
    storages.push_back(storage);
    return static_cast<int>(storages.size()) - 1;
  }
  void assign(Value value, int storage) {
    storageIds[value] = storage;
    Storage &s = storages[storage];
    auto last = valueLast.find(value);
    if (last != valueLast.end() && last->second.first > s.last) {
      s.last = last->second.first;
      s.lastUser = last->second.second;
    }
  }
  // The steps of run(), in order.
  void findLastReads(Block &body);
  void addArgumentStorages(Block &body, func::ReturnOp ret);
  LogicalResult addOpStorages();
  void addReturnedStorages(Block &body);
  void recordOffsets(Block &body);
  void donate(func::ReturnOp ret);
  void dropKernelIntermediates();
  void placeFirstFit();
  void findPeak(BufferPlan &plan);

  /// Whether `op` runs on the planned stage (every op when not pipelined).
  bool onStage(Operation *op) const {
    if (stage < 0)
      return true;
    auto attr = op->getAttrOfType<IntegerAttr>(stageName);
    return !attr || attr.getInt() == stage;
  }
  /// The first argument named `name` (llmc.name), or null. Indexed once: a
  /// lookup per returned value over every argument's attributes was most
  /// of a pipeline stage's plan (docs/log/planning-2026-12-03.md).
  BlockArgument argumentNamed(StringAttr name);

  func::FuncOp function;
  /// The pipeline stage planned (llmc.stage of the ops), or -1: all ops.
  int64_t stage = -1;
  StringAttr stageName;
  /// argumentNamed's index, built on its first call.
  std::optional<DenseMap<StringAttr, BlockArgument>> argumentsByName;
  RegionStorage regions;
  /// RegionStorage::OneKernel: the outermost elementwise region being
  /// collected (null outside one), and the values computed inside such
  /// regions that they do not yield: the kernel keeps them in registers.
  Operation *kernelRegion = nullptr;
  llvm::DenseSet<Value> kernelInternal;
  /// Returned values that another stage computes: this stage holds a
  /// placeholder (runtime reads the value from the stage that holds it).
  llvm::DenseSet<Value> elsewhere;
  /// What this stage returns as each result: the returned value, or on a
  /// stage that runs its own copy of a tied parameter's update, the copy
  /// (the op carrying llmc.returns).
  SmallVector<Value> returned;
  std::vector<Operation *> steps;
  int64_t end = 0; ///< the step of the return
  /// Values that stand for another: region block arguments (their
  /// operand) and region results (their yielded value).
  DenseMap<Value, Value> aliases;
  /// Inputs of elementwise regions, read (as one kernel reads them) until
  /// the region's last step.
  std::vector<std::pair<Value, int64_t>> regionReads;
  /// The last step reading each (resolved) value, and the op there (null:
  /// the return).
  DenseMap<Value, std::pair<int64_t, Operation *>> valueLast;
  DenseMap<Value, int> storageIds;
  std::vector<Storage> storages;
  BufferPlan plan;
};

/// Whether the CUDA kernel generator (runtime/cuda/kernels/elementwise/FusedKernels.cpp) makes
/// one kernel of an elementwise region, from the IR: every op computes the
/// region's shape (the shape of its first result) and is elementwise, an
/// iota, a constant, or a broadcast of a value from outside the region or
/// of a constant (the generator expands broadcasts only from its inputs;
/// MoE's aux-loss backward broadcasts an intermediate).
static bool isGeneratedAsOneKernel(FusedOp region) {
  if (region.getNumResults() == 0)
    return false;
  ArrayRef<int64_t> shape =
      cast<RankedTensorType>(region.getResult(0).getType()).getShape();
  for (Operation &op : region.getBody().front().without_terminator()) {
    if (isa<ConstantOp>(op))
      continue;
    if (op.getNumResults() != 1 ||
        cast<RankedTensorType>(op.getResult(0).getType()).getShape() != shape)
      return false;
    if (auto broadcast = dyn_cast<BroadcastOp>(op)) {
      Operation *source = broadcast.getInput().getDefiningOp();
      if (source && !isa<ConstantOp>(source))
        return false;
      continue;
    }
    if (!isa<IotaOp>(op) && !op.hasTrait<llmc::OpTrait::Elementwise>())
      return false;
  }
  return true;
}

Value Planner::resolve(Value value) const {
  for (auto it = aliases.find(value); it != aliases.end();
       it = aliases.find(value))
    value = it->second;
  return value;
}

void Planner::collectSteps(Block &block) {
  for (Operation &op : block) {
    if (op.hasTrait<mlir::OpTrait::IsTerminator>() || !onStage(&op))
      continue;
    if (op.getNumRegions() == 1 && op.getRegion(0).hasOneBlock()) {
      // A region stands for its body, inlined: its arguments are the op's
      // operands, its results what the body yields.
      Block &body = op.getRegion(0).front();
      for (auto [arg, operand] :
           llvm::zip(body.getArguments(), op.getOperands()))
        aliases[arg] = operand;
      for (auto [result, yielded] :
           llvm::zip(op.getResults(), body.getTerminator()->getOperands()))
        aliases[result] = yielded;
      int64_t firstStep = static_cast<int64_t>(steps.size());
      auto fused = dyn_cast<FusedOp>(op);
      bool oneKernel = fused && fused.getKind() == FusionKind::elementwise;
      // Intermediates go without storage only where the CUDA kernel
      // generator makes one kernel of the region (runtime/cuda/
      // FusedKernels.cpp); another region keeps them and runs op by op.
      bool outermostKernel = regions == RegionStorage::OneKernel &&
                             oneKernel && !kernelRegion &&
                             isGeneratedAsOneKernel(fused);
      if (outermostKernel)
        kernelRegion = &op;
      collectSteps(body);
      if (outermostKernel) {
        kernelRegion = nullptr;
        markKernelInternal(op, firstStep);
      }
      // A backend may run an elementwise region as one kernel (the CUDA
      // session does), reading every input while it writes the results:
      // the storage of each input stays reserved to the region's last step
      // (step 2 below), so that no value of the region is placed over part
      // of one. Writing in place over an input (the same bytes, element i
      // over element i) stays allowed. runtime/cuda/kernels/elementwise/FusedKernels.cpp
      // refuses any other overlap; before this, GPT-2 124M at B=16 had one
      // (h.0.ln_1's backward) and wrong embedding gradients.
      int64_t lastStep = static_cast<int64_t>(steps.size()) - 1;
      if (oneKernel && lastStep > firstStep)
        for (Value operand : op.getOperands())
          regionReads.push_back({operand, lastStep});
      continue;
    }
    steps.push_back(&op);
  }
}

/// The values that the steps of `region` (from `firstStep` on) compute and
/// that it does not yield (through nested regions too) never leave the
/// kernel. Constants are loaded data, so they keep their storage.
void Planner::markKernelInternal(Operation &region, int64_t firstStep) {
  llvm::DenseSet<Value> yielded;
  for (Value result : region.getResults())
    yielded.insert(resolve(result));
  for (int64_t step = firstStep; step < static_cast<int64_t>(steps.size());
       ++step) {
    Operation *op = steps[step];
    if (isa<ConstantOp, AxisOffsetOp>(op))
      continue;
    for (Value result : op->getResults())
      if (!yielded.contains(result))
        kernelInternal.insert(result);
  }
}

/// A pipelined stage's ops read only values of that stage (a value of
/// another reaches it through llmc.recv) or arguments. An op without
/// llmc.stage runs on every stage; if it reads one stage's value, the
/// other stages have no such value (a pass after llmc-split-pipeline
/// created it without copyPipelinePlacement): an error here, so that
/// `llmc plan` and the mesh search refuse what codegen would.
LogicalResult Planner::checkStageReads(Block &body) const {
  if (stage < 0)
    return success();
  for (Operation *op : steps)
    for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
      Value value = resolve(operand);
      Operation *def = value.getDefiningOp();
      if (!def)
        continue; // an argument (or a region's, resolved to its operand)
      Operation *top = body.findAncestorOpInBlock(*def);
      if (!top || onStage(top))
        continue;
      auto there = top->getAttrOfType<IntegerAttr>("llmc.stage");
      InFlightDiagnostic diag =
          op->emitOpError() << "buffer plan: operand #" << i
                            << " does not exist on pipeline stage " << stage
                            << ", which runs this op";
      // An op of a region has its region's placement.
      Operation *runner = body.findAncestorOpInBlock(*op);
      if (runner && !runner->hasAttr("llmc.stage"))
        diag << " (it has no llmc.stage: a pass after llmc-split-pipeline "
                "created it without copyPipelinePlacement)";
      if (there)
        diag.attachNote(top->getLoc())
            << "the operand is made on stage " << there.getInt() << " here";
      return failure();
    }
  return success();
}

FailureOr<BufferPlan> Planner::run() {
  Block &body = function.getBody().front();
  collectSteps(body);
  if (failed(checkStageReads(body)))
    return failure();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  end = static_cast<int64_t>(steps.size());
  returned.assign(ret.getOperands().begin(), ret.getOperands().end());
  for (Operation *op : steps)
    if (auto indices = op->getAttrOfType<DenseI64ArrayAttr>("llmc.returns"))
      for (int64_t i : indices.asArrayRef())
        if (stage >= 0 && i < static_cast<int64_t>(returned.size()))
          returned[i] = op->getResult(0);

  findLastReads(body);
  addArgumentStorages(body, ret);
  if (failed(addOpStorages()))
    return failure();
  addReturnedStorages(body);
  donate(ret);
  // A returned value written in place into the buffer of an argument that
  // then receives a copy of another output would be overwritten by that
  // copy before the caller reads it.
  for (auto [index, operand] : llvm::enumerate(returned))
    if (!elsewhere.contains(operand) && storageIds.count(operand) &&
        storages[storageOf(operand)].feedbackTarget)
      return function.emitError()
             << "buffer plan: result #" << index
             << " is written in place into the buffer of an argument whose "
                "new value goes elsewhere; the copy back after the run would "
                "overwrite it";
  dropKernelIntermediates();
  placeFirstFit();
  findPeak(plan);
  recordOffsets(body);
  return std::move(plan);
}

/// 1. The last read of every value.
void Planner::findLastReads(Block &body) {
  auto read = [&](Value value, int64_t step, Operation *user) {
    auto &last = valueLast[resolve(value)];
    if (step >= last.first)
      last = {step, user};
  };
  for (BlockArgument arg : body.getArguments())
    valueLast[arg] = {-1, nullptr};
  for (auto [step, op] : llvm::enumerate(steps))
    for (Value operand : op->getOperands())
      read(operand, static_cast<int64_t>(step), op);
  for (Value operand : returned)
    read(operand, end, nullptr);
}

/// 2. Storages, in program order: the arguments' (donated where their new
/// value is returned), ...
void Planner::addArgumentStorages(Block &body, func::ReturnOp ret) {
  // The names of the returned values, for donation (and those another
  // pipeline stage computes).
  llvm::StringSet<> returnedNames, madeByOtherStages;
  for (unsigned index = 0; index < ret.getNumOperands(); ++index)
    if (auto name =
            function.getResultAttrOfType<StringAttr>(index, "llmc.name")) {
      returnedNames.insert(name.getValue());
      Operation *def = returned[index].getDefiningOp();
      if (def && !onStage(def))
        madeByOtherStages.insert(name.getValue());
    }

  for (BlockArgument arg : body.getArguments()) {
    auto role = function.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                      "llmc.role");
    Storage s;
    s.bytes = alignedBytes(arg.getType());
    s.first = -1;
    s.last = end;
    s.kind = !role                                  ? StorageKind::Input
             : role.getValue() == "parameter"       ? StorageKind::Parameter
             : role.getValue() == "optimizer_state" ? StorageKind::State
                                                    : StorageKind::Input;
    auto name =
        function.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "llmc.name");
    auto argStage =
        function.getArgAttrOfType<IntegerAttr>(arg.getArgNumber(), "llmc.stage");
    if (stage >= 0 && argStage && argStage.getInt() != stage) {
      s.unbound = true;
      storageIds[arg] = addStorage(s);
      continue;
    }
    // A pipelined program's argument that no op of this stage reads but
    // that the runtime binds here (several stages read it): it keeps its
    // buffer, which nothing else may use.
    // Nor is an argument donated whose new value another stage computes:
    // feeding that value back writes this buffer.
    bool unread = stage >= 0 && valueLast[arg].first < 0;
    bool madeElsewhere = name && madeByOtherStages.contains(name.getValue());
    if ((s.kind == StorageKind::Parameter || s.kind == StorageKind::State) &&
        name && returnedNames.contains(name.getValue()) && !unread &&
        !madeElsewhere) {
      // Donated: its buffer holds it until its last read, then whatever
      // is written over it in place (ideally, its new value). The caller
      // feeds the new values back, so nothing is lost.
      s.donor = true;
      s.last = valueLast[arg].first;
      s.lastUser = valueLast[arg].second;
    }
    storageIds[arg] = addStorage(s);
  }
}

/// ... the ops' (constants for the whole run, views sharing their operand's,
/// in place over a dying operand where it can be) ...
LogicalResult Planner::addOpStorages() {
  for (auto [index, op] : llvm::enumerate(steps)) {
    int64_t step = static_cast<int64_t>(index);
    for (Value result : op->getResults())
      if (!cast<ShapedType>(result.getType()).hasStaticShape())
        return op->emitError()
               << "buffer plan: expected a statically shaped result, got "
               << result.getType();
    // Constants (and a rank's axis offsets, constants per rank) are written
    // once when the program is loaded, so they keep their storage.
    if (isa<ConstantOp, AxisOffsetOp>(op)) {
      Storage s;
      s.bytes = alignedBytes(op->getResult(0).getType());
      s.first = -1;
      s.last = end;
      s.kind = StorageKind::Constant;
      storageIds[op->getResult(0)] = addStorage(s);
      continue;
    }
    if (auto reshape = dyn_cast<ReshapeOp>(op)) {
      assign(reshape.getResult(), storageOf(reshape.getInput()));
      continue;
    }
    if (SmallVector<Value> candidates = inPlaceOperands(op);
        !candidates.empty()) {
      // In place over an operand that dies here: a donated argument first
      // (so that an update chain runs in its argument's buffer), else a
      // temporary.
      Value result = op->getResult(0);
      uint64_t bytes = alignedBytes(result.getType());
      int chosen = -1;
      for (bool donorsFirst : {true, false})
        for (Value operand : candidates) {
          if (chosen >= 0)
            break;
          int s = storageOf(operand);
          const Storage &candidate = storages[s];
          bool eligible = donorsFirst ? candidate.donor
                                      : candidate.kind == StorageKind::Op;
          if (eligible && candidate.last == step &&
              candidate.bytes == bytes && sameLayout(operand, result))
            chosen = s;
        }
      if (chosen >= 0) {
        ++plan.inPlace;
        assign(result, chosen);
        continue;
      }
    }
    for (Value result : op->getResults()) {
      Storage s;
      s.bytes = alignedBytes(result.getType());
      s.first = s.last = step;
      s.def = op;
      s.lastUser = op;
      assign(result, addStorage(s));
    }
  }
  return success();
}

/// ... and the returned values' (live to the end).
void Planner::addReturnedStorages(Block &body) {
  for (auto [operand, step] : regionReads) {
    Storage &s = storages[storageOf(operand)];
    s.last = std::max(s.last, step);
  }
  // A value another stage returns: the argument of its name lends its
  // buffer (never written here), else a placeholder at the end.
  for (auto [index, operand] : llvm::enumerate(returned)) {
    Operation *def = operand.getDefiningOp();
    if (!def || onStage(def) || storageIds.count(operand))
      continue;
    elsewhere.insert(operand);
    auto name = function.getResultAttrOfType<StringAttr>(
        static_cast<unsigned>(index), "llmc.name");
    if (BlockArgument arg = name ? argumentNamed(name) : BlockArgument())
      storageIds[operand] = storageIds.lookup(arg);
    if (storageIds.count(operand))
      continue;
    Storage s;
    s.bytes = alignedBytes(operand.getType());
    s.first = s.last = end;
    storageIds[operand] = addStorage(s);
  }
  for (Value operand : returned) {
    if (elsewhere.contains(operand))
      continue;
    Storage &s = storages[storageOf(operand)];
    s.returned = true;
    s.last = end;
    s.lastUser = nullptr;
  }
}

BlockArgument Planner::argumentNamed(StringAttr name) {
  if (!argumentsByName) {
    argumentsByName.emplace();
    for (BlockArgument arg : function.getBody().front().getArguments())
      if (auto argName = function.getArgAttrOfType<StringAttr>(
              arg.getArgNumber(), "llmc.name"))
        argumentsByName->try_emplace(argName, arg);
  }
  return argumentsByName->lookup(name);
}

/// 3. Every value's offset: arguments, results, region values.
void Planner::recordOffsets(Block &body) {
  auto record = [&](Value value) {
    plan.offsets[value] = storages[storageOf(value)].offset;
  };
  for (BlockArgument arg : body.getArguments())
    record(arg);
  function.walk<WalkOrder::PreOrder>([&](Operation *op) {
    if (op->getParentOp() == function.getOperation() && !onStage(op) &&
        !isa<func::ReturnOp>(op)) {
      for (Value result : op->getResults())
        if (elsewhere.contains(result))
          record(result);
      return WalkResult::skip();
    }
    for (Value result : op->getResults())
      record(result);
    for (Region &region : op->getRegions())
      for (Block &block : region)
        for (BlockArgument arg : block.getArguments())
          record(arg);
    return WalkResult::advance();
  });
}

/// The new value of a parameter or moment written into the argument's
/// buffer, when the argument is read for the last time before the value's
/// buffer is first written (or at that op, when it is elementwise and so
/// safe in place). The in-place case at the last read is taken while
/// assigning; this takes the rest (e.g. m' = b1 m + (1 - b1) g, whose
/// buffer starts at b1 m).
void Planner::donate(func::ReturnOp ret) {
  Block &body = function.getBody().front();
  for (auto [index, operand] : llvm::enumerate(returned)) {
    auto name = function.getResultAttrOfType<StringAttr>(
        static_cast<unsigned>(index), "llmc.name");
    if (!name || elsewhere.contains(operand))
      continue;
    BlockArgument arg = argumentNamed(name);
    if (!arg)
      continue;
    int a = storageOf(arg), r = storageOf(operand);
    Storage &donor = storages[a], &taker = storages[r];
    if (a == r && donor.donor) {
      // Written in place over the argument while assigning.
      plan.donations.push_back(
          {static_cast<unsigned>(index), arg.getArgNumber()});
      continue;
    }
    if (a == r || !donor.donor || taker.kind != StorageKind::Op ||
        donor.bytes != taker.bytes)
      continue;
    // The argument's buffer may hold other values after its last read
    // (in place); the returned chain can move in only if it is free.
    if (donor.last != valueLast[arg].first)
      continue;
    // One value per buffer at a time: the storage may hold only the
    // returned chain.
    bool shared = llvm::any_of(returned, [&](Value other) {
      return other != operand && storageOf(other) == r;
    });
    int64_t lastRead = valueLast[arg].first;
    if (shared || lastRead >= taker.first)
      continue;
    taker.mergedInto = a;
    donor.last = std::max(donor.last, taker.last);
    plan.donations.push_back(
        {static_cast<unsigned>(index), arg.getArgNumber()});
  }
  llvm::DenseSet<unsigned> donatedArgs;
  for (auto [result, argNumber] : plan.donations)
    donatedArgs.insert(argNumber);
  for (BlockArgument arg : body.getArguments())
    if (!donatedArgs.contains(arg.getArgNumber()) && storageIds.count(arg)) {
      Storage &s = storages[storageOf(arg)];
      s.feedbackTarget = s.donor && !s.unbound;
    }
}

/// RegionStorage::OneKernel: a storage that only kernel-internal values use
/// takes no memory. One that such a value shares with a stored value (in
/// place over a region input, or a result written in place over it) keeps
/// its bytes.
void Planner::dropKernelIntermediates() {
  if (kernelInternal.empty())
    return;
  std::vector<bool> stored(storages.size(), false);
  for (auto [value, id] : storageIds)
    if (!kernelInternal.contains(value))
      stored[storageOf(value)] = true;
  for (int s = 0; s < static_cast<int>(storages.size()); ++s)
    if (storages[s].mergedInto < 0 && !stored[s])
      storages[s].unstored = true;
  for (Value value : kernelInternal)
    if (storages[storageOf(value)].unstored) {
      ++plan.unstored;
      plan.unstoredBytes += alignedBytes(value.getType());
    }
}

void Planner::placeFirstFit() {
  std::vector<int> order;
  for (int s = 0; s < static_cast<int>(storages.size()); ++s) {
    if (storages[s].unstored) {
      storages[s].offset = kNoStorage;
      continue;
    }
    if (storages[s].unbound) {
      // Never read or written: at offset 0, inside the arena.
      storages[s].offset = 0;
      plan.arenaBytes = std::max(plan.arenaBytes, storages[s].bytes);
      continue;
    }
    if (storages[s].mergedInto < 0)
      order.push_back(s);
  }
  // Largest first: fewer holes. Ties in program order, for a stable plan.
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return storages[a].bytes > storages[b].bytes;
  });
  struct Placed {
    uint64_t offset, end;
    int64_t first, last;
    bool returned, feedbackTarget;
  };
  // `placed` is kept sorted by (offset, end): scanning it in that order and
  // skipping the storages whose lifetime does not meet this one's visits
  // the busy ranges in the order a sort of them would give (the first fit
  // of the plain algorithm, to the byte), without sorting them again for
  // every storage (the sort was half of a mesh search's time: 7B LLaMA on
  // 64 GPUs, perf).
  std::vector<Placed> placed;
  placed.reserve(order.size());
  for (int index : order) {
    Storage &s = storages[index];
    uint64_t offset = 0;
    for (const Placed &p : placed) {
      bool busy = (p.first <= s.last && s.first <= p.last) ||
                  (p.returned && s.feedbackTarget) ||
                  (p.feedbackTarget && s.returned);
      if (!busy)
        continue;
      if (offset + s.bytes <= p.offset)
        break;
      offset = std::max(offset, p.end);
    }
    s.offset = offset;
    Placed mine{offset, offset + s.bytes, s.first, s.last, s.returned,
                s.feedbackTarget};
    auto at = std::upper_bound(placed.begin(), placed.end(), mine,
                               [](const Placed &a, const Placed &b) {
                                 return a.offset != b.offset
                                            ? a.offset < b.offset
                                            : a.end < b.end;
                               });
    placed.insert(at, mine);
    plan.arenaBytes = std::max(plan.arenaBytes, offset + s.bytes);
  }
}

void Planner::findPeak(BufferPlan &result) {
  // Sweep: +bytes at first, -bytes after last.
  std::vector<std::pair<int64_t, int64_t>> events;
  for (const Storage &s : storages)
    if (s.mergedInto < 0 && !s.unbound && !s.unstored) {
      events.push_back({s.first, static_cast<int64_t>(s.bytes)});
      events.push_back({s.last + 1, -static_cast<int64_t>(s.bytes)});
    }
  std::sort(events.begin(), events.end());
  int64_t live = 0, best = -1, bestStep = -1;
  for (size_t i = 0; i < events.size();) {
    int64_t step = events[i].first;
    for (; i < events.size() && events[i].first == step; ++i)
      live += events[i].second;
    if (live > best) {
      best = live;
      bestStep = step;
    }
  }
  MemoryBreakdown &m = result.memory;
  m.peakStep = bestStep;
  // The activations kept for backward alone, swept the same way.
  std::vector<std::pair<int64_t, int64_t>> kept;
  for (const Storage &s : storages) {
    if (s.mergedInto >= 0 || s.unbound || s.unstored ||
        s.kind != StorageKind::Op ||
        s.returned || !s.def || !s.lastUser ||
        phaseOf(s.def->getLoc()) != Phase::Forward ||
        phaseOf(s.lastUser->getLoc()) != Phase::Backward)
      continue;
    kept.push_back({s.first, static_cast<int64_t>(s.bytes)});
    kept.push_back({s.last + 1, -static_cast<int64_t>(s.bytes)});
  }
  std::sort(kept.begin(), kept.end());
  int64_t keptLive = 0;
  for (auto [step, bytes] : kept) {
    keptLive += bytes;
    m.mostActivations =
        std::max<uint64_t>(m.mostActivations, static_cast<uint64_t>(keptLive));
  }
  for (const Storage &s : storages) {
    if (s.mergedInto >= 0 || s.unbound || s.unstored || s.first > bestStep ||
        s.last < bestStep)
      continue;
    uint64_t *bucket = &m.temporaries;
    const char *kind = "temporaries";
    switch (s.kind) {
    case StorageKind::Parameter:
      bucket = &m.weights;
      kind = "weights";
      break;
    case StorageKind::State:
      bucket = &m.optimizerState;
      kind = "optimizer state";
      break;
    case StorageKind::Input:
    case StorageKind::Constant:
      bucket = &m.inputs;
      kind = "inputs and constants";
      break;
    case StorageKind::Op: {
      Phase made = s.def ? phaseOf(s.def->getLoc()) : Phase::Forward;
      std::optional<Phase> read;
      if (!s.returned && s.lastUser)
        read = phaseOf(s.lastUser->getLoc());
      if (made == Phase::Forward && read == Phase::Backward) {
        bucket = &m.activations;
        kind = "activations";
      } else if (made == Phase::Backward &&
                 (s.returned || read == Phase::Optimizer)) {
        bucket = &m.gradients;
        kind = "gradients";
      }
      break;
    }
    }
    *bucket += s.bytes;
    m.peakLive += s.bytes;
    PeakBuffer live;
    live.bytes = s.bytes;
    live.kind = kind;
    live.def = s.def;
    live.lastUser = s.lastUser;
    live.first = s.first;
    live.last = s.last;
    result.peakBuffers.push_back(live);
  }
  std::stable_sort(result.peakBuffers.begin(), result.peakBuffers.end(),
                   [](const PeakBuffer &a, const PeakBuffer &b) {
                     return a.bytes > b.bytes;
                   });
}

} // namespace

RegionStorage regionStorageOf(func::FuncOp function) {
  return function->hasAttr(kFusedKernelsAttrName) ? RegionStorage::OneKernel
                                                  : RegionStorage::Inlined;
}

FailureOr<BufferPlan> planBuffers(func::FuncOp function, int64_t stage) {
  if (!function.getBody().hasOneBlock())
    return function.emitError() << "buffer plan: expected one block";
  return Planner(function, stage).run();
}

} // namespace llmc
