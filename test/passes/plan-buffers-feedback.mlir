// RUN: llmc-opt %s --split-input-file --verify-diagnostics --llmc-plan-buffers | FileCheck %s

// After the run the caller copies each new parameter into its argument's
// buffer when it could not be computed there. A returned value placed in
// that buffer would be overwritten by the copy before the caller reads it,
// so no returned value shares it, though the weight is dead after step 1.
// Here y would have gone to w's offset (first fit, w dead after the reduce).
// CHECK-LABEL: func.func @returned_value_not_in_a_copied_to_buffer
// CHECK-SAME:    (%{{.+}}: tensor<16xf32> {llmc.name = "w", llmc.offset = [[W:[0-9]+]] : i64
// CHECK-SAME:    donations = {}
// CHECK:         llmc.neg %{{.+}} {llmc.offsets = array<i64: [[Y:[0-9]+]]>}
// CHECK-NOT:     llmc.offsets = array<i64: [[W]]>}
func.func @returned_value_not_in_a_copied_to_buffer(
    %w: tensor<16xf32> {llmc.name = "w", llmc.role = "parameter"},
    %g: tensor<16xf32> {llmc.name = "g", llmc.role = "input"})
    -> (tensor<16xf32> {llmc.name = "w"}, tensor<f32> {llmc.name = "loss"},
        tensor<16xf32> {llmc.name = "y"}) {
  %w2 = llmc.sub %w, %g : tensor<16xf32>
  %l = llmc.reduce_sum %w dims [0] : tensor<16xf32> -> tensor<f32>
  %y = llmc.neg %g : tensor<16xf32>
  return %w2, %l, %y : tensor<16xf32>, tensor<f32>, tensor<16xf32>
}

// -----

// y is written in place over w at w's last read, but w's new value is made
// before that and cannot be donated: copying it back would overwrite y.
// expected-error @+1 {{buffer plan: result #1 is written in place into the buffer of an argument whose new value goes elsewhere}}
func.func @returned_in_place_into_a_copied_to_buffer(
    %w: tensor<16xf32> {llmc.name = "w", llmc.role = "parameter"},
    %g: tensor<16xf32> {llmc.name = "g", llmc.role = "input"})
    -> (tensor<16xf32> {llmc.name = "w"}, tensor<16xf32> {llmc.name = "y"}) {
  %w2 = llmc.sub %w, %g : tensor<16xf32>
  %y = llmc.neg %w : tensor<16xf32>
  return %w2, %y : tensor<16xf32>, tensor<16xf32>
}
