// Tests of llmc::rt::Status, the error value of every runtime call.
#include "runtime/Status.h"

#include <gtest/gtest.h>

#include <cstring>

namespace {

using llmc::rt::Status;
using llmc::rt::StatusCode;

TEST(Status, DefaultIsOk) {
  Status status;
  EXPECT_TRUE(status.isOk());
  EXPECT_TRUE(static_cast<bool>(status));
  EXPECT_EQ(status.toString(), "ok");
}

TEST(Status, ErrorKeepsCodeAndMessage) {
  Status status = Status::error(StatusCode::DataLoss,
                                "checkpoint.safetensors is truncated");
  EXPECT_FALSE(status.isOk());
  EXPECT_EQ(status.code(), StatusCode::DataLoss);
  EXPECT_EQ(status.message(), "checkpoint.safetensors is truncated");
  EXPECT_EQ(status.toString(),
            "data loss: checkpoint.safetensors is truncated");
}

TEST(Status, EveryCodeHasADistinctName) {
  const StatusCode codes[] = {
      StatusCode::Ok,            StatusCode::InvalidArgument,
      StatusCode::NotFound,      StatusCode::DataLoss,
      StatusCode::Unimplemented, StatusCode::Unavailable,
      StatusCode::Internal,      StatusCode::Cancelled};
  for (StatusCode a : codes)
    for (StatusCode b : codes) {
      if (a != b) {
        EXPECT_STRNE(llmc::rt::statusCodeName(a), llmc::rt::statusCodeName(b));
      }
    }
}

TEST(Status, VersionIsSemantic) {
  int major = -1, minor = -1, patch = -1;
  ASSERT_EQ(std::sscanf(llmc::rt::runtimeVersion(), "%d.%d.%d", &major,
                        &minor, &patch),
            3);
  EXPECT_GE(major, 0);
}

} // namespace
