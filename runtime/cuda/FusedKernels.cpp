//===- FusedKernels.cpp - one CUDA kernel per elementwise fused region ----===//

#include "runtime/cuda/FusedKernels.h"

#include "runtime/cuda/ElementwiseKernels.h"

#include <functional>
#include <map>
#include <sstream>

namespace llmc::rt::cuda {

namespace {

Status refuse(const Command &marker, const std::string &why) {
  return Status::error(StatusCode::Unimplemented,
                       "the fused region at " + marker.origin +
                           " runs op by op: " + why);
}

std::vector<int64_t> stridesOf(const Shape &shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// The index into a broadcast's input (shape `in`, input dimension k at
/// result dimension dims[k]) of result element `i` of shape `out`.
std::string broadcastIndex(const Shape &in, const Shape &out,
                           const std::vector<int64_t> &dims) {
  std::vector<int64_t> outStrides = stridesOf(out), inStrides = stridesOf(in);
  std::ostringstream e;
  e << "(0LL";
  for (size_t k = 0; k < in.size(); ++k) {
    if (in[k] == 1)
      continue; // a size-1 dimension expanded: always index 0
    int64_t d = dims[k];
    e << " + ((i / " << outStrides[d] << "LL) % " << out[d] << "LL) * "
      << inStrides[k] << "LL";
  }
  e << ")";
  return e.str();
}

} // namespace

Status generateFusedKernel(const RankProgram &program, size_t markerIndex,
                           FusedSource &out) {
  const Command &marker = program.commands[markerIndex];
  if (marker.attrs.ints.size() != 1 || marker.outputs.empty())
    return refuse(marker, "malformed marker");
  size_t count = static_cast<size_t>(marker.attrs.ints[0]);
  if (count < 1 || markerIndex + count >= program.commands.size())
    return refuse(marker, "the marker counts past the program's end");
  const Shape &shape = program.values[marker.outputs[0]].shape;
  int64_t n = numElements(shape);
  for (int32_t output : marker.outputs)
    if (program.values[output].shape != shape)
      return refuse(marker, "results of different shapes");

  // One kernel reads every input while it writes the outputs, in no order
  // across threads; the buffer plan placed them for the commands one by
  // one, where an input may be dead before a later command writes over its
  // bytes. So an output may share bytes with an input only as the same
  // elements (same offset and shape: thread i reads element i before it
  // writes it); any other overlap would be a race (measured: GPT-2 124M at
  // B=16 had wrong embedding gradients from one).
  for (int32_t output : marker.outputs) {
    const ValueInfo &o = program.values[output];
    for (int32_t input : marker.inputs) {
      const ValueInfo &in = program.values[input];
      bool overlap = o.offset < in.offset + in.bytes() &&
                     in.offset < o.offset + o.bytes();
      bool sameElements = o.offset == in.offset && in.shape == shape &&
                          dtypeSize(in.dtype) == dtypeSize(o.dtype);
      if (overlap && !sameElements)
        return refuse(marker, "an output shares bytes with an input it "
                              "does not replace element for element");
    }
  }

  // Region inputs, by slot: parameter k. Values: slot -> storage variable.
  std::map<int32_t, size_t> inputIndex;
  for (size_t k = 0; k < marker.inputs.size(); ++k)
    inputIndex.emplace(marker.inputs[k], k);
  std::map<int32_t, std::string> values;
  std::ostringstream body, functions;
  bool anyBf16 = false;
  auto valueOf = [&](int32_t slot, std::string &name) -> bool {
    if (auto found = values.find(slot); found != values.end()) {
      name = found->second;
      return true;
    }
    auto input = inputIndex.find(slot);
    if (input == inputIndex.end() || program.values[slot].shape != shape)
      return false;
    name = "in" + std::to_string(input->second) + "[i]";
    return true;
  };

  for (size_t c = markerIndex + 1; c <= markerIndex + count; ++c) {
    const Command &command = program.commands[c];
    if (command.kind != CommandKind::Kernel || command.outputs.size() != 1)
      return refuse(marker, "a command that is not one kernel");
    int32_t result = command.outputs[0];
    const ValueInfo &info = program.values[result];
    if (info.shape != shape)
      return refuse(marker, std::string(kernelName(command.kernel)) +
                                " of another shape than the region's");
    std::string name = "v" + std::to_string(c - markerIndex);
    anyBf16 |= info.dtype == DType::BF16;
    if (command.kernel == KernelKind::Broadcast) {
      int32_t source = command.inputs[0];
      auto input = inputIndex.find(source);
      if (input == inputIndex.end())
        return refuse(marker, "a broadcast of an intermediate value");
      const Shape &in = program.values[source].shape;
      body << "    const " << elementwiseStorageType(info.dtype) << " " << name
           << " = in" << input->second << "["
           << broadcastIndex(in, shape, command.attrs.ints) << "];\n";
      values[result] = name;
      continue;
    }
    if (command.kernel == KernelKind::Iota) {
      // The index along `dim`, as the device unit's iota computes it: exact
      // in every type for positions below 2^8 (bf16) and 2^24 (f32).
      if (command.attrs.ints.size() != 1 || command.attrs.ints[0] < 0 ||
          command.attrs.ints[0] >= static_cast<int64_t>(shape.size()))
        return refuse(marker, "an iota with a malformed dimension");
      size_t dim = static_cast<size_t>(command.attrs.ints[0]);
      std::string position = "((i / " +
                             std::to_string(stridesOf(shape)[dim]) +
                             "LL) % " + std::to_string(shape[dim]) + "LL)";
      std::string value;
      switch (info.dtype) {
      case DType::I32:
        value = "(int)" + position;
        break;
      case DType::I64:
        value = position;
        break;
      case DType::F32:
        value = "(float)" + position;
        break;
      case DType::BF16:
        value = "llmc_float_to_bf16((float)" + position + ")";
        break;
      default:
        return refuse(marker, std::string("an iota of ") +
                                  dtypeName(info.dtype) + " inside the region");
      }
      body << "    const " << elementwiseStorageType(info.dtype) << " " << name
           << " = " << value << ";\n";
      values[result] = name;
      continue;
    }
    if (!isCudaElementwiseKernel(command.kernel))
      return refuse(marker, std::string("a ") + kernelName(command.kernel) +
                                " inside the region");
    ElementwiseSignature sig;
    sig.kind = command.kernel;
    sig.result = info.dtype;
    sig.ints = command.attrs.ints;
    std::vector<std::string> operands;
    for (int32_t slot : command.inputs) {
      std::string operand;
      if (!valueOf(slot, operand))
        return refuse(marker, "an operand that is neither a result of the "
                              "region nor one of its inputs of its shape");
      sig.inputs.push_back(program.values[slot].dtype);
      anyBf16 |= program.values[slot].dtype == DType::BF16;
      operands.push_back(operand);
    }
    std::string function;
    std::string fn = "op" + std::to_string(c - markerIndex);
    if (Status status = elementwiseFunction(sig, fn, function); !status)
      return refuse(marker, status.message());
    functions << function;
    body << "    const " << elementwiseStorageType(info.dtype) << " " << name
         << " = ";
    std::string call = fn + "(";
    for (size_t k = 0; k < operands.size(); ++k)
      call += (k ? ", " : "") + elementwiseLoad(sig, k, operands[k]);
    call += ")";
    body << elementwiseStore(sig, call) << ";\n";
    values[result] = name;
  }
  std::ostringstream stores;
  for (size_t k = 0; k < marker.outputs.size(); ++k) {
    auto found = values.find(marker.outputs[k]);
    if (found == values.end())
      return refuse(marker, "a result the region's commands do not compute");
    stores << "    out" << k << "[i] = " << found->second << ";\n";
  }

  std::ostringstream params;
  for (size_t k = 0; k < marker.inputs.size(); ++k)
    params << "    const "
           << elementwiseStorageType(program.values[marker.inputs[k]].dtype)
           << " *__restrict__ in" << k << ",\n";
  for (size_t k = 0; k < marker.outputs.size(); ++k)
    params << "    " << elementwiseStorageType(program.values[marker.outputs[k]].dtype)
           << " *__restrict__ out" << k << ",\n";
  params << "    long long n";

  std::ostringstream head;
  // No model part in the text: the same region of every layer is one unit.
  head << "// An elementwise region of " << count << " commands, " << n
       << " elements.\n"
       << "// Generated by llmc (runtime/cuda/FusedKernels.cpp).\n\n";
  if (anyBf16)
    head << elementwiseBf16Helpers();
  std::string text = head.str() + functions.str();
  std::string kernel = "(\n" + params.str() +
                       ") {\n"
                       "  long long stride = (long long)gridDim.x * blockDim.x;\n"
                       "  long long first = (long long)blockIdx.x * blockDim.x + "
                       "threadIdx.x;\n"
                       "  for (long long i = first; i < n; i += stride) {\n" +
                       body.str() + stores.str() + "  }\n}\n";
  // The entry is named by the content, so equal regions share one unit.
  std::ostringstream entry;
  entry << "llmc_fused_" << std::hex
        << std::hash<std::string>{}(text + kernel);
  out.entry = entry.str();
  out.source = text + "\nextern \"C\" __global__ void " + out.entry + kernel;
  out.elements = n;
  return Status::ok();
}

} // namespace llmc::rt::cuda
