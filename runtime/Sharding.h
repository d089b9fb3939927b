//===- Sharding.h - global tensors and the ranks' local blocks --*- C++ -*-===//
//
// The math behind sharded arguments and outputs (TensorSharding, in
// Executable.h): the global shape a rank's local block belongs to, and the
// copies between a global tensor and the ranks' blocks. Sessions use it to
// bind GLOBAL tensors and to read them back, so that callers (the training
// loop, checkpoints, llmc-run, the C API) never see a rank's piece.
//
// Everything here copies bytes: it serves any element type. Copies move
// contiguous runs (one chunk of the innermost split dimension times every
// unsplit dimension inside it), not single elements.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_RUNTIME_SHARDING_H
#define LLMC_RUNTIME_SHARDING_H

#include "runtime/Executable.h"
#include "runtime/Status.h"

#include <string>
#include <vector>

namespace llmc::rt {

/// The number of chunks `dim` splits a block into: the product of the sizes
/// of its mesh axes (1 when it is not split). Axes must be in range.
int64_t shardCount(const DimSharding &dim,
                   const std::vector<MeshAxisInfo> &mesh);

/// The global shape whose blocks have shape `local` under `sharding`: each
/// split dimension times its shardCount. InvalidArgument when the sharding
/// does not fit (wrong rank, unknown mesh axis).
Status globalShape(const Shape &local, const TensorSharding &sharding,
                   const std::vector<MeshAxisInfo> &mesh, Shape &global);

/// The global shape of argument / output `index` of `executable`.
Status argumentGlobalShape(const Executable &executable, size_t index,
                           Shape &global);
Status outputGlobalShape(const Executable &executable, size_t index,
                         Shape &global);

/// Copies rank `rank`'s block of the global tensor `global` (shape
/// `globalShape`, elements of `elementBytes` bytes, row-major) into `local`,
/// which holds numElements(local shape) * elementBytes bytes. A replicated
/// sharding copies the whole tensor. InvalidArgument when a split dimension
/// is not a multiple of groups * shardCount or `rank` is not in the mesh.
Status extractShard(const void *global, size_t elementBytes,
                    const Shape &globalShape, const TensorSharding &sharding,
                    const std::vector<MeshAxisInfo> &mesh, int rank,
                    void *local);

/// The global indices along dimension `dim` of rank `rank`'s block of a
/// tensor of shape `globalShape`, in local order (all of 0..S-1 when the
/// dimension is not split). InvalidArgument as for extractShard.
Status shardIndices(const Shape &globalShape, const TensorSharding &sharding,
                    const std::vector<MeshAxisInfo> &mesh, int rank,
                    size_t dim, std::vector<int64_t> &indices);

/// The inverse of extractShard: fills `global` from `locals[rank]`, one
/// block per rank of the mesh (locals.size() ranks). Ranks that hold the
/// same block (they differ only along mesh axes the sharding does not use)
/// are read once, from the one whose coordinates along those axes are 0.
Status assembleShards(const std::vector<const void *> &locals,
                      size_t elementBytes, const Shape &globalShape,
                      const TensorSharding &sharding,
                      const std::vector<MeshAxisInfo> &mesh, void *global);

/// "[[dp], [], [tp x3]]": per dimension its mesh axes by name, and the
/// groups when more than one; "replicated" when nothing is split.
std::string formatSharding(const TensorSharding &sharding,
                           const std::vector<MeshAxisInfo> &mesh);

/// "{dp=2, tp=2}", "{}" for one device.
std::string formatMesh(const std::vector<MeshAxisInfo> &mesh);

} // namespace llmc::rt

#endif // LLMC_RUNTIME_SHARDING_H
