//===- MultiTensorLaunch.cpp - run the multi-tensor groups on a GPU -------===//
#include "runtime/cuda/kernels/optimizer/MultiTensorLaunch.h"

#include "runtime/cuda/libs/CudaModule.h"
#include "runtime/cuda/kernels/DeviceKernels.h"
#include "runtime/cuda/kernels/reduce/ReduceKernels.h"

#include <algorithm>

namespace llmc::rt::cuda {

namespace {

/// The words of one table entry: pointers and counts are all 8 bytes, so a
/// table is an array of uint64 in the layout of the kernels' structs
/// (MultiEntry in codegen/cuda/optimizer/MultiTensor.cpp, SumSquaresEntry in
/// reduce/ReduceRows.cuh).
uint64_t word(const void *pointer) {
  return static_cast<uint64_t>(reinterpret_cast<uintptr_t>(pointer));
}

} // namespace

Status MultiTensorLaunches::create(const RankProgram &program,
                                   const std::vector<MultiTensorGroup> &groups,
                                   uint8_t *arena,
                                   CudaKernels &kernels,
                                   std::unique_ptr<MultiTensorLaunches> &out) {
  std::unique_ptr<MultiTensorLaunches> created(new MultiTensorLaunches(kernels));
  created->groupOfCommand_.assign(program.commands.size(), -1);
  created->covered_.assign(program.commands.size(), false);
  auto at = [&](int32_t slot) -> const void * {
    return arena + program.values[slot].offset;
  };
  for (const MultiTensorGroup &group : groups) {
    Launch launch;
    std::vector<uint64_t> table;
    const Command &first = program.commands[group.members.front()];
    auto fail = [&](const Status &status) {
      return Status::error(status.code(), "at " + first.origin +
                                              " (a multi-tensor launch of " +
                                              std::to_string(group.members.size()) +
                                              " " + group.label + "): " +
                                              status.message());
    };
    int64_t blocks = 0;
    if (group.kind == MultiTensorGroup::Kind::Elementwise) {
      // 1. Per member: its inputs (at least one word), outputs, n, and its
      //    first block.
      if (Status status = kernels.fused(group.entry, launch.kernel);
          !status)
        return fail(status);
      size_t numInputs = group.inputs[0].size();
      for (size_t m = 0; m < group.members.size(); ++m) {
        for (int32_t slot : group.inputs[m])
          table.push_back(word(at(slot)));
        if (numInputs == 0)
          table.push_back(0);
        for (int32_t slot : group.outputs[m])
          table.push_back(word(at(slot)));
        table.push_back(static_cast<uint64_t>(group.elements[m]));
        table.push_back(static_cast<uint64_t>(blocks));
        blocks += multiTensorBlocks(group.elements[m]);
      }
    } else {
      // 1. Per member: x, out, n, first chunk, chunks.
      for (size_t m = 0; m < group.members.size(); ++m) {
        int64_t chunks = sumSquaresChunks(group.elements[m]);
        table.push_back(word(at(group.inputs[m][0])));
        table.push_back(word(at(group.outputs[m][0])));
        table.push_back(static_cast<uint64_t>(group.elements[m]));
        table.push_back(static_cast<uint64_t>(blocks));
        table.push_back(static_cast<uint64_t>(chunks));
        blocks += chunks;
      }
      LLMC_CUDA_CHECK(cudaMalloc(reinterpret_cast<void **>(&launch.partials),
                                 static_cast<size_t>(blocks) * sizeof(double)),
                      "cudaMalloc(the partial sums of a multi-tensor launch)");
    }
    if (blocks < 1 || blocks > 0x7fffffff)
      return fail(Status::error(StatusCode::Unimplemented,
                                "a grid of " + std::to_string(blocks) +
                                    " blocks"));
    launch.blocks = static_cast<unsigned>(blocks);
    // 2. The table, once: the arena does not move.
    size_t bytes = table.size() * sizeof(uint64_t);
    LLMC_CUDA_CHECK(cudaMalloc(&launch.table, bytes),
                    "cudaMalloc(a multi-tensor table)");
    LLMC_CUDA_CHECK(cudaMemcpy(launch.table, table.data(), bytes,
                               cudaMemcpyHostToDevice),
                    "uploading a multi-tensor table");
    created->groupOfCommand_[group.members.front()] =
        static_cast<int>(created->launches_.size());
    for (size_t m = 0; m < group.members.size(); ++m)
      for (size_t c = group.members[m]; c < group.ends[m]; ++c)
        created->covered_[c] = true;
    launch.group = group;
    created->launches_.push_back(std::move(launch));
  }
  out = std::move(created);
  return Status::ok();
}

MultiTensorLaunches::~MultiTensorLaunches() {
  for (Launch &launch : launches_) {
    if (launch.table)
      (void)cudaFree(launch.table);
    if (launch.partials)
      (void)cudaFree(launch.partials);
  }
}

int MultiTensorLaunches::groupAt(size_t command) const {
  return command < groupOfCommand_.size() ? groupOfCommand_[command] : -1;
}

Status MultiTensorLaunches::launch(int index, cudaStream_t stream) const {
  const Launch &launch = launches_[index];
  const void *table = launch.table;
  int entries = static_cast<int>(launch.group.members.size());
  if (launch.group.kind == MultiTensorGroup::Kind::Elementwise) {
    std::vector<void *> args = {&table, &entries};
    LLMC_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void *>(launch.kernel),
                                     dim3(launch.blocks), dim3(256),
                                     args.data(), 0, stream),
                    "launching a multi-tensor " + launch.group.label);
    LLMC_CUDA_CHECK(cudaGetLastError(),
                    "launching a multi-tensor " + launch.group.label);
    return Status::ok();
  }
  void *partials = launch.partials;
  std::vector<void *> partialArgs = {&table, &entries, &partials};
  LLMC_RETURN_IF_ERROR(kernels_.launchDeviceEntry(
      "llmc_sum_squares_multi_partial", launch.blocks, partialArgs, stream));
  std::vector<void *> finishArgs = {&table, &partials};
  return kernels_.launchDeviceEntry("llmc_sum_squares_multi_finish",
                                    static_cast<unsigned>(entries), finishArgs,
                                    stream);
}

} // namespace llmc::rt::cuda
