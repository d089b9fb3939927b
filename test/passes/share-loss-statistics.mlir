// RUN: llmc-opt %s --split-input-file --llmc-share-loss-statistics | FileCheck %s --enable-var-scope

// The training step's loss and its gradient over one logits value: the
// forward gains its lse result (keeping its attributes) and the gradient
// reads it.
// CHECK-LABEL: func.func @step
// CHECK-SAME:    (%[[LOGITS:.+]]: tensor<8x64xbf16>, %[[T:.+]]: tensor<8xi32>, %[[G:.+]]: tensor<f32>)
// CHECK-NEXT:    %[[LOSS:.+]], %[[LSE:.+]] = llmc.cross_entropy %[[LOGITS]], %[[T]] ignore_index -100 reduction mean {note = "kept"} : (tensor<8x64xbf16>, tensor<8xi32>) -> (tensor<f32>, tensor<8xf32>)
// CHECK-NEXT:    %[[D:.+]] = llmc.cross_entropy_grad %[[LOGITS]], %[[T]], %[[G]] lse %[[LSE]] ignore_index -100 reduction mean : (tensor<8x64xbf16>, tensor<8xi32>, tensor<f32>, tensor<8xf32>) -> tensor<8x64xbf16>
// CHECK-NEXT:    return %[[LOSS]], %[[D]]
func.func @step(%logits: tensor<8x64xbf16>, %t: tensor<8xi32>, %g: tensor<f32>) -> (tensor<f32>, tensor<8x64xbf16>) {
  %loss = llmc.cross_entropy %logits, %t ignore_index -100 reduction mean {note = "kept"} : (tensor<8x64xbf16>, tensor<8xi32>) -> tensor<f32>
  %d = llmc.cross_entropy_grad %logits, %t, %g ignore_index -100 reduction mean : (tensor<8x64xbf16>, tensor<8xi32>, tensor<f32>) -> tensor<8x64xbf16>
  return %loss, %d : tensor<f32>, tensor<8x64xbf16>
}

// -----

// The lse depends on the logits only: a forward with another reduction and
// no ignore_index serves a gradient that has one. A forward that already
// returns its lse is not rebuilt.
// CHECK-LABEL: func.func @other_reduction
// CHECK:         %{{.+}}, %[[LSE:.+]] = llmc.cross_entropy %{{.+}}, %{{.+}} reduction none
// CHECK-NEXT:    %[[D:.+]] = llmc.cross_entropy_grad %{{.+}}, %{{.+}}, %{{.+}} lse %[[LSE]] ignore_index 0 reduction sum
// CHECK-NEXT:    %[[E:.+]] = llmc.cross_entropy_grad %{{.+}}, %{{.+}}, %{{.+}} lse %[[LSE]] reduction mean
// CHECK-NEXT:    return
func.func @other_reduction(%logits: tensor<4x32xf32>, %t: tensor<4xi64>, %g: tensor<f32>) -> (tensor<4xf32>, tensor<4x32xf32>, tensor<4x32xf32>) {
  %loss, %lse = llmc.cross_entropy %logits, %t reduction none : (tensor<4x32xf32>, tensor<4xi64>) -> (tensor<4xf32>, tensor<4xf32>)
  %d = llmc.cross_entropy_grad %logits, %t, %g ignore_index 0 reduction sum : (tensor<4x32xf32>, tensor<4xi64>, tensor<f32>) -> tensor<4x32xf32>
  %e = llmc.cross_entropy_grad %logits, %t, %g reduction mean : (tensor<4x32xf32>, tensor<4xi64>, tensor<f32>) -> tensor<4x32xf32>
  return %loss, %d, %e : tensor<4xf32>, tensor<4x32xf32>, tensor<4x32xf32>
}

// -----

// Must not apply: the gradient's logits are another value (recomputed
// logits), or the only cross_entropy comes after the gradient.
// CHECK-LABEL: func.func @no_forward
// CHECK:         llmc.cross_entropy %{{.+}}, %{{.+}} reduction sum : (tensor<4x32xf32>, tensor<4xi32>) -> tensor<f32>
// CHECK:         llmc.cross_entropy_grad %{{.+}}, %{{.+}}, %{{.+}} reduction sum : (tensor<4x32xf32>, tensor<4xi32>, tensor<f32>) -> tensor<4x32xf32>
// CHECK:         llmc.cross_entropy %{{.+}}, %{{.+}} reduction mean : (tensor<4x32xf32>, tensor<4xi32>) -> tensor<f32>
// CHECK-NOT:     lse
func.func @no_forward(%a: tensor<4x32xf32>, %b: tensor<4x32xf32>, %t: tensor<4xi32>, %g: tensor<f32>) -> (tensor<f32>, tensor<4x32xf32>, tensor<f32>) {
  %loss = llmc.cross_entropy %a, %t reduction sum : (tensor<4x32xf32>, tensor<4xi32>) -> tensor<f32>
  %d = llmc.cross_entropy_grad %b, %t, %g reduction sum : (tensor<4x32xf32>, tensor<4xi32>, tensor<f32>) -> tensor<4x32xf32>
  %late = llmc.cross_entropy %b, %t reduction mean : (tensor<4x32xf32>, tensor<4xi32>) -> tensor<f32>
  return %loss, %d, %late : tensor<f32>, tensor<4x32xf32>, tensor<f32>
}
