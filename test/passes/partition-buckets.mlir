// RUN: llmc-opt %s --llmc-partition="dp=2" | FileCheck %s --check-prefix=DP
// RUN: llmc-opt %s --llmc-partition="pp=2 dp=2" | FileCheck %s --check-prefix=PP

// Buckets of all-reduces under pipeline parallelism. Two layers' weight
// gradients are pending over dp and finished in the backward (as ZeRO-2
// finishes each microbatch's gradient before accumulating it), both made
// before the first is summed. Without pp they share one bucket (with the
// loss's sum).
// Under pp each layer keeps its own: llmc-split-pipeline runs a backward
// op in the unit of its layer's chunk, and a bucket placed at h.1's would
// hold h.0's gradient, which another stage's later unit makes (GPT-2
// dp2 x pp2 x cp2 + ZeRO-2 failed with "pipeline schedule 1f1b runs this op
// before a value it reads").

// DP-LABEL: func.func @train_step
// DP:         shard.all_reduce {{.*}}llmc.reason = "bucket of 3 all-reduces: pending loss (forward): sum over dp, for ? (forward), ..."} : tensor<129xf32> -> tensor<129xf32>
// DP-NOT:     shard.all_reduce {{.*}} tensor<8x8xf32>

// PP-LABEL: func.func @train_step
// PP-NOT:     bucket of
// PP:         %[[S1:.+]] = shard.all_reduce {{.*}}llmc.reason = "pending h.1 (backward): sum over dp, for h.1 (backward)"} : tensor<8x8xf32> -> tensor<8x8xf32>
// PP:         llmc.add %[[S1]]
// PP:         %[[S0:.+]] = shard.all_reduce {{.*}}llmc.reason = "pending h.0 (backward): sum over dp, for h.0 (backward)"} : tensor<8x8xf32> -> tensor<8x8xf32>
// PP:         llmc.add %[[S0]]
module {
  func.func @train_step(
      %w0: tensor<8x8xf32> {llmc.name = "h.0.w", llmc.role = "parameter"},
      %w1: tensor<8x8xf32> {llmc.name = "h.1.w", llmc.role = "parameter"},
      %x: tensor<4x8xf32> {llmc.name = "x", llmc.role = "input"})
      -> (tensor<f32> {llmc.name = "loss"}, tensor<8x8xf32> {llmc.name = "h.0.w"},
          tensor<8x8xf32> {llmc.name = "h.1.w"}) {
    %h = llmc.matmul %x, %w0 : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32> loc("h.0")
    %y = llmc.matmul %h, %w1 : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32> loc("h.1")
    %loss = llmc.reduce_sum %y dims [0, 1] : tensor<4x8xf32> -> tensor<f32> loc("loss")
    %one = llmc.constant dense<1.0> : tensor<f32> loc(fused<"backward">["loss"])
    %dy = llmc.broadcast %one dims [] : tensor<f32> -> tensor<4x8xf32> loc(fused<"backward">["loss"])
    %g1 = llmc.matmul %h, %dy transpose_a : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<8x8xf32> loc(fused<"backward">["h.1"])
    %dh = llmc.matmul %dy, %w1 transpose_b : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32> loc(fused<"backward">["h.1"])
    %g0 = llmc.matmul %x, %dh transpose_a : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<8x8xf32> loc(fused<"backward">["h.0"])
    // A replicated operand: the pending sums are finished here.
    %a1 = llmc.add %g1, %w1 : tensor<8x8xf32> loc(fused<"backward">["h.1"])
    %a0 = llmc.add %g0, %w0 : tensor<8x8xf32> loc(fused<"backward">["h.0"])
    %w1n = llmc.sub %w1, %a1 : tensor<8x8xf32> loc(fused<"optimizer">["h.1"])
    %w0n = llmc.sub %w0, %a0 : tensor<8x8xf32> loc(fused<"optimizer">["h.0"])
    return %loss, %w0n, %w1n : tensor<f32>, tensor<8x8xf32>, tensor<8x8xf32>
  }
}
