//===- AttentionCudnn.cpp - attention launches through cuDNN --------------===//
//
// CudaKernels' side of CudnnAttention.h: which Attention / AttentionGrad
// launches cuDNN takes (bf16 or f16, every operand of one type; the shapes CudnnAttention
// covers and an engine supports), the scratch they need, and the launches.
// Everything else, and every problem cuDNN refuses (the refusal is kept in
// attentionPath()'s notes), runs llmc's flash kernels (AttentionLaunch.cpp).
//
// The row statistics: an Attention with a second result (its log-sum-exp,
// f32 [B, Hq, T], natural log: cuDNN's "Stats") writes them; an
// AttentionGrad with a sixth operand (that lse) reads them. Without it the
// forward runs again for them, and the scratch holds the statistics, the
// recomputed result (16-bit like q) and cuDNN's workspace, each 256-byte
// aligned.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/DeviceKernels.h"
#include "runtime/cuda/kernels/attention/FlashLaunch.h"

#include <algorithm>

namespace llmc::rt::cuda {
namespace {

size_t alignUp(size_t bytes) { return (bytes + 255) / 256 * 256; }

/// The first `count` tensors of the 16-bit type `half` (bf16 or f16) and
/// every one 16-byte aligned (cuDNN's kernels refuse less; llmc's scalar
/// kernels take those); the rest (the log-sum-exp) f32.
bool halfAligned(const std::vector<TensorRef> &tensors, size_t count,
                 DType half) {
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].dtype != (i < count ? half : DType::F32) ||
        reinterpret_cast<uintptr_t>(tensors[i].data) % 16 != 0)
      return false;
  return true;
}

/// Whether the op carries the log-sum-exp: Attention's second result,
/// AttentionGrad's sixth operand.
bool carriesLse(KernelKind kind, const std::vector<TensorRef> &inputs,
                const std::vector<TensorRef> &outputs) {
  return kind == KernelKind::Attention ? outputs.size() == 2
                                       : inputs.size() == 6;
}

/// The scratch layout of an AttentionGrad (see the file comment).
struct GradScratch {
  size_t statsBytes, outBytes;
  size_t workspaceOffset() const { return statsBytes + outBytes; }
};

GradScratch gradScratch(const SdpaProblem &p) {
  return {alignUp(static_cast<size_t>(p.batch * p.heads * p.seq) * 4),
          alignUp(static_cast<size_t>(p.batch * p.heads * p.seq * p.headDim) *
                  2)};
}

} // namespace

std::string CudaKernels::attentionPath() const {
  std::string path =
      cudnn_ ? "bf16 and f16 attention through " + cudnn_->describe() +
                   " (LLMC_CUDNN=0 for llmc's flash kernels)"
             : "bf16 and f16 attention on llmc's flash kernels (not cuDNN: " +
                   cudnnUnavailable_ + ")";
  for (const std::string &note : cudnnRefusals_)
    path += "\n  " + note;
  return path;
}

bool CudaKernels::cudnnProblems(KernelKind kind, const KernelAttrs &attrs,
                                const std::vector<TensorRef> &inputs,
                                const std::vector<TensorRef> &outputs,
                                SdpaProblem &forward,
                                SdpaProblem &backward) const {
  if (!cudnn_ || (kind != KernelKind::Attention &&
                  kind != KernelKind::AttentionGrad))
    return false;
  size_t halfInputs = kind == KernelKind::Attention ? 3 : 5;
  DType half = inputs.empty() ? DType::BF16 : inputs[0].dtype;
  if (half != DType::BF16 && half != DType::F16)
    return false;
  if (inputs.size() < 3 || !halfAligned(inputs, halfInputs, half) ||
      inputs[0].rank() != 4)
    return false;
  FlashLaunch flash;
  if (!flashLaunch(inputs, attrs, flash,
                   kind == KernelKind::Attention && !outputs.empty()
                       ? &outputs[0]
                       : nullptr)
           .empty() ||
      !flash.stridesAligned16)
    return false;
  SdpaProblem p;
  p.batch = inputs[0].shape[0];
  p.heads = flash.heads;
  p.kvHeads = flash.kvHeads;
  p.seq = flash.seq;
  p.kvSeq = flash.kvSeq;
  p.headDim = flash.headDim;
  p.causal = flash.causal != 0;
  p.scale = flash.scale;
  p.half = half == DType::F16;
  // The layout's strides (runtime/AttentionLayout.h; bhtd gives the packed
  // [B, H, T, D] ones); dq, dk, dv have those of q, k, v. The offsets of
  // a packed tensor's k and v heads go on the pointers (cudnnPointers).
  auto strides = [](const AttentionStrides &s) {
    return std::array<int64_t, 4>{s.batch, s.head, s.row, 1};
  };
  p.qStride = strides(flash.layout.q);
  p.kStride = strides(flash.layout.k);
  p.vStride = strides(flash.layout.v);
  p.oStride = strides(flash.layout.o);
  if (!CudnnAttention::covers(p).empty())
    return false;
  bool lse = carriesLse(kind, inputs, outputs);
  forward = p;
  // The forward writes statistics when its op has the lse result, or when
  // a backward without the lse operand has to recompute them.
  forward.stats = kind == KernelKind::Attention ? lse : !lse;
  backward = p;
  backward.backward = true;
  return true;
}

