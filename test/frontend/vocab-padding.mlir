// The classifier at a padded width (frontend/models/Layers.h, classifier):
// a vocabulary that 64 does not divide runs its GEMMs at the next multiple
// of 64, the head with zero rows and the padded columns masked by a bias of
// -30000, so that the loss and the gradients are the unpadded ones (the
// parameters keep their V rows). GPT-2 with vocabulary 50 -> 64.

// RUN: sed 's/vocab_size = 64/vocab_size = 50/' %S/Inputs/gpt2-1layer.toml > %t.toml
// RUN: llmc compile %t.toml --emit=loss | FileCheck %s
// CHECK-LABEL: func.func @loss(
// CHECK-SAME:    %[[WTE:arg[0-9]+]]: tensor<50x32xf32> {{.*}}llmc.name = "transformer.wte.weight"
// CHECK:         %[[ZEROS:.+]] = llmc.constant dense<0.000000e+00> : tensor<14x32xf32>
// CHECK:         %[[ROWS:.+]] = llmc.concat %[[WTE]], %[[ZEROS]] dim 0 : (tensor<50x32xf32>, tensor<14x32xf32>) -> tensor<64x32xf32>
// CHECK:         %[[KEEP:.+]] = llmc.constant dense<0.000000e+00> : tensor<50xf32>
// CHECK:         %[[MASKED:.+]] = llmc.constant dense<-3.000000e+04> : tensor<14xf32>
// CHECK:         %[[MASK:.+]] = llmc.concat %[[KEEP]], %[[MASKED]] dim 0 : (tensor<50xf32>, tensor<14xf32>) -> tensor<64xf32>
// CHECK:         %[[PRODUCT:.+]] = llmc.matmul %{{.+}}, %[[ROWS]] transpose_b : tensor<2x8x32xf32>, tensor<64x32xf32> -> tensor<2x8x64xf32>
// CHECK:         %[[BIAS:.+]] = llmc.broadcast %[[MASK]] dims [2]
// CHECK:         %[[SUM:.+]] = llmc.add %[[PRODUCT]], %[[BIAS]]
// CHECK:         llmc.cross_entropy %[[SUM]], %{{.+}} : (tensor<2x8x64xf32>, tensor<2x8xi32>) -> tensor<f32>

// In bf16 the mask is cast before it is broadcast (CastOfBroadcast, ir/
// CanonicalizePrimitives.cpp), so that the GEMM's epilogue adds it as a
// bias; the backward slices the padded rows off the head's gradient.
// RUN: printf '[precision]\npolicy = "bf16"\n[parallel]\ndevices = "cuda"\n' > %t.bf16.toml
// RUN: cat %t.toml >> %t.bf16.toml
// RUN: llmc compile %t.bf16.toml | FileCheck %s --check-prefix=BF16
// BF16-LABEL: func.func @train_step(
// BF16:         %[[M:.+]] = llmc.cast %{{.+}} : tensor<64xf32> -> tensor<64xbf16>
// BF16:         llmc.fused matmul_epilogue (%{{.+}}, %{{.+}}, %[[M]])
// BF16:         llmc.matmul {{.*}} -> tensor<64x32xbf16>
// BF16-NEXT:    llmc.slice %{{.+}} starts [0, 0] limits [50, 32] {{.*}}: tensor<64x32xbf16> -> tensor<50x32xbf16>

// The logits program returns the 50 real columns.
// RUN: llmc compile %t.toml --logits --emit=loss | FileCheck %s --check-prefix=LOGITS
// LOGITS:       %[[L:.+]] = llmc.slice %{{.+}} starts [0, 0, 0] limits [2, 8, 50] : tensor<2x8x64xf32> -> tensor<2x8x50xf32>
// LOGITS:       return %[[L]] : tensor<2x8x50xf32>

// A multiple of 64 is left as it is; so is any vocabulary under tensor
// parallelism (the padded head would be gathered before it is split).
// RUN: llmc compile %S/Inputs/gpt2-1layer.toml --emit=loss | FileCheck %s --check-prefix=ALIGNED
// RUN: sed 's/vocab_size = 64/vocab_size = 52/' %S/Inputs/gpt2-1layer.toml > %t.tp.toml
// RUN: printf '[parallel]\ndevices = "cpu"\ntp = 2\n' >> %t.tp.toml
// RUN: llmc compile %t.tp.toml --emit=loss | FileCheck %s --check-prefix=TP
// ALIGNED-NOT:  llmc.concat
// ALIGNED:      llmc.matmul {{.*}} -> tensor<2x8x64xf32>
// TP-NOT:       llmc.concat
// TP:           llmc.matmul {{.*}} -> tensor<2x8x52xf32>

// Under a pipeline the padded rows are made where the head runs: a concat
// of a parameter and zeros is replicated like a cast (llmc-split-pipeline),
// not sent with the embedding to stage 0 (which ordered the head's backward
// before its operands: "pipeline schedule 1f1b runs this op before a value
// it reads").
// RUN: sed 's/layers = 1/layers = 2/' %t.toml > %t.pp.toml
// RUN: printf '[parallel]\ndevices = "cpu"\npp = 2\n' >> %t.pp.toml
// RUN: llmc compile %t.pp.toml --emit=llmc-split-pipeline | FileCheck %s --check-prefix=PP
// PP-LABEL:    func.func @train_step
// PP:          llmc.concat %arg0, %{{.+}} dim 0 {llmc.stage = 1 : i64} : (tensor<50x32xf32>, tensor<14x32xf32>) -> tensor<64x32xf32>
