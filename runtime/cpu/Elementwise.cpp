//===- Elementwise.cpp - unary and binary math, cast, compare, select -----===//
//
// Neg, Abs, Exp, Log, Tanh, Sqrt, Rsqrt, Add, Sub, Mul, Div, Max, Min,
// Cast, Compare and Select (gelu, silu, swiglu: ElementwiseActivations.cpp),
// the reference of the CUDA elementwise family. One typed loop per op and
// dtype, split over the thread pool.
//
// Numerics (docs/runtime.md, "CPU kernels"):
//  - f32 and f64 compute in their own precision; bf16 and f16 load to f32,
//    compute in f32 and round to nearest even on store.
//  - Integer arithmetic wraps around on overflow (two's complement), so
//    neg/abs of the minimum value give it back. Integer division truncates
//    toward zero; division by zero gives 0 (a kernel cannot report an error
//    per element cheaply), and MIN / -1 wraps to MIN.
//  - max/min return NaN when either operand is NaN.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/PrimitiveHelpers.h"

#include <functional>

namespace llmc::rt {

using namespace primitive;

namespace {

//===----------------------------------------------------------------------===//
// Scalar functions, called with the compute type (float, double, int32_t or
// int64_t). The float-only ones are instantiated for float types only.
//===----------------------------------------------------------------------===//

struct NegFn {
  template <typename T> T operator()(T x) const {
    if constexpr (std::is_integral_v<T>)
      return wrapSub<T>(0, x);
    else
      return -x;
  }
};
struct AbsFn {
  template <typename T> T operator()(T x) const {
    if constexpr (std::is_integral_v<T>)
      return x < 0 ? wrapSub<T>(0, x) : x;
    else
      return std::fabs(x);
  }
};
struct ExpFn {
  template <typename T> T operator()(T x) const { return std::exp(x); }
};
struct LogFn {
  template <typename T> T operator()(T x) const { return std::log(x); }
};
struct TanhFn {
  template <typename T> T operator()(T x) const { return std::tanh(x); }
};
struct SqrtFn {
  template <typename T> T operator()(T x) const { return std::sqrt(x); }
};
struct RsqrtFn {
  // Two roundings (sqrt, then the division): within 1 ulp.
  template <typename T> T operator()(T x) const { return T(1) / std::sqrt(x); }
};

struct AddFn {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>)
      return wrapAdd(a, b);
    else
      return a + b;
  }
};
struct SubFn {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>)
      return wrapSub(a, b);
    else
      return a - b;
  }
};
struct MulFn {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>)
      return wrapMul(a, b);
    else
      return a * b;
  }
};
struct DivFn {
  template <typename T> T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) {
      if (b == 0)
        return 0; // defined as 0: see the file comment
      if (b == -1)
        return wrapSub<T>(0, a); // MIN / -1 overflows: wrap
      return a / b;              // C++ truncates toward zero
    } else {
      return a / b;
    }
  }
};
struct MaxFn {
  template <typename T> T operator()(T a, T b) const {
    return maxPropagatingNan(a, b);
  }
};
struct MinFn {
  template <typename T> T operator()(T a, T b) const {
    return minPropagatingNan(a, b);
  }
};

//===----------------------------------------------------------------------===//
// The typed loops
//===----------------------------------------------------------------------===//

template <DTypeSet Allowed, typename Fn>
Status unaryKernel(const KernelArgs &args) {
  LLMC_RETURN_IF_ERROR(checkLaunch(args, 1, 1, 0));
  const TensorRef &in = args.inputs[0], &out = args.outputs[0];
  LLMC_RETURN_IF_ERROR(expectDType(args, "input", in.dtype, Allowed));
  LLMC_RETURN_IF_ERROR(expectSameDType(args, "result", out.dtype, in.dtype));
  LLMC_RETURN_IF_ERROR(expectShape(args, "result", out.shape, in.shape));
  visitDType<Allowed>(in.dtype, [&](auto elem) {
    using E = decltype(elem);
    const auto *x = dataOf<E>(in);
    auto *y = dataOf<E>(out);
    forEachElement(args.pool, in.numElements(),
                   [&](int64_t i) { y[i] = E::store(Fn()(E::load(x[i]))); });
  });
  return Status::ok();
}

