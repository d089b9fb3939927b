// RUN: llmc-opt %s --split-input-file --llmc-partition="dp=2 bucket-bytes=0" | FileCheck %s --check-prefix=DP
// RUN: llmc-opt %s --split-input-file --llmc-partition="tp=2 bucket-bytes=0" | FileCheck %s --check-prefix=TP
// RUN: llmc-opt %s --split-input-file --llmc-partition="dp=2 zero=1 bucket-bytes=0" | FileCheck %s --check-prefix=ZERO1
// RUN: llmc-opt %s --split-input-file --llmc-partition="dp=2 zero=3 bucket-bytes=0" | FileCheck %s --check-prefix=ZERO3
// With buckets (the default, 25 MiB): the gradient's and the loss's
// all-reduces become one, of their concatenation, where the first was.
// RUN: llmc-opt %s --split-input-file --llmc-partition="dp=2" | FileCheck %s --check-prefix=BUCKET

// One linear layer and its SGD update: y = x W, loss = sum(y), the weight
// gradient x^T dy, and W' = W - 0.1 dW. W is column-parallel under tp.

// DP:          shard.grid @mesh(shape = 2)
// DP-LABEL:    func.func @train_step
// DP-SAME:       (%[[W:[^:]+]]: tensor<8x16xf32> {{\{[^}]*}}llmc.sharding = {{\[\[\],\ \[\]\]}}
// DP-SAME:       %[[X:[^:]+]]: tensor<2x8xf32> {{\{[^}]*}}llmc.sharding = {{\[\["dp"\],\ \[\]\]}}
// The forward matmul runs on each rank's half of the batch, no collective:
// DP:            %[[Y:.+]] = llmc.matmul %[[X]], %[[W]] : tensor<2x8xf32>, tensor<8x16xf32> -> tensor<2x16xf32>
// The loss is a pending sum over dp until it is returned:
// DP:            %[[L:.+]] = llmc.reduce_sum %[[Y]]
// The weight gradient contracts the split batch: a pending sum, summed once
// before the update.
// DP:            %[[G:.+]] = llmc.matmul %[[X]], %{{.+}} transpose_a
// DP:            %[[GR:.+]] = shard.all_reduce %[[G]] on @mesh grid_axes = [0] {llmc.bytes_per_rank = 512 : i64, llmc.reason = "{{.*}}sum over dp{{.*}}"}
// DP:            llmc.sub %[[W]], %{{.+}} : tensor<8x16xf32>
// DP:            shard.all_reduce %[[L]] on @mesh grid_axes = [0]
// DP:            return

// BUCKET-LABEL: func.func @train_step
// The bucket holds its members in the order they are computed (the loss,
// then the weight gradient) and is issued right after the last of them;
// each piece is sliced out just before its first reader (the update, then
// the returned loss).
// BUCKET:        %[[G:.+]] = llmc.matmul %{{.+}}, %{{.+}} transpose_a
// BUCKET:        %[[FLAT:.+]] = llmc.concat %{{.+}}, %{{.+}} dim 0 : (tensor<1xf32>, tensor<128xf32>) -> tensor<129xf32>
// BUCKET-NEXT:   %[[SUM:.+]] = shard.all_reduce %[[FLAT]] on @mesh grid_axes = [0] {llmc.bytes_per_rank = 516 : i64, llmc.reason = "bucket of 2 all-reduces: {{.*}}"} : tensor<129xf32> -> tensor<129xf32>
// BUCKET-NEXT:   llmc.slice %[[SUM]] starts [1] limits [129]
// BUCKET:        llmc.sub
// BUCKET:        llmc.slice %[[SUM]] starts [0] limits [1]
// BUCKET-NOT:    shard.all_reduce

// TP:          shard.grid @mesh(shape = 2)
// TP-LABEL:    func.func @train_step
// TP-SAME:       tensor<8x8xf32> {{\{[^}]*}}llmc.sharding = {{\[\[\],\ \["tp"\]\]}}
// TP-SAME:       tensor<4x8xf32> {{\{[^}]*}}llmc.sharding = {{\[\[\],\ \[\]\]}}
// Column parallel: each rank computes its half of the columns, and its half
// of the weight gradient; only the scalar loss is summed.
// TP:            llmc.matmul {{.*}} : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32>
// TP-NOT:        shard.all_gather
// TP:            llmc.sub {{.*}} : tensor<8x8xf32>
// TP:            shard.all_reduce {{.*}} : tensor<f32> -> tensor<f32>
// TP-NEXT:       return

