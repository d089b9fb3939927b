//===- CudnnAttention.cpp - flash attention through cuDNN's SDPA ----------===//
//
// The cuDNN frontend (header-only, tools/dev.sh fetches it) in its
// dynamic-loading mode: every cuDNN call goes through dlsym on the handle
// below, so this library links no cuDNN and loads where there is none.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/libs/CudnnAttention.h"

#if LLMC_HAVE_CUDNN
#include <cudnn_frontend.h>

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

// The frontend's dynamic loading reads cuDNN's symbols from this handle.
namespace cudnn_frontend {
void *cudnn_dlhandle = nullptr;
} // namespace cudnn_frontend

namespace llmc::rt::cuda {
namespace {

namespace fe = cudnn_frontend;

// The tensors' ids in a graph's variant pack.
enum : int64_t { kQ = 1, kK, kV, kOut, kStats, kDout, kDq, kDk, kDv };

Status frontendError(const std::string &what, fe::error_object error) {
  return Status::error(StatusCode::Unimplemented,
                       "cuDNN attention: " + what + ": " + error.get_message());
}

std::vector<int64_t> vec(const std::array<int64_t, 4> &a) {
  return {a[0], a[1], a[2], a[3]};
}

// A graph's variant pack: the tensors' device pointers by id.
using VariantPack = std::unordered_map<int64_t, void *>;

// The operands both directions' packs start with: q, k, v and out (the
// forward's result, the backward's operand).
VariantPack attentionPack(const void *q, const void *k, const void *v,
                          const void *out) {
  return {{kQ, const_cast<void *>(q)},
          {kK, const_cast<void *>(k)},
          {kV, const_cast<void *>(v)},
          {kOut, const_cast<void *>(out)}};
}

bool envOff(const char *name) {
  const char *value = std::getenv(name);
  return value && (std::strcmp(value, "0") == 0 ||
                   std::strcmp(value, "off") == 0);
}

} // namespace

struct CudnnAttention::Graph {
  std::shared_ptr<fe::graph::Graph> graph;
  int64_t workspace = 0;
};

Status CudnnAttention::create(std::unique_ptr<CudnnAttention> &attention,
                              std::string &why) {
  attention.reset();
  if (envOff("LLMC_CUDNN")) {
    why = "LLMC_CUDNN=0";
    return Status::ok();
  }
  int device = 0, major = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor,
                             device) != cudaSuccess) {
    cudaGetLastError();
    why = "no CUDA device";
    return Status::ok();
  }
  if (major < 8) {
    why = "cuDNN's flash attention needs sm_80 or later";
    return Status::ok();
  }
  if (!fe::cudnn_dlhandle) {
    fe::cudnn_dlhandle = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_LOCAL);
    if (!fe::cudnn_dlhandle) {
      const char *error = dlerror();
      why = std::string("libcudnn.so.9 not found (") +
            (error ? error : "dlopen failed") +
            "); install cuDNN 9 or add its folder to LD_LIBRARY_PATH";
      return Status::ok();
    }
  }
  std::unique_ptr<CudnnAttention> created(new CudnnAttention());
  try {
    created->version_ = static_cast<int64_t>(fe::detail::get_backend_version());
  } catch (const std::exception &e) {
    why = std::string("libcudnn.so.9 has no version: ") + e.what();
    return Status::ok();
  }
  if (created->version_ < 90000) {
    why = "cuDNN " + std::to_string(created->version_) +
          " is older than 9.0";
    return Status::ok();
  }
  cudnnHandle_t handle = nullptr;
  if (cudnnStatus_t status = fe::detail::create_handle(&handle);
      status != CUDNN_STATUS_SUCCESS)
    return Status::error(StatusCode::Internal,
                         "cudnnCreate failed with status " +
                             std::to_string(static_cast<int>(status)));
  created->handle_ = handle;
  attention = std::move(created);
  return Status::ok();
}

CudnnAttention::~CudnnAttention() {
  graphs_.clear();
  if (handle_)
    fe::detail::destroy_handle(static_cast<cudnnHandle_t>(handle_));
}

std::string CudnnAttention::describe() const {
  return "cuDNN " + std::to_string(version_ / 10000) + "." +
         std::to_string(version_ / 100 % 100) + "." +
         std::to_string(version_ % 100);
}

