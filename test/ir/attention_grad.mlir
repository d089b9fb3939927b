// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s
// RUN: llmc-opt %s --split-input-file --mlir-print-op-generic | llmc-opt --split-input-file | FileCheck %s

// Neither causal nor scale is printed when absent.
// CHECK-LABEL: func.func @plain
// CHECK-SAME:    (%[[Q:.+]]: tensor<2x4x16x8xf32>, %[[K:.+]]: tensor<2x4x12x8xf32>, %[[V:.+]]: tensor<2x4x12x8xf32>, %[[O:.+]]: tensor<2x4x16x8xf32>, %[[G:.+]]: tensor<2x4x16x8xf32>)
// CHECK-NEXT:    %[[D:.+]]:3 = llmc.attention_grad %[[Q]], %[[K]], %[[V]], %[[O]], %[[G]] : (tensor<2x4x16x8xf32>, tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> (tensor<2x4x16x8xf32>, tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>)
// CHECK-NEXT:    return %[[D]]#0, %[[D]]#1, %[[D]]#2
func.func @plain(%q: tensor<2x4x16x8xf32>, %k: tensor<2x4x12x8xf32>, %v: tensor<2x4x12x8xf32>, %o: tensor<2x4x16x8xf32>, %g: tensor<2x4x16x8xf32>) -> (tensor<2x4x16x8xf32>, tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>) {
  %dq, %dk, %dv = llmc.attention_grad %q, %k, %v, %o, %g : (tensor<2x4x16x8xf32>, tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>) -> (tensor<2x4x16x8xf32>, tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>)
  return %dq, %dk, %dv : tensor<2x4x16x8xf32>, tensor<2x4x12x8xf32>, tensor<2x4x12x8xf32>
}

// -----

// Grouped query heads (6 read 2), causal, an explicit scale, bf16.
// CHECK-LABEL: func.func @grouped_causal_scale
// CHECK:         llmc.attention_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} causal scale 1.250000e-01 : (tensor<1x6x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x6x16x8xbf16>, tensor<1x6x16x8xbf16>) -> (tensor<1x6x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>)
func.func @grouped_causal_scale(%q: tensor<1x6x16x8xbf16>, %k: tensor<1x2x16x8xbf16>, %v: tensor<1x2x16x8xbf16>, %o: tensor<1x6x16x8xbf16>, %g: tensor<1x6x16x8xbf16>) -> tensor<1x2x16x8xbf16> {
  %dq, %dk, %dv = llmc.attention_grad %q, %k, %v, %o, %g causal scale 0.125 : (tensor<1x6x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x6x16x8xbf16>, tensor<1x6x16x8xbf16>) -> (tensor<1x6x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>)
  return %dk : tensor<1x2x16x8xbf16>
}

// -----

// bthd: three gradients of [B, T, H, D].
// CHECK-LABEL: func.func @bthd
// CHECK:         llmc.attention_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} causal layout bthd : (tensor<2x16x4x8xf32>, tensor<2x16x2x8xf32>, tensor<2x16x2x8xf32>, tensor<2x16x4x8xf32>, tensor<2x16x4x8xf32>) -> (tensor<2x16x4x8xf32>, tensor<2x16x2x8xf32>, tensor<2x16x2x8xf32>)
func.func @bthd(%q: tensor<2x16x4x8xf32>, %k: tensor<2x16x2x8xf32>, %o: tensor<2x16x4x8xf32>) -> tensor<2x16x2x8xf32> {
  %dq, %dk, %dv = llmc.attention_grad %q, %k, %k, %o, %o causal layout bthd : (tensor<2x16x4x8xf32>, tensor<2x16x2x8xf32>, tensor<2x16x2x8xf32>, tensor<2x16x4x8xf32>, tensor<2x16x4x8xf32>) -> (tensor<2x16x4x8xf32>, tensor<2x16x2x8xf32>, tensor<2x16x2x8xf32>)
  return %dk : tensor<2x16x2x8xf32>
}

// -----

// packed: one gradient, of the packed operand's type.
// CHECK-LABEL: func.func @packed
// CHECK-SAME:    (%[[P:.+]]: tensor<2x16x8x8xbf16>, %[[O:.+]]: tensor<2x16x4x8xbf16>, %[[G:.+]]: tensor<2x16x4x8xbf16>)
// CHECK-NEXT:    %[[D:.+]] = llmc.attention_grad %[[P]], %[[P]], %[[P]], %[[O]], %[[G]] causal layout packed : (tensor<2x16x8x8xbf16>, tensor<2x16x8x8xbf16>, tensor<2x16x8x8xbf16>, tensor<2x16x4x8xbf16>, tensor<2x16x4x8xbf16>) -> tensor<2x16x8x8xbf16>
// CHECK-NEXT:    return %[[D]]
func.func @packed(%p: tensor<2x16x8x8xbf16>, %o: tensor<2x16x4x8xbf16>, %g: tensor<2x16x4x8xbf16>) -> tensor<2x16x8x8xbf16> {
  %d = llmc.attention_grad %p, %p, %p, %o, %g causal layout packed : (tensor<2x16x8x8xbf16>, tensor<2x16x8x8xbf16>, tensor<2x16x8x8xbf16>, tensor<2x16x4x8xbf16>, tensor<2x16x4x8xbf16>) -> tensor<2x16x8x8xbf16>
  return %d : tensor<2x16x8x8xbf16>
}

// -----

// The forward's log-sum-exp as the optional operand after dout.
// CHECK-LABEL: func.func @with_lse
// CHECK-SAME:    %[[L:[^:]+]]: tensor<1x6x16xf32>
// CHECK:         llmc.attention_grad %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} lse %[[L]] causal : (tensor<1x6x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x6x16x8xbf16>, tensor<1x6x16x8xbf16>, tensor<1x6x16xf32>) -> (tensor<1x6x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>)
func.func @with_lse(%q: tensor<1x6x16x8xbf16>, %k: tensor<1x2x16x8xbf16>, %v: tensor<1x2x16x8xbf16>, %o: tensor<1x6x16x8xbf16>, %g: tensor<1x6x16x8xbf16>, %lse: tensor<1x6x16xf32>) -> tensor<1x6x16x8xbf16> {
  %dq, %dk, %dv = llmc.attention_grad %q, %k, %v, %o, %g lse %lse causal : (tensor<1x6x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x6x16x8xbf16>, tensor<1x6x16x8xbf16>, tensor<1x6x16xf32>) -> (tensor<1x6x16x8xbf16>, tensor<1x2x16x8xbf16>, tensor<1x2x16x8xbf16>)
  return %dq : tensor<1x6x16x8xbf16>
}
