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

def AssignPrecisionPass : Pass<"llmc-assign-precision", "mlir::ModuleOp"> {
  let summary = "Compute @loss in bf16/fp16 with f32 master weights";
  let description = [{
    Runs on the forward program before `--llmc-autodiff` (docs/precision.md).
    With `policy=bf16` or `fp16`, every f32 parameter and float input is cast
    once to the low type (one `llmc.cast` shared by all its uses, so a tied
    weight gets one), and every op that reads such a value computes in the low
    type: matmuls, attention, elementwise work, embeddings, rope, gelu, silu,
    swiglu, softmax. Norms take the low input but keep their f32 `gamma` and
    `beta`; `reduce_sum`/`reduce_mean` accumulate into an f32 result;
    `cross_entropy`'s loss is f32. An f32 value that a low op reads is cast
    once (a splat constant is rebuilt in the low type). Ops that read no value
    the pass lowered (integer work, a program already in bf16, the f32 loss
    tail) and explicit casts of the model are left alone. The function gets
    `llmc.precision = "<policy>"`. `policy=fp32` changes nothing.
    `policy=fp8` is bf16 plus: every matmul of a linear layer (an
    untransposed activation times a rank-2 parameter, the LM head excepted:
    a matmul whose result reaches `cross_entropy` through shape ops) with
    M, K and N multiples of 16 becomes `llmc.fp8_matmul`
    (docs/precision.md, "FP8").

    ```mlir
    func.func @loss(%w: tensor<4x4xf32> {llmc.role = "parameter"}, %x: tensor<2x4xf32>) -> tensor<f32> {
      %y = llmc.matmul %x, %w : tensor<2x4xf32>, tensor<4x4xf32> -> tensor<2x4xf32>
      %l = llmc.reduce_sum %y dims [0, 1] : tensor<2x4xf32> -> tensor<f32>
      return %l : tensor<f32>
    }
    ```
    becomes, with `policy=bf16`,
    ```mlir
    func.func @loss(...) -> tensor<f32> attributes {llmc.precision = "bf16"} {
      %x16 = llmc.cast %x : tensor<2x4xf32> -> tensor<2x4xbf16>
      %w16 = llmc.cast %w : tensor<4x4xf32> -> tensor<4x4xbf16>
      %y = llmc.matmul %x16, %w16 : tensor<2x4xbf16>, tensor<4x4xbf16> -> tensor<2x4xbf16>
      %l = llmc.reduce_sum %y dims [0, 1] : tensor<2x4xbf16> -> tensor<f32>
      return %l : tensor<f32>
    }
    ```
  }];
  let options = [
    Option<"policy", "policy", "std::string", /*default=*/"\"bf16\"",
           "fp32 (no change), bf16, fp16 or fp8 (bf16 with the linear "
           "layers' matmuls as llmc.fp8_matmul)">,
    Option<"function", "function", "std::string", /*default=*/"\"loss\"",
           "The forward function to convert">,
  ];
  let dependentDialects = ["::llmc::LlmcDialect", "::mlir::func::FuncDialect"];
}

