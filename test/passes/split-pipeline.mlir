// RUN: llmc-opt %s --llmc-autodiff=microbatches=2 --llmc-partition=pp=2 --llmc-split-pipeline="stages=2 microbatches=2 schedule=gpipe" | FileCheck %s --check-prefix=GPIPE
// RUN: llmc-opt %s --llmc-autodiff=microbatches=2 --llmc-partition=pp=2 --llmc-split-pipeline="stages=2 microbatches=2 schedule=1f1b" | FileCheck %s --check-prefix=ONEF
// RUN: llmc-opt %s --llmc-autodiff=microbatches=2 --llmc-partition=pp=2 --llmc-split-pipeline="stages=2 microbatches=2 schedule=interleaved virtual-stages=2" | FileCheck %s --check-prefix=INTER
// RUN: llmc-opt %s --llmc-autodiff=microbatches=2 --llmc-partition=pp=2 --llmc-split-pipeline="stages=2 microbatches=2 schedule=1f1b boundaries=3" | FileCheck %s --check-prefix=PINNED
// With one stage the pass must not change anything:
// RUN: llmc-opt %s --llmc-autodiff=microbatches=2 > %t.before
// RUN: llmc-opt %s --llmc-autodiff=microbatches=2 --llmc-split-pipeline="stages=1 microbatches=2" > %t.after
// RUN: diff %t.before %t.after

// Four layers h.0 ... h.3 (a matmul and a tanh each, the last without
// tanh), the loss a sum; two microbatches. Two stages of equal cost get
// layers 0-1 and 2-3; the loss and its seed stay with layer 3.

// GPIPE-LABEL: func.func @train_step
// The loss is computed, and read, on the last stage; h.0's gradient on the first.
// GPIPE-SAME:    -> (tensor<f32> {llmc.name = "loss", llmc.sharding = [], llmc.stage = 1 : i64}, tensor<8x8xf32> {llmc.name = "grad.h.0.w", llmc.sharding = {{\[\[\], \[\]\]}}, llmc.stage = 0 : i64}
// GPIPE-SAME:    llmc.pipeline = {boundaries = array<i64: 2>, bubble = {{.*}}, in_flight = array<i64: 2, 2>, layers = 4 : i64, microbatches = 2 : i64, schedule = "gpipe", stages = 2 : i64, virtual_stages = 1 : i64}
// GPipe: the last stage runs both forwards before either backward.
// GPIPE:         llmc.matmul %{{[0-9]+}}, %arg4 {llmc.microbatch = 0 : i64, llmc.stage = 1 : i64}
// GPIPE:         llmc.matmul %{{[0-9]+}}, %arg4 {llmc.microbatch = 1 : i64, llmc.stage = 1 : i64}
// GPIPE:         llmc.send %{{.+}} axis 0 from 1 to 0 {{{.*}}llmc.reason = "gradient h.2.mlp (backward, microbatch 0): stage 1 -> 0, for h.1.mlp"

// ONEF-LABEL: func.func @train_step
// 1F1B keeps one microbatch in flight on the last stage (two on the first).
// ONEF-SAME:     in_flight = array<i64: 2, 1>{{.*}}schedule = "1f1b"
// An activation goes to the next stage right where it is made: the send
// and its receive are adjacent, and the receiving stage reads the receive.
// ONEF:          llmc.matmul %{{[0-9]+}}, %arg2 {llmc.microbatch = 0 : i64, llmc.stage = 0 : i64}
// ONEF-NEXT:     %[[H:.+]] = llmc.tanh
// ONEF-NEXT:     llmc.send %[[H]] axis 0 from 0 to 1 {llmc.bytes_per_rank = 128 : i64, llmc.microbatch = 0 : i64, llmc.reason = "activation h.1.mlp (forward, microbatch 0): stage 0 -> 1, for h.2.mlp", llmc.stage = 0 : i64} : tensor<4x8xf32>
// ONEF-NEXT:     %[[R:.+]] = llmc.recv axis 0 from 0 to 1 {llmc.bytes_per_rank = 128 : i64, llmc.microbatch = 0 : i64, llmc.reason = "activation h.1.mlp (forward, microbatch 0): stage 0 -> 1, for h.2.mlp", llmc.stage = 1 : i64} : tensor<4x8xf32>
// ONEF:          llmc.matmul %[[R]], %arg3 {llmc.microbatch = 0 : i64, llmc.stage = 1 : i64}
// 1F1B: the last stage runs microbatch 0's backward before microbatch 1's forward.
// ONEF:          llmc.matmul %{{[0-9]+}}, %arg4 {llmc.microbatch = 0 : i64, llmc.stage = 1 : i64}
// ONEF:          llmc.send %{{.+}} axis 0 from 1 to 0 {{{.*}}llmc.reason = "gradient h.2.mlp (backward, microbatch 0): stage 1 -> 0, for h.1.mlp"
// ONEF:          llmc.matmul %{{[0-9]+}}, %arg4 {llmc.microbatch = 1 : i64, llmc.stage = 1 : i64}
// ONEF:          return

