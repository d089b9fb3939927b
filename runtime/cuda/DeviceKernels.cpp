//===- DeviceKernels.cpp - launch any Kernels.def kernel on a GPU ---------===//
//
// Per kernel kind: the launch parameters computed from the operands' shapes
// as the CPU kernel computes them (runtime/cpu/), and the entry of
// DeviceKernelsSource.cpp, the elementwise unit or cuBLASLt that runs it.
// The shapes are trusted to be the checked ones of a validated program;
// what the device kernels cannot do (a dtype, a rank above 8) is refused
// with the kind and the operand types named.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/DeviceKernels.h"

#include <algorithm>
#include <chrono>
#include <cstring>

namespace llmc::rt::cuda {

namespace {

constexpr int kMaxRank = 8;
constexpr unsigned kRowThreads = 128; // 4 warps: 4 rows per block

// Host mirrors of the parameter structs of DeviceKernelsSource.cpp (same
// members, same order, hence the same layout).
struct StridedMove {
  int rank;
  long long shape[kMaxRank];
  long long inStrides[kMaxRank];
  long long base;
  long long count;
};

struct ReducePlan {
  int keptRank;
  long long keptSizes[kMaxRank];
  long long keptStrides[kMaxRank];
  int reducedRank;
  long long reducedSizes[kMaxRank];
  long long reducedStrides[kMaxRank];
  long long reduceCount;
  long long outputCount;
};

Shape rowMajorStrides(const Shape &shape) {
  Shape strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    strides[d - 1] = strides[d] * shape[d];
  return strides;
}

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

Status unsupported(KernelKind kind, const std::vector<TensorRef> &inputs,
                   const std::vector<TensorRef> &outputs,
                   const std::string &why) {
  return Status::error(StatusCode::Unimplemented,
                       "no CUDA kernel for " +
                           describeLaunch(kind, inputs, outputs) + " yet" +
                           (why.empty() ? "" : ": " + why));
}

/// "f32" / "bf16" suffix of the float composites, or "" when unsupported.
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

struct AxisView {
  int64_t outer = 1, size = 1, inner = 1;
};

AxisView viewAround(const Shape &shape, int64_t dim) {
  AxisView view;
  for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d) {
    if (d < dim)
      view.outer *= shape[d];
    else if (d == dim)
      view.size = shape[d];
    else
      view.inner *= shape[d];
  }
  return view;
}

// ---- Flash attention (FlashAttentionSource.cpp) ----

constexpr unsigned kFlashThreads = 128;

/// The tile sizes of FlashAttentionSource.cpp's FlashTiles: query tiles of
/// the forward kernel, query and key tiles of the backward ones.
constexpr long long kFlashForwardTile = 32;
long long flashBackwardTile(int capacity) { return capacity <= 64 ? 32 : 16; }

/// The query rows B * Hq * T of q [B, Hq, T, D] (at least 1): the entries
/// of the log-sum-exp and delta scratch of attention_grad.
int64_t flashRows(const TensorRef &q) {
  int64_t headDim = q.shape.empty() ? 1 : std::max<int64_t>(1, q.shape.back());
  return std::max<int64_t>(1, q.numElements() / headDim);
}

/// The launch of attention or attention_grad: kernel arguments (the types
/// of the kernels' parameters) and grid sizes.
struct FlashLaunch {
  std::string suffix; ///< "f32_d64" ...
  int heads = 0, kvHeads = 0, headDim = 0, causal = 0;
  long long seq = 0, kvSeq = 0;
  float scale = 0.0f;
  unsigned queryBlocks = 0; ///< forward or grad_rows
  unsigned keyBlocks = 0;   ///< grad_keys
};

/// Fills `launch` from q [B, Hq, T, D], k [B, Hkv, S, D] and the attributes;
/// returns why not when the kernels do not cover them ("" when they do).
std::string flashLaunch(const std::vector<TensorRef> &inputs,
                        const KernelAttrs &attrs, FlashLaunch &launch) {
  const TensorRef &q = inputs[0], &k = inputs[1], &v = inputs[2];
  std::string type = floatSuffix(q.dtype);
  if (type.empty() || q.rank() != 4 || k.rank() != 4 || k.dtype != q.dtype ||
      v.dtype != q.dtype)
    return "flash attention covers f32 and bf16 [B, H, T, D]";
  int64_t headDim = q.shape[3];
  // The kernels are instantiated for these head-dimension capacities; a
  // smaller D runs zero-padded in the next one up.
  int capacity = headDim <= 16 ? 16 : headDim <= 32 ? 32 : headDim <= 64 ? 64
                                  : headDim <= 128 ? 128 : 0;
  if (capacity == 0)
    return "flash attention covers head dimensions up to 128, got " +
           std::to_string(headDim);
  if (k.shape[1] < 1 || q.shape[1] % k.shape[1] != 0)
    return "expected the query heads to be a multiple of the key/value heads";
  launch.suffix = type + "_d" + std::to_string(capacity);
  launch.heads = static_cast<int>(q.shape[1]);
  launch.kvHeads = static_cast<int>(k.shape[1]);
  launch.seq = q.shape[2];
  launch.kvSeq = k.shape[2];
  launch.headDim = static_cast<int>(headDim);
  launch.causal = static_cast<int>(attrs.ints[0]);
  launch.scale = static_cast<float>(attrs.floats[0]);
  long long forwardTile = inputs.size() == 3 ? kFlashForwardTile
                                             : flashBackwardTile(capacity);
  long long backwardTile = flashBackwardTile(capacity);
  long long queryBlocks = q.shape[0] * q.shape[1] *
                          ((launch.seq + forwardTile - 1) / forwardTile);
  long long keyBlocks = k.shape[0] * k.shape[1] *
                        ((launch.kvSeq + backwardTile - 1) / backwardTile);
  if (queryBlocks > 0x7fffffffLL || keyBlocks > 0x7fffffffLL)
    return "more than 2^31 - 1 attention blocks";
  launch.queryBlocks = static_cast<unsigned>(queryBlocks);
  launch.keyBlocks = static_cast<unsigned>(keyBlocks);
  return "";
}

bool isElementwiseOnly(KernelKind kind) {
  return isCudaElementwiseKernel(kind) && kind != KernelKind::Compare;
}

} // namespace

