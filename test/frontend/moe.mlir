// The MoE builder: a router, top-2 dispatch to 4 experts of capacity
// ceil(1.0 * 16 * 2 / 4) = 8, per-expert SwiGLU with Mixtral names, and the
// load-balancing loss added to the cross-entropy.

// RUN: llmc compile %S/Inputs/moe-1layer.toml --emit=loss --locations | FileCheck %s

// CHECK-LABEL: func.func @loss(
// CHECK-SAME:    tensor<4x32xf32> {{{.*}}llmc.name = "model.layers.0.block_sparse_moe.gate.weight"
// CHECK-SAME:    tensor<48x32xf32> {{{.*}}llmc.name = "model.layers.0.block_sparse_moe.experts.0.w1.weight"
// CHECK-SAME:    tensor<32x48xf32> {{{.*}}llmc.name = "model.layers.0.block_sparse_moe.experts.3.w2.weight"
// CHECK:         %[[ROUTER:.+]] = llmc.matmul {{.*}} -> tensor<16x4xf32> loc("model.layers.0.block_sparse_moe.gate")
// CHECK:         %[[W:.+]], %[[E:.+]] = llmc.moe_topk %[[ROUTER]] k 2 normalize : tensor<16x4xf32> -> tensor<16x2xf32>, tensor<16x2xi32>
// CHECK:         %[[BUF:.+]] = llmc.moe_dispatch %{{.+}}, %[[E]] : (tensor<16x32xf32>, tensor<16x2xi32>) -> tensor<4x8x32xf32>
// CHECK:         llmc.slice %[[BUF]] starts [3, 0, 0] limits [4, 8, 32]
// CHECK:         %[[OUT:.+]] = llmc.concat {{.*}} dim 0 : ({{.*}}) -> tensor<4x8x32xf32>
// CHECK:         llmc.moe_combine %[[OUT]], %[[W]], %[[E]] : (tensor<4x8x32xf32>, tensor<16x2xf32>, tensor<16x2xi32>) -> tensor<16x32xf32>
// CHECK:         %[[CE:.+]] = llmc.cross_entropy {{.*}} loc("loss")
// The balancing term: E * sum(f * P) times the weight, added to the loss.
// CHECK:         llmc.constant dense<4.000000e+00> : tensor<f32> loc("aux_loss")
// CHECK:         llmc.constant dense<2.000000e-02> : tensor<f32> loc("aux_loss")
// CHECK:         %[[TOTAL:.+]] = llmc.add %[[CE]], %{{.+}} : tensor<f32> loc("aux_loss")
// CHECK:         return %[[TOTAL]]
