// The default pipeline (passes/Pipelines.cpp) on forward programs: it
// canonicalizes with the llmc folders, merges duplicates, and plans the
// buffers last (llmc.offset / llmc.offsets: each value's place in the arena).
// Fusion is left out here: these cases pin what the clean-up steps and the
// plan do, and test/passes/fuse.mlir pins fusion.
// RUN: llmc-opt %s --split-input-file --llmc-compile=fuse=false | FileCheck %s

// A reshape of a reshape is one reshape of the original value.
// CHECK-LABEL: func.func @reshape_chain
// CHECK-SAME:    (%[[X:.+]]: tensor<2x6xf32> {llmc.offset = 0 : i64})
// CHECK-NEXT:    %[[R:.+]] = llmc.reshape %[[X]] {llmc.offsets = array<i64: 0>} : tensor<2x6xf32> -> tensor<12xf32>
// CHECK-NEXT:    return %[[R]]
func.func @reshape_chain(%x: tensor<2x6xf32>) -> tensor<12xf32> {
  %a = llmc.reshape %x : tensor<2x6xf32> -> tensor<3x4xf32>
  %b = llmc.reshape %a : tensor<3x4xf32> -> tensor<12xf32>
  return %b : tensor<12xf32>
}

// -----

// A cast to the type it already has disappears; a real cast stays.
// CHECK-LABEL: func.func @casts
// CHECK-SAME:    (%[[X:.+]]: tensor<4xf32> {{.*}})
// CHECK-NEXT:    %[[C:.+]] = llmc.cast %[[X]] {{.*}}: tensor<4xf32> -> tensor<4xbf16>
// CHECK-NEXT:    return %[[X]], %[[C]]
func.func @casts(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xbf16>) {
  %same = llmc.cast %x : tensor<4xf32> -> tensor<4xf32>
  %down = llmc.cast %x : tensor<4xf32> -> tensor<4xbf16>
  return %same, %down : tensor<4xf32>, tensor<4xbf16>
}

// -----

// Reshaping a constant folds into a constant of the new shape.
// CHECK-LABEL: func.func @constant_reshape
// CHECK-NEXT:    %[[K:.+]] = llmc.constant dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.000000e+00]]> : tensor<2x2xf32> {llmc.offsets = array<i64: 0>}
// CHECK-NEXT:    return %[[K]]
func.func @constant_reshape() -> tensor<2x2xf32> {
  %k = llmc.constant dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  %r = llmc.reshape %k : tensor<4xf32> -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}

// -----

// Identical ops on identical operands are computed once; different ops stay.
// The adds write over exp's buffer (it dies at the first add; each add is
// elementwise): one arena of three 64-byte buffers.
// CHECK-LABEL: func.func @duplicates
// CHECK-SAME:    (%[[A:.+]]: tensor<8xf32> {llmc.offset = 0 : i64})
// CHECK-SAME:    llmc.arena_bytes = 192 : i64
// CHECK-SAME:    in_place = 2 : i64
// CHECK-NEXT:    %[[E:.+]] = llmc.exp %[[A]] {llmc.offsets = array<i64: 64>}
// CHECK-NEXT:    %[[T:.+]] = llmc.tanh %[[A]] {llmc.offsets = array<i64: 128>}
// CHECK-NEXT:    %[[S:.+]] = llmc.add %[[E]], %[[E]] {llmc.offsets = array<i64: 64>}
// CHECK-NEXT:    %[[R:.+]] = llmc.add %[[S]], %[[T]] {llmc.offsets = array<i64: 64>}
// CHECK-NEXT:    return %[[R]]
func.func @duplicates(%a: tensor<8xf32>) -> tensor<8xf32> {
  %e1 = llmc.exp %a : tensor<8xf32>
  %e2 = llmc.exp %a : tensor<8xf32>
  %t = llmc.tanh %a : tensor<8xf32>
  %s = llmc.add %e1, %e2 : tensor<8xf32>
  %r = llmc.add %s, %t : tensor<8xf32>
  return %r : tensor<8xf32>
}