CudaKernels::~CudaKernels() {
  if (scratch_)
    (void)cudaFree(scratch_);
}

Status CudaKernels::create(std::unique_ptr<CudaKernels> &kernels) {
  std::unique_ptr<CudaKernels> created(new CudaKernels());
  int device = 0, major = 0, minor = 0, multiprocessors = 0;
  LLMC_CUDA_CHECK(cudaGetDevice(&device), "cudaGetDevice");
  LLMC_CUDA_CHECK(
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
      "cudaDeviceGetAttribute(compute capability)");
  LLMC_CUDA_CHECK(
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device),
      "cudaDeviceGetAttribute(compute capability)");
  LLMC_CUDA_CHECK(cudaDeviceGetAttribute(
                      &multiprocessors, cudaDevAttrMultiProcessorCount, device),
                  "cudaDeviceGetAttribute(multiprocessors)");
  created->multiprocessors_ = static_cast<unsigned>(multiprocessors);
  created->nvrtc_.arch = "sm_" + std::to_string(major) + std::to_string(minor);

  auto begin = std::chrono::steady_clock::now();
  CompiledCuda compiled;
  LLMC_RETURN_IF_ERROR(compileCuda(deviceKernelUnit(),
                                   "llmc_device_kernels.cu", created->nvrtc_,
                                   compiled));
  LLMC_RETURN_IF_ERROR(CudaLibrary::load(compiled.cubin, created->primitives_));
  created->compileSeconds_ +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count();
  LLMC_RETURN_IF_ERROR(CublasLtMatmul::create(created->matmul_));
  kernels = std::move(created);
  return Status::ok();
}

unsigned CudaKernels::gridFor(int64_t items, unsigned threads) const {
  int64_t blocks = (items + threads - 1) / threads;
  int64_t cap = static_cast<int64_t>(multiprocessors_) * 8;
  return static_cast<unsigned>(std::max<int64_t>(1, std::min(blocks, cap)));
}

