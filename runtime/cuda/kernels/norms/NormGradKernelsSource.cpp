//===- NormGradKernelsSource.cpp - CUDA C++ of layer_norm_grad and
//                                 rms_norm_grad ------------------------===//
//
// The norms' derivatives (llmc.layer_norm_grad, llmc.rms_norm_grad) as two
// kernels, appended to the device unit after deviceKernelSource() and
// longRowKernelSource() (whose helpers they use: Bf16, loadValue,
// storeValue, storeFloat, warpSum, lane, RowPack):
//   1. chunk: a block of 256 threads takes a chunk of LLMC_NORM_GRAD_CHUNK
//      (32) rows. Each warp recomputes the statistics of its rows (mean and
//      rstd in two passes, as the forward, and the row means of g = dy gamma
//      and g xhat) into shared memory; then each thread takes columns and
//      walks the chunk's rows, writing dx and summing dy xhat (dgamma) and
//      dy (dbeta) of its columns into the chunk's partials (the scratch).
//      x and dy come from memory once (the second walk over the chunk, just
//      read by the same block, hits the caches), dx is written once;
//   2. finish: per column, the chunks' partials summed in a fixed order
//      (32 runs of consecutive chunks side by side, then the runs).
//      (ReduceKernels' column finish wants each result's partials
//      contiguous; here a chunk's partials are a row [2, dim], so that the
//      chunk kernel's stores are coalesced.)
//   1'. rows (the launch's choice when a row is whole 16-byte packs, at
//      most 8 per lane, and the pointers are 16-byte aligned: GPT-2's 768,
//      LLaMA-1B's 2048): the same chunk, results and partials as 1., but a
//      warp reads its row's x and dy once with 16-byte loads and computes
//      the statistics and dx from registers; the column walk reads 8 bytes
//      of columns per thread. (1. issued 2-byte loads a few at a time per
//      lane and read x and dy from memory twice: 0.128 ms, 780 GB/s, for
//      GPT-2's [16384, 768].)
// DeviceKernels.cpp launches them; KernelSelection.cpp sizes the scratch
// (NormGradLaunch).
//
// Numerics as the CPU reference (runtime/cpu/CompositeNormGrads.cpp, with
// the same chunks): everything in double from the stored values and one
// rounding to each result's type; only the order of the double operations
// differs (a warp's lanes and the shuffle tree for the row sums; 32
// runs of chunks, then their sum, for the column sums), which the rounding
// to f32 or bf16 hides but for rare last-bit ties. No atomics: a result is
// the same from run to run.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/DeviceKernels.h"

namespace llmc::rt::cuda {

const char *normGradCommonSource() {
  return R"cuda(
// ---- Norm gradients (NormGradKernelsSource.cpp) ----------------------------
// Rows per chunk of the column sums: NormGradLaunch::kChunkRows
// (KernelSelection.h) sizes the scratch with it; the CPU reference uses the
// same.
#define LLMC_NORM_GRAD_CHUNK 32
// Runs of chunks the finish kernel sums side by side per column.
#define LLMC_NORM_GRAD_RUNS 32

)cuda";
}