def ExpandFp8MatmulPass : Pass<"llmc-expand-fp8-matmul", "mlir::ModuleOp"> {
  let summary = "Expand llmc.fp8_matmul into amax, scaled casts and FP8 products";
  let description = [{
    Runs after `--llmc-autodiff` with `[precision] policy = "fp8"`
    (docs/precision.md, "FP8"). Each `llmc.fp8_matmul %x, %w` (x
    `[batch..., M, K]`, w `[K, N]`) becomes: x flattened to `[M', K]`, the
    tensorwise scales of x and w for f8E4M3FN (`llmc.amax`, then
    `448 / max(amax, 1e-12)` and its inverse), `llmc.scaled_cast` of x and of
    wᵀ (the FP8 GEMM wants the contraction innermost in both operands), one
    `llmc.scaled_matmul` and the reshape back. The derivative rule of
    fp8_matmul builds the same scales, so CSE keeps one of each.

    ```mlir
    %y = llmc.fp8_matmul %x, %w : tensor<16x32xbf16>, tensor<32x64xbf16> -> tensor<16x64xbf16>
    ```
    becomes
    ```mlir
    %ax = llmc.amax %x : tensor<16x32xbf16> -> tensor<f32>
    ...  // %sx = 448 / max(%ax, 1e-12), %ix = max(%ax, 1e-12) / 448; %sw, %iw alike
    %x8 = llmc.scaled_cast %x, %sx : tensor<16x32xbf16> -> tensor<16x32xf8E4M3FN>
    %w8 = llmc.scaled_cast %w, %sw : tensor<32x64xbf16> -> tensor<32x64xf8E4M3FN>
    %wt8 = llmc.transpose %w8 perm [1, 0] : tensor<32x64xf8E4M3FN> -> tensor<64x32xf8E4M3FN>
    %y = llmc.scaled_matmul %x8, %wt8 scales(%ix, %iw)
        : tensor<16x32xf8E4M3FN>, tensor<64x32xf8E4M3FN> -> tensor<16x64xbf16>
    ```
    (each tensor is cast once and its codes transposed where a product needs
    the other layout: the cast commutes with the transpose.)
  }];
  let dependentDialects = ["::llmc::LlmcDialect"];
}

def PairFp8TransposesPass
    : Pass<"llmc-pair-fp8-transposes", "mlir::ModuleOp"> {
  let summary = "Cast once into both layouts where FP8 codes are also transposed";
  let description = [{
    Runs on a program of `[precision] policy = "fp8"` after partitioning,
    remat and the pipeline split, before fusion (docs/precision.md, "FP8"):
    a rank-2 `llmc.scaled_cast` whose codes are used as they are and also
    through `llmc.transpose ... perm [1, 0]` becomes one
    `llmc.scaled_cast_transpose` that writes both layouts in one pass over
    its input, instead of a cast and a second kernel that reads the codes
    back. Every FP8 operand of a training step is such a cast (the forward
    and the backward contract each tensor along different dimensions). It
    runs on each rank's local program, so it needs no sharding rule; a cast
    and a transpose on different pipeline stages are left apart.

    ```mlir
    %x8 = llmc.scaled_cast %x, %s : tensor<16x32xbf16> -> tensor<16x32xf8E4M3FN>
    %xt8 = llmc.transpose %x8 perm [1, 0] : tensor<16x32xf8E4M3FN> -> tensor<32x16xf8E4M3FN>
    ```
    becomes
    ```mlir
    %x8, %xt8 = llmc.scaled_cast_transpose %x, %s
        : tensor<16x32xbf16> -> tensor<16x32xf8E4M3FN>, tensor<32x16xf8E4M3FN>
    ```
  }];
  let dependentDialects = ["::llmc::LlmcDialect"];
}

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
    `@train_step` returns only the loss. Results are named (`llmc.name`
    result attributes) `loss` and `grad.<parameter name>`.

    Gradient accumulation: with `microbatches=M` every `llmc.role = "input"`
    argument of `@train_step` is M times as large along dimension 0 (M
    microbatches of the batch @loss was traced for, stacked). The step slices
    microbatch i, runs a copy of the forward program on it and then its
    backward program, for i = 0 ... M-1 in that order, and returns the mean of
    the M losses and of the M gradients. Only one microbatch's activations
    are live at a time, which is the point of accumulating.

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
    Option<"microbatches", "microbatches", "int64_t", /*default=*/"1",
           "Microbatches per step (gradient accumulation)">,
    Option<"lossScale", "loss-scale", "double", /*default=*/"0.0",
           "Dynamic loss scaling (fp16): > 0 adds the argument "
           "loss_scale.scale (optimizer state, initialized to this value) "
           "and seeds d(loss) with it">,
  ];
  let dependentDialects = ["::llmc::LlmcDialect", "::mlir::func::FuncDialect"];
}

