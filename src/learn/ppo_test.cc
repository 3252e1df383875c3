// Tests of the PPO options (no LibTorch): schedules and numbers bound by key.
#include "learn/ppo.h"

#include <gtest/gtest.h>

#include <string>

#include "core/options.h"
#include "core/status_test_util.h"

namespace rlt::learn {
namespace {

TEST(PpoOptions, SchedulesAndNumbersBindByKey) {
  PpoOptions o;
  ASSERT_TRUE(SetOption(o, "learning_rate", "linear(1e-3, 0)").ok());
  ASSERT_TRUE(SetOption(o, "clip_range", "0.1").ok());
  EXPECT_DOUBLE_EQ(o.learning_rate.Value({0.5, 1, 1}), 5e-4);
  EXPECT_DOUBLE_EQ(o.clip_range.Value({0.5, 1, 1}), 0.1);
  const Status bad = SetOption(o, "learnig_rate", "1");
  EXPECT_NE(bad.message().find("learning_rate"), std::string::npos);
  EXPECT_TRUE(IsError(SetOption(o, "ent_coef", "linear("), Status::Code::kInvalidArgument,
                      "'ent_coef' = 'linear(': expected a number"));
}

}  // namespace
}  // namespace rlt::learn
