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
#include "runtime/cuda/kernels/DeviceKernels.h"

#include <algorithm>
#include <cstdio>
#include <cstdint>
#include <cstring>
#include <initializer_list>

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

Shape rowMajorStrides(const Shape &shape) {
  Shape strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    strides[d - 1] = strides[d] * shape[d];
  return strides;
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

/// Whether every pointer is aligned to 16 bytes: the tensor-core kernels
/// move tiles with 16-byte loads.
bool aligned16(std::initializer_list<const void *> pointers) {
  for (const void *pointer : pointers)
    if (reinterpret_cast<uintptr_t>(pointer) % 16 != 0)
      return false;
  return true;
}

} // namespace

namespace {

/// Threads of the long-row kernels (LongRowKernelsSource.cpp).
constexpr unsigned kLongRowThreads = 256;
/// Packs of 16 bytes a lane of the norms' "rows" entries holds at most
/// (LLMC_NORM_PACKS, LongRowKernelsSource.cpp), and of their "rows8"
/// entries (NormRowsSource.cpp).
constexpr long long kNormPacks = 4;
constexpr long long kNormPacks8 = 8;
/// Threads of the cross_entropy_grad kernels (CrossEntropyGradSource.cpp).
constexpr unsigned kGradThreads = 1024;

/// Whether the loss kernels' rows move 16 bytes at a time: the row length
/// a multiple of 16 bytes and every pointer 16-byte aligned.
bool lossRowsVectorized(long long vocab, size_t bytes,
                        std::initializer_list<const void *> pointers) {
  long long perMove = 16 / static_cast<long long>(bytes);
  bool vec = vocab % perMove == 0;
  for (const void *p : pointers)
    vec = vec && reinterpret_cast<uintptr_t>(p) % 16 == 0;
  return vec;
}

/// Threads of a loss row block (CrossEntropySource.cpp): enough for
/// LLMC_CE_BATCH (4) moves per thread, a multiple of a warp, at most 256
/// (the rows of GPT-2's 50304 classes take 256; GPT-2 tiny's 128 one warp).
unsigned lossRowThreads(long long vocab, size_t bytes, bool vec) {
  long long moves = vec ? vocab / (16 / static_cast<long long>(bytes)) : vocab;
  long long warps = (moves + 4 * 32 - 1) / (4 * 32);
  return static_cast<unsigned>(32 * std::clamp<long long>(warps, 1, 8));
}

/// The long-row variant of a softmax row entry (a block
/// per row) for contiguous rows (inner 1) of 1024 elements and more, with
/// 16-byte loads ("_vec") when the row length and `pointers` allow; "" to
/// keep the warp-per-row entry.
std::string longRowEntry(const std::string &entry, long long inner,
                         long long length, size_t bytes,
                         std::initializer_list<const void *> pointers,
                         unsigned alignment = 16) {
  if (inner != 1 || length < 1024 || (bytes != 4 && bytes != 2))
    return "";
  long long perLoad = 16 / static_cast<long long>(bytes);
  bool vec = length % perLoad == 0;
  for (const void *p : pointers)
    vec = vec && reinterpret_cast<uintptr_t>(p) % alignment == 0;
  return entry + "_long" + (vec ? "_vec" : "");
}

/// The suffix of the move entries for elements of `bytes`.
std::string moveSuffix(size_t bytes) { return "b" + std::to_string(bytes); }

/// Rewrites a strided move (element units, `bytes` per element) as an
/// equal one with fewer dimensions and wider elements, and names its
/// entry: size-1 dimensions go, dimensions contiguous in the input merge
/// (the result is row-major), and when the innermost run is contiguous and
/// sizes, strides, base and both pointers allow, elements of 16, 8 or 4
/// bytes move at once (a bf16 transpose keeping the 64-element head rows
/// moves 16 bytes per thread instead of 2). Indices are 32-bit when the
/// result and every input offset fit.
std::string simplifyMove(StridedMove &move, size_t bytes, const void *in,
                         const void *out) {
  int rank = 0;
  for (int d = 0; d < move.rank; ++d) {
    if (move.shape[d] == 1)
      continue;
    if (rank > 0 &&
        move.inStrides[rank - 1] == move.inStrides[d] * move.shape[d]) {
      move.shape[rank - 1] *= move.shape[d];
      move.inStrides[rank - 1] = move.inStrides[d];
      continue;
    }
    move.shape[rank] = move.shape[d];
    move.inStrides[rank] = move.inStrides[d];
    ++rank;
  }
  if (rank == 0) { // one element
    move.shape[0] = 1;
    move.inStrides[0] = 0;
    rank = 1;
  }
  move.rank = rank;
  size_t width = bytes;
  if (move.inStrides[rank - 1] == 1)
    for (long long w : {16LL, 8LL, 4LL}) {
      long long f = w / static_cast<long long>(bytes);
      if (f <= 1 || move.shape[rank - 1] % f || move.base % f ||
          reinterpret_cast<uintptr_t>(in) % w ||
          reinterpret_cast<uintptr_t>(out) % w)
        continue;
      bool strides = true;
      for (int d = 0; d + 1 < rank; ++d)
        strides = strides && move.inStrides[d] % f == 0;
      if (!strides)
        continue;
      move.shape[rank - 1] /= f;
      for (int d = 0; d + 1 < rank; ++d)
        move.inStrides[d] /= f;
      move.base /= f;
      move.count /= f;
      width = static_cast<size_t>(w);
      break;
    }
  long long lastInput = move.base;
  for (int d = 0; d < rank; ++d)
    lastInput += (move.shape[d] - 1) * move.inStrides[d];
  bool small = move.count < (1LL << 31) && lastInput < (1LL << 31);
  return std::string("llmc_strided_copy") + (small ? "32_" : "_") +
         moveSuffix(width);
}

} // namespace

