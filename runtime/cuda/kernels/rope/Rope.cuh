//===- Rope.cuh - llmc.rope: the cos/sin table and the rotations ----------===//
//
// Rope rotates each pair (x[i], x[i + D/2]) of a row of x [..., T, D] by the
// angle p_t * theta^(-2i/D) (p_t = positions[t], or t). The angle depends on
// (t, i) alone, so the launch (RopeLaunch.cpp) runs two kernels:
//   1. llmc_rope_table_<i32|i64>: the table of cos and sin [T, D/2] in
//      double, into the launch's scratch: T * D/2 evaluations of pow, cos
//      and sin, where the kernel it replaces evaluated them for every pair
//      of every row (rows * D/2: 64 times more for LLaMA-1B's queries) and
//      was bound by the f64 units (0.135 ms for [8, 16, 1024, 128] bf16).
//   2. the rotation of the rows from the table:
//      llmc_rope_rotate_vec_<f32|bf16> where D/2 is a whole number of
//      16-byte packs (8 bf16, 4 f32) and x and the result are 16-byte
//      aligned: a thread keeps the cos and sin of one pack of columns of
//      one position in registers and rotates that pack in several heads
//      (rows t, t + T, ...), 16-byte loads and stores; otherwise
//      llmc_rope_rotate_<f32|bf16>, a thread per pair.
// A unit of its own (units/Rope.cu) on the prelude alone, so
// that the device unit's cold NVRTC compile does not grow.
//
// A scaled rope (LLaMA 3's rope_scaling) gives its D/2 inverse frequencies
// in a RopeFrequencies parameter (RopeLaunch.h) that replaces
// 1 / pow(theta, 2i/D); count 0 keeps the formula.
//
// Numerics: the table is the CPU's (cpuRope: invFreq = 1 / pow(theta,
// 2i/D), cos and sin of p * invFreq, all in double; the device's f64 libm
// may differ from glibc's in the last bit of a double). The rotation is
// a*c - b*s and b*c + a*s with each product and the sum rounded in double
// (__dmul_rn, __dsub_rn, __dadd_rn: no FMA contraction, as the CPU's
// x86-64 code), then one rounding to the stored type. Both rotation
// kernels compute the same bits from the same table.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CUDA_ROPE_ROPE_CUH
#define LLMC_CUDA_ROPE_ROPE_CUH

#include "common/Prelude.cuh"

// ---- Rope: the cos/sin table, then the rotation ---------------------------

// The inverse frequencies of a scaled rope, by value (RopeLaunch.h has the
// host's copy of this layout); count 0: theta^(-2i/D).
struct RopeFrequencies {
  long long count;
  double inverse[256];
};

// Entry (t, i) of the [T, D/2] tables: cos and sin of
// position(t) * theta^(-2i/D) (or * inverse[i]), in double with the CPU's
// expressions; null positions mean t.
template <typename I>
__device__ void ropeTable(const I *positions, double *cosTable,
                          double *sinTable, long long seq, long long headDim,
                          double theta, const RopeFrequencies &frequencies) {
  long long half = headDim / 2;
  long long total = seq * half;
  for (long long i = globalThread(); i < total; i += gridThreads()) {
    long long t = i / half;
    long long column = i % half;
    double position = positions ? (double)positions[t] : (double)t;
    double invFreq =
        frequencies.count > 0
            ? frequencies.inverse[column]
            : 1.0 / pow(theta, (double)(2 * column) / (double)headDim);
    cosTable[i] = cos(position * invFreq);
    sinTable[i] = sin(position * invFreq);
  }
}

// The pair (a, b) rotated by the angle whose cos and sin are (c, s):
// a*c - b*s and b*c + a*s, every product and sum rounded (no FMA), as the
// CPU computes them.
__device__ __forceinline__ void rotatePair(double a, double b, double c,
                                           double s, double &first,
                                           double &second) {
  first = __dsub_rn(__dmul_rn(a, c), __dmul_rn(b, s));
  second = __dadd_rn(__dmul_rn(b, c), __dmul_rn(a, s));
}

// Any shape: a thread per pair (row, i), its angle from the table.
template <typename T>
__device__ void ropeRotate(const T *x, const double *cosTable,
                           const double *sinTable, T *out, long long rows,
                           long long seq, long long headDim) {
  long long half = headDim / 2;
  long long total = rows * half;
  for (long long i = globalThread(); i < total; i += gridThreads()) {
    long long row = i / half;
    long long column = i % half;
    long long entry = (row % seq) * half + column;
    long long first = row * headDim + column;
    double rotatedFirst, rotatedSecond;
    rotatePair((double)loadValue(x[first]), (double)loadValue(x[first + half]),
               cosTable[entry], sinTable[entry], rotatedFirst, rotatedSecond);
    out[first] = storeValue<T>(rotatedFirst);
    out[first + half] = storeValue<T>(rotatedSecond);
  }
}

