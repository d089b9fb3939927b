//===- Fp8Ops.td - FP8 matmuls with tensorwise scales --------------------===//
//
// The ops of `[precision] policy = "fp8"` (docs/precision.md): the linear
// layers' matmul as one composite whose derivative is the FP8 backward
// (llmc.fp8_matmul), and the explicit steps it expands to after autodiff: the
// absolute maximum of a tensor, the scaled cast to an 8-bit float, and the
// matmul of two 8-bit operands with their inverse scales. Included by
// LlmcOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef LLMC_FP8_OPS_TD
#define LLMC_FP8_OPS_TD

def Llmc_AmaxOp : Llmc_Op<"amax", [Pure,
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<Llmc_DifferentiableOpInterface>]> {
  let summary = "the largest absolute value of a tensor, as an f32 scalar";
  let description = [{
    `max(|x|)` over every element (0 for a tensor of zeros; NaN if any element
    is NaN). The statistic of FP8's tensorwise scaling. No gradient flows
    through it: a scale is a constant of the step in every FP8 recipe.
    ```mlir
    %a = llmc.amax %x : tensor<512x768xbf16> -> tensor<f32>
    ```
  }];
  let arguments = (ins Llmc_FloatTensor:$input);
  let results = (outs Llmc_F32Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Llmc_ScaledCastOp : Llmc_Op<"scaled_cast", [Pure,
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops"]>]> {
  let summary = "x times a scalar scale, rounded to an 8-bit float";
  let description = [{
    `result = fp8(x * scale)` with `scale` an f32 scalar, the product formed
    in f32 and rounded to nearest even, saturating to the format's largest
    finite value (448 for f8E4M3FN, 57344 for f8E5M2; infinities too), NaN
    kept NaN. The result element type picks the format.
    ```mlir
    %x8 = llmc.scaled_cast %x, %scale : tensor<512x768xbf16> -> tensor<512x768xf8E4M3FN>
    ```
  }];
  let arguments = (ins Llmc_FloatTensor:$input, Llmc_F32Scalar:$scale);
  let results = (outs Llmc_F8Tensor:$result);
  let assemblyFormat = [{
    $input `,` $scale attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Llmc_ScaledCastTransposeOp : Llmc_Op<"scaled_cast_transpose", [Pure,
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops"]>]> {
  let summary = "a scaled cast to an 8-bit float in both layouts of a matrix";
  let description = [{
    The codes of `llmc.scaled_cast %x, %scale` for `x` `[M, K]` and the same
    codes transposed, `[K, M]`, from one pass over `x`: FP8 training needs
    every cast tensor in both layouts (Hopper's FP8 GEMMs take both operands
    with the contraction innermost, so the forward and the backward contract
    each tensor along different dimensions). `--llmc-pair-fp8-transposes`
    forms it from a scaled_cast whose codes are used both as they are and
    transposed; the codes are the scaled_cast's bit for bit.
    ```mlir
    %x8, %xt8 = llmc.scaled_cast_transpose %x, %scale
        : tensor<512x768xbf16> -> tensor<512x768xf8E4M3FN>, tensor<768x512xf8E4M3FN>
    ```
  }];
  let arguments = (ins Llmc_FloatTensor:$input, Llmc_F32Scalar:$scale);
  let results = (outs Llmc_F8Tensor:$result, Llmc_F8Tensor:$transposed);
  let assemblyFormat = [{
    $input `,` $scale attr-dict `:` type($input) `->` type($result) `,`
    type($transposed)
  }];
  let hasVerifier = 1;
}

def Llmc_ScaledMatmulOp : Llmc_Op<"scaled_matmul", [Pure,
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops"]>]> {
  let summary = "matrix product of two 8-bit float operands, descaled";
  let description = [{
    `result[m, n] = (sum_k lhs[m, k] * rhs[n, k]) * lhs_scale_inv * rhs_scale_inv`
    for `lhs` `[M, K]` and `rhs` `[N, K]`: both operands have the contraction
    dimension innermost (the only layout Hopper's FP8 GEMMs take, cuBLASLt's
    "TN"). The scales are the inverses of the ones the operands were cast
    with (cuBLASLt's A/B scale pointers, torch's `_scaled_mm`); the sum is
    accumulated in f32 or wider and rounded once to the result type (bf16 or
    f32). Operands are f8E4M3FN or f8E5M2, not both f8E5M2.
    ```mlir
    %y = llmc.scaled_matmul %x8, %w8 scales(%xs, %ws)
        : tensor<512x768xf8E4M3FN>, tensor<2304x768xf8E4M3FN> -> tensor<512x2304xbf16>
    ```
  }];
  let arguments = (ins Llmc_F8Tensor:$lhs, Llmc_F8Tensor:$rhs,
                       Llmc_F32Scalar:$lhs_scale_inv,
                       Llmc_F32Scalar:$rhs_scale_inv);
  let results = (outs Llmc_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs `scales` `(` $lhs_scale_inv `,` $rhs_scale_inv `)` attr-dict
    `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Llmc_Fp8MatmulOp : Llmc_CompositeOp<"fp8_matmul", [
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<Llmc_DifferentiableOpInterface>]> {
  let summary = "a linear layer's matmul through FP8 with current scaling";
  let description = [{
    `lhs · rhs` (`lhs · rhsᵀ` under `transpose_b`) for `lhs` `[batch..., M, K]`
    and a weight `rhs` `[K, N]` (`[N, K]`), where both operands are first cast
    to f8E4M3FN with a tensorwise scale 448 / amax (current scaling: the
    amax of this step's tensor). Its derivative casts the result's
    gradient to f8E5M2 (scale 57344 / amax) and computes both operand
    gradients as FP8 products (`dlhs = dy · rhsᵀ`, `drhs = lhsᵀ · dy`), in
    the result's type. `--llmc-expand-fp8-matmul` replaces it after autodiff
    by the explicit amax, scaled_cast and scaled_matmul ops.
    ```mlir
    %y = llmc.fp8_matmul %x, %w
        : tensor<8x64x768xbf16>, tensor<768x2304xbf16> -> tensor<8x64x2304xbf16>
    ```
  }];
  let arguments = (ins Llmc_FloatTensor:$lhs, Llmc_FloatTensor:$rhs,
                       UnitAttr:$transpose_b);
  let results = (outs Llmc_FloatTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`transpose_b` $transpose_b^)?
    attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // LLMC_FP8_OPS_TD
