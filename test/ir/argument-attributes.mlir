// RUN: llmc-opt %s --split-input-file | llmc-opt --split-input-file | FileCheck %s

// Parameters and inputs are function arguments named and classified by
// llmc.name, llmc.role and (for parameters) llmc.init.
// CHECK-LABEL: func.func @loss
// CHECK-SAME:    {llmc.init = {kind = "normal", scale = 2.000000e-02 : f64}, llmc.name = "transformer.wte.weight", llmc.role = "parameter"}
// CHECK-SAME:    {llmc.init = {kind = "ones"}, llmc.name = "transformer.ln_f.weight", llmc.role = "parameter"}
// CHECK-SAME:    {llmc.name = "tokens", llmc.role = "input"}
func.func @loss(%w: tensor<8x4xf32> {llmc.name = "transformer.wte.weight", llmc.role = "parameter", llmc.init = {kind = "normal", scale = 0.02 : f64}},
                %g: tensor<4xf32> {llmc.name = "transformer.ln_f.weight", llmc.role = "parameter", llmc.init = {kind = "ones"}},
                %t: tensor<2xi32> {llmc.name = "tokens", llmc.role = "input"}) {
  return
}

// -----

// The AdamW moments that --llmc-optimizer adds are optimizer state.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME:    {llmc.name = "optimizer.m.w", llmc.role = "optimizer_state"}
func.func @train_step(%m: tensor<4xf32> {llmc.name = "optimizer.m.w", llmc.role = "optimizer_state"}) {
  return
}

// -----

// A tensor-parallel split: c_attn's [C, 3C] weight cut along dimension 1
// into q, k and v, each split over the tp ranks.
// CHECK-LABEL: func.func @tp_split
// CHECK-SAME:    {llmc.tp_split = array<i64: 1, 3>}
func.func @tp_split(%w: tensor<4x12xf32> {llmc.tp_split = array<i64: 1, 3>}) {
  return
}
