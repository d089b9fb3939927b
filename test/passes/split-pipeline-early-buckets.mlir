// The update's collectives issued early under a pipeline (llmc-split-
// pipeline, passes/PipelineCollectives.h): a layer's bucket of dp
// all-reduces, with the adds that sum its gradients over the microbatches,
// runs in the last microbatch's backward right after the layer's last
// gradient (after the residual add that the CUDA runtime folds into the
// norm gradient before it), not after every unit. GPT-2 with 4 layers,
// dp2 x pp2, 2 microbatches: layers 2 and 3 on stage 1.

// RUN: sed 's/layers = 1/layers = 4/; s/batch_size = 2/batch_size = 4\nmicrobatches = 2/' %S/../frontend/Inputs/gpt2-1layer.toml > %t.toml
// RUN: printf '[parallel]\ndevices = "cpu"\ndp = 2\npp = 2\n' >> %t.toml
// RUN: llmc compile %t.toml --emit=llmc-split-pipeline --locations | FileCheck %s

// CHECK-LABEL: func.func @train_step
// Layer 2's last gradient of microbatch 1 (its first norm) with the
// residual add next, whose sum goes to stage 0 (layer 1's backward); then
// the sums over the microbatches and the bucket, still in that unit; then
// stage 0's work. The update runs after every unit and reads the sums.
// CHECK:       llmc.layer_norm_grad {{.*}}llmc.microbatch = 1 : i64, llmc.stage = 1 : i64{{.*}}loc(fused<"backward">["transformer.h.2.ln_1"])
// CHECK-NEXT:  llmc.add {{.*}}loc(fused<"backward">["transformer.h.2.ln_1"])
// CHECK-NEXT:  llmc.send {{.*}}from 1 to 0 {{.*}}llmc.reason = "gradient transformer.h.2.ln_1 (backward, microbatch 1)
// CHECK-NEXT:  llmc.recv
// CHECK-NEXT:  llmc.add {{.*}}llmc.microbatch = 1 : i64, llmc.stage = 1 : i64{{.*}}loc(fused<"backward">["transformer.h.2.ln_1"])
// CHECK:       llmc.concat {{.*}}llmc.microbatch = 1 : i64, llmc.stage = 1 : i64
// CHECK-NEXT:  shard.all_reduce {{.*}}llmc.microbatch = 1 : i64, llmc.reason = "bucket of 12 all-reduces: pending transformer.h.2.ln_1 (backward)
// CHECK-NEXT:  llmc.reduce_sum {{.*}}llmc.stage = 0 : i64
// CHECK:       loc(fused<"optimizer">
