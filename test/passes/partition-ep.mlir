// Expert parallelism in llmc-partition: tokens split over ep like dp, the
// stacked experts (llmc.ep_split) split over ep, and an all-to-all over ep
// on each side of the experts (docs/sharding.md, "Expert parallelism").
// RUN: llmc-opt %s --split-input-file --llmc-partition="ep=2 bucket-bytes=0" | FileCheck %s --check-prefix=EP
// Cases that must not change: ep = 1 (no mesh, the program as it was); dp
// alone (each rank routes its own tokens, no all-to-all); a dense program
// under ep (it is data parallel over ep: no all-to-all).
// RUN: llmc-opt %s --split-input-file --llmc-partition="ep=1" | FileCheck %s --check-prefix=ONE
// RUN: llmc-opt %s --split-input-file --llmc-partition="dp=2 bucket-bytes=0" | FileCheck %s --check-prefix=DP

// 8 tokens, 4 experts of capacity 8, one [4, 4] matrix per expert.
func.func @train_step(
    %w: tensor<4x4x4xf32> {llmc.name = "w", llmc.role = "parameter", llmc.ep_split = 0 : i64},
    %x: tensor<8x4xf32> {llmc.name = "x", llmc.role = "input"},
    %e: tensor<8x2xi32> {llmc.name = "e", llmc.role = "input"},
    %p: tensor<8x2xf32> {llmc.name = "p", llmc.role = "input"}) -> tensor<8x4xf32> {
  %buf = llmc.moe_dispatch %x, %e : (tensor<8x4xf32>, tensor<8x2xi32>) -> tensor<4x8x4xf32> loc("layers.0.moe")
  %h = llmc.matmul %buf, %w transpose_b : tensor<4x8x4xf32>, tensor<4x4x4xf32> -> tensor<4x8x4xf32> loc("layers.0.moe.experts")
  %y = llmc.moe_combine %h, %p, %e : (tensor<4x8x4xf32>, tensor<8x2xf32>, tensor<8x2xi32>) -> tensor<8x4xf32> loc("layers.0.moe")
  return %y : tensor<8x4xf32>
}

// EP:          shard.grid @mesh(shape = 2)
// EP-LABEL:    func.func @train_step
// EP-SAME:       tensor<2x4x4xf32> {{\{[^}]*}}llmc.sharding = {{\[\["ep"\],\ \[\],\ \[\]\]}}
// EP-SAME:       tensor<4x4xf32> {{\{[^}]*}}llmc.sharding = {{\[\["ep"\],\ \[\]\]}}
// Each rank dispatches its 4 tokens into 8 / 2 slots per expert ...
// EP:            %[[LOCAL:.+]] = llmc.moe_dispatch %{{.+}}, %{{.+}} : (tensor<4x4xf32>, tensor<4x2xi32>) -> tensor<4x4x4xf32>
// ... and sends expert block j to rank j: [E, C/2, D] -> [E/2, C, D].
// EP-NEXT:       %[[A2A:.+]] = shard.all_to_all %[[LOCAL]] on @mesh grid_axes = [0] split_axis = 0 concat_axis = 0 {llmc.bytes_per_rank = 128 : i64, llmc.reason = "moe dispatch: tokens to their experts: all-to-all over ep, split dim 0, concat dim 1, for layers.0.moe (forward)"} : tensor<4x4x4xf32> -> tensor<4x4x4xf32>
// EP-NEXT:       %[[V:.+]] = llmc.reshape %[[A2A]] : tensor<4x4x4xf32> -> tensor<2x2x4x4xf32>
// EP-NEXT:       %[[T:.+]] = llmc.transpose %[[V]] perm [1, 0, 2, 3] : tensor<2x2x4x4xf32> -> tensor<2x2x4x4xf32>
// EP-NEXT:       %[[SLOTS:.+]] = llmc.reshape %[[T]] : tensor<2x2x4x4xf32> -> tensor<2x8x4xf32>
// The rank's 2 experts on the slots of every rank's tokens:
// EP-NEXT:       %[[H:.+]] = llmc.matmul %[[SLOTS]], %{{.+}} transpose_b : tensor<2x8x4xf32>, tensor<2x4x4xf32> -> tensor<2x8x4xf32>
// Back: split the slots (moved to the front), concatenate the experts,
// combine the rank's tokens.
// EP-NEXT:       %[[FRONT:.+]] = llmc.transpose %[[H]] perm [1, 0, 2] : tensor<2x8x4xf32> -> tensor<8x2x4xf32>
// EP-NEXT:       %[[BACK:.+]] = shard.all_to_all %[[FRONT]] on @mesh grid_axes = [0] split_axis = 0 concat_axis = 0 {llmc.bytes_per_rank = 128 : i64, llmc.reason = "moe combine: expert outputs back to their tokens: all-to-all over ep, split dim 1, concat dim 0, for layers.0.moe (forward)"}
// EP-NEXT:       llmc.reshape %[[BACK]] : tensor<8x2x4xf32> -> tensor<2x4x2x4xf32>
// EP-NEXT:       llmc.transpose %{{.+}} perm [0, 2, 1, 3] : tensor<2x4x2x4xf32> -> tensor<2x2x4x4xf32>
// EP-NEXT:       %[[OUT:.+]] = llmc.reshape %{{.+}} : tensor<2x2x4x4xf32> -> tensor<4x4x4xf32>
// EP-NEXT:       llmc.moe_combine %[[OUT]], %{{.+}}, %{{.+}} : (tensor<4x4x4xf32>, tensor<4x2xf32>, tensor<4x2xi32>) -> tensor<4x4xf32>
// EP:            shard.all_gather
// EP-NEXT:       return

