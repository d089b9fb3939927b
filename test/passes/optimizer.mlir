// RUN: llmc-opt %s --split-input-file --verify-diagnostics --llmc-optimizer | FileCheck %s
// RUN: llmc-opt %s --split-input-file --verify-diagnostics --llmc-optimizer="grad-clip=0 decay-all=true" | FileCheck %s --check-prefix=OPTS
// RUN: llmc-opt %s --split-input-file --verify-diagnostics --llmc-optimizer="learning-rate=6e-4 min-learning-rate=6e-5 warmup-steps=10 total-steps=500 schedule=linear" | FileCheck %s --check-prefix=SCHED

// A weight (rank 2, decayed) and a bias (rank 1, not decayed). The state
// follows the existing arguments, m and v per parameter, then the step; the
// rate comes from llmc.lr_schedule; the results are loss, norm, rate,
// parameters, state, each named.
// CHECK-LABEL: func.func @train_step
// CHECK-SAME:    (%[[W:[^:]+]]: tensor<2x3xf32> {llmc.name = "fc.weight", llmc.role = "parameter"}
// CHECK-SAME:    %[[B:[^:]+]]: tensor<3xf32> {llmc.name = "fc.bias", llmc.role = "parameter"}
// CHECK-SAME:    %[[X:[^:]+]]: tensor<2x3xf32> {llmc.name = "x", llmc.role = "input"}
// CHECK-SAME:    %[[MW:[^:]+]]: tensor<2x3xf32> {llmc.name = "optimizer.m.fc.weight", llmc.role = "optimizer_state"}
// CHECK-SAME:    %[[VW:[^:]+]]: tensor<2x3xf32> {llmc.name = "optimizer.v.fc.weight", llmc.role = "optimizer_state"}
// CHECK-SAME:    %[[MB:[^:]+]]: tensor<3xf32> {llmc.name = "optimizer.m.fc.bias", llmc.role = "optimizer_state"}
// CHECK-SAME:    %[[VB:[^:]+]]: tensor<3xf32> {llmc.name = "optimizer.v.fc.bias", llmc.role = "optimizer_state"}
// CHECK-SAME:    %[[T:[^:]+]]: tensor<f32> {llmc.name = "optimizer.step", llmc.role = "input"})
// CHECK-SAME:    -> (tensor<f32> {llmc.name = "loss"}, tensor<f32> {llmc.name = "grad_norm"}, tensor<f32> {llmc.name = "lr"},
// CHECK-SAME:        tensor<2x3xf32> {llmc.name = "fc.weight"}, tensor<3xf32> {llmc.name = "fc.bias"},
// CHECK-SAME:        tensor<2x3xf32> {llmc.name = "optimizer.m.fc.weight"}, tensor<2x3xf32> {llmc.name = "optimizer.v.fc.weight"},
// CHECK-SAME:        tensor<3xf32> {llmc.name = "optimizer.m.fc.bias"}, tensor<3xf32> {llmc.name = "optimizer.v.fc.bias"})
// CHECK:         %[[LOSS:.+]] = llmc.reduce_sum %[[X]] dims [0, 1]
// CHECK:         %[[GB:.+]] = llmc.reduce_sum %[[X]] dims [0] :
// Global norm: sqrt(0 + sum(gw²) + sum(gb²)), before clipping.
// CHECK:         %[[ZERO:.+]] = llmc.constant dense<0.000000e+00> : tensor<f32>
// CHECK:         %[[GW2:.+]] = llmc.mul %[[X]], %[[X]] : tensor<2x3xf32>
// CHECK:         %[[SW:.+]] = llmc.reduce_sum %[[GW2]] dims [0, 1] : tensor<2x3xf32> -> tensor<f32>
// CHECK:         %[[ACC:.+]] = llmc.add %[[ZERO]], %[[SW]] : tensor<f32>
// CHECK:         %[[GB2:.+]] = llmc.mul %[[GB]], %[[GB]] : tensor<3xf32>
// CHECK:         %[[SB:.+]] = llmc.reduce_sum %[[GB2]] dims [0] : tensor<3xf32> -> tensor<f32>
// CHECK:         %[[SUMSQ:.+]] = llmc.add %[[ACC]], %[[SB]] : tensor<f32>
// CHECK:         %[[NORM:.+]] = llmc.sqrt %[[SUMSQ]] : tensor<f32>
// clip = min(1, 1.0 / (norm + 1e-6)).
// CHECK:         %[[MAXN:.+]] = llmc.constant dense<1.000000e+00> : tensor<f32>
// CHECK:         %[[TINY:.+]] = llmc.constant dense<9.99999997E-7> : tensor<f32>
// CHECK:         %[[DEN:.+]] = llmc.add %[[NORM]], %[[TINY]] : tensor<f32>
// CHECK:         %[[RATIO:.+]] = llmc.div %[[MAXN]], %[[DEN]] : tensor<f32>
// CHECK:         %[[ONE:.+]] = llmc.constant dense<1.000000e+00> : tensor<f32>
// CHECK:         %[[CLIP:.+]] = llmc.min %[[ONE]], %[[RATIO]] : tensor<f32>
// The default schedule: cosine from 3e-4 to 0 over 100 steps, no warmup.
// CHECK:         %[[LR:.+]] = llmc.lr_schedule %[[T]] cosine peak 3.000000e-04 min 0.000000e+00 warmup 0 total 100 : tensor<f32>
// Bias corrections 1 - exp(t·log(beta)).
// CHECK:         %[[LOGB1:.+]] = llmc.constant dense<-0.105360515> : tensor<f32>
// CHECK:         %[[TL1:.+]] = llmc.mul %[[T]], %[[LOGB1]] : tensor<f32>
// CHECK:         %[[P1:.+]] = llmc.exp %[[TL1]] : tensor<f32>
// CHECK:         %[[C1:.+]] = llmc.sub %{{.+}}, %[[P1]] : tensor<f32>
// CHECK:         %[[LOGB2:.+]] = llmc.constant dense<-0.0512932949> : tensor<f32>
// CHECK:         %[[TL2:.+]] = llmc.mul %[[T]], %[[LOGB2]] : tensor<f32>
// CHECK:         %[[P2:.+]] = llmc.exp %[[TL2]] : tensor<f32>
// CHECK:         %[[C2:.+]] = llmc.sub %{{.+}}, %[[P2]] : tensor<f32>
// The weight's update chain, with decay.
// CHECK:         %[[CLIPW:.+]] = llmc.broadcast %[[CLIP]] dims [] : tensor<f32> -> tensor<2x3xf32>
// CHECK:         %[[G:.+]] = llmc.mul %[[X]], %[[CLIPW]] : tensor<2x3xf32>
// Coefficients are scalar constants broadcast at their use (a splat of the
// parameter's shape would be stored for the whole program).
// CHECK:         %[[B1S:.+]] = llmc.constant dense<0.899999976> : tensor<f32>
// CHECK-NEXT:    %[[B1:.+]] = llmc.broadcast %[[B1S]] dims [] : tensor<f32> -> tensor<2x3xf32>
// CHECK:         %[[B1M:.+]] = llmc.mul %[[B1]], %[[MW]]
// CHECK:         %[[NB1S:.+]] = llmc.constant dense<1.000000e-01> : tensor<f32>
// CHECK-NEXT:    %[[NB1:.+]] = llmc.broadcast %[[NB1S]] dims []
// CHECK:         %[[NB1G:.+]] = llmc.mul %[[NB1]], %[[G]]
// CHECK:         %[[M:.+]] = llmc.add %[[B1M]], %[[NB1G]] : tensor<2x3xf32>
// CHECK:         %[[B2S:.+]] = llmc.constant dense<0.949999988> : tensor<f32>
// CHECK-NEXT:    %[[B2:.+]] = llmc.broadcast %[[B2S]] dims []
// CHECK:         %[[B2V:.+]] = llmc.mul %[[B2]], %[[VW]]
// CHECK:         %[[NB2S:.+]] = llmc.constant dense<5.000000e-02> : tensor<f32>
// CHECK-NEXT:    %[[NB2:.+]] = llmc.broadcast %[[NB2S]] dims []
// CHECK:         %[[G2:.+]] = llmc.mul %[[G]], %[[G]]
// CHECK:         %[[NB2G:.+]] = llmc.mul %[[NB2]], %[[G2]]
// CHECK:         %[[V:.+]] = llmc.add %[[B2V]], %[[NB2G]] : tensor<2x3xf32>
// CHECK:         %[[C1W:.+]] = llmc.broadcast %[[C1]] dims []
// CHECK:         %[[MHAT:.+]] = llmc.div %[[M]], %[[C1W]]
// CHECK:         %[[C2W:.+]] = llmc.broadcast %[[C2]] dims []
// CHECK:         %[[VHAT:.+]] = llmc.div %[[V]], %[[C2W]]
// CHECK:         %[[ROOT:.+]] = llmc.sqrt %[[VHAT]]
// CHECK:         %[[EPSS:.+]] = llmc.constant dense<9.99999993E-9> : tensor<f32>
// CHECK-NEXT:    %[[EPS:.+]] = llmc.broadcast %[[EPSS]] dims []
// CHECK:         %[[DENOM:.+]] = llmc.add %[[ROOT]], %[[EPS]]
// CHECK:         %[[DIR:.+]] = llmc.div %[[MHAT]], %[[DENOM]]
// CHECK:         %[[WDS:.+]] = llmc.constant dense<1.000000e-01> : tensor<f32>
// CHECK-NEXT:    %[[WD:.+]] = llmc.broadcast %[[WDS]] dims []
// CHECK:         %[[DECAY:.+]] = llmc.mul %[[WD]], %[[W]]
// CHECK:         %[[UPD:.+]] = llmc.add %[[DIR]], %[[DECAY]]
// CHECK:         %[[LRW:.+]] = llmc.broadcast %[[LR]] dims [] : tensor<f32> -> tensor<2x3xf32>
// CHECK:         %[[STEP:.+]] = llmc.mul %[[LRW]], %[[UPD]]
// CHECK:         %[[NEWW:.+]] = llmc.sub %[[W]], %[[STEP]] : tensor<2x3xf32>
// The bias: no decay, the update is mhat / (sqrt(vhat) + eps) alone.
// CHECK:         %[[MB2:.+]] = llmc.add %{{.+}}, %{{.+}} : tensor<3xf32>
// CHECK:         %[[VB2:.+]] = llmc.add %{{.+}}, %{{.+}} : tensor<3xf32>
// CHECK:         %[[ROOTB:.+]] = llmc.sqrt %{{.+}} : tensor<3xf32>
// CHECK-NEXT:    llmc.constant dense<9.99999993E-9> : tensor<f32>
// CHECK-NEXT:    %[[EPSB:.+]] = llmc.broadcast
// CHECK-NEXT:    %[[DENB:.+]] = llmc.add %[[ROOTB]], %[[EPSB]] : tensor<3xf32>
// CHECK-NEXT:    %[[DIRB:.+]] = llmc.div %{{.+}}, %[[DENB]] : tensor<3xf32>
// CHECK-NEXT:    %[[LRB:.+]] = llmc.broadcast %[[LR]] dims [] : tensor<f32> -> tensor<3xf32>
// CHECK-NEXT:    %[[STEPB:.+]] = llmc.mul %[[LRB]], %[[DIRB]]
// CHECK-NEXT:    %[[NEWB:.+]] = llmc.sub %[[B]], %[[STEPB]] : tensor<3xf32>
// CHECK-NEXT:    return %[[LOSS]], %[[NORM]], %[[LR]], %[[NEWW]], %[[NEWB]], %[[M]], %[[V]], %[[MB2]], %[[VB2]]

