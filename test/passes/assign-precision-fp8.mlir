// RUN: llmc-opt %s --split-input-file --llmc-assign-precision=policy=fp8 | FileCheck %s
// RUN: llmc-opt %s --split-input-file --llmc-assign-precision=policy=bf16 | FileCheck %s --check-prefix=BF16

// policy=fp8 is bf16 plus the linear layers' matmuls as llmc.fp8_matmul:
// fc ([in, out], 32 -> 64) and proj ([out, in], transpose_b) over 16 rows.
// The LM head (the tied wte, its logits read by cross_entropy) stays a bf16
// matmul, and so does everything that is not a matmul.
// CHECK-LABEL: func.func @loss
// CHECK-SAME:    attributes {llmc.precision = "fp8"}
// CHECK:         %[[WTE16:.+]] = llmc.cast %{{.+}} : tensor<64x32xf32> -> tensor<64x32xbf16>
// CHECK-NEXT:    %[[FC16:.+]] = llmc.cast %{{.+}} : tensor<32x64xf32> -> tensor<32x64xbf16>
// CHECK-NEXT:    %[[PROJ16:.+]] = llmc.cast %{{.+}} : tensor<32x64xf32> -> tensor<32x64xbf16>
// CHECK:         %[[N:.+]] = llmc.layer_norm
// CHECK-NEXT:    %[[Y:.+]] = llmc.fp8_matmul %[[N]], %[[FC16]] : tensor<2x8x32xbf16>, tensor<32x64xbf16> -> tensor<2x8x64xbf16>
// CHECK-NEXT:    %[[A:.+]] = llmc.gelu %[[Y]] tanh : tensor<2x8x64xbf16>
// CHECK-NEXT:    %[[P:.+]] = llmc.fp8_matmul %[[A]], %[[PROJ16]] transpose_b : tensor<2x8x64xbf16>, tensor<32x64xbf16> -> tensor<2x8x32xbf16>
// CHECK-NEXT:    %[[R:.+]] = llmc.add %[[P]], %[[N]] : tensor<2x8x32xbf16>
// CHECK-NEXT:    %[[LOGITS:.+]] = llmc.matmul %[[R]], %[[WTE16]] transpose_b : tensor<2x8x32xbf16>, tensor<64x32xbf16> -> tensor<2x8x64xbf16>
// CHECK-NEXT:    llmc.cross_entropy %[[LOGITS]]
// BF16-LABEL: func.func @loss
// BF16-NOT:     llmc.fp8_matmul
func.func @loss(%wte: tensor<64x32xf32> {llmc.name = "wte", llmc.role = "parameter"},
                %g: tensor<32xf32> {llmc.name = "ln.weight", llmc.role = "parameter"},
                %b: tensor<32xf32> {llmc.name = "ln.bias", llmc.role = "parameter"},
                %fc: tensor<32x64xf32> {llmc.name = "fc.weight", llmc.role = "parameter"},
                %proj: tensor<32x64xf32> {llmc.name = "proj.weight", llmc.role = "parameter"},
                %tokens: tensor<2x8xi32> {llmc.name = "tokens", llmc.role = "input"},
                %targets: tensor<2x8xi32> {llmc.name = "targets", llmc.role = "input"}) -> tensor<f32> {
  %h = llmc.embedding %wte[%tokens] : (tensor<64x32xf32>, tensor<2x8xi32>) -> tensor<2x8x32xf32>
  %n = llmc.layer_norm %h, %g, %b epsilon 1.0e-05 : (tensor<2x8x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  %y = llmc.matmul %n, %fc : tensor<2x8x32xf32>, tensor<32x64xf32> -> tensor<2x8x64xf32>
  %a = llmc.gelu %y tanh : tensor<2x8x64xf32>
  %p = llmc.matmul %a, %proj transpose_b : tensor<2x8x64xf32>, tensor<32x64xf32> -> tensor<2x8x32xf32>
  %r = llmc.add %p, %n : tensor<2x8x32xf32>
  %logits = llmc.matmul %r, %wte transpose_b : tensor<2x8x32xf32>, tensor<64x32xf32> -> tensor<2x8x64xf32>
  %l = llmc.cross_entropy %logits, %targets reduction mean : (tensor<2x8x64xf32>, tensor<2x8xi32>) -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Must not apply: a product of two activations (attention's scores), a
// linear layer whose K (8) is no multiple of 16, and one whose rows (2 x 4)
// are not either: they stay bf16 matmuls.
// CHECK-LABEL: func.func @loss
// CHECK-NOT:     llmc.fp8_matmul
// CHECK:         llmc.matmul %{{.+}}, %{{.+}} transpose_b : tensor<2x16x16xbf16>, tensor<2x16x16xbf16> -> tensor<2x16x16xbf16>
// CHECK:         llmc.matmul %{{.+}}, %{{.+}} : tensor<2x16x8xbf16>, tensor<8x16xbf16> -> tensor<2x16x16xbf16>
// CHECK:         llmc.matmul %{{.+}}, %{{.+}} : tensor<2x4x16xbf16>, tensor<16x16xbf16> -> tensor<2x4x16xbf16>
// CHECK-NOT:     llmc.fp8_matmul
func.func @loss(%w8: tensor<8x16xf32> {llmc.name = "narrow.weight", llmc.role = "parameter"},
                %w: tensor<16x16xf32> {llmc.name = "short.weight", llmc.role = "parameter"},
                %q: tensor<2x16x16xf32> {llmc.name = "q", llmc.role = "input"},
                %x: tensor<2x16x8xf32> {llmc.name = "x", llmc.role = "input"},
                %s: tensor<2x4x16xf32> {llmc.name = "s", llmc.role = "input"}) -> tensor<f32> {
  %scores = llmc.matmul %q, %q transpose_b : tensor<2x16x16xf32>, tensor<2x16x16xf32> -> tensor<2x16x16xf32>
  %y = llmc.matmul %x, %w8 : tensor<2x16x8xf32>, tensor<8x16xf32> -> tensor<2x16x16xf32>
  %z = llmc.matmul %s, %w : tensor<2x4x16xf32>, tensor<16x16xf32> -> tensor<2x4x16xf32>
  %a = llmc.reduce_sum %scores dims [0, 1, 2] : tensor<2x16x16xf32> -> tensor<f32>
  %b = llmc.reduce_sum %y dims [0, 1, 2] : tensor<2x16x16xf32> -> tensor<f32>
  %c = llmc.reduce_sum %z dims [0, 1, 2] : tensor<2x4x16xf32> -> tensor<f32>
  %ab = llmc.add %a, %b : tensor<f32>
  %l = llmc.add %ab, %c : tensor<f32>
  return %l : tensor<f32>
}
