//===- RopeSelect.cpp - the entries of llmc.rope --------------------------===//
//
// The selection of the rope family: the table and the two rotations
// (general and packed; the launch, runtime/cuda/kernels/rope/RopeLaunch.cpp,
// picks by alignment), with the table's scratch of planRopeLaunch
// (rope/RopeLaunch.h).
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/FamilySelect.h"
#include "runtime/cuda/kernels/rope/RopeLaunch.h"

#include <string>
#include <vector>

namespace llmc::rt::cuda {

Status family::selectRope(const KernelCall &call, KernelChoice &choice) {
  const std::vector<TensorRef> &inputs = call.inputs;
  const std::vector<TensorRef> &outputs = call.outputs;
  LLMC_RETURN_IF_ERROR(call.expect(1, 2, 0, 1));
  const TensorRef &x = inputs[0];
  std::string suffix = floatSuffix(x.dtype);
  std::string index = inputs.size() == 2 ? indexSuffix(inputs[1].dtype) : "i32";
  if (suffix.empty() || index.empty() || x.rank() < 2 ||
      outputs[0].dtype != x.dtype || x.shape.back() % 2 != 0)
    return call.refuse(
        "rope covers f32, bf16 and f16 [..., T, D] with an even D and "
        "i32 or i64 positions");
  if (call.attrs.floats.size() > 1 + RopeFrequencies::kMaxPairs)
    return call.refuse("rope takes at most " +
                       std::to_string(RopeFrequencies::kMaxPairs) +
                       " per-pair inverse frequencies (head dimension 512)");
  // The cos and sin tables [T, D/2] in double (rope/Rope.cuh).
  choice.scratchBytes =
      planRopeLaunch(x.shape, x.dtype, nullptr, nullptr, 1).scratchBytes();
  return runEntries(choice,
                    {"llmc_rope_table_" + index, "llmc_rope_rotate_" + suffix,
                     "llmc_rope_rotate_vec_" + suffix});
}

} // namespace llmc::rt::cuda
