//===- Reduce.cuh - the general reductions over any dims ------------------===//
//
// reduce_sum, reduce_max and reduce_mean over any list of dimensions: a
// block per result element (or, for few long results, partial sums per
// chunk and a finish pass), double accumulation in a fixed tree order, one
// rounding to the result type. The fast row and column paths are
// ReduceRows.cuh; planReduceLaunch (ReduceKernels.h) picks the path.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CUDA_REDUCE_REDUCE_CUH
#define LLMC_CUDA_REDUCE_REDUCE_CUH

#include "common/Prelude.cuh"

// ---- Reductions ------------------------------------------------------------

// Result element o (row-major over the kept dimensions) folds the input
// elements base(o) + offset(r) for r over the reduced dimensions. One block
// per result element; each thread folds a strided share in double (as the
// CPU), then the block combines the shares.
struct ReducePlan {
  int keptRank;
  long long keptSizes[LLMC_MAX_RANK];
  long long keptStrides[LLMC_MAX_RANK];
  int reducedRank;
  long long reducedSizes[LLMC_MAX_RANK];
  long long reducedStrides[LLMC_MAX_RANK];
  long long reduceCount;
  long long outputCount;
};

__device__ __forceinline__ long long decompose(long long index, int rank,
                                               const long long *sizes,
                                               const long long *strides) {
  long long offset = 0;
  for (int d = rank - 1; d >= 0; --d) {
    offset += (index % sizes[d]) * strides[d];
    index /= sizes[d];
  }
  return offset;
}

// kind: 0 sum, 1 max, 2 mean. Max keeps NaN (the CPU's maxPropagatingNan).
__device__ __forceinline__ double combine(double a, double b, int kind) {
  return kind == 1 ? ((isnan(a) || a >= b) ? a : b) : a + b;
}

// Folds the block's `acc` values in a fixed tree order (so a result is the
// same from run to run); every thread must call it. Returns thread 0's total.
__device__ double blockCombine(double *shares, double acc, int kind) {
  shares[threadIdx.x] = acc;
  __syncthreads();
  for (int half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half)
      shares[threadIdx.x] =
          combine(shares[threadIdx.x], shares[threadIdx.x + half], kind);
    __syncthreads();
  }
  return shares[0];
}

template <typename In, typename Out>
__device__ void reduce(const In *in, Out *out, ReducePlan plan, int kind) {
  __shared__ double shares[256];
  for (long long o = blockIdx.x; o < plan.outputCount; o += gridDim.x) {
    long long base =
        decompose(o, plan.keptRank, plan.keptSizes, plan.keptStrides);
    double acc = kind == 1 ? negativeInfinity() : 0.0;
    for (long long r = threadIdx.x; r < plan.reduceCount; r += blockDim.x) {
      long long offset = base + decompose(r, plan.reducedRank,
                                          plan.reducedSizes,
                                          plan.reducedStrides);
      acc = combine(acc, (double)loadValue(in[offset]), kind);
    }
    double total = blockCombine(shares, acc, kind);
    if (threadIdx.x == 0) {
      double result = total;
      if (kind == 2)
        result /= (double)plan.reduceCount;
      out[o] = storeValue<Out>(result);
    }
    __syncthreads();
  }
}

// Few outputs, long reductions (a gradient's sum of squares): pass 1 cuts
// each output's reduction into `chunks` contiguous ranges, one block each,
// and writes one double per block; pass 2 folds an output's partials in
// chunk order. Both passes fix the order of every addition, so the result is
// the same from run to run.
template <typename In>
__device__ void reducePartial(const In *in, double *partials, ReducePlan plan,
                              int kind, long long chunks) {
  __shared__ double shares[256];
  long long o = blockIdx.x / chunks, c = blockIdx.x % chunks;
  long long length = (plan.reduceCount + chunks - 1) / chunks;
  long long begin = c * length;
  long long end = min(plan.reduceCount, begin + length);
  long long base = decompose(o, plan.keptRank, plan.keptSizes, plan.keptStrides);
  double acc = kind == 1 ? negativeInfinity() : 0.0;
  for (long long r = begin + threadIdx.x; r < end; r += blockDim.x) {
    long long offset =
        base + decompose(r, plan.reducedRank, plan.reducedSizes,
                         plan.reducedStrides);
    acc = combine(acc, (double)loadValue(in[offset]), kind);
  }
  double total = blockCombine(shares, acc, kind);
  if (threadIdx.x == 0)
    partials[blockIdx.x] = total;
}

