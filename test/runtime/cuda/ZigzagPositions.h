//===- ZigzagPositions.h - the positions a cp rank holds --------*- C++ -*-===//
//
// The global token positions that rank `rank` of `ranks` holds under context
// parallelism's zigzag split of a sequence of `global` (chunks rank and
// 2 ranks - 1 - rank of 2 ranks; docs/sharding.md, "Context parallelism"):
// the query and key positions of ring attention's blocks in the GPU tests
// and the CPU emulations of the block kernels.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_TEST_RUNTIME_CUDA_ZIGZAGPOSITIONS_H
#define LLMC_TEST_RUNTIME_CUDA_ZIGZAGPOSITIONS_H

#include <cstdint>
#include <vector>

namespace llmc::rt::cuda::testing {

inline std::vector<int32_t> zigzag(int64_t global, int64_t ranks,
                                   int64_t rank) {
  int64_t chunk = global / (2 * ranks);
  std::vector<int32_t> positions;
  for (int64_t first : {rank * chunk, (2 * ranks - 1 - rank) * chunk})
    for (int64_t i = 0; i < chunk; ++i)
      positions.push_back(static_cast<int32_t>(first + i));
  return positions;
}

} // namespace llmc::rt::cuda::testing

#endif // LLMC_TEST_RUNTIME_CUDA_ZIGZAGPOSITIONS_H