Status CudaKernels::reserveScratch(size_t bytes) {
  if (bytes <= scratchBytes_)
    return Status::ok();
  if (scratch_) {
    LLMC_CUDA_CHECK(cudaFree(scratch_), "cudaFree(scratch)");
    scratch_ = nullptr;
    scratchBytes_ = 0;
  }
  LLMC_CUDA_CHECK(cudaMalloc(&scratch_, bytes),
                  "cudaMalloc(" + std::to_string(bytes) + " bytes of scratch)");
  scratchBytes_ = bytes;
  return Status::ok();
}

Status CudaKernels::elementwise(KernelKind kind, const KernelAttrs &attrs,
                                const std::vector<TensorRef> &inputs,
                                const std::vector<TensorRef> &outputs,
                                Elementwise *&unit) {
  unit = nullptr;
  if (outputs.size() != 1)
    return unsupported(kind, inputs, outputs, "expected one result");
  ElementwiseSignature signature;
  signature.kind = kind;
  for (const TensorRef &input : inputs)
    signature.inputs.push_back(input.dtype);
  signature.result = outputs[0].dtype;
  signature.ints = attrs.ints;
  std::string key = describe(signature);
  auto found = elementwise_.find(key);
  if (found != elementwise_.end()) {
    unit = &found->second;
    return Status::ok();
  }
  Elementwise created;
  if (Status status = generateElementwiseKernel(signature, created.source);
      !status)
    return unsupported(kind, inputs, outputs, status.message());
  auto begin = std::chrono::steady_clock::now();
  CompiledCuda compiled;
  LLMC_RETURN_IF_ERROR(compileCuda(
      created.source.source, created.source.entry + ".cu", nvrtc_, compiled));
  LLMC_RETURN_IF_ERROR(CudaLibrary::load(compiled.cubin, created.library));
  compileSeconds_ +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count();
  unit = &(elementwise_[key] = std::move(created));
  return Status::ok();
}

Status CudaKernels::prepare(KernelKind kind, const KernelAttrs &attrs,
                            const std::vector<TensorRef> &inputs,
                            const std::vector<TensorRef> &outputs) {
  if (isElementwiseOnly(kind) ||
      (kind == KernelKind::Compare && !inputs.empty() &&
       !floatSuffix(inputs[0].dtype).empty())) {
    Elementwise *unit = nullptr;
    return elementwise(kind, attrs, inputs, outputs, unit);
  }
  switch (kind) {
  case KernelKind::MoeTopK:
  case KernelKind::MoeDispatch:
  case KernelKind::MoeCombine:
    return unsupported(kind, inputs, outputs,
                       "MoE routing runs on the CPU backend only (#7)");
  case KernelKind::AttentionGrad:
    // The log-sum-exp and delta of every query row (f32 each).
    if (!inputs.empty())
      return reserveScratch(static_cast<size_t>(flashRows(inputs[0])) * 2 *
                            sizeof(float));
    return Status::ok();
  case KernelKind::CrossEntropy:
    if (!inputs.empty())
      return reserveScratch(
          static_cast<size_t>(std::max<int64_t>(1, inputs[1].numElements())) *
          sizeof(double));
    return Status::ok();
  default:
    return Status::ok();
  }
}

Status CudaKernels::launchPrimitive(const std::string &entry, unsigned blocks,
                                    unsigned threads, size_t sharedBytes,
                                    std::vector<void *> &args,
                                    cudaStream_t stream) {
  cudaKernel_t kernel;
  LLMC_RETURN_IF_ERROR(primitives_->kernel(entry, kernel));
  LLMC_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void *>(kernel),
                                   dim3(blocks), dim3(threads), args.data(),
                                   sharedBytes, stream),
                  "launching " + entry);
  LLMC_CUDA_CHECK(cudaGetLastError(), "launching " + entry);
  return Status::ok();
}

