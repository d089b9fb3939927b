// RUN: llmc-opt %s --split-input-file --llmc-plan-buffers=fused-kernels=true | FileCheck %s
// RUN: llmc-opt %s --split-input-file --llmc-plan-buffers | FileCheck %s --check-prefix=DEFAULT

// For a backend that runs each elementwise region as one kernel (the CUDA
// backend; llmc sets the option for devices = "cuda"), the values a region
// computes and does not yield live in registers: offset -1, no bytes. The
// f32 intermediates here (256 bytes each, one buffer by writing in place)
// take no memory; only the input and the bf16 result do.
// CHECK-LABEL: func.func @chain
// CHECK-SAME:    (%[[X:.+]]: tensor<64xbf16> {llmc.offset = 0 : i64})
// CHECK-SAME:    llmc.arena_bytes = 256 : i64, llmc.fused_kernels
// CHECK-SAME:    no_storage = 2 : i64, no_storage_bytes = 512 : i64
// CHECK-NEXT:    %[[F:.+]] = llmc.fused elementwise (%[[X]]) {llmc.offsets = array<i64: 128>}
// CHECK-NEXT:    ^bb0
// CHECK-NEXT:      llmc.cast %{{.+}} {llmc.offsets = array<i64: -1>} : tensor<64xbf16> -> tensor<64xf32>
// CHECK-NEXT:      llmc.exp %{{.+}} {llmc.offsets = array<i64: -1>}
// CHECK-NEXT:      llmc.cast %{{.+}} {llmc.offsets = array<i64: 128>} : tensor<64xf32> -> tensor<64xbf16>
// The default plan (the CPU runs the region's ops one by one) stores every
// value: the f32 intermediate at 0, the result after it.
// DEFAULT-LABEL: func.func @chain
// DEFAULT-SAME:    llmc.arena_bytes = 512 : i64
// DEFAULT-NOT:     llmc.fused_kernels
// DEFAULT-NOT:     no_storage
// DEFAULT:         llmc.fused elementwise
// DEFAULT-NEXT:    ^bb0
// DEFAULT-NEXT:      llmc.cast %{{.+}} {llmc.offsets = array<i64: 0>} : tensor<64xbf16> -> tensor<64xf32>
// DEFAULT-NEXT:      llmc.exp %{{.+}} {llmc.offsets = array<i64: 0>}
// DEFAULT-NEXT:      llmc.cast %{{.+}} {llmc.offsets = array<i64: 384>} : tensor<64xf32> -> tensor<64xbf16>
func.func @chain(%x: tensor<64xbf16>) -> tensor<64xbf16> {
  %f = llmc.fused elementwise (%x) : (tensor<64xbf16>) -> tensor<64xbf16> {
  ^bb0(%a: tensor<64xbf16>):
    %w = llmc.cast %a : tensor<64xbf16> -> tensor<64xf32>
    %e = llmc.exp %w : tensor<64xf32>
    %n = llmc.cast %e : tensor<64xf32> -> tensor<64xbf16>
    llmc.yield %n : tensor<64xbf16>
  }
  return %f : tensor<64xbf16>
}

// -----

