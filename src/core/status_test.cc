#include "core/status.h"

#include <gtest/gtest.h>

namespace rlt {
namespace {

Result<int> ParsePositive(int x) {
  if (x <= 0) return Status::InvalidArgument("x must be positive, got " + std::to_string(x));
  return x;
}

Status UsesAssignOrReturn(int x, int* out) {
  RLT_ASSIGN_OR_RETURN(int v, ParsePositive(x));
  *out = v * 2;
  return Status::Ok();
}

TEST(Status, OkStatusSaysOk) {
  EXPECT_TRUE(Status::Ok().ok());
  EXPECT_EQ(Status::Ok().ToString(), "ok");
}

TEST(Status, ErrorCarriesKindAndMessage) {
  Status s = Status::DataError("bars.csv:3: column 'high': empty");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), Status::Code::kDataError);
  EXPECT_EQ(s.ToString(), "data error: bars.csv:3: column 'high': empty");
}

TEST(Result, AssignOrReturnPropagatesErrorsAndValues) {
  int out = 0;
  EXPECT_TRUE(UsesAssignOrReturn(4, &out).ok());
  EXPECT_EQ(out, 8);
  Status s = UsesAssignOrReturn(-1, &out);
  EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
  EXPECT_NE(s.message().find("got -1"), std::string::npos);
}

TEST(CheckDeathTest, FailedCheckAbortsWithFileAndLine) {
  EXPECT_DEATH(RLT_CHECK_MSG(1 + 1 == 3, "arithmetic"), "status_test.cc:[0-9]+: check failed");
}

}  // namespace
}  // namespace rlt