Status CudaKernels::prepareCudnn(KernelKind kind, const KernelAttrs &attrs,
                                 const std::vector<TensorRef> &inputs,
                                 const std::vector<TensorRef> &outputs,
                                 bool &taken) {
  taken = false;
  SdpaProblem forward, backward;
  if (!cudnnProblems(kind, attrs, inputs, outputs, forward, backward))
    return Status::ok();
  bool grad = kind == KernelKind::AttentionGrad;
  // A backward with the forward's lse runs no forward.
  bool recompute = grad && !carriesLse(kind, inputs, outputs);
  size_t forwardBytes = 0, backwardBytes = 0;
  for (const SdpaProblem *p : {&forward, &backward}) {
    if ((p == &backward && !grad) || (p == &forward && grad && !recompute))
      continue;
    Status built = cudnn_->prepare(*p, p == &forward ? forwardBytes
                                                     : backwardBytes);
    if (!built) {
      // Not an error: llmc's kernels run it; the note says so.
      std::string note = std::string(grad ? "attention_grad" : "attention") +
                         " " + describeLaunch(kind, inputs, {}) +
                         " on llmc's kernels: " + built.message();
      if (std::find(cudnnRefusals_.begin(), cudnnRefusals_.end(), note) ==
          cudnnRefusals_.end())
        cudnnRefusals_.push_back(note);
      return Status::ok();
    }
  }
  size_t bytes = grad ? backwardBytes : forwardBytes;
  if (recompute)
    bytes = gradScratch(forward).workspaceOffset() +
            std::max(forwardBytes, backwardBytes);
  LLMC_RETURN_IF_ERROR(reserveScratch(std::max<size_t>(bytes, 1)));
  taken = true;
  return Status::ok();
}

Status CudaKernels::launchCudnn(KernelKind kind, const KernelAttrs &attrs,
                                const std::vector<TensorRef> &inputs,
                                const std::vector<TensorRef> &outputs,
                                cudaStream_t stream, bool &taken) {
  if (inputs.empty() ||
      !halfAligned(outputs, kind == KernelKind::Attention ? 1 : outputs.size(),
                   inputs[0].dtype))
    return Status::ok();
  LLMC_RETURN_IF_ERROR(prepareCudnn(kind, attrs, inputs, outputs, taken));
  if (!taken)
    return Status::ok();
  SdpaProblem forward, backward;
  cudnnProblems(kind, attrs, inputs, outputs, forward, backward);
  auto *scratch = static_cast<uint8_t *>(scratch_);
  // q, k, v (and dq, dk, dv) at their layout's offsets: a packed q/k/v
  // tensor (and its one gradient) holds k and v after q's heads.
  FlashLaunch flash;
  (void)flashLaunch(inputs, attrs, flash,
                    kind == KernelKind::Attention ? &outputs[0] : nullptr);
  auto at = [](const void *base, const AttentionStrides &s) {
    return static_cast<void *>(
        static_cast<uint8_t *>(const_cast<void *>(base)) + s.offset * 2);
  };
  void *q = at(inputs[0].data, flash.layout.q);
  void *k = at(inputs[1].data, flash.layout.k);
  void *v = at(inputs[2].data, flash.layout.v);
  if (kind == KernelKind::Attention)
    return cudnn_->forward(
        forward, q, k, v, outputs[0].data,
        forward.stats ? static_cast<float *>(outputs[1].data) : nullptr,
        scratch, stream);
  bool packed = outputs.size() == 1;
  void *dq = at(outputs[0].data, flash.layout.q);
  void *dk = at(outputs[packed ? 0 : 1].data, flash.layout.k);
  void *dv = at(outputs[packed ? 0 : 2].data, flash.layout.v);
  if (carriesLse(kind, inputs, outputs))
    return cudnn_->backward(backward, q, k, v, inputs[3].data, inputs[4].data,
                            static_cast<const float *>(inputs[5].data), dq, dk,
                            dv, scratch, stream);
  GradScratch layout = gradScratch(forward);
  auto *stats = reinterpret_cast<float *>(scratch);
  void *recomputed = scratch + layout.statsBytes;
  void *workspace = scratch + layout.workspaceOffset();
  LLMC_RETURN_IF_ERROR(cudnn_->forward(forward, q, k, v, recomputed, stats,
                                       workspace, stream));
  return cudnn_->backward(backward, q, k, v, inputs[3].data, inputs[4].data,
                          stats, dq, dk, dv, workspace, stream);
}

} // namespace llmc::rt::cuda
