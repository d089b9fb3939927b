// RUN: llmc-opt %s --split-input-file --llmc-partition="cp=2 bucket-bytes=0" | FileCheck %s --check-prefix=CP
// RUN: llmc-opt %s --split-input-file --llmc-partition="cp=4 bucket-bytes=0" | FileCheck %s --check-prefix=CP4
// cp = 1 is no mesh at all: the program must not change.
// RUN: llmc-opt %s --split-input-file --llmc-partition="cp=1" | FileCheck %s --check-prefix=ONE

// Causal attention of a sequence of 8 and its derivative, with the
// sequence split over cp: inputs are cut into 2·cp chunks, rank r holding
// chunks r and 2·cp-1-r (llmc.shard_zigzag), and attention becomes ring
// attention: K, V and their positions shift around the ring, each step is
// one llmc.attention_block masked by GLOBAL positions, the blocks merge by
// log-sum-exp, and in the backward each step is one
// llmc.attention_block_grad with the merged out and lse; the key and value
// gradients travel with their block and take one more step home.

// CP:          shard.grid @mesh(shape = 2)
// CP-LABEL:    func.func @train_step
// CP-SAME:       tensor<2x4x4xf32> {{\{[^}]*}}llmc.shard_groups = array<i64: 1, 2, 1>, llmc.shard_zigzag = array<i64: 0, 1, 0>, llmc.sharding = {{\[\[\],\ \["cp"\],\ \[\]\]}}
// CP:            %[[Q:.+]] = llmc.transpose
// Rank p's positions: [0, 1, 6, 7] + [1, 1, -1, -1] · 2p (chunks p and 3 - p).
// CP:            %[[OFF:.+]] = llmc.axis_offset axes [0] stride 2 : tensor<i32>
// CP:            %[[SPREAD:.+]] = llmc.broadcast %[[OFF]] dims [] : tensor<i32> -> tensor<4xi32>
// CP:            %[[SIGN:.+]] = llmc.constant dense<[1, 1, -1, -1]> : tensor<4xi32>
// CP:            %[[BASE:.+]] = llmc.constant dense<[0, 1, 6, 7]> : tensor<4xi32>
// CP:            %[[MUL:.+]] = llmc.mul %[[SIGN]], %[[SPREAD]]
// CP:            %[[POS:.+]] = llmc.add %[[BASE]], %[[MUL]]
// The own block first: the rank's queries, keys and positions.
// CP-NEXT:       %[[OWN:.+]], %[[OWNLSE:.+]] = llmc.attention_block %[[Q]], %[[Q]], %[[Q]] positions(%[[POS]], %[[POS]]) scale 5.000000e-01 : (tensor<2x1x4x4xf32>, tensor<2x1x4x4xf32>, tensor<2x1x4x4xf32>, tensor<4xi32>, tensor<4xi32>) -> (tensor<2x1x4x4xf32>, tensor<2x1x4xf32>)
// Then the visiting one: one shift of each (cp - 1).
// CP-NEXT:       %[[K1:.+]] = shard.shift %[[Q]] on @mesh grid_axes = [0] shift_axis = 0 offset = 1 rotate {llmc.bytes_per_rank = 128 : i64, llmc.reason = "keys, ring attention forward step 1 of 1: ring shift over cp{{.*}}"} : tensor<2x1x4x4xf32>
// CP-NEXT:       %[[V1:.+]] = shard.shift {{.*}}llmc.reason = "values, ring attention forward step 1 of 1{{.*}}"
// CP-NEXT:       %[[KPOS:.+]] = shard.shift %[[POS]] {{.*}}llmc.bytes_per_rank = 16 : i64, llmc.reason = "key positions, ring attention forward step 1 of 1{{.*}}"} : tensor<4xi32> -> tensor<4xi32>
// CP-NEXT:       %[[VIS:.+]], %[[VISLSE:.+]] = llmc.attention_block %[[Q]], %[[K1]], %[[V1]] positions(%[[POS]], %[[KPOS]])
// The merge by log-sum-exp, elementwise on [B, H, T/n(, D)].
// CP-NEXT:       %[[M:.+]] = llmc.max %[[OWNLSE]], %[[VISLSE]] : tensor<2x1x4xf32>
// CP:            %[[SUM:.+]] = llmc.add
// CP-NEXT:       %[[LOG:.+]] = llmc.log %[[SUM]]
// CP-NEXT:       %[[LSE:.+]] = llmc.add %[[M]], %[[LOG]] : tensor<2x1x4xf32>
// CP:            %[[OUT:.+]] = llmc.add %{{.+}}, %{{.+}} : tensor<2x1x4x4xf32>
// No [T/n, T/n] block of scores, probabilities or a mask anywhere.
// CP-NOT:        tensor<2x1x4x4xi1>
// CP-NOT:        llmc.attention_grad
// CP:            %[[BPOS:.+]] = llmc.add
// CP-NEXT:       %{{.+}}, %[[DK0:.+]], %[[DV0:.+]] = llmc.attention_block_grad %[[Q]], %[[Q]], %[[Q]], %[[OUT]], %{{.+}}, %[[LSE]] positions(%[[BPOS]], %[[BPOS]])
// CP-NEXT:       %[[BK1:.+]] = shard.shift {{.*}}"keys, ring attention backward step 1 of 1{{.*}}"
// CP-NEXT:       %[[BV1:.+]] = shard.shift {{.*}}"values, ring attention backward step 1 of 1{{.*}}"
// CP-NEXT:       %[[BKPOS:.+]] = shard.shift %[[BPOS]] {{.*}}"key positions, ring attention backward step 1 of 1{{.*}}"
// CP-NEXT:       shard.shift %[[DK0]] {{.*}}"partial key gradients, ring attention backward step 1 of 1{{.*}}"
// CP-NEXT:       shard.shift %[[DV0]] {{.*}}"partial value gradients, ring attention backward step 1 of 1{{.*}}"
// CP-NEXT:       llmc.attention_block_grad %[[Q]], %[[BK1]], %[[BV1]], %[[OUT]], %{{.+}}, %[[LSE]] positions(%[[BPOS]], %[[BKPOS]])
// CP:            shard.shift {{.*}}"key gradients, ring attention backward: return to the owner{{.*}}"
// CP:            shard.shift {{.*}}"value gradients, ring attention backward: return to the owner{{.*}}"
// The sums over tokens end partial over cp and are finished by all-reduce.
// CP:            shard.all_reduce {{.*}} grid_axes = [0] {{.*}}sum over cp{{.*}} : tensor<f32>
// CP:            shard.all_reduce {{.*}} grid_axes = [0] {{.*}}sum over cp{{.*}} : tensor<f32>
// CP-NEXT:       return

