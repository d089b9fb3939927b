//===- LowerMatmulEpilogue.cpp - a matmul_epilogue region as one GEMM -----===//
//
// The part of codegen that turns an `llmc.fused matmul_epilogue` region
// whose body is a bias add after the matmul (and optionally GPT-2's tanh
// gelu or a residual add after that) into one MatmulEpilogue command
// (Kernels.def), which the CUDA backend runs as one cuBLASLt GEMM with an
// epilogue (CUBLASLT_EPILOGUE_BIAS, GELU_BIAS, GELU_AUX_BIAS, or BIAS with
// beta = 1 and C = the residual) and the CPU as the product followed by the
// same epilogue in f32 (docs/fusion.md, "GEMM epilogues"). Any other body
// lowers op by op as before.
//
//===----------------------------------------------------------------------===//

#include "analysis/BufferPlan.h"
#include "codegen/Lowering.h"

namespace llmc::codegen {

namespace {

/// The ops of a recognized region, and what the command reads and writes.
struct EpilogueMatch {
  MatmulOp matmul;
  rt::MatmulEpilogueKind kind = rt::MatmulEpilogueKind::Bias;
  Value bias;     ///< a region operand (outside value)
  Value residual; ///< a region operand, for BiasResidual
  Value result;   ///< the nested body's value the region yields last
  Value pre;      ///< BiasGeluAux: the bias sum, also yielded
};

/// The value outside `fused` that a block argument of its body stands for.
Value operandOf(FusedOp fused, Value value) {
  auto arg = dyn_cast<BlockArgument>(value);
  if (!arg || arg.getOwner() != &fused.getBody().front())
    return {};
  return fused.getInputs()[arg.getArgNumber()];
}

/// Matches matmul; elementwise{ broadcast(bias) ; add ; [gelu tanh |
/// add residual] }. Returns false (nothing to do) for any other body.
bool matchEpilogue(FusedOp fused, EpilogueMatch &match) {
  Block &body = fused.getBody().front();
  SmallVector<Operation *> ops;
  for (Operation &op : body.without_terminator())
    ops.push_back(&op);
  if (ops.size() != 2)
    return false;
  auto matmul = dyn_cast<MatmulOp>(ops[0]);
  auto nested = dyn_cast<FusedOp>(ops[1]);
  if (!matmul || !nested || nested.getKind() != FusionKind::elementwise ||
      !matmul->hasOneUse() || *matmul->getUsers().begin() != nested)
    return false;
  // One GEMM of batch·M rows: a rank-2 rhs shared by every batch and a
  // row-major lhs, so that the bias and the pre-activation are plain
  // matrices for cuBLASLt.
  auto lhsType = cast<RankedTensorType>(matmul.getLhs().getType());
  auto rhsType = cast<RankedTensorType>(matmul.getRhs().getType());
  auto type = cast<RankedTensorType>(matmul.getType());
  if (rhsType.getRank() != 2 ||
      (matmul.getTransposeA() && lhsType.getRank() != 2) ||
      !isa<FloatType>(type.getElementType()) ||
      lhsType.getShape().back() == 0 || type.getNumElements() == 0)
    return false;
  int64_t k = matmul.getTransposeA() ? lhsType.getShape()[0]
                                     : lhsType.getShape().back();
  if (k == 0)
    return false;
  // 16-bit operands: every leading dimension (the contiguous extent of the
  // lhs, the rhs and the result) a multiple of 8 elements, 16 bytes. On the
  // H200 cuBLASLt's bf16 epilogues missed the f32-accumulation bound by up
  // to 24x with M = 17, K = 65 (CudaMatmulEpilogueTest); such shapes lower
  // op by op. checkMatmulProblem (runtime/cuda/libs/CublasLt.cpp) refuses them.
  int64_t m = matmul.getTransposeA() ? lhsType.getShape()[1]
                                     : lhsType.getShape()[lhsType.getRank() - 2];
  int64_t n = type.getShape().back();
  int64_t lhsLeading = matmul.getTransposeA() ? m : k;
  int64_t rhsLeading = matmul.getTransposeB() ? k : n;
  if (type.getElementTypeBitWidth() == 16 &&
      (lhsLeading % 8 != 0 || rhsLeading % 8 != 0 || n % 8 != 0))
    return false;

  // The nested body: exactly a broadcast, an add, and at most one more op.
  Block &inner = nested.getBody().front();
  BroadcastOp broadcast;
  SmallVector<Operation *> rest;
  for (Operation &op : inner.without_terminator()) {
    if (auto b = dyn_cast<BroadcastOp>(op); b && !broadcast)
      broadcast = b;
    else
      rest.push_back(&op);
  }
  if (!broadcast || rest.empty() || rest.size() > 2)
    return false;
  // The bias: a vector of the result's type over the last dimension.
  auto biasType = cast<RankedTensorType>(broadcast.getInput().getType());
  ArrayRef<int64_t> dims = broadcast.getDims();
  if (biasType.getRank() != 1 || biasType.getElementType() !=
                                     type.getElementType() ||
      dims.size() != 1 || dims[0] != type.getRank() - 1 ||
      broadcast.getType() != type)
    return false;
  Value bias = operandOf(fused, operandOf(nested, broadcast.getInput()));
  if (!bias)
    return false;
  // product + bias, in either order.
  auto sum = dyn_cast<AddOp>(rest[0]);
  if (!sum || sum.getType() != type)
    return false;
  Value productArg = sum.getLhs() == broadcast.getResult() ? sum.getRhs()
                     : sum.getRhs() == broadcast.getResult() ? sum.getLhs()
                                                               : Value();
  if (!productArg || operandOf(nested, productArg) != matmul.getResult())
    return false;
  match.matmul = matmul;
  match.bias = bias;
  auto yields = cast<YieldOp>(inner.getTerminator()).getValues();
  auto outerYields = cast<YieldOp>(body.getTerminator()).getValues();
  // Every region result is a nested result (nothing else leaves).
  if (outerYields.size() != nested.getNumResults() ||
      llvm::any_of(llvm::zip(outerYields, nested.getResults()), [](auto p) {
        return std::get<0>(p) != std::get<1>(p);
      }))
    return false;
  if (rest.size() == 1) {
    if (yields.size() != 1 || yields[0] != sum.getResult())
      return false;
    match.kind = rt::MatmulEpilogueKind::Bias;
    match.result = sum.getResult();
    return true;
  }
  if (auto gelu = dyn_cast<GeluOp>(rest[1])) {
    if (gelu.getApproximation() != GeluApproximation::tanh ||
        gelu.getInput() != sum.getResult())
      return false;
    if (yields.size() == 1 && yields[0] == gelu.getResult()) {
      match.kind = rt::MatmulEpilogueKind::BiasGelu;
    } else if (yields.size() == 2 &&
               llvm::is_contained(yields, gelu.getResult()) &&
               llvm::is_contained(yields, sum.getResult())) {
      // cuBLASLt writes the pre-activation with a leading dimension that
      // must be a multiple of 8 elements.
      if (type.getShape().back() % 8 != 0)
        return false;
      match.kind = rt::MatmulEpilogueKind::BiasGeluAux;
      match.pre = sum.getResult();
    } else {
      return false;
    }
    match.result = gelu.getResult();
    return true;
  }
  if (auto add = dyn_cast<AddOp>(rest[1])) {
    Value other = add.getLhs() == sum.getResult()   ? add.getRhs()
                  : add.getRhs() == sum.getResult() ? add.getLhs()
                                                    : Value();
    Value residual = other ? operandOf(fused, operandOf(nested, other)) : Value();
    if (!residual || residual.getType() != type || yields.size() != 1 ||
        yields[0] != add.getResult())
      return false;
    match.kind = rt::MatmulEpilogueKind::BiasResidual;
    match.residual = residual;
    match.result = add.getResult();
    return true;
  }
  return false;
}

/// Bytes [offset, offset + size) of `value` in `plan`.
std::pair<uint64_t, uint64_t> rangeOf(const BufferPlan &plan, Value value) {
  auto type = cast<RankedTensorType>(value.getType());
  uint64_t bytes = static_cast<uint64_t>(type.getNumElements()) *
                   ((type.getElementTypeBitWidth() + 7) / 8);
  uint64_t offset = plan.offsetOf(value);
  return {offset, offset + bytes};
}

bool overlaps(std::pair<uint64_t, uint64_t> a, std::pair<uint64_t, uint64_t> b) {
  return a.first < b.second && b.first < a.second;
}

} // namespace

LogicalResult Lowering::ensurePlan() {
  if (plan)
    return success();
  FailureOr<BufferPlan> planned = planBuffers(function, stage);
  if (failed(planned))
    return failure();
  plan = std::make_unique<BufferPlan>(std::move(*planned));
  return success();
}

FailureOr<bool> Lowering::lowerMatmulEpilogue(FusedOp fused) {
  EpilogueMatch match;
  if (biasGradientOf.count(fused) || !matchEpilogue(fused, match))
    return false;
  // One GEMM reads its operands while it writes: the buffer plan, which
  // planned the region as the unfused ops, may have put a result over the
  // lhs or rhs (dead after the product) or the bias. Then the region runs
  // op by op. A result exactly over the residual is cuBLASLt's in-place
  // C = D, which is allowed.
  if (failed(ensurePlan()))
    return failure();
  SmallVector<Value> written = {match.result};
  if (match.pre)
    written.push_back(match.pre);
  SmallVector<Value> read = {match.matmul.getLhs(), match.matmul.getRhs(),
                             match.bias};
  for (Value out : written) {
    if (plan->offsetOf(out) == kNoStorage)
      return false;
    for (Value in : read)
      if (overlaps(rangeOf(*plan, out), rangeOf(*plan, in)))
        return false;
    if (match.residual && overlaps(rangeOf(*plan, out),
                                   rangeOf(*plan, match.residual)) &&
        (out != match.result ||
         rangeOf(*plan, out) != rangeOf(*plan, match.residual)))
      return false;
  }
  if (match.pre && overlaps(rangeOf(*plan, match.pre),
                            rangeOf(*plan, match.result)))
    return false;

  // The command: inputs lhs, rhs, bias[, residual]; outputs result[, pre].
  for (Value out : written)
    if (failed(addValue(out)))
      return failure();
  rt::Command command;
  command.kind = rt::CommandKind::Gemm;
  command.kernel = rt::KernelKind::MatmulEpilogue;
  command.attrs.ints = {match.matmul.getTransposeA() ? 1 : 0,
                        match.matmul.getTransposeB() ? 1 : 0,
                        static_cast<int64_t>(match.kind)};
  command.origin = locationText(fused.getLoc());
  command.inputs = {slotOf(operandOf(fused, match.matmul.getLhs())),
                    slotOf(operandOf(fused, match.matmul.getRhs())),
                    slotOf(match.bias)};
  if (match.residual)
    command.inputs.push_back(slotOf(match.residual));
  for (Value out : written)
    command.outputs.push_back(slotOf(out));
  rank.commands.push_back(std::move(command));

  // The region's results are the nested region's, which are the values the
  // command wrote.
  auto nested = cast<FusedOp>(*match.matmul->getUsers().begin());
  auto yields =
      cast<YieldOp>(nested.getBody().front().getTerminator()).getValues();
  for (auto [result, nestedResult, value] :
       llvm::zip(fused.getResults(), nested.getResults(), yields)) {
    slots[nestedResult] = slotOf(value);
    slots[result] = slotOf(value);
  }
  return true;
}

namespace {

/// Whether every op that reads `value` (through reshapes, which are views)
/// comes after `op` in its block.
bool readOnlyAfter(Value value, Operation *op) {
  Block *block = op->getBlock();
  for (Operation *user : value.getUsers()) {
    if (auto reshape = dyn_cast<ReshapeOp>(user)) {
      if (!readOnlyAfter(reshape.getResult(), op))
        return false;
      continue;
    }
    Operation *ancestor = block->findAncestorOpInBlock(*user);
    if (!ancestor || ancestor == op || !op->isBeforeInBlock(ancestor))
      return false;
  }
  return true;
}

} // namespace

FailureOr<bool> Lowering::deferBiasGradient(ReduceSumOp reduce) {
  // 1. dY [..., N] summed over every dimension but the last, into its type.
  Value dy = reduce.getInput();
  auto type = cast<RankedTensorType>(dy.getType());
  int64_t rank = type.getRank();
  ArrayRef<int64_t> dims = reduce.getDims();
  if (rank < 2 || static_cast<int64_t>(dims.size()) != rank - 1 ||
      cast<RankedTensorType>(reduce.getType()).getElementType() !=
          type.getElementType() ||
      !isa<FloatType>(type.getElementType()) || type.getNumElements() == 0)
    return false;
  for (auto [i, d] : llvm::enumerate(dims))
    if (d != static_cast<int64_t>(i))
      return false;
  int64_t n = type.getShape().back();
  int64_t k = type.getNumElements() / n;
  // 2. The weight-gradient GEMM: a later matmul_epilogue region whose
  //    matmul is X^T [K, M]^T times dY (or its [K, N] reshape) with a
  //    product of dY's type (cuBLASLt writes the bias gradient in it).
  SmallVector<Value> views = {dy};
  for (Operation *user : dy.getUsers())
    if (auto reshape = dyn_cast<ReshapeOp>(user))
      if (reshape.getType().getShape() == ArrayRef<int64_t>{k, n})
        views.push_back(reshape.getResult());
  for (Value view : views)
    for (OpOperand &use : view.getUses()) {
      auto fused = dyn_cast<FusedOp>(use.getOwner());
      if (!fused || fused.getKind() != FusionKind::matmul_epilogue ||
          fused->getBlock() != reduce->getBlock() ||
          !reduce->isBeforeInBlock(fused) || biasGradientOf.count(fused) ||
          fused->getAttr("llmc.stage") != reduce->getAttr("llmc.stage"))
        continue;
      Block &body = fused.getBody().front();
      auto matmul = dyn_cast<MatmulOp>(&body.front());
      if (!matmul || !matmul.getTransposeA() || matmul.getTransposeB() ||
          matmul.getRhs() != body.getArgument(use.getOperandNumber()))
        continue;
      auto lhsArg = dyn_cast<BlockArgument>(matmul.getLhs());
      auto lhsType = cast<RankedTensorType>(matmul.getLhs().getType());
      auto rhsType = cast<RankedTensorType>(matmul.getRhs().getType());
      if (!lhsArg || lhsArg.getOwner() != &body || lhsType.getRank() != 2 ||
          rhsType.getShape() != ArrayRef<int64_t>{k, n} ||
          matmul.getType().getElementType() != type.getElementType())
        continue;
      // 3. Nothing reads the bias gradient before the GEMM writes it, and
      //    its buffer (live from the reduce on) is none of the GEMM's.
      if (!readOnlyAfter(reduce.getResult(), fused))
        continue;
      if (failed(ensurePlan()))
        return failure();
      auto grad = rangeOf(*plan, reduce.getResult());
      if (plan->offsetOf(reduce.getResult()) == kNoStorage ||
          overlaps(grad, rangeOf(*plan, use.get())) ||
          overlaps(grad,
                   rangeOf(*plan, fused.getInputs()[lhsArg.getArgNumber()])) ||
          overlaps(grad, rangeOf(*plan, matmul.getResult())))
        continue;
      biasGradientOf[fused] = reduce;
      return true;
    }
  return false;
}

void Lowering::lowerBiasGradientGemm(FusedOp fused, MatmulOp matmul,
                                     ReduceSumOp reduce) {
  (void)fused;
  (void)addValue(matmul.getResult()); // a ranked static tensor: cannot fail
  rt::Command command;
  command.kind = rt::CommandKind::Gemm;
  command.kernel = rt::KernelKind::MatmulEpilogue;
  command.attrs.ints = {1, 0,
                        static_cast<int64_t>(
                            rt::MatmulEpilogueKind::BiasGradient)};
  command.origin = locationText(matmul.getLoc());
  command.inputs = {slotOf(matmul.getLhs()), slotOf(matmul.getRhs())};
  command.outputs = {slotOf(matmul.getResult()), slotOf(reduce.getResult())};
  rank.commands.push_back(std::move(command));
}

} // namespace llmc::codegen
