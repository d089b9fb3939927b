// RUN: llmc-opt %s --split-input-file --canonicalize | FileCheck %s
// The backward of three slices of one tensor (GPT-2's q, k and v out of the
// c_attn projection): each slice's gradient padded with zeros, the three
// added. Canonicalization makes it one concat of the three gradients.

// CHECK-LABEL: func.func @qkv
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4xf32>, %[[K:.*]]: tensor<2x4xf32>, %[[V:.*]]: tensor<2x4xf32>)
// CHECK-NEXT: %[[R:.*]] = llmc.concat %[[Q]], %[[K]], %[[V]] dim 1
// CHECK-NEXT: return %[[R]]
func.func @qkv(%dq: tensor<2x4xf32>, %dk: tensor<2x4xf32>, %dv: tensor<2x4xf32>) -> tensor<2x12xf32> {
  %zero = llmc.constant dense<0.0> : tensor<f32>
  %z8 = llmc.broadcast %zero dims [] : tensor<f32> -> tensor<2x8xf32>
  %z4 = llmc.broadcast %zero dims [] : tensor<f32> -> tensor<2x4xf32>
  %pv = llmc.concat %z8, %dv dim 1 : (tensor<2x8xf32>, tensor<2x4xf32>) -> tensor<2x12xf32>
  %pk = llmc.concat %z4, %dk, %z4 dim 1 : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x12xf32>
  %pq = llmc.concat %dq, %z8 dim 1 : (tensor<2x4xf32>, tensor<2x8xf32>) -> tensor<2x12xf32>
  %s = llmc.add %pv, %pk : tensor<2x12xf32>
  %t = llmc.add %s, %pq : tensor<2x12xf32>
  return %t : tensor<2x12xf32>
}

// -----

// Two of three: the gap stays a zero broadcast.
// CHECK-LABEL: func.func @gap
// CHECK-DAG: %[[Z:.*]] = llmc.broadcast {{.*}} -> tensor<2x4xbf16>
// CHECK: llmc.concat %arg0, %[[Z]], %arg1 dim 1
// CHECK-NOT: llmc.add
func.func @gap(%a: tensor<2x4xbf16>, %b: tensor<2x4xbf16>) -> tensor<2x12xbf16> {
  %zero = llmc.constant dense<0.0> : tensor<bf16>
  %z8 = llmc.broadcast %zero dims [] : tensor<bf16> -> tensor<2x8xbf16>
  %pa = llmc.concat %a, %z8 dim 1 : (tensor<2x4xbf16>, tensor<2x8xbf16>) -> tensor<2x12xbf16>
  %pb = llmc.concat %z8, %b dim 1 : (tensor<2x8xbf16>, tensor<2x4xbf16>) -> tensor<2x12xbf16>
  %s = llmc.add %pa, %pb : tensor<2x12xbf16>
  return %s : tensor<2x12xbf16>
}

// -----

// Overlapping non-zero pieces are a real sum: left alone.
// CHECK-LABEL: func.func @overlap
// CHECK: llmc.add
func.func @overlap(%a: tensor<2x8xf32>, %b: tensor<2x8xf32>) -> tensor<2x12xf32> {
  %zero = llmc.constant dense<0.0> : tensor<f32>
  %z4 = llmc.broadcast %zero dims [] : tensor<f32> -> tensor<2x4xf32>
  %pa = llmc.concat %a, %z4 dim 1 : (tensor<2x8xf32>, tensor<2x4xf32>) -> tensor<2x12xf32>
  %pb = llmc.concat %z4, %b dim 1 : (tensor<2x4xf32>, tensor<2x8xf32>) -> tensor<2x12xf32>
  %s = llmc.add %pa, %pb : tensor<2x12xf32>
  return %s : tensor<2x12xf32>
}

// -----

// A padding that is not zero is not dropped.
// CHECK-LABEL: func.func @ones
// CHECK: llmc.add
func.func @ones(%a: tensor<2x4xf32>, %b: tensor<2x4xf32>) -> tensor<2x8xf32> {
  %one = llmc.constant dense<1.0> : tensor<f32>
  %o4 = llmc.broadcast %one dims [] : tensor<f32> -> tensor<2x4xf32>
  %pa = llmc.concat %a, %o4 dim 1 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
  %pb = llmc.concat %o4, %b dim 1 : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
  %s = llmc.add %pa, %pb : tensor<2x8xf32>
  return %s : tensor<2x8xf32>
}