// An elementwise region nested in a row reduction (which runs op by op):
// the inner region's intermediates get no storage, its result does (the
// reduction reads it), and so do the reduction's values and the constant
// (data loaded once, read by the kernel as an input).
// CHECK-LABEL: func.func @nested
// CHECK-SAME:    llmc.fused_kernels
// CHECK:         llmc.fused row_reduction
// CHECK:           %[[E:.+]] = llmc.fused elementwise (%{{.+}}) {llmc.offsets = array<i64: [[EOFF:[0-9]+]]>}
// CHECK:             llmc.constant dense<2.000000e+00> : tensor<f32> {llmc.offsets = array<i64: {{[0-9]+}}>}
// CHECK-NEXT:        llmc.broadcast %{{.+}} {llmc.offsets = array<i64: -1>}
// CHECK-NEXT:        llmc.mul %{{.+}} {llmc.offsets = array<i64: -1>}
// CHECK-NEXT:        llmc.cast %{{.+}} {llmc.offsets = array<i64: -1>} : tensor<4x16xf32> -> tensor<4x16xbf16>
// CHECK-NEXT:        llmc.cast %{{.+}} {llmc.offsets = array<i64: [[EOFF]]>} : tensor<4x16xbf16> -> tensor<4x16xf32>
// CHECK:           llmc.reduce_sum %[[E]] {{.*}}{llmc.offsets = array<i64: {{[0-9]+}}>}
// DEFAULT-LABEL: func.func @nested
// DEFAULT-NOT:     array<i64: -1>
// DEFAULT:         return
func.func @nested(%x: tensor<4x16xf32>) -> tensor<4x1xf32> {
  %f = llmc.fused row_reduction (%x) : (tensor<4x16xf32>) -> tensor<4x1xf32> {
  ^bb0(%a: tensor<4x16xf32>):
    %g = llmc.fused elementwise (%a) : (tensor<4x16xf32>) -> tensor<4x16xf32> {
    ^bb0(%b: tensor<4x16xf32>):
      %c = llmc.constant dense<2.0> : tensor<f32>
      %cb = llmc.broadcast %c dims [] : tensor<f32> -> tensor<4x16xf32>
      %m = llmc.mul %b, %cb : tensor<4x16xf32>
      %h = llmc.cast %m : tensor<4x16xf32> -> tensor<4x16xbf16>
      %e = llmc.cast %h : tensor<4x16xbf16> -> tensor<4x16xf32>
      llmc.yield %e : tensor<4x16xf32>
    }
    %s = llmc.reduce_sum %g dims [1] keep_dims : tensor<4x16xf32> -> tensor<4x1xf32>
    llmc.yield %s : tensor<4x1xf32>
  }
  return %f : tensor<4x1xf32>
}

// -----

// Must not apply: a row reduction runs op by op, so its values keep their
// storage in either mode.
// CHECK-LABEL: func.func @row_reduction
// CHECK-SAME:    llmc.fused_kernels
// CHECK-NOT:     no_storage
// CHECK-NOT:     array<i64: -1>
// CHECK:         return
func.func @row_reduction(%x: tensor<4x16xf32>) -> tensor<4x1xf32> {
  %f = llmc.fused row_reduction (%x) : (tensor<4x16xf32>) -> tensor<4x1xf32> {
  ^bb0(%a: tensor<4x16xf32>):
    %e = llmc.exp %a : tensor<4x16xf32>
    %h = llmc.cast %e : tensor<4x16xf32> -> tensor<4x16xbf16>
    %s = llmc.reduce_sum %h dims [1] keep_dims : tensor<4x16xbf16> -> tensor<4x1xf32>
    llmc.yield %s : tensor<4x1xf32>
  }
  return %f : tensor<4x1xf32>
}

// -----

// An update in one region keeps its donation: the new weight is written
// over the weight element for element (the kernel reads element i before
// it writes it); the scaled gradient lives in registers.
// CHECK-LABEL: func.func @update
// CHECK-SAME:    (%[[W:.+]]: tensor<16xf32> {llmc.name = "w", llmc.offset = [[WOFF:[0-9]+]] : i64, llmc.role = "parameter"}
// CHECK-SAME:    donations = {result0 = 0 : i64}
// CHECK-SAME:    no_storage = 1 : i64
// CHECK:         llmc.fused elementwise (%[[W]], %{{.+}}) {llmc.offsets = array<i64: [[WOFF]]>}
// CHECK:           llmc.mul %{{.+}} {llmc.offsets = array<i64: -1>}
// CHECK-NEXT:      llmc.sub %{{.+}} {llmc.offsets = array<i64: [[WOFF]]>}
func.func @update(%w: tensor<16xf32> {llmc.name = "w", llmc.role = "parameter"},
                  %g: tensor<16xf32> {llmc.name = "g", llmc.role = "input"})
    -> (tensor<16xf32> {llmc.name = "w"}) {
  %f = llmc.fused elementwise (%w, %g) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32> {
  ^bb0(%a: tensor<16xf32>, %b: tensor<16xf32>):
    %s = llmc.mul %b, %b : tensor<16xf32>
    %n = llmc.sub %a, %s : tensor<16xf32>
    llmc.yield %n : tensor<16xf32>
  }
  return %f : tensor<16xf32>
}