// Interleaved, two chunks per stage: one layer per chunk, chunks 0 and 2
// on stage 0, 1 and 3 on stage 1, so activations go back and forth.
// INTER-LABEL: func.func @train_step
// INTER-SAME:    boundaries = array<i64: 1, 2, 3>{{.*}}schedule = "interleaved", stages = 2 : i64, virtual_stages = 2 : i64}
// INTER:         llmc.send %{{.+}} axis 0 from 0 to 1 {{{.*}}llmc.chunk = 0 : i64{{.*}}"activation h.0.mlp (forward, microbatch 0): stage 0 -> 1, for h.1.mlp"
// INTER:         llmc.send %{{.+}} axis 0 from 1 to 0 {{{.*}}llmc.chunk = 1 : i64{{.*}}"activation h.1.mlp (forward, microbatch 0): stage 1 -> 0, for h.2.mlp"
// INTER:         llmc.matmul %{{[0-9]+}}, %arg3 {llmc.chunk = 2 : i64, llmc.microbatch = 0 : i64, llmc.stage = 0 : i64}

// A pinned boundary: layers 0-2 on stage 0.
// PINNED-LABEL: func.func @train_step
// PINNED-SAME:   boundaries = array<i64: 3>
// PINNED:        llmc.matmul %{{[0-9]+}}, %arg3 {llmc.microbatch = 0 : i64, llmc.stage = 0 : i64}
// PINNED:        llmc.send {{.*}}"activation h.2.mlp (forward, microbatch 0): stage 0 -> 1, for h.3.mlp"
module {
  func.func @loss(%x: tensor<4x8xf32> {llmc.name = "x", llmc.role = "input"},
                  %w0: tensor<8x8xf32> {llmc.name = "h.0.w", llmc.role = "parameter"},
                  %w1: tensor<8x8xf32> {llmc.name = "h.1.w", llmc.role = "parameter"},
                  %w2: tensor<8x8xf32> {llmc.name = "h.2.w", llmc.role = "parameter"},
                  %w3: tensor<8x8xf32> {llmc.name = "h.3.w", llmc.role = "parameter"}) -> tensor<f32> {
    %a0 = llmc.matmul %x, %w0 : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32> loc("h.0.mlp")
    %t0 = llmc.tanh %a0 : tensor<4x8xf32> loc("h.0.mlp")
    %a1 = llmc.matmul %t0, %w1 : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32> loc("h.1.mlp")
    %t1 = llmc.tanh %a1 : tensor<4x8xf32> loc("h.1.mlp")
    %a2 = llmc.matmul %t1, %w2 : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32> loc("h.2.mlp")
    %t2 = llmc.tanh %a2 : tensor<4x8xf32> loc("h.2.mlp")
    %a3 = llmc.matmul %t2, %w3 : tensor<4x8xf32>, tensor<8x8xf32> -> tensor<4x8xf32> loc("h.3.mlp")
    %l = llmc.reduce_sum %a3 dims [0, 1] : tensor<4x8xf32> -> tensor<f32> loc("loss")
    return %l : tensor<f32>
  }
}