// With grad-clip=0 there is no clip factor, and decay-all decays the bias too.
// OPTS-LABEL: func.func @train_step
// OPTS-NOT:     llmc.min
// OPTS:         %[[ROOTB:.+]] = llmc.sqrt %{{.+}} : tensor<3xf32>
// OPTS-NEXT:    llmc.constant
// OPTS-NEXT:    llmc.broadcast
// OPTS-NEXT:    %[[DENB:.+]] = llmc.add %[[ROOTB]], %{{.+}} : tensor<3xf32>
// OPTS-NEXT:    %[[DIRB:.+]] = llmc.div %{{.+}}, %[[DENB]] : tensor<3xf32>
// OPTS-NEXT:    llmc.constant dense<1.000000e-01> : tensor<f32>
// OPTS-NEXT:    %[[WD:.+]] = llmc.broadcast
// OPTS-NEXT:    %[[DECAY:.+]] = llmc.mul %[[WD]], %{{.+}} : tensor<3xf32>
// OPTS-NEXT:    llmc.add %[[DIRB]], %[[DECAY]] : tensor<3xf32>
// The schedule options reach the op.
// SCHED-LABEL: func.func @train_step
// SCHED:         llmc.lr_schedule %{{.+}} linear peak 6.000000e-04 min 6.000000e-05 warmup 10 total 500 : tensor<f32>
func.func @train_step(%w: tensor<2x3xf32> {llmc.name = "fc.weight", llmc.role = "parameter"},
                      %b: tensor<3xf32> {llmc.name = "fc.bias", llmc.role = "parameter"},
                      %x: tensor<2x3xf32> {llmc.name = "x", llmc.role = "input"})
    -> (tensor<f32>, tensor<2x3xf32>, tensor<3xf32>) {
  %l = llmc.reduce_sum %x dims [0, 1] : tensor<2x3xf32> -> tensor<f32>
  %gb = llmc.reduce_sum %x dims [0] : tensor<2x3xf32> -> tensor<3xf32>
  return %l, %x, %gb : tensor<f32>, tensor<2x3xf32>, tensor<3xf32>
}

