// RUN: llmc-opt %s --split-input-file --llmc-plan-buffers | FileCheck %s

// A chain of elementwise ops: each writes over the one before (in place);
// the argument keeps its own buffer; the reshape is a view (same offset).
// CHECK-LABEL: func.func @chain
// CHECK-SAME:    (%[[X:.+]]: tensor<16xf32> {llmc.offset = 0 : i64})
// CHECK-SAME:    llmc.arena_bytes = 128 : i64
// CHECK-SAME:    in_place = 1 : i64
// CHECK-NEXT:    %[[E:.+]] = llmc.exp %[[X]] {llmc.offsets = array<i64: 64>}
// CHECK-NEXT:    %[[N:.+]] = llmc.neg %[[E]] {llmc.offsets = array<i64: 64>}
// CHECK-NEXT:    %[[R:.+]] = llmc.reshape %[[N]] {llmc.offsets = array<i64: 64>}
func.func @chain(%x: tensor<16xf32>) -> tensor<4x4xf32> {
  %e = llmc.exp %x : tensor<16xf32>
  %n = llmc.neg %e : tensor<16xf32>
  %r = llmc.reshape %n : tensor<16xf32> -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}

// -----

// Must not write in place: the neg may not take exp's buffer, since the add
// reads exp after it; the add may take neg's (both die there); the
// transpose is not elementwise: a buffer of its own, exp's, free by then.
// CHECK-LABEL: func.func @no_in_place
// CHECK-SAME:    llmc.arena_bytes = 192 : i64
// CHECK-SAME:    in_place = 1 : i64
// CHECK-NEXT:    llmc.exp %{{.+}} {llmc.offsets = array<i64: 64>}
// CHECK-NEXT:    llmc.neg %{{.+}} {llmc.offsets = array<i64: 128>}
// CHECK-NEXT:    llmc.add %{{.+}} {llmc.offsets = array<i64: 128>}
// CHECK-NEXT:    llmc.transpose %{{.+}} {llmc.offsets = array<i64: 64>}
func.func @no_in_place(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %e = llmc.exp %x : tensor<4x4xf32>
  %n = llmc.neg %e : tensor<4x4xf32>
  %s = llmc.add %n, %e : tensor<4x4xf32>
  %t = llmc.transpose %s perm [1, 0] : tensor<4x4xf32> -> tensor<4x4xf32>
  return %t : tensor<4x4xf32>
}

// -----

// cross_entropy_grad writes dlogits over the logits when they die there
// (its kernels read a row whole before writing it): the logits' matmul
// product and dlogits share one buffer; the loss reads the logits first.
// CHECK-LABEL: func.func @loss_grad_in_place
// CHECK-SAME:    in_place = 1 : i64
// CHECK:         llmc.matmul %{{.+}} {llmc.offsets = array<i64: [[L:[0-9]+]]>}
// CHECK-NEXT:    llmc.cross_entropy
// CHECK-NEXT:    llmc.cross_entropy_grad %{{.+}} {llmc.offsets = array<i64: [[L]]>}
func.func @loss_grad_in_place(%h: tensor<4x8xbf16>, %w: tensor<64x8xbf16>, %t: tensor<4xi32>, %g: tensor<f32>) -> (tensor<f32>, tensor<4x64xbf16>) {
  %l = llmc.matmul %h, %w transpose_b : tensor<4x8xbf16>, tensor<64x8xbf16> -> tensor<4x64xbf16>
  %loss = llmc.cross_entropy %l, %t reduction mean : (tensor<4x64xbf16>, tensor<4xi32>) -> tensor<f32>
  %d = llmc.cross_entropy_grad %l, %t, %g reduction mean : (tensor<4x64xbf16>, tensor<4xi32>, tensor<f32>) -> tensor<4x64xbf16>
  return %loss, %d : tensor<f32>, tensor<4x64xbf16>
}

// -----

