// --llmc-fuse on a chain of 20,000 elementwise ops (issue #27): it was
// quadratic in a chain's length (canAppend visited every member for every
// op: 10k ops 1.2 s, 200k ops over 120 s). The check is on the count of
// members visited (the report's "group members checked"), not on time: linear is about one per op (at most 5
// digits here), quadratic would be 2e8.
// RUN: python3 -c "p = chr(37); n = 20000; print('func.func @chain(' + p + 'v0: tensor<4xf32>) -> tensor<4xf32> {'); [print(f'  {p}v{i + 1} = llmc.gelu {p}v{i} tanh : tensor<4xf32>') for i in range(n)]; print(f'  return {p}v{n} : tensor<4xf32>'); print('}')" > %t.mlir
// RUN: llmc-opt %t.mlir --llmc-fuse=report=true -o %t.out.mlir | FileCheck %s --check-prefix=STATS
// STATS: fusion of @chain: kernels 20000 -> 1
// STATS: ; group members checked {{[0-9]?[0-9]?[0-9]?[0-9]?[0-9]$}}
// The whole chain is one region.
// RUN: FileCheck %s < %t.out.mlir
// CHECK-LABEL: func.func @chain
// CHECK-COUNT-1: llmc.fused elementwise
// CHECK-NOT:     llmc.fused
