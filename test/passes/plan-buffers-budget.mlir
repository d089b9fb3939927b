// RUN: not llmc-opt %s --llmc-plan-buffers=budget-bytes=100 2>&1 | FileCheck %s
// RUN: llmc-opt %s --llmc-plan-buffers=budget-bytes=128 | FileCheck %s --check-prefix=FITS

// Over the budget is an error that says by how much and what to do; at the
// budget it plans as usual.
// CHECK: error: @f needs 128 bytes (0.00 GiB) per device, over the memory budget of 100 bytes (0.00 GiB); set [memory] remat = "auto" (or selective, full), lower the batch size, or raise budget_gib
// FITS: llmc.arena_bytes = 128 : i64
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %e = llmc.exp %x : tensor<4xf32>
  return %e : tensor<4xf32>
}
