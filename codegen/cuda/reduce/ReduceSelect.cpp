//===- ReduceSelect.cpp - the entries of a GPU reduction ------------------===//
//
// The selection of the reduce family: the path planReduceLaunch
// (runtime/cuda/kernels/reduce/ReduceKernels.h) picks from the shape names
// the entries and the scratch; the launch (ReduceLaunch.cpp, beside the
// kernels) plans the same path again and computes the grids. SumSquares,
// the gradient norm's terms, in fixed chunks.
//
//===----------------------------------------------------------------------===//
#include "codegen/cuda/FamilySelect.h"
#include "runtime/cuda/kernels/reduce/ReduceKernels.h"

#include <algorithm>
#include <string>
#include <vector>

namespace llmc::rt::cuda {

Status family::selectReduce(const KernelCall &call, KernelChoice &choice) {
  const KernelAttrs &attrs = call.attrs;
  const std::vector<TensorRef> &inputs = call.inputs;
  const std::vector<TensorRef> &outputs = call.outputs;
  switch (call.kind) {
  case KernelKind::ReduceSum:
  case KernelKind::ReduceMax:
  case KernelKind::ReduceMean: {
    LLMC_RETURN_IF_ERROR(call.expect(1, 1, 1, 0));
    std::string in = floatSuffix(inputs[0].dtype),
                out = floatSuffix(outputs[0].dtype);
    if (in.empty() || out.empty())
      return call.refuse("reductions cover f32, bf16 and f16 inputs and "
                         "results");
    if (inputs[0].rank() > kMaxRank)
      return call.refuse("ranks above 8 are not supported");
    for (size_t i = 0; i < attrs.ints.size(); ++i)
      if (attrs.ints[i] < 0 || attrs.ints[i] >= inputs[0].rank() ||
          (i > 0 && attrs.ints[i] <= attrs.ints[i - 1]))
        return call.refuse("expected strictly increasing dims in [0, " +
                           std::to_string(inputs[0].rank()) + ")");
    // The path from the shape (ReduceKernels.h); the vector and scalar
    // entries of rows and columns both, the launch takes the vector one
    // when the input is aligned.
    ReduceLaunch launch =
        planReduceLaunch(inputs[0].shape, attrs.ints, inputs[0].dtype);
    choice.scratchBytes = launch.scratchBytes;
    std::string types = in + "_" + out;
    switch (launch.path) {
    case ReduceLaunch::Path::Rows:
      return runEntries(choice, {"llmc_reduce_rows_vec_" + types,
                                 "llmc_reduce_rows_" + types});
    case ReduceLaunch::Path::Columns:
      return runEntries(choice, {"llmc_reduce_columns_vec_" + types,
                                 "llmc_reduce_columns_" + types,
                                 "llmc_reduce_columns_finish_" + out});
    case ReduceLaunch::Path::Split:
      return runEntries(
          choice, {"llmc_reduce_partial_" + in, "llmc_reduce_finish_" + out});
    case ReduceLaunch::Path::General:
      break;
    }
    return runEntries(choice, {"llmc_reduce_" + types});
  }
  case KernelKind::SumSquares: {
    LLMC_RETURN_IF_ERROR(call.expect(1, 1, 0, 0));
    if (inputs[0].dtype != DType::F32 || outputs[0].dtype != DType::F32 ||
        outputs[0].numElements() != 1)
      return call.refuse("sum_squares covers an f32 tensor into one f32");
    choice.scratchBytes = static_cast<size_t>(std::max<long long>(
                              1, sumSquaresChunks(inputs[0].numElements()))) *
                          sizeof(double);
    return runEntries(choice,
                      {"llmc_sum_squares_partial", "llmc_sum_squares_finish"});
  }
  default:
    return call.refuse("");
  }
}

} // namespace llmc::rt::cuda
