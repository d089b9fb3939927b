//===- LlmcEnums.td - enumerations carried by llmc ops -------------------===//

#ifndef LLMC_ENUMS_TD
#define LLMC_ENUMS_TD

include "LlmcDialect.td"
include "mlir/IR/EnumAttr.td"

def Llmc_CompareDirectionAttr : I32EnumAttr<"CompareDirection",
    "comparison predicate", [
      I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>,
      I32EnumAttrCase<"lt", 2>, I32EnumAttrCase<"le", 3>,
      I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>]> {
  let cppNamespace = "::llmc";
}

def Llmc_GeluApproximationAttr : I32EnumAttr<"GeluApproximation",
    "how gelu evaluates the normal CDF", [
      I32EnumAttrCase<"tanh", 0>, I32EnumAttrCase<"erf", 1>]> {
  let cppNamespace = "::llmc";
}

def Llmc_LossReductionAttr : I32EnumAttr<"LossReduction",
    "how per-token losses are combined", [
      I32EnumAttrCase<"mean", 0>, I32EnumAttrCase<"sum", 1>,
      I32EnumAttrCase<"none", 2>]> {
  let cppNamespace = "::llmc";
}

def Llmc_LrScheduleKindAttr : I32EnumAttr<"LrScheduleKind",
    "how the learning rate decays after the warmup", [
      I32EnumAttrCase<"cosine", 0>, I32EnumAttrCase<"linear", 1>,
      I32EnumAttrCase<"constant", 2>]> {
  let cppNamespace = "::llmc";
}

def Llmc_AttentionLayoutAttr : I32EnumAttr<"AttentionLayout",
    "how llmc.attention's operands lie: [B, H, T, D], [B, T, H, D], or q, k "
    "and v as one [B, T, Hq + 2 Hkv, D] tensor", [
      I32EnumAttrCase<"bhtd", 0>, I32EnumAttrCase<"bthd", 1>,
      I32EnumAttrCase<"packed", 2>]> {
  let cppNamespace = "::llmc";
}

def Llmc_FusionKindAttr : I32EnumAttr<"FusionKind",
    "what an llmc.fused region becomes: one kernel of this shape", [
      I32EnumAttrCase<"elementwise", 0>, I32EnumAttrCase<"row_reduction", 1>,
      I32EnumAttrCase<"matmul_epilogue", 2>,
      I32EnumAttrCase<"classifier_loss", 3>]> {
  let cppNamespace = "::llmc";
}

#endif // LLMC_ENUMS_TD
