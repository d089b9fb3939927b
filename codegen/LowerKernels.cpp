//===- LowerKernels.cpp - each llmc op's kernel and its attributes --------===//
//
// The kernel command of every op that is one kernel of runtime/Kernels.def:
// its kind, from the op class, and its attributes, laid out as Kernels.def
// documents them. Three groups, one function each: the ops whose kernel
// takes no attribute (one line each: adding such an op is one line here),
// the other primitives (shapes, reductions, matmul, indexing, constants)
// and the other composites (norms, attention, rope, the loss, MoE routing,
// the learning rate).
//
//===----------------------------------------------------------------------===//
#include "codegen/Lowering.h"
#include "ir/LlmcOps.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <cstring>
#include <optional>

using namespace mlir;

namespace llmc::codegen {

namespace {

using K = rt::KernelKind;

/// The raw little-endian bytes of a constant, in the runtime's layout (i1
/// as one byte per element).
FailureOr<std::vector<uint8_t>> constantBytes(ElementsAttr attr,
                                              rt::DType dtype, Location loc) {
  auto dense = dyn_cast<DenseElementsAttr>(attr);
  if (!dense)
    return emitError(loc) << "codegen: only dense constants are supported";
  int64_t n = dense.getNumElements();
  std::vector<uint8_t> bytes(static_cast<size_t>(n) * rt::dtypeSize(dtype));
  int64_t i = 0;
  switch (dtype) {
  case rt::DType::I1:
    for (bool v : dense.getValues<bool>())
      bytes[i++] = v ? 1 : 0;
    return bytes;
  case rt::DType::F32:
  case rt::DType::F64:
  case rt::DType::BF16:
  case rt::DType::F16:
    for (APFloat v : dense.getValues<APFloat>()) {
      uint64_t word = v.bitcastToAPInt().getZExtValue();
      std::memcpy(bytes.data() + i++ * rt::dtypeSize(dtype), &word,
                  rt::dtypeSize(dtype));
    }
    return bytes;
  case rt::DType::F8E4M3FN: // no program holds an FP8 constant
  case rt::DType::F8E5M2:
    break;
  case rt::DType::I32:
  case rt::DType::I64:
    for (APInt v : dense.getValues<APInt>()) {
      uint64_t word = v.getZExtValue();
      std::memcpy(bytes.data() + i++ * rt::dtypeSize(dtype), &word,
                  rt::dtypeSize(dtype));
    }
    return bytes;
  }
  return emitError(loc) << "codegen: unsupported constant type";
}

/// The ints of CrossEntropy and CrossEntropyGrad (Kernels.def): reduction
/// (mean 0, sum 1, none 2), has_ignore, ignore_index.
std::vector<int64_t> lossAttrs(LossReduction reduction,
                               std::optional<uint64_t> ignore) {
  int64_t kind = reduction == LossReduction::mean  ? 0
                 : reduction == LossReduction::sum ? 1
                                                   : 2;
  return {kind, ignore ? 1 : 0, ignore ? static_cast<int64_t>(*ignore) : 0};
}

/// The softmax scale of attention and attention_grad: the attribute, or
/// 1 / sqrt(D) for a query [B, H, T, D].
double attentionScale(Value query, std::optional<APFloat> scale) {
  if (scale)
    return scale->convertToDouble();
  double headDim = static_cast<double>(
      cast<RankedTensorType>(query.getType()).getShape().back());
  return 1.0 / std::sqrt(headDim);
}

/// Kernels.def's attention layout int (runtime/AttentionLayout.h): bhtd 0,
/// bthd 1, packed 2, as the enum's values.
int64_t attentionLayout(std::optional<AttentionLayout> layout) {
  return static_cast<int64_t>(layout.value_or(AttentionLayout::bhtd));
}

/// The kernel of an op whose command has no attributes, or none: the
/// LLMC_OP_KERNEL rows of Kernels.def.
std::optional<K> kernelWithoutAttributes(Operation *op) {
#define LLMC_KERNEL(Name, Attributes)
#define LLMC_OP_KERNEL(Name, Op, Attributes)                                   \
  if (llvm::isa<Op>(op))                                                       \
    return K::Name;
#include "runtime/Kernels.def"
  return std::nullopt;
}

} // namespace

std::vector<int64_t> toVector(ArrayRef<int64_t> values) {
  return std::vector<int64_t>(values.begin(), values.end());
}

std::optional<LogicalResult> Lowering::lowerPrimitiveKernel(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<LogicalResult>>(op)
      .Case([&](ReshapeOp) {
        // A view: the buffer plan gives the result its operand's offset;
        // no command.
        return success();
      })
      .Case([&](BroadcastOp b) {
        addCommand(op, K::Broadcast, {toVector(b.getDims()), {}});
        return success();
      })
      .Case([&](TransposeOp t) {
        addCommand(op, K::Transpose, {toVector(t.getPermutation()), {}});
        return success();
      })
      .Case([&](SliceOp s) {
        std::vector<int64_t> ints = toVector(s.getStarts());
        llvm::append_range(ints, s.getLimits());
        if (std::optional<ArrayRef<int64_t>> strides = s.getStrides())
          llvm::append_range(ints, *strides);
        else
          ints.insert(ints.end(), s.getStarts().size(), 1);
        addCommand(op, K::Slice, {ints, {}});
        return success();
      })
      .Case([&](ConcatOp c) {
        addCommand(op, K::Concat, {{static_cast<int64_t>(c.getDim())}, {}});
        return success();
      })
      .Case([&](ReduceSumOp r) {
        addCommand(op, K::ReduceSum, {toVector(r.getDims()), {}});
        return success();
      })
      .Case([&](ReduceMaxOp r) {
        addCommand(op, K::ReduceMax, {toVector(r.getDims()), {}});
        return success();
      })
      .Case([&](ReduceMeanOp r) {
        addCommand(op, K::ReduceMean, {toVector(r.getDims()), {}});
        return success();
      })
      .Case([&](MatmulOp m) {
        addCommand(op, K::Matmul,
                   {{m.getTransposeA() ? 1 : 0, m.getTransposeB() ? 1 : 0}, {}},
                   rt::CommandKind::Gemm);
        return success();
      })
      .Case([&](GatherOp g) {
        addCommand(op, K::Gather, {{static_cast<int64_t>(g.getDim())}, {}});
        return success();
      })
      .Case([&](ScatterAddOp s) {
        addCommand(op, K::ScatterAdd, {{static_cast<int64_t>(s.getDim())}, {}});
        return success();
      })
      .Case([&](CompareOp c) {
        addCommand(op, K::Compare,
                   {{static_cast<int64_t>(c.getDirection())}, {}});
        return success();
      })
      .Case([&](IotaOp i) {
        addCommand(op, K::Iota, {{static_cast<int64_t>(i.getDim())}, {}});
        return success();
      })
      .Case([&](ConstantOp c) -> LogicalResult {
        int32_t slot = slotOf(c.getResult());
        FailureOr<std::vector<uint8_t>> bytes =
            constantBytes(c.getValue(), rank.values[slot].dtype, c.getLoc());
        if (failed(bytes))
          return failure();
        rank.constants.push_back(rt::ConstantData{slot, std::move(*bytes)});
        return success();
      })
      .Case([&](AxisOffsetOp a) -> LogicalResult {
        // This rank's position along the axes, times the stride.
        int position = 0;
        if (mesh.names.empty())
          return a.emitOpError() << "needs a mesh (shard.grid @mesh)";
        (void)groupOf(mesh, rankIndex, a.getAxes(), position);
        int64_t value = position * a.getStride();
        int32_t slot = slotOf(a.getResult());
        std::vector<uint8_t> bytes(rt::dtypeSize(rank.values[slot].dtype));
        if (bytes.size() == 4) {
          int32_t v = static_cast<int32_t>(value);
          std::memcpy(bytes.data(), &v, 4);
        } else {
          std::memcpy(bytes.data(), &value, 8);
        }
        rank.constants.push_back(rt::ConstantData{slot, std::move(bytes)});
        return success();
      })
      .Default([](Operation *) { return std::nullopt; });
}

std::optional<LogicalResult> Lowering::lowerCompositeKernel(Operation *op) {
  return llvm::TypeSwitch<Operation *, std::optional<LogicalResult>>(op)
      .Case([&](LrScheduleOp l) {
        addCommand(op, K::LrSchedule,
                   {{static_cast<int64_t>(l.getKind()),
                     static_cast<int64_t>(l.getWarmup()),
                     static_cast<int64_t>(l.getTotal())},
                    {l.getPeak().convertToDouble(),
                     l.getMinimum().convertToDouble()}});
        return success();
      })
      .Case([&](LayerNormOp n) {
        addCommand(op, K::LayerNorm, {{}, {n.getEpsilon().convertToDouble()}});
        return success();
      })
      .Case([&](RmsNormOp n) {
        addCommand(op, K::RmsNorm, {{}, {n.getEpsilon().convertToDouble()}});
        return success();
      })
      .Case([&](LayerNormGradOp n) {
        addCommand(op, K::LayerNormGrad,
                   {{}, {n.getEpsilon().convertToDouble()}});
        return success();
      })
      .Case([&](RmsNormGradOp n) {
        addCommand(op, K::RmsNormGrad,
                   {{}, {n.getEpsilon().convertToDouble()}});
        return success();
      })
      .Case([&](SoftmaxOp s) {
        addCommand(op, K::Softmax, {{static_cast<int64_t>(s.getDim())}, {}});
        return success();
      })
      .Case([&](AttentionOp a) {
        addCommand(op, K::Attention,
                   {{a.getCausal() ? 1 : 0, attentionLayout(a.getLayout())},
                    {attentionScale(a.getQuery(), a.getScale())}});
        return success();
      })
      .Case([&](AttentionGradOp a) {
        addCommand(op, K::AttentionGrad,
                   {{a.getCausal() ? 1 : 0, attentionLayout(a.getLayout())},
                    {attentionScale(a.getQuery(), a.getScale())}});
        return success();
      })
      .Case([&](AttentionBlockOp a) {
        addCommand(op, K::AttentionBlock,
                   {{}, {attentionScale(a.getQuery(), a.getScale())}});
        return success();
      })
      .Case([&](AttentionBlockGradOp a) {
        addCommand(op, K::AttentionBlockGrad,
                   {{}, {attentionScale(a.getQuery(), a.getScale())}});
        return success();
      })
      .Case([&](RopeOp r) {
        // floats: theta, then the per-pair inverse frequencies if any.
        std::vector<double> floats = {r.getTheta().convertToDouble()};
        if (std::optional<ArrayRef<double>> invFreq = r.getInvFreq())
          floats.insert(floats.end(), invFreq->begin(), invFreq->end());
        addCommand(op, K::Rope, {{}, std::move(floats)});
        return success();
      })
      .Case([&](GeluOp g) {
        int64_t approx = g.getApproximation() == GeluApproximation::tanh ? 0 : 1;
        addCommand(op, K::Gelu, {{approx}, {}});
        return success();
      })
      .Case([&](CrossEntropyOp c) {
        addCommand(op, K::CrossEntropy,
                   {lossAttrs(c.getReduction(), c.getIgnoreIndex()), {}});
        return success();
      })
      .Case([&](CrossEntropyGradOp c) {
        addCommand(op, K::CrossEntropyGrad,
                   {lossAttrs(c.getReduction(), c.getIgnoreIndex()), {}});
        return success();
      })
      .Case([&](MoeTopKOp t) {
        addCommand(op, K::MoeTopK,
                   {{static_cast<int64_t>(t.getK()), t.getNormalize() ? 1 : 0},
                    {}});
        return success();
      })
      .Default([](Operation *) { return std::nullopt; });
}

LogicalResult Lowering::lowerKernelOp(Operation *op) {
  if (std::optional<K> kernel = kernelWithoutAttributes(op)) {
    addCommand(op, *kernel);
    return success();
  }
  if (std::optional<LogicalResult> lowered = lowerPrimitiveKernel(op))
    return *lowered;
  if (std::optional<LogicalResult> lowered = lowerCompositeKernel(op))
    return *lowered;
  return op->emitOpError() << "has no kernel in the CPU backend; codegen "
                              "handles the llmc dialect only";
}

} // namespace llmc::codegen