// One pack of V pairs of a row: `low` from the first half, `high` from the
// second, rotated by the pack's cos and sin into `lowOut` and `highOut`.
template <typename T, int V>
__device__ __forceinline__ void rotatePack(const RowPack<T, V> &low,
                                           const RowPack<T, V> &high,
                                           const double *c, const double *s,
                                           RowPack<T, V> &lowOut,
                                           RowPack<T, V> &highOut) {
#pragma unroll
  for (int k = 0; k < V; ++k) {
    double rotatedFirst, rotatedSecond;
    rotatePair((double)loadValue(low.v[k]), (double)loadValue(high.v[k]), c[k],
               s[k], rotatedFirst, rotatedSecond);
    lowOut.v[k] = storeValue<T>(rotatedFirst);
    highOut.v[k] = storeValue<T>(rotatedSecond);
  }
}

// D/2 a whole number of packs of V = 16 / sizeof(T) elements, x and out
// 16-byte aligned. Thread `item` takes position t = item / packs and
// columns [column, column + V) of each half of the row (consecutive
// threads: consecutive packs of a row, then the next row, so that a warp
// reads whole lines), loads their cos and sin once and rotates them in the
// heads [blockIdx.y * headsPerThread, + headsPerThread), rows h * T + t,
// two heads at a time: their four loads are issued before any store (the
// compiler may not move a load above a store to `out`, which may be x).
template <typename T>
__device__ void ropeRotatePacks(const T *x, const double *cosTable,
                                const double *sinTable, T *out,
                                long long heads, long long seq,
                                long long headDim, long long headsPerThread) {
  constexpr int V = 16 / sizeof(T);
  long long half = headDim / 2;
  long long packs = half / V;
  long long item = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (item >= seq * packs)
    return;
  long long t = item / packs;
  long long column = (item % packs) * V;
  // The entries are 2V doubles apart, so 16-byte aligned (the scratch is
  // cudaMalloc's, and the sin table starts T * D/2 doubles in, an even
  // count).
  const double2 *cosPairs = (const double2 *)(cosTable + t * half + column);
  const double2 *sinPairs = (const double2 *)(sinTable + t * half + column);
  double c[V], s[V];
#pragma unroll
  for (int k = 0; k < V / 2; ++k) {
    double2 cosPair = cosPairs[k];
    double2 sinPair = sinPairs[k];
    c[2 * k] = cosPair.x;
    c[2 * k + 1] = cosPair.y;
    s[2 * k] = sinPair.x;
    s[2 * k + 1] = sinPair.y;
  }
  // Row h's pack of the first half is `rowPacks` packs after row h - 1's;
  // its pack of the second half `packs` after its first.
  long long rowPacks = seq * 2 * packs;
  const RowPack<T, V> *in = (const RowPack<T, V> *)(x + t * headDim + column);
  RowPack<T, V> *result = (RowPack<T, V> *)(out + t * headDim + column);
  long long h = (long long)blockIdx.y * headsPerThread;
  long long endHead = min(heads, h + headsPerThread);
  for (; h + 1 < endHead; h += 2) {
    long long first = h * rowPacks, second = first + rowPacks;
    RowPack<T, V> low = in[first], high = in[first + packs];
    RowPack<T, V> nextLow = in[second], nextHigh = in[second + packs];
    RowPack<T, V> lowOut, highOut;
    rotatePack(low, high, c, s, lowOut, highOut);
    result[first] = lowOut;
    result[first + packs] = highOut;
    rotatePack(nextLow, nextHigh, c, s, lowOut, highOut);
    result[second] = lowOut;
    result[second + packs] = highOut;
  }
  if (h < endHead) {
    long long first = h * rowPacks;
    RowPack<T, V> low = in[first], high = in[first + packs];
    RowPack<T, V> lowOut, highOut;
    rotatePack(low, high, c, s, lowOut, highOut);
    result[first] = lowOut;
    result[first + packs] = highOut;
  }
}

#define LLMC_ROPE_TABLE(I, SUFFIX)                                             \
  extern "C" __global__ void llmc_rope_table_##SUFFIX(                         \
      const I *positions, double *cosTable, double *sinTable, long long seq,   \
      long long headDim, double theta, RopeFrequencies frequencies) {          \
    ropeTable(positions, cosTable, sinTable, seq, headDim, theta,              \
              frequencies);                                                    \
  }
LLMC_ROPE_TABLE(int, i32)
LLMC_ROPE_TABLE(long long, i64)

#define LLMC_ROPE_ROTATE(T, SUFFIX)                                            \
  extern "C" __global__ void llmc_rope_rotate_##SUFFIX(                        \
      const T *x, const double *cosTable, const double *sinTable, T *out,      \
      long long rows, long long seq, long long headDim) {                      \
    ropeRotate(x, cosTable, sinTable, out, rows, seq, headDim);                \
  }                                                                            \
  extern "C" __global__ void llmc_rope_rotate_vec_##SUFFIX(                    \
      const T *x, const double *cosTable, const double *sinTable, T *out,      \
      long long heads, long long seq, long long headDim,                       \
      long long headsPerThread) {                                              \
    ropeRotatePacks(x, cosTable, sinTable, out, heads, seq, headDim,           \
                    headsPerThread);                                           \
  }
LLMC_ROPE_ROTATE(float, f32)
LLMC_ROPE_ROTATE(Bf16, bf16)
LLMC_ROPE_ROTATE(F16, f16)

#endif // LLMC_CUDA_ROPE_ROPE_CUH