const char *normGradKernelSource() {
  return R"cuda(

// 1. Block c takes rows [32c, 32c + 32). With g = dy * gamma and
//    xhat = (x - mean) * rstd: dx = rstd * (g - mean(g) - xhat *
//    mean(g * xhat)); rms_norm (centered 0) has mean = 0 and no mean(g)
//    term. partials[(2c) * dim + i] is the chunk's sum of dy * xhat in
//    column i, partials[(2c + 1) * dim + i] its sum of dy.
//    With an `addend` (not null: the residual gradient's add folded in by
//    the session, docs/cuda.md), dx is stored as the Add of the rounded dx
//    and the addend: both widened to f32, added in f32 (never contracted),
//    rounded once to T, as the Add kernel does.
template <typename T, typename P>
__device__ void normGradChunk(const T *x, const P *gamma, const T *dy, T *dx,
                              const T *addend, double *partials,
                              long long rows, long long dim, double epsilon,
                              int centered) {
  // mean, rstd, mean(g), mean(g xhat) of each row of the chunk.
  __shared__ double rowStats[4 * LLMC_NORM_GRAD_CHUNK];
  const long long chunk = blockIdx.x;
  const long long begin = chunk * LLMC_NORM_GRAD_CHUNK;
  const int count = (int)min((long long)LLMC_NORM_GRAD_CHUNK, rows - begin);
  const int warp = threadIdx.x / 32, warps = blockDim.x / 32;
  // 1a. A warp per row: the statistics. Loop A reads x and dy from memory
  //     (the sum of x, and of g); loop B reads them again from L1 for the
  //     sums about the mean (two passes, as the forward). Unrolled so that
  //     each lane has several loads in flight.
  for (int local = warp; local < count; local += warps) {
    const T *xRow = x + (begin + local) * dim;
    const T *dyRow = dy + (begin + local) * dim;
    double sum = 0.0, gSum = 0.0;
#pragma unroll 4
    for (long long i = lane(); i < dim; i += 32) {
      sum += (double)loadValue(xRow[i]);
      gSum += (double)loadValue(dyRow[i]) * (double)loadValue(gamma[i]);
    }
    double mean = centered ? warpSum(sum) / (double)dim : 0.0;
    double squares = 0.0, gxSum = 0.0;
#pragma unroll 4
    for (long long i = lane(); i < dim; i += 32) {
      double shifted = (double)loadValue(xRow[i]) - mean;
      double g = (double)loadValue(dyRow[i]) * (double)loadValue(gamma[i]);
      squares += shifted * shifted;
      gxSum += g * shifted;
    }
    double rstd = 1.0 / sqrt(warpSum(squares) / (double)dim + epsilon);
    double gMean = warpSum(gSum) / (double)dim;
    double gxMean = warpSum(gxSum) * rstd / (double)dim;
    if (lane() == 0) {
      rowStats[4 * local] = mean;
      rowStats[4 * local + 1] = rstd;
      rowStats[4 * local + 2] = centered ? gMean : 0.0;
      rowStats[4 * local + 3] = gxMean;
    }
  }
  __syncthreads();
  // 1b. A thread per column: dx, and the column sums over the chunk's rows
  //     in row order (consecutive threads, consecutive columns: coalesced).
  for (long long column = threadIdx.x; column < dim; column += blockDim.x) {
    double scale = (double)loadValue(gamma[column]);
    double dGamma = 0.0, dBeta = 0.0;
#pragma unroll 4
    for (int local = 0; local < count; ++local) {
      long long at = (begin + local) * dim + column;
      double rstd = rowStats[4 * local + 1];
      double xhat = ((double)loadValue(x[at]) - rowStats[4 * local]) * rstd;
      double d = (double)loadValue(dy[at]);
      T stored = storeValue<T>(rstd * (d * scale - rowStats[4 * local + 2] -
                                       xhat * rowStats[4 * local + 3]));
      if (addend)
        stored = storeValue<T>(
            (double)__fadd_rn(loadValue(stored), loadValue(addend[at])));
      dx[at] = stored;
      dGamma += d * xhat;
      dBeta += d;
    }
    partials[(2 * chunk) * dim + column] = dGamma;
    partials[(2 * chunk + 1) * dim + column] = dBeta;
  }
}

// 2. Block of 1024 threads (32 columns x 32 runs): thread (tx, ty) =
//    (t % 32, t / 32) sums run ty of the chunks (contiguous, in order) for
//    column 32 * blockIdx.x + tx; the threads of ty = 0 add the 32 runs in
//    order. (GPT-2: 512 chunks, 16 per run; 24 blocks for 768 columns.) dbeta may be null (rms_norm); no chunks
//    gives zeros.
template <typename P>
__device__ void normGradFinish(const double *partials, P *dgamma, P *dbeta,
                               long long chunks, long long dim) {
  __shared__ double runs[2][LLMC_NORM_GRAD_RUNS][32];
  const int tx = threadIdx.x % 32, ty = threadIdx.x / 32;
  long long column = (long long)blockIdx.x * 32 + tx;
  long long length = (chunks + LLMC_NORM_GRAD_RUNS - 1) / LLMC_NORM_GRAD_RUNS;
  long long first = ty * length;
  long long last = min(chunks, first + length);
  double dGamma = 0.0, dBeta = 0.0;
  if (column < dim)
    for (long long c = first; c < last; ++c) {
      dGamma += partials[(2 * c) * dim + column];
      dBeta += partials[(2 * c + 1) * dim + column];
    }
  runs[0][ty][tx] = dGamma;
  runs[1][ty][tx] = dBeta;
  __syncthreads();
  if (ty != 0 || column >= dim)
    return;
  dGamma = 0.0;
  dBeta = 0.0;
  for (int run = 0; run < LLMC_NORM_GRAD_RUNS; ++run) {
    dGamma += runs[0][run][tx];
    dBeta += runs[1][run][tx];
  }
  dgamma[column] = storeValue<P>(dGamma);
  if (dbeta)
    dbeta[column] = storeValue<P>(dBeta);
}

#define LLMC_NORM_GRAD_CHUNK_KERNEL(T, P, SUFFIX)                              \
  extern "C" __global__ void llmc_norm_grad_##SUFFIX(                          \
      const T *x, const P *gamma, const T *dy, T *dx, const T *addend,         \
      double *partials, long long rows, long long dim, double epsilon,         \
      int centered) {                                                          \
    normGradChunk(x, gamma, dy, dx, addend, partials, rows, dim, epsilon,      \
                  centered);                                                   \
  }
