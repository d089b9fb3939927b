// RUN: llmc-opt %s --split-input-file --llmc-autodiff --llmc-optimizer="loss-scaling=true" --verify-diagnostics

// Loss scaling needs the scale that --llmc-autodiff loss-scale=S adds.
// expected-error @+1 {{expected a tensor<f32> argument 'loss_scale.scale' (optimizer state) for loss-scaling; run --llmc-autodiff with loss-scale=S first}}
func.func @loss(%w: tensor<3xf32> {llmc.name = "w", llmc.role = "parameter"}) -> tensor<f32> {
  %l = llmc.reduce_sum %w dims [0] : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
