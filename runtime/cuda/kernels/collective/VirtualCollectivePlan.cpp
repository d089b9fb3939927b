//===- VirtualCollectivePlan.cpp - a collective between virtual ranks -----===//
//
// 1. Which members stage their result (an output that overlaps the input in
//    a way the kind does not allow in place) and where in scratch.
// 2. The work, writing to each member's target (its output, or scratch): a
//    reduction kernel (all-reduce, reduce-scatter) or copies (the others).
// 3. The staged results copied out, after every read (one stream: in order).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/collective/VirtualCollectivePlan.h"

namespace llmc::rt::cuda {

namespace {

constexpr uint64_t kScratchAlign = 256;

bool overlaps(const uint8_t *a, uint64_t aBytes, const uint8_t *b,
              uint64_t bBytes) {
  auto at = [](const uint8_t *p) { return reinterpret_cast<uintptr_t>(p); };
  return aBytes && bBytes && at(a) < at(b) + bBytes && at(b) < at(a) + aBytes;
}

/// Whether member `i` must stage its result.
bool needsStaging(CollectiveKind kind, const VirtualMember &m, size_t i) {
  if (!overlaps(m.input, m.inputBytes, m.output, m.outputBytes))
    return false;
  switch (kind) {
  case CollectiveKind::AllReduce: // each element read before it is written
    return m.input != m.output;
  case CollectiveKind::ReduceScatter: // the output at its own chunk
    return m.output != m.input + i * m.outputBytes;
  case CollectiveKind::AllGather: // the input at its own chunk
    return m.input != m.output + i * m.inputBytes;
  default: // all-to-all writes what peers read; send/recv have one side
    return true;
  }
}

uint64_t alignUp(uint64_t bytes) {
  return (bytes + kScratchAlign - 1) / kScratchAlign * kScratchAlign;
}

/// The reduction kernels' suffix (dtypeName) of the types they cover.
const char *reduceSuffix(DType dtype) {
  switch (dtype) {
  case DType::F32:
  case DType::F64:
  case DType::BF16:
  case DType::F16:
  case DType::I32:
  case DType::I64:
    return dtypeName(dtype);
  default:
    return nullptr;
  }
}

void addCopy(VirtualPlan &plan, uint8_t *dst, const uint8_t *src,
             uint64_t bytes) {
  if (!bytes || dst == src)
    return;
  VirtualStep step;
  step.kind = VirtualStep::Kind::Copy;
  step.dst = dst;
  step.src = src;
  step.bytes = bytes;
  plan.steps.push_back(step);
}

} // namespace

uint64_t virtualScratchBytes(CollectiveKind kind,
                             const std::vector<VirtualMember> &members) {
  uint64_t bytes = 0;
  for (size_t i = 0; i < members.size(); ++i)
    if (kind != CollectiveKind::Send && kind != CollectiveKind::Recv &&
        needsStaging(kind, members[i], i))
      bytes += alignUp(members[i].outputBytes);
  return bytes;
}

Status planVirtualCollective(CollectiveKind kind, ReduceOp op, DType dtype,
                             const std::vector<VirtualMember> &members,
                             uint8_t *scratch, uint64_t scratchBytes,
                             VirtualPlan &plan) {
  plan = VirtualPlan();
  const std::string what = collectiveKindName(kind);
  auto fail = [&](const std::string &message) {
    return Status::error(StatusCode::InvalidArgument,
                         "virtual " + what + ": " + message);
  };
  const size_t n = members.size();
  if (n == 0 || n > static_cast<size_t>(kVirtualMaxMembers))
    return fail("has " + std::to_string(n) + " members; virtual ranks run 1 "
                "to " + std::to_string(kVirtualMaxMembers) + " per collective");
  // Send/recv: one copy from the sender's input to the receiver's output
  // (two arenas: no overlap).
  if (kind == CollectiveKind::Send || kind == CollectiveKind::Recv) {
    if (n != 2 || members[0].inputBytes != members[1].outputBytes)
      return fail("expected a sender and a receiver of the same size");
    addCopy(plan, members[1].output, members[0].input, members[0].inputBytes);
    return Status::ok();
  }
  const uint64_t inBytes = members[0].inputBytes;
  for (const VirtualMember &m : members)
    if (m.inputBytes != inBytes)
      return fail("members' inputs differ in size");
  // 1. Staging.
  std::vector<uint8_t *> target(n);
  uint64_t used = 0;
  for (size_t i = 0; i < n; ++i) {
    target[i] = members[i].output;
    if (!needsStaging(kind, members[i], i))
      continue;
    if (used + members[i].outputBytes > scratchBytes)
      return fail("needs " + std::to_string(virtualScratchBytes(kind, members)) +
                  " bytes of scratch to stage, got " +
                  std::to_string(scratchBytes));
    target[i] = scratch + used;
    used += alignUp(members[i].outputBytes);
  }
  // 2. The work.
  const uint64_t chunkIn = inBytes / n;
  switch (kind) {
  case CollectiveKind::AllReduce:
  case CollectiveKind::ReduceScatter: {
    const char *suffix = reduceSuffix(dtype);
    if (!suffix)
      return fail(std::string("cannot reduce ") + dtypeName(dtype));
    const bool scatter = kind == CollectiveKind::ReduceScatter;
    for (const VirtualMember &m : members)
      if (m.outputBytes != (scatter ? chunkIn : inBytes) ||
          (scatter && inBytes % n))
        return fail("an output of " + std::to_string(m.outputBytes) +
                    " bytes for inputs of " + std::to_string(inBytes));
    VirtualStep step;
    step.kind = VirtualStep::Kind::Reduce;
    VirtualReduceArgs &args = step.reduce;
    args.members = static_cast<int>(n);
    args.outputCount = static_cast<int>(n);
    args.count = static_cast<long long>(inBytes / dtypeSize(dtype));
    args.chunk = scatter ? args.count / static_cast<long long>(n) : 0;
    for (size_t i = 0; i < n; ++i) {
      args.inputs[i] = members[i].input;
      args.outputs[i] = target[i];
    }
    plan.entry = std::string("llmc_virtual_reduce_") +
                 (op == ReduceOp::Max ? "max_" : "sum_") + suffix;
    plan.reduceElements = args.count;
    if (args.count > 0)
      plan.steps.push_back(step);
    break;
  }
  case CollectiveKind::AllGather:
    for (size_t i = 0; i < n; ++i) {
      if (members[i].outputBytes != inBytes * n)
        return fail("an output of " + std::to_string(members[i].outputBytes) +
                    " bytes for inputs of " + std::to_string(inBytes));
      for (size_t j = 0; j < n; ++j)
        addCopy(plan, target[i] + j * inBytes, members[j].input, inBytes);
    }
    break;
  case CollectiveKind::AllToAll:
    if (inBytes % n)
      return fail("inputs of " + std::to_string(inBytes) +
                  " bytes do not split into " + std::to_string(n) + " chunks");
    for (size_t i = 0; i < n; ++i) {
      if (members[i].outputBytes != inBytes)
        return fail("an output of " + std::to_string(members[i].outputBytes) +
                    " bytes for inputs of " + std::to_string(inBytes));
      for (size_t j = 0; j < n; ++j)
        addCopy(plan, target[i] + j * chunkIn,
                members[j].input + i * chunkIn, chunkIn);
    }
    break;
  default:
    break;
  }
  // 3. Staged results out.
  for (size_t i = 0; i < n; ++i)
    if (target[i] != members[i].output)
      addCopy(plan, members[i].output, target[i], members[i].outputBytes);
  return Status::ok();
}

} // namespace llmc::rt::cuda
