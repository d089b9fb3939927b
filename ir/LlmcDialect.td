//===- LlmcDialect.td - the llmc dialect, its types and op base classes ---===//
//
// The llmc dialect describes one training step as a program over statically
// shaped tensors. This file holds the dialect, the type constraints every op
// uses, and the base classes of the op families.
//
//===----------------------------------------------------------------------===//

#ifndef LLMC_DIALECT_TD
#define LLMC_DIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/CommonTypeConstraints.td"
include "LlmcInterfaces.td"

def Llmc_Dialect : Dialect {
  let name = "llmc";
  let cppNamespace = "::llmc";
  let summary = "Tensor programs for training language models";
  let description = [{
    Ops over statically shaped ranked tensors of f32, bf16, f16, i32, i64 and
    i1. Primitive ops (elementwise math, shape manipulation, reductions,
    matmul, gather/scatter) describe anything; composite ops (layer_norm,
    attention, cross_entropy, ...) keep the structure that a tuned kernel, a
    derivative rule and a sharding rule want. See docs/ir.md.
  }];
  let hasConstantMaterializer = 1;
  let hasRegionArgAttrVerify = 1;
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Llmc_Float : AnyTypeOf<[F32, F64, BF16, F16]>;
def Llmc_Index : AnyTypeOf<[I32, I64]>;

def Llmc_Tensor : StaticShapeTensorOf<[F32, F64, BF16, F16, I32, I64, I1]>;
def Llmc_FloatTensor : StaticShapeTensorOf<[F32, F64, BF16, F16]>;
def Llmc_NumericTensor : StaticShapeTensorOf<[F32, F64, BF16, F16, I32, I64]>;
def Llmc_IndexTensor : StaticShapeTensorOf<[I32, I64]>;
def Llmc_BoolTensor : StaticShapeTensorOf<[I1]>;
def Llmc_F32Tensor : StaticShapeTensorOf<[F32]>;
// A rank-0 f32 tensor (FP8's scales), implied by the printed form.
def Llmc_F32Scalar : 0DTensorOf<[F32]>,
    BuildableType<"::mlir::RankedTensorType::get({}, $_builder.getF32Type())">;
// 8-bit floats: only the FP8 ops read or make them (Fp8Ops.td).
def Llmc_F8Tensor : StaticShapeTensorOf<[F8E4M3FN, F8E5M2]>;
// What llmc.transpose moves: every type, 8-bit floats too (FP8's operands
// are cast, then transposed: ir/Fp8Ops.cpp).
def Llmc_MovableTensor : StaticShapeTensorOf<[F32, F64, BF16, F16, I32, I64, I1,
                                              F8E4M3FN, F8E5M2]>;

//===----------------------------------------------------------------------===//
// Base op classes
//===----------------------------------------------------------------------===//

// Every llmc op has a sharding rule: the dialect promises
// ShardingRuleOpInterface for all of them (LlmcDialect::initialize), and
// sharding/ attaches the rules as external models.
class Llmc_Op<string mnemonic, list<Trait> traits = []>
    : Op<Llmc_Dialect, mnemonic, traits>;

#endif // LLMC_DIALECT_TD
