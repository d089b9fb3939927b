//===- FusedKernels.cpp - one CUDA kernel per elementwise fused region ----===//

#include "codegen/cuda/elementwise/FusedKernels.h"

#include "codegen/cuda/elementwise/ElementwiseKernels.h"

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

/// The outputs of a region against its inputs (see below): Unimplemented
/// naming `owner` when an output shares bytes with an input it does not
/// replace element for element.
Status checkOverlaps(const RankProgram &program, const Command &owner,
                     const std::vector<int32_t> &inputs,
                     const std::vector<int32_t> &outputs, const Shape &shape) {
  // One kernel reads every input while it writes the outputs, in no order
  // across threads; the buffer plan placed them for the commands one by
  // one, where an input may be dead before a later command writes over its
  // bytes. So an output may share bytes with an input only as the same
  // elements (same offset and shape: thread i reads element i before it
  // writes it); any other overlap would be a race (measured: GPT-2 124M at
  // B=16 had wrong embedding gradients from one).
  for (int32_t output : outputs) {
    const ValueInfo &o = program.values[output];
    for (int32_t input : inputs) {
      const ValueInfo &in = program.values[input];
      bool overlap = o.offset < in.offset + in.bytes() &&
                     in.offset < o.offset + o.bytes();
      bool sameElements = o.offset == in.offset && in.shape == shape &&
                          dtypeSize(in.dtype) == dtypeSize(o.dtype);
      if (overlap && !sameElements)
        return refuse(owner, "an output shares bytes with an input it "
                             "does not replace element for element");
    }
  }
  return Status::ok();
}

/// The region's results, operand types and packing width, once its body is
/// written (`values`: slot -> the variable holding it).
Status finishRegionCode(const RankProgram &program, const Command &owner,
                        const std::vector<int32_t> &inputs,
                        const std::vector<int32_t> &outputs,
                        const std::map<int32_t, std::string> &values,
                        const Shape &shape, size_t count, RegionCode &out) {
  for (int32_t output : outputs) {
    auto found = values.find(output);
    if (found == values.end())
      return refuse(owner, "a result the region's commands do not compute");
    out.results.push_back(found->second);
    out.outputTypes.push_back(program.values[output].dtype);
  }
  for (int32_t input : inputs) {
    out.inputTypes.push_back(program.values[input].dtype);
    out.fullInputs.push_back(program.values[input].shape == shape);
  }
  out.elements = numElements(shape);
  out.commands = count;
  // The packed loop moves 16 bytes of the widest operand it packs at a time.
  size_t widest = 1;
  for (size_t k = 0; k < inputs.size(); ++k)
    if (out.fullInputs[k])
      widest = std::max(widest, dtypeSize(out.inputTypes[k]));
  for (DType type : out.outputTypes)
    widest = std::max(widest, dtypeSize(type));
  out.width = 16 / widest;
  return Status::ok();
}

} // namespace

