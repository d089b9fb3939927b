//===- Trace.h - the C++ tracing API of llmc --------------------*- C++ -*-===//
//
// Programs that embed llmc describe a model in C++: tensors are handles,
// every llmc op is a function (and +, -, *, / are operators with numpy-style
// broadcasting), parameters are declared with a name, shape, dtype and
// initializer, and scopes name the model part that every op and parameter
// belongs to. The result is the forward program
//
//   func.func @loss(%params..., %inputs...) -> loss
//
// in the llmc dialect. The built-in models (frontend/models) use only this
// API; examples/custom-model.cpp shows a model of one's own.
//
//   llmc::Tracer tracer(context);
//   llmc::Tensor x = tracer.input("tokens", {8, 64}, llmc::DType::I32);
//   {
//     auto block = tracer.scope("transformer.h.0");
//     llmc::Tensor w = tracer.parameter("mlp.c_fc.weight", {768, 3072},
//                                       llmc::DType::F32, llmc::Init::normal(0.02));
//     ...
//   }
//   mlir::OwningOpRef<mlir::ModuleOp> module = tracer.finish(loss);
//
// Errors (incompatible shapes, a bad dimension) are reported as MLIR
// diagnostics located at the current scope, when the op is traced; finish()
// then returns null. Tracing never aborts.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_FRONTEND_TRACE_H
#define LLMC_FRONTEND_TRACE_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace llmc {

class Tracer;

/// Element types of llmc tensors.
enum class DType { F32, F64, BF16, F16, I32, I64, I1 };

/// "f32", "bf16", ...
const char *dtypeName(DType dtype);

/// How a parameter is initialized before training.
struct Init {
  enum class Kind { Normal, Uniform, Zeros, Ones };
  Kind kind = Kind::Zeros;
  double scale = 0.0; ///< standard deviation (Normal) or bound (Uniform)

  static Init normal(double stddev) { return {Kind::Normal, stddev}; }
  static Init uniform(double bound) { return {Kind::Uniform, bound}; }
  static Init zeros() { return {Kind::Zeros, 0.0}; }
  static Init ones() { return {Kind::Ones, 0.0}; }
};

/// How Megatron-style tensor parallelism splits a parameter: dimension `dim`
/// is cut into `groups` equal blocks (c_attn's q, k and v), and each block is
/// split evenly over the tp ranks. `dim` = -1: replicated on every rank.
/// The sharding pass reads it from the argument attribute llmc.tp_split.
struct TensorParallelSplit {
  int64_t dim = -1;
  int64_t groups = 1;
  /// Stacked experts [E, ...]: the dimension of the experts, which expert
  /// parallelism splits over the ep ranks (llmc.ep_split = dim); -1: none.
  int64_t expertDim = -1;

  static TensorParallelSplit replicated() { return {}; }
  static TensorParallelSplit along(int64_t dim, int64_t groups = 1) {
    return {dim, groups};
  }
  bool isSplit() const { return dim >= 0; }
  TensorParallelSplit withExperts(int64_t d) const {
    TensorParallelSplit out = *this;
    out.expertDim = d;
    return out;
  }
};

/// A traced value: a handle on an SSA value of the program being built.
/// Cheap to copy. A default-constructed Tensor is empty.
class Tensor {
public:
  Tensor() = default;
  Tensor(Tracer *tracer, mlir::Value value) : tracer_(tracer), value_(value) {}

  explicit operator bool() const { return static_cast<bool>(value_); }
  mlir::Value value() const { return value_; }
  Tracer &tracer() const { return *tracer_; }

  mlir::RankedTensorType type() const;
  llvm::ArrayRef<int64_t> shape() const;
  int64_t rank() const;
  /// Size of dimension `d`; negative `d` counts from the end.
  int64_t dim(int64_t d) const;
  int64_t numElements() const;
  DType dtype() const;

private:
  Tracer *tracer_ = nullptr;
  mlir::Value value_;
};

/// Pops a scope when it goes out of scope (see Tracer::scope).
class [[nodiscard]] ScopeGuard {
public:
  explicit ScopeGuard(Tracer *tracer) : tracer_(tracer) {}
  ScopeGuard(ScopeGuard &&other) noexcept
      : tracer_(std::exchange(other.tracer_, nullptr)) {}
  ScopeGuard(const ScopeGuard &) = delete;
  ScopeGuard &operator=(const ScopeGuard &) = delete;
  ScopeGuard &operator=(ScopeGuard &&) = delete;
  ~ScopeGuard();

private:
  Tracer *tracer_;
};

