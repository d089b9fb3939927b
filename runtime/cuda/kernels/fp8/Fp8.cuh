//===- Fp8.cuh - amax and the scaled casts of FP8 training ----------------===//
//
// llmc_amax_<f32|bf16|f16>: max |x| into an f32 scalar the launch zeroed,
// by atomicMax on the bits of |x| (non-negative floats order as their bit
// patterns, NaN's above infinity's), so the result does not depend on the
// order of the blocks: the CPU's value (runtime/cpu/Fp8.cpp), NaN if any
// element is.
// llmc_scaled_cast_<in>_<e4m3|e5m2>: fp8(x * scale), the product in f32,
// with encodeFp8 below: the host's floatToF8E4M3FN / floatToF8E5M2
// (runtime/DType.cpp) step for step (rintf rounds to nearest even as the
// host's nearbyint; the scaling by a power of two is exact), so the codes
// are the CPU's bit for bit. The cast reads eight elements per 16-byte
// load and, from sm_89 on, converts pairs with the hardware's
// cvt.rn.satfinite (the same rounding and saturation; NaN set to the
// host's code), which the bit-for-bit test holds to the host's codes.
// llmc_scaled_cast_transpose_<in>_<e4m3|e5m2>: the same codes of a matrix,
// as they are and transposed, from one read of it (a 64 x 64 tile a block).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CUDA_FP8_FP8_CUH
#define LLMC_CUDA_FP8_FP8_CUH

#include "common/Prelude.cuh"

template <typename T>
__device__ void amax(const T *x, unsigned *out, long long n) {
  float local = 0.0f;
  for (long long i = globalThread(); i < n; i += gridThreads()) {
    float v = fabsf(loadValue(x[i]));
    local = (isnan(v) || v > local) ? v : local;
  }
  for (int offset = 16; offset > 0; offset /= 2) {
    float other = __shfl_down_sync(0xffffffffu, local, offset);
    local = (isnan(other) || other > local) ? other : local;
  }
  if (lane() == 0)
    atomicMax(out, __float_as_uint(local));
}

/// E4M3FN: 3 mantissa bits, bias 7, largest finite code 0x7e; E5M2: 2,
/// 15, 0x7b. Round to nearest even, saturating; NaN -> 0x7f with its sign.
__device__ __forceinline__ unsigned char encodeFp8(float value,
                                                   int mantissaBits, int bias,
                                                   unsigned maxFiniteCode) {
  unsigned word = __float_as_uint(value);
  unsigned sign = (word >> 24) & 0x80u;
  unsigned magnitude = word & 0x7fffffffu;
  if (magnitude > 0x7f800000u)
    return (unsigned char)(sign | 0x7fu);
  unsigned code;
  if (magnitude < ((unsigned)(128 - bias) << 23)) {
    float steps = ldexpf(fabsf(value), bias - 1 + mantissaBits);
    code = (unsigned)rintf(steps);
  } else {
    int shift = 23 - mantissaBits;
    unsigned half = (1u << (shift - 1)) - 1u + ((magnitude >> shift) & 1u);
    unsigned rounded = (magnitude + half) >> shift;
    code = rounded - ((unsigned)(127 - bias) << mantissaBits);
  }
  if (code > maxFiniteCode)
    code = maxFiniteCode;
  return (unsigned char)(sign | code);
}

/// Eight elements of T, as one (bf16, f16) or two (f32) 16-byte loads.
template <typename T> struct alignas(16) Fp8Pack {
  T values[8];
};

__device__ __forceinline__ bool alignedTo(const void *p, unsigned bytes) {
  return ((unsigned long long)p % bytes) == 0;
}