// cp = 4: 8 chunks of 1, rank p holds chunks p and 7 - p; 3 ring steps
// forward, and in the backward 3 steps plus the way home.
// CP4:           shard.grid @mesh(shape = 4)
// CP4-LABEL:     func.func @train_step
// CP4-SAME:        tensor<2x2x4xf32>
// CP4:           llmc.axis_offset axes [0] stride 1 : tensor<i32>
// CP4:           llmc.constant dense<[0, 7]> : tensor<2xi32>
// CP4-COUNT-3:   "keys, ring attention forward step
// CP4-NOT:       "keys, ring attention forward step
// The last forward block, after the third shift, and no other after it.
// CP4:           llmc.attention_block %{{.+}}, %{{.+}}, %{{.+}} positions
// CP4-NOT:       llmc.attention_block %
// CP4-COUNT-3:   "partial key gradients, ring attention backward step
// CP4:           llmc.attention_block_grad
// CP4:           "key gradients, ring attention backward: return to the owner

// ONE-LABEL:   func.func @train_step
// ONE-SAME:      tensor<2x8x4xf32> {llmc.name = "x", llmc.role = "input"}
// ONE-NOT:       shard.
// ONE:           llmc.attention %{{.+}}, %{{.+}}, %{{.+}} causal
// ONE:           llmc.attention_grad
// ONE-NOT:       shard.
module {
  func.func @train_step(%x: tensor<2x8x4xf32> {llmc.name = "x", llmc.role = "input"})
      -> (tensor<f32> {llmc.name = "loss"}, tensor<f32> {llmc.name = "g"}) {
    %r = llmc.reshape %x : tensor<2x8x4xf32> -> tensor<2x8x1x4xf32>
    %q = llmc.transpose %r perm [0, 2, 1, 3] : tensor<2x8x1x4xf32> -> tensor<2x1x8x4xf32>
    %o = llmc.attention %q, %q, %q causal : (tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32>) -> tensor<2x1x8x4xf32>
    %loss = llmc.reduce_sum %o dims [0, 1, 2, 3] : tensor<2x1x8x4xf32> -> tensor<f32>
    %one = llmc.constant dense<1.0> : tensor<f32>
    %do = llmc.broadcast %one dims [] : tensor<f32> -> tensor<2x1x8x4xf32>
    %dq, %dk, %dv = llmc.attention_grad %q, %q, %q, %o, %do causal : (tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32>) -> (tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32>)
    %s1 = llmc.add %dq, %dk : tensor<2x1x8x4xf32>
    %s2 = llmc.add %s1, %dv : tensor<2x1x8x4xf32>
    %g = llmc.reduce_sum %s2 dims [0, 1, 2, 3] : tensor<2x1x8x4xf32> -> tensor<f32>
    return %loss, %g : tensor<f32>, tensor<f32>
  }
}

