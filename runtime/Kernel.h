//===- Kernel.h - kernel kinds and the arguments of one launch ---*- C++ -*-===//
#ifndef LLMC_RUNTIME_KERNEL_H
#define LLMC_RUNTIME_KERNEL_H

#include "runtime/DType.h"

#include <cstdint>
#include <vector>

namespace llmc::rt {

/// Every kernel of Kernels.def; the value is the id stored in Executables.
enum class KernelKind : uint16_t {
#define LLMC_KERNEL(Name, Attributes) Name,
#include "runtime/Kernels.def"
  Count
};

/// "Add", "LayerNorm", ... (for messages and profiles).
const char *kernelName(KernelKind kind);

/// A tensor in memory: where, what type, what shape (row-major, dense).
struct TensorRef {
  void *data = nullptr;
  DType dtype = DType::F32;
  Shape shape;

  int64_t numElements() const { return rt::numElements(shape); }
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  size_t bytes() const {
    return static_cast<size_t>(numElements()) * dtypeSize(dtype);
  }
};

/// The attributes of one launch, laid out as Kernels.def says.
struct KernelAttrs {
  std::vector<int64_t> ints;
  std::vector<double> floats;
};

} // namespace llmc::rt

#endif // LLMC_RUNTIME_KERNEL_H
