//===- CudnnAttention.h - flash attention through cuDNN's SDPA ---*- C++ -*-===//
//
// llmc.attention and llmc.attention_grad on cuDNN's fused scaled-dot-product
// attention (the Hopper `wgmma` kernels torch's and JAX's SDPA use), built
// with the cuDNN frontend's graph API. cuDNN is loaded at run time
// (dlopen of libcudnn.so.9): where it is missing, or LLMC_CUDNN=0, the
// runtime says so once and runs llmc's own flash kernels
// (attention/Flash*.cuh), which also cover what cuDNN does not (f32,
// head dimensions other than multiples of 8 up to 128, devices before
// sm_80). docs/cuda.md, "Attention through cuDNN", has the why and the
// numerics.
//
// Each distinct problem (shape, strides, causal, scale, direction) is one
// cuDNN graph, built once at session creation (prepare: heuristics, plan
// compilation, workspace size) and executed on the compute stream after
// that (capturable into the step's CUDA graph).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_CUDA_CUDNNATTENTION_H
#define LLMC_RUNTIME_CUDA_CUDNNATTENTION_H

#include "runtime/Status.h"

#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <unordered_map>

namespace llmc::rt::cuda {

/// One attention problem, bf16 or f16 (`half`): q [B, Hq, T, D], k and v [B, Hkv, S, D],
/// out (and dout, dq) like q, dk and dv like k and v. Strides are in
/// elements in the order (batch, head, row, d), so a [B, T, H, D] view
/// (heads inside rows) is the same problem with other strides. The
/// log-sum-exp statistics are f32 [B, Hq, T] packed.
struct SdpaProblem {
  int64_t batch = 0, heads = 0, kvHeads = 0, seq = 0, kvSeq = 0, headDim = 0;
  bool causal = false;
  float scale = 0.0f;
  std::array<int64_t, 4> qStride{}, kStride{}, vStride{}, oStride{};
  /// The backward (dq, dk, dv) rather than the forward.
  bool backward = false;
  /// A forward that also writes the statistics (the backward reads them).
  bool stats = false;
  /// The operands and results are f16 (cuDNN's HALF), not bf16.
  bool half = false;

  auto key() const {
    return std::make_tuple(batch, heads, kvHeads, seq, kvSeq, headDim, causal,
                           scale, qStride, kStride, vStride, oStride,
                           backward, stats, half);
  }
  /// Packed strides of a [B, H, T, D] tensor.
  static std::array<int64_t, 4> packed(int64_t heads, int64_t rows,
                                       int64_t headDim) {
    return {heads * rows * headDim, rows * headDim, headDim, 1};
  }
};

class CudnnAttention {
public:
  /// Loads cuDNN and creates a handle on the current device. When cuDNN
  /// cannot serve (disabled by LLMC_CUDNN=0, library missing, version
  /// before 9, device before sm_80), `attention` stays null and `why` says
  /// why; only a failure of a loaded cuDNN is an error.
  static Status create(std::unique_ptr<CudnnAttention> &attention,
                       std::string &why);
  ~CudnnAttention();
  CudnnAttention(const CudnnAttention &) = delete;
  CudnnAttention &operator=(const CudnnAttention &) = delete;

  /// "cuDNN 9.14.0" (the loaded library's version).
  std::string describe() const;

  /// Whether the problem is one cuDNN's SDPA takes (bf16 or f16 is the caller's
  /// check): "" when it is, else why not. No device work.
  static std::string covers(const SdpaProblem &problem);

  /// Builds (once) the graph of `problem`; `workspaceBytes` is what its
  /// execution needs. Unimplemented with cuDNN's reason when no engine
  /// supports it.
  Status prepare(const SdpaProblem &problem, size_t &workspaceBytes);

  /// out (and, for a problem with `stats`, the statistics) of a prepared
  /// forward problem, enqueued on `stream`.
  Status forward(const SdpaProblem &problem, const void *q, const void *k,
                 const void *v, void *out, float *stats, void *workspace,
                 cudaStream_t stream);
  /// dq, dk, dv of a prepared backward problem from the forward's operands,
  /// its result and statistics, and dout.
  Status backward(const SdpaProblem &problem, const void *q, const void *k,
                  const void *v, const void *out, const void *dout,
                  const float *stats, void *dq, void *dk, void *dv,
                  void *workspace, cudaStream_t stream);

private:
  struct Graph;
  CudnnAttention() = default;
  Status find(const SdpaProblem &problem, Graph *&graph);
  /// Enqueues the prepared graph of `problem` with `pack` (the tensors'
  /// device pointers by id) on `stream`; `what` names the run in an error.
  Status execute(const SdpaProblem &problem,
                 std::unordered_map<int64_t, void *> &pack, void *workspace,
                 cudaStream_t stream, const char *what);

  void *handle_ = nullptr; ///< cudnnHandle_t
  int64_t version_ = 0;
  std::map<decltype(SdpaProblem().key()), std::unique_ptr<Graph>> graphs_;
};

} // namespace llmc::rt::cuda

#endif // LLMC_RUNTIME_CUDA_CUDNNATTENTION_H