// -----

// The form autodiff emits: the forward returns its lse and the backward
// takes it, so the backward ring reads the merged lse through that operand.
// Not causal: every query takes the last position (7), seeing every key,
// and the key positions stay home (no shift of them).
// CP-LABEL:    func.func @train_step
// CP:            %[[Q:.+]] = llmc.transpose
// CP:            %[[KPOS:.+]] = llmc.add
// CP-NEXT:       %[[LAST:.+]] = llmc.constant dense<7> : tensor<i32>
// CP-NEXT:       %[[QPOS:.+]] = llmc.broadcast %[[LAST]] dims [] : tensor<i32> -> tensor<4xi32>
// CP-NEXT:       llmc.attention_block %[[Q]], %[[Q]], %[[Q]] positions(%[[QPOS]], %[[KPOS]])
// CP-NOT:        "key positions
// CP:            llmc.attention_block %[[Q]], %{{.+}}, %{{.+}} positions(%[[QPOS]], %[[KPOS]])
// CP:            llmc.log
// CP-NEXT:       %[[LSE:.+]] = llmc.add %{{.+}}, %{{.+}} : tensor<2x1x4xf32>
// CP:            llmc.attention_block_grad %[[Q]], %[[Q]], %[[Q]], %{{.+}}, %{{.+}}, %[[LSE]] positions(
// CP-NOT:        "key positions
// CP:            llmc.attention_block_grad %[[Q]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[LSE]] positions(

// ONE-LABEL:   func.func @train_step
// ONE:           llmc.attention %{{.+}}, %{{.+}}, %{{.+}} :
// ONE:           llmc.attention_grad %{{.+}} lse %{{.+}} :
// ONE-NOT:       shard.
module {
  func.func @train_step(%x: tensor<2x8x4xf32> {llmc.name = "x", llmc.role = "input"})
      -> (tensor<f32> {llmc.name = "loss"}, tensor<f32> {llmc.name = "g"}) {
    %r = llmc.reshape %x : tensor<2x8x4xf32> -> tensor<2x8x1x4xf32>
    %q = llmc.transpose %r perm [0, 2, 1, 3] : tensor<2x8x1x4xf32> -> tensor<2x1x8x4xf32>
    %o, %lse = llmc.attention %q, %q, %q : (tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32>) -> (tensor<2x1x8x4xf32>, tensor<2x1x8xf32>)
    %loss = llmc.reduce_sum %o dims [0, 1, 2, 3] : tensor<2x1x8x4xf32> -> tensor<f32>
    %one = llmc.constant dense<1.0> : tensor<f32>
    %do = llmc.broadcast %one dims [] : tensor<f32> -> tensor<2x1x8x4xf32>
    %dq, %dk, %dv = llmc.attention_grad %q, %q, %q, %o, %do lse %lse : (tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32>, tensor<2x1x8xf32>) -> (tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32>, tensor<2x1x8x4xf32>)
    %s1 = llmc.add %dq, %dk : tensor<2x1x8x4xf32>
    %s2 = llmc.add %s1, %dv : tensor<2x1x8x4xf32>
    %g = llmc.reduce_sum %s2 dims [0, 1, 2, 3] : tensor<2x1x8x4xf32> -> tensor<f32>
    return %loss, %g : tensor<f32>, tensor<f32>
  }
}

// -----

// bf16: the blocks run in bf16 (keys and values travel as bf16), their
// outputs merge in f32, and the partial key and value gradients are
// summed and travel in f32, rounded to bf16 once they are home.
// CP-LABEL:    func.func @train_step
// CP:            %[[OWN:.+]], %{{.+}} = llmc.attention_block {{.*}} -> (tensor<2x1x4x4xbf16>, tensor<2x1x4xf32>)
// CP:            shard.shift {{.*}}"keys, ring attention forward step 1 of 1{{.*}} : tensor<2x1x4x4xbf16> -> tensor<2x1x4x4xbf16>
// CP:            %[[VIS:.+]], %{{.+}} = llmc.attention_block {{.*}} -> (tensor<2x1x4x4xbf16>, tensor<2x1x4xf32>)
// CP:            llmc.cast %[[VIS]] : tensor<2x1x4x4xbf16> -> tensor<2x1x4x4xf32>
// CP:            %{{.+}}, %[[DK:.+]], %{{.+}} = llmc.attention_block_grad {{.*}} -> (tensor<2x1x4x4xbf16>, tensor<2x1x4x4xbf16>, tensor<2x1x4x4xbf16>)
// CP:            %[[DKW:.+]] = llmc.cast %[[DK]] : tensor<2x1x4x4xbf16> -> tensor<2x1x4x4xf32>
// CP:            shard.shift {{.*}}"keys, ring attention backward step 1 of 1{{.*}} : tensor<2x1x4x4xbf16> -> tensor<2x1x4x4xbf16>
// CP:            shard.shift %[[DKW]] {{.*}}"partial key gradients, ring attention backward step 1 of 1{{.*}} : tensor<2x1x4x4xf32> -> tensor<2x1x4x4xf32>
// CP:            %[[HOME:.+]] = shard.shift {{.*}}"key gradients, ring attention backward: return to the owner{{.*}} : tensor<2x1x4x4xf32> -> tensor<2x1x4x4xf32>
// CP:            llmc.cast %[[HOME]] : tensor<2x1x4x4xf32> -> tensor<2x1x4x4xbf16>