// ONE-NOT:     shard.
// ONE-LABEL:   func.func @train_step
// ONE:           llmc.moe_dispatch %{{.+}}, %{{.+}} : (tensor<8x4xf32>, tensor<8x2xi32>) -> tensor<4x8x4xf32>
// ONE-NEXT:      llmc.matmul %{{.+}}, %{{.+}} transpose_b : tensor<4x8x4xf32>, tensor<4x4x4xf32> -> tensor<4x8x4xf32>
// ONE-NEXT:      llmc.moe_combine

// DP-LABEL:    func.func @train_step
// DP-SAME:       tensor<4x4x4xf32> {{\{[^}]*}}llmc.sharding = {{\[\[\],\ \[\],\ \[\]\]}}
// DP:            llmc.moe_dispatch %{{.+}}, %{{.+}} : (tensor<4x4xf32>, tensor<4x2xi32>) -> tensor<4x4x4xf32>
// DP-NOT:        shard.all_to_all
// DP:            llmc.matmul %{{.+}}, %{{.+}} transpose_b : tensor<4x4x4xf32>, tensor<4x4x4xf32> -> tensor<4x4x4xf32>
// DP-NOT:        shard.all_to_all
// DP:            llmc.moe_combine %{{.+}}, %{{.+}}, %{{.+}} : (tensor<4x4x4xf32>, tensor<4x2xf32>, tensor<4x2xi32>) -> tensor<4x4xf32>

// -----

// A dense layer under ep: the batch is split over ep as over dp, the weight
// replicated, its gradient summed over ep; no all-to-all.
func.func @train_step(%w: tensor<8x16xf32> {llmc.name = "w", llmc.role = "parameter"},
                      %x: tensor<4x8xf32> {llmc.name = "x", llmc.role = "input"})
    -> (tensor<8x16xf32> {llmc.name = "w"}, tensor<f32>) {
  %y = llmc.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
  %l = llmc.reduce_sum %y dims [0, 1] : tensor<4x16xf32> -> tensor<f32>
  %dy = llmc.constant dense<1.0> : tensor<4x16xf32>
  %g = llmc.matmul %x, %dy transpose_a : tensor<4x8xf32>, tensor<4x16xf32> -> tensor<8x16xf32>
  %s = llmc.constant dense<0.1> : tensor<8x16xf32>
  %u = llmc.mul %g, %s : tensor<8x16xf32>
  %w2 = llmc.sub %w, %u : tensor<8x16xf32>
  return %w2, %l : tensor<8x16xf32>, tensor<f32>
}

// EP-LABEL:    func.func @train_step
// EP-SAME:       tensor<2x8xf32> {{\{[^}]*}}llmc.sharding = {{\[\["ep"\],\ \[\]\]}}
// EP-NOT:        shard.all_to_all
// EP:            shard.all_reduce {{.*}} {{.*}}sum over ep{{.*}} : tensor<8x16xf32> -> tensor<8x16xf32>
// EP-NOT:        shard.all_to_all
// EP:            return
