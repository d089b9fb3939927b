//===- BuildExecutable.cpp - lower the final IR to an Executable ----------===//
//
// 1. Give every value a slot (function arguments first, then op results in
//    program order); a reshape result shares its operand's storage.
// 2. Turn every op into a command: the kernel id comes from the op class,
//    the attributes are laid out as Kernels.def documents
//    (LowerKernels.cpp); fused regions, collectives and transfers here and
//    in LowerMatmulEpilogue.cpp and LowerCollectives.cpp.
// 3. Plan buffers: first fit over the values' live ranges, so storage is
//    reused once a value is dead. Arguments, constants and outputs live for
//    the whole run.
//
//===----------------------------------------------------------------------===//

#include "codegen/BuildExecutable.h"
#ifdef LLMC_CODEGEN_CUDA
#include "codegen/cuda/PlanKernels.h"
#endif
#include "analysis/BufferPlan.h"
#include "codegen/Lowering.h"
#include "ir/LlmcOps.h"
#include "ir/Phase.h"
#include "sharding/Sharding.h"

#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <cmath>
#include <map>

using namespace mlir;

namespace llmc {

namespace codegen {

FailureOr<rt::DType> toDType(Type element, Location loc) {
  if (element.isF32())
    return rt::DType::F32;
  if (element.isF64())
    return rt::DType::F64;
  if (element.isBF16())
    return rt::DType::BF16;
  if (element.isF16())
    return rt::DType::F16;
  if (element.isInteger(32))
    return rt::DType::I32;
  if (element.isInteger(64))
    return rt::DType::I64;
  if (element.isInteger(1))
    return rt::DType::I1;
  if (isa<Float8E4M3FNType>(element))
    return rt::DType::F8E4M3FN;
  if (isa<Float8E5M2Type>(element))
    return rt::DType::F8E5M2;
  return emitError(loc) << "codegen: no runtime element type for " << element;
}

std::string locationText(Location loc) {
  std::string part = llmc::modelPartOf(loc);
  if (part.empty()) {
    llvm::raw_string_ostream os(part);
    loc.print(os);
  }
  llmc::Phase phase = llmc::phaseOf(loc);
  if (phase != llmc::Phase::Forward)
    part += " (" + llmc::phaseName(phase).str() + ")";
  return part;
}

rt::InitSpec initSpec(DictionaryAttr init) {
  rt::InitSpec spec;
  if (!init)
    return spec;
  auto kind = init.getAs<StringAttr>("kind");
  if (auto scale = init.getAs<FloatAttr>("scale"))
    spec.scale = scale.getValueAsDouble();
  // A constant initializer carries its value in `scale`.
  if (auto value = init.getAs<FloatAttr>("value"))
    spec.scale = value.getValueAsDouble();
  if (!kind)
    return spec;
  StringRef k = kind.getValue();
  spec.kind = k == "normal"    ? rt::InitSpec::Kind::Normal
              : k == "uniform" ? rt::InitSpec::Kind::Uniform
              : k == "zeros"   ? rt::InitSpec::Kind::Zeros
              : k == "ones"    ? rt::InitSpec::Kind::Ones
              : k == "constant" ? rt::InitSpec::Kind::Constant
                               : rt::InitSpec::Kind::None;
  return spec;
}


std::vector<int> groupOf(const Mesh &mesh, int rank, ArrayRef<int64_t> axes,
                         int &position) {
  int64_t n = static_cast<int64_t>(mesh.sizes.size());
  SmallVector<int64_t> coords(n);
  int64_t rest = rank;
  for (int64_t a = n - 1; a >= 0; --a) {
    coords[a] = rest % mesh.sizes[a];
    rest /= mesh.sizes[a];
  }
  position = 0;
  for (int64_t axis : axes)
    position = position * static_cast<int>(mesh.sizes[axis]) +
               static_cast<int>(coords[axis]);
  std::vector<int> group;
  int64_t members = mesh.ways(axes);
  for (int64_t m = 0; m < members; ++m) {
    int64_t left = m;
    for (int64_t i = static_cast<int64_t>(axes.size()) - 1; i >= 0; --i) {
      coords[axes[i]] = left % mesh.sizes[axes[i]];
      left /= mesh.sizes[axes[i]];
    }
    int64_t r = 0;
    for (int64_t a = 0; a < n; ++a)
      r = r * mesh.sizes[a] + coords[a];
    group.push_back(static_cast<int>(r));
  }
  return group;
}

SmallVector<int64_t> axesOf(ArrayRef<int16_t> axes) {
  return SmallVector<int64_t>(axes.begin(), axes.end());
}

rt::TensorSharding runtimeSharding(const Sharding &sharding) {
  rt::TensorSharding out;
  if (sharding.isReplicated())
    return out;
  for (const DimSplit &dim : sharding.dims) {
    rt::DimSharding d;
    for (int64_t axis : dim.axes)
      d.axes.push_back(static_cast<int32_t>(axis));
    d.groups = dim.isSplit() ? dim.groups : 1;
    d.zigzag = dim.isSplit() && dim.zigzag;
    out.dims.push_back(std::move(d));
  }
  return out;
}

FailureOr<int32_t> Lowering::addValue(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  Location loc = value.getLoc();
  if (!type || !type.hasStaticShape())
    return emitError(loc) << "codegen: expected a statically shaped tensor, "
                             "got "
                          << value.getType();
  FailureOr<rt::DType> dtype = toDType(type.getElementType(), loc);
  if (failed(dtype))
    return failure();
  int32_t slot = static_cast<int32_t>(rank.values.size());
  rank.values.push_back(
      rt::ValueInfo{*dtype, toVector(type.getShape()), /*offset=*/0});
  slots[value] = slot;
  return slot;
}

void Lowering::addCommand(Operation *op, rt::KernelKind kernel,
                          rt::KernelAttrs attrs, rt::CommandKind kind) {
  rt::Command command;
  command.kind = kind;
  command.kernel = kernel;
  command.attrs = std::move(attrs);
  command.origin = locationText(op->getLoc());
  for (Value operand : op->getOperands())
    command.inputs.push_back(slotOf(operand));
  for (Value result : op->getResults())
    command.outputs.push_back(slotOf(result));
  rank.commands.push_back(std::move(command));
}

/// The CPU backend runs a region's ops as ordinary commands, in order: the
/// block arguments are their operands' slots and the results their yielded
/// values' slots, so the program is the unfused one, bit for bit. Running
/// the region as one kernel comes with the CUDA backend (#7).
LogicalResult Lowering::lowerFused(FusedOp fused) {
  Block &body = fused.getBody().front();
  for (auto [arg, input] : llvm::zip(body.getArguments(), fused.getInputs()))
    slots[arg] = slotOf(input);
  if (succeeded(lowerSumOfSquares(fused)))
    return success();
  if (fused.getKind() == FusionKind::matmul_epilogue) {
    FailureOr<bool> lowered = lowerMatmulEpilogue(fused);
    if (failed(lowered))
      return failure();
    if (*lowered)
      return success();
  }
  size_t first = rank.commands.size();
  ReduceSumOp biasGradient = biasGradientOf.lookup(fused);
  for (Operation &inner : body) {
    if (auto matmul = dyn_cast<MatmulOp>(inner); matmul && biasGradient) {
      lowerBiasGradientGemm(fused, matmul, biasGradient);
      continue;
    }
    if (auto yield = dyn_cast<YieldOp>(inner)) {
      for (auto [result, value] :
           llvm::zip(fused.getResults(), yield.getValues()))
        slots[result] = slotOf(value);
      continue;
    }
    if (failed(lowerOp(&inner)))
      return failure();
  }
  // An elementwise region is announced by a FusedElementwise marker before
  // its commands, so that a backend can run them as one kernel.
  size_t count = rank.commands.size() - first;
  if (fused.getKind() != FusionKind::elementwise || count < 2)
    return success();
  rt::Command marker;
  marker.kind = rt::CommandKind::Kernel;
  marker.kernel = rt::KernelKind::FusedElementwise;
  marker.attrs.ints = {static_cast<int64_t>(count)};
  marker.origin = locationText(fused.getLoc());
  for (Value input : fused.getInputs())
    marker.inputs.push_back(slotOf(input));
  // Constants inside the region (the splat scalars fusion pulls in) are
  // data in the arena, loaded once: the kernel reads them as inputs.
  for (ConstantOp constant : body.getOps<ConstantOp>())
    marker.inputs.push_back(slotOf(constant.getResult()));
  for (Value result : fused.getResults())
    marker.outputs.push_back(slotOf(result));
  rank.commands.insert(rank.commands.begin() + first, std::move(marker));
  return success();
}

/// A row_reduction region of exactly {mul(x, x), reduce_sum of every
/// dimension} with x f32 (llmc-fuse gives the gradient norm's terms such a
/// region each) becomes one SumSquares command reading x: the same bits on
/// the CPU (Kernels.def), and on the GPU no stored squares. The square keeps
/// its value slot (the buffer plan placed it) but no command writes it.
/// Fails, adding nothing, for any other region.
LogicalResult Lowering::lowerSumOfSquares(FusedOp fused) {
  Block &body = fused.getBody().front();
  if (fused.getKind() != FusionKind::row_reduction ||
      body.getOperations().size() != 3)
    return failure();
  auto mul = dyn_cast<MulOp>(&body.front());
  auto reduce = dyn_cast_or_null<ReduceSumOp>(mul ? mul->getNextNode() : nullptr);
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!mul || !reduce || mul.getLhs() != mul.getRhs() ||
      reduce.getInput() != mul.getResult() ||
      yield.getValues().size() != 1 ||
      yield.getValues()[0] != reduce.getResult())
    return failure();
  auto inType = cast<RankedTensorType>(mul.getLhs().getType());
  auto outType = cast<RankedTensorType>(reduce.getResult().getType());
  if (!inType.getElementType().isF32() || !outType.getElementType().isF32() ||
      outType.getRank() != 0 || inType.getRank() == 0)
    return failure();
  for (Value value : {mul.getResult(), reduce.getResult()})
    if (failed(addValue(value)))
      return failure();
  rt::Command command;
  command.kind = rt::CommandKind::Kernel;
  command.kernel = rt::KernelKind::SumSquares;
  command.origin = locationText(fused.getLoc());
  command.inputs.push_back(slotOf(mul.getLhs()));
  command.outputs.push_back(slotOf(reduce.getResult()));
  rank.commands.push_back(std::move(command));
  slots[fused.getResult(0)] = slotOf(reduce.getResult());
  return success();
}

LogicalResult Lowering::lowerOp(Operation *op) {
  // Every operand must exist on this rank: a value another pipeline stage
  // makes reaches this one through llmc.recv. Without the check its slot
  // would read as 0, the first argument (of another shape).
  for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
    if (slots.count(operand))
      continue;
    auto here = op->getAttrOfType<IntegerAttr>("llmc.stage");
    Operation *def = operand.getDefiningOp();
    auto there =
        def ? def->getAttrOfType<IntegerAttr>("llmc.stage") : IntegerAttr();
    InFlightDiagnostic diag = op->emitOpError()
                              << "codegen: operand #" << i
                              << " does not exist on pipeline stage " << stage
                              << " (rank " << rankIndex << "), which runs this op";
    if (!here)
      diag << " (it has no llmc.stage: a pass after llmc-split-pipeline "
              "created it without copyPipelinePlacement)";
    if (there)
      diag.attachNote(def->getLoc())
          << "the operand is made on stage " << there.getInt() << " here";
    return failure();
  }
  if (auto fused = dyn_cast<FusedOp>(op))
    return lowerFused(fused);
  for (Value result : op->getResults())
    if (failed(addValue(result)))
      return failure();
  if (isa<shard::ShardDialect>(op->getDialect()))
    return lowerShardOp(op);
  if (auto reduce = dyn_cast<ReduceSumOp>(op)) {
    FailureOr<bool> deferred = deferBiasGradient(reduce);
    if (failed(deferred))
      return failure();
    if (*deferred) // written by its weight-gradient GEMM
      return success();
  }
  if (isa<SendOp, RecvOp>(op))
    return lowerTransfer(op);
  return lowerKernelOp(op);
}


