//===- DType.h - element types of runtime tensors -----------------*- C++ -*-===//
//
// The element types of the llmc dialect as the runtime stores them. bf16 and
// f16 are 16-bit storage formats: kernels compute in f32 and round to
// nearest even on store (the CPU backend's emulation).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_DTYPE_H
#define LLMC_RUNTIME_DTYPE_H

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace llmc::rt {

enum class DType : uint8_t { F32 = 0, F64, BF16, F16, I32, I64, I1 };

constexpr int kNumDTypes = 7;

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
    return 1;
  }
  return 0;
}

/// "f32", "bf16", ... as in MLIR and safetensors' lower case.
const char *dtypeName(DType dtype);
/// The inverse of dtypeName; false when `name` is none of them.
bool parseDType(const std::string &name, DType &dtype);

inline bool isFloat(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F64 || dtype == DType::BF16 ||
         dtype == DType::F16;
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

} // namespace llmc::rt

#endif // LLMC_RUNTIME_DTYPE_H
