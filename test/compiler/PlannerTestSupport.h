//===- PlannerTestSupport.h - shared by the planner's unit tests -*- C++ -*-===//
//
// A device profile of round numbers, so that every expectation of the
// planner tests is a closed form: 100 TFLOP/s bf16 matmuls, 1 TFLOP/s
// vector ops, 100 GB/s of memory, 5 us per kernel; links of 100 GB/s and
// 2 us (4 ranks a node) and 10 GB/s and 20 us between nodes. And a test
// base with a context that has llmc's dialects loaded.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_TEST_COMPILER_PLANNERTESTSUPPORT_H
#define LLMC_TEST_COMPILER_PLANNERTESTSUPPORT_H

#include "analysis/DeviceProfile.h"

#include "ir/Registration.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

#include <gtest/gtest.h>

namespace llmc::planner::test {

inline constexpr const char *kTestProfile = R"toml(
[t]
memory_gb = 1
hbm_gbs = 100
launch_us = 5
vector_tflops = 1
devices_per_node = 4
matmul_tflops = { bf16 = 100, f16 = 100, f32 = 10, f64 = 5 }
[t.intra_node]
name = "nvlink"
bandwidth_gbs = 100
latency_us = 2
[t.inter_node]
name = "infiniband"
bandwidth_gbs = 10
latency_us = 20
)toml";

/// kTestProfile, loaded (a test failure and an empty profile if it does
/// not load).
inline DeviceProfile testProfile() {
  llvm::Expected<std::vector<DeviceProfile>> profiles =
      parseDeviceProfiles(kTestProfile, "test.toml");
  if (!profiles) {
    ADD_FAILURE() << llvm::toString(profiles.takeError());
    return {};
  }
  return profiles->front();
}

/// A fixture whose context has llmc's dialects; tests parse into `module`.
class DialectTest : public ::testing::Test {
protected:
  DialectTest() {
    mlir::DialectRegistry registry;
    llmc::registerLlmcDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
  }

  mlir::MLIRContext context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

} // namespace llmc::planner::test

#endif // LLMC_TEST_COMPILER_PLANNERTESTSUPPORT_H
