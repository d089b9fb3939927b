// RUN: llmc-opt %s --split-input-file --llmc-pair-fp8-transposes | FileCheck %s

// Codes used as they are and transposed: one cast into both layouts, the
// transposes gone (each of them, also a second one CSE did not merge).
// CHECK-LABEL: func.func @both
// CHECK-NEXT:    %[[C:[^,]+]], %[[CT:.+]] = llmc.scaled_cast_transpose %arg0, %arg1 : tensor<16x32xbf16> -> tensor<16x32xf8E4M3FN>, tensor<32x16xf8E4M3FN>
// CHECK-NEXT:    return %[[C]], %[[CT]], %[[CT]]
func.func @both(%x: tensor<16x32xbf16>, %s: tensor<f32>) -> (tensor<16x32xf8E4M3FN>, tensor<32x16xf8E4M3FN>, tensor<32x16xf8E4M3FN>) {
  %c = llmc.scaled_cast %x, %s : tensor<16x32xbf16> -> tensor<16x32xf8E4M3FN>
  %t = llmc.transpose %c perm [1, 0] : tensor<16x32xf8E4M3FN> -> tensor<32x16xf8E4M3FN>
  %u = llmc.transpose %c perm [1, 0] : tensor<16x32xf8E4M3FN> -> tensor<32x16xf8E4M3FN>
  return %c, %t, %u : tensor<16x32xf8E4M3FN>, tensor<32x16xf8E4M3FN>, tensor<32x16xf8E4M3FN>
}

// -----

// Must not apply: codes used in one layout only (as they are, or only
// transposed), a cast of another rank, and a cast and transpose on
// different pipeline stages.
// CHECK-LABEL: func.func @one_layout
// CHECK-NOT:     scaled_cast_transpose
// CHECK:         return
func.func @one_layout(%x: tensor<16x32xbf16>, %s: tensor<f32>) -> (tensor<16x32xf8E4M3FN>, tensor<32x16xf8E5M2>, tensor<2x8x32xf8E4M3FN>, tensor<2x32x8xf8E4M3FN>, tensor<16x32xf8E4M3FN>, tensor<32x16xf8E4M3FN>) {
  %c = llmc.scaled_cast %x, %s : tensor<16x32xbf16> -> tensor<16x32xf8E4M3FN>
  %d = llmc.scaled_cast %x, %s : tensor<16x32xbf16> -> tensor<16x32xf8E5M2>
  %dt = llmc.transpose %d perm [1, 0] : tensor<16x32xf8E5M2> -> tensor<32x16xf8E5M2>
  %r = llmc.reshape %x : tensor<16x32xbf16> -> tensor<2x8x32xbf16>
  %r8 = llmc.scaled_cast %r, %s : tensor<2x8x32xbf16> -> tensor<2x8x32xf8E4M3FN>
  %rt = llmc.transpose %r8 perm [0, 2, 1] : tensor<2x8x32xf8E4M3FN> -> tensor<2x32x8xf8E4M3FN>
  %e = llmc.scaled_cast %x, %s {llmc.stage = 0 : i64} : tensor<16x32xbf16> -> tensor<16x32xf8E4M3FN>
  %et = llmc.transpose %e perm [1, 0] {llmc.stage = 1 : i64} : tensor<16x32xf8E4M3FN> -> tensor<32x16xf8E4M3FN>
  return %c, %dt, %r8, %rt, %e, %et : tensor<16x32xf8E4M3FN>, tensor<32x16xf8E5M2>, tensor<2x8x32xf8E4M3FN>, tensor<2x32x8xf8E4M3FN>, tensor<16x32xf8E4M3FN>, tensor<32x16xf8E4M3FN>
}

