//===- FusedKernels.cpp - one CUDA kernel per elementwise fused region ----===//

#include "runtime/cuda/FusedKernels.h"

#include "runtime/cuda/ElementwiseKernels.h"

#include <algorithm>
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
/// `suffix` is the literal suffix of the kernel's index type ("u" for
/// 32-bit indices, "LL" for 64-bit).
std::string broadcastIndex(const Shape &in, const Shape &out,
                           const std::vector<int64_t> &dims,
                           const char *suffix) {
  std::vector<int64_t> outStrides = stridesOf(out), inStrides = stridesOf(in);
  std::ostringstream e;
  e << "(0" << suffix;
  for (size_t k = 0; k < in.size(); ++k) {
    if (in[k] == 1)
      continue; // a size-1 dimension expanded: always index 0
    int64_t d = dims[k];
    e << " + ((i / " << outStrides[d] << suffix << ") % " << out[d] << suffix
      << ") * " << inStrides[k] << suffix;
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
  // 32-bit indices when every index fits: the broadcast and iota index
  // divisions (by constants) are then 32-bit multiply-shifts.
  const bool small = n < (int64_t(1) << 31);
  const char *suffix = small ? "u" : "LL";
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
           << broadcastIndex(in, shape, command.attrs.ints, suffix) << "];\n";
      values[result] = name;
      continue;
    }
    if (command.kernel == KernelKind::Iota) {
      // The index along `dim`, as the CPU's iota: exact in i32, i64 and f32
      // (indices below 2^24); bf16 would need the CPU's rounding.
      if (command.attrs.ints.size() != 1 || command.attrs.ints[0] < 0 ||
          command.attrs.ints[0] >= static_cast<int64_t>(shape.size()))
        return refuse(marker, "an iota without a valid dim");
      int64_t dim = command.attrs.ints[0];
      if ((info.dtype != DType::I32 && info.dtype != DType::I64 &&
           info.dtype != DType::F32) ||
          (info.dtype == DType::F32 && shape[dim] > (int64_t(1) << 24)))
        return refuse(marker, "an iota of a type the generator does not "
                              "round like the CPU");
      body << "    const " << elementwiseStorageType(info.dtype) << " " << name
           << " = (" << elementwiseStorageType(info.dtype) << ")((i / "
           << stridesOf(shape)[dim] << suffix << ") % " << shape[dim] << suffix
           << ");\n";
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

  // The packed loop: each thread takes `width` consecutive elements, the
  // inputs of the region's shape and the results moved 16 bytes (or less
  // for narrower types) at a time, when every such pointer is 16-byte
  // aligned; the body is the same per element (the same bits). The scalar
  // loop takes the rest (or everything when a pointer is not aligned).
  std::vector<size_t> packedInputs;
  size_t widest = 1;
  for (size_t k = 0; k < marker.inputs.size(); ++k) {
    const ValueInfo &v = program.values[marker.inputs[k]];
    if (v.shape != shape)
      continue;
    packedInputs.push_back(k);
    widest = std::max(widest, dtypeSize(v.dtype));
  }
  for (int32_t output : marker.outputs)
    widest = std::max(widest, dtypeSize(program.values[output].dtype));
  const size_t width = 16 / widest;
  auto replaceAll = [](std::string text, const std::string &from,
                       const std::string &to) {
    for (size_t at = text.find(from); at != std::string::npos;
         at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
    return text;
  };
  std::string packedBody = body.str();
  std::ostringstream loads, packedStores, writes, alignment;
  alignment << "((0ull";
  for (size_t k : packedInputs) {
    std::string type = elementwiseStorageType(program.values[marker.inputs[k]].dtype);
    std::string pack = "Pack<" + type + ", " + std::to_string(width) + ">";
    packedBody = replaceAll(packedBody, "in" + std::to_string(k) + "[i]",
                            "p" + std::to_string(k) + ".v[k]");
    loads << "      const " << pack << " p" << k << " = ((const " << pack
          << " *)in" << k << ")[g];\n";
    alignment << " | (unsigned long long)in" << k;
  }
  for (size_t k = 0; k < marker.outputs.size(); ++k) {
    std::string type = elementwiseStorageType(program.values[marker.outputs[k]].dtype);
    std::string pack = "Pack<" + type + ", " + std::to_string(width) + ">";
    loads << "      " << pack << " q" << k << ";\n";
    packedStores << "        q" << k << ".v[k] = "
                 << values.at(marker.outputs[k]) << ";\n";
    writes << "      ((" << pack << " *)out" << k << ")[g] = q" << k << ";\n";
    alignment << " | (unsigned long long)out" << k;
  }
  alignment << ") & 15ull) == 0ull";

  std::ostringstream head;
  // No model part in the text: the same region of every layer is one unit.
  head << "// An elementwise region of " << count << " commands, " << n
       << " elements.\n"
       << "// Generated by llmc (runtime/cuda/FusedKernels.cpp).\n\n"
       << "template <typename T, int W> struct __align__(sizeof(T) * W) Pack {\n"
       << "  T v[W];\n"
       << "};\n\n";
  if (anyBf16)
    head << elementwiseBf16Helpers();
  std::string text = head.str() + functions.str();
  std::string kernel =
      "(\n" + params.str() + ") {\n" + "  typedef " +
      std::string(small ? "unsigned int" : "long long") + " Index;\n" +
      "  const Index count = (Index)n;\n"
      "  const Index stride = (Index)gridDim.x * blockDim.x;\n"
      "  const Index first = (Index)blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  Index rest = 0; // where the scalar loop starts\n"
      "  if (" + alignment.str() + ") {\n" +
      "    const Index groups = count / " + std::to_string(width) + ";\n" +
      "    for (Index g = first; g < groups; g += stride) {\n" + loads.str() +
      "#pragma unroll\n"
      "      for (int k = 0; k < " + std::to_string(width) + "; ++k) {\n" +
      "        const Index i = g * " + std::to_string(width) + " + k;\n" +
      replaceAll(packedBody, "\n    ", "\n        ").insert(0, "    ") +
      packedStores.str() + "      }\n" + writes.str() + "    }\n" +
      "    rest = groups * " + std::to_string(width) + ";\n" + "  }\n" +
      "  for (Index i = rest + first; i < count; i += stride) {\n" +
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
