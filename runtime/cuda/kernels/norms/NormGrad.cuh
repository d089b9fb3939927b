//===- NormGrad.cuh - layer_norm_grad and rms_norm_grad -------------------===//
//
//                                 rms_norm_grad ------------------------===//
//
// The norms' derivatives (llmc.layer_norm_grad, llmc.rms_norm_grad) as two
// kernels, on the prelude (whose helpers they use: Bf16, loadValue,
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
// norms/NormsLaunch.cpp launches them and sizes the scratch
// (NormGradLaunch).
//
// Numerics as the CPU reference (runtime/cpu/NormGrads.cpp, with
// the same chunks): everything in double from the stored values and one
// rounding to each result's type; only the order of the double operations
// differs (a warp's lanes and the shuffle tree for the row sums; 32
// runs of chunks, then their sum, for the column sums), which the rounding
// to f32 or bf16 hides but for rare last-bit ties. No atomics: a result is
// the same from run to run.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CUDA_NORMS_NORMGRAD_CUH
#define LLMC_CUDA_NORMS_NORMGRAD_CUH

#include "common/Prelude.cuh"
#include "norms/NormGradCommon.cuh"

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
LLMC_NORM_GRAD_CHUNK_KERNEL(F16, F16, f16_f16)
LLMC_NORM_GRAD_CHUNK_KERNEL(F16, float, f16_f32)

#define LLMC_NORM_GRAD_FINISH(P, SUFFIX)                                       \
  extern "C" __global__ void llmc_norm_grad_finish_##SUFFIX(                   \
      const double *partials, P *dgamma, P *dbeta, long long chunks,           \
      long long dim) {                                                         \
    normGradFinish(partials, dgamma, dbeta, chunks, dim);                      \
  }
LLMC_NORM_GRAD_FINISH(float, f32)
LLMC_NORM_GRAD_FINISH(Bf16, bf16)
LLMC_NORM_GRAD_FINISH(F16, f16)

#endif // LLMC_CUDA_NORMS_NORMGRAD_CUH
