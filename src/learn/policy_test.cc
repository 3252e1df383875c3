// Tests of the policy options (no LibTorch): binding by key and the validation of widths.
#include "learn/policy.h"

#include <gtest/gtest.h>

#include <vector>

#include "core/options.h"

namespace rlt::learn {
namespace {

TEST(Policy, OptionsBindByKeyAndInvalidWidthsAreRejected) {
  PolicyOptions o;
  ASSERT_TRUE(SetOption(o, "pi", "[32, 16]").ok());
  ASSERT_TRUE(SetOption(o, "activation", "relu").ok());
  EXPECT_EQ(o.pi, (std::vector<int>{32, 16}));
  EXPECT_FALSE(SetOption(o, "activation", "gelu").ok());
  EXPECT_TRUE(ValidatePolicyOptions(o).ok());
  o.vf = {64, 0};
  EXPECT_FALSE(ValidatePolicyOptions(o).ok());
}

}  // namespace
}  // namespace rlt::learn
