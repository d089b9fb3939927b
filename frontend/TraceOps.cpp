//===- TraceOps.cpp - one function per llmc op for the tracing API --------===//
//
// Each function computes the result type, creates the op at the tracer's
// current location with T::create, and verifies it (Tracer::wrap), so that
// a shape error is reported at the model part that made it.
//
//===----------------------------------------------------------------------===//

#include "frontend/Trace.h"
#include "ir/LlmcOps.h"

using namespace mlir;

namespace llmc {
namespace {

RankedTensorType withShape(Tensor like, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, like.type().getElementType());
}

RankedTensorType withElement(ArrayRef<int64_t> shape, Type element) {
  return RankedTensorType::get(shape, element);
}

int64_t normalizeDim(int64_t dim, int64_t rank) {
  return dim < 0 ? dim + rank : dim;
}

SmallVector<int64_t> normalizeDims(ArrayRef<int64_t> dims, int64_t rank) {
  SmallVector<int64_t> result;
  for (int64_t d : dims)
    result.push_back(normalizeDim(d, rank));
  llvm::sort(result);
  return result;
}

/// The numpy broadcast of two shapes, or nullopt when they are incompatible.
std::optional<SmallVector<int64_t>> broadcastShapes(ArrayRef<int64_t> a,
                                                    ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> result(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      return std::nullopt;
    result[i] = std::max(da, db);
  }
  return result;
}

std::string shapeText(ArrayRef<int64_t> shape) {
  std::string text = "[";
  for (auto [i, d] : llvm::enumerate(shape))
    text += (i ? ", " : "") + std::to_string(d);
  return text + "]";
}

/// Broadcasts `a` and `b` to their common shape; on mismatch reports an
/// error and returns them unchanged (the op verifier then fails too).
std::pair<Tensor, Tensor> broadcastPair(Tensor a, Tensor b) {
  std::optional<SmallVector<int64_t>> shape =
      broadcastShapes(a.shape(), b.shape());
  if (!shape) {
    a.tracer().emitError() << "cannot broadcast shapes " << shapeText(a.shape())
                           << " and " << shapeText(b.shape())
                           << " together: aligned from the right, each "
                              "dimension must match or be 1";
    return {a, b};
  }
  return {broadcastTo(a, *shape), broadcastTo(b, *shape)};
}

template <typename OpT>
Tensor binary(Tensor a, Tensor b) {
  auto [x, y] = broadcastPair(a, b);
  Tracer &t = x.tracer();
  return t.wrap(OpT::create(t.builder(), t.location(), x.type(), x.value(),
                            y.value()));
}

template <typename OpT>
Tensor unary(Tensor x) {
  Tracer &t = x.tracer();
  return t.wrap(OpT::create(t.builder(), t.location(), x.type(), x.value()));
}

Tensor scalarLike(Tensor x, double value) {
  return x.tracer().constant(value, x.shape(), x.dtype());
}

} // namespace

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

Tensor operator+(Tensor a, Tensor b) { return binary<AddOp>(a, b); }
Tensor operator-(Tensor a, Tensor b) { return binary<SubOp>(a, b); }
Tensor operator*(Tensor a, Tensor b) { return binary<MulOp>(a, b); }
Tensor operator/(Tensor a, Tensor b) { return binary<DivOp>(a, b); }
Tensor operator+(Tensor a, double b) { return a + scalarLike(a, b); }
Tensor operator-(Tensor a, double b) { return a - scalarLike(a, b); }
Tensor operator*(Tensor a, double b) { return a * scalarLike(a, b); }
Tensor operator/(Tensor a, double b) { return a / scalarLike(a, b); }
Tensor operator*(double a, Tensor b) { return scalarLike(b, a) * b; }
Tensor operator-(Tensor a) { return unary<NegOp>(a); }
Tensor maximum(Tensor a, Tensor b) { return binary<MaxOp>(a, b); }
Tensor minimum(Tensor a, Tensor b) { return binary<MinOp>(a, b); }

Tensor abs(Tensor x) { return unary<AbsOp>(x); }
Tensor exp(Tensor x) { return unary<ExpOp>(x); }
Tensor log(Tensor x) { return unary<LogOp>(x); }
Tensor tanh(Tensor x) { return unary<TanhOp>(x); }
Tensor sqrt(Tensor x) { return unary<SqrtOp>(x); }
Tensor rsqrt(Tensor x) { return unary<RsqrtOp>(x); }

