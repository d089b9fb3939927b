// RUN: llmc-opt %s --split-input-file --llmc-expand-fp8-matmul | FileCheck %s

// The forward: both operands' tensorwise E4M3 scales (448 / max(amax,
// 1e-12) and the inverse), x cast as it is, the [K, N] weight cast, then its
// 8-bit codes transposed to [N, K] (the contraction innermost in both
// operands; the cast commutes with the transpose), one
// scaled_matmul with the inverse scales, the batch dimensions flattened and
// restored.
// CHECK-LABEL: func.func @in_out
// CHECK-SAME:    (%[[X:.+]]: tensor<2x8x32xbf16>, %[[W:.+]]: tensor<32x64xbf16>)
// CHECK:         %[[X2:.+]] = llmc.reshape %[[X]] : tensor<2x8x32xbf16> -> tensor<16x32xbf16>
// CHECK-NEXT:    %[[AX:.+]] = llmc.amax %[[X2]] : tensor<16x32xbf16> -> tensor<f32>
// CHECK-NEXT:    %[[FLOOR:.+]] = llmc.constant dense<9.99999996E-13> : tensor<f32>
// CHECK-NEXT:    %[[FX:.+]] = llmc.max %[[AX]], %[[FLOOR]] : tensor<f32>
// CHECK-NEXT:    %[[MAX:.+]] = llmc.constant dense<4.480000e+02> : tensor<f32>
// CHECK-NEXT:    %[[SX:.+]] = llmc.div %[[MAX]], %[[FX]] : tensor<f32>
// CHECK-NEXT:    %[[IX:.+]] = llmc.div %[[FX]], %[[MAX]] : tensor<f32>
// CHECK-NEXT:    %[[AW:.+]] = llmc.amax %[[W]] : tensor<32x64xbf16> -> tensor<f32>
// CHECK:         %[[SW:.+]] = llmc.div
// CHECK-NEXT:    %[[IW:.+]] = llmc.div
// CHECK-NEXT:    %[[X8:.+]] = llmc.scaled_cast %[[X2]], %[[SX]] : tensor<16x32xbf16> -> tensor<16x32xf8E4M3FN>
// CHECK-NEXT:    %[[WC:.+]] = llmc.scaled_cast %[[W]], %[[SW]] : tensor<32x64xbf16> -> tensor<32x64xf8E4M3FN>
// CHECK-NEXT:    %[[W8:.+]] = llmc.transpose %[[WC]] perm [1, 0] : tensor<32x64xf8E4M3FN> -> tensor<64x32xf8E4M3FN>
// CHECK-NEXT:    %[[Y2:.+]] = llmc.scaled_matmul %[[X8]], %[[W8]] scales(%[[IX]], %[[IW]]) : tensor<16x32xf8E4M3FN>, tensor<64x32xf8E4M3FN> -> tensor<16x64xbf16>
// CHECK-NEXT:    %[[Y:.+]] = llmc.reshape %[[Y2]] : tensor<16x64xbf16> -> tensor<2x8x64xbf16>
// CHECK-NEXT:    return %[[Y]] : tensor<2x8x64xbf16>
func.func @in_out(%x: tensor<2x8x32xbf16>, %w: tensor<32x64xbf16>) -> tensor<2x8x64xbf16> {
  %y = llmc.fp8_matmul %x, %w : tensor<2x8x32xbf16>, tensor<32x64xbf16> -> tensor<2x8x64xbf16>
  return %y : tensor<2x8x64xbf16>
}

// -----

// A weight stored [out, in] is the rhs as it is: no transpose.
// CHECK-LABEL: func.func @out_in
// CHECK-NOT:     llmc.transpose
// CHECK:         llmc.scaled_cast %{{.+}}, %{{.+}} : tensor<64x32xbf16> -> tensor<64x32xf8E4M3FN>
// CHECK:         llmc.scaled_matmul %{{.+}}, %{{.+}} scales(%{{.+}}, %{{.+}}) : tensor<16x32xf8E4M3FN>, tensor<64x32xf8E4M3FN> -> tensor<16x64xbf16>
// CHECK-NOT:     llmc.reshape
func.func @out_in(%x: tensor<16x32xbf16>, %w: tensor<64x32xbf16>) -> tensor<16x64xbf16> {
  %y = llmc.fp8_matmul %x, %w transpose_b : tensor<16x32xbf16>, tensor<64x32xbf16> -> tensor<16x64xbf16>
  return %y : tensor<16x64xbf16>
}

// -----

// Must not apply: a program without fp8_matmul is unchanged, its bf16
// matmul included.
// CHECK-LABEL: func.func @plain
// CHECK-NEXT:    %[[Y:.+]] = llmc.matmul %{{.+}}, %{{.+}} : tensor<16x32xbf16>, tensor<32x64xbf16> -> tensor<16x64xbf16>
// CHECK-NEXT:    return %[[Y]]
func.func @plain(%x: tensor<16x32xbf16>, %w: tensor<32x64xbf16>) -> tensor<16x64xbf16> {
  %y = llmc.matmul %x, %w : tensor<16x32xbf16>, tensor<32x64xbf16> -> tensor<16x64xbf16>
  return %y : tensor<16x64xbf16>
}