LogicalResult Lowering::run() {
  // 1. Arguments.
  for (BlockArgument arg : function.getArguments()) {
    FailureOr<int32_t> slot = addValue(arg);
    if (failed(slot))
      return failure();
    unsigned i = arg.getArgNumber();
    rt::ArgumentInfo info;
    auto name = function.getArgAttrOfType<StringAttr>(i, "llmc.name");
    auto role = function.getArgAttrOfType<StringAttr>(i, "llmc.role");
    info.name = name ? name.getValue().str() : "arg" + std::to_string(i);
    info.role = !role                                 ? rt::ArgumentRole::Input
                : role.getValue() == "parameter"       ? rt::ArgumentRole::Parameter
                : role.getValue() == "optimizer_state" ? rt::ArgumentRole::OptimizerState
                                                       : rt::ArgumentRole::Input;
    info.value = *slot;
    info.init =
        initSpec(function.getArgAttrOfType<DictionaryAttr>(i, "llmc.init"));
    FailureOr<rt::TensorSharding> sharding = shardingAttr(
        function.getArgAttrDict(i),
        cast<RankedTensorType>(arg.getType()).getRank(), arg.getLoc());
    if (failed(sharding))
      return failure();
    info.sharding = std::move(*sharding);
    if (auto holder = function.getArgAttrOfType<IntegerAttr>(i, "llmc.stage");
        holder && stage >= 0)
      info.pipelineStage = static_cast<int32_t>(holder.getInt());
    if (rankIndex == 0)
      exe.arguments.push_back(std::move(info));
  }
  // A stage that runs its own copy of a tied parameter's update returns
  // the copy (llmc.returns names the results it stands for).
  std::map<unsigned, Value> replicaOf;
  if (stage >= 0)
    function.walk([&](Operation *op) {
      auto indices = op->getAttrOfType<DenseI64ArrayAttr>("llmc.returns");
      if (indices && onStage(op))
        for (int64_t i : indices.asArrayRef())
          replicaOf[static_cast<unsigned>(i)] = op->getResult(0);
    });
  // 2. Ops.
  for (Operation &op : function.getBody().front()) {
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      // Outputs are named by their llmc.name result attribute (the passes
      // name "loss", "grad.<param>", the new parameters and state); else
      // the single result of @loss is "loss" and others "output<i>".
      bool named = ret.getNumOperands() == 1 && function.getSymName() == "loss";
      for (auto [i, returnedValue] : llvm::enumerate(ret.getOperands())) {
        auto replica = replicaOf.find(static_cast<unsigned>(i));
        Value operand =
            replica != replicaOf.end() ? replica->second : returnedValue;
        // Made on another stage: a slot here that nothing writes (the
        // runtime reads the output on the stage that holds it).
        if (!slots.count(operand) && failed(addValue(operand)))
          return failure();
        int32_t slot = slotOf(operand);
        auto name = function.getResultAttrOfType<StringAttr>(
            static_cast<unsigned>(i), "llmc.name");
        FailureOr<rt::TensorSharding> sharding = shardingAttr(
            function.getResultAttrDict(static_cast<unsigned>(i)),
            cast<RankedTensorType>(operand.getType()).getRank(),
            ret.getLoc());
        if (failed(sharding))
          return failure();
        rt::OutputInfo out{name    ? name.getValue().str()
                           : named ? "loss"
                                   : "output" + std::to_string(i),
                           slot, std::move(*sharding)};
        if (auto holder = function.getResultAttrOfType<IntegerAttr>(
                static_cast<unsigned>(i), "llmc.stage");
            holder && stage >= 0)
          out.pipelineStage = static_cast<int32_t>(holder.getInt());
        if (auto replicas = function.getResultAttrOfType<DenseI64ArrayAttr>(
                static_cast<unsigned>(i), "llmc.replicas");
            replicas && stage >= 0)
          for (int64_t r : replicas.asArrayRef())
            out.replicaStages.push_back(static_cast<int32_t>(r));
        outputs.push_back(std::move(out));
      }
      continue;
    }
    if (!onStage(&op))
      continue;
    if (failed(lowerOp(&op)))
      return failure();
  }
  // 3. Buffers.
  if (failed(placeValues()))
    return failure();
  if (stage >= 0)
    numberOutputsAlike();
  if (rankIndex == 0)
    exe.outputs = std::move(outputs);
  return success();
}

