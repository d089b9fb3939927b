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

// expected-error @+1 {{'func.func' op argument #0: unknown argument attribute 'llmc.shard'; expected llmc.name, llmc.role, llmc.init, llmc.offset, llmc.sharding, llmc.shard_groups, llmc.shard_zigzag, llmc.stage, llmc.tp_split or llmc.ep_split}}
func.func @unknown(%w: tensor<4xf32> {llmc.shard = "dp"}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: expected llmc.sharding to be an array of mesh axis name arrays, one per dimension, got "dp"}}
func.func @sharding_not_an_array(%w: tensor<4xf32> {llmc.sharding = "dp"}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: expected llmc.shard_groups to be an array<i64> of block counts >= 1, got array<i64: 0>}}
func.func @zero_groups(%w: tensor<4xf32> {llmc.shard_groups = array<i64: 0>}) {
  return
}

// -----

// A constant initializer needs its value.
// expected-error @+1 {{'func.func' op argument #0: expected a float 'value' in llmc.init of kind "constant", got {kind = "constant"}}}
func.func @f(%s: tensor<f32> {llmc.init = {kind = "constant"}}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: expected llmc.tp_split = array<i64: dim, groups> with dim >= 0 and groups >= 1, got array<i64: 0>}}
func.func @tp_split_one_value(%w: tensor<4xf32> {llmc.tp_split = array<i64: 0>}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: expected llmc.tp_split = array<i64: dim, groups> with dim >= 0 and groups >= 1, got array<i64: 0, 0>}}
func.func @tp_split_no_groups(%w: tensor<4xf32> {llmc.tp_split = array<i64: 0, 0>}) {
  return
}

// -----

// expected-error @+1 {{'func.func' op argument #0: expected llmc.tp_split to name a dimension of 'tensor<4x6xf32>' that 1 groups divide, got dim 2}}
func.func @tp_split_beyond_rank(%w: tensor<4x6xf32> {llmc.tp_split = array<i64: 2, 1>}) {
  return
}

// -----

// Three groups (q, k, v) do not cut 4 columns evenly.
// expected-error @+1 {{'func.func' op argument #0: expected llmc.tp_split to name a dimension of 'tensor<2x4xf32>' that 3 groups divide, got dim 1}}
func.func @tp_split_uneven_groups(%w: tensor<2x4xf32> {llmc.tp_split = array<i64: 1, 3>}) {
  return
}