std::string CudnnAttention::covers(const SdpaProblem &p) {
  if (p.headDim % 8 != 0 || p.headDim > 128)
    return "cuDNN's attention takes head dimensions that are multiples of 8 "
           "up to 128 here";
  if (p.causal && p.seq != p.kvSeq)
    return "causal attention needs T == S";
  if (p.kvHeads <= 0 || p.heads % p.kvHeads != 0)
    return "query heads must be a multiple of key/value heads";
  for (const auto *stride : {&p.qStride, &p.kStride, &p.vStride, &p.oStride})
    if ((*stride)[3] != 1)
      return "the head dimension must be contiguous";
  return "";
}

Status CudnnAttention::prepare(const SdpaProblem &p, size_t &workspaceBytes) {
  Graph *graph = nullptr;
  LLMC_RETURN_IF_ERROR(find(p, graph));
  workspaceBytes = static_cast<size_t>(graph->workspace);
  return Status::ok();
}

Status CudnnAttention::find(const SdpaProblem &p, Graph *&found) {
  auto it = graphs_.find(p.key());
  if (it != graphs_.end()) {
    found = it->second.get();
    return Status::ok();
  }
  if (std::string why = covers(p); !why.empty())
    return Status::error(StatusCode::Unimplemented, "cuDNN attention: " + why);
  auto handle = static_cast<cudnnHandle_t>(handle_);
  auto graph = std::make_shared<fe::graph::Graph>();
  graph->set_io_data_type(p.half ? fe::DataType_t::HALF
                                 : fe::DataType_t::BFLOAT16)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  auto operand = [&](const char *name, int64_t uid, int64_t heads,
                     int64_t rows, const std::array<int64_t, 4> &stride) {
    return graph->tensor(fe::graph::Tensor_attributes()
                             .set_name(name)
                             .set_uid(uid)
                             .set_dim({p.batch, heads, rows, p.headDim})
                             .set_stride(vec(stride)));
  };
  const std::vector<int64_t> statsDim = {p.batch, p.heads, p.seq, 1};
  const std::vector<int64_t> statsStride = {p.heads * p.seq, p.seq, 1, 1};
  auto q = operand("q", kQ, p.heads, p.seq, p.qStride);
  auto k = operand("k", kK, p.kvHeads, p.kvSeq, p.kStride);
  auto v = operand("v", kV, p.kvHeads, p.kvSeq, p.vStride);
  if (!p.backward) {
    auto options = fe::graph::SDPA_attributes()
                       .set_name("attention")
                       .set_generate_stats(p.stats)
                       .set_attn_scale(p.scale);
    if (p.causal)
      options.set_causal_mask(true);
    auto [out, stats] = graph->sdpa(q, k, v, options);
    out->set_output(true).set_uid(kOut).set_dim(
        {p.batch, p.heads, p.seq, p.headDim});
    out->set_stride(vec(p.oStride));
    if (p.stats)
      stats->set_output(true)
          .set_uid(kStats)
          .set_data_type(fe::DataType_t::FLOAT)
          .set_dim(statsDim)
          .set_stride(statsStride);
  } else {
    auto out = operand("out", kOut, p.heads, p.seq, p.oStride);
    auto dout = operand("dout", kDout, p.heads, p.seq, p.oStride);
    auto stats = graph->tensor(fe::graph::Tensor_attributes()
                                   .set_name("stats")
                                   .set_uid(kStats)
                                   .set_data_type(fe::DataType_t::FLOAT)
                                   .set_dim(statsDim)
                                   .set_stride(statsStride));
    auto options = fe::graph::SDPA_backward_attributes()
                       .set_name("attention_grad")
                       .set_attn_scale(p.scale)
                       .set_deterministic_algorithm(
                           !envOff("LLMC_CUDNN_DETERMINISTIC"));
    if (p.causal)
      options.set_causal_mask(true);
    auto [dq, dk, dv] = graph->sdpa_backward(q, k, v, out, dout, stats, options);
    dq->set_output(true).set_uid(kDq).set_dim(
        {p.batch, p.heads, p.seq, p.headDim});
    dq->set_stride(vec(p.qStride));
    dk->set_output(true).set_uid(kDk).set_dim(
        {p.batch, p.kvHeads, p.kvSeq, p.headDim});
    dk->set_stride(vec(p.kStride));
    dv->set_output(true).set_uid(kDv).set_dim(
        {p.batch, p.kvHeads, p.kvSeq, p.headDim});
    dv->set_stride(vec(p.vStride));
  }
  const char *what = p.backward ? "the backward graph" : "the forward graph";
  try {
    if (auto e = graph->validate(); e.is_bad())
      return frontendError(std::string(what) + " is not valid", e);
    if (auto e = graph->build_operation_graph(handle); e.is_bad())
      return frontendError(std::string("building ") + what, e);
    if (auto e = graph->create_execution_plans({fe::HeurMode_t::A});
        e.is_bad())
      return frontendError(std::string("no plan for ") + what, e);
    if (auto e = graph->check_support(handle); e.is_bad())
      return frontendError(std::string("no engine supports ") + what, e);
    if (auto e = graph->build_plans(handle); e.is_bad())
      return frontendError(std::string("compiling ") + what, e);
  } catch (const std::exception &e) {
    return Status::error(StatusCode::Internal,
                         std::string("cuDNN attention: ") + what + ": " +
                             e.what());
  }
  auto entry = std::make_unique<Graph>();
  entry->graph = graph;
  if (auto e = graph->get_workspace_size(entry->workspace); e.is_bad())
    return frontendError("workspace size", e);
  found = entry.get();
  graphs_[p.key()] = std::move(entry);
  return Status::ok();
}