// Must not write in place: the logits are read after the gradient, so
// dlogits gets a buffer of its own.
// CHECK-LABEL: func.func @loss_grad_logits_live
// CHECK-SAME:    in_place = 0 : i64
func.func @loss_grad_logits_live(%h: tensor<4x8xbf16>, %w: tensor<64x8xbf16>, %t: tensor<4xi32>, %g: tensor<f32>) -> (tensor<64x4xbf16>, tensor<4x64xbf16>) {
  %l = llmc.matmul %h, %w transpose_b : tensor<4x8xbf16>, tensor<64x8xbf16> -> tensor<4x64xbf16>
  %d = llmc.cross_entropy_grad %l, %t, %g reduction sum : (tensor<4x64xbf16>, tensor<4xi32>, tensor<f32>) -> tensor<4x64xbf16>
  %n = llmc.transpose %l perm [1, 0] : tensor<4x64xbf16> -> tensor<64x4xbf16>
  return %n, %d : tensor<64x4xbf16>, tensor<4x64xbf16>
}

// -----

// A training step's update: the new weight is written into the weight's
// buffer at its last read (sub), the new moment into the moment's buffer
// (the chain starts with the mul that reads it last). Both are donations.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME:    (%[[W:.+]]: tensor<16xf32> {llmc.name = "w", llmc.offset = [[WOFF:[0-9]+]] : i64, llmc.role = "parameter"}
// CHECK-SAME:    %[[M:.+]]: tensor<16xf32> {llmc.name = "optimizer.m.w", llmc.offset = [[MOFF:[0-9]+]] : i64, llmc.role = "optimizer_state"}
// CHECK-SAME:    donations = {result1 = 0 : i64, result2 = 1 : i64}
// CHECK:         llmc.mul %[[M]], %{{.+}} {llmc.offsets = array<i64: [[MOFF]]>}
// CHECK:         llmc.sub %[[W]], %{{.+}} {llmc.offsets = array<i64: [[WOFF]]>}
func.func @train_step(%w: tensor<16xf32> {llmc.name = "w", llmc.role = "parameter"},
                      %m: tensor<16xf32> {llmc.name = "optimizer.m.w", llmc.role = "optimizer_state"},
                      %g: tensor<16xf32> {llmc.name = "g", llmc.role = "input"})
    -> (tensor<f32> {llmc.name = "loss"}, tensor<16xf32> {llmc.name = "w"},
        tensor<16xf32> {llmc.name = "optimizer.m.w"}) {
  %l = llmc.reduce_sum %w dims [0] : tensor<16xf32> -> tensor<f32>
  %bm = llmc.mul %m, %g : tensor<16xf32>
  %m2 = llmc.add %bm, %g : tensor<16xf32>
  %w2 = llmc.sub %w, %m2 : tensor<16xf32>
  return %l, %w2, %m2 : tensor<f32>, tensor<16xf32>, tensor<16xf32>
}

// -----

// Must not donate: the old weight is read (by the reduce) after the new one
// is made, so the new weight needs a buffer of its own.
// CHECK-LABEL: func.func @read_after_update
// CHECK-SAME:    donations = {}
func.func @read_after_update(%w: tensor<16xf32> {llmc.name = "w", llmc.role = "parameter"},
                             %g: tensor<16xf32> {llmc.name = "g", llmc.role = "input"})
    -> (tensor<16xf32> {llmc.name = "w"}, tensor<f32> {llmc.name = "loss"}) {
  %w2 = llmc.sub %w, %g : tensor<16xf32>
  %l = llmc.reduce_sum %w dims [0] : tensor<16xf32> -> tensor<f32>
  return %w2, %l : tensor<16xf32>, tensor<f32>
}

// -----

// Left alone: a declaration has nothing to plan.
// CHECK-LABEL: func.func private @external
// CHECK-NOT:     llmc.arena_bytes
func.func private @external(tensor<4xf32>) -> tensor<4xf32>
