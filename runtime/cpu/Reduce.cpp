//===- Reduce.cpp - reduce_sum, reduce_max, reduce_mean ---------===//
//
// A reduction over any set of dimensions is planned once: adjacent
// dimensions of the same kind (kept or reduced) merge, size-1 dimensions
// drop out, and a trailing kept block becomes the "inner" run that every
// step of the reduction reads contiguously. Each work item then owns a
// contiguous run of results and walks the reduced dimensions once, so that
// reducing a leading dimension (a bias gradient) streams through memory
// instead of striding down a column per result.
//
// Numerics: sums of floats accumulate in f64 whatever the storage type and
// round once on store (so f32 results are within an ulp of the exact sum for
// any realistic length); integer sums accumulate in int64 and wrap on
// overflow. A mean is the f64 sum divided by the product of the reduced
// sizes. Max propagates NaN. Reducing an empty dimension gives 0 (sum), NaN
// (mean) or the lowest value (max: -inf, or the integer minimum).
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/PrimitiveHelpers.h"

namespace llmc::rt {

using namespace primitive;

namespace {

/// Results computed together by one work item; their accumulators stay in L1.
constexpr int64_t kBlock = 512;

struct ReducePlan {
  Shape keptSizes, keptStrides;       // outer kept groups (not the inner run)
  Shape reducedSizes, reducedStrides; // never empty (a {1, 0} group if none)
  int64_t inner = 1;                  // trailing kept run, stride 1
  int64_t reduceCount = 1;            // elements reduced into each result
  int64_t outputCount = 1;
};

ReducePlan planReduction(const Shape &shape, const std::vector<bool> &reduced) {
  ReducePlan plan;
  Shape strides = rowMajorStrides(shape);
  struct Group {
    int64_t size, stride;
    bool reduced;
  };
  std::vector<Group> groups;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (reduced[d])
      plan.reduceCount *= shape[d];
    else
      plan.outputCount *= shape[d];
    if (shape[d] == 1)
      continue;
    // Row-major dimensions next to each other (size-1 ones aside) are
    // contiguous, so two of the same kind merge into one.
    if (!groups.empty() && groups.back().reduced == reduced[d]) {
      groups.back().size *= shape[d];
      groups.back().stride = strides[d];
    } else {
      groups.push_back({shape[d], strides[d], reduced[d]});
    }
  }
  if (!groups.empty() && !groups.back().reduced) {
    plan.inner = groups.back().size;
    groups.pop_back();
  }
  for (const Group &g : groups) {
    (g.reduced ? plan.reducedSizes : plan.keptSizes).push_back(g.size);
    (g.reduced ? plan.reducedStrides : plan.keptStrides).push_back(g.stride);
  }
  if (plan.reducedSizes.empty()) {
    plan.reducedSizes.push_back(1);
    plan.reducedStrides.push_back(0);
  }
  return plan;
}

/// Folds every reduced position into the accumulators acc[0, kb) of the
/// results whose first input element is at `base`: an odometer over the
/// outer reduced groups, a loop over the last one.
template <typename In, typename Acc, typename Step>
void foldBlock(const ReducePlan &plan, const typename In::Storage *x,
               int64_t base, int64_t kb, Acc *acc, Step step) {
  size_t numReduced = plan.reducedSizes.size();
  int64_t lastSize = plan.reducedSizes.back();
  int64_t lastStride = plan.reducedStrides.back();
  std::vector<int64_t> index(numReduced - 1, 0);
  int64_t offset = base;
  for (int64_t r = 0, steps = plan.reduceCount / lastSize; r < steps; ++r) {
    for (int64_t j = 0; j < lastSize; ++j) {
      const typename In::Storage *p = x + offset + j * lastStride;
      for (int64_t k = 0; k < kb; ++k)
        acc[k] = step(acc[k], In::load(p[k]));
    }
    for (size_t g = numReduced - 1; g-- > 0;) {
      offset += plan.reducedStrides[g];
      if (++index[g] < plan.reducedSizes[g])
        break;
      offset -= index[g] * plan.reducedStrides[g];
      index[g] = 0;
    }
  }
}

/// y[o] = finish(fold(step, init, the inputs reduced into o)) for every
/// result o, in parallel over blocks of up to kBlock consecutive results.
template <typename In, typename Out, typename Acc, typename Step,
          typename Finish>
void reduceLoop(ThreadPool &pool, const ReducePlan &plan,
                const typename In::Storage *x, typename Out::Storage *y,
                Acc init, Step step, Finish finish) {
  if (plan.outputCount == 0)
    return;
  if (plan.reduceCount == 0) {
    for (int64_t o = 0; o < plan.outputCount; ++o)
      y[o] = finish(init);
    return;
  }
  int64_t blocks = (plan.inner + kBlock - 1) / kBlock;
  int64_t items = plan.outputCount / plan.inner * blocks;
  int64_t blockSize = std::min(plan.inner, kBlock);
  auto body = [&](int64_t begin, int64_t end) {
    std::vector<Acc> acc(blockSize);
    for (int64_t item = begin; item < end; ++item) {
      // 1. Where this block of results starts in the input.
      int64_t outer = item / blocks;
      int64_t k0 = (item % blocks) * kBlock;
      int64_t kb = std::min(kBlock, plan.inner - k0);
      int64_t base = k0, rest = outer;
      for (size_t g = plan.keptSizes.size(); g-- > 0;) {
        base += (rest % plan.keptSizes[g]) * plan.keptStrides[g];
        rest /= plan.keptSizes[g];
      }
      // 2. Fold, 3. store.
      std::fill(acc.begin(), acc.begin() + kb, init);
      foldBlock<In>(plan, x, base, kb, acc.data(), step);
      for (int64_t k = 0; k < kb; ++k)
        y[outer * plan.inner + k0 + k] = finish(acc[k]);
    }
  };
  pool.parallelFor(items, grainFor(plan.reduceCount * blockSize), body);
}

enum class ReduceKind { Sum, Max, Mean };

Status reduceKernel(const KernelArgs &args, ReduceKind kind) {
  LLMC_RETURN_IF_ERROR(args.expectArity(1, 1));
  LLMC_RETURN_IF_ERROR(checkOperands(args));
  const TensorRef &in = args.inputs[0], &out = args.outputs[0];
  DTypeSet allowed = kind == ReduceKind::Mean ? kFloatTypes : kNumericTypes;
  LLMC_RETURN_IF_ERROR(expectDType(args, "input", in.dtype, allowed));
  // Sum and mean may widen a float input to an f32 result ("accumulate in
  // f32"); max is exact and keeps the type.
  bool widens =
      kind != ReduceKind::Max && isFloat(in.dtype) && out.dtype == DType::F32;
  if (!widens)
    LLMC_RETURN_IF_ERROR(expectSameDType(args, "result", out.dtype, in.dtype));

  // The dimensions: strictly increasing, in range, at least one.
  const std::vector<int64_t> &dims = args.attrs.ints;
  if (!args.attrs.floats.empty())
    return args.error("expected no float attributes, got " +
                      std::to_string(args.attrs.floats.size()));
  if (dims.empty())
    return args.error("expected at least one dimension to reduce, got dims []");
  std::vector<bool> reduced(in.shape.size(), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    LLMC_RETURN_IF_ERROR(
        expectDim(args, "dims[" + std::to_string(i) + "]", dims[i], in.rank()));
    if (i > 0 && dims[i] <= dims[i - 1])
      return args.error("expected dims to be strictly increasing, got " +
                        formatShape(dims));
    reduced[dims[i]] = true;
  }
  // The result drops the reduced dimensions or keeps them with size 1
  // (keep_dims); both have the same layout.
  Shape dropped, kept;
  for (size_t d = 0; d < in.shape.size(); ++d) {
    if (!reduced[d])
      dropped.push_back(in.shape[d]);
    kept.push_back(reduced[d] ? 1 : in.shape[d]);
  }
  if (out.shape != dropped && out.shape != kept)
    return args.error("expected result of shape " + formatShape(dropped) +
                      " or " + formatShape(kept) + " (keep_dims), got " +
                      formatShape(out.shape));

  ReducePlan plan = planReduction(in.shape, reduced);
  double count = static_cast<double>(plan.reduceCount);
  visitDType<kNumericTypes>(in.dtype, [&](auto inElem) {
    using In = decltype(inElem);
    using T = typename In::Compute;
    const auto *x = dataOf<In>(in);
    auto run = [&](auto outElem) {
      using Out = decltype(outElem);
      auto *y = dataOf<Out>(out);
      if constexpr (isFloatElem<In>()) {
        auto add = [](double a, T v) { return a + static_cast<double>(v); };
        if (kind == ReduceKind::Sum)
          reduceLoop<In, Out>(args.pool, plan, x, y, 0.0, add,
                              [](double a) { return Out::fromDouble(a); });
        else if (kind == ReduceKind::Mean)
          reduceLoop<In, Out>(
              args.pool, plan, x, y, 0.0, add,
              [count](double a) { return Out::fromDouble(a / count); });
      } else if (kind == ReduceKind::Sum) {
        reduceLoop<In, Out>(
            args.pool, plan, x, y, int64_t(0),
            [](int64_t a, T v) { return wrapAdd<int64_t>(a, v); },
            [](int64_t a) { return static_cast<typename Out::Storage>(a); });
      }
      if (kind == ReduceKind::Max) {
        T lowest = std::numeric_limits<T>::has_infinity
                       ? -std::numeric_limits<T>::infinity()
                       : std::numeric_limits<T>::lowest();
        reduceLoop<In, Out>(args.pool, plan, x, y, lowest, maxPropagatingNan<T>,
                            [](T a) { return Out::store(a); });
      }
    };
    if (out.dtype == in.dtype)
      run(In{});
    else if constexpr (isFloatElem<In>())
      run(Elem<DType::F32>{});
  });
  return Status::ok();
}

} // namespace