// -----

// Embedding tables get no weight decay, whatever their rank (unless decay-all).
// CHECK-LABEL: func.func @train_step
// CHECK-SAME:    (%[[WTE:[^:]+]]: tensor<8x4xf32>
// CHECK:         llmc.sqrt %{{.+}} : tensor<8x4xf32>
// CHECK-NEXT:    llmc.constant
// CHECK-NEXT:    llmc.broadcast
// CHECK-NEXT:    llmc.add
// CHECK-NEXT:    %[[DIR:.+]] = llmc.div %{{.+}}, %{{.+}} : tensor<8x4xf32>
// CHECK-NEXT:    %[[RATE:.+]] = llmc.broadcast %{{.+}} dims [] : tensor<f32> -> tensor<8x4xf32>
// CHECK-NEXT:    %[[STEP:.+]] = llmc.mul %[[RATE]], %[[DIR]]
// CHECK-NEXT:    %[[NEW:.+]] = llmc.sub %[[WTE]], %[[STEP]]
// CHECK-NEXT:    return
// OPTS-LABEL: func.func @train_step
// OPTS-SAME:    (%[[WTE:[^:]+]]: tensor<8x4xf32>
// SCHED-LABEL: func.func @train_step
// OPTS:         llmc.constant dense<1.000000e-01> : tensor<f32>
// OPTS-NEXT:    %[[WD:.+]] = llmc.broadcast
// OPTS-NEXT:    llmc.mul %[[WD]], %[[WTE]] : tensor<8x4xf32>
func.func @train_step(%wte: tensor<8x4xf32> {llmc.name = "transformer.wte.weight", llmc.role = "parameter"})
    -> (tensor<f32>, tensor<8x4xf32>) {
  %l = llmc.reduce_sum %wte dims [0, 1] : tensor<8x4xf32> -> tensor<f32>
  return %l, %wte : tensor<f32>, tensor<8x4xf32>
}

