//===- LlmcOps.td - the op set of the llmc dialect -----------------------===//
//
// The only list of llmc ops: primitives, composites, then the structure ops
// that passes introduce (llmc.fused). See docs/ir.md.
//
//===----------------------------------------------------------------------===//

#ifndef LLMC_OPS_TD
#define LLMC_OPS_TD

include "LlmcDialect.td"
include "LlmcEnums.td"
include "LlmcInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

include "PrimitiveOps.td"
include "CompositeOps.td"
include "Fp8Ops.td"
include "StructureOps.td"

#endif // LLMC_OPS_TD
