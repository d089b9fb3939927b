//===- DType.h - element types of runtime tensors -----------------*- C++ -*-===//
//
// The element types of the llmc dialect as the runtime stores them. bf16 and
// f16 are 16-bit storage formats: kernels compute in f32 and round to
// nearest even on store (the CPU backend's emulation). f8E4M3FN and f8E5M2
// are the 8-bit formats of FP8 training, read and written only by the FP8
// kernels (amax, scaled cast, scaled matmul): isFloat is false for them, so
// no other kernel takes one by accident.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_DTYPE_H
#define LLMC_RUNTIME_DTYPE_H

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace llmc::rt {

// Stored in Executables: append, never reorder.
enum class DType : uint8_t {
  F32 = 0,
  F64,
  BF16,
  F16,
  I32,
  I64,
  I1,
  F8E4M3FN,
  F8E5M2
};

constexpr int kNumDTypes = 9;

/// Bytes per element (i1 is stored as one byte, 0 or 1).
inline size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F64:
  case DType::I64:
    return 8;
  case DType::BF16:
  case DType::F16:
    return 2;
  case DType::I1:
  case DType::F8E4M3FN:
  case DType::F8E5M2:
    return 1;
  }
  return 0;
}

/// "f32", "bf16", "f8E4M3FN", ... as MLIR spells the element types.
const char *dtypeName(DType dtype);
/// The inverse of dtypeName; false when `name` is none of them.
bool parseDType(const std::string &name, DType &dtype);

inline bool isFloat(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F64 || dtype == DType::BF16 ||
         dtype == DType::F16;
}

inline bool isFloat8(DType dtype) {
  return dtype == DType::F8E4M3FN || dtype == DType::F8E5M2;
}

using Shape = std::vector<int64_t>;

inline int64_t numElements(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

/// "[8, 1024, 768]"
std::string formatShape(const Shape &shape);

//===----------------------------------------------------------------------===//
// 16-bit float conversions (round to nearest even, NaN preserved).
//===----------------------------------------------------------------------===//

inline float bf16ToFloat(uint16_t bits) {
  uint32_t word = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &word, sizeof(value));
  return value;
}

inline uint16_t floatToBf16(float value) {
  uint32_t word;
  std::memcpy(&word, &value, sizeof(word));
  if ((word & 0x7fffffffu) > 0x7f800000u) // NaN: keep it a quiet NaN
    return static_cast<uint16_t>((word >> 16) | 0x40u);
  uint32_t rounding = 0x7fffu + ((word >> 16) & 1u);
  return static_cast<uint16_t>((word + rounding) >> 16);
}

float f16ToFloat(uint16_t bits);
uint16_t floatToF16(float value);

//===----------------------------------------------------------------------===//
// 8-bit float conversions. E4M3FN: bias 7, 3 mantissa bits, no infinities,
// NaN = S.1111.111, largest finite 448 (S.1111.110), smallest subnormal
// 2^-9. E5M2: bias 15, 2 mantissa bits, IEEE-like (infinities, NaNs),
// largest finite 57344, smallest subnormal 2^-16. Decoding is exact.
// Encoding rounds to nearest even and saturates: a finite value or an
// infinity beyond the largest finite one gives the largest finite one with
// its sign (what CUDA's __NV_SATFINITE conversions and torchao's clamped
// casts do); NaN gives 0x7f with the input's sign.
//===----------------------------------------------------------------------===//

float f8E4M3FNToFloat(uint8_t bits);
uint8_t floatToF8E4M3FN(float value);
float f8E5M2ToFloat(uint8_t bits);
uint8_t floatToF8E5M2(float value);

} // namespace llmc::rt

#endif // LLMC_RUNTIME_DTYPE_H
