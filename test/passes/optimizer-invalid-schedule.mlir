// RUN: not llmc-opt %s --llmc-optimizer="warmup-steps=100 total-steps=100" 2>&1 | FileCheck %s --check-prefix=WARMUP
// RUN: not llmc-opt %s --llmc-optimizer="schedule=exponential" 2>&1 | FileCheck %s --check-prefix=KIND

// Must not apply: a warmup as long as the run, or a schedule that does not
// exist. The run description's checks normally catch both first.
// WARMUP: error: invalid learning-rate schedule: learning-rate 3.000000e-04, min-learning-rate 0.000000e+00, warmup-steps 100, total-steps 100; expected 0 <= min <= rate, rate > 0 and 0 <= warmup < total
// KIND: error: unknown learning-rate schedule 'exponential'; expected cosine, linear or constant
func.func @train_step(%w: tensor<3xf32> {llmc.name = "w", llmc.role = "parameter"}) -> (tensor<f32>, tensor<3xf32>) {
  %l = llmc.reduce_sum %w dims [0] : tensor<3xf32> -> tensor<f32>
  return %l, %w : tensor<f32>, tensor<3xf32>
}
