//===- Sharding.h - how a tensor is split over the device mesh ---*- C++ -*-===//
//
// The vocabulary of the partitioner (passes/Partition.cpp): the mesh, how one
// tensor dimension is split over mesh axes, and a value's sharding, which may
// also be a pending sum over some axes ("partial"). docs/sharding.md says why
// this is ours and not upstream `shard.sharding`: upstream has no partial
// state and no blocked splits, and both are needed (a row-parallel matmul
// ends partial; GPT-2's fused [C, 3C] QKV weight is split as 3 blocks).
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_SHARDING_SHARDING_H
#define LLMC_SHARDING_SHARDING_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <string>

namespace llmc {

/// The device mesh: named axes with sizes; ranks are numbered row-major
/// (last axis fastest), as in runtime/Mesh.h.
struct Mesh {
  llvm::SmallVector<std::string> names;
  llvm::SmallVector<int64_t> sizes;

  int64_t numDevices() const;
  /// The index of axis `name`, or -1.
  int64_t axisIndex(llvm::StringRef name) const;
  /// The product of the sizes of `axes`.
  int64_t ways(llvm::ArrayRef<int64_t> axes) const;
  /// "dp" or "dp,tp".
  std::string axesText(llvm::ArrayRef<int64_t> axes) const;

  /// The module's mesh: the `shard.grid @mesh` op and the module attribute
  /// `llmc.mesh_axes` (its axis names). Fails (without a diagnostic) when
  /// the module has none.
  static llvm::FailureOr<Mesh> fromModule(mlir::ModuleOp module);
  /// Adds `shard.grid @mesh` and `llmc.mesh_axes` to `module`.
  void addToModule(mlir::ModuleOp module) const;
};

/// How one dimension (size S) is split: viewed as `groups` equal blocks of
/// S / groups, each block cut into n contiguous chunks, n the product of the
/// sizes of `axes` (major to minor). `groups` is 1 for a plain split; GPT-2's
/// fused QKV projection [C, 3C] splits its last dimension with groups = 3 so
/// that each rank holds its heads of q, k and v.
///
/// `zigzag` (context parallelism's load-balanced sequence split): in the
/// odd-numbered blocks the chunks go to the ranks in reverse order, so that
/// with groups = 2 over n ranks, rank p holds chunks p and 2n-1-p of the 2n
/// chunks (an early and a late part of a causal sequence: equal work).
struct DimSplit {
  llvm::SmallVector<int64_t> axes;
  int64_t groups = 1;
  bool zigzag = false;

  bool isSplit() const { return !axes.empty(); }
  bool operator==(const DimSplit &other) const {
    return axes == other.axes &&
           (axes.empty() ||
            (groups == other.groups && zigzag == other.zigzag));
  }
  bool operator!=(const DimSplit &other) const { return !(*this == other); }
};

enum class PartialKind { Sum, Max };

/// A value's sharding: one DimSplit per dimension, and the mesh axes over
/// which the local values are still to be reduced (empty: complete).
struct Sharding {
  llvm::SmallVector<DimSplit> dims;
  llvm::SmallVector<int64_t> partial; ///< sorted
  PartialKind kind = PartialKind::Sum;

  static Sharding replicated(int64_t rank);
  bool isReplicated() const;
  bool isPartial() const { return !partial.empty(); }
  /// Whether any dimension or the partial set uses `axis`.
  bool usesAxis(int64_t axis) const;
  /// The dimension split over `axis`, or -1.
  int64_t dimOfAxis(int64_t axis) const;
  /// The same splits, with no pending reduction.
  Sharding complete() const;
  /// The local shape of a value of global shape `global`; fails when a
  /// split does not divide its dimension.
  llvm::FailureOr<llvm::SmallVector<int64_t>>
  localShape(llvm::ArrayRef<int64_t> global, const Mesh &mesh) const;
  bool operator==(const Sharding &other) const {
    return dims == other.dims && partial == other.partial &&
           (partial.empty() || kind == other.kind);
  }
  bool operator!=(const Sharding &other) const { return !(*this == other); }

  /// "[[dp], [], [tp x3]]" ("[cp x2 zigzag]" for a zigzag split), then " partial(sum over tp)" when partial.
  std::string text(const Mesh &mesh) const;

  /// As function argument/result attributes: `llmc.sharding` is an array
  /// of axis-name arrays, one per dimension; `llmc.shard_groups` holds the
  /// groups when any is not 1. Partial shardings are never stored.
  mlir::Attribute toAttr(mlir::MLIRContext *context, const Mesh &mesh) const;
  mlir::Attribute groupsAttr(mlir::MLIRContext *context) const;
  /// `llmc.shard_zigzag`: 1 per zigzag dimension, 0 for the others; null
  /// when no dimension is zigzag.
  mlir::Attribute zigzagAttr(mlir::MLIRContext *context) const;
  static llvm::FailureOr<Sharding> fromAttrs(mlir::Attribute axes,
                                            mlir::Attribute groups,
                                            const Mesh &mesh, int64_t rank,
                                            mlir::Attribute zigzag = {});
};

} // namespace llmc

#endif // LLMC_SHARDING_SHARDING_H
