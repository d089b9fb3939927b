// The tracing API example (examples/custom-model.cpp): a model that is none
// of the built-in families, traced into @loss with parameters first, inputs
// last, and every op located at the scope that made it.

// RUN: llmc-example-custom-model | FileCheck %s

// CHECK-LABEL: func.func @loss(
// CHECK-SAME:    %{{.+}}: tensor<96x48xf32> {llmc.init = {kind = "normal", scale = 2.000000e-02 : f64}, llmc.name = "embed.weight", llmc.role = "parameter"}
// CHECK-SAME:    %{{.+}}: tensor<192xf32> {llmc.init = {kind = "zeros"}, llmc.name = "mlp.fc1.bias", llmc.role = "parameter"}
// CHECK-SAME:    %[[TOKENS:arg[0-9]+]]: tensor<4x32xi32> {llmc.name = "tokens", llmc.role = "input"}
// CHECK-SAME:    %[[TARGETS:arg[0-9]+]]: tensor<4x32xi32> {llmc.name = "targets", llmc.role = "input"}
// CHECK-SAME:    -> tensor<f32>
// CHECK:         llmc.embedding %{{.+}}[%[[TOKENS]]] {{.*}} loc("embed")
// The causal averaging matrix: iota, compare, select, normalized rows.
// CHECK:         llmc.compare le {{.*}} loc("context")
// CHECK:         llmc.select {{.*}} loc("context")
// CHECK:         llmc.reduce_sum {{.*}} dims [1] keep_dims {{.*}} loc("context")
// A bias added by the broadcasting + operator.
// CHECK:         llmc.broadcast %{{.+}} dims [2] : tensor<192xf32> -> tensor<4x32x192xf32> loc("mlp")
// CHECK:         llmc.gelu %{{.+}} erf {{.*}} loc("mlp")
// CHECK:         %[[LOSS:.+]] = llmc.cross_entropy %{{.+}}, %[[TARGETS]] reduction mean {{.*}} loc("head")
// CHECK:         return %[[LOSS]]
// 96*48 + 48*192 + 192 + 192*48 + 48 + 96*48
// CHECK:       // parameters: 27888 in 6 tensors