template <typename Fn> Status binaryKernel(const KernelArgs &args) {
  LLMC_RETURN_IF_ERROR(checkLaunch(args, 2, 1, 0));
  const TensorRef &lhs = args.inputs[0], &rhs = args.inputs[1];
  const TensorRef &out = args.outputs[0];
  LLMC_RETURN_IF_ERROR(expectDType(args, "lhs", lhs.dtype, kNumericTypes));
  LLMC_RETURN_IF_ERROR(expectSameDType(args, "rhs", rhs.dtype, lhs.dtype));
  LLMC_RETURN_IF_ERROR(expectSameDType(args, "result", out.dtype, lhs.dtype));
  LLMC_RETURN_IF_ERROR(expectShape(args, "rhs", rhs.shape, lhs.shape));
  LLMC_RETURN_IF_ERROR(expectShape(args, "result", out.shape, lhs.shape));
  visitDType<kNumericTypes>(lhs.dtype, [&](auto elem) {
    using E = decltype(elem);
    const auto *a = dataOf<E>(lhs);
    const auto *b = dataOf<E>(rhs);
    auto *y = dataOf<E>(out);
    forEachElement(args.pool, lhs.numElements(), [&](int64_t i) {
      y[i] = E::store(Fn()(E::load(a[i]), E::load(b[i])));
    });
  });
  return Status::ok();
}

/// One element converted from `From` to `To` by the rules of llmc.cast:
/// float→float rounds to nearest even (f64→bf16/f16 through a round-to-odd
/// f32, so without double rounding); float→int truncates toward zero, NaN
/// gives 0 and out-of-range values saturate; int→int wraps (two's
/// complement, like a C++ conversion); to i1 is `x != 0` (so NaN → 1); i1
/// is 0 or 1.
template <typename From, typename To>
typename To::Storage convertElem(typename From::Storage s) {
  if constexpr (isFloatElem<From>()) {
    return To::fromDouble(static_cast<double>(From::load(s)));
  } else {
    int64_t v = From::load(s);
    if constexpr (std::is_same_v<To, Elem<DType::F32>>)
      return static_cast<float>(v); // correctly rounded from any int64
    else if constexpr (std::is_same_v<To, Elem<DType::F64>>)
      return static_cast<double>(v);
    else if constexpr (isFloatElem<To>())
      return To::fromDouble(roundToOddDouble(v));
    else if constexpr (std::is_same_v<To, Elem<DType::I1>>)
      return v != 0;
    else
      return static_cast<typename To::Storage>(v);
  }
}

/// Calls fn(comparison functor) for a direction of Kernels.def.
template <typename Fn> void visitDirection(int64_t direction, Fn &&fn) {
  switch (direction) {
  case 0:
    return fn(std::equal_to<>());
  case 1:
    return fn(std::not_equal_to<>());
  case 2:
    return fn(std::less<>());
  case 3:
    return fn(std::less_equal<>());
  case 4:
    return fn(std::greater<>());
  default:
    return fn(std::greater_equal<>());
  }
}

} // namespace

Status cpuNeg(const KernelArgs &args) {
  return unaryKernel<kNumericTypes, NegFn>(args);
}
Status cpuAbs(const KernelArgs &args) {
  return unaryKernel<kNumericTypes, AbsFn>(args);
}
Status cpuExp(const KernelArgs &args) {
  return unaryKernel<kFloatTypes, ExpFn>(args);
}
Status cpuLog(const KernelArgs &args) {
  return unaryKernel<kFloatTypes, LogFn>(args);
}
Status cpuTanh(const KernelArgs &args) {
  return unaryKernel<kFloatTypes, TanhFn>(args);
}
Status cpuSqrt(const KernelArgs &args) {
  return unaryKernel<kFloatTypes, SqrtFn>(args);
}
Status cpuRsqrt(const KernelArgs &args) {
  return unaryKernel<kFloatTypes, RsqrtFn>(args);
}

Status cpuAdd(const KernelArgs &args) { return binaryKernel<AddFn>(args); }
Status cpuSub(const KernelArgs &args) { return binaryKernel<SubFn>(args); }
Status cpuMul(const KernelArgs &args) { return binaryKernel<MulFn>(args); }
Status cpuDiv(const KernelArgs &args) { return binaryKernel<DivFn>(args); }
Status cpuMax(const KernelArgs &args) { return binaryKernel<MaxFn>(args); }
Status cpuMin(const KernelArgs &args) { return binaryKernel<MinFn>(args); }

