//===- DeviceKernelsCudnn.cpp - attention launches through cuDNN ----------===//
//
// CudaKernels' side of CudnnAttention.h: which Attention / AttentionGrad
// launches cuDNN takes (bf16, every operand; the shapes CudnnAttention
// covers and an engine supports), the scratch they need, and the launches.
// Everything else, and every problem cuDNN refuses (the refusal is kept in
// attentionPath()'s notes), runs llmc's flash kernels (DeviceKernels.cpp).
//
// Scratch of an AttentionGrad: the forward is run again for the row
// statistics (llmc.attention has no log-sum-exp result yet), so the scratch
// holds the statistics (f32 [B, Hq, T]), the recomputed result (bf16 like
// q) and cuDNN's workspace, each 256-byte aligned.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/DeviceKernels.h"

#include <algorithm>

namespace llmc::rt::cuda {
namespace {

size_t alignUp(size_t bytes) { return (bytes + 255) / 256 * 256; }

/// bf16 throughout, and every operand 16-byte aligned (cuDNN's kernels
/// refuse less; llmc's scalar kernels take those).
bool allBf16Aligned(const std::vector<TensorRef> &tensors) {
  for (const TensorRef &t : tensors)
    if (t.dtype != DType::BF16 ||
        reinterpret_cast<uintptr_t>(t.data) % 16 != 0)
      return false;
  return true;
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
      cudnn_ ? "bf16 attention through " + cudnn_->describe() +
                   " (LLMC_CUDNN=0 for llmc's flash kernels)"
             : "bf16 attention on llmc's flash kernels (not cuDNN: " +
                   cudnnUnavailable_ + ")";
  for (const std::string &note : cudnnRefusals_)
    path += "\n  " + note;
  return path;
}

bool CudaKernels::cudnnProblems(KernelKind kind, const KernelAttrs &attrs,
                                const std::vector<TensorRef> &inputs,
                                SdpaProblem &forward,
                                SdpaProblem &backward) const {
  if (!cudnn_ || (kind != KernelKind::Attention &&
                  kind != KernelKind::AttentionGrad))
    return false;
  if (inputs.size() < 3 || !allBf16Aligned(inputs) || inputs[0].rank() != 4)
    return false;
  FlashLaunch flash;
  if (!flashLaunch(inputs, attrs, flash).empty())
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
  p.qStride = p.oStride = SdpaProblem::packed(p.heads, p.seq, p.headDim);
  p.kStride = p.vStride = SdpaProblem::packed(p.kvHeads, p.kvSeq, p.headDim);
  if (!CudnnAttention::covers(p).empty())
    return false;
  forward = p;
  forward.stats = kind == KernelKind::AttentionGrad;
  backward = p;
  backward.backward = true;
  return true;
}

Status CudaKernels::prepareCudnn(KernelKind kind, const KernelAttrs &attrs,
                                 const std::vector<TensorRef> &inputs,
                                 bool &taken) {
  taken = false;
  SdpaProblem forward, backward;
  if (!cudnnProblems(kind, attrs, inputs, forward, backward))
    return Status::ok();
  bool grad = kind == KernelKind::AttentionGrad;
  size_t forwardBytes = 0, backwardBytes = 0;
  for (const SdpaProblem *p : {&forward, &backward}) {
    if (p == &backward && !grad)
      break;
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
  size_t bytes = forwardBytes;
  if (grad)
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
  LLMC_RETURN_IF_ERROR(prepareCudnn(kind, attrs, inputs, taken));
  if (!taken)
    return Status::ok();
  if (!allBf16Aligned(outputs)) {
    taken = false;
    return Status::ok();
  }
  SdpaProblem forward, backward;
  cudnnProblems(kind, attrs, inputs, forward, backward);
  auto *scratch = static_cast<uint8_t *>(scratch_);
  if (kind == KernelKind::Attention)
    return cudnn_->forward(forward, inputs[0].data, inputs[1].data,
                           inputs[2].data, outputs[0].data, nullptr, scratch,
                           stream);
  GradScratch layout = gradScratch(forward);
  auto *stats = reinterpret_cast<float *>(scratch);
  void *recomputed = scratch + layout.statsBytes;
  void *workspace = scratch + layout.workspaceOffset();
  LLMC_RETURN_IF_ERROR(cudnn_->forward(forward, inputs[0].data,
                                       inputs[1].data, inputs[2].data,
                                       recomputed, stats, workspace, stream));
  return cudnn_->backward(backward, inputs[0].data, inputs[1].data,
                          inputs[2].data, inputs[3].data, inputs[4].data,
                          stats, outputs[0].data, outputs[1].data,
                          outputs[2].data, workspace, stream);
}

} // namespace llmc::rt::cuda
