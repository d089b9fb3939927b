//===- Matmul.cpp - CPU kernel of the batched matmul -------------===//
//
// Float matmuls go to OpenBLAS: sgemm for f32, bf16 and f16 (converted to
// f32 first; the f32 result is rounded to the result type on store), dgemm
// for f64. sgemm accumulates in f32, so an f32 result has the usual
// K·eps·Σ|a·b| error bound. Batches loop over one GEMM each, except that a
// rank-2 rhs shared by every batch with an untransposed lhs is one GEMM of
// batch·M rows. Integer matmuls are a plain loop accumulating in int64,
// wrapping on overflow. OpenBLAS uses its own threads; the integer loop and
// the conversions use the pool.
//
// MatmulEpilogue keeps the product in the GEMM's precision (f32; f64 for
// f64 operands), applies the bias add, gelu or residual add to it there, and
// rounds each result once, as cuBLASLt's epilogues do. For f32 operands that
// is bit for bit the unfused program (an f32 product, f32 adds, gelu in f64
// from the f32 sum); for bf16 it removes the rounding of the product and
// of the sum before gelu (docs/cuda.md, "Numerics").
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/PrimitiveHelpers.h"

#include <cblas.h>

namespace llmc::rt {

using namespace primitive;

void setBlasThreads(unsigned threads) {
  // OpenBLAS keeps its count for 0, so "every core" is the count it chose
  // at start-up (the cores, or OPENBLAS_NUM_THREADS).
  static const int initial = openblas_get_num_threads();
  openblas_set_num_threads(threads == 0 ? initial : static_cast<int>(threads));
}

namespace {

/// The problem, from validated operands.
struct MatmulShape {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool transA = false, transB = false, sharedRhs = false;
};

Status checkMatmul(const KernelArgs &args, MatmulShape &mm) {
  LLMC_RETURN_IF_ERROR(checkLaunch(args, 2, 1, 2));
  const TensorRef &lhs = args.inputs[0], &rhs = args.inputs[1];
  const TensorRef &out = args.outputs[0];
  for (int i = 0; i < 2; ++i)
    if (args.attrs.ints[i] != 0 && args.attrs.ints[i] != 1)
      return args.error(
          std::string("expected ") + (i == 0 ? "transpose_a" : "transpose_b") +
          " to be 0 or 1, got " + std::to_string(args.attrs.ints[i]));
  mm.transA = args.attrs.ints[0] != 0;
  mm.transB = args.attrs.ints[1] != 0;
  LLMC_RETURN_IF_ERROR(expectDType(args, "lhs", lhs.dtype, kNumericTypes));
  LLMC_RETURN_IF_ERROR(expectSameDType(args, "rhs", rhs.dtype, lhs.dtype));
  if (!(isFloat(lhs.dtype) && out.dtype == DType::F32)) // f32 may widen
    LLMC_RETURN_IF_ERROR(expectSameDType(args, "result", out.dtype, lhs.dtype));
  if (lhs.rank() < 2 || rhs.rank() < 2)
    return args.error("expected operands of rank at least 2, got ranks " +
                      std::to_string(lhs.rank()) + " and " +
                      std::to_string(rhs.rank()));
  Shape batch(lhs.shape.begin(), lhs.shape.end() - 2);
  mm.sharedRhs = rhs.rank() == 2;
  if (!mm.sharedRhs && Shape(rhs.shape.begin(), rhs.shape.end() - 2) != batch)
    return args.error("expected rhs batch dimensions " + formatShape(batch) +
                      " (or a rank-2 rhs shared by all batches), got " +
                      formatShape(rhs.shape));
  int64_t lr = lhs.rank(), rr = rhs.rank();
  mm.batch = numElements(batch);
  mm.m = lhs.shape[lr - (mm.transA ? 1 : 2)];
  mm.k = lhs.shape[lr - (mm.transA ? 2 : 1)];
  int64_t rhsK = rhs.shape[rr - (mm.transB ? 1 : 2)];
  mm.n = rhs.shape[rr - (mm.transB ? 2 : 1)];
  if (mm.k != rhsK)
    return args.error("expected contraction sizes to match, got " +
                      std::to_string(mm.k) + " and " + std::to_string(rhsK));
  Shape expected = batch;
  expected.push_back(mm.m);
  expected.push_back(mm.n);
  LLMC_RETURN_IF_ERROR(expectShape(args, "result", out.shape, expected));
  if (isFloat(lhs.dtype)) {
    int64_t limit = std::numeric_limits<blasint>::max();
    if (mm.m > limit || mm.n > limit || mm.k > limit)
      return args.error("expected matrix sizes below " + std::to_string(limit) +
                        " (the BLAS integer), got " + formatShape(expected) +
                        " with K " + std::to_string(mm.k));
  }
  return Status::ok();
}

void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
          const float *a, const float *b, float *c) {
  cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a,
              transA ? m : k, b, transB ? k : n, 0.0f, c, n);
}
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
          const double *a, const double *b, double *c) {
  cblas_dgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans,
              transB ? CblasTrans : CblasNoTrans, m, n, k, 1.0, a,
              transA ? m : k, b, transB ? k : n, 0.0, c, n);
}

