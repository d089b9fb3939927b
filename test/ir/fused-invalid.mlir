// RUN: llmc-opt %s --split-input-file --verify-diagnostics

func.func @block_arguments(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'llmc.fused' op expected 2 block arguments (one per operand), got 1}}
  %f = llmc.fused elementwise (%a, %b) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%x: tensor<8xf32>):
    %n = llmc.neg %x : tensor<8xf32>
    llmc.yield %n : tensor<8xf32>
  }
  return %f : tensor<8xf32>
}

// -----

func.func @block_argument_type(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'llmc.fused' op expected block argument #0 to have the type of operand #0 'tensor<8xf32>', got 'tensor<4xf32>'}}
  %f = llmc.fused elementwise (%a) : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%x: tensor<4xf32>):
    %n = llmc.neg %x : tensor<4xf32>
    llmc.yield %x : tensor<4xf32>
  }
  return %f : tensor<8xf32>
}

// -----

func.func @yield_count(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'llmc.fused' op expected llmc.yield to return 1 values (one per result), got 0}}
  %f = llmc.fused elementwise (%a) : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%x: tensor<8xf32>):
    llmc.yield
  }
  return %f : tensor<8xf32>
}

// -----

func.func @yield_type(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'llmc.fused' op expected yielded value #0 to have the type of result #0 'tensor<8xf32>', got 'tensor<f32>'}}
  %f = llmc.fused elementwise (%a) : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%x: tensor<8xf32>):
    %r = llmc.reduce_sum %x dims [0] : tensor<8xf32> -> tensor<f32>
    llmc.yield %r : tensor<f32>
  }
  return %f : tensor<8xf32>
}

// -----

// Isolated from above: the body reads only its block arguments.
func.func @captures(%a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  // expected-note @+1 {{required by region isolation constraints}}
  %f = llmc.fused elementwise (%a) : (tensor<8xf32>) -> tensor<8xf32> {
  ^bb0(%x: tensor<8xf32>):
    // expected-error @+1 {{using value defined outside the region}}
    %s = llmc.add %x, %b : tensor<8xf32>
    llmc.yield %s : tensor<8xf32>
  }
  return %f : tensor<8xf32>
}

// -----

func.func @yield_outside(%a: tensor<8xf32>) {
  // expected-error @+1 {{'llmc.yield' op expects parent op 'llmc.fused'}}
  llmc.yield %a : tensor<8xf32>
}