/// Two codes from two products: from sm_89 on the hardware's conversion
/// (cvt.rn.satfinite: round to nearest even, saturating, as encodeFp8),
/// NaN set to encodeFp8's sign | 0x7f; before it encodeFp8 itself. The
/// first value in the low byte.
template <int MantissaBits, int Bias, unsigned MaxCode>
__device__ __forceinline__ unsigned encodePair(float lo, float hi) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
  unsigned short pair;
  if (MantissaBits == 3)
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(pair) : "f"(hi), "f"(lo));
  else
    asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(pair) : "f"(hi), "f"(lo));
  unsigned codes = pair;
  if (isnan(lo))
    codes = (codes & 0xff00u) | ((__float_as_uint(lo) >> 24) & 0x80u) | 0x7fu;
  if (isnan(hi))
    codes = (codes & 0x00ffu) |
            ((((__float_as_uint(hi) >> 24) & 0x80u) | 0x7fu) << 8);
  return codes;
#else
  return (unsigned)encodeFp8(lo, MantissaBits, Bias, MaxCode) |
         (unsigned)encodeFp8(hi, MantissaBits, Bias, MaxCode) << 8;
#endif
}

/// x * scale, but a NaN x as it is: the GPU's multiply returns the
/// canonical (positive) NaN, the host's keeps the operand's sign, and the
/// code's sign is the host's.
__device__ __forceinline__ float scaledValue(float x, float scale) {
  return isnan(x) ? x : x * scale;
}

/// The eight codes of a pack times `s`, the first in the lowest byte.
template <typename T, int MantissaBits, int Bias, unsigned MaxCode>
__device__ __forceinline__ uint2 encodePack(const Fp8Pack<T> &p, float s) {
  unsigned word[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    const T *v = p.values + 4 * h;
    word[h] = encodePair<MantissaBits, Bias, MaxCode>(
                  scaledValue(loadValue(v[0]), s),
                  scaledValue(loadValue(v[1]), s)) |
              encodePair<MantissaBits, Bias, MaxCode>(
                  scaledValue(loadValue(v[2]), s),
                  scaledValue(loadValue(v[3]), s))
                  << 16;
  }
  return make_uint2(word[0], word[1]);
}

template <typename T, int MantissaBits, int Bias, unsigned MaxCode>
__device__ void scaledCast(const T *x, const float *scale, unsigned char *out,
                           long long n) {
  float s = scale[0];
  // Eight elements per step (16-byte loads, an 8-byte store) where both
  // pointers allow it (every buffer of the arena does), then the tail one
  // by one.
  long long packs = alignedTo(x, 16) && alignedTo(out, 8) ? n / 8 : 0;
  const Fp8Pack<T> *pack = (const Fp8Pack<T> *)x;
  uint2 *codes = (uint2 *)out;
  for (long long i = globalThread(); i < packs; i += gridThreads()) {
    codes[i] = encodePack<T, MantissaBits, Bias, MaxCode>(pack[i], s);
  }
  for (long long i = packs * 8 + globalThread(); i < n; i += gridThreads())
    out[i] = encodeFp8(scaledValue(loadValue(x[i]), s), MantissaBits, Bias,
                       MaxCode);
}

