// RUN: llmc-opt %s --split-input-file --verify-diagnostics --llmc-autodiff=microbatches=2 | FileCheck %s
// RUN: llmc-opt %s --split-input-file --llmc-autodiff=microbatches=1 | FileCheck %s --check-prefix=ONE

// Gradient accumulation: the input is twice as large; microbatch 0 (rows
// 0-1) runs forward and then backward, seeded with 1/2, before microbatch 1
// (rows 2-3) starts; the losses and the gradients are summed, the loss
// halved. The parameter is not split.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME:    (%[[W:.+]]: tensor<3xf32> {llmc.name = "w", llmc.role = "parameter"}, %[[X:.+]]: tensor<4x3xf32> {llmc.name = "x", llmc.role = "input"})
// Each microbatch's slice says which it is (a pipeline orders by it).
// CHECK:         %[[X0:.+]] = llmc.slice %[[X]] starts [0, 0] limits [2, 3] {llmc.microbatch = 0 : i64}
// CHECK:         %[[L0:.+]] = llmc.reduce_mean
// CHECK:         llmc.constant dense<5.000000e-01> : tensor<f32>
// CHECK:         %[[G0:.+]] = llmc.reshape %{{.+}} : tensor<1x3xf32> -> tensor<3xf32>
// CHECK-NEXT:    %[[X1:.+]] = llmc.slice %[[X]] starts [2, 0] limits [4, 3] {llmc.microbatch = 1 : i64}
// CHECK:         %[[L1:.+]] = llmc.reduce_mean
// CHECK:         %[[G1:.+]] = llmc.reshape %{{.+}} : tensor<1x3xf32> -> tensor<3xf32>
// CHECK-NEXT:    %[[LS:.+]] = llmc.add %[[L0]], %[[L1]] : tensor<f32>
// CHECK-NEXT:    %[[GS:.+]] = llmc.add %[[G0]], %[[G1]] : tensor<3xf32>
// CHECK-NEXT:    %[[HALF:.+]] = llmc.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT:    %[[L:.+]] = llmc.mul %[[LS]], %[[HALF]] : tensor<f32>
// CHECK-NEXT:    return %[[L]], %[[GS]]
// With one microbatch nothing is sliced or averaged.
// ONE-LABEL: func.func @train_step
// ONE-SAME:    %{{.+}}: tensor<2x3xf32> {llmc.name = "x", llmc.role = "input"}
// ONE-NOT:     llmc.slice
// ONE-NOT:     dense<5.000000e-01>
// ONE:         return
func.func @loss(%w: tensor<3xf32> {llmc.name = "w", llmc.role = "parameter"},
                %x: tensor<2x3xf32> {llmc.name = "x", llmc.role = "input"}) -> tensor<f32> {
  %wb = llmc.broadcast %w dims [1] : tensor<3xf32> -> tensor<2x3xf32>
  %y = llmc.mul %wb, %x : tensor<2x3xf32>
  %r = llmc.reduce_mean %y dims [0, 1] : tensor<2x3xf32> -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Must not apply: a rank-0 input has no dimension 0 to split.
// expected-error @+1 {{cannot split input 'scale' into 2 microbatches: it has rank 0; inputs are split along dimension 0}}
func.func @loss(%w: tensor<3xf32> {llmc.name = "w", llmc.role = "parameter"},
                %s: tensor<f32> {llmc.name = "scale", llmc.role = "input"}) -> tensor<f32> {
  %r = llmc.reduce_sum %w dims [0] : tensor<3xf32> -> tensor<f32>
  %y = llmc.mul %r, %s : tensor<f32>
  return %y : tensor<f32>
}
