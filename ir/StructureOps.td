//===- StructureOps.td - region ops that passes introduce ----------------===//
//
// Ops that group other llmc ops: `llmc.fused` (one kernel later, built by
// --llmc-fuse) and its terminator `llmc.yield`. The frontend never builds
// them. Included by LlmcOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef LLMC_STRUCTURE_OPS_TD
#define LLMC_STRUCTURE_OPS_TD

include "mlir/IR/RegionKindInterface.td"

def Llmc_FusedOp : Llmc_Op<"fused", [IsolatedFromAbove,
    RecursiveMemoryEffects, SingleBlock,
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops"]>]> {
  let summary = "a group of ops that becomes one kernel";
  let description = [{
    The ops of the region run as one kernel: values produced and consumed
    inside never go to device memory. The operands are the values the group
    reads from outside, and the entry block has one argument per operand
    (same types; the region is isolated from above). `llmc.yield` returns the
    values the rest of the program uses, which become the results. `kind`
    says which kernel shape the group is (`elementwise`, `row_reduction`,
    `matmul_epilogue`, `classifier_loss`); the op's location is that of the
    model part the group comes from.

    Its cost: the flops of the body, and the bytes of the operands and the
    results only, which is what fusion saves (docs/fusion.md). It has no
    derivative rule: fusion runs after autodiff and the optimizer.
    ```mlir
    %y = llmc.fused matmul_epilogue (%h, %w, %b) : (tensor<8x64xf32>, tensor<64x256xf32>, tensor<256xf32>) -> (tensor<8x256xf32>) {
    ^bb0(%x: tensor<8x64xf32>, %k: tensor<64x256xf32>, %c: tensor<256xf32>):
      %m = llmc.matmul %x, %k : tensor<8x64xf32>, tensor<64x256xf32> -> tensor<8x256xf32>
      %cb = llmc.broadcast %c dims [1] : tensor<256xf32> -> tensor<8x256xf32>
      %s = llmc.add %m, %cb : tensor<8x256xf32>
      %g = llmc.gelu %s tanh : tensor<8x256xf32>
      llmc.yield %g : tensor<8x256xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<Llmc_Tensor>:$inputs,
                       Llmc_FusionKindAttr:$kind);
  let results = (outs Variadic<Llmc_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $kind ` ` `(` $inputs `)` attr-dict `:` functional-type($inputs, $results)
    $body
  }];
  let hasVerifier = 1;
}

def Llmc_YieldOp : Llmc_Op<"yield", [Pure, Terminator,
    HasParent<"FusedOp">,
    DeclareOpInterfaceMethods<Llmc_CostOpInterface,
                              ["getFlops", "getBytesRead"]>]> {
  let summary = "the values an llmc.fused region returns";
  let description = [{
    Ends the body of `llmc.fused`; its operands become the results of the
    region op, in order. Costs nothing: it names values, it moves none.
  }];
  let arguments = (ins Variadic<Llmc_Tensor>:$values);
  let assemblyFormat = [{ ($values^ `:` type($values))? attr-dict }];
}

#endif // LLMC_STRUCTURE_OPS_TD
