//===- Prelude.cuh - the types and helpers every kernel unit starts with ===//
//
// Bf16 as raw 16-bit storage with the CPU's rounding (floatToBf16: round to
// nearest even, NaN kept quiet), loads to f32, stores from f32 and double,
// the grid-stride and warp helpers. Free of shared memory and of warp-wide
// instructions other than shuffles, so that the CPU emulations of the kernels
// (test/runtime/cuda/*EmulationTest.cpp) include it as it is.
//
// Numerics of every hand-written kernel follow the CPU kernels: reductions
// and composites (but attention and the loss) accumulate in double and round
// once to the result type, so an f32 result differs from the CPU's by the
// order of the double additions and the device's f64 libm only.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CUDA_COMMON_PRELUDE_CUH
#define LLMC_CUDA_COMMON_PRELUDE_CUH

#define LLMC_MAX_RANK 8

struct Bf16 {
  unsigned short bits;
};

__device__ __forceinline__ float loadValue(float value) { return value; }
__device__ __forceinline__ float loadValue(Bf16 value) {
  return __uint_as_float(((unsigned int)value.bits) << 16);
}

// An f32 value stored as T: bf16 rounds to nearest even, keeping NaN quiet
// (the CPU's floatToBf16).
template <typename T> __device__ __forceinline__ T storeFloat(float value);
template <> __device__ __forceinline__ float storeFloat<float>(float value) {
  return value;
}
template <> __device__ __forceinline__ Bf16 storeFloat<Bf16>(float value) {
  unsigned int word = __float_as_uint(value);
  Bf16 result;
  if ((word & 0x7fffffffu) > 0x7f800000u) {
    result.bits = (unsigned short)((word >> 16) | 0x40u);
    return result;
  }
  unsigned int rounding = 0x7fffu + ((word >> 16) & 1u);
  result.bits = (unsigned short)((word + rounding) >> 16);
  return result;
}

// A double value stored as T: rounded to f32 once, then (bf16) as
// storeFloat.
template <typename T> __device__ __forceinline__ T storeValue(double value) {
  return storeFloat<T>((float)value);
}

__device__ __forceinline__ double negativeInfinity() {
  return -__longlong_as_double(0x7ff0000000000000ll);
}

__device__ __forceinline__ long long globalThread() {
  return (long long)blockIdx.x * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ long long gridThreads() {
  return (long long)gridDim.x * blockDim.x;
}

__device__ __forceinline__ double warpSum(double value) {
  for (int offset = 16; offset > 0; offset /= 2)
    value += __shfl_xor_sync(0xffffffffu, value, offset);
  return value;
}
__device__ __forceinline__ double warpMax(double value) {
  for (int offset = 16; offset > 0; offset /= 2)
    value = fmax(value, __shfl_xor_sync(0xffffffffu, value, offset));
  return value;
}

__device__ __forceinline__ int lane() { return threadIdx.x % 32; }
// The row of a warp-per-row kernel: warp w of the grid takes row w.
__device__ __forceinline__ long long warpRow() {
  return ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
}

// V consecutive elements moved by one load (16 bytes when V * sizeof(T) is).
template <typename T, int V> struct __align__(sizeof(T) * V) RowPack {
  T v[V];
};

#endif // LLMC_CUDA_COMMON_PRELUDE_CUH
