//===- Passes.td - every llmc pass --------------------------------------===//
//
// One def per pass, named <Verb><Object>Pass, flag llmc-<verb>-<object>,
// source passes/<Verb><Object>.cpp, test test/passes/<verb>-<object>.mlir.
// The default pipeline that strings them together is in Pipelines.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef LLMC_PASSES_TD
#define LLMC_PASSES_TD

include "mlir/Pass/PassBase.td"

def AutodiffPass : Pass<"llmc-autodiff", "mlir::ModuleOp"> {
  let summary = "Build @train_step (loss and parameter gradients) from @loss";
  let description = [{
    Reverse-mode differentiation over `DifferentiableOpInterface`. From
    `@loss(params..., inputs...) -> loss` (a rank-0 float) it builds a new
    function `@train_step` with the same arguments and argument attributes
    that returns the loss and then the gradient of every argument with
    `llmc.role = "parameter"`, in argument order; `@loss` stays. Cotangents
    are computed only for values on a path from a parameter to the loss, a
    value used twice gets the sum of its cotangents (tied weights), and a
    parameter the loss does not depend on gets zeros. An op on such a path
    without a derivative rule is an error at the op. With no parameters,
    `@train_step` returns only the loss.

    ```mlir
    func.func @loss(%w: tensor<3xf32> {llmc.role = "parameter"},
                    %x: tensor<3xf32> {llmc.role = "input"}) -> tensor<f32> {
      %y = llmc.mul %w, %x : tensor<3xf32>
      %l = llmc.reduce_sum %y dims [0] : tensor<3xf32> -> tensor<f32>
      return %l : tensor<f32>
    }
    ```
    gains
    ```mlir
    func.func @train_step(%w: ..., %x: ...) -> (tensor<f32>, tensor<3xf32>) {
      %y = llmc.mul %w, %x : tensor<3xf32>
      %l = llmc.reduce_sum %y dims [0] : tensor<3xf32> -> tensor<f32>
      %one = llmc.constant dense<1.0> : tensor<f32>
      %g1 = llmc.reshape %one : tensor<f32> -> tensor<1xf32>
      %gy = llmc.broadcast %g1 dims [0] : tensor<1xf32> -> tensor<3xf32>
      %gw = llmc.mul %gy, %x : tensor<3xf32>
      return %l, %gw : tensor<f32>, tensor<3xf32>
    }
    ```
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"loss\"",
           "The function to differentiate">,
    Option<"result", "result", "std::string", /*default=*/"\"train_step\"",
           "The name of the function to build">,
  ];
  let dependentDialects = ["::llmc::LlmcDialect", "::mlir::func::FuncDialect"];
}

def PrintCostPass : Pass<"llmc-print-cost", "mlir::ModuleOp"> {
  let summary = "Report the flops and bytes of every op and of each function";
  let description = [{
    Walks every function and prints, for each op that implements
    `CostOpInterface`, the model part it comes from (its location), the op,
    its flops and the bytes it reads and writes unfused; then the totals of
    the function. The IR is not changed. This is the cost the planner
    (issue #11) turns into time with a device profile.

    ```mlir
    func.func @mlp(%x: tensor<4x8xf32>, %w: tensor<8x16xf32>) -> tensor<4x16xf32> {
      %y = llmc.matmul %x, %w : tensor<4x8xf32>, tensor<8x16xf32> -> tensor<4x16xf32> loc("mlp.fc")
      %z = llmc.gelu %y tanh : tensor<4x16xf32> loc("mlp.act")
      return %z : tensor<4x16xf32>
    }
    ```
    prints
    ```
    cost of @mlp
      mlp.fc   llmc.matmul  flops 1024  read 640  written 256
      mlp.act  llmc.gelu    flops 512   read 256  written 256
      total               flops 1536  read 896  written 512
    ```
  }];
  let options = [
    Option<"totalsOnly", "totals-only", "bool", /*default=*/"false",
           "Print only the totals of each function">,
  ];
}

#endif // LLMC_PASSES_TD