/// The codes of scaledCast for a matrix x [rows, cols], written to `out`
/// as they are and to `transposed` [cols, rows], from one read of x. A
/// block takes a 64 x 64 tile: eight elements a thread per 16-byte load
/// (32 rows of 8 groups, twice), their codes stored in place and into a
/// shared tile, whose columns are then written as rows of the result, four
/// codes a word (as llmc_transpose_bytes, movement/Movement.cuh). Edges,
/// shapes whose rows or cols are not multiples of 4 or 8, and unaligned
/// pointers take the element-by-element path of the same codes. Blocks
/// (cols / 64, rows / 64), the rows grid-strided.
constexpr int kCastTile = 64;
template <typename T, int MantissaBits, int Bias, unsigned MaxCode>
__device__ void scaledCastTranspose(const T *x, const float *scale,
                                    unsigned char *out,
                                    unsigned char *transposed, long long rows,
                                    long long cols) {
  __shared__ unsigned char tile[kCastTile][kCastTile + 4];
  const float s = scale[0];
  const bool packed = cols % 8 == 0 && alignedTo(x, 16) && alignedTo(out, 8);
  const bool wordRows = rows % 4 == 0 && alignedTo(transposed, 4);
  const long long c0 = (long long)blockIdx.x * kCastTile;
  const long long tileRows = (rows + kCastTile - 1) / kCastTile;
  for (long long tr = blockIdx.y; tr < tileRows; tr += gridDim.y) {
    const long long r0 = tr * kCastTile;
    const int group = threadIdx.x % 8, ty = threadIdx.x / 8;
    for (int i = ty; i < kCastTile; i += 32) {
      const long long r = r0 + i, c = c0 + 8 * group;
      if (r >= rows)
        continue;
      unsigned char *codes = &tile[i][8 * group];
      if (packed && c + 8 <= cols) {
        uint2 word = encodePack<T, MantissaBits, Bias, MaxCode>(
            *(const Fp8Pack<T> *)(x + r * cols + c), s);
        *(uint2 *)(out + r * cols + c) = word;
        *(unsigned *)codes = word.x;
        *(unsigned *)(codes + 4) = word.y;
      } else {
        for (int j = 0; j < 8 && c + j < cols; ++j) {
          unsigned char code = encodeFp8(
              scaledValue(loadValue(x[r * cols + c + j]), s), MantissaBits,
              Bias, MaxCode);
          out[r * cols + c + j] = code;
          codes[j] = code;
        }
      }
    }
    __syncthreads();
    if (wordRows) {
      // A word: four consecutive rows of one column.
      const int tx = threadIdx.x % 16, tyw = threadIdx.x / 16;
      const long long resultRowWords = rows / 4;
      unsigned *dst = (unsigned *)transposed;
      for (int i = tyw; i < kCastTile; i += 16) {
        const long long c = c0 + i, w = r0 / 4 + tx;
        if (c < cols && w < resultRowWords)
          dst[c * resultRowWords + w] =
              (unsigned)tile[4 * tx][i] | (unsigned)tile[4 * tx + 1][i] << 8 |
              (unsigned)tile[4 * tx + 2][i] << 16 |
              (unsigned)tile[4 * tx + 3][i] << 24;
      }
    } else {
      for (int k = threadIdx.x; k < kCastTile * kCastTile; k += blockDim.x) {
        const int i = k / kCastTile, j = k % kCastTile;
        const long long c = c0 + i, r = r0 + j;
        if (c < cols && r < rows)
          transposed[c * rows + r] = tile[j][i];
      }
    }
    __syncthreads();
  }
}

#define LLMC_FP8_ENTRIES(suffix, T)                                            \
  extern "C" __global__ void llmc_amax_##suffix(const T *x, unsigned *out,     \
                                                long long n) {                 \
    amax(x, out, n);                                                           \
  }                                                                            \
  extern "C" __global__ void llmc_scaled_cast_##suffix##_e4m3(                 \
      const T *x, const float *scale, unsigned char *out, long long n) {       \
    scaledCast<T, 3, 7, 0x7eu>(x, scale, out, n);                              \
  }                                                                            \
  extern "C" __global__ void llmc_scaled_cast_##suffix##_e5m2(                 \
      const T *x, const float *scale, unsigned char *out, long long n) {       \
    scaledCast<T, 2, 15, 0x7bu>(x, scale, out, n);                             \
  }                                                                            \
  extern "C" __global__ void llmc_scaled_cast_transpose_##suffix##_e4m3(       \
      const T *x, const float *scale, unsigned char *out,                      \
      unsigned char *transposed, long long rows, long long cols) {             \
    scaledCastTranspose<T, 3, 7, 0x7eu>(x, scale, out, transposed, rows,       \
                                        cols);                                 \
  }                                                                            \
  extern "C" __global__ void llmc_scaled_cast_transpose_##suffix##_e5m2(       \
      const T *x, const float *scale, unsigned char *out,                      \
      unsigned char *transposed, long long rows, long long cols) {             \
    scaledCastTranspose<T, 2, 15, 0x7bu>(x, scale, out, transposed, rows,      \
                                         cols);                                \
  }
LLMC_FP8_ENTRIES(f32, float)
LLMC_FP8_ENTRIES(bf16, Bf16)
LLMC_FP8_ENTRIES(f16, F16)
#undef LLMC_FP8_ENTRIES

#endif // LLMC_CUDA_FP8_FP8_CUH
