// Malformed launches of the primitive CPU kernels: each returns
// InvalidArgument with a message naming the kernel, what it expected and
// what it got, and writes nothing out of bounds.
#include "KernelTestUtil.h"

namespace llmc::rt::test {
namespace {

Tensor f32(Shape shape) { return Tensor(DType::F32, std::move(shape)); }

TEST(PrimitiveErrors, Arity) {
  Tensor a = f32({4}), y = f32({4});
  EXPECT_INVALID(run(KernelKind::Add, {&a}, {&y}),
                 "Add kernel: expected 2 inputs and 1 outputs, got 1 and 1");
  EXPECT_INVALID(run(KernelKind::Exp, {&a}, {}),
                 "Exp kernel: expected 1 inputs and 1 outputs, got 1 and 0");
  EXPECT_INVALID(run(KernelKind::Concat, {}, {&y}, {0}),
                 "Concat kernel: expected at least 1 input and 1 output");
  EXPECT_INVALID(run(KernelKind::Iota, {&a}, {&y}, {0}),
                 "Iota kernel: expected 0 inputs");
}

TEST(PrimitiveErrors, Attributes) {
  Tensor a = f32({4}), y = f32({4});
  EXPECT_INVALID(
      run(KernelKind::Neg, {&a}, {&y}, {1}),
      "Neg kernel: expected 0 integer and 0 float attributes, got 1 and 0");
  EXPECT_INVALID(run(KernelKind::Gather, {&a, &a}, {&y}),
                 "Gather kernel: expected 1 integer");
  EXPECT_INVALID(run(KernelKind::ReduceSum, {&a}, {&y}, {0}, {1.0}),
                 "ReduceSum kernel: expected no float attributes, got 1");
}

TEST(PrimitiveErrors, DTypes) {
  Tensor i = Tensor(DType::I32, {4}), x = f32({4}), y = f32({4});
  Tensor b = Tensor(DType::BF16, {4}), m = Tensor(DType::I1, {4});
  EXPECT_INVALID(
      run(KernelKind::Exp, {&i}, {&i}),
      "Exp kernel: expected input of dtype f32, f64, bf16 or f16, got i32");
  EXPECT_INVALID(run(KernelKind::Add, {&x, &b}, {&y}),
                 "Add kernel: expected rhs of dtype f32, got bf16");
  EXPECT_INVALID(
      run(KernelKind::Neg, {&m}, {&m}),
      "expected input of dtype f32, f64, bf16, f16, i32 or i64, got i1");
  EXPECT_INVALID(run(KernelKind::Exp, {&x}, {&b}),
                 "expected result of dtype f32, got bf16");
  EXPECT_INVALID(run(KernelKind::Compare, {&x, &x}, {&y}, {0}),
                 "Compare kernel: expected result of dtype i1, got f32");
  EXPECT_INVALID(run(KernelKind::Select, {&x, &x, &x}, {&y}),
                 "Select kernel: expected cond of dtype i1, got f32");
  EXPECT_INVALID(run(KernelKind::Gather, {&x, &x}, {&y}, {0}),
                 "expected indices of dtype i32 or i64, got f32");
  EXPECT_INVALID(run(KernelKind::Iota, {}, {&m}, {0}),
                 "Iota kernel: expected result of dtype");
  // max never widens; sums widen only to f32; integer matmuls never widen.
  Tensor b2 = Tensor(DType::BF16, {2, 2}), f1 = f32({2});
  EXPECT_INVALID(run(KernelKind::ReduceMax, {&b2}, {&f1}, {1}),
                 "expected result of dtype bf16, got f32");
  Tensor i2 = Tensor(DType::I32, {2, 2}), f22 = f32({2, 2});
  EXPECT_INVALID(run(KernelKind::Matmul, {&i2, &i2}, {&f22}, {0, 0}),
                 "Matmul kernel: expected result of dtype i32, got f32");
}

TEST(PrimitiveErrors, ElementwiseShapes) {
  Tensor a = f32({4, 3}), b = f32({3, 4}), y = f32({4, 3});
  EXPECT_INVALID(run(KernelKind::Mul, {&a, &b}, {&y}),
                 "Mul kernel: expected rhs of shape [4, 3], got [3, 4]");
  Tensor z = f32({12});
  EXPECT_INVALID(run(KernelKind::Tanh, {&a}, {&z}),
                 "expected result of shape [4, 3], got [12]");
  Tensor h = Tensor(DType::BF16, {3, 4});
  EXPECT_INVALID(run(KernelKind::Cast, {&a}, {&h}),
                 "Cast kernel: expected result of shape [4, 3], got [3, 4]");
}

TEST(PrimitiveErrors, ShapeOps) {
  Tensor x = f32({2, 3}), y = f32({3, 2});
  EXPECT_INVALID(run(KernelKind::Transpose, {&x}, {&y}, {0, 0}),
                 "expected a permutation of [0, 2), got [0, 0]");
  EXPECT_INVALID(run(KernelKind::Transpose, {&x}, {&x}, {1, 0}),
                 "expected result of shape [3, 2], got [2, 3]");

  Tensor row = f32({3}), b = f32({4, 5});
  EXPECT_INVALID(
      run(KernelKind::Broadcast, {&row}, {&b}, {1}),
      "expected input dimension 0 to be 1 or 5 (result dimension 1), got 3");
  EXPECT_INVALID(run(KernelKind::Broadcast, {&x}, {&b}, {1, 0}),
                 "expected dims to be strictly increasing, got [1, 0]");
  EXPECT_INVALID(run(KernelKind::Broadcast, {&row}, {&b}, {2}),
                 "expected dims[0] in [0, 2), got 2");

  Tensor s = f32({1, 3});
  EXPECT_INVALID(run(KernelKind::Slice, {&x}, {&s}, {0, 0, 1, 4, 1, 1}),
                 "expected 0 <= start <= limit <= 3 in dimension 1, got start "
                 "0 and limit 4");
  EXPECT_INVALID(run(KernelKind::Slice, {&x}, {&s}, {0, 0, 1, 3, 1, 0}),
                 "expected a positive stride in dimension 1, got 0");
  EXPECT_INVALID(run(KernelKind::Slice, {&x}, {&s}, {0, 0, 2, 3, 1, 1}),
                 "expected result of shape [2, 3], got [1, 3]");
  EXPECT_INVALID(run(KernelKind::Slice, {&x}, {&s}, {0, 0, 1, 3}),
                 "expected 6 integer");

  Tensor c = f32({2, 5}), wide = f32({2, 2});
  EXPECT_INVALID(run(KernelKind::Concat, {&x, &wide}, {&c}, {2}),
                 "expected dim in [0, 2), got 2");
  EXPECT_INVALID(run(KernelKind::Concat, {&x, &y}, {&c}, {1}),
                 "expected input #1 of shape [2, 2], got [3, 2]");
  EXPECT_INVALID(run(KernelKind::Concat, {&x, &row}, {&c}, {1}),
                 "expected input #1 of rank 2, got rank 1");
  EXPECT_INVALID(
      run(KernelKind::Concat, {&x, &x}, {&c}, {1}),
      "expected result dimension 1 to be the sum of the inputs' (6), got 5");
}

TEST(PrimitiveErrors, Reductions) {
  Tensor x = f32({2, 3, 4}), y = f32({2});
  EXPECT_INVALID(run(KernelKind::ReduceSum, {&x}, {&y}, {2, 1}),
                 "expected dims to be strictly increasing, got [2, 1]");
  EXPECT_INVALID(run(KernelKind::ReduceMean, {&x}, {&y}, {3}),
                 "expected dims[0] in [0, 3), got 3");
  EXPECT_INVALID(run(KernelKind::ReduceMax, {&x}, {&y}, {}),
                 "expected at least one dimension to reduce, got dims []");
  EXPECT_INVALID(
      run(KernelKind::ReduceSum, {&x}, {&y}, {1}),
      "expected result of shape [2, 4] or [2, 1, 4] (keep_dims), got [2]");
  Tensor i = Tensor(DType::I32, {2, 3}), iy = Tensor(DType::I32, {2});
  EXPECT_INVALID(run(KernelKind::ReduceMean, {&i}, {&iy}, {1}),
                 "expected input of dtype f32, f64, bf16 or f16, got i32");
}

TEST(PrimitiveErrors, Matmul) {
  Tensor a = f32({2, 4, 5}), b = f32({2, 6, 3}), y = f32({2, 4, 3});
  EXPECT_INVALID(
      run(KernelKind::Matmul, {&a, &b}, {&y}, {0, 0}),
      "Matmul kernel: expected contraction sizes to match, got 5 and 6");
  Tensor b3 = f32({3, 5, 3});
  EXPECT_INVALID(
      run(KernelKind::Matmul, {&a, &b3}, {&y}, {0, 0}),
      "expected rhs batch dimensions [2] (or a rank-2 rhs shared by all "
      "batches), got [3, 5, 3]");
  Tensor v = f32({5});
  EXPECT_INVALID(run(KernelKind::Matmul, {&a, &v}, {&y}, {0, 0}),
                 "expected operands of rank at least 2, got ranks 3 and 1");
  Tensor w = f32({5, 3}), bad = f32({2, 3, 4});
  EXPECT_INVALID(run(KernelKind::Matmul, {&a, &w}, {&bad}, {0, 0}),
                 "expected result of shape [2, 4, 3], got [2, 3, 4]");
  EXPECT_INVALID(run(KernelKind::Matmul, {&a, &w}, {&y}, {0, 2}),
                 "expected transpose_b to be 0 or 1, got 2");
}

TEST(PrimitiveErrors, GatherScatterCompareIota) {
  Tensor table = f32({10, 4}), ids = Tensor(DType::I32, {3});
  Tensor rows = f32({3, 4}), wrong = f32({4, 3});
  EXPECT_INVALID(run(KernelKind::Gather, {&table, &ids}, {&rows}, {2}),
                 "Gather kernel: expected dim in [0, 2), got 2");
  EXPECT_INVALID(run(KernelKind::Gather, {&table, &ids}, {&wrong}, {0}),
                 "expected result of shape [3, 4], got [4, 3]");
  Tensor grad = f32({10, 4});
  EXPECT_INVALID(
      run(KernelKind::ScatterAdd, {&table, &ids, &wrong}, {&grad}, {0}),
      "ScatterAdd kernel: expected updates of shape [3, 4], got [4, 3]");
  Tensor small = f32({9, 4});
  EXPECT_INVALID(
      run(KernelKind::ScatterAdd, {&table, &ids, &rows}, {&small}, {0}),
      "expected result of shape [10, 4], got [9, 4]");
  Tensor mask = Tensor(DType::I1, {10, 4});
  EXPECT_INVALID(run(KernelKind::Compare, {&table, &table}, {&mask}, {6}),
                 "Compare kernel: expected direction in [0, 5] (eq ne lt le gt "
                 "ge), got 6");
  EXPECT_INVALID(run(KernelKind::Iota, {}, {&table}, {-1}),
                 "Iota kernel: expected dim in [0, 2), got -1");
}

TEST(PrimitiveErrors, MalformedTensors) {
  Tensor x = f32({4}), y = f32({4});
  TensorRef missing{nullptr, DType::F32, {4}};
  TensorRef negative{x.ref().data, DType::F32, {-4}};
  KernelAttrs none;
  std::vector<TensorRef> out = {y.ref()};
  EXPECT_INVALID(
      runCpuKernel(KernelKind::Neg, none, {missing}, out, testPool()),
      "Neg kernel: expected input #0 to have data, got a null pointer");
  EXPECT_INVALID(
      runCpuKernel(KernelKind::Neg, none, {negative}, out, testPool()),
      "expected input #0 to have non-negative dimensions, got [-4]");
  TensorRef unknown{x.ref().data, static_cast<DType>(42), {4}};
  EXPECT_INVALID(
      runCpuKernel(KernelKind::Transpose, KernelAttrs{{0}, {}}, {unknown}, out,
                   testPool()),
      "Transpose kernel: expected input #0 to have a known dtype, got id 42");
}

} // namespace
} // namespace llmc::rt::test