/// Ranks of different pipeline stages lower different ops, so their value
/// slots differ; the Executable's output table names one slot for every
/// rank. Renumbers this rank's slots so that the outputs' slots come right
/// after the arguments', in output order.
void Lowering::numberOutputsAlike() {
  int32_t count = static_cast<int32_t>(rank.values.size());
  std::vector<int32_t> newIndex(count, -1);
  int32_t next = static_cast<int32_t>(function.getNumArguments());
  for (int32_t a = 0; a < next; ++a)
    newIndex[a] = a;
  for (const rt::OutputInfo &out : outputs)
    if (newIndex[out.value] < 0)
      newIndex[out.value] = next++;
  for (int32_t v = 0; v < count; ++v)
    if (newIndex[v] < 0)
      newIndex[v] = next++;
  std::vector<rt::ValueInfo> values(count);
  for (int32_t v = 0; v < count; ++v)
    values[newIndex[v]] = rank.values[v];
  rank.values = std::move(values);
  for (rt::Command &command : rank.commands) {
    for (int32_t &v : command.inputs)
      v = newIndex[v];
    for (int32_t &v : command.outputs)
      v = newIndex[v];
  }
  for (rt::ConstantData &constant : rank.constants)
    constant.value = newIndex[constant.value];
  for (rt::OutputInfo &out : outputs)
    out.value = newIndex[out.value];
}

