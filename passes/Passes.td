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
