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

// fp8: the dump after the precision pass shows each linear layer's
// fp8_matmul (the head stays a bf16 matmul); the one after the expansion
// shows the amax, the E4M3/E5M2 scaled casts and the FP8 products.
// RUN: cat %S/Inputs/train-tiny.toml > %t/fp8.toml
// RUN: printf '[precision]\npolicy = "fp8"\n' >> %t/fp8.toml
// RUN: llmc train %t/fp8.toml --dump-ir=%t/dump8 --sample-tokens 0 | FileCheck %s --check-prefix=FP8
// FP8:        step 1/8  loss {{[0-9.]+}}  lr 5.000e-03  grad norm {{[0-9.]+}}
// FP8:        step 8/8  loss {{[0-9.]+}}
// RUN: FileCheck %s --check-prefix=FP8-ASSIGN < %t/dump8/03-llmc-assign-precision.mlir
// FP8-ASSIGN:  llmc.precision = "fp8"
// FP8-ASSIGN:  llmc.fp8_matmul %{{.+}}, %{{.+}} : tensor<2x16x32xbf16>, tensor<32x96xbf16> -> tensor<2x16x96xbf16>
// FP8-ASSIGN:  llmc.matmul %{{.+}}, %{{.+}} transpose_b : tensor<2x16x32xbf16>, tensor<128x32xbf16> -> tensor<2x16x128xbf16>
// RUN: FileCheck %s --check-prefix=FP8-EXPAND < %t/dump8/06-llmc-expand-fp8-matmul.mlir
// FP8-EXPAND:  llmc.amax %{{.+}} : tensor<32x32xbf16> -> tensor<f32>
// FP8-EXPAND:  llmc.scaled_cast %{{.+}}, %{{.+}} : tensor<32x32xbf16> -> tensor<32x32xf8E4M3FN>
// FP8-EXPAND:  llmc.scaled_matmul
// FP8-EXPAND:  llmc.scaled_cast %{{.+}}, %{{.+}} : tensor<32x96xbf16> -> tensor<32x96xf8E5M2>
// FP8-EXPAND-NOT: llmc.fp8_matmul

// RUN: cat %S/Inputs/train-tiny.toml > %t/fp4.toml
// RUN: printf '[precision]\npolicy = "fp4"\n' >> %t/fp4.toml
// RUN: not llmc train %t/fp4.toml 2>&1 | FileCheck %s --check-prefix=BAD
// BAD:        fp4.toml:{{[0-9]+}}:10: error: expected policy to be one of "fp32", "bf16", "fp16", "fp8", got "fp4"; did you mean "fp8"?
