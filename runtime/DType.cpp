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
  case DType::F8E4M3FN:
    return "f8E4M3FN";
  case DType::F8E5M2:
    return "f8E5M2";
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

namespace {

/// An 8-bit float format: `mantissaBits` fraction bits, exponent bias
/// `bias`, and the code of its largest finite magnitude.
struct Fp8Format {
  int mantissaBits;
  int bias;
  uint32_t maxFiniteCode;
};
constexpr Fp8Format kE4M3FN{3, 7, 0x7e};
constexpr Fp8Format kE5M2{2, 15, 0x7b};

uint8_t encodeFp8(float value, Fp8Format f) {
  uint32_t word;
  std::memcpy(&word, &value, sizeof(word));
  uint32_t sign = (word >> 24) & 0x80u;
  uint32_t magnitude = word & 0x7fffffffu;
  if (magnitude > 0x7f800000u) // NaN
    return static_cast<uint8_t>(sign | 0x7fu);
  uint32_t code;
  // Below the format's smallest normal 2^(1-bias): a multiple of the
  // subnormal step 2^(1-bias-m); the scaling by a power of two is exact and
  // nearbyint rounds to nearest even (the default rounding mode).
  // A result of 2^m is the smallest normal's code, as it should be.
  if (magnitude < static_cast<uint32_t>(128 - f.bias) << 23) {
    float steps = std::ldexp(std::fabs(value), f.bias - 1 + f.mantissaBits);
    code = static_cast<uint32_t>(std::nearbyint(steps));
  } else {
    // Normal: drop 23 - m fraction bits with round to nearest even (a carry
    // runs into the exponent), then rebias the exponent.
    int shift = 23 - f.mantissaBits;
    uint32_t half = (1u << (shift - 1)) - 1u + ((magnitude >> shift) & 1u);
    uint32_t rounded = (magnitude + half) >> shift;
    code = rounded - (static_cast<uint32_t>(127 - f.bias) << f.mantissaBits);
  }
  if (code > f.maxFiniteCode) // beyond the largest finite, or infinity
    code = f.maxFiniteCode;
  return static_cast<uint8_t>(sign | code);
}

float decodeFp8(uint8_t bits, Fp8Format f) {
  uint32_t sign = static_cast<uint32_t>(bits & 0x80u) << 24;
  uint32_t exponent = (bits & 0x7fu) >> f.mantissaBits;
  uint32_t mantissa = bits & ((1u << f.mantissaBits) - 1u);
  float magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa),
                           1 - f.bias - f.mantissaBits);
  } else {
    uint32_t word = ((exponent + 127 - f.bias) << 23) |
                    (mantissa << (23 - f.mantissaBits));
    std::memcpy(&magnitude, &word, sizeof(magnitude));
  }
  float value = sign ? -magnitude : magnitude;
  return value;
}

} // namespace

float f8E4M3FNToFloat(uint8_t bits) {
  if ((bits & 0x7fu) == 0x7fu) // the format's only NaN
    return std::nanf("");
  return decodeFp8(bits, kE4M3FN);
}

uint8_t floatToF8E4M3FN(float value) { return encodeFp8(value, kE4M3FN); }

float f8E5M2ToFloat(uint8_t bits) {
  if ((bits & 0x7cu) == 0x7cu) { // exponent all ones: infinity or NaN
    if (bits & 0x03u)
      return std::nanf("");
    return (bits & 0x80u) ? -INFINITY : INFINITY;
  }
  return decodeFp8(bits, kE5M2);
}

uint8_t floatToF8E5M2(float value) { return encodeFp8(value, kE5M2); }

} // namespace llmc::rt
