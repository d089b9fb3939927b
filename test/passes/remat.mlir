// RUN: llmc-opt %s --llmc-autodiff --llmc-remat=policy=none | FileCheck %s --check-prefix=NONE
// RUN: llmc-opt %s --llmc-autodiff --llmc-remat=policy=selective | FileCheck %s --check-prefix=SEL
// RUN: llmc-opt %s --llmc-autodiff --llmc-remat=policy=full | FileCheck %s --check-prefix=FULL
// RUN: llmc-opt %s --llmc-autodiff --llmc-remat="policy=auto budget-bytes=100000" | FileCheck %s --check-prefix=ROOMY
// RUN: not llmc-opt %s --llmc-autodiff --llmc-remat="policy=auto budget-bytes=64" 2>&1 | FileCheck %s --check-prefix=TIGHT
// RUN: not llmc-opt %s --llmc-remat=policy=sometimes 2>&1 | FileCheck %s --check-prefix=BAD

// Two layers of matmul + GELU. Backward reads the GELU inputs (the GELU
// derivative), the GELU outputs (the next weight's gradient) and x.

// none leaves the program alone: one matmul per layer forward, no copies.
// NONE-LABEL: func.func @train_step
// NONE-NOT:     llmc.remat
// NONE-COUNT-2: llmc.gelu
// NONE-NOT:     llmc.gelu

// selective recomputes layer 0's GELU output from its input (kept anyway
// for the GELU derivative) right before the backward op that reads it
// (layer 1's weight gradient); the forward GELU is then read by forward ops
// only. Layer 1's GELU output is read by no backward op: not recomputed.
// SEL-LABEL: func.func @train_step
// SEL-SAME:    llmc.remat = {full_layers = 0 : i64, policy = "selective", recomputed_flops = 2.560000e+02 : f64, recomputed_ops = 1 : i64}
// SEL:         %[[A0:.+]] = llmc.matmul %arg0, %arg1
// SEL-NEXT:    %[[G0:.+]] = llmc.gelu %[[A0]] tanh
// SEL:         %[[G0R:.+]] = llmc.gelu %[[A0]] tanh
// SEL-NEXT:    llmc.matmul %[[G0R]], %{{.+}} transpose_a

// full recomputes each layer before its backward: layer 0's matmul is
// computed again (its output was kept only for the GELU derivative); layer
// 0's output feeds layer 1 and stays (layer 1's recomputation reads it).
// FULL-LABEL: func.func @train_step
// FULL-SAME:    policy = "full"
// FULL:         %[[G0:.+]] = llmc.gelu %{{.+}} tanh
// FULL:         llmc.matmul %[[G0]], %arg2 :
// FULL:         llmc.matmul %[[G0]], %{{.+}} transpose_a
// FULL:         %[[A0R:.+]] = llmc.matmul %arg0, %arg1 :
// FULL-COUNT-1: llmc.mul %[[A0R]], %[[A0R]]

// auto with room to spare recomputes nothing; with too little it says by
// how much the best plan misses.
// ROOMY: policy = "none"
// TIGHT: error: the training step does not fit the memory budget of 64 bytes (0.00 GiB) even with every layer recomputed: it needs {{[0-9]+}} bytes (0.00 GiB); raise [memory] budget_gib, lower the batch size or use microbatches
// BAD: error: unknown remat policy 'sometimes'; expected none, selective, full or auto
func.func @loss(%x: tensor<4x8xf32> {llmc.name = "x", llmc.role = "input"},
                %w0: tensor<8x8xf32> {llmc.name = "h.0.fc.weight", llmc.role = "parameter"},
                %w1: tensor<8x8xf32> {llmc.name = "h.1.fc.weight", llmc.role = "parameter"}) -> tensor<f32> {
  %a0 = llmc.matmul %x, %w0 : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32> loc("h.0.fc")
  %g0 = llmc.gelu %a0 tanh : tensor<4x8xf32> loc("h.0.act")
  %a1 = llmc.matmul %g0, %w1 : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32> loc("h.1.fc")
  %g1 = llmc.gelu %a1 tanh : tensor<4x8xf32> loc("h.1.act")
  %r = llmc.reduce_sum %g1 dims [0, 1] : tensor<4x8xf32> -> tensor<f32> loc("head")
  return %r : tensor<f32>
}