/// Lays every value out with the buffer planner (analysis/BufferPlan.h), the one
/// that llmc-plan-buffers recorded in the IR; a recorded arena that differs
/// means the IR changed after planning.
LogicalResult Lowering::placeValues() {
  FailureOr<llmc::BufferPlan> plan = llmc::planBuffers(function, stage);
  if (failed(plan))
    return failure();
  IntegerAttr recorded =
      function->getAttrOfType<IntegerAttr>("llmc.arena_bytes");
  if (auto stages = function->getAttrOfType<DenseI64ArrayAttr>(
          "llmc.stage_arena_bytes");
      stages && stage >= 0 && stage < stages.size())
    recorded = IntegerAttr::get(IntegerType::get(function.getContext(), 64),
                                stages[stage]);
  if (recorded)
    if (static_cast<uint64_t>(recorded.getInt()) != plan->arenaBytes)
      return function.emitError()
             << "codegen: the recorded buffer plan (llmc.arena_bytes = "
             << recorded.getInt() << ") does not match the program ("
             << plan->arenaBytes
             << " bytes); the IR changed after --llmc-plan-buffers: run it "
                "last";
  // A value without storage (an elementwise region's intermediate, planned
  // for fused kernels) keeps the planner's kNoStorage: the same bits.
  static_assert(llmc::kNoStorage == rt::kNoStorage);
  for (auto [value, slot] : slots)
    rank.values[slot].offset = plan->offsetOf(value);
  rank.arenaBytes = plan->arenaBytes;
  exe.fusedKernels =
      llmc::regionStorageOf(function) == llmc::RegionStorage::OneKernel;
  return success();
}

} // namespace codegen

