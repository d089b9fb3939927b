//===- Moe.cuh - the MoE routing kernels ----------------------------------===//
//
// moe_top_k, the slot assignment, moe_dispatch and moe_combine, on the
// prelude (whose helpers they use:
// globalThread, loadValue, storeValue, negativeInfinity). Launched by
// MoeLaunch.cpp. Written on 2026-11-29 without a GPU at hand: compiled
// by cuda-coverage; CudaKernelCase.Moe and
// CudaSessionTest.MoeTinyTrainingMatchesCpu check them against the CPU when
// run on one.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CUDA_MOE_MOE_CUH
#define LLMC_CUDA_MOE_MOE_CUH

#include "common/Prelude.cuh"

// ---- Mixture of experts: routing, dispatch, combine ----------------------
// As the CPU (runtime/cpu/Moe.cpp): pairs (token n, choice j) take
// slots of their expert in the flat order n * k + j; the first `capacity`
// get slots, later ones are dropped (slot -1). One block: thread e scans
// every pair for expert e (E is small; the scan is sequential per expert so
// the order is the CPU's).
template <typename I>
__device__ void moeSlots(const I *indices, long long pairs, long long experts,
                         long long capacity, long long *slots) {
  for (long long p = threadIdx.x; p < pairs; p += blockDim.x)
    slots[p] = -1;
  __syncthreads();
  for (long long e = threadIdx.x; e < experts; e += blockDim.x) {
    long long used = 0;
    for (long long p = 0; p < pairs && used < capacity; ++p)
      if ((long long)indices[p] == e)
        slots[p] = used++;
  }
}
extern "C" __global__ void llmc_moe_slots_i32(const int *indices,
                                              long long pairs,
                                              long long experts,
                                              long long capacity,
                                              long long *slots) {
  moeSlots(indices, pairs, experts, capacity, slots);
}
extern "C" __global__ void llmc_moe_slots_i64(const long long *indices,
                                              long long pairs,
                                              long long experts,
                                              long long capacity,
                                              long long *slots) {
  moeSlots(indices, pairs, experts, capacity, slots);
}