def OptimizerPass : Pass<"llmc-optimizer", "mlir::ModuleOp"> {
  let summary = "Append an AdamW update with global-norm clipping to @train_step";
  let description = [{
    Rewrites `@train_step(params..., inputs...) -> (loss, grads...)`, as built
    by `--llmc-autodiff`, in place into one full training step. It appends,
    after the existing arguments, `optimizer.m.<name>` and
    `optimizer.v.<name>` for every parameter in turn (same type, `llmc.role =
    "optimizer_state"`), then `optimizer.step` (the 1-based step `t`, a
    rank-0 f32 input). The learning rate of step `t` is computed in the
    program by `llmc.lr_schedule` from the schedule options. It returns,
    named by `llmc.name` result attributes, `loss`, `grad_norm` (the global L2
    norm of the gradients before clipping), `lr`, the new parameters (named
    like the parameters) and the new state (named like the state arguments,
    m and v per parameter), so a training loop feeds each output back into
    the argument of the same name:

    ```
    clip = min(1, grad-clip / (norm + 1e-6))      (1 when grad-clip <= 0)
    g = g * clip
    m = b1 m + (1 - b1) g         v = b2 v + (1 - b2) g^2
    p = p - lr (m / (1 - b1^t) / (sqrt(v / (1 - b2^t)) + eps) + wd p)
    ```
    Weight decay applies to parameters of rank >= 2 whose name does not
    contain `wte`, `wpe` or `embed_tokens`, or to all with `decay-all`.
    Parameters must be f32. Gradient accumulation is `--llmc-autodiff`'s
    (docs/optimizer.md).

    ```mlir
    func.func @train_step(%w: tensor<3xf32> {llmc.name = "w", llmc.role = "parameter"}, ...)
        -> (tensor<f32>, tensor<3xf32>)
    ```
    becomes
    ```mlir
    func.func @train_step(%w: ..., ...,
        %m: tensor<3xf32> {llmc.name = "optimizer.m.w", llmc.role = "optimizer_state"},
        %v: tensor<3xf32> {llmc.name = "optimizer.v.w", llmc.role = "optimizer_state"},
        %t: tensor<f32> {llmc.name = "optimizer.step", llmc.role = "input"})
        -> (tensor<f32> {llmc.name = "loss"}, tensor<f32> {llmc.name = "grad_norm"},
            tensor<f32> {llmc.name = "lr"}, tensor<3xf32> {llmc.name = "w"},
            tensor<3xf32> {llmc.name = "optimizer.m.w"},
            tensor<3xf32> {llmc.name = "optimizer.v.w"})
    ```
  }];
  let options = [
    Option<"beta1", "beta1", "double", /*default=*/"0.9",
           "Decay rate of the first moment">,
    Option<"beta2", "beta2", "double", /*default=*/"0.95",
           "Decay rate of the second moment">,
    Option<"epsilon", "epsilon", "double", /*default=*/"1e-8",
           "Added to sqrt(v) in the denominator">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"0.1",
           "Decoupled weight decay, scaled by the learning rate">,
    Option<"gradClip", "grad-clip", "double", /*default=*/"1.0",
           "Maximum global L2 norm of the gradients (<= 0: no clipping)">,
    Option<"decayAll", "decay-all", "bool", /*default=*/"false",
           "Decay every parameter, also biases, norms and embeddings">,
    Option<"learningRate", "learning-rate", "double", /*default=*/"3e-4",
           "Peak learning rate">,
    Option<"minLearningRate", "min-learning-rate", "double", /*default=*/"0.0",
           "Learning rate at the end of the decay">,
    Option<"warmupSteps", "warmup-steps", "int64_t", /*default=*/"0",
           "Steps of linear warmup from 0">,
    Option<"totalSteps", "total-steps", "int64_t", /*default=*/"100",
           "Steps of the whole run (the decay ends there)">,
    Option<"schedule", "schedule", "std::string", /*default=*/"\"cosine\"",
           "Decay after warmup: cosine, linear or constant">,
    Option<"lossScaling", "loss-scaling", "bool", /*default=*/"false",
           "Dynamic loss scaling: unscale by loss_scale.scale (added by "
           "--llmc-autodiff loss-scale=S), skip steps with inf/NaN "
           "gradients, back off and grow the scale">,
    Option<"growthInterval", "growth-interval", "int64_t", /*default=*/"2000",
           "Good steps after which the loss scale grows">,
    Option<"growthFactor", "growth-factor", "double", /*default=*/"2.0",
           "Factor of a scale growth">,
    Option<"backoffFactor", "backoff-factor", "double", /*default=*/"0.5",
           "Factor of the scale after a non-finite step">,
  ];
  let dependentDialects = ["::llmc::LlmcDialect", "::mlir::func::FuncDialect"];
}