LLMC_NORM_GRAD_CHUNK_KERNEL(float, float, f32_f32)
LLMC_NORM_GRAD_CHUNK_KERNEL(Bf16, Bf16, bf16_bf16)
LLMC_NORM_GRAD_CHUNK_KERNEL(Bf16, float, bf16_f32)
LLMC_NORM_GRAD_CHUNK_KERNEL(float, Bf16, f32_bf16)

#define LLMC_NORM_GRAD_FINISH(P, SUFFIX)                                       \
  extern "C" __global__ void llmc_norm_grad_finish_##SUFFIX(                   \
      const double *partials, P *dgamma, P *dbeta, long long chunks,           \
      long long dim) {                                                         \
    normGradFinish(partials, dgamma, dbeta, chunks, dim);                      \
  }
LLMC_NORM_GRAD_FINISH(float, f32)
LLMC_NORM_GRAD_FINISH(Bf16, bf16)
)cuda";
}

const char *normGradRowsSource() {
  return R"cuda(
// 1'. The rows in registers: the same chunk, results and partials as 1.,
//     for rows of dim = V * packs elements (V = 16 bytes of T, packs <=
//     32 * PACKS) with x, dy, dx and the addend 16-byte aligned.
//     Row step: warp w takes the chunk's rows w, w + 8, ...; it reads the
//     row's x and dy once with 16-byte loads (lane l holds packs l, l + 32,
//     ...) and computes the statistics and dx from registers. Column step:
//     as 1b, a thread per 8 bytes of columns walks the chunk's rows in order
//     (the CPU's order of the column sums), reading x and dy again from
//     L1/L2 (the block has just read them). gamma is widened once per block
//     into shared memory, laid out [pack][element][lane] so that a warp's
//     reads of it are 32 consecutive doubles (no bank conflicts).
//     dx must not alias x or dy: the column step reads them after the row
//     step has written dx (the buffer plan writes no result of this op in
//     place, ir/BufferPlan.cpp inPlaceOperands).
//     The widening to double (F2F, a quarter of the FP64 rate) is the
//     arithmetic's cost: x and dy are widened again in each pass rather
//     than held as doubles (which would take 4 * PACKS * V registers).
#define LLMC_NORM_GRAD_THREADS 256
template <typename T, typename P, int PACKS>
__device__ void normGradRows(const T *x, const P *gamma, const T *dy, T *dx,
                             const T *addend, double *partials,
                             long long rows, long long dim, double epsilon,
                             int centered) {
  constexpr int V = 16 / sizeof(T);
  constexpr int W = V / 2;
  __shared__ double gammaWide[PACKS * V * 32];
  __shared__ double rowMean[LLMC_NORM_GRAD_CHUNK];
  __shared__ double rowRstd[LLMC_NORM_GRAD_CHUNK];
  const long long chunk = blockIdx.x;
  const long long begin = chunk * LLMC_NORM_GRAD_CHUNK;
  const int count = (int)min((long long)LLMC_NORM_GRAD_CHUNK, rows - begin);
  const int packs = (int)(dim / V);
  const int warp = threadIdx.x / 32, warps = blockDim.x / 32;
  // 1. gamma widened once: gammaWide[(k * V + v) * 32 + l] is the element v
  //    of pack l + 32 k (0 past the row).
  for (int s = threadIdx.x; s < PACKS * V * 32; s += blockDim.x) {
    const int l = s % 32, k = s / 32 / V, v = s / 32 % V;
    const long long column = (long long)(l + 32 * k) * V + v;
    gammaWide[s] = column < dim ? (double)loadValue(gamma[column]) : 0.0;
  }
  __syncthreads();
  // 2. The row step.
  for (int local = warp; local < count; local += warps) {
    const long long row = begin + local;
    const RowPack<T, V> *xPacks = (const RowPack<T, V> *)(x + row * dim);
    const RowPack<T, V> *dyPacks = (const RowPack<T, V> *)(dy + row * dim);
    RowPack<T, V> xHeld[PACKS], dyHeld[PACKS];
#pragma unroll
    for (int k = 0; k < PACKS; ++k)
      if (lane() + 32 * k < packs) {
        xHeld[k] = xPacks[lane() + 32 * k];
        dyHeld[k] = dyPacks[lane() + 32 * k];
      }
    // 2a. The mean (layer_norm; 0 for rms_norm).
    double mean = 0.0;
    if (centered) {
      double sum = 0.0;
#pragma unroll
      for (int k = 0; k < PACKS; ++k)
        if (lane() + 32 * k < packs)
#pragma unroll
          for (int v = 0; v < V; ++v)
            sum += (double)loadValue(xHeld[k].v[v]);
      mean = warpSum(sum) / (double)dim;
    }
    // 2b. The squares about the mean, and the sums of g and g (x - mean).
    double squares = 0.0, gSum = 0.0, gxSum = 0.0;
#pragma unroll
    for (int k = 0; k < PACKS; ++k)
      if (lane() + 32 * k < packs)
#pragma unroll
        for (int v = 0; v < V; ++v) {
          const double shifted = (double)loadValue(xHeld[k].v[v]) - mean;
          const double g = (double)loadValue(dyHeld[k].v[v]) *
                           gammaWide[(k * V + v) * 32 + lane()];
          squares += shifted * shifted;
          gSum += g;
          gxSum += g * shifted;
        }
    const double rstd = 1.0 / sqrt(warpSum(squares) / (double)dim + epsilon);
    const double gMean = centered ? warpSum(gSum) / (double)dim : 0.0;
    const double gxMean = warpSum(gxSum) * rstd / (double)dim;
    if (lane() == 0) {
      rowMean[local] = mean;
      rowRstd[local] = rstd;
    }
    // 2c. dx (plus the addend), 16-byte stores.
    RowPack<T, V> *dxPacks = (RowPack<T, V> *)(dx + row * dim);
    RowPack<T, V> addendHeld[PACKS];
    if (addend) {
      const RowPack<T, V> *addendPacks =
          (const RowPack<T, V> *)(addend + row * dim);
#pragma unroll
      for (int k = 0; k < PACKS; ++k)
        if (lane() + 32 * k < packs)
          addendHeld[k] = addendPacks[lane() + 32 * k];
    }
#pragma unroll
    for (int k = 0; k < PACKS; ++k) {
      if (lane() + 32 * k >= packs)
        continue;
      RowPack<T, V> result;
#pragma unroll
      for (int v = 0; v < V; ++v) {
        const double xhat = ((double)loadValue(xHeld[k].v[v]) - mean) * rstd;
        const double d = (double)loadValue(dyHeld[k].v[v]);
        const double scale = gammaWide[(k * V + v) * 32 + lane()];
        result.v[v] = storeValue<T>(rstd * (d * scale - gMean - xhat * gxMean));
        if (addend)
          result.v[v] = storeFloat<T>(
              __fadd_rn(loadValue(result.v[v]), loadValue(addendHeld[k].v[v])));
      }
      dxPacks[lane() + 32 * k] = result;
    }
  }
  __syncthreads();
  // 3. The column step: 8 bytes of columns per thread, the chunk's rows in
  //    order; the loads of 8 rows are in flight at once.
  const long long vectors = dim / W;
  for (long long c = threadIdx.x; c < vectors; c += blockDim.x) {
    double dGamma[W], dBeta[W];
#pragma unroll
    for (int v = 0; v < W; ++v) {
      dGamma[v] = 0.0;
      dBeta[v] = 0.0;
    }
#pragma unroll 8
    for (int local = 0; local < count; ++local) {
      const long long at = (begin + local) * dim / W + c;
      const RowPack<T, W> xs = ((const RowPack<T, W> *)x)[at];
      const RowPack<T, W> ds = ((const RowPack<T, W> *)dy)[at];
      const double mean = rowMean[local], rstd = rowRstd[local];
#pragma unroll
      for (int v = 0; v < W; ++v) {
        const double xhat = ((double)loadValue(xs.v[v]) - mean) * rstd;
        const double d = (double)loadValue(ds.v[v]);
        dGamma[v] += d * xhat;
        dBeta[v] += d;
      }
    }
#pragma unroll
    for (int v = 0; v < W; ++v) {
      partials[(2 * chunk) * dim + c * W + v] = dGamma[v];
      partials[(2 * chunk + 1) * dim + c * W + v] = dBeta[v];
    }
  }
}

// The rows-in-registers entries: PACKS 4 (bf16 rows up to 1024, GPT-2's
// 768) and 8 (up to 2048, LLaMA-1B's). The launch bounds ask for 3 (2)
// blocks of 256 per SM, 80 (128) registers: ptxas (CUDA 13, sm_90) spills
// 16 bytes for it, where 96 (148) registers would leave 2 (1).
#define LLMC_NORM_GRAD_ROWS_KERNEL(T, P, PACKS, SUFFIX)                        \
  extern "C" __global__ void __launch_bounds__(LLMC_NORM_GRAD_THREADS,       \
                                 PACKS == 4 ? 3 : 2)                          \
      llmc_norm_grad_rows##PACKS##_##SUFFIX(                                  \
          const T *x, const P *gamma, const T *dy, T *dx, const T *addend,    \
          double *partials, long long rows, long long dim, double epsilon,    \
          int centered) {                                                     \
    normGradRows<T, P, PACKS>(x, gamma, dy, dx, addend, partials, rows, dim,  \
                              epsilon, centered);                             \
  }
LLMC_NORM_GRAD_ROWS_KERNEL(float, float, 4, f32_f32)
LLMC_NORM_GRAD_ROWS_KERNEL(Bf16, Bf16, 4, bf16_bf16)
LLMC_NORM_GRAD_ROWS_KERNEL(Bf16, float, 4, bf16_f32)
LLMC_NORM_GRAD_ROWS_KERNEL(float, Bf16, 4, f32_bf16)
LLMC_NORM_GRAD_ROWS_KERNEL(float, float, 8, f32_f32)
LLMC_NORM_GRAD_ROWS_KERNEL(Bf16, Bf16, 8, bf16_bf16)
LLMC_NORM_GRAD_ROWS_KERNEL(Bf16, float, 8, bf16_f32)
LLMC_NORM_GRAD_ROWS_KERNEL(float, Bf16, 8, f32_bf16)

)cuda";
}

} // namespace llmc::rt::cuda
