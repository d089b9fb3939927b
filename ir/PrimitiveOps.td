//===- PrimitiveOps.td - primitive ops of the llmc dialect ---------------===//
//
// Elementwise math, shape manipulation, reductions, matmul, gather/scatter,
// compare/select and constants: enough to write any model. Included by
// LlmcOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef LLMC_PRIMITIVE_OPS_TD
#define LLMC_PRIMITIVE_OPS_TD

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// Unary elementwise ops print one type when operand and result agree:
//   %y = llmc.exp %x : tensor<4x8xf32>
class Llmc_UnaryOp<string mnemonic, Type operandType, list<Trait> traits = []>
    : Llmc_Op<mnemonic, !listconcat(traits, [Pure, Llmc_Elementwise,
          DeclareOpInterfaceMethods<Llmc_CostOpInterface>,
          DeclareOpInterfaceMethods<Llmc_DifferentiableOpInterface>])> {
  let arguments = (ins operandType:$input);
  let results = (outs operandType:$result);
  let assemblyFormat = [{
    $input attr-dict `:` custom<ElementwiseTypes>(type($input), type($result))
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$input), [{
      build($_builder, $_state, input.getType(), input);
    }]>];
  let hasVerifier = 1;
}

class Llmc_BinaryOp<string mnemonic, Type operandType, list<Trait> traits = []>
    : Llmc_Op<mnemonic, !listconcat(traits, [Pure, Llmc_Elementwise,
          DeclareOpInterfaceMethods<Llmc_CostOpInterface>,
          DeclareOpInterfaceMethods<Llmc_DifferentiableOpInterface>])> {
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs operandType:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:`
    custom<ElementwiseTypes>(type($lhs), type($rhs), type($result))
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$lhs, "::mlir::Value":$rhs), [{
      build($_builder, $_state, lhs.getType(), lhs, rhs);
    }]>];
  let hasVerifier = 1;
}

def Llmc_NegOp : Llmc_UnaryOp<"neg", Llmc_NumericTensor> {
  let summary = "elementwise negation";
  let description = [{
    `-x` for every element. Example:
    ```mlir
    %y = llmc.neg %x : tensor<4x8xf32>
    ```
  }];
}

def Llmc_AbsOp : Llmc_UnaryOp<"abs", Llmc_NumericTensor> {
  let summary = "elementwise absolute value";
  let description = [{
    ```mlir
    %y = llmc.abs %x : tensor<4x8xbf16>
    ```
  }];
}

def Llmc_ExpOp : Llmc_UnaryOp<"exp", Llmc_FloatTensor> {
  let summary = "elementwise natural exponential";
  let description = [{
    ```mlir
    %y = llmc.exp %x : tensor<4x8xf32>
    ```
  }];
}

def Llmc_LogOp : Llmc_UnaryOp<"log", Llmc_FloatTensor> {
  let summary = "elementwise natural logarithm";
  let description = [{
    Undefined (NaN or -inf) for non-positive inputs, as in IEEE arithmetic.
    ```mlir
    %y = llmc.log %x : tensor<4x8xf32>
    ```
  }];
}

def Llmc_TanhOp : Llmc_UnaryOp<"tanh", Llmc_FloatTensor> {
  let summary = "elementwise hyperbolic tangent";
  let description = [{
    ```mlir
    %y = llmc.tanh %x : tensor<4x8xf16>
    ```
  }];
}

def Llmc_SqrtOp : Llmc_UnaryOp<"sqrt", Llmc_FloatTensor> {
  let summary = "elementwise square root";
  let description = [{
    ```mlir
    %y = llmc.sqrt %x : tensor<4x8xf32>
    ```
  }];
}

def Llmc_RsqrtOp : Llmc_UnaryOp<"rsqrt", Llmc_FloatTensor> {
  let summary = "elementwise reciprocal square root";
  let description = [{
    `1 / sqrt(x)`, the normalizer of layer and RMS norms.
    ```mlir
    %y = llmc.rsqrt %x : tensor<4x1xf32>
    ```
  }];
}

def Llmc_AddOp : Llmc_BinaryOp<"add", Llmc_NumericTensor, [Commutative]> {
  let summary = "elementwise addition";
  let description = [{
    Operands and result have one type; there is no implicit broadcasting
    (use `llmc.broadcast`). A mismatch can only be written with the long
    type form, which the verifier rejects:
    ```mlir
    %c = llmc.add %a, %b : tensor<4x8xf32>
    %d = llmc.add %a, %e : tensor<4x8xf32>, tensor<4x8xf32> -> tensor<4x8xf32>
    ```
    Canonicalization turns the sum of two zero-padded concats whose
    non-zero pieces do not overlap into one concat of those pieces
    (ir/CanonicalizePrimitives.cpp).
  }];
  let hasCanonicalizer = 1;
}

def Llmc_SubOp : Llmc_BinaryOp<"sub", Llmc_NumericTensor> {
  let summary = "elementwise subtraction";
  let description = [{
    `lhs - rhs`.
    ```mlir
    %c = llmc.sub %a, %b : tensor<4x8xf32>
    ```
  }];
}

def Llmc_MulOp : Llmc_BinaryOp<"mul", Llmc_NumericTensor, [Commutative]> {
  let summary = "elementwise multiplication";
  let description = [{
    ```mlir
    %c = llmc.mul %a, %b : tensor<4x8xbf16>
    ```
  }];
}

def Llmc_DivOp : Llmc_BinaryOp<"div", Llmc_NumericTensor> {
  let summary = "elementwise division";
  let description = [{
    `lhs / rhs`; integer division rounds toward zero.
    ```mlir
    %c = llmc.div %a, %b : tensor<4x8xf32>
    ```
  }];
}

def Llmc_MaxOp : Llmc_BinaryOp<"max", Llmc_NumericTensor, [Commutative]> {
  let summary = "elementwise maximum";
  let description = [{
    NaN-propagating for floats.
    ```mlir
    %c = llmc.max %a, %b : tensor<4x8xf32>
    ```
  }];
}

def Llmc_MinOp : Llmc_BinaryOp<"min", Llmc_NumericTensor, [Commutative]> {
  let summary = "elementwise minimum";
  let description = [{
    NaN-propagating for floats.
    ```mlir
    %c = llmc.min %a, %b : tensor<4x8xi32>
    ```
  }];
}

def Llmc_CastOp : Llmc_Op<"cast", [Pure, Llmc_Elementwise,
    DeclareOpInterfaceMethods<Llmc_CostOpInterface>,
    DeclareOpInterfaceMethods<Llmc_DifferentiableOpInterface>]> {
  let summary = "elementwise conversion of the element type";
  let description = [{
    Converts every element to the result element type, keeping the shape.
    Float to float rounds to nearest even; float to integer truncates toward
    zero; to `i1` is `x != 0`. The precision pass inserts these.
    ```mlir
    %y = llmc.cast %x : tensor<4x8xf32> -> tensor<4x8xbf16>
    ```
  }];
  let arguments = (ins Llmc_Tensor:$input);
  let results = (outs Llmc_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Shape manipulation
//===----------------------------------------------------------------------===//

def Llmc_BroadcastOp : Llmc_Op<"broadcast", [Pure,
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<Llmc_DifferentiableOpInterface>]> {
  let summary = "broadcast into a larger shape";
  let description = [{
    Operand dimension `i` becomes result dimension `dims[i]` (strictly
    increasing); it must equal that result dimension or be 1. Result
    dimensions not named in `dims` are new and take every index.
    ```mlir
    // A bias over the channels, added to every row:
    %b = llmc.broadcast %bias dims [1] : tensor<64xf32> -> tensor<8x64xf32>
    ```
  }];
  let arguments = (ins Llmc_Tensor:$input, DenseI64ArrayAttr:$dims);
  let results = (outs Llmc_Tensor:$result);
  let assemblyFormat = [{
    $input `dims` $dims attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Llmc_ReshapeOp : Llmc_Op<"reshape", [Pure,
    DeclareOpInterfaceMethods<Llmc_CostOpInterface,
        ["getFlops", "getBytesRead", "getBytesWritten"]>,
    DeclareOpInterfaceMethods<Llmc_DifferentiableOpInterface>]> {
  let summary = "reinterpret the shape, keeping row-major element order";
  let description = [{
    The element count and type are unchanged. Free: a view of the same
    buffer.
    ```mlir
    %y = llmc.reshape %x : tensor<8x1024x768xbf16> -> tensor<8x1024x12x64xbf16>
    ```
  }];
  let arguments = (ins Llmc_Tensor:$input);
  let results = (outs Llmc_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Llmc_TransposeOp : Llmc_Op<"transpose", [Pure,
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<Llmc_DifferentiableOpInterface>]> {
  let summary = "permute the dimensions";
  let description = [{
    Result dimension `i` is operand dimension `permutation[i]`.
    ```mlir
    // [B, T, H, D] -> [B, H, T, D]
    %y = llmc.transpose %x perm [0, 2, 1, 3]
        : tensor<8x1024x12x64xbf16> -> tensor<8x12x1024x64xbf16>
    ```
  }];
  let arguments = (ins Llmc_MovableTensor:$input,
                       DenseI64ArrayAttr:$permutation);
  let results = (outs Llmc_MovableTensor:$result);
  let assemblyFormat = [{
    $input `perm` $permutation attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Llmc_SliceOp : Llmc_Op<"slice", [Pure,
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<Llmc_DifferentiableOpInterface>]> {
  let summary = "a strided box of a tensor";
  let description = [{
    Takes indices `starts[i], starts[i] + strides[i], ...` below `limits[i]`
    in every dimension; `strides` defaults to all ones. The result dimension
    is `ceil((limits[i] - starts[i]) / strides[i])`.
    ```mlir
    // The query third of a fused QKV projection:
    %q = llmc.slice %qkv starts [0, 0, 0] limits [8, 1024, 768]
        : tensor<8x1024x2304xbf16> -> tensor<8x1024x768xbf16>
    %even = llmc.slice %x starts [0] limits [8] strides [2]
        : tensor<8xf32> -> tensor<4xf32>
    ```
  }];
  let arguments = (ins Llmc_Tensor:$input, DenseI64ArrayAttr:$starts,
                       DenseI64ArrayAttr:$limits,
                       OptionalAttr<DenseI64ArrayAttr>:$strides);
  let results = (outs Llmc_Tensor:$result);
  let assemblyFormat = [{
    $input `starts` $starts `limits` $limits (`strides` $strides^)? attr-dict
    `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Llmc_ConcatOp : Llmc_Op<"concat", [Pure,
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<Llmc_DifferentiableOpInterface>]> {
  let summary = "join tensors along one dimension";
  let description = [{
    All inputs have the result's element type and rank and agree on every
    dimension but `dim`, whose sizes add up to the result's.
    ```mlir
    %y = llmc.concat %a, %b dim 1
        : (tensor<4x8xf32>, tensor<4x24xf32>) -> tensor<4x32xf32>
    ```
  }];
  let arguments = (ins Variadic<Llmc_Tensor>:$inputs, I64Attr:$dim);
  let results = (outs Llmc_Tensor:$result);
  let assemblyFormat = [{
    $inputs `dim` $dim attr-dict `:` functional-type($inputs, $result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class Llmc_ReduceOp<string mnemonic, Type operandType>
    : Llmc_Op<mnemonic, [Pure,
          DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops"]>,
          DeclareOpInterfaceMethods<Llmc_DifferentiableOpInterface>]> {
  let arguments = (ins operandType:$input, DenseI64ArrayAttr:$dims,
                       UnitAttr:$keep_dims);
  let results = (outs operandType:$result);
  let assemblyFormat = [{
    $input `dims` $dims (`keep_dims` $keep_dims^)? attr-dict
    `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Llmc_ReduceSumOp : Llmc_ReduceOp<"reduce_sum", Llmc_NumericTensor> {
  let summary = "sum over the given dimensions";
  let description = [{
    Reduces `dims` (strictly increasing); they are dropped from the result,
    or kept with size 1 under `keep_dims`. A bf16 or f16 input may produce
    an f32 result: the sum is then accumulated in f32.
    ```mlir
    %s = llmc.reduce_sum %x dims [1] : tensor<4x8xbf16> -> tensor<4xf32>
    %k = llmc.reduce_sum %x dims [1] keep_dims : tensor<4x8xf32> -> tensor<4x1xf32>
    ```
  }];
}

def Llmc_ReduceMaxOp : Llmc_ReduceOp<"reduce_max", Llmc_NumericTensor> {
  let summary = "maximum over the given dimensions";
  let description = [{
    Same dimension rules as `llmc.reduce_sum`; the result element type is
    the input's.
    ```mlir
    %m = llmc.reduce_max %x dims [1] keep_dims : tensor<4x8xf32> -> tensor<4x1xf32>
    ```
  }];
}

def Llmc_ReduceMeanOp : Llmc_ReduceOp<"reduce_mean", Llmc_FloatTensor> {
  let summary = "arithmetic mean over the given dimensions";
  let description = [{
    Same dimension and accumulation rules as `llmc.reduce_sum`.
    ```mlir
    %m = llmc.reduce_mean %x dims [0, 1] : tensor<4x8xf32> -> tensor<f32>
    ```
  }];
}

//===----------------------------------------------------------------------===//
// Contraction
//===----------------------------------------------------------------------===//

def Llmc_MatmulOp : Llmc_Op<"matmul", [Pure,
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<Llmc_DifferentiableOpInterface>]> {
  let summary = "batched matrix multiplication with transpose flags";
  let description = [{
    `lhs` is `[batch..., M, K]` (`[batch..., K, M]` under `transpose_a`),
    `rhs` is `[batch..., K, N]` (`[batch..., N, K]` under `transpose_b`) or a
    plain matrix shared by every batch; the result is `[batch..., M, N]`.
    Operands share one element type; the result may be wider (bf16 inputs,
    f32 result), and accumulation is at least f32 for float inputs.
    ```mlir
    // A linear layer, weights stored [out, in] as in PyTorch:
    %y = llmc.matmul %x, %w transpose_b
        : tensor<8x1024x768xbf16>, tensor<3072x768xbf16> -> tensor<8x1024x3072xbf16>
    ```
  }];
  let arguments = (ins Llmc_NumericTensor:$lhs, Llmc_NumericTensor:$rhs,
                       UnitAttr:$transpose_a, UnitAttr:$transpose_b);
  let results = (outs Llmc_NumericTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`transpose_a` $transpose_a^)? (`transpose_b` $transpose_b^)?
    attr-dict `:` type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Gather and scatter
//===----------------------------------------------------------------------===//

def Llmc_GatherOp : Llmc_Op<"gather", [Pure,
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<Llmc_DifferentiableOpInterface>]> {
  let summary = "take slices along one dimension at given indices";
  let description = [{
    The result is `input` with dimension `dim` replaced by the shape of
    `indices` (numpy `take`): `result[a, i..., b] = input[a, indices[i...], b]`.
    Indices outside `[0, size)` give zeros.
    ```mlir
    %rows = llmc.gather %table[%ids] dim 0
        : (tensor<50257x768xf32>, tensor<8x1024xi32>) -> tensor<8x1024x768xf32>
    ```
  }];
  let arguments = (ins Llmc_Tensor:$input, Llmc_IndexTensor:$indices,
                       I64Attr:$dim);
  let results = (outs Llmc_Tensor:$result);
  let assemblyFormat = [{
    $input `[` $indices `]` `dim` $dim attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Llmc_ScatterAddOp : Llmc_Op<"scatter_add", [Pure,
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<Llmc_DifferentiableOpInterface>]> {
  let summary = "add slices into a tensor at given indices";
  let description = [{
    The transpose of `llmc.gather`: returns `dest` with every slice of
    `updates` added at `indices` along `dim`; repeated indices accumulate.
    `updates` has the shape `gather` would produce from `dest`. Indices
    outside `[0, size)` are skipped.
    ```mlir
    %g = llmc.scatter_add %zeros[%ids], %dy dim 0
        : (tensor<50257x768xf32>, tensor<8x1024xi32>, tensor<8x1024x768xf32>)
        -> tensor<50257x768xf32>
    ```
  }];
  let arguments = (ins Llmc_NumericTensor:$dest, Llmc_IndexTensor:$indices,
                       Llmc_NumericTensor:$updates, I64Attr:$dim);
  let results = (outs Llmc_NumericTensor:$result);
  let assemblyFormat = [{
    $dest `[` $indices `]` `,` $updates `dim` $dim attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Compare and select
//===----------------------------------------------------------------------===//

def Llmc_CompareOp : Llmc_Op<"compare", [Pure, Llmc_Elementwise,
    DeclareOpInterfaceMethods<Llmc_CostOpInterface>]> {
  let summary = "elementwise comparison";
  let description = [{
    An `i1` tensor of the operands' shape; operands share one type.
    ```mlir
    %mask = llmc.compare lt %a, %b : (tensor<4x8xi32>, tensor<4x8xi32>) -> tensor<4x8xi1>
    ```
  }];
  let arguments = (ins Llmc_CompareDirectionAttr:$direction,
                       Llmc_NumericTensor:$lhs, Llmc_NumericTensor:$rhs);
  let results = (outs Llmc_BoolTensor:$result);
  let assemblyFormat = [{
    $direction $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Llmc_SelectOp : Llmc_Op<"select", [Pure, Llmc_Elementwise,
    DeclareOpInterfaceMethods<Llmc_CostOpInterface>,
    DeclareOpInterfaceMethods<Llmc_DifferentiableOpInterface>]> {
  let summary = "elementwise choice between two tensors";
  let description = [{
    `cond ? on_true : on_false` per element; all three have one shape.
    ```mlir
    %y = llmc.select %mask, %a, %b
        : (tensor<4x8xi1>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
    ```
  }];
  let arguments = (ins Llmc_BoolTensor:$cond, Llmc_Tensor:$on_true,
                       Llmc_Tensor:$on_false);
  let results = (outs Llmc_Tensor:$result);
  let assemblyFormat = [{
    $cond `,` $on_true `,` $on_false attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def Llmc_IotaOp : Llmc_Op<"iota", [Pure,
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops", "getBytesRead"]>]> {
  let summary = "the index along one dimension, at every position";
  let description = [{
    `result[i_0, ..., i_n] = i_dim`. Positions of tokens and causal masks
    start here.
    ```mlir
    %pos = llmc.iota dim 1 : tensor<8x1024xi32>
    ```
  }];
  let arguments = (ins I64Attr:$dim);
  let results = (outs Llmc_NumericTensor:$result);
  let assemblyFormat = "`dim` $dim attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Llmc_ConstantOp : Llmc_Op<"constant", [Pure, ConstantLike,
    AllTypesMatch<["value", "result"]>,
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops", "getBytesRead"]>]> {
  let summary = "a tensor known at compile time";
  let description = [{
    ```mlir
    %zero = llmc.constant dense<0.0> : tensor<4x8xf32>
    %eps = llmc.constant dense<1.0e-05> : tensor<f32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Llmc_Tensor:$result);
  let assemblyFormat = "$value attr-dict";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Rank-dependent values of a partitioned (SPMD) program
//===----------------------------------------------------------------------===//

def Llmc_AxisOffsetOp : Llmc_Op<"axis_offset", [Pure,
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops", "getBytesRead"]>]> {
  let summary = "this rank's position along mesh axes, times a stride";
  let description = [{
    Appears only after partitioning: a rank-0 integer tensor holding the
    rank's linear index along `axes` of the module's mesh (major to minor)
    times `stride`. A vocabulary-parallel embedding subtracts it from the
    token ids: rank 1 of `tp = 2` over a 50304-row table holds rows
    25152 and up. Codegen turns it into a constant per rank.
    ```mlir
    %first = llmc.axis_offset axes [1] stride 25152 : tensor<i32>
    ```
  }];
  let arguments = (ins DenseI64ArrayAttr:$axes, I64Attr:$stride);
  let results = (outs Llmc_IndexTensor:$result);
  let assemblyFormat = "`axes` $axes `stride` $stride attr-dict `:` type($result)";
  let hasVerifier = 1;
}


//===----------------------------------------------------------------------===//
// Point-to-point transfers of a pipelined program (llmc-split-pipeline)
//===----------------------------------------------------------------------===//

def Llmc_SendOp : Llmc_Op<"send", [
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops", "getBytesWritten"]>]> {
  let summary = "send a value to the rank one pipeline stage further along an axis";
  let description = [{
    Appears only after pipeline splitting: the ranks at position `source`
    of mesh axis `axis` send `input` to the ranks at position `destination`
    of that axis with the same coordinates on every other axis. It is
    always followed by its `llmc.recv`, so that every rank meets its
    transfers in one global order (which makes blocking transfers
    deadlock-free). Not pure: it must not be erased or merged.
    ```mlir
    llmc.send %h axis 0 from 0 to 1 : tensor<4x16x64xf32>
    %r = llmc.recv axis 0 from 0 to 1 : tensor<4x16x64xf32>
    ```
  }];
  let arguments = (ins Llmc_Tensor:$input, I64Attr:$axis, I64Attr:$source,
                       I64Attr:$destination);
  let assemblyFormat = "$input `axis` $axis `from` $source `to` $destination attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Llmc_RecvOp : Llmc_Op<"recv", [
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops", "getBytesRead"]>]> {
  let summary = "receive the value its llmc.send sends";
  let description = [{
    The ranks at position `destination` of mesh axis `axis` receive the
    value that the ranks at `source` send (see `llmc.send`). Not pure: two
    receives of equal type are different messages.
  }];
  let arguments = (ins I64Attr:$axis, I64Attr:$source, I64Attr:$destination);
  let results = (outs Llmc_Tensor:$result);
  let assemblyFormat = "`axis` $axis `from` $source `to` $destination attr-dict `:` type($result)";
  let hasVerifier = 1;
}

#endif // LLMC_PRIMITIVE_OPS_TD