Status cpuReduceSum(const KernelArgs &args) {
  return reduceKernel(args, ReduceKind::Sum);
}
Status cpuReduceMax(const KernelArgs &args) {
  return reduceKernel(args, ReduceKind::Max);
}
Status cpuReduceMean(const KernelArgs &args) {
  return reduceKernel(args, ReduceKind::Mean);
}

// The sum of squares of every element of an f32 tensor into an f32 scalar:
// each square rounds to f32 (as llmc.mul's result would), and the squares
// accumulate in f64 in row-major order, as reduce_sum's: exactly the bits of
// the reduce_sum(mul(x, x)) this kernel replaces (codegen/BuildExecutable.cpp).
Status cpuSumSquares(const KernelArgs &args) {
  LLMC_RETURN_IF_ERROR(args.expectArity(1, 1));
  LLMC_RETURN_IF_ERROR(args.expectAttrs(0, 0));
  LLMC_RETURN_IF_ERROR(checkOperands(args));
  const TensorRef &in = args.inputs[0], &out = args.outputs[0];
  LLMC_RETURN_IF_ERROR(
      expectDType(args, "input", in.dtype, dtypeBit(DType::F32)));
  LLMC_RETURN_IF_ERROR(
      expectDType(args, "result", out.dtype, dtypeBit(DType::F32)));
  if (out.numElements() != 1)
    return args.error("expected a one-element result, got " +
                      formatShape(out.shape));
  const float *x = static_cast<const float *>(in.data);
  double sum = 0.0;
  for (int64_t i = 0, n = in.numElements(); i < n; ++i) {
    float square = x[i] * x[i];
    sum += static_cast<double>(square);
  }
  *static_cast<float *>(out.data) = static_cast<float>(sum);
  return Status::ok();
}

} // namespace llmc::rt
