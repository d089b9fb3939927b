//===- CompositeOps.td - composite ops of the llmc dialect ---------------===//
//
// Ops that stand for a subgraph of primitives and map to one tuned kernel:
// norms, softmax, attention, rope, activations, the loss and MoE routing.
// Each keeps the structure its derivative and sharding rules want (see
// docs/ir.md, "Why composite ops"). Included by LlmcOps.td.
//
//===----------------------------------------------------------------------===//

#ifndef LLMC_COMPOSITE_OPS_TD
#define LLMC_COMPOSITE_OPS_TD

class Llmc_CompositeOp<string mnemonic, list<Trait> traits = []>
    : Llmc_Op<mnemonic, !listconcat(traits, [Pure, Llmc_Composite])>;

def Llmc_EmbeddingOp : Llmc_CompositeOp<"embedding", [
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops", "getBytesRead"]>,
    DeclareOpInterfaceMethods<Llmc_DifferentiableOpInterface>]> {
  let summary = "look up rows of an embedding table";
  let description = [{
    `result[i..., :] = table[ids[i...], :]` for a `[vocab, dim]` table. Unlike
    `llmc.gather`, its gradient is a dense table-shaped scatter-add that the
    CUDA backend computes without atomics, and its sharding rule knows the
    vocabulary-parallel layout. Out-of-range ids give zero rows.
    ```mlir
    %h = llmc.embedding %wte[%tokens]
        : (tensor<50257x768xf32>, tensor<8x1024xi32>) -> tensor<8x1024x768xf32>
    ```
  }];
  let arguments = (ins Llmc_FloatTensor:$table, Llmc_IndexTensor:$ids);
  let results = (outs Llmc_FloatTensor:$result);
  let assemblyFormat = [{
    $table `[` $ids `]` attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Llmc_LayerNormOp : Llmc_CompositeOp<"layer_norm", [
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<Llmc_DifferentiableOpInterface>]> {
  let summary = "layer normalization over the last dimension";
  let description = [{
    `(x - mean) * rsqrt(var + epsilon) * gamma + beta`, with mean and the
    biased variance over the last dimension, computed in f32 whatever the
    input type. `gamma` and the optional `beta` have shape `[D]`.
    ```mlir
    %y = llmc.layer_norm %x, %gamma, %beta epsilon 1.0e-05
        : (tensor<8x1024x768xbf16>, tensor<768xf32>, tensor<768xf32>)
        -> tensor<8x1024x768xbf16>
    ```
  }];
  let arguments = (ins Llmc_FloatTensor:$input, Llmc_FloatTensor:$gamma,
                       Optional<Llmc_FloatTensor>:$beta, F64Attr:$epsilon);
  let results = (outs Llmc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $gamma (`,` $beta^)? `epsilon` $epsilon attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Llmc_RmsNormOp : Llmc_CompositeOp<"rms_norm", [
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<Llmc_DifferentiableOpInterface>]> {
  let summary = "root-mean-square normalization over the last dimension";
  let description = [{
    `x * rsqrt(mean(x^2) + epsilon) * gamma`, accumulated in f32; `gamma` has
    shape `[D]`.
    ```mlir
    %y = llmc.rms_norm %x, %gamma epsilon 1.0e-06
        : (tensor<2x256x512xf32>, tensor<512xf32>) -> tensor<2x256x512xf32>
    ```
  }];
  let arguments = (ins Llmc_FloatTensor:$input, Llmc_FloatTensor:$gamma,
                       F64Attr:$epsilon);
  let results = (outs Llmc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $gamma `epsilon` $epsilon attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Llmc_LayerNormGradOp : Llmc_CompositeOp<"layer_norm_grad", [
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops"]>]> {
  let summary = "the derivatives of llmc.layer_norm, recomputing the row statistics";
  let description = [{
    The vector-Jacobian product of `llmc.layer_norm` with the same `epsilon`:
    given the forward input `x [..., D]`, `gamma [D]` and the cotangent `dy`
    of the forward result (x's type), it returns `dx` (x's type), `dgamma`
    and `dbeta` (gamma's type). Per row, with the mean and the biased
    variance of `x` recomputed (two passes, as the forward),
    `r = rsqrt(var + epsilon)`, `xhat = (x - mean) r` and `g = dy gamma`:
    ```
    dx     = r (g - mean(g) - xhat mean(g xhat))
    dgamma = sum over the rows of dy xhat
    dbeta  = sum over the rows of dy
    ```
    computed in f64 or at least f32 and rounded once to each result's type.
    `dbeta` is returned whether or not the forward op had a `beta` (the
    derivative rule leaves it unused then). Nothing is stored by the forward
    op for it. It has no derivative rule of its own (differentiating through
    it is refused).
    ```mlir
    %dx, %dg, %db = llmc.layer_norm_grad %x, %gamma, %dy epsilon 1.0e-05
        : (tensor<8x1024x768xbf16>, tensor<768xf32>, tensor<8x1024x768xbf16>)
        -> (tensor<8x1024x768xbf16>, tensor<768xf32>, tensor<768xf32>)
    ```
  }];
  let arguments = (ins Llmc_FloatTensor:$input, Llmc_FloatTensor:$gamma,
                       Llmc_FloatTensor:$dresult, F64Attr:$epsilon);
  let results = (outs Llmc_FloatTensor:$dinput, Llmc_FloatTensor:$dgamma,
                      Llmc_FloatTensor:$dbeta);
  let assemblyFormat = [{
    $input `,` $gamma `,` $dresult `epsilon` $epsilon attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Llmc_RmsNormGradOp : Llmc_CompositeOp<"rms_norm_grad", [
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops"]>]> {
  let summary = "the derivatives of llmc.rms_norm, recomputing the row statistics";
  let description = [{
    The vector-Jacobian product of `llmc.rms_norm` with the same `epsilon`:
    from `x [..., D]`, `gamma [D]` and the cotangent `dy` (x's type), `dx`
    (x's type) and `dgamma` (gamma's type). Per row, with
    `r = rsqrt(mean(x^2) + epsilon)`, `xhat = x r` and `g = dy gamma`:
    `dx = r (g - xhat mean(g xhat))`, `dgamma = sum over the rows of dy xhat`.
    Like `llmc.layer_norm_grad`, it has no derivative rule of its own.
    ```mlir
    %dx, %dg = llmc.rms_norm_grad %x, %gamma, %dy epsilon 1.0e-06
        : (tensor<2x256x512xf32>, tensor<512xf32>, tensor<2x256x512xf32>)
        -> (tensor<2x256x512xf32>, tensor<512xf32>)
    ```
  }];
  let arguments = (ins Llmc_FloatTensor:$input, Llmc_FloatTensor:$gamma,
                       Llmc_FloatTensor:$dresult, F64Attr:$epsilon);
  let results = (outs Llmc_FloatTensor:$dinput, Llmc_FloatTensor:$dgamma);
  let assemblyFormat = [{
    $input `,` $gamma `,` $dresult `epsilon` $epsilon attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Llmc_SoftmaxOp : Llmc_CompositeOp<"softmax", [
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<Llmc_DifferentiableOpInterface>]> {
  let summary = "softmax along one dimension";
  let description = [{
    `exp(x - max) / sum(exp(x - max))` along `dim`, accumulated in f32.
    ```mlir
    %p = llmc.softmax %scores dim 3 : tensor<8x12x64x64xf32>
    ```
  }];
  let arguments = (ins Llmc_FloatTensor:$input, I64Attr:$dim);
  let results = (outs Llmc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `dim` $dim attr-dict `:` custom<ElementwiseTypes>(type($input), type($result))
  }];
  let hasVerifier = 1;
}

def Llmc_AttentionOp : Llmc_CompositeOp<"attention", [
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<Llmc_DifferentiableOpInterface>]> {
  let summary = "scaled dot-product attention, optionally causal, with grouped query heads";
  let description = [{
    `softmax(q k^T * scale + mask) v` per batch and head. Layout
    `[batch, heads, sequence, head_dim]`: `query` is `[B, Hq, T, D]`, `key` and
    `value` are `[B, Hkv, S, D]` with `Hq` a multiple of `Hkv` (grouped query
    attention: query head `h` reads key/value head `h / (Hq / Hkv)`). `causal`
    masks key positions after the query position and needs `T == S`.
    `scale` defaults to `1 / sqrt(D)`. The result is `[B, Hq, T, D]`. One op,
    so that the backend can use a flash kernel that never stores the T x S
    matrix.

    `layout` (default `bhtd`, as above) says how the operands lie; the
    kernels read every row of D elements in place through strides
    (docs/cuda.md, "Attention on [B, T, H, D]"):
    - `bthd`: `query [B, T, Hq, D]`, `key` and `value [B, S, Hkv, D]`, the
      result `[B, T, Hq, D]` (no transposes around a model's attention);
    - `packed`: `query`, `key` and `value` are one value `[B, T, Hq + 2 Hkv,
      D]`, query heads first, then key heads, then value heads (GPT-2's
      `c_attn` product reshaped: no slices either); the result is
      `[B, T, Hq, D]`, so `Hq` is read from it.
    ```mlir
    %o = llmc.attention %q, %k, %v causal
        : (tensor<8x12x1024x64xbf16>, tensor<8x4x1024x64xbf16>,
           tensor<8x4x1024x64xbf16>) -> tensor<8x12x1024x64xbf16>
    %p = llmc.attention %qkv, %qkv, %qkv causal layout packed
        : (tensor<8x1024x36x64xbf16>, tensor<8x1024x36x64xbf16>,
           tensor<8x1024x36x64xbf16>) -> tensor<8x1024x12x64xbf16>
    ```
    An optional second result `lse`, f32 `[B, Hq, T]`, is the log-sum-exp of
    each query row's scaled, masked scores (natural log; -inf for a row that
    sees no key). The derivative rule asks for it and passes it to
    `llmc.attention_grad`, whose kernel then skips its statistics pass.
    ```mlir
    %o, %lse = llmc.attention %q, %k, %v causal
        : (tensor<8x12x1024x64xbf16>, tensor<8x4x1024x64xbf16>,
           tensor<8x4x1024x64xbf16>)
        -> (tensor<8x12x1024x64xbf16>, tensor<8x12x1024xf32>)
    ```
  }];
  let arguments = (ins Llmc_FloatTensor:$query, Llmc_FloatTensor:$key,
                       Llmc_FloatTensor:$value, UnitAttr:$causal,
                       OptionalAttr<F64Attr>:$scale,
                       OptionalAttr<Llmc_AttentionLayoutAttr>:$layout);
  let results = (outs Llmc_FloatTensor:$result,
                      Optional<Llmc_F32Tensor>:$lse);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`causal` $causal^)? (`scale` $scale^)?
    (`layout` $layout^)? attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Llmc_AttentionGradOp : Llmc_CompositeOp<"attention_grad", [
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops"]>]> {
  let summary = "the derivatives of llmc.attention, recomputing the softmax";
  let description = [{
    The vector-Jacobian product of `llmc.attention` with the same `causal` and
    `scale`: given the forward operands `query [B, Hq, T, D]`, `key` and
    `value [B, Hkv, S, D]`, the forward result `out [B, Hq, T, D]` and its
    cotangent `dout` (same shape), it returns `dq`, `dk`, `dv` with the
    shapes of `query`, `key`, `value`. With `p = softmax(q k^T * scale +
    mask)` per row and `delta = sum_d dout * out` per query row:
    ```
    dv = p^T dout            dp = dout v^T          ds = p (dp - delta)
    dq = ds k * scale        dk = ds^T q * scale
    ```
    Grouped query heads as in `llmc.attention`: `dk` and `dv` of a key/value
    head sum the contributions of the `Hq / Hkv` query heads that read it.
    The optional operand `lse` (f32 `[B, Hq, T]`, after `dout`) is the
    forward's log-sum-exp (the second result of `llmc.attention`); without
    it the softmax statistics (row max and sum) are recomputed from `query`
    and `key`: one extra pass over the keys. Never a `[B, Hq, T, S]` tensor
    (a flash backward kernel). The op is what the autodiff pass emits for
    attention; it has no derivative rule of its own (differentiating
    through it is refused).

    `layout` as in `llmc.attention`: under `bthd` every operand and result
    is `[B, T, H, D]`; under `packed` the query, key and value are one
    `[B, T, Hq + 2 Hkv, D]` value, `out` and `dout` are `[B, T, Hq, D]`, and
    the op has one result, the gradient of that packed value (dq, dk and dv
    in its head ranges: GPT-2's concatenated `c_attn` gradient, no concat).
    `lse` stays `[B, Hq, T]` in every layout.
    ```mlir
    %dq, %dk, %dv = llmc.attention_grad %q, %k, %v, %o, %do lse %lse causal
        : (tensor<8x12x1024x64xbf16>, tensor<8x4x1024x64xbf16>,
           tensor<8x4x1024x64xbf16>, tensor<8x12x1024x64xbf16>,
           tensor<8x12x1024x64xbf16>, tensor<8x12x1024xf32>)
        -> (tensor<8x12x1024x64xbf16>, tensor<8x4x1024x64xbf16>,
            tensor<8x4x1024x64xbf16>)
    ```
  }];
  let arguments = (ins Llmc_FloatTensor:$query, Llmc_FloatTensor:$key,
                       Llmc_FloatTensor:$value, Llmc_FloatTensor:$out,
                       Llmc_FloatTensor:$dout, Optional<Llmc_F32Tensor>:$lse,
                       UnitAttr:$causal, OptionalAttr<F64Attr>:$scale,
                       OptionalAttr<Llmc_AttentionLayoutAttr>:$layout);
  // dquery, dkey, dvalue; under `packed` one gradient.
  let results = (outs Variadic<Llmc_FloatTensor>:$gradients);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $out `,` $dout (`lse` $lse^)?
    (`causal` $causal^)? (`scale` $scale^)? (`layout` $layout^)? attr-dict
    `:` functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// The gradients of query, key and value; under `packed`, getDquery()
    /// is the one gradient of the packed operand and the others are null.
    mlir::Value getDquery() { return getGradients()[0]; }
    mlir::Value getDkey() {
      return getGradients().size() == 3 ? getGradients()[1] : mlir::Value();
    }
    mlir::Value getDvalue() {
      return getGradients().size() == 3 ? getGradients()[2] : mlir::Value();
    }
  }];
  let hasVerifier = 1;
}

def Llmc_AttentionBlockOp : Llmc_CompositeOp<"attention_block", [
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops"]>]> {
  let summary = "one block of attention, masked by global positions, with its log-sum-exp";
  let description = [{
    A block of queries `query [B, Hq, T, D]` against a block of keys and
    values `key`, `value [B, Hkv, S, D]` (grouped query heads as in
    `llmc.attention`, layout `bhtd` only), masked by the blocks' GLOBAL
    positions: query row `t` sees key `s` when `key_positions[s] <=
    query_positions[t]` (i32 `[T]` and `[S]`). It returns the block's
    normalized `result` (same type as `query`) and `lse`, f32 `[B, Hq, T]`,
    the log-sum-exp of each row's scaled visible scores: -inf, with a zero
    result row, for a row that sees no key of the block. Blocks combine by
    log-sum-exp: `lse = logaddexp(lse_a, lse_b)`, `out = out_a exp(lse_a -
    lse) + out_b exp(lse_b - lse)`. Ring attention (context parallelism,
    docs/sharding.md) makes it: each ring step is one block, run by a flash
    kernel that never stores the `[T, S]` scores and skips the tiles whose
    keys all come after its queries. `scale` defaults to `1 / sqrt(D)`.
    ```mlir
    %o, %lse = llmc.attention_block %q, %k, %v positions(%qpos, %kpos)
        : (tensor<4x8x128x64xf32>, tensor<4x4x128x64xf32>,
           tensor<4x4x128x64xf32>, tensor<128xi32>, tensor<128xi32>)
        -> (tensor<4x8x128x64xf32>, tensor<4x8x128xf32>)
    ```
    Built by the partitioner after autodiff: no derivative rule
    (`llmc.attention_block_grad` is its backward, which the ring calls).
  }];
  let arguments = (ins Llmc_FloatTensor:$query, Llmc_FloatTensor:$key,
                       Llmc_FloatTensor:$value, Llmc_Tensor:$query_positions,
                       Llmc_Tensor:$key_positions,
                       OptionalAttr<F64Attr>:$scale);
  let results = (outs Llmc_FloatTensor:$result, Llmc_F32Tensor:$lse);
  let assemblyFormat = [{
    $query `,` $key `,` $value `positions` `(` $query_positions `,`
    $key_positions `)` (`scale` $scale^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Llmc_AttentionBlockGradOp : Llmc_CompositeOp<"attention_block_grad", [
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops"]>]> {
  let summary = "the gradients of one position-masked attention block, given the rows' global statistics";
  let description = [{
    The backward of one `llmc.attention_block` inside a larger attention
    whose blocks were merged by log-sum-exp: given the block's `query`,
    `key`, `value`, the GLOBAL (merged) `out` and its cotangent `dout`
    (`[B, Hq, T, D]`) and the GLOBAL log-sum-exp `lse` (f32 `[B, Hq, T]`),
    it returns the block's contributions `dq`, `dk`, `dv` with
    `p = exp(q k^T * scale - lse)` where `key_positions[s] <=
    query_positions[t]` and 0 elsewhere, `delta = sum_d dout * out`:
    ```
    dv = p^T dout     ds = p (dout v^T - delta)
    dq = ds k scale   dk = ds^T q scale
    ```
    A flash backward of the block (no `[T, S]` tensor; tiles whose keys all
    come after their queries skipped). The ring sums the blocks' dq on the
    query's rank and sends dk, dv along with their keys.
    ```mlir
    %dq, %dk, %dv = llmc.attention_block_grad %q, %k, %v, %o, %do, %lse
        positions(%qpos, %kpos)
        : (tensor<4x8x128x64xf32>, tensor<4x4x128x64xf32>,
           tensor<4x4x128x64xf32>, tensor<4x8x128x64xf32>,
           tensor<4x8x128x64xf32>, tensor<4x8x128xf32>, tensor<128xi32>,
           tensor<128xi32>)
        -> (tensor<4x8x128x64xf32>, tensor<4x4x128x64xf32>,
            tensor<4x4x128x64xf32>)
    ```
  }];
  let arguments = (ins Llmc_FloatTensor:$query, Llmc_FloatTensor:$key,
                       Llmc_FloatTensor:$value, Llmc_FloatTensor:$out,
                       Llmc_FloatTensor:$dout, Llmc_F32Tensor:$lse,
                       Llmc_Tensor:$query_positions,
                       Llmc_Tensor:$key_positions,
                       OptionalAttr<F64Attr>:$scale);
  let results = (outs Llmc_FloatTensor:$dquery, Llmc_FloatTensor:$dkey,
                      Llmc_FloatTensor:$dvalue);
  let assemblyFormat = [{
    $query `,` $key `,` $value `,` $out `,` $dout `,` $lse `positions` `(`
    $query_positions `,` $key_positions `)` (`scale` $scale^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Llmc_RopeOp : Llmc_CompositeOp<"rope", [
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<Llmc_DifferentiableOpInterface>]> {
  let summary = "rotary position embedding";
  let description = [{
    Rotates pairs `(x[..., t, i], x[..., t, i + D/2])` of an input `[..., T, D]`
    (the "rotate half" layout of Hugging Face LLaMA) by the angle
    `p * f_i`, where `p` is `positions[t]` when given (a `[T]` integer
    tensor, for sequence shards that do not start at 0) and `t` otherwise,
    and `f_i` the pair's inverse frequency: `theta^(-2i/D)`, or `inv_freq[i]`
    when the op carries `inv_freq` (`D/2` positive values that a scaled rope
    computes ahead of time, e.g. LLaMA 3's `rope_scaling`; `theta` then only
    documents the base they came from). `D` must be even.
    ```mlir
    %q2 = llmc.rope %q theta 1.0e+04 : (tensor<2x8x256x64xf32>) -> tensor<2x8x256x64xf32>
    %k2 = llmc.rope %k positions %pos theta 5.0e+05
        : (tensor<2x8x256x64xf32>, tensor<256xi32>) -> tensor<2x8x256x64xf32>
    %q3 = llmc.rope %q theta 5.0e+05 inv_freq [1.0, 0.125, 0.0009765625, 1.2e-04]
        : (tensor<2x8x256x8xf32>) -> tensor<2x8x256x8xf32>
    ```
  }];
  let arguments = (ins Llmc_FloatTensor:$input,
                       Optional<Llmc_IndexTensor>:$positions, F64Attr:$theta,
                       OptionalAttr<DenseF64ArrayAttr>:$inv_freq);
  let results = (outs Llmc_FloatTensor:$result);
  let assemblyFormat = [{
    $input (`positions` $positions^)? `theta` $theta (`inv_freq` $inv_freq^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Llmc_GeluOp : Llmc_CompositeOp<"gelu", [Llmc_Elementwise,
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<Llmc_DifferentiableOpInterface>]> {
  let summary = "Gaussian error linear unit";
  let description = [{
    `x * Phi(x)` with `Phi` evaluated exactly (`erf`) or by the tanh
    approximation GPT-2 uses (`tanh`).
    ```mlir
    %y = llmc.gelu %x tanh : tensor<8x1024x3072xbf16>
    ```
  }];
  let arguments = (ins Llmc_FloatTensor:$input,
                       Llmc_GeluApproximationAttr:$approximation);
  let results = (outs Llmc_FloatTensor:$result);
  let assemblyFormat = [{
    $input $approximation attr-dict `:` custom<ElementwiseTypes>(type($input), type($result))
  }];
  let hasVerifier = 1;
}

def Llmc_SiluOp : Llmc_CompositeOp<"silu", [Llmc_Elementwise,
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<Llmc_DifferentiableOpInterface>]> {
  let summary = "sigmoid linear unit";
  let description = [{
    `x * sigmoid(x)`.
    ```mlir
    %y = llmc.silu %x : tensor<2x256x1376xf32>
    ```
  }];
  let arguments = (ins Llmc_FloatTensor:$input);
  let results = (outs Llmc_FloatTensor:$result);
  let assemblyFormat = [{
    $input attr-dict `:` custom<ElementwiseTypes>(type($input), type($result))
  }];
  let hasVerifier = 1;
}

def Llmc_SwigluOp : Llmc_CompositeOp<"swiglu", [Llmc_Elementwise,
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<Llmc_DifferentiableOpInterface>]> {
  let summary = "gated linear unit with SiLU: silu(gate) * up";
  let description = [{
    The LLaMA MLP nonlinearity; `gate`, `up` and the result share one type.
    ```mlir
    %h = llmc.swiglu %gate, %up : tensor<2x256x1376xf32>
    ```
  }];
  let arguments = (ins Llmc_FloatTensor:$gate, Llmc_FloatTensor:$up);
  let results = (outs Llmc_FloatTensor:$result);
  let assemblyFormat = [{
    $gate `,` $up attr-dict `:` custom<ElementwiseTypes>(type($gate), type($up), type($result))
  }];
  let hasVerifier = 1;
}

def Llmc_CrossEntropyOp : Llmc_CompositeOp<"cross_entropy", [
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<Llmc_DifferentiableOpInterface>]> {
  let summary = "softmax cross-entropy of logits against integer targets";
  let description = [{
    Per position, `logsumexp(logits[i, :]) - logits[i, targets[i]]`, in f32.
    `logits` is `[..., V]` and `targets` has the leading shape `[...]`.
    Positions whose target equals `ignore_index` contribute nothing and are
    not counted by `mean`. `reduction` gives a rank-0 f32 result (`mean`,
    `sum`) or per-position losses shaped like `targets` (`none`).

    The optional second result `lse` is the log-sum-exp of every position's
    row (f32, shaped like `targets`, ignored positions included): the
    statistics the forward computes anyway, kept for `cross_entropy_grad`
    so that the gradient reads the logits once (llmc-share-loss-statistics
    adds it after autodiff). It has no derivative rule.
    ```mlir
    %loss = llmc.cross_entropy %logits, %targets ignore_index -100 reduction mean
        : (tensor<8x1024x50257xbf16>, tensor<8x1024xi32>) -> tensor<f32>
    %loss2, %lse = llmc.cross_entropy %logits, %targets reduction mean
        : (tensor<8x1024x50257xbf16>, tensor<8x1024xi32>)
        -> (tensor<f32>, tensor<8x1024xf32>)
    ```
  }];
  let arguments = (ins Llmc_FloatTensor:$logits, Llmc_IndexTensor:$targets,
                       OptionalAttr<I64Attr>:$ignore_index,
                       Llmc_LossReductionAttr:$reduction);
  let results = (outs Llmc_F32Tensor:$result, Optional<Llmc_F32Tensor>:$lse);
  let assemblyFormat = [{
    $logits `,` $targets (`ignore_index` $ignore_index^)? `reduction` $reduction
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Llmc_CrossEntropyGradOp : Llmc_CompositeOp<"cross_entropy_grad", [
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops"]>]> {
  let summary = "the derivative of llmc.cross_entropy with respect to the logits";
  let description = [{
    The vector-Jacobian product of `llmc.cross_entropy` with the same
    `ignore_index` and `reduction`: given its `logits [..., V]`, `targets`
    and the cotangent `dloss` of its result (f32, rank 0 for `mean` and
    `sum`, shaped like `targets` for `none`), returns, per position `n` and
    class `v`,
    ```
    dlogits[n, v] = (exp(logits[n, v] - lse[n]) - (v == targets[n])) * w[n]
    ```
    where `lse[n]` is the log-sum-exp of row `n` and `w[n]` is 0 where the
    target is `ignore_index`, else `dloss` (`sum`), `dloss / max(count, 1)`
    with `count` the positions not ignored (`mean`), or `dloss[n]` (`none`).
    The result has the logits' type: the softmax is computed on the fly and
    never stored. The optional `lse` operand is the forward's `lse` result
    (f32, shaped like `targets`); with it one kernel reads the logits once
    and writes `dlogits` once, without it the kernel first recomputes each
    row's log-sum-exp (a second read). It is what the autodiff pass emits
    for cross_entropy and has no derivative rule of its own.
    ```mlir
    %dlogits = llmc.cross_entropy_grad %logits, %targets, %dloss
        ignore_index -100 reduction mean
        : (tensor<8x1024x50257xbf16>, tensor<8x1024xi32>, tensor<f32>)
        -> tensor<8x1024x50257xbf16>
    %dlogits2 = llmc.cross_entropy_grad %logits, %targets, %dloss lse %lse
        reduction mean
        : (tensor<8x1024x50257xbf16>, tensor<8x1024xi32>, tensor<f32>,
           tensor<8x1024xf32>) -> tensor<8x1024x50257xbf16>
    ```
  }];
  let arguments = (ins Llmc_FloatTensor:$logits, Llmc_IndexTensor:$targets,
                       Llmc_F32Tensor:$dloss, Optional<Llmc_F32Tensor>:$lse,
                       OptionalAttr<I64Attr>:$ignore_index,
                       Llmc_LossReductionAttr:$reduction);
  let results = (outs Llmc_FloatTensor:$dlogits);
  let assemblyFormat = [{
    $logits `,` $targets `,` $dloss (`lse` $lse^)?
    (`ignore_index` $ignore_index^)?
    `reduction` $reduction attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Llmc_MoeTopKOp : Llmc_CompositeOp<"moe_topk", [
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<Llmc_DifferentiableOpInterface>]> {
  let summary = "route each token to its k best experts";
  let description = [{
    For router logits `[N, E]`, returns the softmax probabilities of the `k`
    largest logits of each token (`weights`, `[N, k]`, largest first; ties go
    to the lower expert index) and those experts (`indices`, `[N, k]`).
    `normalize` rescales each token's k weights to sum to one (Mixtral).
    ```mlir
    %w, %e = llmc.moe_topk %router k 2 normalize
        : tensor<512x8xf32> -> tensor<512x2xf32>, tensor<512x2xi32>
    ```
  }];
  let arguments = (ins Llmc_FloatTensor:$logits, I64Attr:$k,
                       UnitAttr:$normalize);
  let results = (outs Llmc_FloatTensor:$weights, Llmc_IndexTensor:$indices);
  let assemblyFormat = [{
    $logits `k` $k (`normalize` $normalize^)? attr-dict
    `:` type($logits) `->` type($weights) `,` type($indices)
  }];
  let hasVerifier = 1;
}

def Llmc_MoeDispatchOp : Llmc_CompositeOp<"moe_dispatch", [
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<Llmc_DifferentiableOpInterface>]> {
  let summary = "gather tokens into per-expert buffers of fixed capacity";
  let description = [{
    Tokens `[N, D]` routed by `indices` `[N, k]` are copied into a result
    `[E, C, D]`: expert `e` takes the (token, choice) pairs that chose it in
    order of token then choice, the first `C` of them; later ones are
    dropped (their combine weight is lost), and unused slots are zero. `E`
    and `C` are read from the result type; `C` is usually
    `ceil(capacity_factor * N * k / E)`, chosen by the model builder.
    ```mlir
    %buf = llmc.moe_dispatch %x, %e
        : (tensor<512x256xf32>, tensor<512x2xi32>) -> tensor<8x160x256xf32>
    ```
  }];
  let arguments = (ins Llmc_FloatTensor:$input, Llmc_IndexTensor:$indices);
  let results = (outs Llmc_FloatTensor:$result);
  let assemblyFormat = [{
    $input `,` $indices attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Llmc_MoeCombineOp : Llmc_CompositeOp<"moe_combine", [
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops"]>,
    DeclareOpInterfaceMethods<Llmc_DifferentiableOpInterface>]> {
  let summary = "weighted sum of expert outputs back into token order";
  let description = [{
    The inverse of `llmc.moe_dispatch` with the same `indices`:
    `result[n] = sum_j weights[n, j] * expert_out[indices[n, j], slot(n, j)]`,
    where `slot` is the slot dispatch assigned; dropped pairs contribute zero.
    ```mlir
    %y = llmc.moe_combine %out, %w, %e
        : (tensor<8x160x256xf32>, tensor<512x2xf32>, tensor<512x2xi32>)
        -> tensor<512x256xf32>
    ```
  }];
  let arguments = (ins Llmc_FloatTensor:$expert_out, Llmc_FloatTensor:$weights,
                       Llmc_IndexTensor:$indices);
  let results = (outs Llmc_FloatTensor:$result);
  let assemblyFormat = [{
    $expert_out `,` $weights `,` $indices attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Llmc_LrScheduleOp : Llmc_CompositeOp<"lr_schedule", [
    AllTypesMatch<["step", "result"]>,
    DeclareOpInterfaceMethods<Llmc_CostOpInterface, ["getFlops"]>]> {
  let summary = "the learning rate of a training step";
  let description = [{
    The learning rate of the 1-based step `t` (a rank-0 f32): a linear
    warmup from `peak / warmup` to `peak` over the first `warmup` steps,
    then a decay to `min` at step `total`, held after it:
    ```
    t <= warmup:  lr = peak * t / warmup
    otherwise:    p  = clamp((t - warmup) / (total - warmup), 0, 1)
                  cosine:   lr = min + (peak - min) * (1 + cos(pi p)) / 2
                  linear:   lr = peak - (peak - min) * p
                  constant: lr = peak
    ```
    The optimizer pass computes the rate inside the program with it, so that
    a program and its step counter are all a training loop needs. It has no
    derivative rule: a step count never depends on a parameter.
    ```mlir
    %lr = llmc.lr_schedule %t cosine peak 6.0e-04 min 6.0e-05 warmup 100 total 5000 : tensor<f32>
    ```
  }];
  let arguments = (ins Llmc_FloatTensor:$step,
                       Llmc_LrScheduleKindAttr:$kind, F64Attr:$peak,
                       F64Attr:$minimum, I64Attr:$warmup, I64Attr:$total);
  let results = (outs Llmc_FloatTensor:$result);
  let assemblyFormat = [{
    $step $kind `peak` $peak `min` $minimum `warmup` $warmup `total` $total
    attr-dict `:` type($step)
  }];
  let builders = [
    OpBuilder<(ins "::mlir::Value":$step, "::llmc::LrScheduleKind":$kind,
                   "double":$peak, "double":$minimum, "int64_t":$warmup,
                   "int64_t":$total), [{
      build($_builder, $_state, step.getType(), step,
            ::llmc::LrScheduleKindAttr::get($_builder.getContext(), kind),
            $_builder.getF64FloatAttr(peak), $_builder.getF64FloatAttr(minimum),
            $_builder.getI64IntegerAttr(warmup),
            $_builder.getI64IntegerAttr(total));
    }]>,
  ];
  let hasVerifier = 1;
}

#endif // LLMC_COMPOSITE_OPS_TD