Tensor cast(Tensor x, DType dtype) {
  Tracer &t = x.tracer();
  if (x.dtype() == dtype)
    return x;
  return t.wrap(CastOp::create(t.builder(), t.location(),
                               withElement(x.shape(), t.elementType(dtype)),
                               x.value()));
}

//===----------------------------------------------------------------------===//
// Shapes
//===----------------------------------------------------------------------===//

Tensor broadcastTo(Tensor x, ArrayRef<int64_t> shape) {
  if (x.shape() == shape)
    return x;
  int64_t offset = static_cast<int64_t>(shape.size()) - x.rank();
  if (offset < 0) {
    x.tracer().emitError() << "cannot broadcast " << shapeText(x.shape())
                           << " to the lower-rank shape " << shapeText(shape);
    return x;
  }
  SmallVector<int64_t> dims;
  for (int64_t i = 0; i < x.rank(); ++i)
    dims.push_back(i + offset);
  return broadcastInDims(x, shape, dims);
}

Tensor broadcastInDims(Tensor x, ArrayRef<int64_t> shape,
                       ArrayRef<int64_t> dims) {
  Tracer &t = x.tracer();
  return t.wrap(BroadcastOp::create(t.builder(), t.location(),
                                    withShape(x, shape), x.value(), dims));
}

Tensor reshape(Tensor x, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> sizes(shape);
  int64_t known = 1, inferred = -1;
  for (auto [i, d] : llvm::enumerate(sizes)) {
    if (d == -1 && inferred < 0)
      inferred = static_cast<int64_t>(i);
    else
      known *= d;
  }
  if (inferred >= 0) {
    if (known <= 0 || x.numElements() % known != 0) {
      x.tracer().emitError() << "cannot reshape " << shapeText(x.shape())
                             << " to " << shapeText(shape)
                             << ": the element counts do not divide";
      return x;
    }
    sizes[inferred] = x.numElements() / known;
  }
  if (sizes == x.shape())
    return x;
  Tracer &t = x.tracer();
  return t.wrap(ReshapeOp::create(t.builder(), t.location(),
                                  withShape(x, sizes), x.value()));
}

Tensor transpose(Tensor x, ArrayRef<int64_t> permutation) {
  SmallVector<int64_t> shape;
  for (int64_t p : permutation)
    shape.push_back(p >= 0 && p < x.rank() ? x.dim(p) : 1);
  Tracer &t = x.tracer();
  return t.wrap(TransposeOp::create(t.builder(), t.location(),
                                    withShape(x, shape), x.value(),
                                    permutation));
}

Tensor slice(Tensor x, ArrayRef<int64_t> starts, ArrayRef<int64_t> limits,
             ArrayRef<int64_t> strides) {
  SmallVector<int64_t> shape;
  for (size_t i = 0; i < starts.size() && i < limits.size(); ++i) {
    int64_t stride = strides.empty() ? 1 : strides[i];
    shape.push_back(stride > 0 && limits[i] > starts[i]
                        ? llvm::divideCeil(limits[i] - starts[i], stride)
                        : 0);
  }
  Tracer &t = x.tracer();
  Builder &b = t.builder();
  DenseI64ArrayAttr strideAttr =
      strides.empty() ? DenseI64ArrayAttr() : b.getDenseI64ArrayAttr(strides);
  return t.wrap(SliceOp::create(t.builder(), t.location(),
                                withShape(x, shape), x.value(),
                                b.getDenseI64ArrayAttr(starts),
                                b.getDenseI64ArrayAttr(limits), strideAttr));
}

Tensor sliceDim(Tensor x, int64_t dim, int64_t start, int64_t size) {
  dim = normalizeDim(dim, x.rank());
  SmallVector<int64_t> starts(x.rank(), 0), limits(x.shape());
  starts[dim] = start;
  limits[dim] = start + size;
  return slice(x, starts, limits);
}

Tensor concat(ArrayRef<Tensor> inputs, int64_t dim) {
  Tensor first = inputs.front();
  dim = normalizeDim(dim, first.rank());
  SmallVector<int64_t> shape(first.shape());
  shape[dim] = 0;
  SmallVector<Value> values;
  for (const Tensor &input : inputs) {
    shape[dim] += input.dim(dim);
    values.push_back(input.value());
  }
  Tracer &t = first.tracer();
  return t.wrap(ConcatOp::create(t.builder(), t.location(),
                                 withShape(first, shape), values,
                                 static_cast<uint64_t>(dim)));
}

//===----------------------------------------------------------------------===//
// Reductions, matmul, gather/scatter, compare/select
//===----------------------------------------------------------------------===//

