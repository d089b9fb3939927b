// RUN: llmc-opt %s --llmc-assign-precision=policy=fp8 --llmc-autodiff --llmc-expand-fp8-matmul --cse | FileCheck %s --check-prefix=STEP

// The whole FP8 step of one linear layer: the forward as above, and the
// backward that fp8_matmul's derivative built: the gradient dy in E5M2
// (scale 57344 / amax), dx = dy · w as scaled_matmul(dy8 [M, N], w8 [K, N])
// (the weight's cast, shared with the forward after CSE: the forward
// transposes its codes), and dw = xᵀ · dy as scaled_matmul(xᵀ8 [K, M],
// dyᵀ8 [N, M]): the codes of x and dy transposed, one cast of each tensor;
// both in bf16, the weight gradient cast back to f32.
// STEP-LABEL: func.func @train_step
// STEP:         %[[X:.+]] = llmc.cast %{{.+}} : tensor<16x32xf32> -> tensor<16x32xbf16>
// STEP-NEXT:    %[[W:.+]] = llmc.cast %{{.+}} : tensor<32x64xf32> -> tensor<32x64xbf16>
// STEP:         %[[AX:.+]] = llmc.amax %[[X]]
// STEP:         %[[SX:.+]] = llmc.div %{{.+}}, %{{.+}} : tensor<f32>
// STEP-NEXT:    %[[IX:.+]] = llmc.div %{{.+}}, %{{.+}} : tensor<f32>
// STEP-NEXT:    %[[AW:.+]] = llmc.amax %[[W]]
// STEP:         %[[SW:.+]] = llmc.div %{{.+}}, %{{.+}} : tensor<f32>
// STEP-NEXT:    %[[IW:.+]] = llmc.div %{{.+}}, %{{.+}} : tensor<f32>
// STEP:         %[[X8:.+]] = llmc.scaled_cast %[[X]], %[[SX]] : tensor<16x32xbf16> -> tensor<16x32xf8E4M3FN>
// STEP-NEXT:    %[[W8:.+]] = llmc.scaled_cast %[[W]], %[[SW]] : tensor<32x64xbf16> -> tensor<32x64xf8E4M3FN>
// STEP-NEXT:    %[[WT8:.+]] = llmc.transpose %[[W8]] perm [1, 0] : tensor<32x64xf8E4M3FN> -> tensor<64x32xf8E4M3FN>
// STEP-NEXT:    %[[Y:.+]] = llmc.scaled_matmul %[[X8]], %[[WT8]] scales(%[[IX]], %[[IW]]) : tensor<16x32xf8E4M3FN>, tensor<64x32xf8E4M3FN> -> tensor<16x64xbf16>
// STEP:         llmc.reduce_sum
// STEP:         %[[DY:.+]] = llmc.mul %{{.+}}, %{{.+}} : tensor<16x64xbf16>
// STEP-NEXT:    %[[ADY:.+]] = llmc.amax %[[DY]] : tensor<16x64xbf16> -> tensor<f32>
// STEP:         %[[E5MAX:.+]] = llmc.constant dense<5.734400e+04> : tensor<f32>
// STEP-NEXT:    %[[SDY:.+]] = llmc.div %[[E5MAX]], %{{.+}} : tensor<f32>
// STEP-NEXT:    %[[IDY:.+]] = llmc.div %{{.+}}, %[[E5MAX]] : tensor<f32>
// STEP-NEXT:    %[[DY8:.+]] = llmc.scaled_cast %[[DY]], %[[SDY]] : tensor<16x64xbf16> -> tensor<16x64xf8E5M2>
// STEP-NEXT:    %[[DX:.+]] = llmc.scaled_matmul %[[DY8]], %[[W8]] scales(%[[IDY]], %[[IW]]) : tensor<16x64xf8E5M2>, tensor<32x64xf8E4M3FN> -> tensor<16x32xbf16>
// STEP-NEXT:    %[[XT8:.+]] = llmc.transpose %[[X8]] perm [1, 0] : tensor<16x32xf8E4M3FN> -> tensor<32x16xf8E4M3FN>
// STEP-NEXT:    %[[DYT8:.+]] = llmc.transpose %[[DY8]] perm [1, 0] : tensor<16x64xf8E5M2> -> tensor<64x16xf8E5M2>
// STEP-NEXT:    %[[DW:.+]] = llmc.scaled_matmul %[[XT8]], %[[DYT8]] scales(%[[IX]], %[[IDY]]) : tensor<32x16xf8E4M3FN>, tensor<64x16xf8E5M2> -> tensor<32x64xbf16>
// STEP-NEXT:    llmc.cast %[[DW]] : tensor<32x64xbf16> -> tensor<32x64xf32>
// STEP-NEXT:    llmc.cast %[[DX]] : tensor<16x32xbf16> -> tensor<16x32xf32>
// STEP-NOT:     llmc.fp8_matmul
func.func @loss(%w: tensor<32x64xf32> {llmc.name = "fc.weight", llmc.role = "parameter"},
                %x: tensor<16x32xf32> {llmc.name = "x", llmc.role = "parameter"},
                %t: tensor<16x64xf32> {llmc.name = "t", llmc.role = "input"}) -> tensor<f32> {
  %y = llmc.matmul %x, %w : tensor<16x32xf32>, tensor<32x64xf32> -> tensor<16x64xf32>
  %p = llmc.mul %y, %t : tensor<16x64xf32>
  %l = llmc.reduce_sum %p dims [0, 1] : tensor<16x64xf32> -> tensor<f32>
  return %l : tensor<f32>
}