Status CudaKernels::launch(KernelKind kind, const KernelAttrs &attrs,
                           const std::vector<TensorRef> &inputs,
                           const std::vector<TensorRef> &outputs,
                           cudaStream_t stream) {
  LLMC_RETURN_IF_ERROR(prepare(kind, attrs, inputs, outputs));
  auto refuse = [&](const std::string &why) {
    return unsupported(kind, inputs, outputs, why);
  };
  auto expectOperands = [&](size_t minInputs, size_t maxInputs, size_t ints,
                            size_t floats) -> Status {
    if (inputs.size() < minInputs || inputs.size() > maxInputs ||
        outputs.size() != 1 || attrs.ints.size() < ints ||
        attrs.floats.size() < floats)
      return Status::error(StatusCode::InvalidArgument,
                           std::string(kernelName(kind)) + ": expected " +
                               std::to_string(minInputs) + "-" +
                               std::to_string(maxInputs) +
                               " inputs, 1 output, " + std::to_string(ints) +
                               " ints and " + std::to_string(floats) +
                               " floats, got " + std::to_string(inputs.size()) +
                               ", " + std::to_string(outputs.size()) + ", " +
                               std::to_string(attrs.ints.size()) + " and " +
                               std::to_string(attrs.floats.size()));
    return Status::ok();
  };
  const TensorRef *out = outputs.empty() ? nullptr : &outputs[0];
  if (out && std::all_of(outputs.begin(), outputs.end(),
                         [](const TensorRef &t) { return t.numElements() == 0; }))
    return Status::ok();

  // 1. Elementwise: one generated unit per signature.
  if (isElementwiseOnly(kind) ||
      (kind == KernelKind::Compare && !inputs.empty() &&
       !floatSuffix(inputs[0].dtype).empty())) {
    Elementwise *unit = nullptr;
    LLMC_RETURN_IF_ERROR(elementwise(kind, attrs, inputs, outputs, unit));
    std::vector<const void *> pointers;
    for (const TensorRef &input : inputs)
      pointers.push_back(input.data);
    return launchElementwise(unit->source, *unit->library, pointers, out->data,
                             out->numElements(), stream);
  }

  // 2. Everything else.
  switch (kind) {
  case KernelKind::Compare: {
    LLMC_RETURN_IF_ERROR(expectOperands(2, 2, 1, 0));
    std::string index = indexSuffix(inputs[0].dtype);
    if (index.empty())
      return refuse("compare covers f32, bf16, i32 and i64");
    const void *lhs = inputs[0].data, *rhs = inputs[1].data;
    void *result = out->data;
    long long count = out->numElements();
    int direction = static_cast<int>(attrs.ints[0]);
    std::vector<void *> args = {&lhs, &rhs, &result, &count, &direction};
    return launchPrimitive("llmc_compare_" + index, gridFor(count, 256), 256, 0,
                           args, stream);
  }
  case KernelKind::Broadcast:
  case KernelKind::Transpose:
  case KernelKind::Slice: {
    LLMC_RETURN_IF_ERROR(expectOperands(1, 1, 0, 0));
    const TensorRef &in = inputs[0];
    if (out->rank() > kMaxRank || in.rank() > kMaxRank)
      return refuse("ranks above 8 are not supported");
    StridedMove move{};
    move.rank = static_cast<int>(out->rank());
    move.count = out->numElements();
    Shape inStrides = rowMajorStrides(in.shape);
    for (int d = 0; d < move.rank; ++d)
      move.shape[d] = out->shape[d];
    const std::vector<int64_t> &ints = attrs.ints;
    if (kind == KernelKind::Broadcast) {
      if (ints.size() != in.shape.size())
        return refuse("expected one dims entry per input dimension");
      for (size_t i = 0; i < ints.size(); ++i)
        if (in.shape[i] == out->shape[ints[i]] && in.shape[i] != 1)
          move.inStrides[ints[i]] = inStrides[i];
    } else if (kind == KernelKind::Transpose) {
      if (ints.size() != in.shape.size())
        return refuse("expected a permutation of the input's dimensions");
      for (size_t i = 0; i < ints.size(); ++i)
        move.inStrides[i] = inStrides[ints[i]];
    } else {
      size_t rank = in.shape.size();
      if (ints.size() != 3 * rank)
        return refuse("expected starts, limits and strides per dimension");
      for (size_t i = 0; i < rank; ++i) {
        move.inStrides[i] = inStrides[i] * ints[2 * rank + i];
        move.base += ints[i] * inStrides[i];
      }
    }
    const void *source = in.data;
    void *result = out->data;
    std::vector<void *> args = {&source, &result, &move};
    return launchPrimitive("llmc_strided_copy_" + bytesSuffix(in.dtype),
                           gridFor(move.count, 256), 256, 0, args, stream);
  }
  case KernelKind::Concat: {
    LLMC_RETURN_IF_ERROR(expectOperands(1, SIZE_MAX, 1, 0));
    int64_t dim = attrs.ints[0];
    AxisView view = viewAround(out->shape, dim);
    long long outer = view.outer, outRow = view.size * view.inner;
    long long column = 0;
    for (const TensorRef &in : inputs) {
      long long inRow = in.shape[dim] * view.inner;
      if (inRow > 0 && outer > 0) {
        const void *source = in.data;
        void *result = out->data;
        std::vector<void *> args = {&source, &result, &outer,
                                    &inRow,  &outRow, &column};
        LLMC_RETURN_IF_ERROR(
            launchPrimitive("llmc_concat_part_" + bytesSuffix(in.dtype),
                            gridFor(outer * inRow, 256), 256, 0, args, stream));
      }
      column += inRow;
    }
    return Status::ok();
  }
  case KernelKind::ReduceSum:
  case KernelKind::ReduceMax:
  case KernelKind::ReduceMean: {
    LLMC_RETURN_IF_ERROR(expectOperands(1, 1, 1, 0));
    const TensorRef &in = inputs[0];
    std::string types = floatSuffix(in.dtype) + "_" + floatSuffix(out->dtype);
    if (types != "f32_f32" && types != "bf16_f32" && types != "bf16_bf16")
      return refuse("reductions cover f32 -> f32 and bf16 -> f32 or bf16");
    if (in.rank() > kMaxRank)
      return refuse("ranks above 8 are not supported");
    std::vector<bool> reduced(in.shape.size(), false);
    for (int64_t d : attrs.ints)
      reduced[d] = true;
    ReducePlan plan{};
    plan.reduceCount = 1;
    plan.outputCount = 1;
    Shape strides = rowMajorStrides(in.shape);
    for (size_t d = 0; d < in.shape.size(); ++d) {
      if (reduced[d]) {
        plan.reducedSizes[plan.reducedRank] = in.shape[d];
        plan.reducedStrides[plan.reducedRank++] = strides[d];
        plan.reduceCount *= in.shape[d];
      } else {
        plan.keptSizes[plan.keptRank] = in.shape[d];
        plan.keptStrides[plan.keptRank++] = strides[d];
        plan.outputCount *= in.shape[d];
      }
    }
    int reduceKind = kind == KernelKind::ReduceSum   ? 0
                     : kind == KernelKind::ReduceMax ? 1
                                                     : 2;
    const void *source = in.data;
    void *result = out->data;
    std::vector<void *> args = {&source, &result, &plan, &reduceKind};
    unsigned blocks = static_cast<unsigned>(std::min<int64_t>(
        plan.outputCount, static_cast<int64_t>(multiprocessors_) * 64));
    return launchPrimitive("llmc_reduce_" + types, blocks, 256, 0, args,
                           stream);
  }
  case KernelKind::Matmul: {
    LLMC_RETURN_IF_ERROR(expectOperands(2, 2, 2, 0));
    const TensorRef &lhs = inputs[0], &rhs = inputs[1];
    MatmulProblem problem;
    problem.operands = lhs.dtype;
    problem.result = out->dtype;
    problem.transA = attrs.ints[0] != 0;
    problem.transB = attrs.ints[1] != 0;
    problem.sharedRhs = rhs.rank() == 2;
    int64_t lr = lhs.rank(), rr = rhs.rank();
    problem.batch = numElements(Shape(lhs.shape.begin(), lhs.shape.end() - 2));
    problem.m = lhs.shape[lr - (problem.transA ? 1 : 2)];
    problem.k = lhs.shape[lr - (problem.transA ? 2 : 1)];
    problem.n = rhs.shape[rr - (problem.transB ? 2 : 1)];
    if (problem.k == 0)
      return cudaStatus(cudaMemsetAsync(out->data, 0, out->bytes(), stream),
                        "cudaMemsetAsync(empty matmul)");
    return matmul_->run(problem, lhs.data, rhs.data, out->data, stream);
  }
  case KernelKind::Gather:
  case KernelKind::Embedding: {
    LLMC_RETURN_IF_ERROR(
        expectOperands(2, 2, kind == KernelKind::Gather ? 1 : 0, 0));
    const TensorRef &in = inputs[0], &indices = inputs[1];
    std::string index = indexSuffix(indices.dtype);
    if (index.empty())
      return refuse("indices must be i32 or i64");
    AxisView view = kind == KernelKind::Gather
                        ? viewAround(in.shape, attrs.ints[0])
                        : viewAround(in.shape, 0);
    const void *source = in.data, *ids = indices.data;
    void *result = out->data;
    long long outer = view.outer, size = view.size,
              count = indices.numElements(), inner = view.inner;
    std::vector<void *> args = {&source, &ids,   &result, &outer,
                                &size,   &count, &inner};
    return launchPrimitive("llmc_gather_" + bytesSuffix(in.dtype) + "_" + index,
                           gridFor(outer * count * inner, 256), 256, 0, args,
                           stream);
  }
  case KernelKind::ScatterAdd: {
    LLMC_RETURN_IF_ERROR(expectOperands(3, 3, 1, 0));
    const TensorRef &dest = inputs[0], &indices = inputs[1],
                    &updates = inputs[2];
    std::string index = indexSuffix(indices.dtype);
    if (dest.dtype != DType::F32 || index.empty())
      return refuse("scatter_add covers f32 with i32 or i64 indices");
    if (out->data != dest.data)
      LLMC_CUDA_CHECK(cudaMemcpyAsync(out->data, dest.data, dest.bytes(),
                                      cudaMemcpyDeviceToDevice, stream),
                      "cudaMemcpyAsync(scatter_add dest)");
    AxisView view = viewAround(dest.shape, attrs.ints[0]);
    void *result = out->data;
    const void *ids = indices.data, *source = updates.data;
    long long outer = view.outer, size = view.size,
              count = indices.numElements(), inner = view.inner;
    if (outer * count * inner == 0)
      return Status::ok();
    std::vector<void *> args = {&result, &ids,   &source, &outer,
                                &size,   &count, &inner};
    return launchPrimitive("llmc_scatter_add_f32_" + index,
                           gridFor(outer * count * inner, 256), 256, 0, args,
                           stream);
  }
  case KernelKind::Iota: {
    LLMC_RETURN_IF_ERROR(expectOperands(0, 0, 1, 0));
    std::string suffix = floatSuffix(out->dtype);
    if (suffix.empty())
      suffix = indexSuffix(out->dtype);
    if (suffix.empty())
      return refuse("iota covers f32, bf16, i32 and i64");
    AxisView view = viewAround(out->shape, attrs.ints[0]);
    void *result = out->data;
    long long count = out->numElements(), size = view.size, inner = view.inner;
    std::vector<void *> args = {&result, &count, &size, &inner};
    return launchPrimitive("llmc_iota_" + suffix, gridFor(count, 256), 256, 0,
                           args, stream);
  }
  case KernelKind::LayerNorm:
  case KernelKind::RmsNorm: {
    bool layer = kind == KernelKind::LayerNorm;
    LLMC_RETURN_IF_ERROR(expectOperands(2, layer ? 3 : 2, 0, 1));
    const TensorRef &x = inputs[0];
    std::string suffix = floatSuffix(x.dtype);
    if (suffix.empty() || inputs[1].dtype != x.dtype ||
        (inputs.size() == 3 && inputs[2].dtype != x.dtype))
      return refuse("norms cover f32 and bf16 with gamma (and beta) of the "
                    "input's type");
    long long dim = x.shape.back();
    long long rows = dim ? x.numElements() / dim : 0;
    double epsilon = attrs.floats[0];
    const void *source = x.data, *gamma = inputs[1].data;
    const void *beta = inputs.size() == 3 ? inputs[2].data : nullptr;
    void *result = out->data;
    std::vector<void *> args;
    if (layer)
      args = {&source, &gamma, &beta, &result, &rows, &dim, &epsilon};
    else
      args = {&source, &gamma, &result, &rows, &dim, &epsilon};
    unsigned blocks =
        static_cast<unsigned>((rows * 32 + kRowThreads - 1) / kRowThreads);
    return launchPrimitive((layer ? "llmc_layer_norm_" : "llmc_rms_norm_") +
                               suffix,
                           blocks, kRowThreads, 0, args, stream);
  }
  case KernelKind::Softmax: {
    LLMC_RETURN_IF_ERROR(expectOperands(1, 1, 1, 0));
    const TensorRef &x = inputs[0];
    std::string suffix = floatSuffix(x.dtype);
    if (suffix.empty())
      return refuse("softmax covers f32 and bf16");
    AxisView view = viewAround(x.shape, attrs.ints[0]);
    long long rows = view.outer * view.inner, length = view.size,
              inner = view.inner;
    const void *source = x.data;
    void *result = out->data;
    std::vector<void *> args = {&source, &result, &rows, &length, &inner};
    unsigned blocks =
        static_cast<unsigned>((rows * 32 + kRowThreads - 1) / kRowThreads);
    return launchPrimitive("llmc_softmax_" + suffix, blocks, kRowThreads, 0,
                           args, stream);
  }
  case KernelKind::Attention: {
    LLMC_RETURN_IF_ERROR(expectOperands(3, 3, 1, 1));
    FlashLaunch flash;
    if (std::string why = flashLaunch(inputs, attrs, flash); !why.empty())
      return refuse(why);
    const void *qp = inputs[0].data, *kp = inputs[1].data, *vp = inputs[2].data;
    void *result = out->data;
    std::vector<void *> args = {&qp,    &kp,          &vp,
                                &result, &flash.heads, &flash.kvHeads,
                                &flash.seq, &flash.kvSeq, &flash.headDim,
                                &flash.causal, &flash.scale};
    return launchPrimitive("llmc_flash_attention_forward_" + flash.suffix,
                           flash.queryBlocks, kFlashThreads, 0, args, stream);
  }
  case KernelKind::AttentionGrad: {
    if (inputs.size() != 5 || outputs.size() != 3 || attrs.ints.empty() ||
        attrs.floats.empty())
      return Status::error(StatusCode::InvalidArgument,
                           "AttentionGrad: expected 5 inputs, 3 outputs, 1 "
                           "int and 1 float, got " +
                               std::to_string(inputs.size()) + ", " +
                               std::to_string(outputs.size()) + ", " +
                               std::to_string(attrs.ints.size()) + " and " +
                               std::to_string(attrs.floats.size()));
    FlashLaunch flash;
    if (std::string why = flashLaunch(inputs, attrs, flash); !why.empty())
      return refuse(why);
    for (const TensorRef &operand : {inputs[3], inputs[4], outputs[0],
                                     outputs[1], outputs[2]})
      if (operand.dtype != inputs[0].dtype)
        return refuse("attention_grad expects one element type throughout");
    const void *qp = inputs[0].data, *kp = inputs[1].data,
               *vp = inputs[2].data, *op = inputs[3].data,
               *dop = inputs[4].data;
    void *dq = outputs[0].data, *dk = outputs[1].data, *dv = outputs[2].data;
    // lse and delta of every query row, in the scratch prepare() reserved.
    float *lse = static_cast<float *>(scratch_);
    float *delta = lse + flashRows(inputs[0]);
    // 1. Per query tile: the row statistics, then dq.
    if (flash.queryBlocks > 0) {
      std::vector<void *> rowArgs = {
          &qp,          &kp,           &vp,          &op,
          &dop,         &dq,           &lse,         &delta,
          &flash.heads, &flash.kvHeads, &flash.seq,  &flash.kvSeq,
          &flash.headDim, &flash.causal, &flash.scale};
      LLMC_RETURN_IF_ERROR(launchPrimitive(
          "llmc_flash_attention_grad_rows_" + flash.suffix, flash.queryBlocks,
          kFlashThreads, 0, rowArgs, stream));
    }
    // 2. Per key tile of each key/value head: dk and dv over its group's
    //    query heads (after 1, on the same stream).
    if (flash.keyBlocks > 0) {
      std::vector<void *> keyArgs = {
          &qp,          &kp,            &vp,          &dop,
          &lse,         &delta,         &dk,          &dv,
          &flash.heads, &flash.kvHeads, &flash.seq,   &flash.kvSeq,
          &flash.headDim, &flash.causal, &flash.scale};
      LLMC_RETURN_IF_ERROR(launchPrimitive(
          "llmc_flash_attention_grad_keys_" + flash.suffix, flash.keyBlocks,
          kFlashThreads, 0, keyArgs, stream));
    }
    return Status::ok();
  }
  case KernelKind::Rope: {
    LLMC_RETURN_IF_ERROR(expectOperands(1, 2, 0, 1));
    const TensorRef &x = inputs[0];
    std::string suffix = floatSuffix(x.dtype);
    std::string index =
        inputs.size() == 2 ? indexSuffix(inputs[1].dtype) : "i32";
    if (suffix.empty() || index.empty() || x.rank() < 2)
      return refuse("rope covers f32 and bf16 [..., T, D] with i32 or i64 "
                    "positions");
    long long seq = x.shape[x.rank() - 2], headDim = x.shape.back();
    long long rows = x.numElements() / headDim;
    double theta = attrs.floats[0];
    const void *source = x.data;
    const void *positions = inputs.size() == 2 ? inputs[1].data : nullptr;
    void *result = out->data;
    std::vector<void *> args = {&source, &positions, &result, &rows,
                                &seq,    &headDim,   &theta};
    return launchPrimitive("llmc_rope_" + suffix + "_" + index,
                           gridFor(rows * (headDim / 2), 256), 256, 0, args,
                           stream);
  }
  case KernelKind::CrossEntropy: {
    LLMC_RETURN_IF_ERROR(expectOperands(2, 2, 3, 0));
    const TensorRef &logits = inputs[0], &targets = inputs[1];
    std::string suffix = floatSuffix(logits.dtype);
    std::string index = indexSuffix(targets.dtype);
    if (suffix.empty() || index.empty() || out->dtype != DType::F32)
      return refuse("cross_entropy covers f32 and bf16 logits, i32 or i64 "
                    "targets, an f32 result");
    long long vocab = logits.shape.back(), count = targets.numElements();
    int reduction = static_cast<int>(attrs.ints[0]);
    int hasIgnore = static_cast<int>(attrs.ints[1]);
    long long ignoreIndex = attrs.ints[2];
    const void *lp = logits.data, *tp = targets.data;
    void *losses = scratch_, *result = out->data;
    if (count > 0) {
      std::vector<void *> rowArgs = {&lp,    &tp,        &losses,     &count,
                                     &vocab, &hasIgnore, &ignoreIndex};
      unsigned blocks =
          static_cast<unsigned>((count * 32 + kRowThreads - 1) / kRowThreads);
      LLMC_RETURN_IF_ERROR(
          launchPrimitive("llmc_cross_entropy_rows_" + suffix + "_" + index,
                          blocks, kRowThreads, 0, rowArgs, stream));
    }
    std::vector<void *> finishArgs = {
        &losses, &tp, &result, &count, &reduction, &hasIgnore, &ignoreIndex};
    return launchPrimitive("llmc_cross_entropy_finish_" + index, 1, 256, 0,
                           finishArgs, stream);
  }
  case KernelKind::LrSchedule: {
    LLMC_RETURN_IF_ERROR(expectOperands(1, 1, 3, 2));
    std::string suffix = floatSuffix(out->dtype);
    if (suffix.empty() || inputs[0].dtype != out->dtype)
      return refuse("lr_schedule covers f32 and bf16");
    const void *step = inputs[0].data;
    void *result = out->data;
    int scheduleKind = static_cast<int>(attrs.ints[0]);
    long long warmup = attrs.ints[1], total = attrs.ints[2];
    double peak = attrs.floats[0], minimum = attrs.floats[1];
    std::vector<void *> args = {&step,  &result, &scheduleKind, &warmup,
                                &total, &peak,   &minimum};
    return launchPrimitive("llmc_lr_schedule_" + suffix, 1, 1, 0, args, stream);
  }
  default:
    return refuse("");
  }
}

} // namespace llmc::rt::cuda
