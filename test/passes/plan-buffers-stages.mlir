// RUN: llmc-opt %s --split-input-file --verify-diagnostics --llmc-plan-buffers | FileCheck %s

// A pipelined step is planned stage by stage: each stage's plan holds the
// ops of that stage and those without llmc.stage (which run on every
// stage, as an argument's view or transpose may).
// CHECK-LABEL: func.func @each_stage_reads_its_own
// CHECK:         llmc.stage_arena_bytes = array<i64: {{[0-9]+}}, {{[0-9]+}}>
func.func @each_stage_reads_its_own(%a: tensor<2x4xf32> {llmc.name = "a", llmc.role = "input"})
    -> (tensor<2x4xf32> {llmc.name = "b"}, tensor<4x2xf32> {llmc.name = "c"})
    attributes {llmc.pipeline = {stages = 2 : i64}} {
  %b = llmc.neg %a {llmc.stage = 0 : i64} : tensor<2x4xf32>
  %t = llmc.transpose %a perm [1, 0] : tensor<2x4xf32> -> tensor<4x2xf32>
  %c = llmc.neg %t {llmc.stage = 1 : i64} : tensor<4x2xf32>
  return %b, %c : tensor<2x4xf32>, tensor<4x2xf32>
}

// -----

// An op without llmc.stage that reads a value of stage 0 has nothing to
// read on stage 1 (llmc-fold-attention-layout made such transposes before
// it copied the placement; codegen read the first argument in their place):
// an error, so that `llmc plan` and the mesh search refuse the program as
// `llmc compile` does.
func.func @a_stageless_op_reads_stage_0(%a: tensor<2x4xf32> {llmc.name = "a", llmc.role = "input"})
    -> (tensor<4x2xf32> {llmc.name = "c"})
    attributes {llmc.pipeline = {stages = 2 : i64}} {
  // expected-note @+1 {{the operand is made on stage 0 here}}
  %b = llmc.neg %a {llmc.stage = 0 : i64} : tensor<2x4xf32>
  // expected-error @+1 {{'llmc.transpose' op buffer plan: operand #0 does not exist on pipeline stage 1, which runs this op (it has no llmc.stage: a pass after llmc-split-pipeline created it without copyPipelinePlacement)}}
  %t = llmc.transpose %b perm [1, 0] : tensor<2x4xf32> -> tensor<4x2xf32>
  %c = llmc.neg %t {llmc.stage = 1 : i64} : tensor<4x2xf32>
  return %c : tensor<4x2xf32>
}
