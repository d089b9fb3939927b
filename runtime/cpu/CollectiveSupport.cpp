//===- CollectiveSupport.cpp - what the CPU collectives share -------------===//
#include "runtime/cpu/CollectiveSupport.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <type_traits>

namespace llmc::rt {

namespace {

template <typename T> T combineSum(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    // Two's-complement wrap-around, without signed-overflow UB.
    using Unsigned = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<Unsigned>(a) + static_cast<Unsigned>(b));
  } else {
    return a + b;
  }
}

template <typename T> T combineMax(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return std::max(a, b);
  else
    return (a > b || a != a) ? a : b; // a NaN on either side wins
}

/// f32, f64, i32, i64: combine in the storage type, directly in `dst`. The
/// op is chosen outside the element loops so that they vectorize.
template <typename T>
void reduceNative(ReduceOp op, const std::vector<const uint8_t *> &inputs,
                  int64_t first, int64_t count, uint8_t *dst) {
  T *out = reinterpret_cast<T *>(dst);
  std::memcpy(out, reinterpret_cast<const T *>(inputs[0]) + first,
              static_cast<size_t>(count) * sizeof(T));
  for (size_t j = 1; j < inputs.size(); ++j) {
    const T *in = reinterpret_cast<const T *>(inputs[j]) + first;
    if (op == ReduceOp::Sum)
      for (int64_t i = 0; i < count; ++i)
        out[i] = combineSum(out[i], in[i]);
    else
      for (int64_t i = 0; i < count; ++i)
        out[i] = combineMax(out[i], in[i]);
  }
}

/// bf16, f16: accumulate a block in f32, round once when storing it.
template <float (*Load)(uint16_t), uint16_t (*Store)(float)>
void reduceHalf(ReduceOp op, const std::vector<const uint8_t *> &inputs,
                int64_t first, int64_t count, uint8_t *dst) {
  constexpr int64_t kBlock = 1024;
  float acc[kBlock];
  uint16_t *out = reinterpret_cast<uint16_t *>(dst);
  for (int64_t begin = 0; begin < count; begin += kBlock) {
    int64_t size = std::min(kBlock, count - begin);
    const uint16_t *in0 =
        reinterpret_cast<const uint16_t *>(inputs[0]) + first + begin;
    for (int64_t i = 0; i < size; ++i)
      acc[i] = Load(in0[i]);
    for (size_t j = 1; j < inputs.size(); ++j) {
      const uint16_t *in =
          reinterpret_cast<const uint16_t *>(inputs[j]) + first + begin;
      if (op == ReduceOp::Sum)
        for (int64_t i = 0; i < size; ++i)
          acc[i] = combineSum(acc[i], Load(in[i]));
      else
        for (int64_t i = 0; i < size; ++i)
          acc[i] = combineMax(acc[i], Load(in[i]));
    }
    for (int64_t i = 0; i < size; ++i)
      out[begin + i] = Store(acc[i]);
  }
}

} // namespace

bool isReducible(DType dtype) { return dtype != DType::I1; }

void reduceElements(DType dtype, ReduceOp op,
                    const std::vector<const uint8_t *> &inputs, int64_t first,
                    int64_t count, uint8_t *dst) {
  if (count <= 0 || inputs.empty())
    return;
  switch (dtype) {
  case DType::F32:
    return reduceNative<float>(op, inputs, first, count, dst);
  case DType::F64:
    return reduceNative<double>(op, inputs, first, count, dst);
  case DType::I32:
    return reduceNative<int32_t>(op, inputs, first, count, dst);
  case DType::I64:
    return reduceNative<int64_t>(op, inputs, first, count, dst);
  case DType::BF16:
    return reduceHalf<bf16ToFloat, floatToBf16>(op, inputs, first, count, dst);
  case DType::F16:
    return reduceHalf<f16ToFloat, floatToF16>(op, inputs, first, count, dst);
  case DType::I1:
  case DType::F8E4M3FN: // FP8 values are never summed across ranks
  case DType::F8E5M2:
    return; // rejected by the callers (isReducible)
  }
}

Status invalidArgument(std::string message) {
  return Status::error(StatusCode::InvalidArgument, std::move(message));
}

std::string formatSeconds(std::chrono::milliseconds duration) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g s", duration.count() / 1000.0);
  return text;
}

std::string describeElements(int64_t count, DType dtype) {
  return std::to_string(count) + " elements of " + dtypeName(dtype);
}

void copyBytes(uint8_t *dst, const uint8_t *src, size_t bytes) {
  if (bytes && dst != src)
    std::memcpy(dst, src, bytes);
}

} // namespace llmc::rt