namespace {
template <typename OpT>
Tensor reduce(Tensor x, ArrayRef<int64_t> dims, bool keepDims) {
  SmallVector<int64_t> reduced = normalizeDims(dims, x.rank());
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < x.rank(); ++i) {
    if (!llvm::is_contained(reduced, i))
      shape.push_back(x.dim(i));
    else if (keepDims)
      shape.push_back(1);
  }
  Tracer &t = x.tracer();
  return t.wrap(OpT::create(t.builder(), t.location(), withShape(x, shape),
                            x.value(), reduced, keepDims));
}
} // namespace

Tensor sum(Tensor x, ArrayRef<int64_t> dims, bool keepDims) {
  return reduce<ReduceSumOp>(x, dims, keepDims);
}
Tensor max(Tensor x, ArrayRef<int64_t> dims, bool keepDims) {
  return reduce<ReduceMaxOp>(x, dims, keepDims);
}
Tensor mean(Tensor x, ArrayRef<int64_t> dims, bool keepDims) {
  return reduce<ReduceMeanOp>(x, dims, keepDims);
}

Tensor matmul(Tensor a, Tensor b, Transpose transpose) {
  bool ta = transpose == Transpose::A || transpose == Transpose::Both;
  bool tb = transpose == Transpose::B || transpose == Transpose::Both;
  SmallVector<int64_t> shape(a.shape().drop_back(2));
  shape.push_back(a.dim(ta ? -1 : -2));
  shape.push_back(b.dim(tb ? -2 : -1));
  Tracer &t = a.tracer();
  return t.wrap(MatmulOp::create(t.builder(), t.location(), withShape(a, shape),
                                 a.value(), b.value(), ta, tb));
}

Tensor gather(Tensor x, Tensor indices, int64_t dim) {
  dim = normalizeDim(dim, x.rank());
  SmallVector<int64_t> shape(x.shape().take_front(dim));
  llvm::append_range(shape, indices.shape());
  llvm::append_range(shape, x.shape().drop_front(dim + 1));
  Tracer &t = x.tracer();
  return t.wrap(GatherOp::create(t.builder(), t.location(), withShape(x, shape),
                                 x.value(), indices.value(),
                                 static_cast<uint64_t>(dim)));
}

Tensor scatterAdd(Tensor dest, Tensor indices, Tensor updates, int64_t dim) {
  dim = normalizeDim(dim, dest.rank());
  Tracer &t = dest.tracer();
  return t.wrap(ScatterAddOp::create(t.builder(), t.location(), dest.type(),
                                     dest.value(), indices.value(),
                                     updates.value(),
                                     static_cast<uint64_t>(dim)));
}

Tensor compare(Compare direction, Tensor a, Tensor b) {
  auto [x, y] = broadcastPair(a, b);
  CompareDirection predicate = CompareDirection::eq;
  switch (direction) {
  case Compare::Eq:
    predicate = CompareDirection::eq;
    break;
  case Compare::Ne:
    predicate = CompareDirection::ne;
    break;
  case Compare::Lt:
    predicate = CompareDirection::lt;
    break;
  case Compare::Le:
    predicate = CompareDirection::le;
    break;
  case Compare::Gt:
    predicate = CompareDirection::gt;
    break;
  case Compare::Ge:
    predicate = CompareDirection::ge;
    break;
  }
  Tracer &t = x.tracer();
  return t.wrap(CompareOp::create(
      t.builder(), t.location(),
      withElement(x.shape(), t.builder().getI1Type()), predicate, x.value(),
      y.value()));
}

Tensor select(Tensor cond, Tensor a, Tensor b) {
  auto [x, y] = broadcastPair(a, b);
  Tensor c = broadcastTo(cond, x.shape());
  Tracer &t = x.tracer();
  return t.wrap(SelectOp::create(t.builder(), t.location(), x.type(),
                                 c.value(), x.value(), y.value()));
}

//===----------------------------------------------------------------------===//
// Composite ops
//===----------------------------------------------------------------------===//

Tensor embedding(Tensor table, Tensor ids) {
  SmallVector<int64_t> shape(ids.shape());
  shape.push_back(table.dim(-1));
  Tracer &t = table.tracer();
  return t.wrap(EmbeddingOp::create(t.builder(), t.location(),
                                    withShape(table, shape), table.value(),
                                    ids.value()));
}

Tensor layerNorm(Tensor x, Tensor gamma, Tensor beta, double epsilon) {
  Tracer &t = x.tracer();
  return t.wrap(LayerNormOp::create(t.builder(), t.location(), x.type(),
                                    x.value(), gamma.value(), beta.value(),
                                    t.builder().getF64FloatAttr(epsilon)));
}