/// `t`'s elements as G (float or double): its own buffer when it already is,
/// else a converted copy held in `scratch`.
template <typename G>
const G *asGemmType(const TensorRef &t, std::vector<G> &scratch,
                    ThreadPool &pool) {
  bool same =
      std::is_same_v<G, float> ? t.dtype == DType::F32 : t.dtype == DType::F64;
  if (same)
    return static_cast<const G *>(t.data);
  scratch.resize(static_cast<size_t>(t.numElements()));
  visitDType<kFloatTypes>(t.dtype, [&](auto elem) {
    using E = decltype(elem);
    const auto *x = dataOf<E>(t);
    // Exact: G is at least as wide as the storage type.
    forEachElement(pool, t.numElements(), [&](int64_t i) {
      scratch[i] = static_cast<G>(E::load(x[i]));
    });
  });
  return scratch.data();
}

/// Every batch through BLAS in precision G, then stored to the result type.
template <typename G>
void floatMatmul(const KernelArgs &args, const MatmulShape &mm) {
  const TensorRef &out = args.outputs[0];
  std::vector<G> lhsScratch, rhsScratch, outScratch;
  const G *a = asGemmType<G>(args.inputs[0], lhsScratch, args.pool);
  const G *b = asGemmType<G>(args.inputs[1], rhsScratch, args.pool);
  bool direct = std::is_same_v<G, float> ? out.dtype == DType::F32
                                         : out.dtype == DType::F64;
  G *c = static_cast<G *>(out.data);
  if (!direct) {
    outScratch.resize(static_cast<size_t>(out.numElements()));
    c = outScratch.data();
  }
  if (mm.k == 0) {
    std::fill(c, c + out.numElements(), G(0)); // an empty sum
  } else if (mm.batch > 0 && mm.m > 0 && mm.n > 0) {
    int64_t limit = std::numeric_limits<blasint>::max();
    if (mm.sharedRhs && !mm.transA && mm.batch * mm.m <= limit) {
      gemm(false, mm.transB, mm.batch * mm.m, mm.n, mm.k, a, b, c);
    } else {
      for (int64_t i = 0; i < mm.batch; ++i)
        gemm(mm.transA, mm.transB, mm.m, mm.n, mm.k, a + i * mm.m * mm.k,
             mm.sharedRhs ? b : b + i * mm.k * mm.n, c + i * mm.m * mm.n);
    }
  }
  if (direct)
    return;
  visitDType<kFloatTypes>(out.dtype, [&](auto elem) {
    using E = decltype(elem);
    auto *y = dataOf<E>(out);
    forEachElement(args.pool, out.numElements(),
                   [&](int64_t i) { y[i] = E::fromDouble(c[i]); });
  });
}