def PartitionPass : Pass<"llmc-partition", "mlir::ModuleOp"> {
  let summary = "Rewrite the training step into one SPMD program for a device mesh";
  let description = [{
    Applies the user's strategy (`[parallel]` dp, tp, sp, zero) to
    `@train_step`: it declares the mesh (`shard.grid @mesh` with the axis
    names in `llmc.mesh_axes`), gives every argument a sharding
    (`llmc.sharding`: tokens split by batch over `dp`; parameters split over
    `tp` as their `llmc.tp_split` says; ZeRO splits optimizer moments (1, 2)
    and parameters (3) over `dp`), then walks the ops in order and asks each
    op's sharding rule (ShardingRuleOpInterface) for its local form. Values
    move between shardings through upstream `shard` collectives, each with
    `llmc.reason` (what, which model part, which axis) and
    `llmc.bytes_per_rank`. Results leave in their argument's sharding (new
    parameters, moments) or replicated (loss, grad_norm, lr). With `cp`,
    inputs are also split along the sequence (zigzag: rank r holds chunks r
    and 2cp-1-r) and attention becomes ring attention, K/V moving by
    `shard.shift` (sharding/ShardRulesRing.cpp).
    ```mlir
    // dp = 2: the weight gradient of a layer ends in
    %g = shard.all_reduce %partial on @mesh grid_axes = [0]
        {llmc.reason = "pending h.0.mlp.c_fc: sum over dp for ...", ...}
    ```
    See docs/sharding.md.
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"train_step\"",
           "The function to partition">,
    Option<"dp", "dp", "int64_t", /*default=*/"1", "Data-parallel ranks">,
    Option<"tp", "tp", "int64_t", /*default=*/"1", "Tensor-parallel ranks">,
    Option<"cp", "cp", "int64_t", /*default=*/"1",
           "Context-parallel ranks: the sequence split zigzag, ring attention">,
    Option<"ep", "ep", "int64_t", /*default=*/"1",
           "Expert-parallel ranks: they split the experts (llmc.ep_split) "
           "and, like dp, the tokens">,
    Option<"pp", "pp", "int64_t", /*default=*/"1",
           "Pipeline stages: an outermost mesh axis nothing is split over "
           "(llmc-split-pipeline splits the program along it)">,
    Option<"sp", "sp", "bool", /*default=*/"false",
           "Sequence parallelism over the tp axis">,
    Option<"zero", "zero", "int64_t", /*default=*/"0", "ZeRO stage (0-3)">,
    Option<"microbatches", "microbatches", "int64_t", /*default=*/"1",
           "Microbatches of llmc-autodiff: the batch is split over dp within "
           "each microbatch">,
    Option<"bucketBytes", "bucket-bytes", "int64_t", /*default=*/"26214400",
           "Merge consecutive all-reduces of one kind into buckets of at "
           "most this many bytes (0: one all-reduce per value)">,
  ];
  let dependentDialects = ["mlir::shard::ShardDialect"];
}

