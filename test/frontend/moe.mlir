// The MoE builder: a router, top-2 dispatch to 4 experts of capacity
// ceil(1.0 * 16 * 2 / 4) = 8, the experts as one batched SwiGLU over stacked
// weights [E, ...] (llmc.ep_split = 0: expert parallelism splits them; each
// expert's MLP width carries the tp split), and the load-balancing loss added
// to the cross-entropy.

// RUN: llmc compile %S/Inputs/moe-1layer.toml --emit=loss --locations | FileCheck %s

// CHECK-LABEL: func.func @loss(
// CHECK-SAME:    tensor<4x32xf32> {{{.*}}llmc.name = "model.layers.0.block_sparse_moe.gate.weight"
// CHECK-SAME:    tensor<4x48x32xf32> {llmc.ep_split = 0 : i64, {{.*}}llmc.name = "model.layers.0.block_sparse_moe.experts.w1.weight", llmc.role = "parameter", llmc.tp_split = array<i64: 1, 1>}
// CHECK-SAME:    tensor<4x48x32xf32> {llmc.ep_split = 0 : i64, {{.*}}llmc.name = "model.layers.0.block_sparse_moe.experts.w3.weight", llmc.role = "parameter", llmc.tp_split = array<i64: 1, 1>}
// CHECK-SAME:    tensor<4x32x48xf32> {llmc.ep_split = 0 : i64, {{.*}}llmc.name = "model.layers.0.block_sparse_moe.experts.w2.weight", llmc.role = "parameter", llmc.tp_split = array<i64: 2, 1>}
// CHECK:         %[[ROUTER:.+]] = llmc.matmul {{.*}} -> tensor<16x4xf32> loc("model.layers.0.block_sparse_moe.gate")
// CHECK:         %[[W:.+]], %[[E:.+]] = llmc.moe_topk %[[ROUTER]] k 2 normalize : tensor<16x4xf32> -> tensor<16x2xf32>, tensor<16x2xi32>
// CHECK:         %[[BUF:.+]] = llmc.moe_dispatch %{{.+}}, %[[E]] : (tensor<16x32xf32>, tensor<16x2xi32>) -> tensor<4x8x32xf32>
// CHECK-NEXT:    %[[G:.+]] = llmc.matmul %[[BUF]], %{{.+}} transpose_b : tensor<4x8x32xf32>, tensor<4x48x32xf32> -> tensor<4x8x48xf32> loc("model.layers.0.block_sparse_moe.experts.w1")
// CHECK-NEXT:    %[[U:.+]] = llmc.matmul %[[BUF]], %{{.+}} transpose_b : tensor<4x8x32xf32>, tensor<4x48x32xf32> -> tensor<4x8x48xf32> loc("model.layers.0.block_sparse_moe.experts.w3")
// CHECK-NEXT:    %[[S:.+]] = llmc.swiglu %[[G]], %[[U]] : tensor<4x8x48xf32>
// CHECK-NEXT:    %[[OUT:.+]] = llmc.matmul %[[S]], %{{.+}} transpose_b : tensor<4x8x48xf32>, tensor<4x32x48xf32> -> tensor<4x8x32xf32> loc("model.layers.0.block_sparse_moe.experts.w2")
// CHECK-NEXT:    llmc.moe_combine %[[OUT]], %[[W]], %[[E]] : (tensor<4x8x32xf32>, tensor<16x2xf32>, tensor<16x2xi32>) -> tensor<16x32xf32>
// CHECK:         %[[CE:.+]] = llmc.cross_entropy {{.*}} loc("loss")
// The balancing term: E * sum(f * P) times the weight, added to the loss.
// CHECK:         llmc.constant dense<4.000000e+00> : tensor<f32> loc("aux_loss")
// CHECK:         llmc.constant dense<2.000000e-02> : tensor<f32> loc("aux_loss")
// CHECK:         %[[TOTAL:.+]] = llmc.add %[[CE]], %{{.+}} : tensor<f32> loc("aux_loss")
// CHECK:         return %[[TOTAL]]

// A capacity factor far above k: the capacity is every token (16), computed
// in double before the cast (1e300 once came out as a dynamic dimension).
// RUN: sed 's/^capacity_factor = 1.0/capacity_factor = 1e300/' %S/Inputs/moe-1layer.toml > %t.toml
// RUN: llmc compile %t.toml --emit=loss | FileCheck %s --check-prefix=HUGE
// HUGE: llmc.moe_dispatch {{.*}} -> tensor<4x16x32xf32>
