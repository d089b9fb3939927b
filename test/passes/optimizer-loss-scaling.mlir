// RUN: llmc-opt %s --split-input-file --llmc-autodiff=loss-scale=1024 --llmc-optimizer="loss-scaling=true growth-interval=3 grad-clip=0" --verify-diagnostics | FileCheck %s

// fp16 dynamic loss scaling: autodiff seeds d(loss) with the scale (an
// optimizer-state argument initialized to 1024), the optimizer unscales the
// gradients, tests the norm for inf/NaN, keeps the parameter and its moments
// on a non-finite step, and updates the scale and the good-step count.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME:    %[[W:[^:]+]]: tensor<3xf32> {llmc.name = "w", llmc.role = "parameter"}
// CHECK-SAME:    %[[S:[^:]+]]: tensor<f32> {llmc.init = {kind = "constant", value = 1.024000e+03 : f64}, llmc.name = "loss_scale.scale", llmc.role = "optimizer_state"}
// CHECK-SAME:    %[[M:[^:]+]]: tensor<3xf32> {llmc.name = "optimizer.m.w", llmc.role = "optimizer_state"}
// CHECK-SAME:    %[[V:[^:]+]]: tensor<3xf32> {llmc.name = "optimizer.v.w", llmc.role = "optimizer_state"}
// CHECK-SAME:    %[[T:[^:]+]]: tensor<f32> {llmc.name = "optimizer.step", llmc.role = "input"}
// CHECK-SAME:    %[[GOOD:[^:]+]]: tensor<f32> {llmc.name = "loss_scale.good_steps", llmc.role = "optimizer_state"}
// CHECK-SAME:    -> (tensor<f32> {llmc.name = "loss"}, tensor<f32> {llmc.name = "grad_norm"}, tensor<f32> {llmc.name = "lr"}, tensor<3xf32> {llmc.name = "w"}, tensor<3xf32> {llmc.name = "optimizer.m.w"}, tensor<3xf32> {llmc.name = "optimizer.v.w"}, tensor<f32> {llmc.name = "loss_scale.scale"}, tensor<f32> {llmc.name = "loss_scale.good_steps"})
// CHECK:         %[[ONE:.+]] = llmc.constant dense<1.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[SEED:.+]] = llmc.mul %[[ONE]], %[[S]] : tensor<f32>
// CHECK:         %[[INV:.+]] = llmc.div %{{.+}}, %[[S]] : tensor<f32>
// CHECK-NEXT:    %[[INVB:.+]] = llmc.broadcast %[[INV]] dims [] : tensor<f32> -> tensor<3xf32>
// CHECK-NEXT:    %[[G:.+]] = llmc.mul %{{.+}}, %[[INVB]] : tensor<3xf32>
// CHECK:         %[[NORM:.+]] = llmc.sqrt %{{.+}} : tensor<f32>
// CHECK-NEXT:    %[[ABS:.+]] = llmc.abs %[[NORM]] : tensor<f32>
// CHECK-NEXT:    %[[LIMIT:.+]] = llmc.constant dense<3.400000e+38> : tensor<f32>
// CHECK-NEXT:    %[[FINITE:.+]] = llmc.compare le %[[ABS]], %[[LIMIT]] : (tensor<f32>, tensor<f32>) -> tensor<i1>
// CHECK:         %[[KEEP:.+]] = llmc.broadcast %[[FINITE]] dims [] : tensor<i1> -> tensor<3xi1>
// CHECK-NEXT:    %[[NEWW:.+]] = llmc.select %[[KEEP]], %{{.+}}, %[[W]] : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %[[NEWM:.+]] = llmc.select %[[KEEP]], %{{.+}}, %[[M]] : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT:    %[[NEWV:.+]] = llmc.select %[[KEEP]], %{{.+}}, %[[V]] : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK:         %[[COUNTED:.+]] = llmc.add %[[GOOD]], %{{.+}} : tensor<f32>
// CHECK-NEXT:    %[[INTERVAL:.+]] = llmc.constant dense<3.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[GROW:.+]] = llmc.compare ge %[[COUNTED]], %[[INTERVAL]]
// CHECK-NEXT:    %[[TWO:.+]] = llmc.constant dense<2.000000e+00> : tensor<f32>
// CHECK-NEXT:    %[[GROWN:.+]] = llmc.mul %[[S]], %[[TWO]] : tensor<f32>
// CHECK-NEXT:    %[[SCALEOK:.+]] = llmc.select %[[GROW]], %[[GROWN]], %[[S]]
// CHECK-NEXT:    %[[GOODOK:.+]] = llmc.select %[[GROW]], %{{.+}}, %[[COUNTED]]
// CHECK-NEXT:    %[[HALF:.+]] = llmc.constant dense<5.000000e-01> : tensor<f32>
// CHECK-NEXT:    %[[BACKOFF:.+]] = llmc.mul %[[S]], %[[HALF]] : tensor<f32>
// CHECK-NEXT:    %[[NEWS:.+]] = llmc.select %[[FINITE]], %[[SCALEOK]], %[[BACKOFF]]
// CHECK-NEXT:    %[[NEWGOOD:.+]] = llmc.select %[[FINITE]], %[[GOODOK]], %{{.+}}
// CHECK-NEXT:    return %{{.+}}, %[[NORM]], %{{.+}}, %[[NEWW]], %[[NEWM]], %[[NEWV]], %[[NEWS]], %[[NEWGOOD]]
func.func @loss(%w: tensor<3xf32> {llmc.name = "w", llmc.role = "parameter"},
                %x: tensor<3xf32> {llmc.name = "x", llmc.role = "input"}) -> tensor<f32> {
  %y = llmc.mul %w, %x : tensor<3xf32>
  %l = llmc.reduce_sum %y dims [0] : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}
