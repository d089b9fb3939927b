//===- EmulatedBitCasts.h - CUDA's bit-cast intrinsics on the CPU -*- C++ -*-===//
//
// The emulation tests (test/runtime/cuda/*EmulationTest.cpp) compile the
// CUDA kernels' sources as C++ and run them on the CPU. This header gives
// them CUDA's bit-cast intrinsics; it is included inside each test's
// emulation namespace, before the kernel source, like the source itself.
//
//===----------------------------------------------------------------------===//
// No include guard on purpose: each test includes it once, inside its own
// namespace. <cstring> is included by the test.

inline float __uint_as_float(unsigned word) {
  float value;
  std::memcpy(&value, &word, 4);
  return value;
}
inline float __int_as_float(int word) {
  float value;
  std::memcpy(&value, &word, 4);
  return value;
}
inline unsigned __float_as_uint(float value) {
  unsigned word;
  std::memcpy(&word, &value, 4);
  return word;
}
inline double __longlong_as_double(long long bits) {
  double value;
  std::memcpy(&value, &bits, 8);
  return value;
}
