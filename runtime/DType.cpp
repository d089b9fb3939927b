//===- DType.cpp - element types of runtime tensors -----------------------===//
#include "runtime/DType.h"

#include <cmath>

namespace llmc::rt {

const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "f32";
  case DType::F64:
    return "f64";
  case DType::BF16:
    return "bf16";
  case DType::F16:
    return "f16";
  case DType::I32:
    return "i32";
  case DType::I64:
    return "i64";
  case DType::I1:
    return "i1";
  }
  return "?";
}

bool parseDType(const std::string &name, DType &dtype) {
  for (int i = 0; i < kNumDTypes; ++i)
    if (name == dtypeName(static_cast<DType>(i))) {
      dtype = static_cast<DType>(i);
      return true;
    }
  return false;
}

std::string formatShape(const Shape &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

float f16ToFloat(uint16_t bits) {
  uint32_t sign = (bits & 0x8000u) << 16;
  uint32_t exponent = (bits >> 10) & 0x1fu;
  uint32_t mantissa = bits & 0x3ffu;
  uint32_t word;
  if (exponent == 0x1f) { // inf or NaN
    word = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) { // normal
    word = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) { // zero
    word = sign;
  } else { // subnormal: value = mantissa * 2^-24
    float value = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -value : value;
  }
  float value;
  std::memcpy(&value, &word, sizeof(value));
  return value;
}

uint16_t floatToF16(float value) {
  uint32_t word;
  std::memcpy(&word, &value, sizeof(word));
  uint16_t sign = static_cast<uint16_t>((word >> 16) & 0x8000u);
  uint32_t magnitude = word & 0x7fffffffu;
  if (magnitude > 0x7f800000u) // NaN
    return sign | 0x7e00u;
  if (magnitude >= 0x477ff000u) // rounds to or beyond 65520: infinity
    return sign | 0x7c00u;
  if (magnitude < 0x38800000u) { // below the smallest normal f16: subnormal
    // Scale so that one f16 subnormal step is 1.0 and round to nearest even.
    float scaled = std::ldexp(std::fabs(value), 24);
    float rounded = std::nearbyint(scaled);
    return sign | static_cast<uint16_t>(rounded);
  }
  // Normal: rebias the exponent, round the 13 dropped mantissa bits to even.
  uint32_t rebased = magnitude - (112u << 23);
  uint32_t rounding = 0xfffu + ((rebased >> 13) & 1u);
  return sign | static_cast<uint16_t>((rebased + rounding) >> 13);
}

} // namespace llmc::rt
