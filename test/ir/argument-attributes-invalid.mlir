// RUN: llmc-opt %s --split-input-file --verify-diagnostics

// expected-error @+1 {{'func.func' op argument #0: expected llmc.name to be a non-empty string, got ""}}
func.func @empty_name(%w: tensor<4xf32> {llmc.name = ""}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: expected llmc.name to be a non-empty string, got 3 : i64}}
func.func @name_not_string(%w: tensor<4xf32> {llmc.name = 3}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #1: expected llmc.role to be "parameter", "input" or "optimizer_state", got "weights"}}
func.func @bad_role(%a: tensor<4xf32>, %w: tensor<4xf32> {llmc.role = "weights"}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: expected llmc.init = {kind = "normal" | "uniform" | "zeros" | "ones" | "constant", ...}, got {kind = "xavier"}}}
func.func @bad_init_kind(%w: tensor<4xf32> {llmc.init = {kind = "xavier"}}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: expected a non-negative float 'scale' in llmc.init of kind "normal", got {kind = "normal"}}}
func.func @normal_without_scale(%w: tensor<4xf32> {llmc.init = {kind = "normal"}}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: unknown argument attribute 'llmc.sharding'; expected llmc.name, llmc.role, llmc.init or llmc.offset}}
func.func @unknown(%w: tensor<4xf32> {llmc.sharding = "dp"}) {
  return
}

// -----

// A constant initializer needs its value.
// expected-error @+1 {{'func.func' op argument #0: expected a float 'value' in llmc.init of kind "constant", got {kind = "constant"}}}
func.func @f(%s: tensor<f32> {llmc.init = {kind = "constant"}}) {
  return
}