// ONE-LABEL:   func.func @train_step
// ONE:           llmc.attention %{{.+}} causal :
// ONE-NOT:       shard.
module {
  func.func @train_step(%x: tensor<2x8x4xbf16> {llmc.name = "x", llmc.role = "input"})
      -> (tensor<f32> {llmc.name = "loss"}, tensor<f32> {llmc.name = "g"}) {
    %r = llmc.reshape %x : tensor<2x8x4xbf16> -> tensor<2x8x1x4xbf16>
    %q = llmc.transpose %r perm [0, 2, 1, 3] : tensor<2x8x1x4xbf16> -> tensor<2x1x8x4xbf16>
    %o, %lse = llmc.attention %q, %q, %q causal : (tensor<2x1x8x4xbf16>, tensor<2x1x8x4xbf16>, tensor<2x1x8x4xbf16>) -> (tensor<2x1x8x4xbf16>, tensor<2x1x8xf32>)
    %loss = llmc.reduce_sum %o dims [0, 1, 2, 3] : tensor<2x1x8x4xbf16> -> tensor<f32>
    %one = llmc.constant dense<1.0> : tensor<bf16>
    %do = llmc.broadcast %one dims [] : tensor<bf16> -> tensor<2x1x8x4xbf16>
    %dq, %dk, %dv = llmc.attention_grad %q, %q, %q, %o, %do lse %lse causal : (tensor<2x1x8x4xbf16>, tensor<2x1x8x4xbf16>, tensor<2x1x8x4xbf16>, tensor<2x1x8x4xbf16>, tensor<2x1x8x4xbf16>, tensor<2x1x8xf32>) -> (tensor<2x1x8x4xbf16>, tensor<2x1x8x4xbf16>, tensor<2x1x8x4xbf16>)
    %s1 = llmc.add %dq, %dk : tensor<2x1x8x4xbf16>
    %s2 = llmc.add %s1, %dv : tensor<2x1x8x4xbf16>
    %g = llmc.reduce_sum %s2 dims [0, 1, 2, 3] : tensor<2x1x8x4xbf16> -> tensor<f32>
    return %loss, %g : tensor<f32>, tensor<f32>
  }
}

// -----

// Rotary embedding of a split sequence: the rank's global positions become
// the op's `positions` operand (no gather of the sequence).
// CP-LABEL:    func.func @train_step
// CP:            %[[OFF:.+]] = llmc.axis_offset axes [0] stride 2 : tensor<i32>
// CP:            %[[POS:.+]] = llmc.add
// CP-NEXT:       llmc.rope %{{.+}} positions %[[POS]] theta 1.000000e+04 : (tensor<1x1x4x4xf32>, tensor<4xi32>) -> tensor<1x1x4x4xf32>
// CP-NOT:        shard.all_gather

// CP4-LABEL:   func.func @train_step
// CP4:           llmc.rope {{.*}} : (tensor<1x1x2x4xf32>, tensor<2xi32>) -> tensor<1x1x2x4xf32>

// ONE-LABEL:   func.func @train_step
// ONE:           llmc.rope %{{.+}} theta 1.000000e+04 : (tensor<1x1x8x4xf32>) -> tensor<1x1x8x4xf32>
// ONE-NOT:       shard.
module {
  func.func @train_step(%x: tensor<1x8x4xf32> {llmc.name = "x", llmc.role = "input"})
      -> (tensor<f32> {llmc.name = "loss"}) {
    %r = llmc.reshape %x : tensor<1x8x4xf32> -> tensor<1x8x1x4xf32>
    %q = llmc.transpose %r perm [0, 2, 1, 3] : tensor<1x8x1x4xf32> -> tensor<1x1x8x4xf32>
    %y = llmc.rope %q theta 1.0e+04 : (tensor<1x1x8x4xf32>) -> tensor<1x1x8x4xf32>
    %loss = llmc.reduce_sum %y dims [0, 1, 2, 3] : tensor<1x1x8x4xf32> -> tensor<f32>
    return %loss : tensor<f32>
  }
}