// ZERO1-LABEL: func.func @train_step
// ZERO1-SAME:    %[[M:[^:]+]]: tensor<4x16xf32> {{\{[^}]*}}llmc.name = "optimizer.m.w"{{.*}}llmc.sharding = {{\[\["dp"\],\ \[\]\]}}
// The gradient is reduce-scattered onto the moment's half, the update runs
// on that half, and the new weight is gathered back.
// ZERO1:         shard.reduce_scatter {{.*}} on @mesh grid_axes = [0] scatter_axis = 0 {{.*}} : tensor<8x16xf32> -> tensor<4x16xf32>
// ZERO1-NOT:     shard.all_reduce {{.*}} tensor<8x16xf32>
// ZERO1:         shard.all_gather {{.*}} gather_axis = 0 {{.*}} : tensor<4x16xf32> -> tensor<8x16xf32>

// ZERO3-LABEL: func.func @train_step
// ZERO3-SAME:    tensor<4x16xf32> {{\{[^}]*}}llmc.name = "w"{{.*}}llmc.sharding = {{\[\["dp"\],\ \[\]\]}}
// The weight is gathered just before the forward matmul, and again for the
// backward's use, and the update writes the rank's half.
// ZERO3:         shard.all_gather {{.*}} "{{.*}}(forward)"{{.*}} : tensor<4x16xf32> -> tensor<8x16xf32>
// ZERO3:         llmc.matmul
// ZERO3:         llmc.sub {{.*}} : tensor<4x16xf32>
// ZERO3:         return
module {
  func.func @train_step(
      %w: tensor<8x16xf32> {llmc.name = "w", llmc.role = "parameter", llmc.tp_split = array<i64: 1, 1>},
      %x: tensor<4x8xf32> {llmc.name = "x", llmc.role = "input"},
      %m: tensor<8x16xf32> {llmc.name = "optimizer.m.w", llmc.role = "optimizer_state", llmc.tp_split = array<i64: 1, 1>})
      -> (tensor<f32> {llmc.name = "loss"}, tensor<8x16xf32> {llmc.name = "w"},
          tensor<8x16xf32> {llmc.name = "optimizer.m.w"}) {
    %y = llmc.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32>
    %loss = llmc.reduce_sum %y dims [0, 1] : tensor<4x16xf32> -> tensor<f32>
    %one = llmc.constant dense<1.0> : tensor<f32>
    %dy = llmc.broadcast %one dims [] : tensor<f32> -> tensor<4x16xf32>
    %g = llmc.matmul %x, %dy transpose_a : tensor<4x8xf32>, tensor<4x16xf32> -> tensor<8x16xf32>
    %m2 = llmc.add %m, %g : tensor<8x16xf32>
    %lr = llmc.constant dense<0.1> : tensor<f32>
    %lrb = llmc.broadcast %lr dims [] : tensor<f32> -> tensor<8x16xf32>
    %step = llmc.mul %m2, %lrb : tensor<8x16xf32>
    %w2 = llmc.sub %w, %step : tensor<8x16xf32>
    return %loss, %w2, %m2 : tensor<f32>, tensor<8x16xf32>, tensor<8x16xf32>
  }
}

// -----

// Must not change: a function with another name, and scalars that no rank
// splits (the schedule's inputs stay whole on every rank).
// DP-LABEL:    func.func @not_the_step
// DP-NOT:        shard.
// DP:            return
// TP-LABEL:    func.func @not_the_step
// TP-NOT:        shard.
// TP:            return
module {
  func.func @not_the_step(%x: tensor<4x8xf32> {llmc.name = "x", llmc.role = "input"}) -> tensor<f32> {
    %s = llmc.reduce_sum %x dims [0, 1] : tensor<4x8xf32> -> tensor<f32>
    return %s : tensor<f32>
  }
}

// -----

// DP-LABEL:    func.func @train_step
// DP-SAME:       (%[[S:[^:]+]]: tensor<f32> {{\{[^}]*}}llmc.sharding = {{\[\]}}
// DP-NOT:        shard.
// DP:            return
module {
  func.func @train_step(%s: tensor<f32> {llmc.name = "optimizer.step", llmc.role = "input"})
      -> (tensor<f32> {llmc.name = "lr"}) {
    %two = llmc.constant dense<2.0> : tensor<f32>
    %lr = llmc.mul %s, %two : tensor<f32>
    return %lr : tensor<f32>
  }
}
