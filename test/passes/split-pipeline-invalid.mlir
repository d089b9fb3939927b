// RUN: not llmc-opt %s --llmc-autodiff=microbatches=2 --llmc-partition=pp=2 --llmc-split-pipeline="stages=2 microbatches=2 schedule=interleaved virtual-stages=2" 2>&1 | FileCheck %s --check-prefix=CHUNKS
// RUN: not llmc-opt %s --llmc-autodiff=microbatches=2 --llmc-partition=pp=2 --llmc-split-pipeline="stages=2 microbatches=2 boundaries=2" 2>&1 | FileCheck %s --check-prefix=PINNED
// RUN: not llmc-opt %s --llmc-autodiff=microbatches=2 --llmc-split-pipeline="stages=2 microbatches=2" 2>&1 | FileCheck %s --check-prefix=MESH
// RUN: not llmc-opt %s --llmc-autodiff=microbatches=2 --llmc-partition=pp=2 --llmc-split-pipeline="stages=2 microbatches=2 schedule=zigzag" 2>&1 | FileCheck %s --check-prefix=SCHEDULE

// Two layers: two stages of two chunks each would need four.
// CHUNKS: error: expected at least 4 layers for 2 stages x 2 virtual stages (one layer per chunk), the model has 2
// PINNED: error: expected increasing pipeline boundaries in [1, 2), got 2 after 0
// MESH: error: expected the module's mesh to have a pp axis of 2 (run llmc-partition with pp = 2 first)
// SCHEDULE: error: expected schedule gpipe, 1f1b or interleaved, got 'zigzag'
module {
  func.func @loss(%x: tensor<4x8xf32> {llmc.name = "x", llmc.role = "input"},
                  %w0: tensor<8x8xf32> {llmc.name = "h.0.w", llmc.role = "parameter"},
                  %w1: tensor<8x8xf32> {llmc.name = "h.1.w", llmc.role = "parameter"}) -> tensor<f32> {
    %a = llmc.matmul %x, %w0 : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32> loc("h.0.mlp")
    %t = llmc.tanh %a : tensor<4x8xf32> loc("h.0.mlp")
    %b = llmc.matmul %t, %w1 : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32> loc("h.1.mlp")
    %l = llmc.reduce_sum %b dims [0, 1] : tensor<4x8xf32> -> tensor<f32> loc("loss")
    return %l : tensor<f32>
  }
}