template <typename Out>
__device__ void reduceFinish(const double *partials, Out *out,
                             long long chunks, long long count, int kind) {
  __shared__ double shares[256];
  const double *mine = partials + blockIdx.x * chunks;
  double acc = kind == 1 ? negativeInfinity() : 0.0;
  for (long long c = threadIdx.x; c < chunks; c += blockDim.x)
    acc = combine(acc, mine[c], kind);
  double total = blockCombine(shares, acc, kind);
  if (threadIdx.x == 0) {
    double result = total;
    if (kind == 2)
      result /= (double)count;
    out[blockIdx.x] = storeValue<Out>(result);
  }
}

extern "C" __global__ void llmc_reduce_partial_f32(const float *in,
                                                   double *partials,
                                                   ReducePlan plan, int kind,
                                                   long long chunks) {
  reducePartial(in, partials, plan, kind, chunks);
}
extern "C" __global__ void llmc_reduce_partial_bf16(const Bf16 *in,
                                                    double *partials,
                                                    ReducePlan plan, int kind,
                                                    long long chunks) {
  reducePartial(in, partials, plan, kind, chunks);
}
extern "C" __global__ void llmc_reduce_partial_f16(const F16 *in,
                                                   double *partials,
                                                   ReducePlan plan, int kind,
                                                   long long chunks) {
  reducePartial(in, partials, plan, kind, chunks);
}
extern "C" __global__ void llmc_reduce_finish_f32(const double *partials,
                                                  float *out, long long chunks,
                                                  long long count, int kind) {
  reduceFinish(partials, out, chunks, count, kind);
}
extern "C" __global__ void llmc_reduce_finish_bf16(const double *partials,
                                                   Bf16 *out, long long chunks,
                                                   long long count, int kind) {
  reduceFinish(partials, out, chunks, count, kind);
}
extern "C" __global__ void llmc_reduce_finish_f16(const double *partials,
                                                  F16 *out, long long chunks,
                                                  long long count, int kind) {
  reduceFinish(partials, out, chunks, count, kind);
}

extern "C" __global__ void llmc_reduce_f32_f32(const float *in, float *out,
                                               ReducePlan plan, int kind) {
  reduce(in, out, plan, kind);
}
extern "C" __global__ void llmc_reduce_bf16_f32(const Bf16 *in, float *out,
                                                ReducePlan plan, int kind) {
  reduce(in, out, plan, kind);
}
extern "C" __global__ void llmc_reduce_f32_bf16(const float *in, Bf16 *out,
                                                ReducePlan plan, int kind) {
  reduce(in, out, plan, kind);
}
extern "C" __global__ void llmc_reduce_bf16_bf16(const Bf16 *in, Bf16 *out,
                                                 ReducePlan plan, int kind) {
  reduce(in, out, plan, kind);
}
extern "C" __global__ void llmc_reduce_f16_f32(const F16 *in, float *out,
                                               ReducePlan plan, int kind) {
  reduce(in, out, plan, kind);
}
extern "C" __global__ void llmc_reduce_f32_f16(const float *in, F16 *out,
                                               ReducePlan plan, int kind) {
  reduce(in, out, plan, kind);
}
extern "C" __global__ void llmc_reduce_f16_f16(const F16 *in, F16 *out,
                                               ReducePlan plan, int kind) {
  reduce(in, out, plan, kind);
}

#endif // LLMC_CUDA_REDUCE_REDUCE_CUH