Status buildRegionCode(const RankProgram &program, const Command &owner,
                       const std::vector<int32_t> &inputs,
                       const std::vector<int32_t> &outputs, size_t firstCommand,
                       size_t count, IndexMode mode, RegionCode &out) {
  out = RegionCode();
  if (outputs.empty() || count < 1 ||
      firstCommand + count > program.commands.size())
    return refuse(owner, "malformed region");
  const Shape &shape = program.values[outputs[0]].shape;
  int64_t n = numElements(shape);
  for (int32_t output : outputs)
    if (program.values[output].shape != shape)
      return refuse(owner, "results of different shapes");

  if (Status status = checkOverlaps(program, owner, inputs, outputs, shape);
      !status)
    return status;

  // Region inputs, by slot: parameter k. Values: slot -> storage variable.
  std::map<int32_t, size_t> inputIndex;
  for (size_t k = 0; k < inputs.size(); ++k)
    inputIndex.emplace(inputs[k], k);
  // 32-bit indices when every index fits: the broadcast and iota index
  // divisions (by constants) are then 32-bit multiply-shifts. A chunk of a
  // multi-tensor launch always fits.
  out.small = mode == IndexMode::Chunk || n < (int64_t(1) << 31);
  const char *suffix = out.small ? "u" : "LL";
  std::map<int32_t, std::string> values;
  std::ostringstream body, functions;
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

  for (size_t c = firstCommand; c < firstCommand + count; ++c) {
    const Command &command = program.commands[c];
    if (command.kind != CommandKind::Kernel || command.outputs.size() != 1)
      return refuse(owner, "a command that is not one kernel");
    int32_t result = command.outputs[0];
    const ValueInfo &info = program.values[result];
    if (info.shape != shape)
      return refuse(owner, std::string(kernelName(command.kernel)) +
                               " of another shape than the region's");
    std::string name = "v" + std::to_string(c - firstCommand + 1);
    out.anyHalf |= info.dtype == DType::BF16 || info.dtype == DType::F16;
    if (command.kernel == KernelKind::Broadcast) {
      int32_t source = command.inputs[0];
      auto input = inputIndex.find(source);
      if (input == inputIndex.end())
        return refuse(owner, "a broadcast of an intermediate value");
      const Shape &in = program.values[source].shape;
      // Only a broadcast of one element reads the same place for every i.
      out.usesIndex |= numElements(in) != 1;
      if (out.usesIndex && mode == IndexMode::Chunk)
        return refuse(owner, "a broadcast of several elements (the index "
                             "of a chunk is not the tensor's)");
      body << "    const " << elementwiseStorageType(info.dtype) << " " << name
           << " = in" << input->second << "["
           << broadcastIndex(in, shape, command.attrs.ints, suffix) << "];\n";
      values[result] = name;
      continue;
    }
    if (command.kernel == KernelKind::Iota) {
      out.usesIndex = true;
      if (mode == IndexMode::Chunk)
        return refuse(owner, "an iota (the index of a chunk is not the "
                             "tensor's)");
      // The index along `dim`, as the CPU's iota: exact in i32, i64 and f32
      // (indices below 2^24); bf16 would need the CPU's rounding.
      if (command.attrs.ints.size() != 1 || command.attrs.ints[0] < 0 ||
          command.attrs.ints[0] >= static_cast<int64_t>(shape.size()))
        return refuse(owner, "an iota without a valid dim");
      int64_t dim = command.attrs.ints[0];
      if ((info.dtype != DType::I32 && info.dtype != DType::I64 &&
           info.dtype != DType::F32) ||
          (info.dtype == DType::F32 && shape[dim] > (int64_t(1) << 24)))
        return refuse(owner, "an iota of a type the generator does not "
                             "round like the CPU");
      body << "    const " << elementwiseStorageType(info.dtype) << " " << name
           << " = (" << elementwiseStorageType(info.dtype) << ")((i / "
           << stridesOf(shape)[dim] << suffix << ") % " << shape[dim] << suffix
           << ");\n";
      values[result] = name;
      continue;
    }
    if (!isCudaElementwiseKernel(command.kernel))
      return refuse(owner, std::string("a ") + kernelName(command.kernel) +
                               " inside the region");
    ElementwiseSignature sig;
    sig.kind = command.kernel;
    sig.result = info.dtype;
    sig.ints = command.attrs.ints;
    std::vector<std::string> operands;
    for (int32_t slot : command.inputs) {
      std::string operand;
      if (!valueOf(slot, operand))
        return refuse(owner, "an operand that is neither a result of the "
                             "region nor one of its inputs of its shape");
      sig.inputs.push_back(program.values[slot].dtype);
      out.anyHalf |= program.values[slot].dtype == DType::BF16 ||
                     program.values[slot].dtype == DType::F16;
      operands.push_back(operand);
    }
    std::string function;
    std::string fn = "op" + std::to_string(c - firstCommand + 1);
    if (Status status = elementwiseFunction(sig, fn, function); !status)
      return refuse(owner, status.message());
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
  out.functions = functions.str();
  out.body = body.str();
  return finishRegionCode(program, owner, inputs, outputs, values, shape,
                          count, out);
}

std::string regionPrelude(const RegionCode &code) {
  std::string text = "template <typename T, int W> struct __align__(sizeof(T) "
                     "* W) Pack {\n"
                     "  T v[W];\n"
                     "};\n\n";
  if (code.anyHalf)
    text += elementwiseHalfHelpers();
  return text + code.functions;
}

std::string regionLoop(const RegionCode &code) {
  // The packed loop: each thread takes `width` consecutive elements, the
  // inputs of the region's shape and the results moved 16 bytes (or less
  // for narrower types) at a time, when every such pointer is 16-byte
  // aligned; the body is the same per element (the same bits). The scalar
  // loop takes the rest (or everything when a pointer is not aligned).
  auto replaceAll = [](std::string text, const std::string &from,
                       const std::string &to) {
    for (size_t at = text.find(from); at != std::string::npos;
         at = text.find(from, at + to.size()))
      text.replace(at, from.size(), to);
    return text;
  };
  const std::string width = std::to_string(code.width);
  std::string packedBody = code.body;
  std::ostringstream loads, packedStores, writes, alignment, stores;
  alignment << "((0ull";
  for (size_t k = 0; k < code.inputTypes.size(); ++k) {
    if (!code.fullInputs[k])
      continue;
    std::string type = elementwiseStorageType(code.inputTypes[k]);
    std::string pack = "Pack<" + type + ", " + width + ">";
    packedBody = replaceAll(packedBody, "in" + std::to_string(k) + "[i]",
                            "p" + std::to_string(k) + ".v[k]");
    loads << "      const " << pack << " p" << k << " = ((const " << pack
          << " *)in" << k << ")[g];\n";
    alignment << " | (unsigned long long)in" << k;
  }
  for (size_t k = 0; k < code.outputTypes.size(); ++k) {
    std::string type = elementwiseStorageType(code.outputTypes[k]);
    std::string pack = "Pack<" + type + ", " + width + ">";
    loads << "      " << pack << " q" << k << ";\n";
    packedStores << "        q" << k << ".v[k] = " << code.results[k] << ";\n";
    writes << "      ((" << pack << " *)out" << k << ")[g] = q" << k << ";\n";
    alignment << " | (unsigned long long)out" << k;
    stores << "    out" << k << "[i] = " << code.results[k] << ";\n";
  }
  alignment << ") & 15ull) == 0ull";
  return "  Index rest = 0; // where the scalar loop starts\n"
         "  if (" + alignment.str() + ") {\n" +
         "    const Index groups = count / " + width + ";\n" +
         "    for (Index g = first; g < groups; g += stride) {\n" + loads.str() +
         "#pragma unroll\n"
         "      for (int k = 0; k < " + width + "; ++k) {\n" +
         "        const Index i = g * " + width + " + k;\n" +
         replaceAll(packedBody, "\n    ", "\n        ").insert(0, "    ") +
         packedStores.str() + "      }\n" + writes.str() + "    }\n" +
         "    rest = groups * " + width + ";\n" + "  }\n" +
         "  for (Index i = rest + first; i < count; i += stride) {\n" +
         code.body + stores.str() + "  }\n";
}

Status generateFusedKernel(const RankProgram &program, size_t markerIndex,
                           FusedSource &out) {
  const Command &marker = program.commands[markerIndex];
  if (marker.attrs.ints.size() != 1 || marker.outputs.empty())
    return refuse(marker, "malformed marker");
  size_t count = static_cast<size_t>(marker.attrs.ints[0]);
  if (count < 1 || markerIndex + count >= program.commands.size())
    return refuse(marker, "the marker counts past the program's end");
  RegionCode code;
  LLMC_RETURN_IF_ERROR(buildRegionCode(program, marker, marker.inputs,
                                       marker.outputs, markerIndex + 1, count,
                                       IndexMode::Tensor, code));
  std::ostringstream params;
  for (size_t k = 0; k < code.inputTypes.size(); ++k)
    params << "    const " << elementwiseStorageType(code.inputTypes[k])
           << " *__restrict__ in" << k << ",\n";
  for (size_t k = 0; k < code.outputTypes.size(); ++k)
    params << "    " << elementwiseStorageType(code.outputTypes[k])
           << " *__restrict__ out" << k << ",\n";
  params << "    long long n";

  std::ostringstream head;
  // No model part in the text: the same region of every layer is one unit.
  head << "// An elementwise region of " << count << " commands, "
       << code.elements << " elements.\n"
       << "// Generated by llmc (codegen/cuda/elementwise/FusedKernels.cpp).\n\n";
  std::string text = head.str() + regionPrelude(code);
  std::string kernel =
      "(\n" + params.str() + ") {\n" + "  typedef " +
      std::string(code.small ? "unsigned int" : "long long") + " Index;\n" +
      "  const Index count = (Index)n;\n"
      "  const Index stride = (Index)gridDim.x * blockDim.x;\n"
      "  const Index first = (Index)blockIdx.x * blockDim.x + threadIdx.x;\n" +
      regionLoop(code) + "}\n";
  // The entry is named by the content, so equal regions share one unit.
  std::ostringstream entry;
  entry << "llmc_fused_" << std::hex
        << std::hash<std::string>{}(text + kernel);
  out.entry = entry.str();
  out.source = text + "\nextern \"C\" __global__ void " + out.entry + kernel;
  out.elements = code.elements;
  return Status::ok();
}

} // namespace llmc::rt::cuda