Status CudaKernels::launch(KernelKind kind, const KernelAttrs &attrs,
                           const std::vector<TensorRef> &inputs,
                           const std::vector<TensorRef> &outputs,
                           cudaStream_t stream, const void *residualAddend) {
  // Attention that cuDNN takes (DeviceKernelsCudnn.cpp).
  if (kind == KernelKind::Attention || kind == KernelKind::AttentionGrad) {
    bool cudnn = false;
    LLMC_RETURN_IF_ERROR(
        launchCudnn(kind, attrs, inputs, outputs, stream, cudnn));
    if (cudnn)
      return Status::ok();
  }
  // selectKernel has checked the operand and attribute counts and types;
  // what follows computes the launch parameters of the chosen entries.
  KernelChoice choice;
  LLMC_RETURN_IF_ERROR(prepare(kind, attrs, inputs, outputs, choice));
  auto refuse = [&](const std::string &why) {
    return Status::error(StatusCode::Unimplemented,
                         "no CUDA kernel for " +
                             describeLaunch(kind, inputs, outputs) + " yet: " +
                             why);
  };
  const std::vector<std::string> &entries = choice.entries;
  // A fused region's marker launches nothing: the session runs the region's
  // kernel or, where the generator refused it, the commands that follow.
  if (kind == KernelKind::FusedElementwise)
    return Status::ok();
  const TensorRef *out = outputs.empty() ? nullptr : &outputs[0];
  if (out && std::all_of(outputs.begin(), outputs.end(),
                         [](const TensorRef &t) { return t.numElements() == 0; }))
    return Status::ok();

  // 1. Elementwise: one generated unit per signature.
  if (choice.route == KernelChoice::Route::Elementwise) {
    Elementwise *unit = nullptr;
    LLMC_RETURN_IF_ERROR(elementwise(choice.elementwise, unit));
    std::vector<const void *> pointers;
    for (const TensorRef &input : inputs)
      pointers.push_back(input.data);
    return launchElementwise(unit->source, *unit->library, pointers, out->data,
                             out->numElements(), stream);
  }

  // 2. cuBLASLt.
  if (choice.route == KernelChoice::Route::Gemm) {
    if (choice.matmul.k == 0)
      return cudaStatus(cudaMemsetAsync(out->data, 0, out->bytes(), stream),
                        "cudaMemsetAsync(empty matmul)");
    const MatmulProblem &problem = choice.matmul;
    MatmulEpilogueOperands epilogue;
    bool biasGradient =
        problem.hasEpilogue &&
        problem.epilogue == MatmulEpilogueKind::BiasGradient;
    if (biasGradient)
      epilogue.biasGradient = outputs[1].data;
    else if (problem.hasEpilogue)
      epilogue.bias = inputs[2].data;
    if (problem.hasEpilogue &&
        problem.epilogue == MatmulEpilogueKind::BiasResidual)
      epilogue.residual = inputs[3].data;
    if (problem.hasEpilogue &&
        problem.epilogue == MatmulEpilogueKind::BiasGeluAux)
      epilogue.preActivation = outputs[1].data;
    if (!biasGradient || !biasGradientFallback_.count(problem.key())) {
      Status status = matmul_->run(problem, inputs[0].data, inputs[1].data,
                                   out->data, stream, epilogue);
      if (!biasGradient || status)
        return status;
      // cuBLASLt has no BGRADA algorithm for this problem (Unimplemented)
      // or refused the one it offered: from now on the plain GEMM, then the
      // bias gradient with ReduceSum's kernels (the selection's entries).
      std::fprintf(stderr,
                   "llmc: cuBLASLt bias-gradient epilogue not available for "
                   "a GEMM of M=%lld N=%lld K=%lld (%s); running the GEMM and "
                   "a reduction\n",
                   static_cast<long long>(problem.m),
                   static_cast<long long>(problem.n),
                   static_cast<long long>(problem.k), status.message().c_str());
      biasGradientFallback_.insert(problem.key());
    }
    MatmulProblem plain = problem;
    plain.hasEpilogue = false;
    LLMC_RETURN_IF_ERROR(matmul_->run(plain, inputs[0].data, inputs[1].data,
                                      out->data, stream));
    return launchReduction(KernelKind::ReduceSum, entries,
                           biasGradientReduceAttrs(problem).ints,
                           biasGradientRows(problem, inputs[1]),
                           biasGradientSums(problem, outputs[1]), stream);
  }

  // 3. The entries of the non-elementwise unit.
  switch (kind) {
  case KernelKind::Compare: {
    const void *lhs = inputs[0].data, *rhs = inputs[1].data;
    void *result = out->data;
    long long count = out->numElements();
    int direction = static_cast<int>(attrs.ints[0]);
    std::vector<void *> args = {&lhs, &rhs, &result, &count, &direction};
    return launchPrimitive(entries[0], gridFor(count, 256), 256, 0, args,
                           stream);
  }
  case KernelKind::Broadcast:
  case KernelKind::Transpose:
  case KernelKind::Slice: {
    const TensorRef &in = inputs[0];
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
    std::string entry = simplifyMove(move, dtypeSize(in.dtype), source, result);
    std::vector<void *> args = {&source, &result, &move};
    return launchPrimitive(entry, gridFor(move.count, 256), 256, 0, args,
                           stream);
  }
  case KernelKind::Concat: {
    int64_t dim = attrs.ints[0];
    AxisView view = viewAround(out->shape, dim);
    long long outer = view.outer, outRow = view.size * view.inner;
    long long column = 0;
    for (const TensorRef &in : inputs) {
      long long inRow = in.shape[dim] * view.inner;
      if (inRow > 0 && outer > 0) {
        const void *source = in.data;
        void *result = out->data;
        // As a strided copy's: wider elements where every row and the
        // column stay whole, 32-bit indices where they fit.
        size_t bytes = dtypeSize(in.dtype);
        long long wide = 1;
        for (long long w : {16LL, 8LL, 4LL, 2LL}) {
          long long f = w / static_cast<long long>(bytes);
          if (f <= 1 || inRow % f || outRow % f || column % f ||
              reinterpret_cast<uintptr_t>(source) % w ||
              reinterpret_cast<uintptr_t>(result) % w)
            continue;
          wide = f;
          break;
        }
        long long partRow = inRow / wide, partOutRow = outRow / wide,
                  partColumn = column / wide;
        bool small = outer * partOutRow < (1LL << 31);
        std::string entry = std::string("llmc_concat_part") +
                            (small ? "32_" : "_") +
                            moveSuffix(bytes * static_cast<size_t>(wide));
        std::vector<void *> args = {&source, &result,     &outer,
                                    &partRow, &partOutRow, &partColumn};
        LLMC_RETURN_IF_ERROR(launchPrimitive(
            entry, gridFor(outer * partRow, 256), 256, 0, args, stream));
      }
      column += inRow;
    }
    return Status::ok();
  }
  case KernelKind::ReduceSum:
  case KernelKind::ReduceMax:
  case KernelKind::ReduceMean:
    return launchReduction(kind, entries, attrs.ints, inputs[0], *out, stream);
  case KernelKind::Gather:
  case KernelKind::Embedding: {
    const TensorRef &in = inputs[0], &indices = inputs[1];
    AxisView view = kind == KernelKind::Gather
                        ? viewAround(in.shape, attrs.ints[0])
                        : viewAround(in.shape, 0);
    const void *source = in.data, *ids = indices.data;
    void *result = out->data;
    long long outer = view.outer, size = view.size,
              count = indices.numElements(), inner = view.inner;
    std::vector<void *> args = {&source, &ids,   &result, &outer,
                                &size,   &count, &inner};
    return launchPrimitive(entries[0], gridFor(outer * count * inner, 256),
                           256, 0, args, stream);
  }
  case KernelKind::MoeTopK: {
    const TensorRef &logits = inputs[0];
    const void *source = logits.data;
    void *weights = outputs[0].data, *ids = outputs[1].data;
    long long tokens = logits.shape[0], experts = logits.shape[1],
              k = attrs.ints[0];
    int normalize = static_cast<int>(attrs.ints[1]);
    std::vector<void *> args = {&source, &weights, &ids,  &tokens,
                                &experts, &k,      &normalize};
    return launchPrimitive(entries[0], gridFor(tokens, 128), 128, 0, args,
                           stream);
  }
  case KernelKind::MoeDispatch:
  case KernelKind::MoeCombine: {
    bool dispatch = kind == KernelKind::MoeDispatch;
    const TensorRef &indices = inputs[dispatch ? 1 : 2];
    const TensorRef &slotsOf = dispatch ? *out : inputs[0]; // [E, C, D]
    long long pairs = indices.numElements(), k = indices.shape[1],
              experts = slotsOf.shape[0], capacity = slotsOf.shape[1],
              dim = slotsOf.shape[2];
    const void *ids = indices.data;
    void *slots = scratch_;
    // 1. The slots, one block (thread e scans the pairs for expert e).
    std::vector<void *> slotArgs = {&ids, &pairs, &experts, &capacity, &slots};
    LLMC_RETURN_IF_ERROR(
        launchPrimitive(entries[0], 1, 256, 0, slotArgs, stream));
    void *result = out->data;
    if (dispatch) {
      // 2. Unused slots stay zero, as on the CPU.
      LLMC_CUDA_CHECK(cudaMemsetAsync(result, 0, out->bytes(), stream),
                      "cudaMemsetAsync(moe_dispatch)");
      const void *source = inputs[0].data;
      std::vector<void *> args = {&source, &ids, &slots,    &result,
                                  &pairs,  &k,   &dim,      &capacity};
      return launchPrimitive(entries[1], gridFor(pairs * dim, 256), 256, 0,
                             args, stream);
    }
    const void *expertOut = inputs[0].data, *weights = inputs[1].data;
    long long tokens = out->shape[0];
    std::vector<void *> args = {&expertOut, &weights, &ids, &slots, &result,
                                &tokens,    &k,       &dim, &capacity};
    return launchPrimitive(entries[1], gridFor(tokens * dim, 256), 256, 0,
                           args, stream);
  }
  case KernelKind::ScatterAdd: {
    const TensorRef &dest = inputs[0], &indices = inputs[1],
                    &updates = inputs[2];
    AxisView view = viewAround(dest.shape, attrs.ints[0]);
    const void *ids = indices.data, *source = updates.data;
    long long outer = view.outer, size = view.size,
              count = indices.numElements(), inner = view.inner;
    long long elements = dest.numElements();
    if (entries.size() == 1) {
      // f32: atomics straight into the result, a copy of dest.
      if (out->data != dest.data)
        LLMC_CUDA_CHECK(cudaMemcpyAsync(out->data, dest.data, dest.bytes(),
                                        cudaMemcpyDeviceToDevice, stream),
                        "cudaMemcpyAsync(scatter_add dest)");
      void *result = out->data;
      if (outer * count * inner == 0)
        return Status::ok();
      std::vector<void *> args = {&result, &ids,   &source, &outer,
                                  &size,   &count, &inner};
      return launchPrimitive(entries[0], gridFor(outer * count * inner, 256),
                             256, 0, args, stream);
    }
    // bf16: 1. dest widened into the f32 scratch, 2. the updates added
    // there, 3. rounded once into the result.
    const void *destData = dest.data;
    void *wide = scratch_, *result = out->data;
    std::vector<void *> widenArgs = {&destData, &wide, &elements};
    LLMC_RETURN_IF_ERROR(launchPrimitive(entries[0], gridFor(elements, 256),
                                         256, 0, widenArgs, stream));
    if (outer * count * inner > 0) {
      std::vector<void *> args = {&wide, &ids,   &source, &outer,
                                  &size, &count, &inner};
      LLMC_RETURN_IF_ERROR(launchPrimitive(entries[1],
                                           gridFor(outer * count * inner, 256),
                                           256, 0, args, stream));
    }
    const void *wideIn = scratch_;
    std::vector<void *> narrowArgs = {&wideIn, &result, &elements};
    return launchPrimitive(entries[2], gridFor(elements, 256), 256, 0,
                           narrowArgs, stream);
  }
  case KernelKind::Iota: {
    AxisView view = viewAround(out->shape, attrs.ints[0]);
    void *result = out->data;
    long long count = out->numElements(), size = view.size, inner = view.inner;
    std::vector<void *> args = {&result, &count, &size, &inner};
    return launchPrimitive(entries[0], gridFor(count, 256), 256, 0, args,
                           stream);
  }
  case KernelKind::LayerNorm:
  case KernelKind::RmsNorm: {
    bool layer = kind == KernelKind::LayerNorm;
    const TensorRef &x = inputs[0];
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
    // The row in registers (NormRowsSource.cpp): 16 bytes of x per pack,
    // at most 4 (rows) or 8 (rows8) packs per lane, gamma and beta read as
    // packs too.
    size_t bytes = dtypeSize(x.dtype), paramBytes = dtypeSize(inputs[1].dtype);
    long long perPack = 16 / static_cast<long long>(bytes);
    bool packed =
        dim % perPack == 0 && dim / perPack <= 32 * kNormPacks8 &&
        aligned16({source, result}) &&
        reinterpret_cast<uintptr_t>(gamma) % (paramBytes * perPack) == 0 &&
        reinterpret_cast<uintptr_t>(beta) % (paramBytes * perPack) == 0;
    const std::string &entry = !packed ? entries[0]
                               : dim / perPack <= 32 * kNormPacks ? entries[1]
                                                                  : entries[2];
    return launchPrimitive(entry, blocks, kRowThreads, 0, args, stream);
  }
  case KernelKind::LayerNormGrad:
  case KernelKind::RmsNormGrad: {
    NormGradLaunch launch = normGradLaunch(inputs[0]);
    if (launch.dim == 0)
      return Status::ok();
    const void *x = inputs[0].data, *gamma = inputs[1].data,
               *dy = inputs[2].data;
    void *dx = outputs[0].data, *dgamma = outputs[1].data;
    void *dbeta = outputs.size() == 3 ? outputs[2].data : nullptr;
    const void *addend = residualAddend;
    int centered = kind == KernelKind::LayerNormGrad ? 1 : 0;
    double epsilon = attrs.floats[0];
    // The chunks' partial column sums, in the scratch prepare() reserved.
    double *partials = static_cast<double *>(scratch_);
    // 1. A block per chunk of rows: dx and the chunk's partials, the row in
    //    registers (entries 2 and 3: up to 4 or 8 packs of 16 bytes per
    //    lane) when the row is whole packs and the pointers 16-byte aligned.
    if (launch.chunks > 0) {
      std::vector<void *> chunkArgs = {&x,           &gamma,      &dy,
                                       &dx,          &addend,     &partials,
                                       &launch.rows, &launch.dim, &epsilon,
                                       &centered};
      long long perPack =
          16 / static_cast<long long>(dtypeSize(inputs[0].dtype));
      long long packs = launch.dim / perPack;
      bool packed = launch.dim % perPack == 0 && packs <= 32 * 8 &&
                    aligned16({x, dy, dx, addend});
      const std::string &entry =
          !packed ? entries[0] : packs <= 32 * 4 ? entries[2] : entries[3];
      LLMC_RETURN_IF_ERROR(launchPrimitive(
          entry, static_cast<unsigned>(launch.chunks), 256, 0, chunkArgs,
          stream));
    }
    // 2. dgamma and dbeta from the partials (zeros for no rows): blocks of
    //    1024 threads, 32 columns x 32 runs of chunks.
    const double *finished = partials;
    std::vector<void *> finishArgs = {&finished, &dgamma, &dbeta,
                                      &launch.chunks, &launch.dim};
    unsigned columnBlocks =
        static_cast<unsigned>((launch.dim + 31) / 32);
    return launchPrimitive(entries[1], columnBlocks, 1024, 0, finishArgs,
                           stream);
  }
  case KernelKind::Softmax: {
    const TensorRef &x = inputs[0];
    AxisView view = viewAround(x.shape, attrs.ints[0]);
    long long rows = view.outer * view.inner, length = view.size,
              inner = view.inner;
    const void *source = x.data;
    void *result = out->data;
    // A widened result (bf16 in, f32 out) moves 32 bytes per vector store.
    bool widened = out->dtype != x.dtype;
    if (std::string entry = longRowEntry(
            entries[0], inner, length, dtypeSize(x.dtype), {source, result},
            widened ? 32u : 16u);
        !entry.empty()) {
      std::vector<void *> args = {&source, &result, &length};
      return launchPrimitive(entry, static_cast<unsigned>(rows),
                             kLongRowThreads, 0, args, stream);
    }
    std::vector<void *> args = {&source, &result, &rows, &length, &inner};
    unsigned blocks =
        static_cast<unsigned>((rows * 32 + kRowThreads - 1) / kRowThreads);
    return launchPrimitive(entries[0], blocks, kRowThreads, 0, args, stream);
  }
  case KernelKind::Attention: {
    FlashLaunch flash;
    if (std::string why = flashLaunch(inputs, attrs, flash, out);
        !why.empty())
      return refuse(why);
    const void *qp = inputs[0].data, *kp = inputs[1].data, *vp = inputs[2].data;
    void *result = outputs[0].data;
    // The rows' log-sum-exp, when the op returns it (else null: not stored).
    void *lse = outputs.size() == 2 ? outputs[1].data : nullptr;
    // The tensor-core kernel (entries[0]) where the device has bf16 MMA and
    // the operands allow 16-byte loads; else the scalar one after it.
    if (flash.tensorCores && bf16TensorCores_ && flash.stridesAligned16 &&
        aligned16({qp, kp, vp, result})) {
      if (flash.tensorCoreQueryBlocks == 0)
        return Status::ok();
      std::vector<void *> args = {&qp,          &kp,          &vp,
                                  &result,      &lse,         &flash.heads,
                                  &flash.kvHeads, &flash.seq, &flash.kvSeq,
                                  &flash.causal, &flash.scale, &flash.layout};
      return launchPrimitive(entries[0], flash.tensorCoreQueryBlocks,
                             kFlashThreads, flash.tensorCoreForwardShared,
                             args, stream);
    }
    std::vector<void *> args = {&qp,        &kp,          &vp,
                                &result,    &lse,         &flash.heads,
                                &flash.kvHeads, &flash.seq, &flash.kvSeq,
                                &flash.headDim, &flash.causal, &flash.scale,
                                &flash.layout};
    return launchPrimitive(entries[flash.tensorCores ? 1 : 0],
                           flash.queryBlocks, kFlashThreads, 0, args, stream);
  }
  case KernelKind::AttentionGrad: {
    FlashLaunch flash;
    if (std::string why = flashLaunch(inputs, attrs, flash); !why.empty())
      return refuse(why);
    const void *qp = inputs[0].data, *kp = inputs[1].data,
               *vp = inputs[2].data, *op = inputs[3].data,
               *dop = inputs[4].data;
    // Packed: one gradient, dq, dk and dv at the strides of q, k and v.
    void *dq = outputs[0].data;
    void *dk = outputs[outputs.size() == 3 ? 1 : 0].data;
    void *dv = outputs[outputs.size() == 3 ? 2 : 0].data;
    // lse and delta of every query row, in the scratch prepare() reserved.
    float *lse = static_cast<float *>(scratch_);
    float *delta = lse + flashRows(inputs[3]);
    // The forward's log-sum-exp when the op has it: the tensor-core
    // grad_rows then skips its statistics pass, and grad_keys reads it.
    const void *forwardLse = inputs.size() == 6 ? inputs[5].data : nullptr;
    // The tensor-core pair (entries[0..1]) where the device has bf16 MMA
    // and the operands allow 16-byte loads; else the scalar pair.
    if (flash.tensorCores && bf16TensorCores_ && flash.stridesAligned16 &&
        aligned16({qp, kp, vp, op, dop, dq, dk, dv})) {
      // 1. Per query tile: the row statistics (unless given), then dq.
      if (flash.tensorCoreQueryBlocks > 0) {
        std::vector<void *> rowArgs = {
            &qp,         &kp,          &vp,           &op,
            &dop,        &forwardLse,  &dq,           &lse,
            &delta,      &flash.heads, &flash.kvHeads, &flash.seq,
            &flash.kvSeq, &flash.causal, &flash.scale, &flash.layout};
        LLMC_RETURN_IF_ERROR(launchPrimitive(entries[0],
                                             flash.tensorCoreQueryBlocks,
                                             kFlashThreads,
                                             flash.tensorCoreRowsShared,
                                             rowArgs, stream));
      }
      // 2. Per key tile of each key/value head: dk and dv (after 1).
      const void *keysLse = forwardLse != nullptr ? forwardLse : lse;
      if (flash.tensorCoreKeyBlocks > 0) {
        std::vector<void *> keyArgs = {
            &qp,         &kp,            &vp,         &dop,
            &keysLse,    &delta,         &dk,         &dv,
            &flash.heads, &flash.kvHeads, &flash.seq, &flash.kvSeq,
            &flash.causal, &flash.scale, &flash.layout};
        LLMC_RETURN_IF_ERROR(launchPrimitive(entries[1],
                                             flash.tensorCoreKeyBlocks,
                                             kFlashThreads,
                                             flash.tensorCoreKeysShared,
                                             keyArgs, stream));
      }
      return Status::ok();
    }
    size_t scalar = flash.tensorCores ? 2 : 0;
    // 1. Per query tile: the row statistics, then dq.
    if (flash.queryBlocks > 0) {
      std::vector<void *> rowArgs = {
          &qp,          &kp,           &vp,          &op,
          &dop,         &dq,           &lse,         &delta,
          &flash.heads, &flash.kvHeads, &flash.seq,  &flash.kvSeq,
          &flash.headDim, &flash.causal, &flash.scale, &flash.layout};
      LLMC_RETURN_IF_ERROR(launchPrimitive(entries[scalar], flash.queryBlocks,
                                           kFlashThreads, 0, rowArgs, stream));
    }
    // 2. Per key tile of each key/value head: dk and dv over its group's
    //    query heads (after 1, on the same stream).
    if (flash.keyBlocks > 0) {
      std::vector<void *> keyArgs = {
          &qp,          &kp,            &vp,          &dop,
          &lse,         &delta,         &dk,          &dv,
          &flash.heads, &flash.kvHeads, &flash.seq,   &flash.kvSeq,
          &flash.headDim, &flash.causal, &flash.scale, &flash.layout};
      LLMC_RETURN_IF_ERROR(launchPrimitive(entries[scalar + 1],
                                           flash.keyBlocks, kFlashThreads, 0,
                                           keyArgs, stream));
    }
    return Status::ok();
  }
  case KernelKind::Rope:
    return launchRope(entries, inputs[0],
                      inputs.size() == 2 ? inputs[1].data : nullptr, *out,
                      attrs.floats[0], stream);
  case KernelKind::CrossEntropy: {
    const TensorRef &logits = inputs[0], &targets = inputs[1];
    long long vocab = logits.shape.back(), count = targets.numElements();
    int reduction = static_cast<int>(attrs.ints[0]);
    int hasIgnore = static_cast<int>(attrs.ints[1]);
    long long ignoreIndex = attrs.ints[2];
    const void *lp = logits.data, *tp = targets.data;
    void *losses = scratch_, *result = out->data;
    void *lse = outputs.size() == 2 ? outputs[1].data : nullptr;
    // 1. A block per row: the loss of each position (and its lse), with
    //    16-byte loads when every row starts aligned.
    if (count > 0) {
      bool vec = lossRowsVectorized(vocab, dtypeSize(logits.dtype), {lp});
      std::vector<void *> rowArgs = {&lp,    &tp,        &losses,     &lse,
                                     &vocab, &hasIgnore, &ignoreIndex};
      LLMC_RETURN_IF_ERROR(launchPrimitive(
          vec ? entries[1] : entries[0], static_cast<unsigned>(count),
          lossRowThreads(vocab, dtypeSize(logits.dtype), vec), 0, rowArgs,
          stream));
    }
    // 2. The reduction over positions, in a fixed order.
    std::vector<void *> finishArgs = {
        &losses, &tp, &result, &count, &reduction, &hasIgnore, &ignoreIndex};
    return launchPrimitive(entries[2], 1, 256, 0, finishArgs, stream);
  }
  case KernelKind::CrossEntropyGrad: {
    const TensorRef &logits = inputs[0], &targets = inputs[1];
    long long vocab = logits.shape.back(), count = targets.numElements();
    int reduction = static_cast<int>(attrs.ints[0]);
    int hasIgnore = static_cast<int>(attrs.ints[1]);
    long long ignoreIndex = attrs.ints[2];
    const void *lp = logits.data, *tp = targets.data, *dp = inputs[2].data;
    const void *lse = inputs.size() == 4 ? inputs[3].data : nullptr;
    void *result = out->data;
    // 1. The weight of a mean or sum into the scratch; none reads dloss
    //    per row (a null weight).
    void *weight = nullptr;
    if (reduction != 2) {
      weight = scratch_;
      std::vector<void *> weightArgs = {&tp,        &dp,        &weight,
                                        &count,     &reduction, &hasIgnore,
                                        &ignoreIndex};
      LLMC_RETURN_IF_ERROR(
          launchPrimitive(entries[0], 1, kGradThreads, 0, weightArgs, stream));
    }
    if (count == 0 || vocab == 0)
      return Status::ok();
    // 2. A block per row; 16-byte moves when every row starts aligned. With
    //    the forward's lse a row is one pass (the forward's block size);
    //    without, two, by 1024 threads so that the second read hits the L2.
    size_t bytes = dtypeSize(logits.dtype);
    bool vec = lossRowsVectorized(vocab, bytes, {lp, result});
    unsigned threads = lse ? lossRowThreads(vocab, bytes, vec) : kGradThreads;
    std::vector<void *> rowArgs = {&lp,     &tp,    &dp,        &weight, &lse,
                                   &result, &vocab, &hasIgnore, &ignoreIndex};
    return launchPrimitive(vec ? entries[2] : entries[1],
                           static_cast<unsigned>(count), threads, 0, rowArgs,
                           stream);
  }
  case KernelKind::SumSquares: {
    const void *x = inputs[0].data;
    void *result = out->data;
    void *partials = scratch_;
    long long n = inputs[0].numElements();
    long long chunks = sumSquaresChunks(n);
    if (chunks > 0) {
      std::vector<void *> partialArgs = {&x, &n, &partials};
      LLMC_RETURN_IF_ERROR(launchPrimitive(entries[0],
                                           static_cast<unsigned>(chunks), 256,
                                           0, partialArgs, stream));
    }
    std::vector<void *> finishArgs = {&partials, &chunks, &result};
    return launchPrimitive(entries[1], 1, 256, 0, finishArgs, stream);
  }
  case KernelKind::LrSchedule: {
    const void *step = inputs[0].data;
    void *result = out->data;
    int scheduleKind = static_cast<int>(attrs.ints[0]);
    long long warmup = attrs.ints[1], total = attrs.ints[2];
    double peak = attrs.floats[0], minimum = attrs.floats[1];
    std::vector<void *> args = {&step,  &result, &scheduleKind, &warmup,
                                &total, &peak,   &minimum};
    return launchPrimitive(entries[0], 1, 1, 0, args, stream);
  }
  default:
    return refuse("selected but not launched");
  }
}

} // namespace llmc::rt::cuda