def RematPass : Pass<"llmc-remat", "mlir::ModuleOp"> {
  let summary = "Recompute activations in the backward program instead of keeping them";
  let description = [{
    Trades memory for flops in a training step: a group of forward ops is
    copied before the first backward op that reads one of its results, and
    backward reads the copies, so the originals die at their last forward
    read. The same kernels give the same bits: the losses do not change.
    `policy`: `none` (leave the program alone); `selective` (elementwise ops
    and norms whose inputs backward keeps anyway); `full` (every op of each
    transformer layer, named by its location "…h.N" / "…layers.N"; only the
    layers' inputs are kept); `auto` (the fewest recomputed flops that fit
    `budget-bytes`, measured with the buffer planner: none, selective, then
    full on the first k layers). Copies are tagged as backward
    (ir/Phase.h). The function records `llmc.remat = {policy, full_layers,
    recomputed_ops, recomputed_flops}`. See docs/remat.md.
  }];
  let options = [
    Option<"policy", "policy", "std::string", /*default=*/"\"none\"",
           "none, selective, full or auto">,
    Option<"budgetBytes", "budget-bytes", "int64_t", /*default=*/"0",
           "Memory budget for auto (0: no budget)">,
    Option<"fuseAfter", "fuse-after", "bool", /*default=*/"true",
           "auto measures each candidate after llmc-fuse, as the pipeline "
           "runs it">,
  ];
}

