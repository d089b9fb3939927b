// The loss gradient under a mesh (sharding/ShardRulesLoss.cpp): positions split
// over dp run llmc.cross_entropy_grad locally, a mean becoming a sum with
// dloss over the global count of counted positions; the vocabulary split
// over tp (the lm_head weight's rows) runs the expansion on the local
// columns with the row max and sum all-reduced.
// RUN: llmc-opt %s --split-input-file --llmc-partition="dp=2 bucket-bytes=0" | FileCheck %s --check-prefix=DP
// RUN: llmc-opt %s --split-input-file --llmc-partition="tp=2 bucket-bytes=0" | FileCheck %s --check-prefix=TP

// DP-LABEL:    func.func @train_step
// DP:            %[[C:.+]] = shard.all_reduce %{{.+}} on @mesh grid_axes = [0] {{.*}}llmc.reason = "counted positions{{.*}}(backward)"
// DP:            %[[N:.+]] = llmc.max %[[C]]
// DP-NEXT:       %[[S:.+]] = llmc.div %{{.+}}, %[[N]]
// DP-NEXT:       %[[D:.+]] = llmc.cross_entropy_grad %{{.+}}, %{{.+}}, %[[S]] ignore_index -100 reduction sum : (tensor<2x4x32xf32>, tensor<2x4xi32>, tensor<f32>) -> tensor<2x4x32xf32>
// DP:            return

// TP-LABEL:    func.func @train_step
// TP-NOT:        llmc.cross_entropy_grad
// TP:            shard.all_reduce {{.*}}reduction = max {{.*}}llmc.reason = "row maximum of a vocabulary-parallel softmax{{.*}}(backward)"{{.*}} : tensor<4x4x1xf32>
// TP:            shard.all_reduce {{.*}}llmc.reason = "row sum of a vocabulary-parallel softmax{{.*}}(backward)"{{.*}} : tensor<4x4x1xf32>
// TP:            llmc.iota dim 2 : tensor<4x4x16xi32>
// TP-NOT:        llmc.cross_entropy_grad
// TP:            return
module {
  func.func @train_step(
      %h: tensor<4x4x8xf32> {llmc.name = "h", llmc.role = "input"},
      %w: tensor<32x8xf32> {llmc.name = "w", llmc.role = "parameter", llmc.tp_split = array<i64: 0, 1>},
      %t: tensor<4x4xi32> {llmc.name = "targets", llmc.role = "input"})
      -> (tensor<f32> {llmc.name = "loss"}, tensor<32x8xf32> {llmc.name = "w"}) {
    %logits = llmc.matmul %h, %w transpose_b : tensor<4x4x8xf32>, tensor<32x8xf32> -> tensor<4x4x32xf32> loc("lm_head")
    %loss = llmc.cross_entropy %logits, %t ignore_index -100 reduction mean : (tensor<4x4x32xf32>, tensor<4x4xi32>) -> tensor<f32> loc("loss")
    %one = llmc.constant dense<1.0> : tensor<f32>
    %d = llmc.cross_entropy_grad %logits, %t, %one ignore_index -100 reduction mean : (tensor<4x4x32xf32>, tensor<4x4xi32>, tensor<f32>) -> tensor<4x4x32xf32> loc(fused<"backward">["loss"])
    %rd = llmc.reshape %d : tensor<4x4x32xf32> -> tensor<16x32xf32>
    %rh = llmc.reshape %h : tensor<4x4x8xf32> -> tensor<16x8xf32>
    %g = llmc.matmul %rd, %rh transpose_a : tensor<16x32xf32>, tensor<16x8xf32> -> tensor<32x8xf32>
    %w2 = llmc.sub %w, %g : tensor<32x8xf32>
    return %loss, %w2 : tensor<f32>, tensor<32x8xf32>
  }
}

// -----

// With the forward's lse (llmc-share-loss-statistics' form): under dp the
// lse is split like the positions, the forward's mean becomes a local sum
// that still returns it, and the gradient reads the local lse. Under tp
// (vocabulary split) the lse is the all-reduced max plus the log of the
// all-reduced sum, and the gradient's expansion recomputes its statistics.
// DP-LABEL:    func.func @train_step
// DP:            %{{.+}}, %[[LSE:.+]] = llmc.cross_entropy %{{.+}}, %{{.+}} ignore_index -100 reduction sum : (tensor<2x4x32xf32>, tensor<2x4xi32>) -> (tensor<f32>, tensor<2x4xf32>)
// DP:            llmc.cross_entropy_grad %{{.+}}, %{{.+}}, %{{.+}} lse %[[LSE]] ignore_index -100 reduction sum : (tensor<2x4x32xf32>, tensor<2x4xi32>, tensor<f32>, tensor<2x4xf32>) -> tensor<2x4x32xf32>
// DP:            return

// TP-LABEL:    func.func @train_step
// TP-NOT:        llmc.cross_entropy
// TP:            shard.all_reduce {{.*}}reduction = max {{.*}}llmc.reason = "row maximum of a vocabulary-parallel cross-entropy's lse{{.*}}(forward)"{{.*}} : tensor<4x4x1xf32>
// TP:            %[[LSE:.+]] = llmc.add
// TP:            llmc.reshape %[[LSE]] {{.*}}: tensor<4x4x1xf32> -> tensor<4x4xf32>
// TP-NOT:        llmc.cross_entropy_grad
// TP:            return
module {
  func.func @train_step(
      %h: tensor<4x4x8xf32> {llmc.name = "h", llmc.role = "input"},
      %w: tensor<32x8xf32> {llmc.name = "w", llmc.role = "parameter", llmc.tp_split = array<i64: 0, 1>},
      %t: tensor<4x4xi32> {llmc.name = "targets", llmc.role = "input"})
      -> (tensor<f32> {llmc.name = "loss"}, tensor<4x4xf32> {llmc.name = "lse"}, tensor<32x8xf32> {llmc.name = "w"}) {
    %logits = llmc.matmul %h, %w transpose_b : tensor<4x4x8xf32>, tensor<32x8xf32> -> tensor<4x4x32xf32> loc("lm_head")
    %loss, %lse = llmc.cross_entropy %logits, %t ignore_index -100 reduction mean : (tensor<4x4x32xf32>, tensor<4x4xi32>) -> (tensor<f32>, tensor<4x4xf32>) loc("loss")
    %one = llmc.constant dense<1.0> : tensor<f32>
    %d = llmc.cross_entropy_grad %logits, %t, %one lse %lse ignore_index -100 reduction mean : (tensor<4x4x32xf32>, tensor<4x4xi32>, tensor<f32>, tensor<4x4xf32>) -> tensor<4x4x32xf32> loc(fused<"backward">["loss"])
    %rd = llmc.reshape %d : tensor<4x4x32xf32> -> tensor<16x32xf32>
    %rh = llmc.reshape %h : tensor<4x4x8xf32> -> tensor<16x8xf32>
    %g = llmc.matmul %rd, %rh transpose_a : tensor<16x32xf32>, tensor<16x8xf32> -> tensor<32x8xf32>
    %w2 = llmc.sub %w, %g : tensor<32x8xf32>
    return %loss, %lse, %w2 : tensor<f32>, tensor<4x4xf32>, tensor<32x8xf32>
  }
}