Status cpuCast(const KernelArgs &args) {
  LLMC_RETURN_IF_ERROR(checkLaunch(args, 1, 1, 0));
  const TensorRef &in = args.inputs[0], &out = args.outputs[0];
  LLMC_RETURN_IF_ERROR(expectDType(args, "input", in.dtype, kAllTypes));
  LLMC_RETURN_IF_ERROR(expectDType(args, "result", out.dtype, kAllTypes));
  LLMC_RETURN_IF_ERROR(expectShape(args, "result", out.shape, in.shape));
  visitDType<kAllTypes>(in.dtype, [&](auto from) {
    visitDType<kAllTypes>(out.dtype, [&](auto to) {
      using From = decltype(from);
      using To = decltype(to);
      const auto *x = dataOf<From>(in);
      auto *y = dataOf<To>(out);
      forEachElement(args.pool, in.numElements(),
                     [&](int64_t i) { y[i] = convertElem<From, To>(x[i]); });
    });
  });
  return Status::ok();
}

/// The marker of a fused region: the region's own commands follow and run
/// one by one on the CPU, so the program is the unfused one bit for bit.
Status cpuFusedElementwise(const KernelArgs &args) {
  if (args.attrs.ints.size() != 1 || args.attrs.ints[0] < 1)
    return args.error("expected the number of commands of the region");
  return Status::ok();
}

/// i1 results (0 or 1); floats compare as IEEE does (NaN is unequal to
/// everything, so only `ne` holds for it).
Status cpuCompare(const KernelArgs &args) {
  LLMC_RETURN_IF_ERROR(checkLaunch(args, 2, 1, 1));
  const TensorRef &lhs = args.inputs[0], &rhs = args.inputs[1];
  const TensorRef &out = args.outputs[0];
  int64_t direction = args.attrs.ints[0];
  if (direction < 0 || direction > 5)
    return args.error("expected direction in [0, 5] (eq ne lt le gt ge), got " +
                      std::to_string(direction));
  LLMC_RETURN_IF_ERROR(expectDType(args, "lhs", lhs.dtype, kNumericTypes));
  LLMC_RETURN_IF_ERROR(expectSameDType(args, "rhs", rhs.dtype, lhs.dtype));
  LLMC_RETURN_IF_ERROR(expectSameDType(args, "result", out.dtype, DType::I1));
  LLMC_RETURN_IF_ERROR(expectShape(args, "rhs", rhs.shape, lhs.shape));
  LLMC_RETURN_IF_ERROR(expectShape(args, "result", out.shape, lhs.shape));
  visitDType<kNumericTypes>(lhs.dtype, [&](auto elem) {
    using E = decltype(elem);
    const auto *a = dataOf<E>(lhs);
    const auto *b = dataOf<E>(rhs);
    auto *y = static_cast<uint8_t *>(out.data);
    visitDirection(direction, [&](auto compare) {
      forEachElement(args.pool, lhs.numElements(), [&](int64_t i) {
        y[i] = compare(E::load(a[i]), E::load(b[i]));
      });
    });
  });
  return Status::ok();
}

Status cpuSelect(const KernelArgs &args) {
  LLMC_RETURN_IF_ERROR(checkLaunch(args, 3, 1, 0));
  const TensorRef &cond = args.inputs[0], &onTrue = args.inputs[1];
  const TensorRef &onFalse = args.inputs[2], &out = args.outputs[0];
  LLMC_RETURN_IF_ERROR(expectSameDType(args, "cond", cond.dtype, DType::I1));
  LLMC_RETURN_IF_ERROR(expectSameDType(args, "on_false", onFalse.dtype, onTrue.dtype));
  LLMC_RETURN_IF_ERROR(expectSameDType(args, "result", out.dtype, onTrue.dtype));
  LLMC_RETURN_IF_ERROR(expectShape(args, "on_true", onTrue.shape, cond.shape));
  LLMC_RETURN_IF_ERROR(expectShape(args, "on_false", onFalse.shape, cond.shape));
  LLMC_RETURN_IF_ERROR(expectShape(args, "result", out.shape, cond.shape));
  visitDType<kAllTypes>(out.dtype, [&](auto elem) {
    using E = decltype(elem);
    const auto *c = static_cast<const uint8_t *>(cond.data);
    const auto *t = dataOf<E>(onTrue);
    const auto *f = dataOf<E>(onFalse);
    auto *y = dataOf<E>(out);
    forEachElement(args.pool, cond.numElements(),
                   [&](int64_t i) { y[i] = c[i] ? t[i] : f[i]; });
  });
  return Status::ok();
}

} // namespace llmc::rt
