//===- CollectivesTestSupport.h - what the collective tests share -*- C++ -*-===//
//
// For CollectivesTest.cpp and PointToPointTest.cpp: run a body on n CPU
// devices and keep every device's status.
//
//===----------------------------------------------------------------------===//
#ifndef LLMC_TEST_RUNTIME_COLLECTIVESTESTSUPPORT_H
#define LLMC_TEST_RUNTIME_COLLECTIVESTESTSUPPORT_H

#include "runtime/cpu/Collectives.h"

#include <gtest/gtest.h>

#include <functional>
#include <vector>

namespace llmc::rt::collectivestest {

/// Runs body(rank) on n devices and collects every device's status.
inline std::vector<Status> statusesOf(int n, const std::function<Status(int)> &body) {
  std::vector<Status> statuses(n);
  Status ignored = runOnDevices(n, [&](int rank) {
    statuses[rank] = body(rank);
    return Status::ok();
  });
  EXPECT_TRUE(ignored.isOk());
  return statuses;
}

} // namespace llmc::rt::collectivestest

#endif // LLMC_TEST_RUNTIME_COLLECTIVESTESTSUPPORT_H
