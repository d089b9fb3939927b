// `llmc train` with [precision] (docs/precision.md): bf16 trains end to end
// and its IR dump shows the casts; fp16 with a loss scale that overflows
// skips the step in the program, and the loop reports the scale.
// RUN: rm -rf %t && mkdir -p %t
// RUN: cat %S/Inputs/train-tiny.toml > %t/bf16.toml
// RUN: printf '[precision]\npolicy = "bf16"\n' >> %t/bf16.toml
// RUN: llmc train %t/bf16.toml --dump-ir=%t/dump --sample-tokens 0 | FileCheck %s --check-prefix=BF16
// BF16:       step 1/8  loss {{[0-9.]+}}  lr 5.000e-03  grad norm {{[0-9.]+}}
// BF16:       step 8/8  loss {{[0-9.]+}}
// RUN: FileCheck %s --check-prefix=DUMP < %t/dump/03-llmc-assign-precision.mlir
// DUMP:       llmc.precision = "bf16"
// DUMP:       llmc.cast %{{.+}} : tensor<128x32xf32> -> tensor<128x32xbf16>
// DUMP:       llmc.cross_entropy {{.*}} : (tensor<2x16x128xbf16>, tensor<2x16xi32>) -> tensor<f32>

// RUN: cat %S/Inputs/train-tiny.toml > %t/fp16.toml
// RUN: printf '[precision]\npolicy = "fp16"\ninitial_loss_scale = 1e30\nloss_scale_growth_interval = 2\n' >> %t/fp16.toml
// RUN: llmc train %t/fp16.toml --metrics %t/fp16.jsonl --sample-tokens 0 | FileCheck %s --check-prefix=FP16
// FP16:       step 1/8  loss {{[0-9.]+}}  lr 5.000e-03  grad norm {{-?nan|inf}} {{.*}}  loss scale 5e+29 (skipped: inf/NaN gradients)
// FP16:       step 8/8  {{.*}}  loss scale {{.+}}
// RUN: FileCheck %s --check-prefix=METRICS < %t/fp16.jsonl
// METRICS:    {"step": 1, "loss": {{[0-9.]+}}, "lr": 0.00499999989, "grad_norm": null, {{.*}}, "loss_scale": 5.00000008e+29, "skipped": true}
// METRICS:    {"step": 2, {{.*}}"loss_scale": 2.50000004e+29, "skipped": true}