def SplitPipelinePass : Pass<"llmc-split-pipeline", "mlir::ModuleOp"> {
  let summary = "Split the partitioned training step into pipeline stages and order it by a schedule";
  let description = [{
    Runs after llmc-partition (with `pp` > 1, whose mesh has the `pp` axis).
    Gives every op a stage (`llmc.stage`, the rank position along `pp`) and,
    with virtual stages, a model chunk (`llmc.chunk`): layer `i` of the
    model parts (`transformer.h.3...`) goes to the chunk whose layers hold
    it, the layers split into contiguous chunks balanced by the ops' cost
    (CostOpInterface flops) or pinned by `boundaries`; the embedding joins
    the first chunk, the head and loss the last. Where a value crosses
    stages it inserts an `llmc.send`/`llmc.recv` pair with its reason, and
    reorders the body so that each stage runs its forward and backward
    units in the order of `schedule` (gpipe, 1f1b, interleaved).

    Before (pp = 2):
    ```mlir
    %h0 = llmc.add ... loc("transformer.h.0.mlp")
    %h1 = llmc.matmul %h0, ... loc("transformer.h.1.attn")
    ```
    After:
    ```mlir
    %h0 = llmc.add ... {llmc.stage = 0} loc("transformer.h.0.mlp")
    llmc.send %h0 axis 0 from 0 to 1 {llmc.reason = "activation ...", llmc.stage = 0}
    %r = llmc.recv axis 0 from 0 to 1 {llmc.stage = 1, ...}
    %h1 = llmc.matmul %r, ... {llmc.stage = 1}
    ```
    With `stages` = 1 nothing changes. See docs/sharding.md.
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"train_step\"",
           "The function to split">,
    Option<"stages", "stages", "int64_t", /*default=*/"1",
           "Pipeline stages (the size of the mesh's pp axis)">,
    Option<"schedule", "schedule", "std::string", /*default=*/"\"1f1b\"",
           "gpipe, 1f1b or interleaved">,
    Option<"virtualStages", "virtual-stages", "int64_t", /*default=*/"1",
           "Model chunks per stage (interleaved 1F1B)">,
    Option<"microbatches", "microbatches", "int64_t", /*default=*/"1",
           "Microbatches of the step (llmc-autodiff's)">,
    ListOption<"boundaries", "boundaries", "int64_t",
               "First layer of every chunk after the first (empty: balance "
               "by cost)">,
  ];
}

def ShareLossStatisticsPass
    : Pass<"llmc-share-loss-statistics", "mlir::ModuleOp"> {
  let summary = "Give cross_entropy_grad the log-sum-exp its forward computed";
  let description = [{
    Runs on every function after autodiff (and after partitioning and
    remat, so the sharding rules and the recomputation see the plain ops).
    A `cross_entropy_grad` without an `lse` operand whose logits a
    `cross_entropy` earlier in the same block reads gets that op's `lse`
    result (the op is rebuilt with the result when it has none; the lse
    depends on the logits only, so the reductions and targets need not
    match). Its kernel then reads the logits once instead of twice
    (docs/cuda.md, "The loss"). A gradient whose logits no earlier
    cross_entropy reads (recomputed logits, a hand-written gradient) is
    left alone.

    ```mlir
    %loss = llmc.cross_entropy %logits, %t reduction mean
        : (tensor<8x64xbf16>, tensor<8xi32>) -> tensor<f32>
    ...
    %d = llmc.cross_entropy_grad %logits, %t, %g reduction mean
        : (tensor<8x64xbf16>, tensor<8xi32>, tensor<f32>) -> tensor<8x64xbf16>
    ```
    becomes
    ```mlir
    %loss, %lse = llmc.cross_entropy %logits, %t reduction mean
        : (tensor<8x64xbf16>, tensor<8xi32>) -> (tensor<f32>, tensor<8xf32>)
    ...
    %d = llmc.cross_entropy_grad %logits, %t, %g lse %lse reduction mean
        : (tensor<8x64xbf16>, tensor<8xi32>, tensor<f32>, tensor<8xf32>)
        -> tensor<8x64xbf16>
    ```
  }];
  let dependentDialects = ["::llmc::LlmcDialect"];
}

def PlanBuffersPass : Pass<"llmc-plan-buffers", "mlir::ModuleOp"> {
  let summary = "Give every tensor its place in one arena; record the peak";
  let options = [
    Option<"budgetBytes", "budget-bytes", "int64_t", /*default=*/"0",
           "Fail when an arena exceeds this many bytes (0: no budget)">,
    Option<"fusedKernels", "fused-kernels", "bool", /*default=*/"false",
           "Plan for a backend that runs each elementwise llmc.fused region "
           "as one kernel (the CUDA backend): the values such a region does "
           "not yield get no storage (offset -1), and each function is "
           "marked llmc.fused_kernels. Such a program cannot run op by op "
           "(the CPU refuses it)">,
  ];
  let description = [{
    The buffer planner (analysis/BufferPlan.h) on every function: live ranges over
    the program order, reshapes as views, elementwise ops in place over an
    operand that dies there, the new parameters and moments written into
    their arguments' buffers (donation), first fit for the rest. It records
    the decisions in the IR, where codegen checks them:

    - on each op, `llmc.offsets`: the byte offset of each result;
    - on each argument, `llmc.offset`;
    - on the function, `llmc.arena_bytes` and `llmc.memory`, the bytes live
      at the peak by kind (weights, optimizer_state, inputs, gradients,
      activations kept for backward, temporaries), the peak's step, and the
      donations (`result index = argument index`).

    With `fused-kernels=true` (set by the driver for `[parallel] devices =
    "cuda"`), every function gets the unit attribute `llmc.fused_kernels`
    and the values computed inside an elementwise `llmc.fused` region (the
    outermost one, at any depth) that the region does not yield get no
    storage: their `llmc.offsets` entry is -1. A backend must then run such
    a region as one kernel, which keeps them in registers.

    ```mlir
    func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
      %e = llmc.exp %x : tensor<4xf32>
      %n = llmc.neg %e : tensor<4xf32>
      return %n : tensor<4xf32>
    }
    ```
    becomes (the neg writes over the exp, which dies there)
    ```mlir
    func.func @f(%x: tensor<4xf32> {llmc.offset = 0 : i64}) -> tensor<4xf32>
        attributes {llmc.arena_bytes = 128 : i64, llmc.memory = {...}} {
      %e = llmc.exp %x {llmc.offsets = array<i64: 64>} : tensor<4xf32>
      %n = llmc.neg %e {llmc.offsets = array<i64: 64>} : tensor<4xf32>
      return %n : tensor<4xf32>
    }
    ```
  }];
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

def FoldAttentionLayoutPass : Pass<"llmc-fold-attention-layout",
                                   "mlir::ModuleOp"> {
  let summary = "Let attention read q, k, v and write its results in place";
  let description = [{
    Runs before fusion. Attention and attention_grad whose operands are all
    transposes `[0, 2, 1, 3]` of `[B, T, H, D]` values take those values
    (`layout bthd`), and the transposes of their results back disappear.
    When q, k and v are reshapes of the three consecutive column ranges of
    one `[B, T, (Hq + 2 Hkv) D]` product, both ops read one packed
    `[B, T, Hq + 2 Hkv, D]` reshape of it (`layout packed`; no slices), and
    attention_grad writes one packed gradient whose reshape replaces the
    concat of dq, dk and dv:
    ```mlir
    %q = llmc.slice %qkv starts [0, 0, 0] limits [2, 8, 32] ...
    %qh = llmc.reshape %q : tensor<2x8x32xf32> -> tensor<2x8x4x8xf32>
    %qt = llmc.transpose %qh perm [0, 2, 1, 3] ...   // and k, v alike
    %o = llmc.attention %qt, %kt, %vt causal ...
    %ot = llmc.transpose %o perm [0, 2, 1, 3] ...
    ```
    becomes
    ```mlir
    %p = llmc.reshape %qkv : tensor<2x8x96xf32> -> tensor<2x8x12x8xf32>
    %o = llmc.attention %p, %p, %p causal layout packed
        : (...) -> tensor<2x8x4x8xf32>
    ```
    Only the addressing changes; the kernels compute the same values.
  }];
}

def FusePass : Pass<"llmc-fuse", "mlir::ModuleOp"> {
  let summary = "Group the ops that become one kernel into llmc.fused regions";
  let description = [{
    Runs on every function, after the training step is complete. In program
    order, an op joins the group of the first operand producer that accepts
    it, or starts its own; groups of two or more ops become one
    `llmc.fused` region each, placed where their last op was:

    - `elementwise`: ops with the `Elementwise` trait over one shape;
    - `row_reduction`: layer_norm, rms_norm, softmax, reductions over the
      trailing dims and cross_entropy, with the elementwise ops around them
      that iterate over the same rows;
    - `matmul_epilogue`: a matmul whose product has a single reader, with
      the elementwise ops after it (bias add, gelu, residual add);
    - `classifier_loss`: a matmul read by a cross_entropy, with the loss and
      the pointwise ops and softmax of its gradient over the logits.

    Broadcasts and iotas (and the reshape feeding a broadcast) that only a
    group reads are pulled into it. Attention, gathers, scatters,
    transposes, slices, concats and other reductions stay alone. An op joins
    a group only if every value of the group read outside it is read after
    the op, so the program stays in order. A value read outside its region
    becomes a result.

    ```mlir
    %m = llmc.matmul %x, %w : tensor<8x64xf32>, tensor<64x256xf32> -> tensor<8x256xf32>
    %bb = llmc.broadcast %b dims [1] : tensor<256xf32> -> tensor<8x256xf32>
    %s = llmc.add %m, %bb : tensor<8x256xf32>
    %g = llmc.gelu %s tanh : tensor<8x256xf32>
    ```
    becomes
    ```mlir
    %g = llmc.fused matmul_epilogue (%x, %w, %b) : (...) -> (tensor<8x256xf32>) {
    ^bb0(%x0: ..., %w0: ..., %b0: ...):
      %m = llmc.matmul %x0, %w0 ...
      %bb = llmc.broadcast %b0 dims [1] ...
      %s = llmc.add %m, %bb ...
      %g0 = llmc.gelu %s tanh ...
      llmc.yield %g0 : tensor<8x256xf32>
    }
    ```
    With `report`, prints per function the kernels before (every llmc op
    but reshapes and constants) and after (regions and the ops left alone),
    and the device-memory bytes removed (the unfused bytes of the members
    minus the region's own).
  }];
  let options = [
    Option<"report", "report", "bool", /*default=*/"false",
           "Print kernels before/after and the bytes removed per function">,
  ];
  let statistics = [
    Statistic<"memberChecks", "member-checks",
              "Group members visited to decide whether an op may join a "
              "group (linear in the ops for a chain)">
  ];
  let dependentDialects = ["::llmc::LlmcDialect"];
}

#endif // LLMC_PASSES_TD