// out [E, C, D] (zeroed before) gets token n's row at its pairs' slots.
template <typename T, typename I>
__device__ void moeDispatch(const T *input, const I *indices,
                            const long long *slots, T *out, long long pairs,
                            long long k, long long dim, long long capacity) {
  for (long long i = globalThread(); i < pairs * dim; i += gridThreads()) {
    long long pair = i / dim, d = i % dim;
    long long slot = slots[pair];
    if (slot < 0)
      continue;
    long long expert = (long long)indices[pair];
    out[(expert * capacity + slot) * dim + d] = input[(pair / k) * dim + d];
  }
}
// out [N, D] = sum over token n's kept pairs of weight * expert output at
// the pair's slot, accumulated in double and rounded once (the CPU's).
template <typename T, typename W, typename I>
__device__ void moeCombine(const T *expertOut, const W *weights,
                           const I *indices, const long long *slots, T *out,
                           long long tokens, long long k, long long dim,
                           long long capacity) {
  for (long long i = globalThread(); i < tokens * dim; i += gridThreads()) {
    long long n = i / dim, d = i % dim;
    double acc = 0.0;
    for (long long j = 0; j < k; ++j) {
      long long slot = slots[n * k + j];
      if (slot < 0)
        continue;
      long long expert = (long long)indices[n * k + j];
      acc += (double)loadValue(weights[n * k + j]) *
             (double)loadValue(expertOut[(expert * capacity + slot) * dim + d]);
    }
    out[i] = storeValue<T>(acc);
  }
}
// Per token: softmax over the E router logits (max-subtracted, double), the
// k largest logits largest first (strict >: a tie keeps the lower id), their
// probabilities, renormalized to sum 1 under `normalize`. One thread per
// token; E <= 256.
template <typename T, typename I>
__device__ void moeTopK(const T *logits, T *weights, I *indices,
                        long long tokens, long long experts, long long k,
                        int normalize) {
  for (long long n = globalThread(); n < tokens; n += gridThreads()) {
    const T *row = logits + n * experts;
    double max = negativeInfinity();
    for (long long e = 0; e < experts; ++e)
      max = fmax(max, (double)loadValue(row[e]));
    double sum = 0.0;
    for (long long e = 0; e < experts; ++e)
      sum += exp((double)loadValue(row[e]) - max);
    unsigned long long taken[4] = {0, 0, 0, 0};
    double top[256];
    double kept = 0.0;
    for (long long j = 0; j < k; ++j) {
      long long best = -1;
      double bestValue = 0.0;
      for (long long e = 0; e < experts; ++e) {
        if (taken[e / 64] >> (e % 64) & 1ull)
          continue;
        double value = (double)loadValue(row[e]);
        if (best < 0 || value > bestValue) {
          best = e;
          bestValue = value;
        }
      }
      taken[best / 64] |= 1ull << (best % 64);
      top[j] = exp(bestValue - max) / sum;
      kept += top[j];
      indices[n * k + j] = (I)best;
    }
    for (long long j = 0; j < k; ++j)
      weights[n * k + j] = storeValue<T>(normalize ? top[j] / kept : top[j]);
  }
}
#define LLMC_MOE_KERNELS(T, TS, I, IS)                                         \
  extern "C" __global__ void llmc_moe_dispatch_##TS##_##IS(                    \
      const T *input, const I *indices, const long long *slots, T *out,        \
      long long pairs, long long k, long long dim, long long capacity) {       \
    moeDispatch(input, indices, slots, out, pairs, k, dim, capacity);          \
  }                                                                            \
  extern "C" __global__ void llmc_moe_topk_##TS##_##IS(                        \
      const T *logits, T *weights, I *indices, long long tokens,               \
      long long experts, long long k, int normalize) {                         \
    moeTopK(logits, weights, indices, tokens, experts, k, normalize);          \
  }
LLMC_MOE_KERNELS(float, f32, int, i32)
LLMC_MOE_KERNELS(float, f32, long long, i64)
LLMC_MOE_KERNELS(Bf16, bf16, int, i32)
LLMC_MOE_KERNELS(Bf16, bf16, long long, i64)
LLMC_MOE_KERNELS(F16, f16, int, i32)
LLMC_MOE_KERNELS(F16, f16, long long, i64)
#define LLMC_MOE_COMBINE_KERNEL(T, TS, W, WS, I, IS)                           \
  extern "C" __global__ void llmc_moe_combine_##TS##_##WS##_##IS(              \
      const T *expertOut, const W *weights, const I *indices,                  \
      const long long *slots, T *out, long long tokens, long long k,           \
      long long dim, long long capacity) {                                     \
    moeCombine(expertOut, weights, indices, slots, out, tokens, k, dim,        \
               capacity);                                                      \
  }
LLMC_MOE_COMBINE_KERNEL(float, f32, float, f32, int, i32)
LLMC_MOE_COMBINE_KERNEL(float, f32, float, f32, long long, i64)
LLMC_MOE_COMBINE_KERNEL(Bf16, bf16, Bf16, bf16, int, i32)
LLMC_MOE_COMBINE_KERNEL(Bf16, bf16, Bf16, bf16, long long, i64)
LLMC_MOE_COMBINE_KERNEL(Bf16, bf16, float, f32, int, i32)
LLMC_MOE_COMBINE_KERNEL(Bf16, bf16, float, f32, long long, i64)
LLMC_MOE_COMBINE_KERNEL(F16, f16, F16, f16, int, i32)
LLMC_MOE_COMBINE_KERNEL(F16, f16, F16, f16, long long, i64)
LLMC_MOE_COMBINE_KERNEL(F16, f16, float, f32, int, i32)
LLMC_MOE_COMBINE_KERNEL(F16, f16, float, f32, long long, i64)

#endif // LLMC_CUDA_MOE_MOE_CUH