/// What a traced function argument is.
enum class ArgumentRole { Parameter, Input };

/// Builds one function in the llmc dialect. Not thread-safe.
class Tracer {
public:
  /// Traces into a new module in `context` (which must have the llmc
  /// dialects registered, see ir/Registration.h). `functionName` is the
  /// name of the traced function.
  explicit Tracer(mlir::MLIRContext &context,
                  llvm::StringRef functionName = "loss");
  ~Tracer();
  Tracer(const Tracer &) = delete;
  Tracer &operator=(const Tracer &) = delete;

  /// Enters a named model part: parameters declared inside are named
  /// "<scope>.<name>", ops are located at loc("<scope>"). Scopes nest with
  /// dots; the scope ends when the guard is destroyed.
  ScopeGuard scope(llvm::StringRef name);
  /// The current scope path, "" at top level.
  const std::string &scopePath() const { return scopePath_; }
  /// The location of ops traced now: loc("<scope path>").
  mlir::Location location() const;

  /// Declares a trainable parameter. Its full name ("<scope>.<name>") must
  /// be unique; it becomes a function argument with attributes llmc.name,
  /// llmc.role = "parameter", llmc.init and, when `split` splits it,
  /// llmc.tp_split = array<i64: dim, groups>. `split.dim` must be a
  /// dimension of `shape` whose size `split.groups` divides.
  Tensor parameter(llvm::StringRef name, llvm::ArrayRef<int64_t> shape,
                   DType dtype, Init init,
                   TensorParallelSplit split = TensorParallelSplit());
  /// Declares a data input (tokens, targets, ...), an argument after all
  /// parameters with llmc.role = "input".
  Tensor input(llvm::StringRef name, llvm::ArrayRef<int64_t> shape,
               DType dtype);

  /// A constant tensor with every element equal to `value`.
  Tensor constant(double value, llvm::ArrayRef<int64_t> shape, DType dtype);
  /// The index along `dim` at every position (llmc.iota).
  Tensor iota(llvm::ArrayRef<int64_t> shape, int64_t dim,
              DType dtype = DType::I32);

  /// Ends tracing: the function returns `results`, parameters come first in
  /// declaration order, then inputs. Returns null if any traced op was
  /// invalid (the diagnostics were already reported).
  mlir::OwningOpRef<mlir::ModuleOp> finish(llvm::ArrayRef<Tensor> results);

  /// True once an error was reported.
  bool failed() const { return failed_; }
  /// Reports an error at the current scope and marks the trace failed.
  mlir::InFlightDiagnostic emitError();

  // For the op functions (TraceOps.cpp) and extensions.
  mlir::OpBuilder &builder() { return builder_; }
  mlir::MLIRContext &context() { return context_; }
  mlir::Type elementType(DType dtype);
  /// Verifies a newly traced op; on failure marks the trace failed.
  Tensor wrap(mlir::Operation *op, unsigned result = 0);

private:
  friend class ScopeGuard;
  void popScope();
  Tensor addArgument(llvm::StringRef name, llvm::ArrayRef<int64_t> shape,
                     DType dtype, ArgumentRole role,
                     std::optional<Init> init,
                     TensorParallelSplit split = TensorParallelSplit());

  mlir::MLIRContext &context_;
  mlir::OpBuilder builder_;
  mlir::OwningOpRef<mlir::ModuleOp> module_;
  mlir::Operation *function_ = nullptr; ///< the func.func being traced
  mlir::Block *body_ = nullptr;
  std::vector<size_t> scopeLengths_;
  std::string scopePath_;
  struct Argument {
    std::string name;
    ArgumentRole role;
    mlir::BlockArgument value;
    std::optional<Init> init;
    TensorParallelSplit split;
  };
  std::vector<Argument> arguments_;
  bool failed_ = false;
  bool finished_ = false;
};

//===----------------------------------------------------------------------===//
// Ops. Shapes follow docs/ir.md; where an op takes several tensors of one
// shape, the arithmetic operators broadcast them numpy-style first.
//===----------------------------------------------------------------------===//

// Elementwise arithmetic with broadcasting; scalars become constants.
Tensor operator+(Tensor a, Tensor b);
Tensor operator-(Tensor a, Tensor b);
Tensor operator*(Tensor a, Tensor b);
Tensor operator/(Tensor a, Tensor b);
Tensor operator+(Tensor a, double b);
Tensor operator-(Tensor a, double b);
Tensor operator*(Tensor a, double b);
Tensor operator/(Tensor a, double b);
Tensor operator*(double a, Tensor b);
Tensor operator-(Tensor a);
Tensor maximum(Tensor a, Tensor b);
Tensor minimum(Tensor a, Tensor b);

