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

/// What a MatmulEpilogue command applies to the f32 product (ints[2]).
/// Values are stored in Executables: append, never reorder.
enum class MatmulEpilogueKind : int64_t {
  Bias = 0,         ///< result = product + bias
  BiasGelu = 1,     ///< result = gelu_tanh(product + bias)
  BiasGeluAux = 2,  ///< the same, and outputs[1] = product + bias
  BiasResidual = 3, ///< result = residual + (product + bias)
  /// result = product; outputs[1] = the rhs summed over K (no bias input):
  /// the bias gradient beside a weight gradient dW = X^T dY.
  BiasGradient = 4,
};
constexpr int64_t kNumMatmulEpilogueKinds = 5;

/// Inputs and outputs of a MatmulEpilogue command of `kind`.
inline int matmulEpilogueInputs(MatmulEpilogueKind kind) {
  return kind == MatmulEpilogueKind::BiasResidual   ? 4
         : kind == MatmulEpilogueKind::BiasGradient ? 2
                                                    : 3;
}
inline int matmulEpilogueOutputs(MatmulEpilogueKind kind) {
  return kind == MatmulEpilogueKind::BiasGeluAux ||
                 kind == MatmulEpilogueKind::BiasGradient
             ? 2
             : 1;
}

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

/// The first element of a float tensor (f32, f64, bf16, f16; a rank-0 loss,
/// norm or rate) as a double.
double scalarAsDouble(const TensorRef &tensor);

/// The attributes of one launch, laid out as Kernels.def says.
struct KernelAttrs {
  std::vector<int64_t> ints;
  std::vector<double> floats;
};

} // namespace llmc::rt

#endif // LLMC_RUNTIME_KERNEL_H