using codegen::Lowering;

FailureOr<rt::Executable> buildExecutable(ModuleOp module,
                                          const CodegenOptions &options) {
  auto function = module.lookupSymbol<func::FuncOp>(options.function);
  if (!function)
    return module.emitError() << "codegen: no function @" << options.function
                              << " to compile";
  if (!function.getBody().hasOneBlock())
    return function.emitError() << "codegen: expected a single block";
  rt::Executable exe;
  exe.producer = "llmc " LLMC_VERSION_STRING;
  exe.source = options.source;
  exe.name = options.function;
  // One program per rank of the module's mesh (one rank without a mesh).
  Mesh mesh;
  if (function->hasAttr("llmc.partitioned")) {
    FailureOr<Mesh> found = Mesh::fromModule(module);
    if (failed(found))
      return function.emitError()
             << "codegen: a partitioned function needs the module's mesh "
                "(shard.grid @mesh and llmc.mesh_axes)";
    mesh = *found;
  }
  for (auto [name, size] : llvm::zip(mesh.names, mesh.sizes))
    exe.mesh.push_back(rt::MeshAxisInfo{name, static_cast<int32_t>(size)});
  int ranks = static_cast<int>(mesh.numDevices());
  for (int r = 0; r < ranks; ++r) {
    Lowering lowering(function, exe, mesh, r);
    if (failed(lowering.run()))
      return failure();
  }
#ifdef LLMC_CODEGEN_CUDA
  // The CUDA kernels of every rank (runtime/CudaPlan.h): chosen and
  // generated here, so that the GPU session only loads and launches.
  for (rt::RankProgram &rank : exe.ranks)
    rt::cuda::planCudaKernels(rank);
#endif
  if (rt::Status status = rt::validateExecutable(exe); !status)
    return function.emitError() << "codegen produced an invalid executable: "
                                << status.message();
  return exe;
}

uint64_t plannedBytes(const rt::Executable &executable) {
  return executable.ranks.empty() ? 0 : executable.ranks.front().arenaBytes;
}

} // namespace llmc