// -----

// Must not apply: there is no @train_step (autodiff has not run).
// expected-error @+1 {{expected a function @train_step to add the optimizer to, found none; run --llmc-autodiff first}}
module {
  func.func @loss(%w: tensor<3xf32> {llmc.role = "parameter"}) -> tensor<f32> {
    %l = llmc.reduce_sum %w dims [0] : tensor<3xf32> -> tensor<f32>
    return %l : tensor<f32>
  }
}

// -----

// Must not apply twice: the state is already there.
// expected-error @+1 {{@train_step already has optimizer state (argument #1); run --llmc-optimizer once}}
func.func @train_step(%w: tensor<3xf32> {llmc.name = "w", llmc.role = "parameter"},
                      %m: tensor<3xf32> {llmc.name = "optimizer.m.w", llmc.role = "optimizer_state"})
    -> (tensor<f32>, tensor<3xf32>) {
  %l = llmc.reduce_sum %w dims [0] : tensor<3xf32> -> tensor<f32>
  return %l, %w : tensor<f32>, tensor<3xf32>
}

// -----

// Must not apply: the results are not (loss, one gradient per parameter).
// expected-error @+1 {{expected @train_step to return a rank-0 loss and one gradient per parameter (1), found 'tensor<f32>'}}
func.func @train_step(%w: tensor<3xf32> {llmc.name = "w", llmc.role = "parameter"}) -> tensor<f32> {
  %l = llmc.reduce_sum %w dims [0] : tensor<3xf32> -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Must not apply: the state and the update are f32, and so must the parameters be.
// expected-error @+1 {{expected f32 parameters, got 'tensor<3xbf16>' for 'w'; low-precision parameters with f32 master weights are issue #6}}
func.func @train_step(%w: tensor<3xbf16> {llmc.name = "w", llmc.role = "parameter"}) -> (tensor<f32>, tensor<3xbf16>) {
  %c = llmc.cast %w : tensor<3xbf16> -> tensor<3xf32>
  %l = llmc.reduce_sum %c dims [0] : tensor<3xf32> -> tensor<f32>
  return %l, %w : tensor<f32>, tensor<3xbf16>
}