/// The integer matmul: exact (wrapping) int64 accumulation, parallel over
/// result rows.
template <typename E>
void intMatmul(const KernelArgs &args, const MatmulShape &mm) {
  const auto *a = dataOf<E>(args.inputs[0]);
  const auto *b = dataOf<E>(args.inputs[1]);
  auto *y = dataOf<E>(args.outputs[0]);
  // Element (row, col) of one batch's operand, stored transposed or not.
  int64_t aRow = mm.transA ? 1 : mm.k, aCol = mm.transA ? mm.m : 1;
  int64_t bRow = mm.transB ? 1 : mm.n, bCol = mm.transB ? mm.k : 1;
  args.pool.parallelFor(
      mm.batch * mm.m, grainFor(mm.n * mm.k), [&](int64_t begin, int64_t end) {
        std::vector<int64_t> acc(mm.n);
        for (int64_t row = begin; row < end; ++row) {
          int64_t i = row / mm.m, r = row % mm.m;
          const auto *ab = a + i * mm.m * mm.k;
          const auto *bb = mm.sharedRhs ? b : b + i * mm.k * mm.n;
          std::fill(acc.begin(), acc.end(), 0);
          for (int64_t kk = 0; kk < mm.k; ++kk) {
            int64_t av = ab[r * aRow + kk * aCol];
            for (int64_t col = 0; col < mm.n; ++col)
              acc[col] = wrapAdd<int64_t>(
                  acc[col], wrapMul<int64_t>(av, bb[kk * bRow + col * bCol]));
          }
          for (int64_t col = 0; col < mm.n; ++col)
            y[row * mm.n + col] = static_cast<typename E::Storage>(acc[col]);
        }
      });
}

/// The epilogue on the unrounded product `c` (batch·M rows of N), into the
/// result (and the pre-activation for BiasGeluAux).
template <typename G>
void applyEpilogue(const KernelArgs &args, MatmulEpilogueKind kind,
                   const G *c, int64_t n) {
  const TensorRef &bias = args.inputs[2], &out = args.outputs[0];
  const TensorRef *residual =
      kind == MatmulEpilogueKind::BiasResidual ? &args.inputs[3] : nullptr;
  const TensorRef *pre =
      kind == MatmulEpilogueKind::BiasGeluAux ? &args.outputs[1] : nullptr;
  forEachElement(args.pool, out.numElements(), [&](int64_t i) {
    // The adds in G, as the unfused f32 (or f64) adds compute them.
    G sum = c[i] + static_cast<G>(loadFloat(bias, i % n));
    switch (kind) {
    case MatmulEpilogueKind::Bias:
      storeFloat(out, i, sum);
      break;
    case MatmulEpilogueKind::BiasGeluAux:
      storeFloat(*pre, i, sum);
      [[fallthrough]];
    case MatmulEpilogueKind::BiasGelu:
      storeFloat(out, i, geluTanh(static_cast<double>(sum)));
      break;
    case MatmulEpilogueKind::BiasResidual:
      storeFloat(out, i,
                 static_cast<G>(static_cast<G>(loadFloat(*residual, i)) + sum));
      break;
    case MatmulEpilogueKind::BiasGradient: // biasGradientMatmul
      break;
    }
  });
}

/// The product in G into a scratch of the result's shape, then the epilogue.
template <typename G>
void floatMatmulEpilogue(const KernelArgs &args, const MatmulShape &mm,
                         MatmulEpilogueKind kind) {
  std::vector<G> product(
      static_cast<size_t>(args.outputs[0].numElements()));
  TensorRef scratch{product.data(),
                    std::is_same_v<G, float> ? DType::F32 : DType::F64,
                    args.outputs[0].shape};
  std::vector<TensorRef> inputs = {args.inputs[0], args.inputs[1]};
  std::vector<TensorRef> outputs = {scratch};
  KernelAttrs attrs{{args.attrs.ints[0], args.attrs.ints[1]}, {}};
  KernelArgs gemmArgs{KernelKind::Matmul, attrs, inputs, outputs, args.pool};
  floatMatmul<G>(gemmArgs, mm);
  applyEpilogue<G>(args, kind, product.data(), mm.n);
}

