// RUN: llmc-opt %s --llmc-assign-precision=policy=fp8 --llmc-autodiff --llmc-expand-fp8-matmul --cse --llmc-pair-fp8-transposes | FileCheck %s --check-prefix=STEP
// RUN: llmc-opt %s --llmc-assign-precision=policy=fp8 --llmc-autodiff --llmc-expand-fp8-matmul --cse --llmc-pair-fp8-transposes | FileCheck %s --check-prefix=NONE

// One linear layer's whole FP8 step: x, w and dy are each cast once into
// both layouts, and no transpose of codes is left in the step. (@loss, the
// forward alone, keeps the weight's cast and transpose: its codes are used
// in one layout only.)
// STEP-LABEL: func.func @train_step
// STEP-DAG:     llmc.scaled_cast_transpose %{{.+}}, %{{.+}} : tensor<16x32xbf16> -> tensor<16x32xf8E4M3FN>, tensor<32x16xf8E4M3FN>
// STEP-DAG:     llmc.scaled_cast_transpose %{{.+}}, %{{.+}} : tensor<32x64xbf16> -> tensor<32x64xf8E4M3FN>, tensor<64x32xf8E4M3FN>
// STEP-DAG:     llmc.scaled_cast_transpose %{{.+}}, %{{.+}} : tensor<16x64xbf16> -> tensor<16x64xf8E5M2>, tensor<64x16xf8E5M2>
// NONE-LABEL: func.func @train_step
// NONE-NOT:     llmc.transpose {{.+}}xf8E
// NONE-NOT:     llmc.scaled_cast %
// NONE:         return
func.func @loss(%w: tensor<32x64xf32> {llmc.name = "fc.weight", llmc.role = "parameter"},
                %x: tensor<16x32xf32> {llmc.name = "x", llmc.role = "parameter"},
                %t: tensor<16x64xf32> {llmc.name = "t", llmc.role = "input"}) -> tensor<f32> {
  %y = llmc.matmul %x, %w : tensor<16x32xf32>, tensor<32x64xf32> -> tensor<16x64xf32>
  %p = llmc.mul %y, %t : tensor<16x64xf32>
  %l = llmc.reduce_sum %p dims [0, 1] : tensor<16x64xf32> -> tensor<f32>
  return %l : tensor<f32>
}