Tensor abs(Tensor x);
Tensor exp(Tensor x);
Tensor log(Tensor x);
Tensor tanh(Tensor x);
Tensor sqrt(Tensor x);
Tensor rsqrt(Tensor x);
Tensor cast(Tensor x, DType dtype);

// Shapes.
/// Broadcasts numpy-style (aligned on the right) to `shape`.
Tensor broadcastTo(Tensor x, llvm::ArrayRef<int64_t> shape);
/// llmc.broadcast: operand dimension i becomes result dimension dims[i].
Tensor broadcastInDims(Tensor x, llvm::ArrayRef<int64_t> shape,
                       llvm::ArrayRef<int64_t> dims);
/// One entry may be -1: it is inferred from the element count.
Tensor reshape(Tensor x, llvm::ArrayRef<int64_t> shape);
Tensor transpose(Tensor x, llvm::ArrayRef<int64_t> permutation);
Tensor slice(Tensor x, llvm::ArrayRef<int64_t> starts,
             llvm::ArrayRef<int64_t> limits,
             llvm::ArrayRef<int64_t> strides = {});
/// The part [start, start + size) of dimension `dim`.
Tensor sliceDim(Tensor x, int64_t dim, int64_t start, int64_t size);
Tensor concat(llvm::ArrayRef<Tensor> inputs, int64_t dim);

// Reductions over `dims` (negative counts from the end).
Tensor sum(Tensor x, llvm::ArrayRef<int64_t> dims, bool keepDims = false);
Tensor max(Tensor x, llvm::ArrayRef<int64_t> dims, bool keepDims = false);
Tensor mean(Tensor x, llvm::ArrayRef<int64_t> dims, bool keepDims = false);

enum class Transpose { None, A, B, Both };
/// Batched matmul; `b` may be a matrix shared by every batch.
Tensor matmul(Tensor a, Tensor b, Transpose transpose = Transpose::None);

Tensor gather(Tensor x, Tensor indices, int64_t dim);
Tensor scatterAdd(Tensor dest, Tensor indices, Tensor updates, int64_t dim);

enum class Compare { Eq, Ne, Lt, Le, Gt, Ge };
/// Elementwise comparison (broadcasting) to an i1 tensor.
Tensor compare(Compare direction, Tensor a, Tensor b);
/// cond ? a : b, all broadcast to one shape.
Tensor select(Tensor cond, Tensor a, Tensor b);

// Composite ops.
Tensor embedding(Tensor table, Tensor ids);
/// `beta` may be empty (no bias).
Tensor layerNorm(Tensor x, Tensor gamma, Tensor beta, double epsilon);
Tensor rmsNorm(Tensor x, Tensor gamma, double epsilon);
Tensor softmax(Tensor x, int64_t dim = -1);
/// q [B, Hq, T, D], k and v [B, Hkv, S, D].
Tensor attention(Tensor q, Tensor k, Tensor v, bool causal,
                 std::optional<double> scale = std::nullopt);
/// x [..., T, D]; `positions` [T] may be empty (0..T-1). `invFreq`, when not
/// empty, holds D/2 per-pair inverse frequencies that replace theta^(-2i/D)
/// (a scaled rope: ropeInverseFrequencies in frontend/config).
Tensor rope(Tensor x, double theta, Tensor positions = Tensor(),
            llvm::ArrayRef<double> invFreq = {});
enum class GeluApprox { Tanh, Erf };
Tensor gelu(Tensor x, GeluApprox approximation);
Tensor silu(Tensor x);
Tensor swiglu(Tensor gate, Tensor up);
enum class Reduction { Mean, Sum, None };
Tensor crossEntropy(Tensor logits, Tensor targets,
                    Reduction reduction = Reduction::Mean,
                    std::optional<int64_t> ignoreIndex = std::nullopt);
/// Router logits [N, E] -> (weights [N, k], experts [N, k] i32).
std::pair<Tensor, Tensor> moeTopK(Tensor logits, int64_t k, bool normalize);
/// x [N, D] -> [experts, capacity, D].
Tensor moeDispatch(Tensor x, Tensor indices, int64_t experts,
                   int64_t capacity);
/// expertOut [E, C, D] -> [N, D].
Tensor moeCombine(Tensor expertOut, Tensor weights, Tensor indices);

} // namespace llmc

#endif // LLMC_FRONTEND_TRACE_H