Status CudnnAttention::execute(const SdpaProblem &p, VariantPack &pack,
                               void *workspace, cudaStream_t stream,
                               const char *what) {
  Graph *graph = nullptr;
  LLMC_RETURN_IF_ERROR(find(p, graph));
  auto handle = static_cast<cudnnHandle_t>(handle_);
  fe::detail::set_stream(handle, stream);
  if (auto e = graph->graph->execute(handle, pack, workspace); e.is_bad())
    return frontendError(what, e);
  return Status::ok();
}

Status CudnnAttention::forward(const SdpaProblem &p, const void *q,
                               const void *k, const void *v, void *out,
                               float *stats, void *workspace,
                               cudaStream_t stream) {
  VariantPack pack = attentionPack(q, k, v, out);
  if (p.stats)
    pack[kStats] = stats;
  return execute(p, pack, workspace, stream, "running the forward");
}

Status CudnnAttention::backward(const SdpaProblem &p, const void *q,
                                const void *k, const void *v, const void *out,
                                const void *dout, const float *stats, void *dq,
                                void *dk, void *dv, void *workspace,
                                cudaStream_t stream) {
  VariantPack pack = attentionPack(q, k, v, out);
  pack[kDout] = const_cast<void *>(dout);
  pack[kStats] = const_cast<float *>(stats);
  pack[kDq] = dq;
  pack[kDk] = dk;
  pack[kDv] = dv;
  return execute(p, pack, workspace, stream, "running the backward");
}

} // namespace llmc::rt::cuda

#else // !LLMC_HAVE_CUDNN: built without the frontend's headers.

namespace llmc::rt::cuda {

namespace {
Status notBuilt() {
  return Status::error(StatusCode::Unimplemented,
                       "llmc was built without the cuDNN frontend headers");
}
} // namespace

struct CudnnAttention::Graph {};

Status CudnnAttention::create(std::unique_ptr<CudnnAttention> &attention,
                              std::string &why) {
  attention.reset();
  why = "llmc was built without the cuDNN frontend headers (tools/dev.sh "
        "installs them)";
  return Status::ok();
}
CudnnAttention::~CudnnAttention() = default;
std::string CudnnAttention::describe() const { return "no cuDNN"; }
std::string CudnnAttention::covers(const SdpaProblem &) {
  return "built without cuDNN";
}
Status CudnnAttention::prepare(const SdpaProblem &, size_t &) {
  return notBuilt();
}
Status CudnnAttention::find(const SdpaProblem &, Graph *&) {
  return notBuilt();
}
Status CudnnAttention::forward(const SdpaProblem &, const void *, const void *,
                               const void *, void *, float *, void *,
                               cudaStream_t) {
  return notBuilt();
}
Status CudnnAttention::backward(const SdpaProblem &, const void *, const void *,
                                const void *, const void *, const void *,
                                const float *, void *, void *, void *, void *,
                                cudaStream_t) {
  return notBuilt();
}

} // namespace llmc::rt::cuda

#endif // LLMC_HAVE_CUDNN
