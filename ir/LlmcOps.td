//===- LlmcOps.td - the op set of the llmc dialect -----------------------===//
//
// The only list of llmc ops: primitives, then composites. See docs/ir.md.
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

#endif // LLMC_OPS_TD
