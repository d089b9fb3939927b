//===- KernelSelection.cpp - which CUDA kernel runs a command -------------===//
//
// Per kernel kind: the operand types the CUDA kernels cover and the entry
// names of DeviceKernelsSource.cpp / FlashAttentionSource.cpp that run
// them. Entry names are `llmc_<kernel>_<types>`, the types in the order the
// kernels' template parameters take them (the input's, then the
// parameters' or the result's where they may differ). DeviceKernels.cpp
// computes the launch parameters; what runs is decided here only.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/KernelSelection.h"
#include "runtime/cuda/kernels/reduce/ReduceKernels.h"
#include "runtime/cuda/kernels/rope/RopeLaunch.h"

#include "runtime/Sharding.h"

#include <algorithm>

namespace llmc::rt::cuda {

namespace {

constexpr int kMaxRank = 8;

Status unsupported(KernelKind kind, const std::vector<TensorRef> &inputs,
                   const std::vector<TensorRef> &outputs,
                   const std::string &why) {
  return Status::error(StatusCode::Unimplemented,
                       "no CUDA kernel for " +
                           describeLaunch(kind, inputs, outputs) + " yet" +
                           (why.empty() ? "" : ": " + why));
}

/// "f32" / "bf16" of the float kernels, or "" when unsupported.
std::string floatSuffix(DType dtype) {
  if (dtype == DType::F32)
    return "f32";
  if (dtype == DType::BF16)
    return "bf16";
  return "";
}

std::string indexSuffix(DType dtype) {
  if (dtype == DType::I32)
    return "i32";
  if (dtype == DType::I64)
    return "i64";
  return "";
}

std::string bytesSuffix(DType dtype) {
  return "b" + std::to_string(dtypeSize(dtype));
}

bool isElementwiseOnly(KernelKind kind) {
  return isCudaElementwiseKernel(kind) && kind != KernelKind::Compare;
}

constexpr long long kFlashForwardTile = 32;
long long flashBackwardTile(int capacity) { return capacity <= 64 ? 32 : 16; }


/// Checks Kernels.def's operand and attribute counts of `kind`.
Status expectOperands(KernelKind kind, const KernelAttrs &attrs,
                      const std::vector<TensorRef> &inputs,
                      const std::vector<TensorRef> &outputs, size_t minInputs,
                      size_t maxInputs, size_t ints, size_t floats) {
  if (inputs.size() < minInputs || inputs.size() > maxInputs ||
      outputs.size() != 1 || attrs.ints.size() < ints ||
      attrs.floats.size() < floats)
    return Status::error(
        StatusCode::InvalidArgument,
        std::string(kernelName(kind)) + ": expected " +
            std::to_string(minInputs) + "-" + std::to_string(maxInputs) +
            " inputs, 1 output, " + std::to_string(ints) + " ints and " +
            std::to_string(floats) + " floats, got " +
            std::to_string(inputs.size()) + ", " +
            std::to_string(outputs.size()) + ", " +
            std::to_string(attrs.ints.size()) + " and " +
            std::to_string(attrs.floats.size()));
  return Status::ok();
}

} // namespace

std::string describeLaunch(KernelKind kind,
                           const std::vector<TensorRef> &inputs,
                           const std::vector<TensorRef> &outputs) {
  std::string text = std::string(kernelName(kind)) + "(";
  for (size_t i = 0; i < inputs.size(); ++i)
    text += (i ? ", " : "") + std::string(dtypeName(inputs[i].dtype)) +
            formatShape(inputs[i].shape);
  text += ") -> ";
  for (size_t i = 0; i < outputs.size(); ++i)
    text += (i ? ", " : "") + std::string(dtypeName(outputs[i].dtype)) +
            formatShape(outputs[i].shape);
  return text;
}

int64_t flashRows(const TensorRef &q) {
  int64_t headDim = q.shape.empty() ? 1 : std::max<int64_t>(1, q.shape.back());
  return std::max<int64_t>(1, q.numElements() / headDim);
}

NormGradLaunch normGradLaunch(const TensorRef &x) {
  NormGradLaunch launch;
  launch.dim = x.shape.empty() ? 0 : x.shape.back();
  launch.rows = launch.dim > 0 ? x.numElements() / launch.dim : 0;
  launch.chunks = (launch.rows + NormGradLaunch::kChunkRows - 1) /
                  NormGradLaunch::kChunkRows;
  return launch;
}

std::string flashLaunch(const std::vector<TensorRef> &inputs,
                        const KernelAttrs &attrs, FlashLaunch &launch,
                        const TensorRef *result) {
  const TensorRef &q = inputs[0], &k = inputs[1], &v = inputs[2];
  std::string type = floatSuffix(q.dtype);
  if (type.empty() || q.rank() != 4 || k.rank() != 4 || k.dtype != q.dtype ||
      v.dtype != q.dtype)
    return "flash attention covers f32 and bf16 [B, H, T, D]";
  // The query-side result (out): given, attention_grad's out, or the shape
  // of q (the forward in the bhtd and bthd layouts).
  const TensorRef &o =
      result ? *result : inputs.size() >= 4 ? inputs[3] : inputs[0];
  AttentionGeometry geometry;
  if (std::string why = attentionGeometry(
          attrs.ints.size() > 1 ? attrs.ints[1] : 0, q, k, o, geometry);
      !why.empty())
    return why;
  launch.layout = {geometry.q, geometry.k, geometry.v, geometry.o};
  launch.stridesAligned16 = true;
  for (const AttentionStrides &s :
       {geometry.q, geometry.k, geometry.v, geometry.o})
    for (int64_t stride : {s.offset, s.batch, s.head, s.row})
      launch.stridesAligned16 &= stride % 8 == 0; // 16 bytes of bf16
  int64_t headDim = geometry.headDim;
  // The kernels are instantiated for these head-dimension capacities; a
  // smaller D runs zero-padded in the next one up.
  int capacity = headDim <= 16 ? 16 : headDim <= 32 ? 32 : headDim <= 64 ? 64
                                  : headDim <= 128 ? 128 : 0;
  if (capacity == 0)
    return "flash attention covers head dimensions up to 128, got " +
           std::to_string(headDim);
  launch.suffix = type + "_d" + std::to_string(capacity);
  launch.heads = static_cast<int>(geometry.heads);
  launch.kvHeads = static_cast<int>(geometry.kvHeads);
  launch.seq = geometry.seq;
  launch.kvSeq = geometry.kvSeq;
  launch.headDim = static_cast<int>(headDim);
  launch.causal = static_cast<int>(attrs.ints[0]);
  launch.scale = static_cast<float>(attrs.floats[0]);
  long long forwardTile = inputs.size() == 3 ? kFlashForwardTile
                                             : flashBackwardTile(capacity);
  long long backwardTile = flashBackwardTile(capacity);
  long long queryBlocks = geometry.batch * geometry.heads *
                          ((launch.seq + forwardTile - 1) / forwardTile);
  long long keyBlocks = geometry.batch * geometry.kvHeads *
                        ((launch.kvSeq + backwardTile - 1) / backwardTile);
  if (queryBlocks > 0x7fffffffLL || keyBlocks > 0x7fffffffLL)
    return "more than 2^31 - 1 attention blocks";
  launch.queryBlocks = static_cast<unsigned>(queryBlocks);
  launch.keyBlocks = static_cast<unsigned>(keyBlocks);
  // The tensor-core kernels take bf16 with D exactly 64 or 128 (no padded
  // columns); their grids have fewer blocks than the scalar ones.
  launch.tensorCores =
      q.dtype == DType::BF16 && (headDim == 64 || headDim == 128);
  if (launch.tensorCores)
    flashTensorCoreLaunch(
        flashTcTileSizes(headDim), inputs.size() == 3,
        Shape{geometry.batch, geometry.heads, geometry.seq, headDim},
        Shape{geometry.batch, geometry.kvHeads, geometry.kvSeq, headDim},
        launch);
  return "";
}

FlashTcTileSizes flashTcTileSizes(int64_t headDim) {
  // D = 64: the fastest of CudaTest.FlashAttentionTileSweep on the H200.
  if (headDim <= 64)
    return {1, 64, 1, 32, 1, 32};
  return {1, 32, 1, 16, 1, 16};
}

void flashTensorCoreLaunch(const FlashTcTileSizes &tiles, bool forward,
                           const Shape &q, const Shape &k,
                           FlashLaunch &launch) {
  auto blocks = [](long long heads, long long rows, long long tile) {
    return static_cast<unsigned>(heads * ((rows + tile - 1) / tile));
  };
  // Rows per block: 16 per row block of each of the 4 warps.
  long long queryRows =
      64LL * (forward ? tiles.forwardRowBlocks : tiles.rowsRowBlocks);
  long long keyRows = 64LL * tiles.keysRowBlocks;
  launch.tensorCoreQueryBlocks = blocks(q[0] * q[1], q[2], queryRows);
  launch.tensorCoreKeyBlocks = blocks(k[0] * k[1], k[2], keyRows);
  // As FlashTcTiles<D> lays it out (the kernels trap when given less):
  // tiles of bf16 rows padded by 8 elements, plus two buffers of the
  // streamed tiles.
  unsigned stride = static_cast<unsigned>(q[3]) + 8;
  auto tile = [&](long long tileRows) {
    return static_cast<unsigned>(tileRows) * stride * 2;
  };
  long long forwardRows = 64LL * tiles.forwardRowBlocks;
  long long rowsRows = 64LL * tiles.rowsRowBlocks;
  // q, 2 x (k, v).
  launch.tensorCoreForwardShared =
      tile(forwardRows) + 4 * tile(tiles.forwardKeys);
  // q, dout, 2 x (k, v), the rows' delta (f32).
  launch.tensorCoreRowsShared = 2 * tile(rowsRows) + 4 * tile(tiles.rowsKeys) +
                                4 * static_cast<unsigned>(rowsRows);
  // k, v, 2 x (q, dout, lse, delta).
  launch.tensorCoreKeysShared = 2 * tile(keyRows) +
                                4 * tile(tiles.keysQueries) +
                                16 * static_cast<unsigned>(tiles.keysQueries);
}

Status selectKernel(KernelKind kind, const KernelAttrs &attrs,
                    const std::vector<TensorRef> &inputs,
                    const std::vector<TensorRef> &outputs,
                    KernelChoice &choice) {
  choice = KernelChoice();
  auto refuse = [&](const std::string &why) {
    return unsupported(kind, inputs, outputs, why);
  };
  auto expect = [&](size_t minInputs, size_t maxInputs, size_t ints,
                    size_t floats) {
    return expectOperands(kind, attrs, inputs, outputs, minInputs, maxInputs,
                          ints, floats);
  };
  auto runs = [&](std::vector<std::string> entries) {
    choice.route = KernelChoice::Route::DeviceUnit;
    choice.entries = std::move(entries);
    return Status::ok();
  };

  // 0. The marker of a fused region launches nothing itself: the session
  //    generates the region's kernel (FusedKernels.h) or runs its commands.
  if (kind == KernelKind::FusedElementwise)
    return Status::ok();

  // 1. Elementwise: one generated unit per signature.
  if (isElementwiseOnly(kind) ||
      (kind == KernelKind::Compare && !inputs.empty() &&
       !floatSuffix(inputs[0].dtype).empty())) {
    if (outputs.size() != 1)
      return refuse("expected one result");
    ElementwiseSignature signature;
    signature.kind = kind;
    for (const TensorRef &input : inputs)
      signature.inputs.push_back(input.dtype);
    signature.result = outputs[0].dtype;
    signature.ints = attrs.ints;
    ElementwiseSource source;
    if (Status status = generateElementwiseKernel(signature, source); !status)
      return refuse(status.message());
    choice.route = KernelChoice::Route::Elementwise;
    choice.elementwise = signature;
    return Status::ok();
  }

  // 2. Everything else.
  switch (kind) {
  case KernelKind::Compare: {
    LLMC_RETURN_IF_ERROR(expect(2, 2, 1, 0));
    std::string index = indexSuffix(inputs[0].dtype);
    if (index.empty() || inputs[1].dtype != inputs[0].dtype)
      return refuse("compare covers f32, bf16, i32 and i64");
    return runs({"llmc_compare_" + index});
  }
  case KernelKind::Broadcast:
  case KernelKind::Transpose:
  case KernelKind::Slice: {
    LLMC_RETURN_IF_ERROR(expect(1, 1, 0, 0));
    if (outputs[0].rank() > kMaxRank || inputs[0].rank() > kMaxRank)
      return refuse("ranks above 8 are not supported");
    if (outputs[0].dtype != inputs[0].dtype)
      return refuse("expected the result to have the input's type");
    return runs({"llmc_strided_copy_" + bytesSuffix(inputs[0].dtype)});
  }
  case KernelKind::Concat: {
    LLMC_RETURN_IF_ERROR(expect(1, SIZE_MAX, 1, 0));
    for (const TensorRef &in : inputs)
      if (in.dtype != outputs[0].dtype)
        return refuse("expected every input to have the result's type");
    return runs({"llmc_concat_part_" + bytesSuffix(outputs[0].dtype)});
  }
  case KernelKind::ReduceSum:
  case KernelKind::ReduceMax:
  case KernelKind::ReduceMean: {
    LLMC_RETURN_IF_ERROR(expect(1, 1, 1, 0));
    std::string in = floatSuffix(inputs[0].dtype),
                out = floatSuffix(outputs[0].dtype);
    if (in.empty() || out.empty())
      return refuse("reductions cover f32 and bf16 inputs and results");
    if (inputs[0].rank() > kMaxRank)
      return refuse("ranks above 8 are not supported");
    for (size_t i = 0; i < attrs.ints.size(); ++i)
      if (attrs.ints[i] < 0 || attrs.ints[i] >= inputs[0].rank() ||
          (i > 0 && attrs.ints[i] <= attrs.ints[i - 1]))
        return refuse("expected strictly increasing dims in [0, " +
                      std::to_string(inputs[0].rank()) + ")");
    // The path from the shape (ReduceKernels.h); the vector and scalar
    // entries of rows and columns both, the launch takes the vector one
    // when the input is aligned.
    ReduceLaunch launch =
        planReduceLaunch(inputs[0].shape, attrs.ints, inputs[0].dtype);
    choice.scratchBytes = launch.scratchBytes;
    std::string types = in + "_" + out;
    switch (launch.path) {
    case ReduceLaunch::Path::Rows:
      return runs(
          {"llmc_reduce_rows_vec_" + types, "llmc_reduce_rows_" + types});
    case ReduceLaunch::Path::Columns:
      return runs({"llmc_reduce_columns_vec_" + types,
                   "llmc_reduce_columns_" + types,
                   "llmc_reduce_columns_finish_" + out});
    case ReduceLaunch::Path::Split:
      return runs({"llmc_reduce_partial_" + in, "llmc_reduce_finish_" + out});
    case ReduceLaunch::Path::General:
      break;
    }
    return runs({"llmc_reduce_" + types});
  }
  case KernelKind::Matmul: {
    LLMC_RETURN_IF_ERROR(expect(2, 2, 2, 0));
    const TensorRef &lhs = inputs[0], &rhs = inputs[1];
    if (lhs.rank() < 2 || rhs.rank() < 2)
      return refuse("expected operands of rank at least 2");
    if (rhs.dtype != lhs.dtype)
      return refuse("cuBLASLt runs operands of one type");
    MatmulProblem problem;
    problem.operands = lhs.dtype;
    problem.result = outputs[0].dtype;
    problem.transA = attrs.ints[0] != 0;
    problem.transB = attrs.ints[1] != 0;
    problem.sharedRhs = rhs.rank() == 2;
    int64_t lr = lhs.rank(), rr = rhs.rank();
    problem.batch = numElements(Shape(lhs.shape.begin(), lhs.shape.end() - 2));
    problem.m = lhs.shape[lr - (problem.transA ? 1 : 2)];
    problem.k = lhs.shape[lr - (problem.transA ? 2 : 1)];
    problem.n = rhs.shape[rr - (problem.transB ? 2 : 1)];
    if (Status status = checkMatmulProblem(problem); !status)
      return refuse(status.message());
    choice.route = KernelChoice::Route::Gemm;
    choice.matmul = problem;
    return Status::ok();
  }
  case KernelKind::MatmulEpilogue: {
    // Kernels.def: [transpose_a, transpose_b, epilogue]; lhs, rhs, bias[,
    // residual]; result[, pre-activation].
    if (attrs.ints.size() != 3 || attrs.ints[2] < 0 ||
        attrs.ints[2] >= kNumMatmulEpilogueKinds)
      return Status::error(StatusCode::InvalidArgument,
                           "MatmulEpilogue: expected ints [transpose_a, "
                           "transpose_b, epilogue in [0, 5)]");
    auto epilogue = static_cast<MatmulEpilogueKind>(attrs.ints[2]);
    if (inputs.size() != static_cast<size_t>(matmulEpilogueInputs(epilogue)) ||
        outputs.size() != static_cast<size_t>(matmulEpilogueOutputs(epilogue)))
      return Status::error(StatusCode::InvalidArgument,
                           "MatmulEpilogue: expected " +
                               std::to_string(matmulEpilogueInputs(epilogue)) +
                               " inputs and " +
                               std::to_string(matmulEpilogueOutputs(epilogue)) +
                               " outputs for epilogue " +
                               std::to_string(attrs.ints[2]));
    const TensorRef &lhs = inputs[0], &rhs = inputs[1], &out = outputs[0];
    if (lhs.rank() < 2 || rhs.rank() != 2 || rhs.dtype != lhs.dtype)
      return refuse("cuBLASLt epilogues take a rank-2 rhs of the lhs's type");
    MatmulProblem problem;
    problem.operands = lhs.dtype;
    problem.result = out.dtype;
    problem.transA = attrs.ints[0] != 0;
    problem.transB = attrs.ints[1] != 0;
    problem.sharedRhs = true;
    problem.hasEpilogue = true;
    problem.epilogue = epilogue;
    if (problem.transA && lhs.rank() != 2)
      return refuse("a transposed lhs must be rank 2 for one GEMM");
    int64_t lr = lhs.rank();
    // A row-major lhs [..., M, K] with a shared rhs is one GEMM of batch·M
    // rows: the bias and the pre-activation are then plain matrices.
    problem.m = numElements(lhs.shape) / lhs.shape[lr - 1];
    problem.k = lhs.shape[lr - 1];
    if (problem.transA) {
      problem.m = lhs.shape[1];
      problem.k = lhs.shape[0];
    }
    problem.n = rhs.shape[problem.transB ? 0 : 1];
    if (epilogue == MatmulEpilogueKind::BiasGradient) {
      // BGRADA: the sum over K of cuBLASLt's A, which is our rhs.
      if (outputs[1].dtype != out.dtype ||
          outputs[1].numElements() != problem.n)
        return refuse("expected a bias gradient of N elements of the "
                      "result's type");
    } else if (inputs[2].dtype != out.dtype ||
               inputs[2].shape != Shape{problem.n}) {
      return refuse("expected a bias [N] of the result's type");
    }
    if (epilogue == MatmulEpilogueKind::BiasResidual &&
        (inputs[3].dtype != out.dtype || inputs[3].shape != out.shape))
      return refuse("expected a residual of the result's type and shape");
    if (epilogue == MatmulEpilogueKind::BiasGeluAux &&
        (outputs[1].dtype != out.dtype || outputs[1].shape != out.shape))
      return refuse("expected a pre-activation of the result's type and shape");
    if (Status status = checkMatmulProblem(problem); !status)
      return refuse(status.message());
    choice.route = KernelChoice::Route::Gemm;
    choice.matmul = problem;
    if (epilogue == MatmulEpilogueKind::BiasGradient) {
      // Where cuBLASLt has no BGRADA algorithm for the problem, the launch
      // runs the plain GEMM and this reduction of the rhs over K.
      KernelChoice reduce;
      LLMC_RETURN_IF_ERROR(selectKernel(
          KernelKind::ReduceSum, biasGradientReduceAttrs(problem),
          {biasGradientRows(problem, rhs)},
          {biasGradientSums(problem, outputs[1])}, reduce));
      choice.entries = reduce.entries;
      choice.scratchBytes = reduce.scratchBytes;
    }
    return Status::ok();
  }
  case KernelKind::Gather:
  case KernelKind::Embedding: {
    LLMC_RETURN_IF_ERROR(expect(2, 2, kind == KernelKind::Gather ? 1 : 0, 0));
    std::string index = indexSuffix(inputs[1].dtype);
    if (index.empty())
      return refuse("indices must be i32 or i64");
    if (outputs[0].dtype != inputs[0].dtype)
      return refuse("expected the result to have the table's type");
    return runs({"llmc_gather_" + bytesSuffix(inputs[0].dtype) + "_" + index});
  }
  case KernelKind::ScatterAdd: {
    LLMC_RETURN_IF_ERROR(expect(3, 3, 1, 0));
    const TensorRef &dest = inputs[0], &updates = inputs[2];
    std::string type = floatSuffix(dest.dtype);
    std::string index = indexSuffix(inputs[1].dtype);
    if (type.empty() || index.empty() || updates.dtype != dest.dtype ||
        outputs[0].dtype != dest.dtype)
      return refuse("scatter_add covers f32 and bf16 (dest, updates and "
                    "result of one type) with i32 or i64 indices");
    if (dest.dtype == DType::F32)
      return runs({"llmc_scatter_add_f32_" + index});
    // bf16, as the CPU: accumulate in an f32 copy of dest (the scratch),
    // round once at the end.
    choice.scratchBytes = static_cast<size_t>(dest.numElements()) * 4;
    return runs({"llmc_widen_bf16_f32", "llmc_scatter_add_f32_bf16_" + index,
                 "llmc_narrow_f32_bf16"});
  }
  case KernelKind::Iota: {
    LLMC_RETURN_IF_ERROR(expect(0, 0, 1, 0));
    std::string suffix = floatSuffix(outputs[0].dtype);
    if (suffix.empty())
      suffix = indexSuffix(outputs[0].dtype);
    if (suffix.empty())
      return refuse("iota covers f32, bf16, i32 and i64");
    return runs({"llmc_iota_" + suffix});
  }
  case KernelKind::LayerNorm:
  case KernelKind::RmsNorm: {
    bool layer = kind == KernelKind::LayerNorm;
    LLMC_RETURN_IF_ERROR(expect(2, layer ? 3 : 2, 0, 1));
    const TensorRef &x = inputs[0];
    std::string type = floatSuffix(x.dtype),
                params = floatSuffix(inputs[1].dtype);
    if (type.empty() || params.empty() ||
        (inputs.size() == 3 && inputs[2].dtype != inputs[1].dtype) ||
        outputs[0].dtype != x.dtype || x.rank() < 1)
      return refuse("norms cover f32 and bf16 inputs (the result of the "
                    "input's type) with f32 or bf16 gamma (and beta of "
                    "gamma's type)");
    // The launch takes a "rows" entry (the row in registers, 16-byte
    // loads; up to 4 or 8 packs per lane) when the row length and the
    // pointers allow.
    std::string name = layer ? "llmc_layer_norm_" : "llmc_rms_norm_";
    return runs({name + type + "_" + params,
                 name + "rows_" + type + "_" + params,
                 name + "rows8_" + type + "_" + params});
  }
  case KernelKind::LayerNormGrad:
  case KernelKind::RmsNormGrad: {
    bool layer = kind == KernelKind::LayerNormGrad;
    size_t results = layer ? 3 : 2;
    if (inputs.size() != 3 || outputs.size() != results ||
        attrs.floats.empty())
      return Status::error(StatusCode::InvalidArgument,
                           std::string(kernelName(kind)) +
                               ": expected 3 inputs, " +
                               std::to_string(results) +
                               " outputs and 1 float, got " +
                               std::to_string(inputs.size()) + ", " +
                               std::to_string(outputs.size()) + " and " +
                               std::to_string(attrs.floats.size()));
    const TensorRef &x = inputs[0], &gamma = inputs[1];
    std::string type = floatSuffix(x.dtype), params = floatSuffix(gamma.dtype);
    bool typesMatch = inputs[2].dtype == x.dtype &&
                      outputs[0].dtype == x.dtype &&
                      outputs[1].dtype == gamma.dtype &&
                      (!layer || outputs[2].dtype == gamma.dtype);
    if (type.empty() || params.empty() || !typesMatch || x.rank() < 1)
      return refuse("norm gradients cover f32 and bf16 x and dy (dx of their "
                    "type) with f32 or bf16 gamma (dgamma and dbeta of its "
                    "type)");
    choice.scratchBytes = normGradLaunch(x).scratchBytes();
    if (normGradLaunch(x).chunks > 0x7fffffffLL)
      return refuse("more than 2^31 - 1 chunks of rows");
    // The launch takes a "rows" entry (the row in registers, 16-byte
    // loads) when the row length and the pointers allow.
    return runs({"llmc_norm_grad_" + type + "_" + params,
                 "llmc_norm_grad_finish_" + params,
                 "llmc_norm_grad_rows4_" + type + "_" + params,
                 "llmc_norm_grad_rows8_" + type + "_" + params});
  }
  case KernelKind::Softmax: {
    LLMC_RETURN_IF_ERROR(expect(1, 1, 1, 0));
    std::string suffix = floatSuffix(inputs[0].dtype);
    if (inputs[0].dtype == DType::BF16 && outputs[0].dtype == DType::F32)
      return runs({"llmc_softmax_bf16_f32"});
    if (suffix.empty() || outputs[0].dtype != inputs[0].dtype)
      return refuse("softmax covers f32 and bf16, and bf16 to f32");
    return runs({"llmc_softmax_" + suffix});
  }
  case KernelKind::Attention: {
    // The result and, optionally, the rows' log-sum-exp (f32 [B, Hq, T]).
    if (outputs.size() == 2 &&
        (outputs[1].dtype != DType::F32 ||
         outputs[1].numElements() != flashRows(outputs[0])))
      return refuse("attention's log-sum-exp is f32 [B, Hq, T]");
    LLMC_RETURN_IF_ERROR(expectOperands(
        kind, attrs, inputs,
        outputs.size() == 2 ? std::vector<TensorRef>{outputs[0]} : outputs, 3,
        3, 1, 1));
    FlashLaunch flash;
    if (std::string why = flashLaunch(inputs, attrs, flash, &outputs[0]);
        !why.empty())
      return refuse(why);
    if (outputs[0].dtype != inputs[0].dtype)
      return refuse("attention expects one element type throughout");
    if (flash.tensorCores)
      return runs({"llmc_flash_attention_tc_forward_" + flash.suffix,
                   "llmc_flash_attention_forward_" + flash.suffix});
    return runs({"llmc_flash_attention_forward_" + flash.suffix});
  }
  case KernelKind::AttentionGrad: {
    // Three outputs dq, dk, dv, or one packed gradient (layout 2); the
    // forward's log-sum-exp optionally as a sixth input.
    if (inputs.size() < 5 || inputs.size() > 6 ||
        (outputs.size() != 3 && outputs.size() != 1) || attrs.ints.empty() ||
        attrs.floats.empty())
      return Status::error(StatusCode::InvalidArgument,
                           "AttentionGrad: expected 5-6 inputs, 3 outputs (1 "
                           "packed), 1 int and 1 float, got " +
                               std::to_string(inputs.size()) + ", " +
                               std::to_string(outputs.size()) + ", " +
                               std::to_string(attrs.ints.size()) + " and " +
                               std::to_string(attrs.floats.size()));
    FlashLaunch flash;
    if (std::string why = flashLaunch(inputs, attrs, flash); !why.empty())
      return refuse(why);
    bool packed = attrs.ints.size() > 1 &&
                  attrs.ints[1] == static_cast<int64_t>(AttentionLayout::Packed);
    if (packed != (outputs.size() == 1))
      return refuse(packed ? "packed attention_grad writes one gradient"
                           : "attention_grad writes dq, dk and dv");
    for (const TensorRef &operand : {inputs[3], inputs[4]})
      if (operand.dtype != inputs[0].dtype)
        return refuse("attention_grad expects one element type throughout");
    for (const TensorRef &operand : outputs)
      if (operand.dtype != inputs[0].dtype)
        return refuse("attention_grad expects one element type throughout");
    if (inputs.size() == 6 && (inputs[5].dtype != DType::F32 ||
                               inputs[5].numElements() != flashRows(inputs[3])))
      return refuse("attention_grad's log-sum-exp is f32 [B, Hq, T]");
    // The log-sum-exp and delta of every query row (f32 each): the rows of
    // out, [B, Hq, T] in any layout.
    choice.scratchBytes =
        static_cast<size_t>(flashRows(inputs[3])) * 2 * sizeof(float);
    if (flash.tensorCores)
      return runs({"llmc_flash_attention_tc_grad_rows_" + flash.suffix,
                   "llmc_flash_attention_tc_grad_keys_" + flash.suffix,
                   "llmc_flash_attention_grad_rows_" + flash.suffix,
                   "llmc_flash_attention_grad_keys_" + flash.suffix});
    return runs({"llmc_flash_attention_grad_rows_" + flash.suffix,
                 "llmc_flash_attention_grad_keys_" + flash.suffix});
  }
  case KernelKind::Rope: {
    LLMC_RETURN_IF_ERROR(expect(1, 2, 0, 1));
    const TensorRef &x = inputs[0];
    std::string suffix = floatSuffix(x.dtype);
    std::string index =
        inputs.size() == 2 ? indexSuffix(inputs[1].dtype) : "i32";
    if (suffix.empty() || index.empty() || x.rank() < 2 ||
        outputs[0].dtype != x.dtype || x.shape.back() % 2 != 0)
      return refuse("rope covers f32 and bf16 [..., T, D] with an even D and "
                    "i32 or i64 positions");
    // The cos and sin tables [T, D/2] in double (RopeKernelsSource.cpp).
    choice.scratchBytes =
        planRopeLaunch(x.shape, x.dtype, nullptr, nullptr, 1).scratchBytes();
    return runs({"llmc_rope_table_" + index, "llmc_rope_rotate_" + suffix,
                 "llmc_rope_rotate_vec_" + suffix});
  }
  case KernelKind::CrossEntropy: {
    // Outputs: the loss, and optionally each position's log-sum-exp.
    if (inputs.size() != 2 || outputs.empty() || outputs.size() > 2 ||
        attrs.ints.size() < 3)
      return Status::error(StatusCode::InvalidArgument,
                           "CrossEntropy: expected 2 inputs, 1 or 2 outputs "
                           "and 3 ints");
    std::string suffix = floatSuffix(inputs[0].dtype);
    std::string index = indexSuffix(inputs[1].dtype);
    if (suffix.empty() || index.empty() || outputs[0].dtype != DType::F32 ||
        inputs[0].rank() < 1)
      return refuse("cross_entropy covers f32 and bf16 logits, i32 or i64 "
                    "targets, an f32 result");
    if (outputs.size() == 2 &&
        (outputs[1].dtype != DType::F32 ||
         outputs[1].numElements() != inputs[1].numElements()))
      return refuse("cross_entropy's lse is f32, one per position");
    if (inputs[1].numElements() > 0x7fffffffLL ||
        inputs[0].shape.back() > 0x7fffffffLL)
      return refuse("more than 2^31 - 1 positions or classes");
    // One double loss per position.
    choice.scratchBytes =
        static_cast<size_t>(std::max<int64_t>(1, inputs[1].numElements())) *
        sizeof(double);
    // The launch takes the "_vec" row entry (16-byte loads) when the row
    // length and the pointer allow.
    return runs({"llmc_cross_entropy_rows_" + suffix + "_" + index,
                 "llmc_cross_entropy_rows_" + suffix + "_" + index + "_vec",
                 "llmc_cross_entropy_finish_" + index});
  }
  case KernelKind::CrossEntropyGrad: {
    // Inputs: logits, targets, dloss, and optionally the forward's lse.
    LLMC_RETURN_IF_ERROR(expect(3, 4, 3, 0));
    std::string suffix = floatSuffix(inputs[0].dtype);
    std::string index = indexSuffix(inputs[1].dtype);
    if (suffix.empty() || index.empty() || inputs[2].dtype != DType::F32 ||
        outputs[0].dtype != inputs[0].dtype || inputs[0].rank() < 1)
      return refuse("cross_entropy_grad covers f32 and bf16 logits (dlogits "
                    "of their type), i32 or i64 targets, an f32 dloss");
    if (inputs.size() == 4 &&
        (inputs[3].dtype != DType::F32 ||
         inputs[3].numElements() != inputs[1].numElements()))
      return refuse("cross_entropy_grad's lse is f32, one per position");
    if (inputs[1].numElements() > 0x7fffffffLL ||
        inputs[0].shape.back() > 0x7fffffffLL)
      return refuse("more than 2^31 - 1 positions or classes");
    // The weight of a mean or sum (one double).
    choice.scratchBytes = sizeof(double);
    // The launch takes the "_vec" row entry (16-byte moves) when the
    // row length and the pointers allow.
    return runs({"llmc_cross_entropy_grad_weight_" + index,
                 "llmc_cross_entropy_grad_" + suffix + "_" + index,
                 "llmc_cross_entropy_grad_" + suffix + "_" + index + "_vec"});
  }
  case KernelKind::SumSquares: {
    LLMC_RETURN_IF_ERROR(expect(1, 1, 0, 0));
    if (inputs[0].dtype != DType::F32 || outputs[0].dtype != DType::F32 ||
        outputs[0].numElements() != 1)
      return refuse("sum_squares covers an f32 tensor into one f32");
    choice.scratchBytes = static_cast<size_t>(std::max<long long>(
                              1, sumSquaresChunks(inputs[0].numElements()))) *
                          sizeof(double);
    return runs({"llmc_sum_squares_partial", "llmc_sum_squares_finish"});
  }
  case KernelKind::LrSchedule: {
    LLMC_RETURN_IF_ERROR(expect(1, 1, 3, 2));
    std::string suffix = floatSuffix(outputs[0].dtype);
    if (suffix.empty() || inputs[0].dtype != outputs[0].dtype)
      return refuse("lr_schedule covers f32 and bf16");
    return runs({"llmc_lr_schedule_" + suffix});
  }
  case KernelKind::MoeTopK: {
    if (inputs.size() != 1 || outputs.size() != 2 || attrs.ints.size() < 2)
      return Status::error(StatusCode::InvalidArgument,
                           "MoeTopK: expected 1 input, 2 outputs and 2 ints");
    std::string type = floatSuffix(inputs[0].dtype);
    std::string index = indexSuffix(outputs[1].dtype);
    if (type.empty() || index.empty() || outputs[0].dtype != inputs[0].dtype ||
        inputs[0].rank() != 2)
      return refuse("moe_top_k covers f32 and bf16 logits [N, E] (weights of "
                    "their type) with i32 or i64 indices");
    if (inputs[0].shape[1] > 256 || attrs.ints[0] > 256)
      return refuse("moe_top_k covers at most 256 experts");
    return runs({"llmc_moe_topk_" + type + "_" + index});
  }
  case KernelKind::MoeDispatch:
  case KernelKind::MoeCombine: {
    bool dispatch = kind == KernelKind::MoeDispatch;
    LLMC_RETURN_IF_ERROR(expect(dispatch ? 2 : 3, dispatch ? 2 : 3, 0, 0));
    const TensorRef &indices = inputs[dispatch ? 1 : 2];
    std::string type = floatSuffix(inputs[0].dtype);
    std::string index = indexSuffix(indices.dtype);
    if (type.empty() || index.empty() || outputs[0].dtype != inputs[0].dtype ||
        indices.rank() != 2)
      return refuse("moe_dispatch and moe_combine cover f32 and bf16 with i32 "
                    "or i64 indices [N, k]");
    // The slot of every (token, choice) pair, in the scratch.
    choice.scratchBytes =
        static_cast<size_t>(indices.numElements()) * sizeof(long long);
    if (dispatch)
      return runs({"llmc_moe_slots_" + index,
                   "llmc_moe_dispatch_" + type + "_" + index});
    std::string weights = floatSuffix(inputs[1].dtype);
    if (weights.empty() || (type == "f32" && weights != "f32"))
      return refuse("moe_combine covers weights of the outputs' type, or f32 "
                    "weights with bf16 outputs");
    return runs({"llmc_moe_slots_" + index,
                 "llmc_moe_combine_" + type + "_" + weights + "_" + index});
  }
  default:
    return refuse("");
  }
}

void commandOperands(const RankProgram &program, const Command &command,
                     std::vector<TensorRef> &inputs,
                     std::vector<TensorRef> &outputs) {
  inputs.clear();
  outputs.clear();
  for (int32_t value : command.inputs)
    inputs.push_back(
        TensorRef{nullptr, program.values[value].dtype, program.values[value].shape});
  for (int32_t value : command.outputs)
    outputs.push_back(
        TensorRef{nullptr, program.values[value].dtype, program.values[value].shape});
}

Status selectCommand(const RankProgram &program, const Command &command,
                     KernelChoice &choice) {
  choice = KernelChoice();
  Status status = Status::ok();
  switch (command.kind) {
  case CommandKind::Collective:
  case CommandKind::HostStep:
    status = Status::error(StatusCode::Unimplemented,
                           "collectives and host steps do not run on the CUDA "
                           "session yet");
    break;
  case CommandKind::Copy:
    choice.route = KernelChoice::Route::Copy;
    break;
  case CommandKind::Kernel:
  case CommandKind::Gemm: {
    std::vector<TensorRef> inputs, outputs;
    commandOperands(program, command, inputs, outputs);
    status = selectKernel(command.kernel, command.attrs, inputs, outputs,
                          choice);
    break;
  }
  }
  if (status)
    return status;
  return Status::error(status.code(),
                       "at " + command.origin + ": " + status.message());
}

Status checkOneRank(const Executable &executable) {
  // Validation makes the mesh's device count the number of ranks, so this
  // also refuses every mesh of more than one device in one process
  // (several GPUs run one process each: createMultiProcessSession).
  if (executable.ranks.size() != 1)
    return Status::error(StatusCode::Unimplemented,
                         "the CUDA session of one process runs one-rank "
                         "programs; this one has " +
                             std::to_string(executable.ranks.size()) +
                             " ranks on the mesh " +
                             formatMesh(executable.mesh) +
                             ": run one process per GPU with `llmc launch -n " +
                             std::to_string(executable.ranks.size()) +
                             " RUN.toml` (docs/distributed.md), or on the "
                             "CPU with --device cpu");
  return Status::ok();
}

} // namespace llmc::rt::cuda
