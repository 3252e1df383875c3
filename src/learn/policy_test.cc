// Tests of the policy options (no LibTorch): binding by key and the validation of widths.
#include "learn/policy.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/options.h"
#include "core/status_test_util.h"

namespace rlt::learn {
namespace {

TEST(Policy, OptionsBindByKeyAndInvalidWidthsAreRejected) {
  PolicyOptions o;
  ASSERT_TRUE(SetOption(o, "pi", "[32, 16]").ok());
  ASSERT_TRUE(SetOption(o, "activation", "relu").ok());
  EXPECT_EQ(o.pi, (std::vector<int>{32, 16}));
  EXPECT_TRUE(IsError(SetOption(o, "activation", "gelu"), Status::Code::kInvalidArgument,
                      "'activation' = 'gelu': expected one of: tanh, relu"));
  EXPECT_TRUE(ValidatePolicyOptions(o).ok());
  o.vf = {64, 0};
  EXPECT_TRUE(IsError(ValidatePolicyOptions(o), Status::Code::kInvalidArgument,
                      "[policy] vf: layer widths must be >= 1"));
}

}  // namespace
}  // namespace rlt::learn
