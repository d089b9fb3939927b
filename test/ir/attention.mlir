// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// Neither causal nor scale is printed when absent.
// CHECK-LABEL: func.func @plain
// CHECK-SAME:    (%[[Q:.+]]: tensor<2x4x16x8xf32>, %[[K:.+]]: tensor<2x4x16x8xf32>, %[[V:.+]]: tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
// CHECK-NEXT:    %[[O:.+]] = llmc.attention %[[Q]], %[[K]], %[[V]] : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
// CHECK-NEXT:    return %[[O]] : tensor<2x4x16x8xf32>
func.func @plain(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x16x8xf32>, %v: tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32> {
  %o = llmc.attention %q, %k, %v : (tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x16x8xf32>
  return %o : tensor<2x4x16x8xf32>
}

// -----

// CHECK-LABEL: func.func @causal_bf16
// CHECK-SAME:    (%[[Q:.+]]: tensor<2x4x16x8xbf16>, %[[K:.+]]: tensor<2x4x16x8xbf16>, %[[V:.+]]: tensor<2x4x16x8xbf16>) -> tensor<2x4x16x8xbf16>
// CHECK-NEXT:    %[[O:.+]] = llmc.attention %[[Q]], %[[K]], %[[V]] causal : (tensor<2x4x16x8xbf16>, tensor<2x4x16x8xbf16>, tensor<2x4x16x8xbf16>) -> tensor<2x4x16x8xbf16>
// CHECK-NEXT:    return %[[O]] : tensor<2x4x16x8xbf16>
func.func @causal_bf16(%q: tensor<2x4x16x8xbf16>, %k: tensor<2x4x16x8xbf16>, %v: tensor<2x4x16x8xbf16>) -> tensor<2x4x16x8xbf16> {
  %o = llmc.attention %q, %k, %v causal : (tensor<2x4x16x8xbf16>, tensor<2x4x16x8xbf16>, tensor<2x4x16x8xbf16>) -> tensor<2x4x16x8xbf16>
  return %o : tensor<2x4x16x8xbf16>
}

// -----

// Grouped query attention: 6 query heads read 2 key/value heads.
// CHECK-LABEL: func.func @grouped_query
// CHECK-SAME:    (%[[Q:.+]]: tensor<1x6x16x8xf16>, %[[K:.+]]: tensor<1x2x16x8xf16>, %[[V:.+]]: tensor<1x2x16x8xf16>) -> tensor<1x6x16x8xf16>
// CHECK-NEXT:    %[[O:.+]] = llmc.attention %[[Q]], %[[K]], %[[V]] causal : (tensor<1x6x16x8xf16>, tensor<1x2x16x8xf16>, tensor<1x2x16x8xf16>) -> tensor<1x6x16x8xf16>
// CHECK-NEXT:    return %[[O]] : tensor<1x6x16x8xf16>
func.func @grouped_query(%q: tensor<1x6x16x8xf16>, %k: tensor<1x2x16x8xf16>, %v: tensor<1x2x16x8xf16>) -> tensor<1x6x16x8xf16> {
  %o = llmc.attention %q, %k, %v causal : (tensor<1x6x16x8xf16>, tensor<1x2x16x8xf16>, tensor<1x2x16x8xf16>) -> tensor<1x6x16x8xf16>
  return %o : tensor<1x6x16x8xf16>
}

// -----

// Multi-query attention: one key/value head.
// CHECK-LABEL: func.func @multi_query
// CHECK-SAME:    (%[[Q:.+]]: tensor<1x4x16x8xf32>, %[[K:.+]]: tensor<1x1x16x8xf32>, %[[V:.+]]: tensor<1x1x16x8xf32>) -> tensor<1x4x16x8xf32>
// CHECK-NEXT:    %[[O:.+]] = llmc.attention %[[Q]], %[[K]], %[[V]] : (tensor<1x4x16x8xf32>, tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>) -> tensor<1x4x16x8xf32>
// CHECK-NEXT:    return %[[O]] : tensor<1x4x16x8xf32>
func.func @multi_query(%q: tensor<1x4x16x8xf32>, %k: tensor<1x1x16x8xf32>, %v: tensor<1x1x16x8xf32>) -> tensor<1x4x16x8xf32> {
  %o = llmc.attention %q, %k, %v : (tensor<1x4x16x8xf32>, tensor<1x1x16x8xf32>, tensor<1x1x16x8xf32>) -> tensor<1x4x16x8xf32>
  return %o : tensor<1x4x16x8xf32>
}

// -----

// An explicit scale, printed after causal.
// CHECK-LABEL: func.func @causal_scale
// CHECK-SAME:    (%[[Q:.+]]: tensor<1x2x16x8xf32>, %[[K:.+]]: tensor<1x2x16x8xf32>, %[[V:.+]]: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
// CHECK-NEXT:    %[[O:.+]] = llmc.attention %[[Q]], %[[K]], %[[V]] causal scale 1.250000e-01 : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
// CHECK-NEXT:    return %[[O]] : tensor<1x2x16x8xf32>
func.func @causal_scale(%q: tensor<1x2x16x8xf32>, %k: tensor<1x2x16x8xf32>, %v: tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32> {
  %o = llmc.attention %q, %k, %v causal scale 0.125 : (tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>, tensor<1x2x16x8xf32>) -> tensor<1x2x16x8xf32>
  return %o : tensor<1x2x16x8xf32>
}

// -----

// Without causal, the query and key lengths may differ (cross attention).
// CHECK-LABEL: func.func @cross_scale
// CHECK-SAME:    (%[[Q:.+]]: tensor<1x2x4x8xf32>, %[[K:.+]]: tensor<1x2x32x8xf32>, %[[V:.+]]: tensor<1x2x32x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK-NEXT:    %[[O:.+]] = llmc.attention %[[Q]], %[[K]], %[[V]] scale 5.000000e-01 : (tensor<1x2x4x8xf32>, tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32>) -> tensor<1x2x4x8xf32>
// CHECK-NEXT:    return %[[O]] : tensor<1x2x4x8xf32>
func.func @cross_scale(%q: tensor<1x2x4x8xf32>, %k: tensor<1x2x32x8xf32>, %v: tensor<1x2x32x8xf32>) -> tensor<1x2x4x8xf32> {
  %o = llmc.attention %q, %k, %v scale 0.5 : (tensor<1x2x4x8xf32>, tensor<1x2x32x8xf32>, tensor<1x2x32x8xf32>) -> tensor<1x2x4x8xf32>
  return %o : tensor<1x2x4x8xf32>
}

// -----

// [B, T, H, D] operands and result; grouped heads (4 read 2).
// CHECK-LABEL: func.func @bthd
// CHECK-NEXT:    llmc.attention %{{.+}}, %{{.+}}, %{{.+}} causal layout bthd : (tensor<2x16x4x8xbf16>, tensor<2x16x2x8xbf16>, tensor<2x16x2x8xbf16>) -> tensor<2x16x4x8xbf16>
func.func @bthd(%q: tensor<2x16x4x8xbf16>, %k: tensor<2x16x2x8xbf16>, %v: tensor<2x16x2x8xbf16>) -> tensor<2x16x4x8xbf16> {
  %o = llmc.attention %q, %k, %v causal layout bthd : (tensor<2x16x4x8xbf16>, tensor<2x16x2x8xbf16>, tensor<2x16x2x8xbf16>) -> tensor<2x16x4x8xbf16>
  return %o : tensor<2x16x4x8xbf16>
}

// -----

// One packed [B, T, Hq + 2 Hkv, D] operand: 4 query heads, 2 key and 2
// value heads.
// CHECK-LABEL: func.func @packed
// CHECK-SAME:    (%[[P:.+]]: tensor<2x16x8x8xf32>)
// CHECK-NEXT:    llmc.attention %[[P]], %[[P]], %[[P]] layout packed : (tensor<2x16x8x8xf32>, tensor<2x16x8x8xf32>, tensor<2x16x8x8xf32>) -> tensor<2x16x4x8xf32>
func.func @packed(%p: tensor<2x16x8x8xf32>) -> tensor<2x16x4x8xf32> {
  %o = llmc.attention %p, %p, %p layout packed : (tensor<2x16x8x8xf32>, tensor<2x16x8x8xf32>, tensor<2x16x8x8xf32>) -> tensor<2x16x4x8xf32>
  return %o : tensor<2x16x4x8xf32>
}

// -----

// The optional log-sum-exp result: f32 [B, Hq, T] whatever the operands'
// element type.
// CHECK-LABEL: func.func @with_lse
// CHECK-SAME:    (%[[Q:.+]]: tensor<1x6x16x8xbf16>, %[[K:.+]]: tensor<1x2x16x8xbf16>, %[[V:.+]]: tensor<1x2x16x8xbf16>)
// CHECK-NEXT:    %[[O:.+]], %[[L:.+]] = llmc.attention %[[Q]], %[[K]], %[[V]] causal : (tensor<1x6x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>) -> (tensor<1x6x16x8xbf16>, tensor<1x6x16xf32>)
// CHECK-NEXT:    return %[[O]], %[[L]] : tensor<1x6x16x8xbf16>, tensor<1x6x16xf32>
func.func @with_lse(%q: tensor<1x6x16x8xbf16>, %k: tensor<1x2x16x8xbf16>, %v: tensor<1x2x16x8xbf16>) -> (tensor<1x6x16x8xbf16>, tensor<1x6x16xf32>) {
  %o, %lse = llmc.attention %q, %k, %v causal : (tensor<1x6x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>) -> (tensor<1x6x16x8xbf16>, tensor<1x6x16xf32>)
  return %o, %lse : tensor<1x6x16x8xbf16>, tensor<1x6x16xf32>
}