/// BiasGradient: the product exactly as Matmul computes it, and the rhs
/// summed over K exactly as ReduceSum computes it (in f64, rounded once),
/// so that the command has the bits of the two it replaces.
Status biasGradientMatmul(const KernelArgs &args, const KernelArgs &gemmArgs,
                          const MatmulShape &mm) {
  const TensorRef &out = args.outputs[0], &grad = args.outputs[1];
  const TensorRef &rhs = args.inputs[1];
  LLMC_RETURN_IF_ERROR(
      expectSameDType(args, "bias gradient", grad.dtype, out.dtype));
  if (grad.numElements() != mm.n)
    return args.error("expected a bias gradient of " + std::to_string(mm.n) +
                      " elements, got " + formatShape(grad.shape));
  LLMC_RETURN_IF_ERROR(cpuMatmul(gemmArgs));
  std::vector<TensorRef> rows = {
      {rhs.data, rhs.dtype, mm.transB ? Shape{mm.n, mm.k} : Shape{mm.k, mm.n}}};
  std::vector<TensorRef> sums = {{grad.data, grad.dtype, Shape{mm.n}}};
  KernelAttrs dims{{mm.transB ? 1 : 0}, {}};
  KernelArgs reduceArgs{KernelKind::ReduceSum, dims, rows, sums, args.pool};
  return cpuReduceSum(reduceArgs);
}

} // namespace

Status cpuMatmulEpilogue(const KernelArgs &args) {
  LLMC_RETURN_IF_ERROR(checkOperands(args));
  if (args.attrs.ints.size() != 3 || !args.attrs.floats.empty())
    return args.error("expected 3 integer attributes (transpose_a, "
                      "transpose_b, epilogue), got " +
                      std::to_string(args.attrs.ints.size()));
  int64_t code = args.attrs.ints[2];
  if (code < 0 || code >= kNumMatmulEpilogueKinds)
    return args.error("expected an epilogue in [0, " +
                      std::to_string(kNumMatmulEpilogueKinds) + "), got " +
                      std::to_string(code));
  auto kind = static_cast<MatmulEpilogueKind>(code);
  LLMC_RETURN_IF_ERROR(args.expectArity(matmulEpilogueInputs(kind),
                                        matmulEpilogueOutputs(kind)));
  // The product's checks are Matmul's, on the first two inputs.
  std::vector<TensorRef> inputs = {args.inputs[0], args.inputs[1]};
  std::vector<TensorRef> outputs = {args.outputs[0]};
  KernelAttrs attrs{{args.attrs.ints[0], args.attrs.ints[1]}, {}};
  KernelArgs gemmArgs{args.kind, attrs, inputs, outputs, args.pool};
  MatmulShape mm;
  LLMC_RETURN_IF_ERROR(checkMatmul(gemmArgs, mm));
  const TensorRef &out = args.outputs[0];
  LLMC_RETURN_IF_ERROR(expectDType(args, "result", out.dtype, kFloatTypes));
  if (kind == MatmulEpilogueKind::BiasGradient)
    return biasGradientMatmul(args, gemmArgs, mm);
  LLMC_RETURN_IF_ERROR(
      expectSameDType(args, "bias", args.inputs[2].dtype, out.dtype));
  LLMC_RETURN_IF_ERROR(expectShape(args, "bias", args.inputs[2].shape,
                                   Shape{mm.n}));
  if (kind == MatmulEpilogueKind::BiasResidual) {
    LLMC_RETURN_IF_ERROR(expectSameDType(args, "residual",
                                         args.inputs[3].dtype, out.dtype));
    LLMC_RETURN_IF_ERROR(
        expectShape(args, "residual", args.inputs[3].shape, out.shape));
  }
  if (kind == MatmulEpilogueKind::BiasGeluAux) {
    LLMC_RETURN_IF_ERROR(expectSameDType(args, "pre-activation",
                                         args.outputs[1].dtype, out.dtype));
    LLMC_RETURN_IF_ERROR(expectShape(args, "pre-activation",
                                     args.outputs[1].shape, out.shape));
  }
  if (args.inputs[0].dtype == DType::F64)
    floatMatmulEpilogue<double>(args, mm, kind);
  else
    floatMatmulEpilogue<float>(args, mm, kind);
  return Status::ok();
}

Status cpuMatmul(const KernelArgs &args) {
  MatmulShape mm;
  LLMC_RETURN_IF_ERROR(checkMatmul(args, mm));
  DType dtype = args.inputs[0].dtype;
  if (dtype == DType::F64)
    floatMatmul<double>(args, mm);
  else if (isFloat(dtype))
    floatMatmul<float>(args, mm);
  else
    visitDType<kIntTypes>(
        dtype, [&](auto elem) { intMatmul<decltype(elem)>(args, mm); });
  return Status::ok();
}

} // namespace llmc::rt