Tensor rmsNorm(Tensor x, Tensor gamma, double epsilon) {
  Tracer &t = x.tracer();
  return t.wrap(RmsNormOp::create(t.builder(), t.location(), x.type(),
                                  x.value(), gamma.value(),
                                  t.builder().getF64FloatAttr(epsilon)));
}

Tensor softmax(Tensor x, int64_t dim) {
  Tracer &t = x.tracer();
  return t.wrap(SoftmaxOp::create(
      t.builder(), t.location(), x.type(), x.value(),
      static_cast<uint64_t>(normalizeDim(dim, x.rank()))));
}

Tensor attention(Tensor q, Tensor k, Tensor v, bool causal,
                 std::optional<double> scale) {
  Tracer &t = q.tracer();
  FloatAttr scaleAttr =
      scale ? t.builder().getF64FloatAttr(*scale) : FloatAttr();
  // No log-sum-exp result: autodiff asks for it when it differentiates.
  return t.wrap(AttentionOp::create(t.builder(), t.location(), q.type(),
                                    /*lse=*/Type(), q.value(), k.value(),
                                    v.value(), causal, scaleAttr,
                                    AttentionLayoutAttr()));
}

Tensor rope(Tensor x, double theta, Tensor positions,
            llvm::ArrayRef<double> invFreq) {
  Tracer &t = x.tracer();
  DenseF64ArrayAttr frequencies =
      invFreq.empty() ? DenseF64ArrayAttr()
                      : t.builder().getDenseF64ArrayAttr(invFreq);
  return t.wrap(RopeOp::create(t.builder(), t.location(), x.type(), x.value(),
                               positions.value(),
                               t.builder().getF64FloatAttr(theta),
                               frequencies));
}

Tensor gelu(Tensor x, GeluApprox approximation) {
  Tracer &t = x.tracer();
  return t.wrap(GeluOp::create(t.builder(), t.location(), x.type(), x.value(),
                               approximation == GeluApprox::Tanh
                                   ? GeluApproximation::tanh
                                   : GeluApproximation::erf));
}

Tensor silu(Tensor x) { return unary<SiluOp>(x); }

Tensor swiglu(Tensor gate, Tensor up) {
  Tracer &t = gate.tracer();
  return t.wrap(SwigluOp::create(t.builder(), t.location(), gate.type(),
                                 gate.value(), up.value()));
}

Tensor crossEntropy(Tensor logits, Tensor targets, Reduction reduction,
                    std::optional<int64_t> ignoreIndex) {
  Tracer &t = logits.tracer();
  LossReduction kind = reduction == Reduction::Mean  ? LossReduction::mean
                       : reduction == Reduction::Sum ? LossReduction::sum
                                                     : LossReduction::none;
  SmallVector<int64_t> shape;
  if (reduction == Reduction::None)
    shape.assign(targets.shape().begin(), targets.shape().end());
  IntegerAttr ignore =
      ignoreIndex ? t.builder().getI64IntegerAttr(*ignoreIndex) : IntegerAttr();
  return t.wrap(CrossEntropyOp::create(
      t.builder(), t.location(),
      withElement(shape, t.builder().getF32Type()), /*lse=*/Type(),
      logits.value(), targets.value(), ignore, kind));
}

std::pair<Tensor, Tensor> moeTopK(Tensor logits, int64_t k, bool normalize) {
  Tracer &t = logits.tracer();
  SmallVector<int64_t> shape{logits.dim(0), k};
  Operation *op = MoeTopKOp::create(
      t.builder(), t.location(), withShape(logits, shape),
      withElement(shape, t.builder().getI32Type()), logits.value(),
      static_cast<uint64_t>(k), normalize);
  Tensor weights = t.wrap(op, 0);
  return {weights, Tensor(&t, op->getResult(1))};
}

Tensor moeDispatch(Tensor x, Tensor indices, int64_t experts,
                   int64_t capacity) {
  Tracer &t = x.tracer();
  return t.wrap(MoeDispatchOp::create(
      t.builder(), t.location(), withShape(x, {experts, capacity, x.dim(-1)}),
      x.value(), indices.value()));
}

Tensor moeCombine(Tensor expertOut, Tensor weights, Tensor indices) {
  Tracer &t = expertOut.tracer();
  return t.wrap(MoeCombineOp::create(
      t.builder(), t.location(),
      withShape(expertOut, {indices.dim(0), expertOut.dim(-1)}),
      expertOut.value(), weights.value(), indices.value()));
}

} // namespace llmc
