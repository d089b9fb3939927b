//===- VirtualCollectives.cuh - reductions between virtual ranks ----------===//
//
// The reductions of all-reduce and reduce-scatter between the arenas of
// virtual ranks on one GPU (docs/distributed.md, "Virtual ranks on one
// GPU"); the copies of all-gather, all-to-all and send/recv are
// cudaMemcpyAsync. The order and rounding are the CPU collectives'
// (runtime/cpu/CollectiveSupport.cpp, reduceElements), so that a collective
// here is bit for bit the CPU's on the same inputs: strictly in group order,
// ((x0 + x1) + x2) + ..., f32 and f64 in their own type, bf16 and f16 loaded
// to f32, combined in f32 and rounded to nearest even once on store, integer
// sums wrapping (unsigned arithmetic), max propagating NaN. Additions only:
// nothing for the compiler to contract into an FMA.
//
// One thread per element g of the input (grid-stride): it reads element g
// of every member's input, then writes the result to every output (all-
// reduce: element g of each) or to one (reduce-scatter: element g - o*chunk
// of output o = g / chunk). So an output identical to its member's input
// (in place), or a reduce-scatter output at the member's own chunk of its
// input (NCCL's in-place rule), is written only by the thread that read
// that address; any other overlap is staged by the plan
// (VirtualCollectivePlan.h).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_CUDA_COLLECTIVE_VIRTUALCOLLECTIVES_CUH
#define LLMC_CUDA_COLLECTIVE_VIRTUALCOLLECTIVES_CUH

#include "common/Prelude.cuh"

// The most members of one collective (VirtualReduceArgs is a kernel
// parameter: 2 * 64 pointers, 1 KiB of the 4 KiB allowed).
#define LLMC_VIRTUAL_MAX_MEMBERS 64

// The layout of the host's VirtualReduceArgs (VirtualCollectivePlan.h).
struct VirtualReduceArgs {
  const void *inputs[LLMC_VIRTUAL_MAX_MEMBERS];
  void *outputs[LLMC_VIRTUAL_MAX_MEMBERS];
  int members;
  int outputCount;
  long long count; // elements of each input
  long long chunk; // 0: every output gets all `count`; else output o chunk o
};

// How one element type loads, combines and stores.
template <typename T> struct VirtualElement {
  typedef T Acc;
  static __device__ __forceinline__ Acc load(T value) { return value; }
  static __device__ __forceinline__ T store(Acc value) { return value; }
  static __device__ __forceinline__ Acc sum(Acc a, Acc b) { return a + b; }
  static __device__ __forceinline__ Acc max(Acc a, Acc b) {
    return (a > b || a != a) ? a : b; // a NaN on either side wins
  }
};
template <> struct VirtualElement<Bf16> {
  typedef float Acc;
  static __device__ __forceinline__ Acc load(Bf16 value) {
    return loadValue(value);
  }
  static __device__ __forceinline__ Bf16 store(Acc value) {
    return storeFloat<Bf16>(value);
  }
  static __device__ __forceinline__ Acc sum(Acc a, Acc b) { return a + b; }
  static __device__ __forceinline__ Acc max(Acc a, Acc b) {
    return (a > b || a != a) ? a : b;
  }
};
template <> struct VirtualElement<F16> {
  typedef float Acc;
  static __device__ __forceinline__ Acc load(F16 value) {
    return loadValue(value);
  }
  static __device__ __forceinline__ F16 store(Acc value) {
    return storeFloat<F16>(value);
  }
  static __device__ __forceinline__ Acc sum(Acc a, Acc b) { return a + b; }
  static __device__ __forceinline__ Acc max(Acc a, Acc b) {
    return (a > b || a != a) ? a : b;
  }
};
// Integers: two's-complement wrap-around through the unsigned type.
template <typename T, typename U> struct VirtualInteger {
  typedef T Acc;
  static __device__ __forceinline__ Acc load(T value) { return value; }
  static __device__ __forceinline__ T store(Acc value) { return value; }
  static __device__ __forceinline__ Acc sum(Acc a, Acc b) {
    return (T)((U)a + (U)b);
  }
  static __device__ __forceinline__ Acc max(Acc a, Acc b) {
    return a > b ? a : b;
  }
};
template <> struct VirtualElement<int> : VirtualInteger<int, unsigned int> {};
template <>
struct VirtualElement<long long>
    : VirtualInteger<long long, unsigned long long> {};

template <typename T, bool Max>
__device__ __forceinline__ void virtualReduce(const VirtualReduceArgs &args) {
  typedef VirtualElement<T> E;
  for (long long g = globalThread(); g < args.count; g += gridThreads()) {
    typename E::Acc acc = E::load(((const T *)args.inputs[0])[g]);
    for (int j = 1; j < args.members; ++j) {
      typename E::Acc next = E::load(((const T *)args.inputs[j])[g]);
      acc = Max ? E::max(acc, next) : E::sum(acc, next);
    }
    T result = E::store(acc);
    if (args.chunk == 0) {
      for (int o = 0; o < args.outputCount; ++o)
        ((T *)args.outputs[o])[g] = result;
    } else {
      long long o = g / args.chunk;
      ((T *)args.outputs[o])[g - o * args.chunk] = result;
    }
  }
}

#define LLMC_VIRTUAL_REDUCE(NAME, T)                                           \
  extern "C" __global__ void llmc_virtual_reduce_sum_##NAME(                   \
      VirtualReduceArgs args) {                                                \
    virtualReduce<T, false>(args);                                             \
  }                                                                            \
  extern "C" __global__ void llmc_virtual_reduce_max_##NAME(                   \
      VirtualReduceArgs args) {                                                \
    virtualReduce<T, true>(args);                                              \
  }

LLMC_VIRTUAL_REDUCE(f32, float)
LLMC_VIRTUAL_REDUCE(f64, double)
LLMC_VIRTUAL_REDUCE(bf16, Bf16)
LLMC_VIRTUAL_REDUCE(f16, F16)
LLMC_VIRTUAL_REDUCE(i32, int)
LLMC_VIRTUAL_REDUCE(i64, long long)

#endif // LLMC_CUDA_COLLECTIVE_VIRTUALCOLLECTIVES_CUH
