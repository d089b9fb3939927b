//===- Registration.cpp - the sharding rules as external models ----------===//
//
// One model for every op of the dialect, generated from the ODS op list
// (GET_OP_LIST), so that a new op gets its family's rule without a line
// here: partitionOp picks the rule by trait and op class.
//
//===----------------------------------------------------------------------===//
#include "sharding/Registration.h"

#include "ir/LlmcDialect.h"
#include "ir/LlmcOps.h"
#include "sharding/PartitionContext.h"

#include "mlir/IR/DialectRegistry.h"

namespace llmc {
namespace {

template <typename Op>
struct ShardingRuleModel
    : public ShardingRuleOpInterface::ExternalModel<ShardingRuleModel<Op>, Op> {
  llvm::LogicalResult partition(mlir::Operation *op,
                                PartitionContext &context) const {
    return partitionOp(op, context);
  }
};

template <typename... Ops> void attachModels(mlir::MLIRContext *context) {
  (Ops::template attachInterface<ShardingRuleModel<Ops>>(*context), ...);
}

} // namespace

void registerShardingRuleModels(mlir::DialectRegistry &registry) {
  registry.addExtension(+[](mlir::MLIRContext *context, LlmcDialect *) {
    attachModels<
#define GET_OP_LIST
#include "ir/LlmcOps.cpp.inc"
        >(context);
  });
}

} // namespace llmc
